/*!
 * \file opencl_test_util.cc
 * \brief Running single ops on the CPU and on the OpenCL device for comparison.
 */
#include "opencl/opencl_test_util.h"

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/op_kernel.h"
#include "ops/op_harness.h"
#include "runtime/device/kernel_selection.h"

namespace ir {
namespace opencl_test {

std::string WhyNoOpenCL() {
  try {
    DeviceAPI::Get(OpenCLDevice());
    return "";
  } catch (const Error& err) {
    return err.what();
  }
}

FCompute DeviceKernelOf(const std::string& op) {
  runtime::NodeKernel chosen = device::SelectKernel(device::GetDeviceTarget("opencl"), Op::Get(op));
  IR_CHECK(chosen.kernel && !chosen.on_host) << "op " << op << " has no OpenCL kernel (it would run on the host)";
  return chosen.kernel;
}

OpResult RunOpOn(Device device, const std::string& op_name, const Attrs& attrs, const std::vector<NDArray>& inputs,
                 uint64_t seed, bool is_train) {
  const Op* op = Op::Get(op_name);
  std::vector<NodeEntry> entries;
  for (size_t i = 0; i < inputs.size(); ++i) entries.push_back(NodeEntry{Node::CreateVariable(StrCat("in", i)), 0});
  NodePtr node = Node::Create(op, op_name, attrs, entries);
  std::vector<Shape> in_shapes, out_shapes(node->num_outputs());
  std::vector<DType> in_types, out_types(node->num_outputs(), DType::kUnknown);
  for (const NDArray& in : inputs) {
    in_shapes.push_back(in.shape());
    in_types.push_back(in.dtype());
  }
  Op::GetAttr<FInferShape>("FInferShape")[op](node->attrs, &in_shapes, &out_shapes);
  Op::GetAttr<FInferType>("FInferType")[op](node->attrs, &in_types, &out_types);
  OpResult result;
  std::vector<NDArray> in, out;
  for (const NDArray& array : inputs) in.push_back(array.CopyTo(device));
  for (size_t j = 0; j < out_shapes.size(); ++j) out.emplace_back(out_shapes[j], out_types[j], device);
  OpContext ctx;
  ctx.device = device;
  ctx.seed = seed;
  ctx.is_train = is_train;
  FCompute kernel = device.type == DeviceType::kCPU ? Op::GetAttr<FCompute>("FCompute")[op] : DeviceKernelOf(op_name);
  kernel(ctx, node->attrs, in, out);
  DeviceAPI::Get(device)->Synchronize();
  for (const NDArray& array : out) result.outputs.push_back(array.CopyTo(Device::CPU()));
  for (const NDArray& array : in) result.inputs.push_back(array.CopyTo(Device::CPU()));
  return result;
}

void ExpectSameOnDevice(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs, double atol,
                        double rtol) {
  OpResult cpu = RunOpOn(Device::CPU(), op, attrs, inputs);
  OpResult dev = RunOpOn(OpenCLDevice(), op, attrs, inputs);
  ASSERT_EQ(cpu.outputs.size(), dev.outputs.size());
  for (size_t j = 0; j < cpu.outputs.size(); ++j) {
    SCOPED_TRACE(StrCat(op, " output ", j));
    ASSERT_EQ(dev.outputs[j].dtype(), cpu.outputs[j].dtype());
    test::ExpectNear(dev.outputs[j], cpu.outputs[j], atol, rtol);
  }
  for (size_t i = 0; i < cpu.inputs.size(); ++i) {
    SCOPED_TRACE(StrCat(op, " input ", i, " after the run"));
    test::ExpectNear(dev.inputs[i], cpu.inputs[i], atol, rtol);
  }
}

NDArray OffsetCopyOnDevice(const NDArray& array) {
  // Three rows of padding in front: an offset no sub-buffer alignment rule would allow.
  std::vector<int64_t> dims = array.shape().ndim() > 0 ? array.shape().dims() : std::vector<int64_t>{1};
  dims[0] += 3;
  NDArray big(Shape(dims), array.dtype(), OpenCLDevice());
  NDArray view = big.Slice(3, dims[0]).Reshape(array.shape());
  view.CopyFrom(array);
  return view;
}

}  // namespace opencl_test
}  // namespace ir
