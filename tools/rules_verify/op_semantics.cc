/*!
 * \file op_semantics.cc
 * \brief Ops over symbolic tensors: the generic elementwise model (FCodeGen), and the shape
 * ops, reductions, matmul, softmax and cross entropy over element arrays.
 */
#include "op_semantics.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <sstream>

#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace rules_verify {
namespace {

using Dims = std::vector<int64_t>;

Dims Unravel(int64_t flat, const Shape& shape) {
  Dims index(shape.ndim());
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

int64_t Ravel(const Dims& index, const Shape& shape) {
  int64_t flat = 0;
  for (int d = 0; d < shape.ndim(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

/*! \brief The attribute's text, or `fallback` when the node did not set it. */
std::string Attr(const NodeAttrs& attrs, const std::string& key, const std::string& fallback) {
  auto it = attrs.dict.find(key);
  return it == attrs.dict.end() ? fallback : it->second;
}

bool BoolAttr(const NodeAttrs& attrs, const std::string& key) {
  std::string v = Attr(attrs, key, "false");
  return v == "true" || v == "True" || v == "1";
}

int NormalizeAxis(int64_t axis, int ndim) { return static_cast<int>(axis < 0 ? axis + ndim : axis); }

/*! \brief Every output's shape and dtype, from the op's own inference. */
void InferOutputs(const NodeAttrs& attrs, const std::vector<SymTensor>& inputs, std::vector<SymTensor>* outputs) {
  const Op* op = attrs.op;
  std::vector<Shape> in_shapes;
  std::vector<DType> in_types;
  for (const SymTensor& t : inputs) {
    in_shapes.push_back(t.shape);
    in_types.push_back(t.dtype);
  }
  uint32_t n = op->OutputCount(attrs);
  std::vector<Shape> out_shapes(n);
  std::vector<DType> out_types(n, DType::kUnknown);
  Op::GetAttr<FInferShape>("FInferShape")[op](attrs, &in_shapes, &out_shapes);
  Op::GetAttr<FInferType>("FInferType")[op](attrs, &in_types, &out_types);
  outputs->resize(n);
  for (uint32_t i = 0; i < n; ++i) {
    IR_CHECK(out_shapes[i].is_known()) << "cannot infer the shape of " << op->name << "'s output " << i;
    (*outputs)[i].shape = out_shapes[i];
    (*outputs)[i].dtype = out_types[i];
  }
}

/*! \brief The flat index of `t` that output element `out_index` (of `out`) reads under broadcasting. */
int64_t BroadcastSource(const Shape& in, const Dims& out_index) {
  Dims index(in.ndim());
  int offset = static_cast<int>(out_index.size()) - in.ndim();
  for (int d = 0; d < in.ndim(); ++d) index[d] = in[d] == 1 ? 0 : out_index[d + offset];
  return Ravel(index, in);
}

/*! \brief Ops with an FCodeGen that are elementwise or broadcasting. */
void Elementwise(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  std::vector<ast::Expr> vars;
  for (size_t i = 0; i < in.size(); ++i) vars.push_back(ast::Var(StrCat("in", i), in[i].dtype));
  std::vector<ast::Expr> exprs = Op::GetAttr<FCodeGen>("FCodeGen")[attrs.op](attrs, vars);
  IR_CHECK(exprs.size() == out->size()) << "cannot model op " << attrs.op->name << " on these dtypes";
  for (size_t k = 0; k < out->size(); ++k) {
    SymTensor& o = (*out)[k];
    for (int64_t e = 0; e < o.shape.Size(); ++e) {
      Dims index = Unravel(e, o.shape);
      std::map<std::string, z3::expr> env;
      for (size_t i = 0; i < in.size(); ++i)
        env.emplace(StrCat("in", i), in[i].elems[BroadcastSource(in[i].shape, index)]);
      o.elems.push_back(m->Translate(exprs[k], env));
    }
  }
}

/*! \brief A key naming an opaque op instance: name, input shapes and attributes. */
std::string OpaqueKey(const NodeAttrs& attrs, const std::vector<SymTensor>& in) {
  std::string key = attrs.op->name;
  for (const SymTensor& t : in) key += t.shape.ToString();
  for (const auto& kv : attrs.dict) key += StrCat(";", kv.first, "=", kv.second);
  return key;
}

using OpModel =
    std::function<void(SmtModel*, const NodeAttrs&, const std::vector<SymTensor>&, std::vector<SymTensor>*)>;

/*! \brief Output elements are the input's, in row-major order (reshape, squeeze...). */
void SameElements(SmtModel*, const NodeAttrs&, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  (*out)[0].elems = in[0].elems;
}

void Transpose(SmtModel*, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  int ndim = in[0].shape.ndim();
  Dims axes = ParseIntList(Attr(attrs, "axes", "()"));
  if (axes.empty()) {
    for (int d = ndim - 1; d >= 0; --d) axes.push_back(d);
  }
  SymTensor& o = (*out)[0];
  for (int64_t e = 0; e < o.shape.Size(); ++e) {
    Dims oi = Unravel(e, o.shape), ii(ndim);
    for (int d = 0; d < ndim; ++d) ii[NormalizeAxis(axes[d], ndim)] = oi[d];
    o.elems.push_back(in[0].elems[Ravel(ii, in[0].shape)]);
  }
}

void Broadcast(SmtModel*, const NodeAttrs&, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  (*out)[0].elems = BroadcastTo(in[0], (*out)[0].shape).elems;
}

void Tile(SmtModel*, const NodeAttrs&, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  SymTensor& o = (*out)[0];
  for (int64_t e = 0; e < o.shape.Size(); ++e) {
    Dims index = Unravel(e, o.shape);
    for (int d = 0; d < in[0].shape.ndim(); ++d) index[d] %= in[0].shape[d];
    o.elems.push_back(in[0].elems[Ravel(index, in[0].shape)]);
  }
}

/*! \brief Groups the input's elements by output element of a reduction over `axes`. */
std::vector<std::vector<z3::expr>> ReductionGroups(const SymTensor& in, std::vector<bool> reduced, int64_t outputs) {
  std::vector<std::vector<z3::expr>> groups(outputs);
  Shape kept_shape;
  Dims kept;
  for (int d = 0; d < in.shape.ndim(); ++d) {
    if (!reduced[d]) kept.push_back(in.shape[d]);
  }
  kept_shape = Shape(kept);
  for (int64_t e = 0; e < in.shape.Size(); ++e) {
    Dims index = Unravel(e, in.shape), k;
    for (int d = 0; d < in.shape.ndim(); ++d) {
      if (!reduced[d]) k.push_back(index[d]);
    }
    groups[Ravel(k, kept_shape)].push_back(in.elems[e]);
  }
  return groups;
}

z3::expr Fold(SmtModel* m, const std::string& op, const std::vector<z3::expr>& xs, DType dtype) {
  z3::expr acc = xs[0];
  for (size_t i = 1; i < xs.size(); ++i) {
    if (op == "max" || op == "min") {
      acc = z3::ite(op == "max" ? acc >= xs[i] : acc <= xs[i], acc, xs[i]);
    } else {
      acc = m->Arith(op == "prod" ? '*' : '+', acc, xs[i], dtype);
    }
  }
  return acc;
}

void Reduce(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  const std::string& op = attrs.op->name;
  int ndim = in[0].shape.ndim();
  Dims axes = ParseIntList(Attr(attrs, "axis", "()"));
  std::vector<bool> reduced(ndim, axes.empty());
  for (int64_t a : axes) reduced[NormalizeAxis(a, ndim)] = true;
  SymTensor& o = (*out)[0];
  bool ieee = m->ieee() && DTypeIsFloat(o.dtype);
  bool summed = op == "sum" || op == "mean";
  for (const std::vector<z3::expr>& group : ReductionGroups(in[0], reduced, o.shape.Size())) {
    IR_CHECK(!group.empty()) << "cannot model op " << op << " over an empty axis";
    if (ieee && summed && (group.size() == 1 || m->domain() == Domain::kRounding)) {
      // A sum of one term is +0 + t in every kernel (they start from +0).
      z3::expr total = m->OrderFreeSum(group, o.dtype);
      o.elems.push_back(op == "mean" ? m->Arith('/', total, m->Constant(group.size(), o.dtype), o.dtype) : total);
    } else if (ieee) {
      // The kernels' summation order (and max's NaN and -0 choices) are not pinned down;
      // max and min skip a NaN (their comparisons are false), sums and products keep it.
      o.elems.push_back(m->Opaque(OpaqueKey(attrs, in), group, o.dtype, summed || op == "prod"));
    } else if (op == "mean") {
      o.elems.push_back(m->Arith('/', Fold(m, "sum", group, o.dtype), m->Constant(group.size(), o.dtype), o.dtype));
    } else {
      o.elems.push_back(Fold(m, op, group, o.dtype));
    }
  }
}

/*! \brief collapse_sum_like(x, like): x summed down to like's shape (broadcasting undone). */
void CollapseSum(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  SymTensor& o = (*out)[0];
  std::vector<std::vector<z3::expr>> groups(o.shape.Size());
  for (int64_t e = 0; e < in[0].shape.Size(); ++e) {
    groups[BroadcastSource(o.shape, Unravel(e, in[0].shape))].push_back(in[0].elems[e]);
  }
  bool ieee = m->ieee() && DTypeIsFloat(o.dtype);
  for (const std::vector<z3::expr>& group : groups) {
    if (group.size() == 1) {
      o.elems.push_back(group[0]);  // nothing was broadcast: the kernels copy
    } else if (ieee && m->domain() == Domain::kRounding) {
      o.elems.push_back(m->OrderFreeSum(group, o.dtype));
    } else {
      o.elems.push_back(ieee ? m->Opaque(OpaqueKey(attrs, in), group, o.dtype) : Fold(m, "sum", group, o.dtype));
    }
  }
}

/*! \brief bias_add_grad(dy): dy summed over every axis but the channel (NHWC: the last; NCHW: 1). */
void BiasAddGrad(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  int ndim = in[0].shape.ndim();
  int channel = Attr(attrs, "data_format", "NHWC") == "NCHW" ? 1 : ndim - 1;
  std::vector<bool> reduced(ndim, true);
  reduced[channel] = false;
  SymTensor& o = (*out)[0];
  bool ieee = m->ieee() && DTypeIsFloat(o.dtype);
  for (const std::vector<z3::expr>& group : ReductionGroups(in[0], reduced, o.shape.Size())) {
    if (ieee && (group.size() == 1 || m->domain() == Domain::kRounding)) {
      o.elems.push_back(m->OrderFreeSum(group, o.dtype));
    } else {
      o.elems.push_back(ieee ? m->Opaque(OpaqueKey(attrs, in), group, o.dtype) : Fold(m, "sum", group, o.dtype));
    }
  }
}

/*! \brief _reduce_grad_broadcast(og, like): og spread back over the reduced axes (divided by their count). */
void ReduceGradBroadcast(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in,
                         std::vector<SymTensor>* out) {
  SymTensor& o = (*out)[0];
  int ndim = o.shape.ndim();
  Dims axes = ParseIntList(Attr(attrs, "axis", "()"));
  std::vector<bool> reduced(ndim, axes.empty());
  for (int64_t a : axes) reduced[NormalizeAxis(a, ndim)] = true;
  bool keepdims = BoolAttr(attrs, "keepdims");
  int64_t count = 1;
  for (int d = 0; d < ndim; ++d) count *= reduced[d] ? o.shape[d] : 1;
  for (int64_t e = 0; e < o.shape.Size(); ++e) {
    Dims index = Unravel(e, o.shape), k;
    for (int d = 0; d < ndim; ++d) {
      if (!reduced[d] || keepdims) k.push_back(reduced[d] ? 0 : index[d]);
    }
    z3::expr og = in[0].elems[in[0].shape.ndim() == 0 ? 0 : Ravel(k, in[0].shape)];
    o.elems.push_back(BoolAttr(attrs, "normalize") ? m->Arith('/', og, m->Constant(count, o.dtype), o.dtype) : og);
  }
}

/*!
 * \brief One element of a matmul over IEEE: opaque in the operands' order (kIEEE), or, in the
 * rounding model, the same value for the same multiset of (x, y) pairs (any summation order).
 */
z3::expr IeeeDot(SmtModel* m, const std::string& key, std::vector<std::pair<z3::expr, z3::expr>> pairs, DType dtype) {
  std::vector<z3::expr> operands;
  if (m->domain() == Domain::kRounding) {
    std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) {
      return a.first.id() != b.first.id() ? a.first.id() < b.first.id() : a.second.id() < b.second.id();
    });
  }
  for (const auto& p : pairs) {
    operands.push_back(p.first);
    operands.push_back(p.second);
  }
  return m->Opaque(m->domain() == Domain::kRounding ? StrCat("order_free_dot", pairs.size()) : key, operands, dtype);
}

void Matmul(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  const Shape &a = in[0].shape, &b = in[1].shape;
  IR_CHECK(a.ndim() == 2 && b.ndim() == 2) << "cannot model op matmul of rank other than 2";
  bool ta = BoolAttr(attrs, "transpose_a"), tb = BoolAttr(attrs, "transpose_b");
  int64_t k_extent = ta ? a[0] : a[1];
  SymTensor& o = (*out)[0];
  bool ieee = m->ieee() && DTypeIsFloat(o.dtype);
  for (int64_t e = 0; e < o.shape.Size(); ++e) {
    int64_t i = e / o.shape[1], j = e % o.shape[1];
    std::vector<z3::expr> terms;
    std::vector<std::pair<z3::expr, z3::expr>> pairs;
    for (int64_t k = 0; k < k_extent; ++k) {
      z3::expr x = in[0].elems[ta ? k * a[1] + i : i * a[1] + k], y = in[1].elems[tb ? j * b[1] + k : k * b[1] + j];
      terms.push_back(m->Arith('*', x, y, o.dtype));
      pairs.emplace_back(x, y);
    }
    o.elems.push_back(ieee ? IeeeDot(m, OpaqueKey(attrs, in), pairs, o.dtype) : Fold(m, "sum", terms, o.dtype));
  }
}

void BiasAdd(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  SymTensor& o = (*out)[0];
  int channel = Attr(attrs, "data_format", "NHWC") == "NCHW" ? 1 : o.shape.ndim() - 1;
  for (int64_t e = 0; e < o.shape.Size(); ++e) {
    o.elems.push_back(m->Arith('+', in[0].elems[e], in[1].elems[Unravel(e, o.shape)[channel]], o.dtype));
  }
}

/*! \brief Softmax or log-softmax of each row `xs` over the reals. */
std::vector<z3::expr> RealSoftmax(SmtModel* m, const std::vector<z3::expr>& xs, bool log) {
  std::vector<z3::expr> exps, out;
  for (const z3::expr& x : xs) exps.push_back(m->Call("exp", {x}, DType::kFloat32));
  z3::expr total = Fold(m, "sum", exps, DType::kFloat32);
  for (size_t i = 0; i < xs.size(); ++i) {
    out.push_back(log ? xs[i] - m->Call("log", {total}, DType::kFloat32) : exps[i] / total);
  }
  return out;
}

/*! \brief Rows of `t` along `axis`: each row's flat element indices. */
std::vector<Dims> Rows(const Shape& shape, int axis) {
  std::vector<bool> reduced(shape.ndim(), false);
  reduced[axis] = true;
  std::vector<Dims> rows;
  std::map<int64_t, size_t> slot;
  for (int64_t e = 0; e < shape.Size(); ++e) {
    Dims index = Unravel(e, shape);
    index[axis] = 0;
    auto it = slot.emplace(Ravel(index, shape), rows.size()).first;
    if (it->second == rows.size()) rows.emplace_back();
    rows[it->second].push_back(e);
  }
  return rows;
}

void Softmax(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  bool log = attrs.op->name == "log_softmax";
  const SymTensor& x = in[0];
  SymTensor& o = (*out)[0];
  o.elems = x.elems;
  for (const Dims& row : Rows(x.shape, NormalizeAxis(std::stoll(Attr(attrs, "axis", "-1")), x.shape.ndim()))) {
    std::vector<z3::expr> xs;
    for (int64_t e : row) xs.push_back(x.elems[e]);
    for (size_t j = 0; j < row.size(); ++j) {
      o.elems[row[j]] =
          !m->ieee() ? RealSoftmax(m, xs, log)[j] : m->Opaque(StrCat(OpaqueKey(attrs, in), "#", j), xs, o.dtype);
    }
  }
}

/*! \brief softmax_cross_entropy_with_logits and its sparse form: loss [N] and backprop [N, C]. */
void CrossEntropy(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  bool sparse = attrs.op->name == "sparse_softmax_cross_entropy_with_logits";
  const SymTensor &x = in[0], &y = in[1];
  int64_t rows = x.shape[0], classes = x.shape[1];
  DType dt = x.dtype;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<z3::expr> xs(x.elems.begin() + r * classes, x.elems.begin() + (r + 1) * classes), labels;
    for (int64_t j = 0; j < classes; ++j) {
      labels.push_back(sparse ? z3::ite(y.elems[r] == m->Constant(j, y.dtype), m->Constant(1, dt), m->Constant(0, dt))
                              : y.elems[r * classes + j]);
    }
    if (m->ieee()) {
      std::vector<z3::expr> args = xs;
      args.insert(args.end(), labels.begin(), labels.end());
      (*out)[0].elems.push_back(m->Opaque(StrCat(OpaqueKey(attrs, in), "#loss"), args, dt));
      for (int64_t j = 0; j < classes; ++j) {
        (*out)[1].elems.push_back(m->Opaque(StrCat(OpaqueKey(attrs, in), "#", j), args, dt));
      }
      continue;
    }
    std::vector<z3::expr> log_p = RealSoftmax(m, xs, true), p = RealSoftmax(m, xs, false), terms;
    for (int64_t j = 0; j < classes; ++j) {
      terms.push_back(labels[j] * log_p[j]);
      (*out)[1].elems.push_back(p[j] - labels[j]);
    }
    (*out)[0].elems.push_back(-Fold(m, "sum", terms, dt));
  }
}

void OneHot(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  IR_CHECK(std::stoll(Attr(attrs, "axis", "-1")) == -1) << "cannot model op one_hot off the last axis";
  SymTensor& o = (*out)[0];
  int64_t depth = o.shape[o.shape.ndim() - 1];
  z3::expr on = m->Constant(std::stod(Attr(attrs, "on_value", "1")), o.dtype);
  z3::expr off = m->Constant(std::stod(Attr(attrs, "off_value", "0")), o.dtype);
  for (int64_t e = 0; e < o.shape.Size(); ++e) {
    const z3::expr& index = in[0].elems[e / depth];
    o.elems.push_back(z3::ite(index == m->Constant(e % depth, in[0].dtype), on, off));
  }
}

/*! \brief softplus over the reals is log(1 + e^x); its FCodeGen is a stable rewrite of that. */
void RealSoftplus(SmtModel* m, const NodeAttrs& attrs, const std::vector<SymTensor>& in, std::vector<SymTensor>* out) {
  if (m->ieee()) return Elementwise(m, attrs, in, out);
  for (const z3::expr& x : in[0].elems)
    (*out)[0].elems.push_back(m->Call("log", {1 + m->Call("exp", {x}, in[0].dtype)}, in[0].dtype));
}

const std::map<std::string, OpModel>& Models() {
  static const std::map<std::string, OpModel> models = {
      {"reshape", SameElements},
      {"reshape_like", SameElements},
      {"expand_dims", SameElements},
      {"squeeze", SameElements},
      {"transpose", Transpose},
      {"broadcast_to", Broadcast},
      {"broadcast_like", Broadcast},
      {"sum", Reduce},
      {"mean", Reduce},
      {"max", Reduce},
      {"min", Reduce},
      {"prod", Reduce},
      {"matmul", Matmul},
      {"bias_add", BiasAdd},
      {"bias_add_grad", BiasAddGrad},
      {"softmax", Softmax},
      {"log_softmax", Softmax},
      {"one_hot", OneHot},
      {"tile", Tile},
      {"collapse_sum_like", CollapseSum},
      {"_reduce_grad_broadcast", ReduceGradBroadcast},
      {"softplus", RealSoftplus},
      {"softmax_cross_entropy_with_logits", CrossEntropy},
      {"sparse_softmax_cross_entropy_with_logits", CrossEntropy},
  };
  return models;
}

}  // namespace

std::vector<int64_t> ParseIntList(const std::string& text) {
  std::string cleaned;
  for (char c : text) cleaned += (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') ? ' ' : c;
  std::istringstream in(cleaned);
  std::vector<int64_t> values;
  for (int64_t v; in >> v;) values.push_back(v);
  return values;
}

SymTensor BroadcastTo(const SymTensor& t, const Shape& shape) {
  SymTensor out{shape, t.dtype, {}};
  for (int64_t e = 0; e < shape.Size(); ++e) out.elems.push_back(t.elems[BroadcastSource(t.shape, Unravel(e, shape))]);
  return out;
}

std::vector<SymTensor> ApplyOp(SmtModel* model, const NodeAttrs& attrs, const std::vector<SymTensor>& inputs) {
  const Op* op = attrs.op;
  std::vector<SymTensor> outputs;
  auto it = Models().find(op->name);
  bool generic = false;
  if (it == Models().end()) {
    const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
    const auto* pattern = Op::FindAttr<TOpPattern>("TOpPattern");
    int kind = pattern ? pattern->get(op, kOpaque) : kOpaque;
    generic = codegen && codegen->count(op) && (kind == kElemWise || kind == kBroadcast);
    IR_CHECK(generic) << "cannot model op " << op->name;
  }
  InferOutputs(attrs, inputs, &outputs);
  if (generic) {
    Elementwise(model, attrs, inputs, &outputs);
  } else {
    it->second(model, attrs, inputs, &outputs);
  }
  return outputs;
}

}  // namespace rules_verify
}  // namespace ir
