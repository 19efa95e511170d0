/*!
 * \file kernels_reduce.cc
 * \brief OpenCL kernels of the reductions: sum, mean, max, min, prod and bias_add_grad over
 * any axes (by their FReduceAxes and TReduceKind), collapse_sum_like, the broadcast back of
 * _reduce_grad_broadcast, and argmax/argmin.
 *
 * A reduction walks the kept and the reduced dimensions of its input as two strided walks.
 * Many outputs: one work-item per output, summing row by row in blocks (the sum of each block
 * is added to the total, which keeps float32 rounding error near the CPU's pairwise sums).
 * Few outputs over many elements: a work-group per output and a tree in local memory.
 */
#include "ops/strided_copy.h"
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

constexpr int64_t kGroupSize = 64;

const char kReduceKernels[] = R"CL(
#define IR_SUM(a, b) ((a) + (b))
#define IR_PROD(a, b) ((a) * (b))
#define IR_MAX(a, b) ((b) > (a) ? (b) : (a))
#define IR_MIN(a, b) ((b) < (a) ? (b) : (a))

/* acc / count, as the CPU's mean: an empty integer mean is 0. */
inline T ir_mean(const T acc, const long count) {
#if IR_T_FLOAT
  return acc / (T)count;
#else
  return count == 0 ? (T)0 : acc / (T)count;
#endif
}

#define IR_DEFINE_REDUCE(NAME, INIT, COMBINE)                                                         \
  __kernel void NAME(__global const T* x, const long x_offset, __global T* y, const long y_offset,   \
                     const ir_strided kept, const ir_strided red, const long num_kept,               \
                     const long num_red, const int mean) {                                           \
    x += x_offset;                                                                                   \
    y += y_offset;                                                                                   \
    const long e = red.ndim > 0 ? red.extent[red.ndim - 1] : 1;                                      \
    const long s = red.ndim > 0 ? red.stride[red.ndim - 1] : 0;                                      \
    const long rows = e > 0 ? num_red / e : 0;                                                       \
    ir_strided outer = red;                                                                          \
    outer.ndim = red.ndim > 0 ? red.ndim - 1 : 0;                                                    \
    for (long o = get_global_id(0); o < num_kept; o += get_global_size(0)) {                         \
      const long base = ir_offset(kept, o);                                                          \
      T acc = INIT;                                                                                  \
      for (long r = 0; r < rows; ++r) {                                                              \
        const __global T* row = x + base + ir_offset(outer, r);                                      \
        for (long j0 = 0; j0 < e; j0 += 256) {                                                       \
          const long j1 = j0 + 256 < e ? j0 + 256 : e;                                               \
          T block = INIT;                                                                            \
          for (long j = j0; j < j1; ++j) block = COMBINE(block, row[j * s]);                         \
          acc = COMBINE(acc, block);                                                                 \
        }                                                                                            \
      }                                                                                              \
      y[o] = mean ? ir_mean(acc, num_red) : acc;                                                     \
    }                                                                                                \
  }                                                                                                  \
  __kernel __attribute__((reqd_work_group_size(64, 1, 1))) void NAME##_group(                      \
      __global const T* x, const long x_offset, __global T* y, const long y_offset,                  \
      const ir_strided kept, const ir_strided red, const long num_kept, const long num_red,          \
      const int mean) {                                                                              \
    __local T partial[64];                                                                           \
    x += x_offset;                                                                                   \
    y += y_offset;                                                                                   \
    const int lid = get_local_id(0);                                                                 \
    for (long o = get_group_id(0); o < num_kept; o += get_num_groups(0)) {                           \
      const long base = ir_offset(kept, o);                                                          \
      T acc = INIT;                                                                                  \
      for (long r = lid; r < num_red; r += 64) acc = COMBINE(acc, x[base + ir_offset(red, r)]);      \
      partial[lid] = acc;                                                                            \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
      for (int step = 32; step > 0; step >>= 1) {                                                    \
        if (lid < step) partial[lid] = COMBINE(partial[lid], partial[lid + step]);                   \
        barrier(CLK_LOCAL_MEM_FENCE);                                                                \
      }                                                                                              \
      if (lid == 0) y[o] = mean ? ir_mean(partial[0], num_red) : partial[0];                         \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                  \
    }                                                                                                \
  }

