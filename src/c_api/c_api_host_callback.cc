/*!
 * \file c_api_host_callback.cc
 * \brief C API: registering host functions that host_callback nodes call (tf.py_func).
 */
#include <functional>
#include <memory>

#include "c_api/c_api_common.h"
#include "ir/host_callback.h"

namespace {

using HostFn = std::function<int(uint32_t, IRNDArrayHandle*, uint32_t, IRNDArrayHandle*, char*, size_t)>;

/*! \brief Calls `fn` on `inputs`; returns its outputs, owned, or throws its message. */
std::vector<ir::NDArray> CallHost(const HostFn& fn, const std::vector<ir::NDArray>& inputs, uint32_t num_outputs) {
  std::vector<ir::NDArray> args(inputs);
  std::vector<IRNDArrayHandle> in_handles, out_handles(num_outputs, nullptr);
  for (ir::NDArray& x : args) in_handles.push_back(&x);
  char error[4096] = {0};
  int rc = fn(static_cast<uint32_t>(in_handles.size()), in_handles.data(), num_outputs, out_handles.data(), error,
              sizeof(error));
  std::vector<std::unique_ptr<ir::NDArray>> owned;
  for (IRNDArrayHandle h : out_handles) owned.emplace_back(static_cast<ir::NDArray*>(h));
  error[sizeof(error) - 1] = '\0';
  IR_CHECK(rc == 0) << "the host function failed: " << (error[0] != '\0' ? error : "(no message)");
  std::vector<ir::NDArray> outputs;
  for (uint32_t i = 0; i < num_outputs; ++i) {
    IR_CHECK(owned[i] != nullptr) << "the host function returned no array for output " << i;
    outputs.push_back(*owned[i]);
  }
  return outputs;
}

}  // namespace

int IRHostCallbackRegister(IRHostCallbackFn fn, int64_t* out_id) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(fn);
  IR_API_CHECK_NOT_NULL(out_id);
  *out_id = ir::RegisterHostCallback(
      [fn](const std::vector<ir::NDArray>& inputs, uint32_t num_outputs) { return CallHost(fn, inputs, num_outputs); });
  IR_API_END();
}

int IRHostCallbackRegisterEx(IRHostCallbackExFn fn, void* user_data, int64_t* out_id) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(fn);
  IR_API_CHECK_NOT_NULL(out_id);
  HostFn call = [fn, user_data](uint32_t ni, IRNDArrayHandle* in, uint32_t no, IRNDArrayHandle* out, char* error,
                                size_t size) { return fn(user_data, ni, in, no, out, error, size); };
  *out_id = ir::RegisterHostCallback([call](const std::vector<ir::NDArray>& inputs, uint32_t num_outputs) {
    return CallHost(call, inputs, num_outputs);
  });
  IR_API_END();
}
