/*!
 * \file host_callback.cc
 * \brief The registry of host callbacks (ir/host_callback.h): the C API registers functions of
 * the embedding program, the host_callback op (src/ops/host_callback.cc) finds them by id.
 */
#include "ir/host_callback.h"

#include <map>
#include <mutex>

#include "ir/base.h"

namespace ir {
namespace {

std::mutex callbacks_mutex;
std::map<int64_t, HostCallback>& Callbacks() {
  static std::map<int64_t, HostCallback> callbacks;
  return callbacks;
}

}  // namespace

int64_t RegisterHostCallback(HostCallback fn) {
  std::lock_guard<std::mutex> lock(callbacks_mutex);
  int64_t id = static_cast<int64_t>(Callbacks().size()) + 1;
  Callbacks()[id] = std::move(fn);
  return id;
}

HostCallback FindHostCallback(int64_t id) {
  std::lock_guard<std::mutex> lock(callbacks_mutex);
  auto it = Callbacks().find(id);
  IR_CHECK(it != Callbacks().end()) << "no host callback is registered as " << id;
  return it->second;
}

}  // namespace ir
