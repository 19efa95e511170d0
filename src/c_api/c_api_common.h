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
namespace capi {

/*! \brief Records the message returned by IRGetLastError in this thread. */
void SetLastError(const std::string& message);

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

/*! \brief Copies `items` into `*store` and points `*pointers` at them. */
void ExposeStrings(const std::vector<std::string>& items, std::vector<std::string>* store,
                   std::vector<const char*>* pointers, uint32_t* out_size, const char*** out);

}  // namespace capi
}  // namespace ir

/*! \brief Wrap every C API body: exceptions become return -1 plus IRGetLastError(). */
#define IR_API_BEGIN() try {
#define IR_API_END()                                              \
  }                                                               \
  catch (const std::exception& err) {                             \
    ::ir::capi::SetLastError(::ir::detail::CleanDmlcMessage(err.what())); \
    return -1;                                                    \
  }                                                               \
  catch (...) {                                                   \
    ::ir::capi::SetLastError("unknown C++ exception");            \
    return -1;                                                    \
  }                                                               \
  return 0;

/*! \brief Rejects null pointers passed by a C caller. */
#define IR_API_CHECK_NOT_NULL(ptr) IR_CHECK((ptr) != nullptr) << __func__ << ": argument '" #ptr "' is null"

#endif  // IR_C_API_COMMON_H_
