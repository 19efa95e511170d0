/*!
 * \file rewrite_attention_guards.cc
 * \brief The guards and attribute functions of the attention rules
 * (rewrite_attention_rules.cc): that q, k, v have the shapes fused attention takes, that a constant is
 * TensorFlow's causal mask (matrix_band_part(ones([T, S]), -1, 0) with the lower triangle moved
 * by S - T) or an additive fill that is 0 on it and one value off it, and which value that is.
 *
 * A mask or fill is a value the program computes from constants (tf.matrix_band_part,
 * 1 - mask, -1e9 * ...): the guards evaluate it with the FoldConstants pass on the subgraph that
 * computes it (a subgraph that reads any variable or stateful op is not a constant: the guard
 * fails), and cache the value per node.
 */
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "ir/fold_constants.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ir/pipeline.h"
#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

using Args = std::vector<std::string>;

/*! \brief The largest constant the guards evaluate (a [4096, 4096] float32 mask). */
constexpr int kMaxMaskBytes = 64 << 20;

const Value* Bound(const Bindings& b, const std::string& name) {
  auto it = b.values.find(name);
  return it == b.values.end() || it->second.entry.node == nullptr ? nullptr : &it->second;
}

/*! \brief Whether `e` is computed from constants only (no variable, no stateful op), within `budget` nodes. */
bool ConstantOnly(const NodeEntry& e, std::unordered_set<const Node*>* seen, int* budget) {
  const Node* n = e.node.get();
  if (!seen->insert(n).second) return true;
  if (n->is_variable() || --*budget < 0 || !n->control_deps.empty()) return false;
  static const auto* stateful = Op::FindAttr<TIsStateful>("TIsStateful");
  if (stateful != nullptr && stateful->get(n->op(), false)) return false;
  for (const NodeEntry& in : n->inputs) {
    if (!ConstantOnly(in, seen, budget)) return false;
  }
  return true;
}

/*! \brief The value of a constant-only entry as float64 values with its shape; false when it is none. */
bool Evaluate(const NodeEntry& e, std::vector<double>* values, Shape* shape) {
  static std::mutex mu;
  struct Cached {
    std::weak_ptr<Node> node;
    uint32_t index;
    bool ok;
    std::vector<double> values;
    Shape shape;
  };
  static std::map<const Node*, Cached> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(e.node.get());
    if (it != cache.end() && it->second.node.lock() == e.node && it->second.index == e.index) {
      *values = it->second.values;
      *shape = it->second.shape;
      return it->second.ok;
    }
  }
  std::unordered_set<const Node*> seen;
  int budget = 64;
  bool ok = false;
  if (ConstantOnly(e, &seen, &budget)) {
    try {
      Graph g;
      g.outputs = {e};
      g.SetAttr("fold_constants.max_bytes", kMaxMaskBytes);
      g = ApplyPasses(std::move(g), Pipeline("fold_constants").Passes());
      const NodeEntry& out = g.outputs[0];
      NDArray value = out.index == 0 ? ConstantNodeValue(*out.node) : NDArray();
      if (value.defined() && value.shape().is_known()) {
        *shape = value.shape();
        ok = true;
        switch (value.dtype()) {
          case DType::kFloat32: {
            std::vector<float> v = value.ToVector<float>();
            values->assign(v.begin(), v.end());
            break;
          }
          case DType::kFloat64:
            *values = value.ToVector<double>();
            break;
          case DType::kBool: {
            std::vector<bool> v = value.ToVector<bool>();
            values->assign(v.begin(), v.end());
            break;
          }
          default:
            ok = false;
        }
      }
    } catch (const Error&) {
      ok = false;
    }
  }
  if (!ok) values->clear();
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() > 256) cache.clear();
  cache[e.node.get()] = Cached{e.node, e.index, ok, *values, *shape};
  return ok;
}

/*! \brief T, S and the batch dims of q [..., T, D], k [..., S, D] (shapes known, same rank >= 2). */
bool QueryKeyDims(const Bindings& b, const std::string& q, const std::string& k, std::vector<int64_t>* dims) {
  const Value *vq = Bound(b, q), *vk = Bound(b, k);
  if (!vq || !vk || !vq->shape.is_known() || !vk->shape.is_known()) return false;
  const int nd = vq->shape.ndim();
  if (nd < 2 || vk->shape.ndim() != nd) return false;
  *dims = std::vector<int64_t>(vq->shape.dims().begin(), vq->shape.dims().end() - 1);
  dims->push_back(vk->shape[nd - 2]);
  return true;
}

/*!
 * \brief Whether a constant of `shape` broadcasts to [..., T, S] as a [T, S] plane repeated
 * (rank <= that of `target`, leading dims 1, the last two exactly T and S).
 */
