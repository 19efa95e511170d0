/*!
 * \file host_fallback.cc
 * \brief Host fallback: a CPU kernel run on host copies of device arrays.
 */
#include "runtime/executor/host_fallback.h"

namespace ir {
namespace runtime {
namespace {

bool SameView(const NDArray& a, const NDArray& b) {
  return a.storage() == b.storage() && a.byte_offset() == b.byte_offset() && a.nbytes() == b.nbytes();
}

}  // namespace

void RunOnHost(const FCompute& kernel, const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
               const std::vector<NDArray>& outputs, const std::vector<uint32_t>& mutated) {
  std::vector<NDArray> host_in, host_out;
  for (const NDArray& in : inputs) host_in.push_back(in.CopyTo(Device::CPU()));
  for (const NDArray& out : outputs) {
    NDArray host;
    for (size_t i = 0; i < inputs.size() && !host.defined(); ++i) {
      if (SameView(out, inputs[i])) host = host_in[i];
    }
    host_out.push_back(host.defined() ? host : NDArray(out.shape(), out.dtype(), Device::CPU()));
  }
  OpContext host_ctx = ctx;
  host_ctx.device = Device::CPU();
  host_ctx.queue = nullptr;
  kernel(host_ctx, attrs, host_in, host_out);
  for (size_t j = 0; j < outputs.size(); ++j) outputs[j].CopyFrom(host_out[j]);
  for (uint32_t i : mutated) inputs.at(i).CopyFrom(host_in.at(i));
}

}  // namespace runtime
}  // namespace ir
