/*!
 * \file kernels_softmax.cc
 * \brief OpenCL kernels of softmax and log_softmax along an axis and of the two softmax
 * cross-entropy losses, with the CPU ops' formulas (nn_softmax.cc): the maximum is
 * subtracted before exponentiating. One work-item per row.
 *
 * A sparse label outside [0, classes) is an error on the CPU; a device kernel cannot raise
 * one without a host round trip, so it gives that row a NaN loss instead.
 */
#include "runtime/opencl/op_attrs.h"
#include "runtime/opencl/opencl_library.h"

namespace ir {
namespace opencl {
namespace {

const char kSoftmaxKernels[] = R"CL(
/* softmax (or log_softmax when use_log) of x viewed as [outer, n, inner], along n. y may be x. */
__kernel void softmax(__global const T* x, const long x_offset, __global T* y, const long y_offset,
                      const long outer, const long n, const long inner, const int use_log) {
  x += x_offset;
  y += y_offset;
  for (long row = get_global_id(0); row < outer * inner; row += get_global_size(0)) {
    const long base = row / inner * n * inner + row % inner;
    T m = x[base];
    for (long j = 1; j < n; ++j) m = max(m, x[base + j * inner]);
    T s = (T)0;
    for (long j = 0; j < n; ++j) s += exp(x[base + j * inner] - m);
    if (use_log) {
      const T shift = m + log(s);
      for (long j = 0; j < n; ++j) y[base + j * inner] = x[base + j * inner] - shift;
    } else {
      const T inv = (T)1 / s;
      for (long j = 0; j < n; ++j) y[base + j * inner] = exp(x[base + j * inner] - m) * inv;
    }
  }
}

/*
 * Row i of [rows, classes] logits: with lse = log sum e^x, loss = sum_j p_j (lse - x_j) and
 * backprop = softmax(x) - p, where p is the label distribution (probs, or one-hot of label).
 */
inline void ir_cross_entropy(const __global T* x, const __global T* probs, const long label, const long classes,
                             __global T* loss, __global T* backprop) {
  T m = x[0];
  for (long j = 1; j < classes; ++j) m = max(m, x[j]);
  T s = (T)0;
  for (long j = 0; j < classes; ++j) s += exp(x[j] - m);
  const T lse = m + log(s);
  T total = (T)0;
  for (long j = 0; j < classes; ++j) {
    const T p = probs != 0 ? probs[j] : (T)(j == label);
    total += p * (lse - x[j]);
    backprop[j] = exp(x[j] - lse) - p;
  }
  *loss = probs == 0 && (label < 0 || label >= classes) ? (T)NAN : total;
}

__kernel void softmax_cross_entropy(__global const T* x, const long x_offset, __global const T* labels,
                                    const long labels_offset, __global T* loss, const long loss_offset,
                                    __global T* backprop, const long backprop_offset, const long rows,
                                    const long classes) {
  for (long i = get_global_id(0); i < rows; i += get_global_size(0)) {
    ir_cross_entropy(x + x_offset + i * classes, labels + labels_offset + i * classes, -1, classes,
                     loss + loss_offset + i, backprop + backprop_offset + i * classes);
  }
}

#define IR_SPARSE_CROSS_ENTROPY(NAME, I)                                                                \
  __kernel void NAME(__global const T* x, const long x_offset, __global const I* labels,                \
                     const long labels_offset, __global T* loss, const long loss_offset,                \
                     __global T* backprop, const long backprop_offset, const long rows,                 \
                     const long classes) {                                                              \
    for (long i = get_global_id(0); i < rows; i += get_global_size(0)) {                                \
      ir_cross_entropy(x + x_offset + i * classes, 0, (long)labels[labels_offset + i], classes,         \
                       loss + loss_offset + i, backprop + backprop_offset + i * classes);               \
    }                                                                                                   \
  }
IR_SPARSE_CROSS_ENTROPY(sparse_softmax_cross_entropy_i32, int)
IR_SPARSE_CROSS_ENTROPY(sparse_softmax_cross_entropy_i64, long)
)CL";

OpenCLLibrarySource softmax_source("softmax", LibraryTypes::kFloat, kSoftmaxKernels);

template <bool kLog>
void SoftmaxCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out) {
  CheckArrays({in[0], out[0]}, attrs);
  const Shape& shape = in[0].shape();
  int axis = op::NormalizeAxis(attrs, static_cast<int>(AttrDouble(attrs, "axis", -1)), shape.ndim());
  int64_t outer = shape.ProdDims(0, axis), n = shape[axis], inner = shape.ProdDims(axis + 1, shape.ndim());
  if (n == 0) return;
  KernelArgs args;
  args.Array(in[0]).Array(out[0]).Value(cl_long{outer}).Value(cl_long{n}).Value(cl_long{inner}).Value(cl_int{kLog});
  RunKernel(ctx, in[0].dtype(), "softmax", args, outer * inner);
}

template <bool kSparse>
void CrossEntropyCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                         const std::vector<NDArray>& out) {
  CheckArrays({in[0], in[1], out[0], out[1]}, attrs);
  int64_t rows = in[0].shape()[0], classes = in[0].shape()[1];
  KernelArgs args;
  args.Array(in[0]).Array(in[1]).Array(out[0]).Array(out[1]).Value(cl_long{rows}).Value(cl_long{classes});
  std::string kernel = "softmax_cross_entropy";
  if (kSparse) kernel = StrCat("sparse_", kernel, in[1].dtype() == DType::kInt32 ? "_i32" : "_i64");
  RunKernel(ctx, in[0].dtype(), kernel, args, rows);
}

const std::string kKey = kLegacyKey;

}  // namespace

IR_REGISTER_OP(softmax).set_attr<FCompute>(kKey, SoftmaxCompute<false>);
IR_REGISTER_OP(log_softmax).set_attr<FCompute>(kKey, SoftmaxCompute<true>);
IR_REGISTER_OP(softmax_cross_entropy_with_logits).set_attr<FCompute>(kKey, CrossEntropyCompute<false>);
IR_REGISTER_OP(sparse_softmax_cross_entropy_with_logits).set_attr<FCompute>(kKey, CrossEntropyCompute<true>);

}  // namespace opencl
}  // namespace ir