bool IsPlane(const Shape& shape, const std::vector<int64_t>& target) {
  const int nd = shape.ndim(), td = static_cast<int>(target.size());
  if (nd < 2 || nd > td) return false;
  for (int i = 0; i < nd - 2; ++i) {
    if (shape[i] != 1) return false;
  }
  return shape[nd - 2] == target[td - 2] && shape[nd - 1] == target[td - 1];
}

/*! \brief Whether (i, j) of a [T, S] plane is attended (causal: j <= i + S - T). */
bool Attended(int64_t i, int64_t j, int64_t t, int64_t s) { return j <= i + s - t; }

/*! \brief The bound constant `name` as a [T, S] plane of q, k's scores; false when it is none. */
bool Plane(const Bindings& b, const Args& args, std::vector<double>* values, int64_t* t, int64_t* s) {
  std::vector<int64_t> dims;
  const Value* m = Bound(b, args[0]);
  Shape shape;
  if (!m || !QueryKeyDims(b, args[1], args[2], &dims) || !Evaluate(m->entry, values, &shape)) return false;
  if (!IsPlane(shape, dims)) return false;
  *t = dims[dims.size() - 2];
  *s = dims.back();
  return true;
}

/*! \brief The one value of the masked part of an additive fill that is 0 where attended; false when none. */
bool MaskedFill(const Bindings& b, const Args& args, double* fill) {
  std::vector<double> v;
  int64_t t = 0, s = 0;
  if (!Plane(b, args, &v, &t, &s)) return false;
  bool any = false;
  for (int64_t i = 0; i < t; ++i) {
    for (int64_t j = 0; j < s; ++j) {
      const double x = v[i * s + j];
      if (Attended(i, j, t, s)) {
        if (x != 0) return false;
      } else if (!any) {
        if (!std::isfinite(x) || x == 0) return false;
        *fill = x;
        any = true;
      } else if (x != *fill) {
        return false;
      }
    }
  }
  return any;
}

/*! \brief The value every element of `e` has, by its producers (ones_like(s) * -1e9, fill...); false when unknown. */
bool SplatOf(const NodeEntry& e, double* v, int depth) {
  const Node& n = *e.node;
  if (n.is_variable() || depth > 8 || e.index != 0) return false;
  const std::string& op = n.op()->name;
  auto number = [&](const char* key, double* out) {
    auto it = n.attrs.dict.find(key);
    if (it == n.attrs.dict.end()) return false;
    char* end = nullptr;
    *out = std::strtod(it->second.c_str(), &end);
    return end != it->second.c_str() && *end == '\0';
  };
  if (op == "ones" || op == "ones_like") return *v = 1, true;
  if (op == "zeros" || op == "zeros_like") return *v = 0, true;
  if (op == "fill") return number("value", v);
  if (op == "broadcast_to" || op == "broadcast_like" || op == "identity" || op == "reshape" || op == "expand_dims") {
    return SplatOf(n.inputs[0], v, depth + 1);
  }
  if (op == "multiply_scalar" || op == "negative") {
    double x = 0, c = -1;
    if (!SplatOf(n.inputs[0], &x, depth + 1) || (op == "multiply_scalar" && !number("scalar", &c))) return false;
    *v = static_cast<double>(static_cast<float>(x) * static_cast<float>(c));
    return true;
  }
  if (op == "constant") {
    std::vector<double> values;
    Shape shape;
    if (!Evaluate(e, &values, &shape) || values.empty()) return false;
    for (double x : values) {
      if (x != values[0]) return false;
    }
    *v = values[0];
    return true;
  }
  return false;
}

