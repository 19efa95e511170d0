/*!
 * \file attention.cc
 * \brief fused_attention and fused_attention_grad: softmax(Q K^T * scale + causal mask) V in one
 * kernel, FlashAttention's tiling on the CPU (online softmax over key tiles: the T x S score
 * matrix is never stored, only one tile of it per thread), and its backward pass, which
 * recomputes each tile's scores from q, k and the per-row log-sum-exp the forward pass keeps
 * (FlashAttention-2: D_i = rowsum(dO * O), dS = P * (dP - D)).
 *
 * Shapes: q [..., T, D], k [..., S, D], v [..., S, E] with the same leading (batch) dims;
 * o [..., T, E], lse [..., T].
 *
 * Causal: query row i attends keys j <= i + (S - T) (the last query row sees every key; with
 * T == S, TensorFlow's matrix_band_part(ones, -1, 0) lower triangle). The other keys are
 * "masked": the unfused graphs this op replaces (src/passes/rewrite_attention_rules.cc) give them the score
 * `mask_value` (a large negative constant such as -1e9) by one of three formulas, `mask_form`:
 * select (tf.where(mask, s, mask_value)), add (s + (1 - mask) * mask_value) or multiply
 * (s * mask + (1 - mask) * mask_value), whose exp is exactly 0 in float32 after the row maximum
 * is subtracted. The tiled kernel skips them.
 *
 * Special values: the tiled kernel runs a (batch) slice only when it provably computes what the
 * unfused graph does up to rounding: every value of q, k, v (and dO) finite, the scores bounded
 * (|scale| * D * max|q| * max|k| < 1e30), and, when causal, T <= S and the masked scores at least
 * 4096 below every unmasked one. Any other slice runs the dense reference path, row by row over
 * all S keys with the unfused graph's formulas (masked scores by `mask_form`, 0 * NaN products
 * included), so NaN and Inf propagate as they do unfused. The device kernels use those dense
 * formulas always (one work-item per query or key row; scores recomputed, never stored).
 *
 * Files: attention.h (what they share), attention_cpu.cc/.h (the CPU kernels), attention_device.cc
 * (the device kernels); the rules that choose these ops from a TF1 program are in
 * src/passes/rewrite_attention_rules.cc.
 */
#include <cmath>
#include <string>
#include <vector>

#include "ir/subsume.h"
#include "ops/attention/attention.h"

