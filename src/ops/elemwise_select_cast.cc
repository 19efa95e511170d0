/*!
 * \file elemwise_select_cast.cc
 * \brief Elementwise utility ops: add_n, where (alias select), cast and cast_like, clip,
 * identity and stop_gradient. collapse_sum_like, the gradient of broadcasting, is in
 * collapse_sum.cc.
 */
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ir/vectorize.h"
#include "ops/op_common.h"
#include "ops/strided_copy.h"

namespace ir {
namespace op {
namespace {

using ast::Expr;

std::vector<std::pair<int, int>> OutputReusesInput0(const NodeAttrs&) { return {{0, 0}}; }

NodeEntry Apply(const NodePtr& n, const std::string& op, std::vector<NodeEntry> in) {
  return GradNode(op, n, op, std::move(in));
}

/*! \brief out = in, unless the planner already gave them one buffer. */
void CopyCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  if (!out[0].Overlaps(in[0])) out[0].CopyFrom(in[0]);
}

bool Contains(const DTypeSet& set, DType dtype) { return std::find(set.begin(), set.end(), dtype) != set.end(); }

// ---------------------------------------------------------------- add_n

bool AddNShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  IR_CHECK(!in->empty()) << NodeDesc(attrs) << ": needs at least one input";
  return ElemwiseShape(attrs, in, out);
}

bool AddNType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  IR_CHECK(!in->empty()) << NodeDesc(attrs) << ": needs at least one input";
  bool known = ElemwiseType(attrs, in, out);
  CheckDType(attrs, "input", (*out)[0], NumericTypes());
  return known;
}

/*!
 * \brief out = in[0] + in[1] + ..., accumulated in the output block by block, so the running
 * sum stays in cache while each input streams through once, and nothing is allocated.
 */
void AddNCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  if (in.size() == 1) return CopyCompute(ctx, attrs, in, out);
  constexpr int64_t kBlock = 4096;
  IR_NUMERIC_SWITCH(out[0].dtype(), T, {
    T* dst = out[0].data<T>();
    ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
      for (int64_t lo = begin; lo < end; lo += kBlock) {
        int64_t hi = std::min(end, lo + kBlock);
        const T* a = in[0].data<T>();
        const T* b = in[1].data<T>();
        for (int64_t i = lo; i < hi; ++i) dst[i] = a[i] + b[i];
        for (size_t k = 2; k < in.size(); ++k) {
          const T* c = in[k].data<T>();
          for (int64_t i = lo; i < hi; ++i) dst[i] += c[i];
        }
      }
    });
  });
}

std::vector<Expr> AddNCodeGen(const NodeAttrs&, const std::vector<Expr>& in) {
  if (in.empty() || !Contains(NumericTypes(), in[0]->dtype)) return {};
  for (const Expr& x : in) {
    if (x->dtype != in[0]->dtype) return {};
  }
  // Pairwise, so the tree is log2(n) deep however many terms there are.
  std::vector<Expr> terms = in;
  while (terms.size() > 1) {
    std::vector<Expr> sums;
    for (size_t i = 0; i + 1 < terms.size(); i += 2) sums.push_back(terms[i] + terms[i + 1]);
    if (terms.size() % 2 == 1) sums.push_back(terms.back());
    terms.swap(sums);
  }
  return terms;
}

// ---------------------------------------------------------------- where

bool WhereType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  AssignType(attrs, "input 0 (condition)", &(*in)[0], DType::kBool);
  DType value = (*in)[1] != DType::kUnknown ? (*in)[1] : (*in)[2] != DType::kUnknown ? (*in)[2] : (*out)[0];
  AssignType(attrs, "input 1", &(*in)[1], value);
  AssignType(attrs, "input 2", &(*in)[2], value);
  AssignType(attrs, "output 0", &(*out)[0], value);
  return AllKnown(*in, *out);
}