std::string Format(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

int RegisterAttentionGuards() {
  RegisterGuard("attention_operands", 3,
                "q [..., T, D], k [..., S, D], v [..., S, E]: known shapes of one rank, equal leading dims, one float "
                "dtype (what fused_attention takes)",
                [](const Bindings& b, const Args& args) {
                  const Value *q = Bound(b, args[0]), *k = Bound(b, args[1]), *v = Bound(b, args[2]);
                  if (!q || !k || !v) return false;
                  if (!q->shape.is_known() || !k->shape.is_known() || !v->shape.is_known()) return false;
                  const int nd = q->shape.ndim();
                  if (nd < 2 || k->shape.ndim() != nd || v->shape.ndim() != nd) return false;
                  if (q->dtype != k->dtype || q->dtype != v->dtype) return false;
                  if (q->dtype != DType::kFloat32 && q->dtype != DType::kFloat64) return false;
                  for (int i = 0; i < nd - 2; ++i) {
                    if (q->shape[i] != k->shape[i] || q->shape[i] != v->shape[i]) return false;
                  }
                  return q->shape[nd - 1] == k->shape[nd - 1] && k->shape[nd - 2] == v->shape[nd - 2];
                });
  RegisterGuard("attention_grad_of", 4, "g is shaped as fused_attention(q, k, v)'s output [..., T, E]",
                [](const Bindings& b, const Args& args) {
                  const Value *q = Bound(b, args[0]), *v = Bound(b, args[2]), *g = Bound(b, args[3]);
                  if (!q || !v || !g || !q->shape.is_known() || !g->shape.is_known()) return false;
                  const int nd = q->shape.ndim();
                  if (g->shape.ndim() != nd || g->dtype != q->dtype || v->shape.ndim() != nd) return false;
                  std::vector<int64_t> want(q->shape.dims().begin(), q->shape.dims().end() - 1);
                  want.push_back(v->shape[nd - 1]);
                  return g->shape.dims() == want;
                });
  RegisterGuard("attention_dv_of", 3,
                "q [..., T, D], k [..., S, D], g [..., T, E]: known shapes of one rank, equal leading dims, one float "
                "dtype (what _fused_attention_dv takes)",
                [](const Bindings& b, const Args& args) {
                  const Value *q = Bound(b, args[0]), *k = Bound(b, args[1]), *g = Bound(b, args[2]);
                  if (!q || !k || !g || !q->shape.is_known() || !k->shape.is_known() || !g->shape.is_known()) {
                    return false;
                  }
                  const int nd = q->shape.ndim();
                  if (nd < 2 || k->shape.ndim() != nd || g->shape.ndim() != nd) return false;
                  if (q->dtype != k->dtype || q->dtype != g->dtype) return false;
                  if (q->dtype != DType::kFloat32 && q->dtype != DType::kFloat64) return false;
                  for (int i = 0; i < nd - 2; ++i) {
                    if (q->shape[i] != k->shape[i] || q->shape[i] != g->shape[i]) return false;
                  }
                  return q->shape[nd - 1] == k->shape[nd - 1] && q->shape[nd - 2] == g->shape[nd - 2];
                });
  RegisterGuard("causal_mask", 3,
                "m is a constant 0/1 (or bool) [T, S] plane (leading dims 1) of q, k's scores: 1 exactly where key "
                "j <= i + S - T (matrix_band_part(ones, -1, 0) when T == S)",
                [](const Bindings& b, const Args& args) {
                  std::vector<double> v;
                  int64_t t = 0, s = 0;
                  if (!Plane(b, args, &v, &t, &s)) return false;
                  for (int64_t i = 0; i < t; ++i) {
                    for (int64_t j = 0; j < s; ++j) {
                      if (v[i * s + j] != (Attended(i, j, t, s) ? 1.0 : 0.0)) return false;
                    }
                  }
                  return true;
                });
  RegisterGuard("causal_fill", 3,
                "c is a constant [T, S] plane of q, k's scores that is 0 where key j <= i + S - T and one finite "
                "nonzero value elsewhere ((1 - mask) * -1e9)",
                [](const Bindings& b, const Args& args) {
                  double fill = 0;
                  return MaskedFill(b, args, &fill);
                });
  RegisterGuard("splat_fill", 3,
                "every element of f is one finite value (tf.ones_like(s) * -1e9, tf.fill) and f broadcasts into q, "
                "k's scores [..., T, S]",
                [](const Bindings& b, const Args& args) {
                  const Value* f = Bound(b, args[0]);
                  std::vector<int64_t> dims;
                  double v = 0;
                  if (!f || !f->shape.is_known() || !QueryKeyDims(b, args[1], args[2], &dims)) return false;
                  const int nd = f->shape.ndim(), td = static_cast<int>(dims.size());
                  if (nd > td) return false;
                  for (int i = 0; i < nd; ++i) {
                    const int64_t d = f->shape[nd - 1 - i];
                    if (d != 1 && d != dims[td - 1 - i]) return false;
                  }
                  return SplatOf(f->entry, &v, 0) && std::isfinite(v);
                });
  RegisterAttrFunction("masked_fill", 3,
                       "the value of the additive fill c off the causal triangle of q, k's scores (causal_fill)",
                       [](const Bindings& b, const Args& args) {
                         double fill = 0;
                         IR_CHECK(MaskedFill(b, args, &fill)) << "@masked_fill(" << args[0] << "): not a causal fill";
                         return Format(fill);
                       });
  RegisterAttrFunction(
      "neg_masked_fill", 3, "-@masked_fill(c, q, k): for s * mask - c", [](const Bindings& b, const Args& args) {
        double fill = 0;
        IR_CHECK(MaskedFill(b, args, &fill)) << "@neg_masked_fill(" << args[0] << "): not a causal fill";
        return Format(-fill);
      });
  RegisterAttrFunction("splat_value", 1, "the one value of every element of f (splat_fill)",
                       [](const Bindings& b, const Args& args) {
                         const Value* f = Bound(b, args[0]);
                         double v = 0;
                         IR_CHECK(f && SplatOf(f->entry, &v, 0)) << "@splat_value(" << args[0] << "): not a splat";
                         return Format(v);
                       });
  return 0;
}

int registered_attention_guards __attribute__((unused)) = RegisterAttentionGuards();

}  // namespace
}  // namespace rewrite
}  // namespace ir