namespace ir {
namespace op {
namespace attention {

DMLC_REGISTER_PARAMETER(AttentionParam);

namespace {

void ParseAttention(NodeAttrs* attrs) {
  ParamParser<AttentionParam>(attrs);
  const AttentionParam& p = dmlc::get<AttentionParam>(attrs->parsed);
  IR_CHECK(std::isfinite(p.scale)) << NodeDesc(*attrs) << ": scale " << p.scale << " must be finite";
  IR_CHECK(std::isfinite(p.mask_value)) << NodeDesc(*attrs) << ": mask_value " << p.mask_value << " must be finite";
}

// ---------------------------------------------------------------- shapes

std::string Shapes(const std::vector<Shape>& in, int n) {
  static const char* names[] = {"q", "k", "v", "o", "lse", "do"};
  std::string s;
  for (int i = 0; i < n; ++i) s += StrCat(i ? ", " : "", names[i], " ", in[i].ToString());
  return s;
}

/*!
 * \brief Checks q [..., T, D], k [..., S, D], v [..., S, E] (in[0..2]) and returns o's shape
 * [..., T, E] and lse's [..., T] when the ranks are known.
 */
bool AttentionShapes(const NodeAttrs& attrs, std::vector<Shape>* in, Shape* o, Shape* lse) {
  Shape& q = (*in)[0];
  Shape& k = (*in)[1];
  Shape& v = (*in)[2];
  for (const Shape* s : {&q, &k, &v}) {
    IR_CHECK(!s->rank_known() || s->ndim() >= 2)
        << NodeDesc(attrs) << ": q, k and v must have rank >= 2 ([..., T, D], [..., S, D], [..., S, E]); got "
        << Shapes(*in, 3);
  }
  if (!q.rank_known() || !k.rank_known() || !v.rank_known()) return false;
  IR_CHECK(q.ndim() == k.ndim() && q.ndim() == v.ndim())
      << NodeDesc(attrs) << ": q, k and v must have the same rank; got " << Shapes(*in, 3);
  const int nd = q.ndim();
  auto merge = [&](int64_t a, int64_t b, const char* what) {
    IR_CHECK(a < 0 || b < 0 || a == b) << NodeDesc(attrs) << ": " << what << " differ (" << a << " vs " << b
                                       << "); got " << Shapes(*in, 3);
    return std::max(a, b);
  };
  std::vector<int64_t> batch(nd - 2);
  for (int i = 0; i < nd - 2; ++i) batch[i] = merge(merge(q[i], k[i], "batch dims"), v[i], "batch dims");
  int64_t d = merge(q[nd - 1], k[nd - 1], "the depths of q and k (last dims)");
  int64_t s = merge(k[nd - 2], v[nd - 2], "the key counts of k and v (dims -2)");
  std::vector<int64_t> qd = batch, kd = batch, vd = batch, od = batch, ld = batch;
  qd.insert(qd.end(), {q[nd - 2], d});
  kd.insert(kd.end(), {s, d});
  vd.insert(vd.end(), {s, v[nd - 1]});
  od.insert(od.end(), {q[nd - 2], v[nd - 1]});
  ld.push_back(q[nd - 2]);
  AssignShape(attrs, "input 0 (q)", &q, Shape(qd));
  AssignShape(attrs, "input 1 (k)", &k, Shape(kd));
  AssignShape(attrs, "input 2 (v)", &v, Shape(vd));
  AssignShape(attrs, "output 0 (o)", o, Shape(od));
  AssignShape(attrs, "output 1 (lse)", lse, Shape(ld));
  return true;
}

bool ForwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  if (!AttentionShapes(attrs, in, &(*out)[0], &(*out)[1])) return false;
  return AllKnown(*in, *out);
}

/*! \brief fused_attention_grad (do, q, k, v, o, lse) -> (dq, dk, dv). */
bool BackwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  std::vector<Shape> qkv{(*in)[1], (*in)[2], (*in)[3]};
  Shape o = (*in)[4], lse = (*in)[5];
  IR_CHECK(!(*in)[0].rank_known() || !o.rank_known() || (*in)[0].ndim() == o.ndim())
      << NodeDesc(attrs) << ": do " << (*in)[0].ToString() << " and o " << o.ToString() << " differ in rank";
  if (!AttentionShapes(attrs, &qkv, &o, &lse)) return false;
  AssignShape(attrs, "input 0 (do)", &(*in)[0], o);
  AssignShape(attrs, "input 4 (o)", &(*in)[4], o);
  AssignShape(attrs, "input 5 (lse)", &(*in)[5], lse);
  for (int i = 0; i < 3; ++i) {
    (*in)[i + 1] = qkv[i];
    AssignShape(attrs, StrCat("output ", i), &(*out)[i], qkv[i]);
  }
  return AllKnown(*in, *out);
}

/*! \brief Every input and output has one float dtype; a mismatch names them all. */
bool AttentionType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = DType::kUnknown;
  std::string all;
  for (size_t i = 0; i < in->size(); ++i) {
    all += StrCat(i ? ", " : "", "input ", i, " ", DTypeName((*in)[i]));
  }
  for (DType t : *in) {
    IR_CHECK(t == DType::kUnknown || dtype == DType::kUnknown || t == dtype)
        << NodeDesc(attrs) << ": every input must have one dtype; got " << all;
    if (t != DType::kUnknown) dtype = t;
  }
  for (size_t i = 0; i < out->size(); ++i) AssignType(attrs, StrCat("output ", i), &dtype, (*out)[i]);
  CheckDType(attrs, "q", dtype, FloatTypes());
  for (DType& t : *in) t = dtype;
  for (DType& t : *out) t = dtype;
  return AllKnown(*in, *out);
}

/*! \brief _fused_attention_dv (do [..., T, E], q [..., T, D], k [..., S, D]) -> dv [..., S, E]. */
bool DvShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  const Shape &g = (*in)[0], &q = (*in)[1], &k = (*in)[2];
  if (!g.rank_known() || !q.rank_known() || !k.rank_known()) return false;
  IR_CHECK(g.ndim() >= 2 && g.ndim() == q.ndim() && q.ndim() == k.ndim())
      << NodeDesc(attrs) << ": do, q and k must have one rank >= 2; got do " << g.ToString() << ", q " << q.ToString()
      << ", k " << k.ToString();
  const int nd = q.ndim();
  std::vector<int64_t> dv(k.dims().begin(), k.dims().end() - 1);
  dv.push_back(g[nd - 1]);
  AssignShape(attrs, "output 0 (dv)", &(*out)[0], Shape(dv));
  return AllKnown(*in, *out);
}

// ---------------------------------------------------------------- gradient

std::vector<NodeEntry> ForwardGradient(const NodePtr& n, const std::vector<NodeEntry>& og) {
  IR_CHECK(nn::IsZeroGradient(og[1])) << NodeDesc(n->attrs)
                                      << ": the gradient through output 1 (lse) is not supported; only o's";
  NodeEntry grad = GradNode("fused_attention_grad", n, "grad",
                            {og[0], In(n, 0), In(n, 1), In(n, 2), Out(n, 0), Out(n, 1)}, n->attrs.dict);
  return {NodeEntry{grad.node, 0}, NodeEntry{grad.node, 1}, NodeEntry{grad.node, 2}};
}