/*! \brief out = c ? x : y with NumPy broadcasting of the three inputs (as BroadcastBinary). */
template <typename T>
void WhereKernel(const NDArray& c, const NDArray& x, const NDArray& y, const NDArray& out) {
  const bool* pc = c.data<bool>();
  const T* px = x.data<T>();
  const T* py = y.data<T>();
  T* po = out.data<T>();
  const Shape& os = out.shape();
  if (c.shape() == os && x.shape() == os && y.shape() == os) {
    ParallelFor(out.Size(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) po[i] = pc[i] ? px[i] : py[i];
    });
    return;
  }
  int nd = os.ndim();  // >= 1: rank-0 inputs and output all have the shape []
  std::vector<int64_t> sc = BroadcastStrides(c.shape(), os), sx = BroadcastStrides(x.shape(), os),
                       sy = BroadcastStrides(y.shape(), os);
  int64_t inner = os[nd - 1], rows = inner == 0 ? 0 : out.Size() / inner;
  ParallelFor(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          int64_t rem = r, ic = 0, ix = 0, iy = 0;
          for (int d = nd - 2; d >= 0; --d) {
            int64_t idx = rem % os[d];
            rem /= os[d];
            ic += idx * sc[d];
            ix += idx * sx[d];
            iy += idx * sy[d];
          }
          T* row = po + r * inner;
          for (int64_t j = 0; j < inner; ++j) {
            row[j] = pc[ic + j * sc[nd - 1]] ? px[ix + j * sx[nd - 1]] : py[iy + j * sy[nd - 1]];
          }
        }
      },
      std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(inner, 1)));
}

void WhereCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
  IR_ALL_TYPES_SWITCH(out[0].dtype(), T, WhereKernel<T>(in[0], in[1], in[2], out[0]));
}

std::vector<NodeEntry> WhereGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry zero = Apply(n, "zeros_like", {og[0]});
  NodeEntry dx = Apply(n, "where", {In(n, 0), og[0], zero}), dy = Apply(n, "where", {In(n, 0), zero, og[0]});
  return {NodeEntry(), GradNode("collapse_sum_like", n, "x", {dx, In(n, 1)}),
          GradNode("collapse_sum_like", n, "y", {dy, In(n, 2)})};
}

// ---------------------------------------------------------------- cast

struct CastParam : public dmlc::Parameter<CastParam> {
  DType dtype;
  DMLC_DECLARE_PARAMETER(CastParam) {
    DMLC_DECLARE_FIELD(dtype).describe("The result's dtype: float32, float64, int32, int64 or bool.");
  }
};
DMLC_REGISTER_PARAMETER(CastParam);

/*! \brief C++ conversion: floats to integers truncate toward zero, nonzero to bool is true. */
void CastCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  if (in[0].dtype() == out[0].dtype()) return CopyCompute(ctx, attrs, in, out);
  IR_ALL_TYPES_SWITCH(in[0].dtype(), S, IR_ALL_TYPES_SWITCH(out[0].dtype(), D, {
                        const S* src = in[0].data<S>();
                        D* dst = out[0].data<D>();
                        ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
                          for (int64_t i = begin; i < end; ++i) dst[i] = static_cast<D>(src[i]);
                        });
                      }));
}

Expr CastExpr(const Expr& x, DType dtype) { return x->dtype == dtype ? x : ast::Cast(x, dtype); }

/*!
 * \brief The gradient of a cast is the output gradient cast back to the input's dtype; a cast to
 * an integer or bool dtype passes none (TF: None), so nothing flows back through integers.
 */
std::vector<NodeEntry> CastGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  std::vector<NodeEntry> grads(n->inputs.size());
  if (n->op() == Op::Get("cast") && !DTypeIsFloat(dmlc::get<CastParam>(n->attrs.parsed).dtype)) return grads;
  grads[0] = Apply(n, "cast_like", {og[0], In(n, 0)});
  return grads;
}

// ---------------------------------------------------------------- clip

struct ClipParam : public dmlc::Parameter<ClipParam> {
  double a_min, a_max;
  DMLC_DECLARE_PARAMETER(ClipParam) {
    DMLC_DECLARE_FIELD(a_min).describe("Lower bound (-inf for none).");
    DMLC_DECLARE_FIELD(a_max).describe("Upper bound (inf for none); at least a_min.");
  }
};
DMLC_REGISTER_PARAMETER(ClipParam);

void ParseClip(NodeAttrs* attrs) {
  ParamParser<ClipParam>(attrs);
  const ClipParam& p = dmlc::get<ClipParam>(attrs->parsed);
  IR_CHECK(p.a_min <= p.a_max) << NodeDesc(*attrs) << ": a_min " << NumberToString(p.a_min) << " is greater than a_max "
                               << NumberToString(p.a_max);
}

