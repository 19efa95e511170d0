/*!
 * \file op_library.cc
 * \brief Loading op libraries (shared objects that register ops when loaded).
 */
#include <dlfcn.h>
#include <sys/stat.h>

#include "core/registration_errors.h"
#include "ir/op.h"

namespace ir {
namespace detail {

namespace {
thread_local RegistrationErrorScope* current_scope = nullptr;
}  // namespace

RegistrationErrorScope::RegistrationErrorScope() : previous_(current_scope) { current_scope = this; }

RegistrationErrorScope::~RegistrationErrorScope() { current_scope = previous_; }

void ReportRegistrationError(const std::string& message) {
  if (current_scope != nullptr) {
    current_scope->errors_.push_back(message);
    return;
  }
  throw Error(message);
}

}  // namespace detail

void LoadOpLibrary(const std::string& path) {
  struct stat info;
  IR_CHECK(stat(path.c_str(), &info) == 0)
      << "cannot load op library '" << path << "': no such file";
  IR_CHECK(S_ISREG(info.st_mode)) << "cannot load op library '" << path << "': not a regular file";
  detail::RegistrationErrorScope scope;
  // Libraries stay loaded: their functions are now referenced by the registry.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error(StrCat("cannot load op library '", path, "': ", reason ? reason : "unknown error"));
  }
  IR_CHECK(scope.errors().empty())
      << "op library '" << path << "' conflicts with existing registrations:\n  "
      << Join(scope.errors(), "\n  ");
}

}  // namespace ir
