/*!
 * \file cuda_array_ops.cc
 * \brief Data movement and state on CUDA: strided gathers (transpose, the broadcast back of
 * a reduction's gradient), one_hot, the assign family, reshape-likes and token ops.
 *
 * Reshape-likes and assign are device-to-device copies (nothing when the planner already
 * gave the output the input's memory).
 */
#include "runtime/cuda/cuda_ops.h"

namespace ir {
namespace cuda {
namespace {

const char* kArrayBody = R"(
/* y[i] = x[offset of i in map] (divided by divisor when it exceeds 1). */
extern "C" __global__ void __launch_bounds__(256) gather_strided(const T* x, T* y, ir_strided map, long long n,
                                                                 long long divisor) {
  IR_THREAD_LOOP(i, n) {
    const T v = x[ir_offset(map, i)];
    y[i] = divisor > 1 ? (T)(v / (T)divisor) : v;
  }
}

/* ref op= value: subtract when `subtract`, else add. */
extern "C" __global__ void __launch_bounds__(256) update(T* ref, const T* value, long long n, int subtract) {
  IR_THREAD_LOOP(i, n) ref[i] = subtract ? (T)(ref[i] - value[i]) : (T)(ref[i] + value[i]);
}

/* y[o, d, j] = indices[o, j] == d ? on : off, y viewed as [outer, depth, inner]. */
template <typename I>
__device__ void ir_one_hot(const I* indices, T* y, long long outer, long long depth, long long inner, double on,
                           double off) {
  IR_THREAD_LOOP(i, outer * depth * inner) {
    const long long j = i % inner, d = (i / inner) % depth, o = i / (inner * depth);
    y[i] = (long long)indices[o * inner + j] == d ? (T)on : (T)off;
  }
}
extern "C" __global__ void __launch_bounds__(256) one_hot_i32(const int* indices, T* y, long long outer,
                                                              long long depth, long long inner, double on,
                                                              double off) {
  ir_one_hot<int>(indices, y, outer, depth, inner, on, off);
}
extern "C" __global__ void __launch_bounds__(256) one_hot_i64(const long long* indices, T* y, long long outer,
                                                              long long depth, long long inner, double on,
                                                              double off) {
  ir_one_hot<long long>(indices, y, outer, depth, inner, on, off);
}
)";

const KernelFamily kArrayFamily{
    "array", kArrayBody, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool}};
const bool registered = RegisterFamily(&kArrayFamily);

/*! \brief y[i] = x[map(i)] / divisor; the CPU kernel when the map has too many dimensions. */
void Gather(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
            const std::vector<NDArray>& out, const std::vector<int64_t>& dims, const std::vector<int64_t>& strides,
            int64_t divisor) {
  StridedDims map;
  if (!MakeStridedDims(dims, strides, &map)) return RunCPUKernel(ctx, attrs, in, out);
  KernelArgs args;
  args.AddArray(in[0]).AddArray(out[0]).Add(map).Add<long long>(out[0].Size()).Add<long long>(divisor);
  LaunchFamily(kArrayFamily, out[0].dtype(), "gather_strided", &args, BlocksFor(out[0].Size()), ctx);
}

void TransposeCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int nd = shape.ndim();
  op::IntList axes = ParamList(attrs, "axes");
  std::vector<int64_t> in_strides = RowMajorStrides(shape), strides(nd);
  for (int d = 0; d < nd; ++d) {
    int from = axes.empty() ? nd - 1 - d : op::NormalizeAxis(attrs, static_cast<int>(axes[d]), nd);
    strides[d] = in_strides[from];
  }
  Gather(ctx, attrs, in, out, out[0].shape().dims(), strides, 1);
}

