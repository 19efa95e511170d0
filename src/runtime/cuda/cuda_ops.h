/*!
 * \file cuda_ops.h
 * \brief Op kernels on CUDA ("FCompute<cuda>"): generated ones for every op with FCodeGen or
 * a contiguous reduction, and hand-written kernel families for the opaque ops.
 *
 * A family is CUDA C compiled once per element type `T` (prelude + `typedef ... T;` + body)
 * through the kernel cache; its kernels take device pointers already offset to the view and
 * int64 sizes, and run kBlockSize threads per block.
 */
#ifndef IR_RUNTIME_CUDA_CUDA_OPS_H_
#define IR_RUNTIME_CUDA_CUDA_OPS_H_

#include <string>
#include <utility>
#include <vector>

#include "ir/fusion.h"
#include "ops/op_common.h"
#include "runtime/cuda/cuda_module.h"

namespace ir {
namespace cuda {

/*!
 * \brief Registers (at priority 1, below hand-written kernels) FCompute<cuda> for every op
 * registered so far that has FCodeGen, is a reduction with TReduceKind and FReduceAxes, or is
 * TShapeOnly, and has no CUDA kernel yet. Runs at static initialization and again when a CUDA device is
 * first used (for ops of libraries loaded in between); repeated calls add nothing twice.
 */
void RegisterGeneratedKernels();

/*!
 * \brief A node as a one-member fused group (variables in0, in1, ... feed a copy of it; mutated
 * inputs and their aliases from FMutateInputs/FInplaceOption): how a generated op kernel is built.
 */
FusedGroup SingleNodeGroup(const NodeAttrs& attrs, size_t num_inputs, bool reduce);

/*! \brief Hand-written CUDA kernels sharing one source, compiled per element type. */
struct KernelFamily {
  std::string name;
  /*! \brief CUDA C after the prelude and `typedef <type> T;`. */
  const char* body;
  /*! \brief The element types it is compiled for. */
  std::vector<DType> dtypes;
};

/*! \brief Adds a family to Families() (call from a static initializer); returns true. */
bool RegisterFamily(const KernelFamily* family);
/*! \brief Every registered family (for tests: each must compile for each of its dtypes). */
std::vector<const KernelFamily*> Families();
/*! \brief The complete source of `family` for element type `dtype`. */
std::string FamilySource(const KernelFamily& family, DType dtype);
/*! \brief Launches kernel `kernel` of `family` for `dtype` (compiled once through the kernel cache). */
void LaunchFamily(const KernelFamily& family, DType dtype, const std::string& kernel, KernelArgs* args, int64_t blocks,
                  const OpContext& ctx);

/*!
 * \brief Parameter `key` of a node as text: its value in the node's dict, else the default the
 * op documents for it (dmlc's "type, optional, default=value"). Throws naming the node when
 * it has neither.
 */
std::string ParamText(const NodeAttrs& attrs, const std::string& key);
int64_t ParamInt(const NodeAttrs& attrs, const std::string& key);
double ParamDouble(const NodeAttrs& attrs, const std::string& key);
bool ParamBool(const NodeAttrs& attrs, const std::string& key);
op::IntList ParamList(const NodeAttrs& attrs, const std::string& key);

/*! \brief Copies `src` into `dst` on the device (nothing when both are the same view). */
void CopyArray(const NDArray& src, const NDArray& dst);

/*! \brief Runs the op's CPU kernel on host copies: for the rare cases no CUDA kernel covers. */
void RunCPUKernel(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<NDArray>& outputs);

/*! \brief Up to kMaxDims extents with a stride each: how kernels walk strided views. */
constexpr int kMaxDims = 8;
struct StridedDims {
  long long ndim = 0;
  long long dims[kMaxDims] = {0};
  long long strides[kMaxDims] = {0};
};

/*!
 * \brief Packs (extent, stride) pairs into `out`, leaving out extents of 1; false when more
 * than kMaxDims remain (the caller then runs the CPU kernel).
 */
bool MakeStridedDims(const std::vector<int64_t>& dims, const std::vector<int64_t>& strides, StridedDims* out);

/*! \brief Row-major element strides of `shape`. */
std::vector<int64_t> RowMajorStrides(const Shape& shape);

}  // namespace cuda
}  // namespace ir

#endif  // IR_RUNTIME_CUDA_CUDA_OPS_H_