IR_DEFINE_REDUCE(reduce_sum, (T)0, IR_SUM)
IR_DEFINE_REDUCE(reduce_prod, (T)1, IR_PROD)
IR_DEFINE_REDUCE(reduce_max, T_LOWEST, IR_MAX)
IR_DEFINE_REDUCE(reduce_min, T_HIGHEST, IR_MIN)

/* dst[i] = src[offset of i in walk] / divisor: a reduction's result spread back over its axes. */
__kernel void broadcast_divide(__global const T* src, const long src_offset, __global T* dst, const long dst_offset,
                               const ir_strided walk, const long n, const T divisor) {
  src += src_offset;
  dst += dst_offset;
  for (long i = get_global_id(0); i < n; i += get_global_size(0)) dst[i] = src[ir_offset(walk, i)] / divisor;
}

/* out[o * inner + j] = index of the first extremum of x[o, :, j] (x viewed as [outer, n, inner]). */
#define IR_DEFINE_ARG_REDUCE(NAME, BETTER)                                                           \
  __kernel void NAME(__global const T* x, const long x_offset, __global long* out, const long out_offset, \
                     const long outer, const long n, const long inner) {                            \
    x += x_offset;                                                                                   \
    out += out_offset;                                                                               \
    for (long o = get_global_id(0); o < outer * inner; o += get_global_size(0)) {                    \
      const __global T* base = x + o / inner * n * inner + o % inner;                                \
      T best = base[0];                                                                              \
      long index = 0;                                                                                \
      for (long i = 1; i < n; ++i) {                                                                 \
        const T v = base[i * inner];                                                                 \
        if (v BETTER best) {                                                                         \
          best = v;                                                                                  \
          index = i;                                                                                 \
        }                                                                                            \
      }                                                                                              \
      out[o] = index;                                                                                \
    }                                                                                                \
  }
IR_DEFINE_ARG_REDUCE(argmax, >)
IR_DEFINE_ARG_REDUCE(argmin, <)
)CL";

OpenCLLibrarySource reduce_source("reduce", LibraryTypes::kNumeric, kReduceKernels);

/*! \brief The kept and reduced dimensions of a row-major `shape` as strided walks. */
struct ReducePlan {
  StridedWalk kept, reduced;
  int64_t num_kept = 1, num_reduced = 1;
};

ReducePlan MakePlan(const Shape& shape, const std::vector<bool>& reduced, const NodeAttrs& attrs) {
  std::vector<int64_t> strides = op::ContiguousStrides(shape);
  std::vector<int64_t> ke, ks, re, rs;
  ReducePlan plan;
  for (int d = 0; d < shape.ndim(); ++d) {
    (reduced[d] ? re : ke).push_back(shape[d]);
    (reduced[d] ? rs : ks).push_back(strides[d]);
    (reduced[d] ? plan.num_reduced : plan.num_kept) *= shape[d];
  }
  plan.kept = MakeWalk(ke, ks, op::NodeDesc(attrs));
  plan.reduced = MakeWalk(re, rs, op::NodeDesc(attrs));
  return plan;
}

/*! \brief y = the `kind` reduction ("sum", "mean", "max", "min", "prod") of x over `reduced`. */
void RunReduce(const OpContext& ctx, const NodeAttrs& attrs, const std::string& kind, const NDArray& x,
               const std::vector<bool>& reduced, const NDArray& y) {
  CheckArrays({x, y}, attrs);
  ReducePlan plan = MakePlan(x.shape(), reduced, attrs);
  bool group = plan.num_reduced >= 256 && plan.num_kept <= 1024;
  std::string name = StrCat("reduce_", kind == "mean" ? "sum" : kind, group ? "_group" : "");
  KernelArgs args;
  args.Array(x).Array(y).Value(plan.kept).Value(plan.reduced).Value(cl_long{plan.num_kept});
  args.Value(cl_long{plan.num_reduced}).Value(cl_int{kind == "mean"});
  if (group) {
    RunKernel(ctx, x.dtype(), name, args, std::min<int64_t>(plan.num_kept, 1024) * kGroupSize, kGroupSize);
  } else {
    RunKernel(ctx, x.dtype(), name, args, plan.num_kept);
  }
}