/*! \brief _reduce_grad_broadcast(og, like): og (row-major over the kept axes) spread over like's shape. */
void ReduceGradBroadcastCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                const std::vector<NDArray>& out) {
  const Shape& shape = out[0].shape();
  int nd = shape.ndim();
  op::IntList axis = ParamList(attrs, "axis");
  std::vector<bool> reduced(nd, axis.empty());
  for (int64_t a : axis.values) reduced[op::NormalizeAxis(attrs, static_cast<int>(a), nd)] = true;
  std::vector<int64_t> strides(nd, 0);
  int64_t stride = 1, count = 1;
  for (int d = nd - 1; d >= 0; --d) {
    if (reduced[d]) {
      count *= shape[d];
    } else {
      strides[d] = stride;
      stride *= shape[d];
    }
  }
  Gather(ctx, attrs, in, out, shape.dims(), strides, ParamBool(attrs, "normalize") ? count : 1);
}

void OneHotCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  const Shape& indices = in[0].shape();
  int64_t axis = ParamInt(attrs, "axis");
  int position = axis == -1 ? indices.ndim() : op::NormalizeAxis(attrs, static_cast<int>(axis), indices.ndim() + 1);
  int64_t outer = indices.ProdDims(0, position), inner = indices.ProdDims(position, indices.ndim());
  int64_t depth = out[0].shape()[position];
  KernelArgs args;
  args.AddArray(in[0]).AddArray(out[0]).Add<long long>(outer).Add<long long>(depth).Add<long long>(inner);
  args.Add(ParamDouble(attrs, "on_value")).Add(ParamDouble(attrs, "off_value"));
  const char* kernel = in[0].dtype() == DType::kInt32 ? "one_hot_i32" : "one_hot_i64";
  LaunchFamily(kArrayFamily, out[0].dtype(), kernel, &args, BlocksFor(out[0].Size()), ctx);
}

/*! \brief assign_add (kSubtract false) and assign_sub: ref op= value, output 0 = ref. */
template <bool kSubtract>
void UpdateCompute(const OpContext& ctx, const NodeAttrs&, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  KernelArgs args;
  args.AddArray(in[0]).AddArray(in[1]).Add<long long>(in[0].Size()).Add(kSubtract ? 1 : 0);
  LaunchFamily(kArrayFamily, in[0].dtype(), "update", &args, BlocksFor(in[0].Size()), ctx);
  CopyArray(in[0], out[0]);
}

void AssignCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  CopyArray(in[1], in[0]);
  CopyArray(in[0], out[0]);
}

/*! \brief Ops whose output holds the input's elements in the same order. */
void CopyCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  CopyArray(in[0], out[0]);
}

/*! \brief no_op and group: an int32 zero (the token), written from the host. */
void TokenCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>&, const std::vector<NDArray>& out) {
  out[0].CopyFrom(NDArray::Scalar<int32_t>(0));
}

}  // namespace

IR_REGISTER_OP(transpose).set_attr<FCompute>("FCompute<cuda>", TransposeCompute);
IR_REGISTER_OP(_reduce_grad_broadcast).set_attr<FCompute>("FCompute<cuda>", ReduceGradBroadcastCompute);
IR_REGISTER_OP(one_hot).set_attr<FCompute>("FCompute<cuda>", OneHotCompute);
IR_REGISTER_OP(assign).set_attr<FCompute>("FCompute<cuda>", AssignCompute);
IR_REGISTER_OP(assign_add).set_attr<FCompute>("FCompute<cuda>", UpdateCompute<false>);
IR_REGISTER_OP(assign_sub).set_attr<FCompute>("FCompute<cuda>", UpdateCompute<true>);
IR_REGISTER_OP(reshape).set_attr<FCompute>("FCompute<cuda>", CopyCompute);
IR_REGISTER_OP(reshape_like).set_attr<FCompute>("FCompute<cuda>", CopyCompute);
IR_REGISTER_OP(expand_dims).set_attr<FCompute>("FCompute<cuda>", CopyCompute);
IR_REGISTER_OP(squeeze).set_attr<FCompute>("FCompute<cuda>", CopyCompute);
IR_REGISTER_OP(no_op).set_attr<FCompute>("FCompute<cuda>", TokenCompute);
IR_REGISTER_OP(group).set_attr<FCompute>("FCompute<cuda>", TokenCompute);

}  // namespace cuda
}  // namespace ir
