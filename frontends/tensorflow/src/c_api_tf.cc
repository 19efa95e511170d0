/*!
 * \file c_api_tf.cc
 * \brief The C API of libir_tensorflow.so (ir_tf/c_api_tf.h): checkpoint bundles, summaries,
 * event records and GraphDef export. Errors go through libir's per-thread last error (IRGetLastError).
 */
#include "ir_tf/c_api_tf.h"

#include <cstring>
#include <string>
#include <vector>

#include "ir/ndarray.h"
#include "ir_tf/checkpoint.h"
#include "ir_tf/export.h"
#include "ir_tf/summary.h"
#include "ir_tf_types.pb.h"
#include "tf_types.h"

namespace ir {
namespace capi {
// Defined in libir (src/c_api/c_api_error.cc): records the exception being handled for IRGetLastError.
void SetLastErrorFromCurrentException(const char* func) noexcept;
}  // namespace capi

namespace tf {
namespace {

#define TF_API_BEGIN() try {
#define TF_API_END()                                        \
  }                                                         \
  catch (...) {                                             \
    ::ir::capi::SetLastErrorFromCurrentException(__func__); \
    return -1;                                              \
  }                                                         \
  return 0;
#define TF_API_CHECK_NOT_NULL(ptr) IR_CHECK((ptr) != nullptr) << __func__ << ": argument '" #ptr "' is NULL"

/*! \brief What the functions hand out, kept until the next call in this thread. */
struct Buffers {
  std::string bytes;
  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  std::vector<int> dtypes, ndims;
  std::vector<int64_t> dims;
};
Buffers& ThreadBuffers() {
  static thread_local Buffers buffers;
  return buffers;
}

/*! \brief `values` (int32) narrowed to T, every value checked to fit. */
template <typename T>
std::string Narrow(const std::vector<int32_t>& values, const std::string& name, int tf_dtype) {
  std::string out(values.size() * sizeof(T), '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    auto v = static_cast<T>(values[i]);
    IR_CHECK(static_cast<int32_t>(v) == values[i])
        << "tensor '" << name << "': value " << values[i] << " does not fit in " << TFTypeName(tf_dtype);
    std::memcpy(&out[i * sizeof(T)], &v, sizeof(T));
  }
  return out;
}

/*! \brief The bytes of `array` stored as `tf_dtype`: its own type, or an int32 array narrowed. */
BundleTensor ToBundleTensor(const std::string& name, const NDArray& array, int tf_dtype) {
  BundleTensor t;
  t.key = name;
  t.shape = array.shape().dims();
  int natural = TFTypeOf(array.dtype());
  t.tf_dtype = tf_dtype < 0 ? natural : tf_dtype;
  NDArray host = array.CopyTo(Device::CPU());
  if (t.tf_dtype == natural) {
    t.bytes.assign(static_cast<const char*>(host.data()), host.nbytes());
    return t;
  }
  IR_CHECK(natural == tfproto::DT_INT32 &&
           (t.tf_dtype == tfproto::DT_INT8 || t.tf_dtype == tfproto::DT_INT16 || t.tf_dtype == tfproto::DT_UINT8))
      << "tensor '" << name << "': a " << DTypeName(array.dtype()) << " array cannot be stored as "
      << TFTypeName(t.tf_dtype);
  std::vector<int32_t> values = host.ToVector<int32_t>();
  if (t.tf_dtype == tfproto::DT_INT8) t.bytes = Narrow<int8_t>(values, name, t.tf_dtype);
  if (t.tf_dtype == tfproto::DT_INT16) t.bytes = Narrow<int16_t>(values, name, t.tf_dtype);
  if (t.tf_dtype == tfproto::DT_UINT8) t.bytes = Narrow<uint8_t>(values, name, t.tf_dtype);
  return t;
}

/*! \brief Hands `bytes` out through the thread's buffer. */
void ExposeBytes(std::string bytes, const char** out, size_t* out_len) {
  Buffers& b = ThreadBuffers();
  b.bytes = std::move(bytes);
  *out = b.bytes.data();
  *out_len = b.bytes.size();
}

}  // namespace
}  // namespace tf
}  // namespace ir

using ir::NDArray;
namespace tf = ir::tf;

int IRTFCheckpointWrite(const char* prefix, uint32_t num, const char** names, IRNDArrayHandle* values,
                        const int* tf_dtypes) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(prefix);
  IR_CHECK(num == 0 || (names != nullptr && values != nullptr))
      << __func__ << ": argument 'names' or 'values' is NULL but num is " << num;
  std::vector<tf::BundleTensor> tensors;
  for (uint32_t i = 0; i < num; ++i) {
    IR_CHECK(names[i] != nullptr && values[i] != nullptr)
        << __func__ << ": names[" << i << "] or values[" << i << "] is NULL";
    tensors.push_back(
        tf::ToBundleTensor(names[i], *static_cast<NDArray*>(values[i]), tf_dtypes != nullptr ? tf_dtypes[i] : -1));
  }
  tf::WriteCheckpoint(prefix, tensors);
  TF_API_END();
}

