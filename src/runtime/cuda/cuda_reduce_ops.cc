/*!
 * \file cuda_reduce_ops.cc
 * \brief Reductions the printed kernels do not cover: over any set of axes (strided), the
 * gradient of broadcasting (collapse_sum_like), and argmax/argmin.
 *
 * One thread per output walks the reduced elements serially, in the CPU kernel's order.
 */
#include "runtime/cuda/cuda_ops.h"

namespace ir {
namespace cuda {
namespace {

const char* kReduceBody = R"(
/* kind: 0 sum, 1 mean, 2 max, 3 min, 4 prod */
extern "C" __global__ void __launch_bounds__(256) reduce_strided(const T* x, T* y, ir_strided kept, ir_strided reduced,
                                                                 long long outputs, long long count, int kind) {
  IR_THREAD_LOOP(o, outputs) {
    const T* base = x + ir_offset(kept, o);
    T acc = kind == 4 ? (T)1 : (T)0;
    long long r = 0;
    if ((kind == 2 || kind == 3) && count > 0) {
      acc = base[ir_offset(reduced, 0)];
      r = 1;
    }
    for (; r < count; ++r) {
      const T v = base[ir_offset(reduced, r)];
      if (kind == 2) {
        acc = (v > acc) ? v : acc;
      } else if (kind == 3) {
        acc = (v < acc) ? v : acc;
      } else if (kind == 4) {
        acc = acc * v;
      } else {
        acc = acc + v;
      }
    }
    y[o] = kind == 1 ? acc / (T)count : acc;
  }
}

/* y[o, j] = index of the first maximum (minimum) of x[o, :, j]. */
extern "C" __global__ void __launch_bounds__(256) arg_reduce(const T* x, long long* y, long long outer, long long n,
                                                             long long inner, int is_max) {
  IR_THREAD_LOOP(g, outer * inner) {
    const T* row = x + (g / inner) * n * inner + g % inner;
    T best = row[0];
    long long index = 0;
    for (long long i = 1; i < n; ++i) {
      const T v = row[i * inner];
      if (is_max ? v > best : v < best) {
        best = v;
        index = i;
      }
    }
    y[g] = index;
  }
}
)";

const KernelFamily kReduceFamily{
    "reduce", kReduceBody, {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64}};
const bool registered = RegisterFamily(&kReduceFamily);

int KindCode(const std::string& kind) {
  static const char* const kinds[] = {"sum", "mean", "max", "min", "prod"};
  for (int k = 0; k < 5; ++k) {
    if (kind == kinds[k]) return k;
  }
  throw Error(StrCat("CUDA reduction: unknown kind '", kind, "'"));
}

/*!
 * \brief y = reduction `kind` of x over the dims flagged in `reduced` (y row-major over the
 * others). Returns false when the shape has too many dimensions for the kernel.
 */
bool LaunchReduce(const OpContext& ctx, const NDArray& x, const NDArray& y, const std::vector<bool>& reduced,
                  const std::string& kind) {
  std::vector<int64_t> strides = RowMajorStrides(x.shape());
  std::vector<int64_t> kept_dims, kept_strides, red_dims, red_strides;
  int64_t count = 1;
  for (int d = 0; d < x.shape().ndim(); ++d) {
    auto& dims = reduced[d] ? red_dims : kept_dims;
    auto& steps = reduced[d] ? red_strides : kept_strides;
    dims.push_back(x.shape()[d]);
    steps.push_back(strides[d]);
    if (reduced[d]) count *= x.shape()[d];
  }
  StridedDims kept, red;
  if (!MakeStridedDims(kept_dims, kept_strides, &kept) || !MakeStridedDims(red_dims, red_strides, &red)) return false;
  KernelArgs args;
  args.AddArray(x)
      .AddArray(y)
      .Add(kept)
      .Add(red)
      .Add(static_cast<long long>(y.Size()))
      .Add(static_cast<long long>(count));
  args.Add(KindCode(kind));
  LaunchFamily(kReduceFamily, x.dtype(), "reduce_strided", &args, BlocksFor(y.Size()), ctx);
  return true;
}

void CollapseSumCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                        const std::vector<NDArray>& out) {
  const Shape& data = in[0].shape();
  const Shape& like = out[0].shape();
  std::vector<bool> reduced(data.ndim());
  int offset = data.ndim() - like.ndim();
  for (int d = 0; d < data.ndim(); ++d) reduced[d] = d < offset || (like[d - offset] == 1 && data[d] != 1);
  if (!LaunchReduce(ctx, in[0], out[0], reduced, "sum")) RunCPUKernel(ctx, attrs, in, out);
}

template <bool kMax>
void ArgReduceCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                      const std::vector<NDArray>& out) {
  const Shape& shape = in[0].shape();
  int axis = op::NormalizeAxis(attrs, static_cast<int>(ParamInt(attrs, "axis")), shape.ndim());
  int64_t outer = shape.ProdDims(0, axis), n = shape[axis], inner = shape.ProdDims(axis + 1, shape.ndim());
  KernelArgs args;
  args.AddArray(in[0]).AddArray(out[0]).Add<long long>(outer).Add<long long>(n).Add<long long>(inner).Add(kMax ? 1 : 0);
  LaunchFamily(kReduceFamily, in[0].dtype(), "arg_reduce", &args, n > 0 ? BlocksFor(outer * inner) : 0, ctx);
}

}  // namespace

/*! \brief Any reduction with TReduceKind and FReduceAxes, over any axes (generated ops use it). */
void StridedReduce(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  int ndim = in[0].shape().ndim();
  std::vector<bool> reduced(ndim, false);
  for (int axis : Op::GetAttr<FReduceAxes>("FReduceAxes")[attrs.op](attrs, ndim)) reduced.at(axis) = true;
  if (!LaunchReduce(ctx, in[0], out[0], reduced, Op::GetAttr<TReduceKind>("TReduceKind")[attrs.op])) {
    RunCPUKernel(ctx, attrs, in, out);
  }
}

IR_REGISTER_OP(collapse_sum_like).set_attr<FCompute>("FCompute<cuda>", CollapseSumCompute);
IR_REGISTER_OP(argmax).set_attr<FCompute>("FCompute<cuda>", ArgReduceCompute<true>);
IR_REGISTER_OP(argmin).set_attr<FCompute>("FCompute<cuda>", ArgReduceCompute<false>);

}  // namespace cuda
}  // namespace ir