/*! \brief The reductions that declare their axes and kind: sum, mean, max, min, prod, bias_add_grad. */
void ReduceCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  int ndim = in[0].shape().ndim();
  std::vector<bool> reduced(ndim, false);
  for (int axis : Op::GetAttr<FReduceAxes>("FReduceAxes")[attrs.op](attrs, ndim)) reduced.at(axis) = true;
  RunReduce(ctx, attrs, Op::GetAttr<TReduceKind>("TReduceKind")[attrs.op], in[0], reduced, out[0]);
}

/*! \brief Sums data over the dimensions along which like's shape broadcasts to it. */
void CollapseSumCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                        const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  if (in[0].Size() == out[0].Size()) return CopyUnlessAliased(in[0], out[0]);
  const Shape& data = in[0].shape();
  const Shape& like = out[0].shape();
  int offset = data.ndim() - like.ndim();
  std::vector<bool> reduced(data.ndim());
  for (int d = 0; d < data.ndim(); ++d) reduced[d] = d < offset || (like[d - offset] == 1 && data[d] != 1);
  RunReduce(ctx, attrs, "sum", in[0], reduced, out[0]);
}

/*! \brief _reduce_grad_broadcast(og, like): og spread over the reduced axes (divided by their count). */
void ReduceGradCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  const Shape& shape = out[0].shape();
  op::IntList axis = AttrIntList(attrs, "axis", {});
  std::vector<bool> reduced(shape.ndim(), axis.empty());
  for (int64_t a : axis.values) reduced[op::NormalizeAxis(attrs, static_cast<int>(a), shape.ndim())] = true;
  // og holds the kept elements in order: its strides over the kept dims, 0 over the reduced.
  std::vector<int64_t> strides(shape.ndim(), 0);
  int64_t stride = 1, count = 1;
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    if (reduced[d]) {
      count *= shape[d];
    } else {
      strides[d] = stride;
      stride *= shape[d];
    }
  }
  bool normalize = AttrBool(attrs, "normalize", false);
  int64_t n = out[0].Size();
  KernelArgs args;
  args.Array(in[0]).Array(out[0]).Value(MakeWalk(shape.dims(), strides, op::NodeDesc(attrs))).Value(cl_long{n});
  args.Scalar(out[0].dtype(), normalize ? static_cast<double>(count) : 1.0);
  RunKernel(ctx, out[0].dtype(), "broadcast_divide", args, n);
}

/*! \brief argmax / argmin along `axis` (default 0), as int64 indices. */
FCompute ArgReduceCompute(const char* kernel) {
  return [kernel](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
    CheckArrays({in[0], out[0]}, attrs);
    const Shape& shape = in[0].shape();
    int axis = op::NormalizeAxis(attrs, static_cast<int>(AttrDouble(attrs, "axis", 0)), shape.ndim());
    int64_t outer = shape.ProdDims(0, axis), inner = shape.ProdDims(axis + 1, shape.ndim());
    KernelArgs args;
    args.Array(in[0]).Array(out[0]).Value(cl_long{outer}).Value(cl_long{shape[axis]}).Value(cl_long{inner});
    RunKernel(ctx, in[0].dtype(), kernel, args, outer * inner);
  };
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(sum).set_attr<FCompute>(kKey, ReduceCompute);
IR_REGISTER_OP(mean).set_attr<FCompute>(kKey, ReduceCompute);
IR_REGISTER_OP(max).set_attr<FCompute>(kKey, ReduceCompute);
IR_REGISTER_OP(min).set_attr<FCompute>(kKey, ReduceCompute);
IR_REGISTER_OP(prod).set_attr<FCompute>(kKey, ReduceCompute);
IR_REGISTER_OP(bias_add_grad).set_attr<FCompute>(kKey, ReduceCompute);
IR_REGISTER_OP(collapse_sum_like).set_attr<FCompute>(kKey, CollapseSumCompute);
IR_REGISTER_OP(_reduce_grad_broadcast).set_attr<FCompute>(kKey, ReduceGradCompute);
IR_REGISTER_OP(argmax).set_attr<FCompute>(kKey, ArgReduceCompute("argmax"));
IR_REGISTER_OP(argmin).set_attr<FCompute>(kKey, ArgReduceCompute("argmin"));

}  // namespace opencl
}  // namespace ir
