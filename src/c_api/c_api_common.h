/*!
 * \file c_api_common.h
 * \brief Error translation and per-thread return buffers shared by the C API files.
 */
#ifndef IR_C_API_COMMON_H_
#define IR_C_API_COMMON_H_

#include <dmlc/logging.h>

#include <string>
#include <vector>

#include "core/json_util.h"
#include "ir/base.h"
#include "ir/c_api.h"

namespace ir {

struct SessionOptions;

namespace capi {

/*! \brief Records the message returned by IRGetLastError in this thread (never throws). */
void SetLastError(const std::string& message) noexcept;

/*!
 * \brief Records the exception being handled as the last error of C function `func`. Every
 * std::exception becomes a readable message: library errors keep theirs, standard-library
 * failures (bad_alloc, out_of_range from a conversion...) say what went wrong in words.
 */
void SetLastErrorFromCurrentException(const char* func) noexcept;

/*! \brief Checks an array argument of `count` elements: NULL only when count is 0, no NULL element. */
template <typename T>
void CheckArrayArg(const char* func, const char* name, T* const* array, uint64_t count) {
  if (count == 0) return;
  IR_CHECK(array != nullptr) << func << ": argument '" << name << "' is NULL but holds " << count << " element(s)";
  for (uint64_t i = 0; i < count; ++i) {
    IR_CHECK(array[i] != nullptr) << func << ": argument '" << name << "[" << i << "]' is NULL";
  }
}

/*! \brief Owns strings handed out through out-parameters until the next call in this thread. */
struct ReturnBuffer {
  std::string str;
  std::vector<std::string> strings;
  std::vector<const char*> pointers;
  /*! \brief Extra lists for functions returning several arrays (e.g. IRGetOpInfo). */
  std::vector<std::string> strings2, strings3;
  std::vector<const char*> pointers2, pointers3;
};
ReturnBuffer* ThreadReturnBuffer();

/*! \brief dmlc's JSON reader reads bools as numbers: rewrites true/false outside strings as 1/0. */
std::string NumericBooleans(const std::string& json);

/*! \brief The DType of a C API dtype code; an unknown code throws. */
inline DType DTypeFromInt(int dtype) {
  IR_CHECK(dtype >= 0 && dtype < kNumDTypes)
      << "unknown dtype value " << dtype << " (expected 0.." << kNumDTypes - 1 << ")";
  return static_cast<DType>(dtype);
}

/*! \brief SessionOptions from JSON (IRSessionCreate, IRLazyContextCreate); NULL or blank: the defaults. */
SessionOptions ParseSessionOptions(const char* json);

/*! \brief Copies `items` into `*store` and points `*pointers` at them. */
void ExposeStrings(const std::vector<std::string>& items, std::vector<std::string>* store,
                   std::vector<const char*>* pointers, uint32_t* out_size, const char*** out);

}  // namespace capi
}  // namespace ir

/*! \brief Wrap every C API body: exceptions become return -1 plus IRGetLastError(). */
#define IR_API_BEGIN() try {
#define IR_API_END()                                        \
  }                                                         \
  catch (...) {                                             \
    ::ir::capi::SetLastErrorFromCurrentException(__func__); \
    return -1;                                              \
  }                                                         \
  return 0;

/*! \brief Rejects a NULL pointer argument: "IRFoo: argument 'out' is NULL". */
#define IR_API_CHECK_NOT_NULL(ptr) IR_CHECK((ptr) != nullptr) << __func__ << ": argument '" #ptr "' is NULL"

/*! \brief Rejects a NULL pointer argument that points at `count` values, unless count is 0. */
#define IR_API_CHECK_NOT_NULL_IF(ptr, count) \
  IR_CHECK((count) == 0 || (ptr) != nullptr) \
      << __func__ << ": argument '" #ptr "' is NULL but " #count " is " << (count)

/*! \brief Rejects an array of `count` pointers that is NULL (count > 0) or holds a NULL. */
#define IR_API_CHECK_ARRAY(array, count) ::ir::capi::CheckArrayArg(__func__, #array, array, count)

#endif  // IR_C_API_COMMON_H_
