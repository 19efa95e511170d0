/*!
 * \file scan.cc
 * \brief Scans along an axis: cumsum and cumprod (tf.cumsum, tf.cumprod) with TensorFlow's
 * `exclusive` (element i excludes x[i]) and `reverse` (scan from the end) flags.
 *
 * The value is viewed as [outer, n, inner]; each of the outer * inner lines is scanned by one
 * thread, on the CPU and on devices alike.
 */
#include <string>

#include "ir/device_kernel.h"
#include "ops/array/array_common.h"

namespace ir {
namespace op {
namespace {

struct ScanParam : public dmlc::Parameter<ScanParam> {
  int axis;
  bool exclusive;
  bool reverse;
  DMLC_DECLARE_PARAMETER(ScanParam) {
    DMLC_DECLARE_FIELD(axis).set_default(0).describe("Axis to scan along.");
    DMLC_DECLARE_FIELD(exclusive).set_default(false).describe("Element i combines the elements before i only.");
    DMLC_DECLARE_FIELD(reverse).set_default(false).describe("Scan from the last element towards the first.");
  }
};
DMLC_REGISTER_PARAMETER(ScanParam);

/*! \brief The [outer, n, inner] view of a scan of `shape` along the op's axis. */
struct ScanLayout {
  int64_t outer, n, inner;
  ScanLayout(const NodeAttrs& attrs, const Shape& shape) {
    IR_CHECK(shape.ndim() > 0) << NodeDesc(attrs) << ": cannot scan a scalar";
    int axis = NormalizeAxis(attrs, dmlc::get<ScanParam>(attrs.parsed).axis, shape.ndim());
    outer = shape.ProdDims(0, axis);
    n = shape[axis];
    inner = shape.ProdDims(axis + 1, shape.ndim());
  }
};

bool ScanShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if ((*in)[0].rank_known()) {
    IR_CHECK((*in)[0].ndim() > 0) << NodeDesc(attrs) << ": cannot scan a scalar (shape " << (*in)[0] << ")";
    NormalizeAxis(attrs, dmlc::get<ScanParam>(attrs.parsed).axis, (*in)[0].ndim());
  }
  return ElemwiseShape(attrs, in, out);
}

bool ScanType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  bool known = ElemwiseType(attrs, in, out);
  if ((*in)[0] != DType::kUnknown) CheckDType(attrs, "x", (*in)[0], NumericTypes());
  return known;
}

const DeviceKernelSource& kScanSource = RegisterDeviceKernelSource({"scan", R"(
/* One work-item per line of x viewed as [outer, n, inner]; exclusive and reverse are 0 or 1. */
#define IR_SCAN(NAME, INIT, OP)                                                                      \
  IR_KERNEL void NAME(IR_CONST_ARRAY(T, x), IR_ARRAY(T, out), const long n, const long inner,        \
                      const long lines, const long exclusive, const long reverse) {                  \
    IR_OFFSET(x);                                                                                    \
    IR_OFFSET(out);                                                                                  \
    IR_THREAD_LOOP(l, lines) {                                                                       \
      long base = l / inner * n * inner + l % inner;                                                 \
      T acc = INIT;                                                                                  \
      for (long j = 0; j < n; ++j) {                                                                 \
        long at = base + (reverse ? n - 1 - j : j) * inner;                                          \
        T v = x[at];                                                                                 \
        if (exclusive) out[at] = acc;                                                                \
        acc = acc OP v;                                                                              \
        if (!exclusive) out[at] = acc;                                                               \
      }                                                                                              \
    }                                                                                                \
  }
IR_SCAN(cumsum, (T)0, +)
IR_SCAN(cumprod, (T)1, *)
)",
                                                                    NumericTypes()});

template <bool kProduct>
void ScanCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  const ScanParam& p = dmlc::get<ScanParam>(attrs.parsed);
  ScanLayout s(attrs, in[0].shape());
  IR_NUMERIC_SWITCH(in[0].dtype(), DT, {
    const DT* x = in[0].data<DT>();
    DT* y = out[0].data<DT>();
    ParallelFor(s.outer * s.inner, [&](int64_t begin, int64_t end) {
      for (int64_t l = begin; l < end; ++l) {
        int64_t base = l / s.inner * s.n * s.inner + l % s.inner;
        DT acc = kProduct ? DT(1) : DT(0);
        for (int64_t j = 0; j < s.n; ++j) {
          int64_t at = base + (p.reverse ? s.n - 1 - j : j) * s.inner;
          DT v = x[at];
          if (p.exclusive) y[at] = acc;
          acc = kProduct ? acc * v : acc + v;
          if (!p.exclusive) y[at] = acc;
        }
      }
    });
  });
}

template <bool kProduct>
void ScanDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                const std::vector<NDArray>& out) {
  const ScanParam& p = dmlc::get<ScanParam>(attrs.parsed);
  ScanLayout s(attrs, in[0].shape());
  int64_t lines = s.outer * s.inner;
  DeviceArgs args;
  args.Array(in[0]).Array(out[0]).Value(s.n).Value(s.inner).Value(lines);
  args.Value(int64_t{p.exclusive}).Value(int64_t{p.reverse});
  dev.Launch(kScanSource, in[0].dtype(), kProduct ? "cumprod" : "cumsum", args, DeviceLaunch::Threads(lines));
}

/*! \brief The attributes of `n` with `reverse` flipped: a scan's adjoint runs the other way. */
std::map<std::string, std::string> Reversed(const NodePtr& n) {
  std::map<std::string, std::string> dict = n->attrs.dict;
  dict["reverse"] = dmlc::get<ScanParam>(n->attrs.parsed).reverse ? "false" : "true";
  return dict;
}

std::vector<NodeEntry> CumsumGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  return {GradNode("cumsum", n, "x", {og[0]}, Reversed(n))};
}

/*! \brief TensorFlow's: cumsum(cumprod(x) * dy, reversed) / x (so undefined where x has zeros, as there). */
std::vector<NodeEntry> CumprodGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry weighted = GradNode("multiply", n, "weighted", {Out(n), og[0]});
  NodeEntry summed = GradNode("cumsum", n, "summed", {weighted}, Reversed(n));
  return {GradNode("divide", n, "x", {summed, In(n, 0)})};
}

/*! \brief What cumsum and cumprod share. */
void ScanOp(Op& op, FCompute compute, FDeviceKernel device, FGradient gradient) {
  op.set_num_inputs(1)
      .set_input_names({"x"})
      .set_param<ScanParam>()
      .set_attr<FInferShape>("FInferShape", ScanShape)
      .set_attr<FInferType>("FInferType", ScanType)
      .set_attr<FCompute>("FCompute", std::move(compute))
      .set_attr<FDeviceKernel>("FDeviceKernel", std::move(device))
      .set_attr<FGradient>("FGradient", std::move(gradient))
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

}  // namespace

IR_REGISTER_OP(cumsum)
    .describe("Cumulative sum along `axis` (tf.cumsum), optionally exclusive and/or reversed.")
    .apply([](Op& op) { ScanOp(op, ScanCompute<false>, ScanDevice<false>, CumsumGradient); });

IR_REGISTER_OP(cumprod)
    .describe("Cumulative product along `axis` (tf.cumprod), optionally exclusive and/or reversed.")
    .apply([](Op& op) { ScanOp(op, ScanCompute<true>, ScanDevice<true>, CumprodGradient); });

}  // namespace op
}  // namespace ir