/*!
 * \brief The bounds as values of T (integers: the integers inside [a_min, a_max]), and whether
 * each bounds anything (infinite bounds, or bounds beyond an integer type's range, do not).
 */
template <typename T>
struct ClipBounds {
  T lo, hi;
  bool has_lo, has_hi;
  explicit ClipBounds(const ClipParam& p) {
    double lo_value = std::is_integral_v<T> ? std::ceil(p.a_min) : p.a_min;
    double hi_value = std::is_integral_v<T> ? std::floor(p.a_max) : p.a_max;
    has_lo = std::isfinite(lo_value) && lo_value > static_cast<double>(std::numeric_limits<T>::lowest());
    has_hi = std::isfinite(hi_value) && hi_value < static_cast<double>(std::numeric_limits<T>::max());
    lo = has_lo ? static_cast<T>(lo_value) : std::numeric_limits<T>::lowest();
    hi = has_hi ? static_cast<T>(hi_value) : std::numeric_limits<T>::max();
  }
};

// x < lo ? lo : (x > hi ? hi : x): NaN passes through, as in NumPy.
void ClipCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                 const std::vector<NDArray>& out) {
  IR_NUMERIC_SWITCH(out[0].dtype(), T, {
    ClipBounds<T> b(dmlc::get<ClipParam>(attrs.parsed));
    const T* src = in[0].data<T>();
    T* dst = out[0].data<T>();
    ParallelFor(out[0].Size(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) dst[i] = src[i] < b.lo ? b.lo : (src[i] > b.hi ? b.hi : src[i]);
    });
  });
}

template <typename T>
Expr ClipExpr(const ClipParam& p, const Expr& x) {
  ClipBounds<T> b(p);
  Expr y = b.has_hi ? ast::Select(ast::Binary(">", x, ast::ConstLike(b.hi, x)), ast::ConstLike(b.hi, x), x) : x;
  return b.has_lo ? ast::Select(ast::Binary("<", x, ast::ConstLike(b.lo, x)), ast::ConstLike(b.lo, x), y) : y;
}

std::vector<Expr> ClipCodeGen(const NodeAttrs& attrs, const std::vector<Expr>& in) {
  if (!Contains(NumericTypes(), in[0]->dtype)) return {};
  const ClipParam& p = dmlc::get<ClipParam>(attrs.parsed);
  Expr result;
  IR_NUMERIC_SWITCH(in[0]->dtype, T, result = ClipExpr<T>(p, in[0]));
  return {result};
}

// The output equals x exactly where a_min <= x <= a_max: og passes there, elsewhere 0.
std::vector<NodeEntry> ClipGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  NodeEntry inside = Apply(n, "equal", {Out(n), In(n, 0)});
  return {Apply(n, "where", {inside, og[0], Apply(n, "zeros_like", {og[0]})})};
}

// ---------------------------------------------------------------- identity, stop_gradient

/*! \brief Registers an op whose output is its input (any dtype). */
void CopyOp(Op& op) {
  op.set_num_inputs(1)
      .set_input_names({"data"})
      .set_attr<FInferShape>("FInferShape", ElemwiseShape)
      .set_attr<FInferType>("FInferType", ElemwiseType)
      .set_attr<FCompute>("FCompute", CopyCompute)
      .set_attr<FDeviceKernel>("FDeviceKernel", CopyDeviceKernel)  // a copy, not a derived kernel
      .set_attr<FCodeGen>("FCodeGen", [](const NodeAttrs&, const std::vector<Expr>& in) { return in; })
      .set_attr<FInplaceOption>("FInplaceOption", OutputReusesInput0)
      .set_attr<TOpPattern>("TOpPattern", kElemWise);
}

}  // namespace

IR_REGISTER_OP(add_n)
    .describe("The sum of any number (at least one) of tensors of one shape and dtype.")
    .set_num_inputs(kVariadic)
    .set_attr<FInferShape>("FInferShape", AddNShape)
    .set_attr<FInferType>("FInferType", AddNType)
    .set_attr<FCompute>("FCompute", AddNCompute)
    .set_attr<FCodeGen>("FCodeGen", AddNCodeGen)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& n, const std::vector<NodeEntry>& og) {
                           return std::vector<NodeEntry>(n->inputs.size(), og[0]);
                         })
    .set_attr<FInplaceOption>("FInplaceOption", OutputReusesInput0)
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

