/*!
 * \file op_library.cc
 * \brief Loading op libraries (shared objects that register ops when loaded).
 */
#include <dlfcn.h>
#include <sys/stat.h>

#include <map>
#include <memory>
#include <mutex>

#include "core/registration_transaction.h"
#include "ir/op.h"

namespace ir {

namespace {

/*! \brief The outcome of loading one library (one dlopen handle), kept for the process's life. */
struct LoadedLibrary {
  std::string error;  // empty when the library's registrations were applied
  // The library's static initializers hold references to the staged ops: keep them alive.
  std::unique_ptr<detail::RegistrationTransaction> transaction;
};

/*! \brief Libraries by handle: dlopen returns the same handle again without rerunning initializers. */
std::map<void*, LoadedLibrary>& LoadedLibraries() {
  static auto* libraries = new std::map<void*, LoadedLibrary>();  // never destroyed: see above
  return *libraries;
}

}  // namespace

void LoadOpLibrary(const std::string& path) {
  struct stat info;
  IR_CHECK(stat(path.c_str(), &info) == 0) << "cannot load op library '" << path << "': no such file";
  IR_CHECK(S_ISREG(info.st_mode)) << "cannot load op library '" << path << "': not a regular file";
  // One library at a time; recursive so that a library may itself load another.
  static std::recursive_mutex load_mutex;
  std::lock_guard<std::recursive_mutex> lock(load_mutex);
  auto transaction = std::make_unique<detail::RegistrationTransaction>();
  // Libraries stay loaded: their functions are now referenced by the registry.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  transaction->Deactivate();
  if (handle == nullptr) {
    const char* reason = dlerror();
    throw Error(StrCat("cannot load op library '", path, "': ", reason ? reason : "unknown error"));
  }
  auto known = LoadedLibraries().find(handle);
  if (known != LoadedLibraries().end()) {
    // Loaded before: nothing ran again, so the first outcome stands.
    if (!known->second.error.empty()) throw Error(known->second.error);
    return;
  }
  std::vector<std::string> errors = transaction->Finish();
  LoadedLibrary& loaded = LoadedLibraries()[handle];
  loaded.transaction = std::move(transaction);
  if (errors.empty()) return;
  loaded.error = StrCat("op library '", path, "' conflicts with existing registrations (none of its",
                        " registrations were applied):\n  ", Join(errors, "\n  "));
  throw Error(loaded.error);
}

}  // namespace ir