/*!
 * \brief _fused_attention_dv(do, q, k) is fused_attention_grad(do, q, k, v, o, lse).2 with the same
 * scale and mask: the attention rules build both, and the backward then computes dv in the pass over
 * the key tiles that gives dq and dk (with_dv=true) instead of recomputing the probabilities again.
 */
bool DvSubsumedBy(const Node& self, const Node& sibling, NodeAttrs* widened, uint32_t* output) {
  static const Op* grad_op = Op::Get("fused_attention_grad");
  if (sibling.op() != grad_op || sibling.inputs.size() != 6 || self.inputs.size() != 3) return false;
  for (size_t i = 0; i < 3; ++i) {
    if (self.inputs[i] != sibling.inputs[i]) return false;
  }
  const AttentionParam& a = dmlc::get<AttentionParam>(self.attrs.parsed);
  const AttentionParam& b = dmlc::get<AttentionParam>(sibling.attrs.parsed);
  if (a.scale != b.scale || a.causal != b.causal || a.mask_form != b.mask_form || a.mask_value != b.mask_value) {
    return false;
  }
  *widened = sibling.attrs;
  widened->dict["with_dv"] = "true";
  ParseAttention(widened);
  *output = 2;
  return true;
}

}  // namespace

Problem MakeProblem(const NodeAttrs& attrs, const Shape& q, const Shape& v) {
  const AttentionParam& p = dmlc::get<AttentionParam>(attrs.parsed);
  const int nd = q.ndim();
  Problem g;
  g.batch = q.ProdDims(0, nd - 2);
  g.t = q[nd - 2];
  g.d = q[nd - 1];
  g.s = v[nd - 2];
  g.e = v[nd - 1];
  g.scale = p.scale;
  g.causal = p.causal;
  g.mask_value = p.mask_value;
  g.mask_form = p.mask_form;
  g.with_dv = p.with_dv;
  g.offset = g.s - g.t;
  return g;
}

IR_REGISTER_OP(fused_attention)
    .describe(
        "softmax(q k^T * scale [+ causal mask]) v over the last two axes of q [..., T, D], k [..., S, D], "
        "v [..., S, E] (equal leading dims) in one tiled kernel that never stores the T x S scores (FlashAttention). "
        "Outputs o [..., T, E] and the rows' log-sum-exp lse [..., T], which the gradient reads. causal: row i "
        "attends keys j <= i + S - T.")
    .set_num_inputs(3)
    .set_num_outputs(2)
    .set_input_names({"q", "k", "v"})
    .set_param<AttentionParam>()
    .set_attr_parser(ParseAttention)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"o", "lse"};
                                })
    .set_attr<FInferShape>("FInferShape", ForwardShape)
    .set_attr<FInferType>("FInferType", AttentionType)
    .set_attr<FCompute>("FCompute", ForwardCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", ForwardDevice)
    .set_attr<FGradient>("FGradient", ForwardGradient)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(fused_attention_grad)
    .describe(
        "Gradient of fused_attention: (do, q, k, v, o, lse) -> (dq, dk, dv), recomputing each tile's scores from "
        "q, k and lse (FlashAttention-2: D = rowsum(do * o), dS = P * (dP - D)).")
    .set_num_inputs(6)
    .set_num_outputs(3)
    .set_input_names({"do", "q", "k", "v", "o", "lse"})
    .set_param<AttentionParam>()
    .set_attr_parser(ParseAttention)
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs&) {
                                  return std::vector<std::string>{"dq", "dk", "dv"};
                                })
    .set_attr<FInferShape>("FInferShape", BackwardShape)
    .set_attr<FInferType>("FInferType", AttentionType)
    .set_attr<FCompute>("FCompute", BackwardCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", BackwardDevice)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

IR_REGISTER_OP(_fused_attention_dv)
    .describe(
        "v's gradient alone of fused_attention(q, k, v): (do, q, k) -> dv = P^T do, recomputing P (and the rows' "
        "log-sum-exps) from q and k. The attention rules build it for the gradient tf.gradients writes for v, "
        "which reads no v; the other two gradients come from fused_attention_grad.")
    .set_num_inputs(3)
    .set_input_names({"do", "q", "k"})
    .set_param<AttentionParam>()
    .set_attr_parser(ParseAttention)
    .set_attr<FInferShape>("FInferShape", DvShape)
    .set_attr<FInferType>("FInferType", AttentionType)
    .set_attr<FCompute>("FCompute", DvCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", DvDevice)
    .set_attr<FSubsumedBy>("FSubsumedBy", DvSubsumedBy)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace attention
}  // namespace op
}  // namespace ir
