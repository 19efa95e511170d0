/*!
 * \file c_api_error.cc
 * \brief C API: the per-thread last error, and exceptions turned into messages.
 */
#include <new>
#include <stdexcept>

#include "c_api/c_api_common.h"

namespace ir {
namespace capi {

namespace {

thread_local std::string last_error;
// Set when even the message could not be stored (out of memory).
thread_local bool last_error_lost = false;

std::string DescribeCurrentException(const char* func) {
  try {
    throw;
  } catch (const Error& err) {
    return err.what();
  } catch (const dmlc::Error& err) {
    return detail::CleanDmlcMessage(err.what());
  } catch (const std::bad_alloc&) {
    return StrCat(func, ": out of memory");
  } catch (const std::length_error&) {
    return StrCat(func, ": a requested size is too large (std::length_error)");
  } catch (const std::out_of_range&) {
    return StrCat(func, ": a number or index is out of range (std::out_of_range)");
  } catch (const std::invalid_argument&) {
    return StrCat(func, ": a malformed number or argument (std::invalid_argument)");
  } catch (const std::exception& err) {
    return StrCat(func, ": internal error (", detail::TypeName(typeid(err)), "): ", err.what());
  } catch (...) {
    return StrCat(func, ": unknown C++ exception");
  }
}

}  // namespace

void SetLastError(const std::string& message) noexcept {
  try {
    last_error = message;
    last_error_lost = false;
  } catch (...) {
    last_error_lost = true;
  }
}

void SetLastErrorFromCurrentException(const char* func) noexcept {
  try {
    SetLastError(DescribeCurrentException(func));
  } catch (...) {
    last_error_lost = true;
  }
}

}  // namespace capi
}  // namespace ir

const char* IRGetLastError(void) {
  return ir::capi::last_error_lost ? "out of memory (the error message could not be stored)"
                                   : ir::capi::last_error.c_str();
}