int IRTFCheckpointList(const char* prefix, uint32_t* num, const char*** names, const int** tf_dtypes, const int** ndims,
                       const int64_t** dims) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(prefix);
  TF_API_CHECK_NOT_NULL(num);
  TF_API_CHECK_NOT_NULL(names);
  TF_API_CHECK_NOT_NULL(tf_dtypes);
  TF_API_CHECK_NOT_NULL(ndims);
  TF_API_CHECK_NOT_NULL(dims);
  tf::CheckpointReader reader(prefix);
  tf::Buffers& b = tf::ThreadBuffers();
  b.names.clear(), b.name_ptrs.clear(), b.dtypes.clear(), b.ndims.clear(), b.dims.clear();
  for (const auto& kv : reader.tensors()) {
    b.names.push_back(kv.first);
    b.dtypes.push_back(kv.second.tf_dtype);
    b.ndims.push_back(static_cast<int>(kv.second.shape.size()));
    b.dims.insert(b.dims.end(), kv.second.shape.begin(), kv.second.shape.end());
  }
  for (const std::string& s : b.names) b.name_ptrs.push_back(s.c_str());
  *num = static_cast<uint32_t>(b.names.size());
  *names = b.name_ptrs.data();
  *tf_dtypes = b.dtypes.data();
  *ndims = b.ndims.data();
  *dims = b.dims.data();
  TF_API_END();
}

int IRTFCheckpointRead(const char* prefix, const char* name, IRNDArrayHandle* out) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(prefix);
  TF_API_CHECK_NOT_NULL(name);
  TF_API_CHECK_NOT_NULL(out);
  *out = new NDArray(tf::CheckpointReader(prefix).Read(name));
  TF_API_END();
}

int IRTFSummaryScalar(const char* tag, double value, const char** out, size_t* out_len) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(tag);
  TF_API_CHECK_NOT_NULL(out);
  TF_API_CHECK_NOT_NULL(out_len);
  tf::ExposeBytes(tf::ScalarSummary(tag, value), out, out_len);
  TF_API_END();
}

int IRTFSummaryHistogram(const char* tag, IRNDArrayHandle values, const char** out, size_t* out_len) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(tag);
  TF_API_CHECK_NOT_NULL(values);
  TF_API_CHECK_NOT_NULL(out);
  TF_API_CHECK_NOT_NULL(out_len);
  const NDArray& array = *static_cast<NDArray*>(values);
  IR_CHECK(array.dtype() != ir::DType::kBool) << "histogram summary '" << tag << "': bool values are not numbers";
  NDArray host = array.CopyTo(ir::Device::CPU());
  std::vector<double> doubles;
  switch (host.dtype()) {
    case ir::DType::kFloat32:
      for (float v : host.ToVector<float>()) doubles.push_back(v);
      break;
    case ir::DType::kInt32:
      for (int32_t v : host.ToVector<int32_t>()) doubles.push_back(v);
      break;
    case ir::DType::kInt64:
      for (int64_t v : host.ToVector<int64_t>()) doubles.push_back(static_cast<double>(v));
      break;
    default:
      doubles = host.ToVector<double>();
  }
  tf::ExposeBytes(tf::HistogramSummary(tag, doubles), out, out_len);
  TF_API_END();
}

int IRTFSummaryImage(const char* tag, int height, int width, int colorspace, const void* png, size_t png_len,
                     const char** out, size_t* out_len) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(tag);
  TF_API_CHECK_NOT_NULL(png);
  TF_API_CHECK_NOT_NULL(out);
  TF_API_CHECK_NOT_NULL(out_len);
  std::string bytes(static_cast<const char*>(png), png_len);
  tf::ExposeBytes(tf::ImageSummary(tag, height, width, colorspace, bytes), out, out_len);
  TF_API_END();
}

int IRTFSummaryText(const char* tag, int ndim, const int64_t* dims, uint32_t num, const char** strings,
                    const char** out, size_t* out_len) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(tag);
  IR_CHECK(ndim >= 0 && (ndim == 0 || dims != nullptr)) << __func__ << ": argument 'dims' is NULL or ndim is " << ndim;
  IR_CHECK(num == 0 || strings != nullptr) << __func__ << ": argument 'strings' is NULL but num is " << num;
  TF_API_CHECK_NOT_NULL(out);
  TF_API_CHECK_NOT_NULL(out_len);
  std::vector<std::string> items;
  for (uint32_t i = 0; i < num; ++i) {
    IR_CHECK(strings[i] != nullptr) << __func__ << ": strings[" << i << "] is NULL";
    items.emplace_back(strings[i]);
  }
  tf::ExposeBytes(tf::TextSummary(tag, std::vector<int64_t>(dims, dims + ndim), items), out, out_len);
  TF_API_END();
}

int IRTFEventWrite(const char* path, double wall_time, int64_t step, const void* summary, size_t summary_len,
                   const char* file_version) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(path);
  IR_CHECK(file_version != nullptr || summary != nullptr || summary_len == 0)
      << __func__ << ": argument 'summary' is NULL but summary_len is " << summary_len;
  std::string bytes = summary != nullptr ? std::string(static_cast<const char*>(summary), summary_len) : "";
  tf::AppendRecord(path, tf::EncodeEvent(wall_time, step, bytes, file_version != nullptr ? file_version : ""));
  TF_API_END();
}

int IRTFGraphDefExport(IRGraphHandle graph, int as_text, const char** out, size_t* out_len) {
  TF_API_BEGIN();
  TF_API_CHECK_NOT_NULL(graph);
  TF_API_CHECK_NOT_NULL(out);
  TF_API_CHECK_NOT_NULL(out_len);
  tf::ExposeBytes(tf::ExportGraphDef(*static_cast<const ir::Graph*>(graph), as_text != 0), out, out_len);
  TF_API_END();
}
