/*!
 * \file c_api_tf.h
 * \brief C API of libir_tensorflow.so for TensorFlow file formats: checkpoint V2 bundles (write,
 * list, read), TensorBoard summaries and event files, and GraphDefs of graphs (tf.train.write_graph).
 *
 * As in ir/c_api.h, every function returns 0 on success and -1 on failure; IRGetLastError()
 * then gives the message. Strings and arrays handed out stay valid until the next call of this
 * API in the same thread. Arrays are IRNDArrayHandles of ir/c_api.h (freed with IRNDArrayFree).
 */
#ifndef IR_TF_C_API_TF_H_
#define IR_TF_C_API_TF_H_

#include <stddef.h>
#include <stdint.h>

#include "ir/c_api.h"

#ifdef __cplusplus
extern "C" {
#endif

/*!
 * \brief Writes the one-shard bundle `<prefix>.index` + `<prefix>.data-00000-of-00001` holding
 * `values[i]` under `names[i]`. `tf_dtypes` (may be NULL: each array's own type) gives the
 * TensorFlow DataType to store each as; an int32 array may be stored as DT_INT8 (6), DT_INT16 (5)
 * or DT_UINT8 (4) when every value fits.
 */
IR_DLL int IRTFCheckpointWrite(const char* prefix, uint32_t num, const char** names, IRNDArrayHandle* values,
                               const int* tf_dtypes);
/*!
 * \brief The tensors of the bundle at `prefix`, sorted by name: `*tf_dtypes` their TensorFlow
 * DataType numbers, `*ndims` their ranks and `*dims` all their dimensions in order.
 */
IR_DLL int IRTFCheckpointList(const char* prefix, uint32_t* num, const char*** names, const int** tf_dtypes,
                              const int** ndims, const int64_t** dims);
/*! \brief The value of tensor `name` of the bundle at `prefix`, CRC-checked, in a new array. */
IR_DLL int IRTFCheckpointRead(const char* prefix, const char* name, IRNDArrayHandle* out);

/*! \brief A serialized Summary of one simple_value. */
IR_DLL int IRTFSummaryScalar(const char* tag, double value, const char** out, size_t* out_len);
/*! \brief A serialized Summary of one histogram of the array's values (TensorFlow's default buckets). */
IR_DLL int IRTFSummaryHistogram(const char* tag, IRNDArrayHandle values, const char** out, size_t* out_len);
/*! \brief A serialized Summary of one image: `png` (png_len bytes) encodes height x width x colorspace. */
IR_DLL int IRTFSummaryImage(const char* tag, int height, int width, int colorspace, const void* png, size_t png_len,
                            const char** out, size_t* out_len);
/*! \brief A serialized Summary of one text value: `num` strings of a tensor of shape `dims` (`ndim` dims). */
IR_DLL int IRTFSummaryText(const char* tag, int ndim, const int64_t* dims, uint32_t num, const char** strings,
                           const char** out, size_t* out_len);
/*!
 * \brief Appends one TFRecord-framed Event{wall_time, step, ...} to the event file `path`: the
 * file_version when `file_version` is not NULL, else the serialized Summary `summary` (summary_len bytes).
 */
IR_DLL int IRTFEventWrite(const char* path, double wall_time, int64_t step, const void* summary, size_t summary_len,
                          const char* file_version);
/*!
 * \brief The GraphDef of every node of `graph` (an IRGraphHandle of ir/c_api.h): binary, or
 * text format when `as_text` is nonzero (ir_tf/export.h lists the ops it writes).
 */
IR_DLL int IRTFGraphDefExport(IRGraphHandle graph, int as_text, const char** out, size_t* out_len);

#ifdef __cplusplus
}  // extern "C"
#endif

#endif  // IR_TF_C_API_TF_H_