IR_REGISTER_OP(where)
    .describe("x where condition is true, else y, elementwise with NumPy broadcasting of all three.")
    .add_alias("select")
    .set_num_inputs(3)
    .set_input_names({"condition", "x", "y"})
    .set_attr<FInferShape>("FInferShape", BroadcastShape)
    .set_attr<FInferType>("FInferType", WhereType)
    .set_attr<FCompute>("FCompute", WhereCompute)
    .set_attr<FCodeGen>("FCodeGen",
                        [](const NodeAttrs&, const std::vector<Expr>& in) -> std::vector<Expr> {
                          if (in[0]->dtype != DType::kBool || in[1]->dtype != in[2]->dtype) return {};
                          return {ast::Select(in[0], in[1], in[2])};
                        })
    .set_attr<FGradient>("FGradient", WhereGradient)
    .set_attr<FVectorize>("FVectorize", VectorizeElementwise)
    // x or y as large as the output has its shape (up to leading 1s): out[i] reads it at i.
    .set_attr<FInplaceOption>("FInplaceOption",
                              [](const NodeAttrs&) {
                                return std::vector<std::pair<int, int>>{{1, 0}, {2, 0}};
                              })
    .set_attr<TOpPattern>("TOpPattern", kBroadcast);

IR_REGISTER_OP(cast)
    .describe("data converted to dtype (floats to integers truncate toward zero; nonzero to bool is true).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<CastParam>()
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            AssignType(attrs, "output 0", &(*out)[0], dmlc::get<CastParam>(attrs.parsed).dtype);
                            return AllKnown(*in, *out);
                          })
    .set_attr<FCompute>("FCompute", CastCompute)
    .set_attr<FCodeGen>("FCodeGen",
                        [](const NodeAttrs& attrs, const std::vector<Expr>& in) {
                          return std::vector<Expr>{CastExpr(in[0], dmlc::get<CastParam>(attrs.parsed).dtype)};
                        })
    .set_attr<FGradient>("FGradient", CastGradient)
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

IR_REGISTER_OP(cast_like)
    .describe("data converted to the dtype of like (a tensor of the same shape), as cast.")
    .set_num_inputs(2)
    .set_input_names({"data", "like"})
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            AssignType(attrs, "output 0", &(*out)[0], (*in)[1]);
                            AssignType(attrs, "input 1 (like)", &(*in)[1], (*out)[0]);
                            return AllKnown(*in, *out);
                          })
    .set_attr<FCompute>("FCompute", CastCompute)
    .set_attr<FCodeGen>("FCodeGen",
                        [](const NodeAttrs&, const std::vector<Expr>& in) {
                          return std::vector<Expr>{CastExpr(in[0], in[1]->dtype)};
                        })
    .set_attr<FGradient>("FGradient", CastGradient)
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

IR_REGISTER_OP(clip)
    .describe("data limited to [a_min, a_max] elementwise (NaN stays NaN).")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<ClipParam>()
    .set_attr_parser(ParseClip)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            bool known = ElemwiseType(attrs, in, out);
                            CheckDType(attrs, "input", (*out)[0], NumericTypes());
                            return known;
                          })
    .set_attr<FCompute>("FCompute", ClipCompute)
    .set_attr<FCodeGen>("FCodeGen", ClipCodeGen)
    .set_attr<FGradient>("FGradient", ClipGradient)
    .set_attr<FInplaceOption>("FInplaceOption", OutputReusesInput0)
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

IR_REGISTER_OP(identity)
    .describe("data, unchanged.")
    .apply(CopyOp)
    .set_attr<FGradient>("FGradient", [](const NodePtr&, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{og[0]};
    });

IR_REGISTER_OP(stop_gradient)
    .describe("data, unchanged, but no gradient flows through it.")
    .apply(CopyOp)
    .set_attr<FGradient>("FGradient", ZeroGradient);

}  // namespace op
}  // namespace ir
