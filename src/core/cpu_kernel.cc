/*!
 * \file cpu_kernel.cc
 * \brief CPU kernels of ops and nodes (ir/cpu_kernel.h): an op's "FCompute", else one generated
 * by what the codegen layer registers, so ops and the runtime find kernels without calling codegen.
 */
#include "ir/cpu_kernel.h"

#include "ir/op.h"

namespace ir {
namespace {

// Set once, at static initialization (src/codegen/single_op_kernel.cc); only read afterwards.
CpuKernelGenerator& Generator() {
  static auto* generator = new CpuKernelGenerator();  // never destroyed: kernels run at exit
  return *generator;
}

}  // namespace

void RegisterCpuKernelGenerator(CpuKernelGenerator generator) {
  IR_CHECK(generator.for_op && generator.for_node) << "RegisterCpuKernelGenerator: a function is empty";
  IR_CHECK(!Generator().for_op) << "a CPU kernel generator is registered already";
  Generator() = std::move(generator);
}

FCompute CpuKernelOf(const Op* op) {
  const auto* cpu = Op::FindAttr<FCompute>(FComputeKey(DeviceType::kCPU));
  if (cpu != nullptr && cpu->count(op)) return (*cpu)[op];
  IR_CHECK(Generator().for_op) << "op '" << op->name
                               << "' registers no FCompute, and no CPU kernel generator is registered (codegen's)";
  return Generator().for_op(op);
}

const GeneratedKernel* FindGeneratedCpuKernel(const NodeAttrs& attrs, const std::vector<NDArray>& inputs) {
  return Generator().for_node ? Generator().for_node(attrs, inputs) : nullptr;
}

}  // namespace ir
