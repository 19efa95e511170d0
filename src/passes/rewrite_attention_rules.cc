/*!
 * \file rewrite_attention_rules.cc
 * \brief The rule set "attention": softmax(q k^T * scale [+ causal mask]) v as a TF1 program
 * writes it, and the gradient tf.gradients builds for it, become fused_attention and
 * fused_attention_grad (src/ops/attention/attention.cc), so unchanged programs get the fused kernel.
 *
 * The pattern, per form of the mask (s = tf.matmul(q, k, transpose_b=True) * scale, a
 * multiply_scalar; mask = tf.matrix_band_part(tf.ones([T, S]), -1, 0), a constant after folding;
 * the guards of src/passes/rewrite_attention_guards.cc check its values):
 *  - none:         o = tf.matmul(tf.nn.softmax(s), v)
 *  - multiply:     s * mask - 1e9 * (1 - mask)     (or + -1e9 * (1 - mask))
 *  - add:          s + (1 - mask) * -1e9
 *  - select:       tf.where(mask_bool, s, -1e9 * tf.ones_like(s))
 * each with four rules: o (the forward matmul), and dq, dk, dv (the matmuls of the gradient:
 * dv = p^T do, dq = dS k, dk = dS^T q with dS the softmax gradient through the mask and scale).
 * dv's pattern reads no v, so its replacement is _fused_attention_dv(do, q, k), which needs none.
 * Each replacement builds the same fused_attention(q, k, v) and fused_attention_grad nodes
 * (with_dv=false: no rule takes its dv), which Simplify merges, so a training graph computes the attention once forward
 * and once backward, and the T x S probabilities are no longer kept between the two.
 *
 * Tag rounding: the fused kernel equals the pattern up to rounding (sums in another order, exp
 * of a tile's scores, q * scale before the dot product instead of after) wherever the pattern's
 * masked exp is exactly 0 in float32, which it is for a fill of -1e9 and scores below ~1e8 in
 * magnitude: the tiled kernel runs only where it proves that (src/ops/attention/attention_cpu.cc), and special values
 * (NaN, Inf in q, k, v or do) take the dense path, which computes the pattern's formulas over all
 * keys, masked ones included, so they propagate as in the unfused graph. On by default.
 *
 * Not verified by ir-rules-verify: its op models (tools/rules_verify/op_semantics.cc) do not
 * model fused_attention, nor its guard models these value guards; the rules are checked by the
 * differential tests of tests/ops/attention_test.cc and tests/python/test_attention_fusion.py.
 */
#include <string>

#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

/*! \brief One form of the mask: the scores' pattern around S, the gradient's around D, attributes and guards. */
struct MaskForm {
  const char* name;
  const char* scores;
  const char* grad;
  const char* attrs;
  const char* guards;
};

const MaskForm kForms[] = {
    {"plain", "S", "D", "scale=?c", ""},
    {"causal_multiply", "subtract(multiply(S, m), c)", "multiply(D, m)",
     "scale=?c, causal=true, mask_form=multiply, mask_value=@neg_masked_fill(c, q, k)",
     ", causal_mask(m, q, k), causal_fill(c, q, k)"},
    {"causal_multiply_add", "add(multiply(S, m), c)", "multiply(D, m)",
     "scale=?c, causal=true, mask_form=multiply, mask_value=@masked_fill(c, q, k)",
     ", causal_mask(m, q, k), causal_fill(c, q, k)"},
    {"causal_add", "add(S, c)", "D", "scale=?c, causal=true, mask_form=add, mask_value=@masked_fill(c, q, k)",
     ", causal_fill(c, q, k)"},
    {"causal_select", "where(m, S, f)", "where(m, D, zeros_like(D))",
     "scale=?c, causal=true, mask_form=select, mask_value=@splat_value(f)",
     ", causal_mask(m, q, k), splat_fill(f, q, k)"},
};

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string Rule(const std::string& name, const std::string& match, const std::string& guards,
                 const std::string& rewrite) {
  return "rule " + name + " rounding {\n  match:   " + match + "\n  where:   " + guards + "\n  rewrite: " + rewrite +
         "\n}\n\n";
}

/*! \brief The rule text: four rules per form. */
std::string AttentionRules() {
  const std::string s = "multiply_scalar{scalar=?c}(matmul{transpose_a=0, transpose_b=1}(q, k))";
  const std::string dp = "matmul{transpose_a=0, transpose_b=1}(g, v)";
  std::string text = "commutative: add, multiply\n\n";
  for (const MaskForm& f : kForms) {
    const std::string p = "softmax{axis=?a}(" + Replace(f.scores, "S", s) + ")";
    const std::string d =
        "multiply(" + p + ", subtract(" + dp + ", sum{axis=?b, keepdims=true}(multiply(" + dp + ", " + p + "))))";
    const std::string grad = "multiply_scalar{scalar=?c}(" + Replace(f.grad, "D", d) + ")";
    const std::string fa = std::string("fused_attention{") + f.attrs + "}(q, k, v)";
    // The rules take dq and dk from it, never dv (the dv rule's _fused_attention_dv gives that).
    const std::string fg =
        std::string("fused_attention_grad{") + f.attrs + ", with_dv=false}(g, q, k, v, " + fa + ".0, " + fa + ".1)";
    const std::string fwd_guards = std::string("attention_operands(q, k, v), last_axis(?a, q)") + f.guards;
    const std::string bwd_guards = fwd_guards + ", attention_grad_of(q, k, v, g), last_axis(?b, q)";
    const std::string dv_guards = std::string("last_axis(?a, q)") + f.guards + ", attention_dv_of(q, k, g)";
    const std::string base = std::string("attention_") + f.name;
    text += Rule(base, "matmul{transpose_a=0, transpose_b=0}(" + p + ", v)", fwd_guards, fa + ".0");
    text += Rule(base + "_dv", "matmul{transpose_a=1, transpose_b=0}(" + p + ", g)", dv_guards,
                 std::string("_fused_attention_dv{") + f.attrs + "}(g, q, k)");
    text += Rule(base + "_dq", "matmul{transpose_a=0, transpose_b=0}(" + grad + ", k)", bwd_guards, fg + ".0");
    text += Rule(base + "_dk", "matmul{transpose_a=1, transpose_b=0}(" + grad + ", q)", bwd_guards, fg + ".1");
  }
  return text;
}

int registered_attention_rules __attribute__((unused)) = [] {
  RegisterRuleText("attention", AttentionRules(), "src/passes/rewrite_attention_rules.cc");
  return 0;
}();

}  // namespace
}  // namespace rewrite
}  // namespace ir
