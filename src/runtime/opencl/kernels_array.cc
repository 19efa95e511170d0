/*!
 * \file kernels_array.cc
 * \brief OpenCL kernels of the array, state and source ops: views and copies (reshape,
 * expand_dims, squeeze, identity), transpose, one_hot, the assign family, fills (zeros,
 * ones, fill, zeros_like, ones_like), constant, and the no_op/group tokens.
 *
 * Fills use clEnqueueFillBuffer and copies clEnqueueCopyBuffer, which need no program; a
 * constant's value lives on the host (parsed from the graph) and is uploaded each run.
 */
#include "ops/op_common.h"
#include "ops/strided_copy.h"
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

const char kArrayKernels[] = R"CL(
/* dst[i] = src[offset of i in walk] for i < n. */
__kernel void strided_copy(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                           const ir_strided walk, const long n) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)];
}

/* out[(o * depth + d) * inner + k] = indices[o * inner + k] == d ? on : off. */
#define IR_ONE_HOT(NAME, I)                                                                          \
  __kernel void NAME(__global const I* indices, const long indices_offset, __global T* out,          \
                     const long out_offset, const long depth, const long inner, const T on,          \
                     const T off, const long n) {                                                    \
    indices += indices_offset;                                                                       \
    out += out_offset;                                                                               \
    for (long i = get_global_id(0); i < n; i += get_global_size(0)) {                                \
      const long k = i % inner, d = i / inner % depth, o = i / (inner * depth);                      \
      out[i] = (long)indices[o * inner + k] == d ? on : off;                                         \
    }                                                                                                \
  }
IR_ONE_HOT(one_hot_i32, int)
IR_ONE_HOT(one_hot_i64, long)
)CL";

const char kStateKernels[] = R"CL(
__kernel void assign_add(__global T* ref, const long ref_offset, __global const T* value, const long value_offset,
                         const long n) {
  ref += ref_offset;
  value += value_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) ref[i] = ref[i] + value[i];
}

__kernel void assign_sub(__global T* ref, const long ref_offset, __global const T* value, const long value_offset,
                         const long n) {
  ref += ref_offset;
  value += value_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) ref[i] = ref[i] - value[i];
}
)CL";

OpenCLLibrarySource array_source("array", LibraryTypes::kAll, kArrayKernels);
OpenCLLibrarySource state_source("state", LibraryTypes::kNumeric, kStateKernels);

/*! \brief The data movement of metadata ops: nothing when the planner aliased the output. */
void CopyCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  CopyUnlessAliased(in[0], out[0]);
}

std::vector<int> Permutation(const NodeAttrs& attrs, int ndim) {
  op::IntList axes = AttrIntList(attrs, "axes", {});
  std::vector<int> perm(ndim);
  for (int i = 0; i < ndim; ++i) {
    perm[i] = axes.empty() ? ndim - 1 - i : op::NormalizeAxis(attrs, static_cast<int>(axes[i]), ndim);
  }
  return perm;
}

void TransposeCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  const Shape& shape = in[0].shape();
  std::vector<int> perm = Permutation(attrs, shape.ndim());
  std::vector<int64_t> row_major = op::ContiguousStrides(shape), strides;
  for (int p : perm) strides.push_back(row_major[p]);
  int64_t n = out[0].Size();
  KernelArgs args;
  StridedWalk walk = MakeWalk(out[0].shape().dims(), strides, op::NodeDesc(attrs));
  args.Array(in[0]).Array(out[0]).Value(walk).Value(cl_long{n});
  RunKernel(ctx, out[0].dtype(), "strided_copy", args, n);
}

void OneHotCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  const Shape& shape = in[0].shape();
  int axis = static_cast<int>(AttrDouble(attrs, "axis", -1));
  axis = axis == -1 ? shape.ndim() : op::NormalizeAxis(attrs, axis, shape.ndim() + 1);
  int64_t n = out[0].Size();
  DType dtype = out[0].dtype();
  KernelArgs args;
  args.Array(in[0]).Array(out[0]).Value(cl_long{out[0].shape()[axis]});
  args.Value(cl_long{shape.ProdDims(axis, shape.ndim())});
  args.Scalar(dtype, AttrDouble(attrs, "on_value", 1)).Scalar(dtype, AttrDouble(attrs, "off_value", 0));
  args.Value(cl_long{n});
  RunKernel(ctx, dtype, in[0].dtype() == DType::kInt32 ? "one_hot_i32" : "one_hot_i64", args, n);
}

void AssignCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  CheckArrays({in[0], in[1], out[0]}, attrs);
  in[0].CopyFrom(in[1]);
  CopyUnlessAliased(in[0], out[0]);
}

/*! \brief assign_add / assign_sub: `kernel` updates ref in place, then the output holds it. */
FCompute UpdateCompute(const char* kernel) {
  return [kernel](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
    CheckArrays({in[0], in[1], out[0]}, attrs);
    int64_t n = in[0].Size();
    KernelArgs args;
    args.Array(in[0]).Array(in[1]).Value(cl_long{n});
    RunKernel(ctx, in[0].dtype(), kernel, args, n);
    CopyUnlessAliased(in[0], out[0]);
  };
}

/*! \brief A source op whose every element is `value_of(attrs)`. */
FCompute FillCompute(double (*value_of)(const NodeAttrs&)) {
  return [value_of](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>&,
                    const std::vector<NDArray>& out) {
    CheckArrays(out, attrs);
    Fill(ctx, out[0], value_of(attrs));
  };
}

double Zero(const NodeAttrs&) { return 0; }
double One(const NodeAttrs&) { return 1; }
double FillValue(const NodeAttrs& attrs) { return AttrDouble(attrs, "value", 0); }

/*! \brief The op's CPU kernel writes the constant into a host array, which is uploaded. */
void ConstantCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out) {
  CheckArrays(out, attrs);
  NDArray host(out[0].shape(), out[0].dtype(), Device::CPU());
  OpContext host_ctx = ctx;
  host_ctx.device = Device::CPU();
  host_ctx.queue = nullptr;
  Op::GetAttr<FCompute>("FCompute")[attrs.op](host_ctx, attrs, in, {host});
  out[0].CopyFrom(host);
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(reshape).set_attr<FCompute>(kKey, CopyCompute);
IR_REGISTER_OP(reshape_like).set_attr<FCompute>(kKey, CopyCompute);
IR_REGISTER_OP(expand_dims).set_attr<FCompute>(kKey, CopyCompute);
IR_REGISTER_OP(squeeze).set_attr<FCompute>(kKey, CopyCompute);
IR_REGISTER_OP(identity).set_attr<FCompute>(kKey, CopyCompute);
IR_REGISTER_OP(stop_gradient).set_attr<FCompute>(kKey, CopyCompute);
IR_REGISTER_OP(transpose).set_attr<FCompute>(kKey, TransposeCompute);
IR_REGISTER_OP(one_hot).set_attr<FCompute>(kKey, OneHotCompute);
IR_REGISTER_OP(assign).set_attr<FCompute>(kKey, AssignCompute);
IR_REGISTER_OP(assign_add).set_attr<FCompute>(kKey, UpdateCompute("assign_add"));
IR_REGISTER_OP(assign_sub).set_attr<FCompute>(kKey, UpdateCompute("assign_sub"));
IR_REGISTER_OP(zeros).set_attr<FCompute>(kKey, FillCompute(Zero));
IR_REGISTER_OP(ones).set_attr<FCompute>(kKey, FillCompute(One));
IR_REGISTER_OP(fill).set_attr<FCompute>(kKey, FillCompute(FillValue));
IR_REGISTER_OP(zeros_like).set_attr<FCompute>(kKey, FillCompute(Zero));
IR_REGISTER_OP(ones_like).set_attr<FCompute>(kKey, FillCompute(One));
IR_REGISTER_OP(no_op).set_attr<FCompute>(kKey, FillCompute(Zero));
IR_REGISTER_OP(group).set_attr<FCompute>(kKey, FillCompute(Zero));
IR_REGISTER_OP(constant).set_attr<FCompute>(kKey, ConstantCompute);

}  // namespace opencl
}  // namespace ir
