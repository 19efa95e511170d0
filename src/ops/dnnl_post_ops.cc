/*!
 * \file dnnl_post_ops.cc
 * \brief Recognising an epilogue expression as oneDNN post-ops, step by step from in0 outwards.
 *
 * The expressions are those the ops' FCodeGen writes: relu is select(x > 0, x, 0), sigmoid
 * 1 / (1 + exp(-x)), scalar ops are binaries with a constant; anything else is refused and
 * the epilogue runs as a generated kernel instead.
 */
#include "ops/dnnl_post_ops.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace ir {
namespace op {
namespace dnnl_utils {
namespace {

using ast::Expr;
using ast::ExprKind;

bool IsConst(const Expr& e, double value) { return e->kind == ExprKind::kConst && e->value == value; }

// True when in0 occurs in `e`.
bool ReadsResult(const Expr& e) {
  if (e->kind == ExprKind::kVar) return e->name == "in0";
  for (const Expr& arg : e->args) {
    if (ReadsResult(arg)) return true;
  }
  return false;
}

bool Same(const Expr& a, const Expr& b) { return a == b || ast::ToString(a) == ast::ToString(b); }

}  // namespace

bool PostOps::Translate(const Expr& epilogue, const std::vector<NDArray>& extra, const Shape& out,
                        const std::vector<int>& order) {
  extra_ = &extra;
  out_ = out;
  order_ = order;
  steps_.clear();
  return epilogue->dtype == DType::kFloat32 && Chain(epilogue) && !steps_.empty();
}

bool PostOps::Eltwise(const Expr& x, dnnl::algorithm algorithm, float alpha, float beta) {
  if (!Chain(x)) return false;
  // a (b x + c) + d is one linear step.
  bool linear = algorithm == dnnl::algorithm::eltwise_linear;
  if (linear && !steps_.empty() && !steps_.back().binary && steps_.back().algorithm == algorithm) {
    Step& last = steps_.back();
    last.beta = alpha * last.beta + beta;
    last.alpha = alpha * last.alpha;
    return true;
  }
  // oneDNN 2.6's x64 matmul ran a second, separate linear step with the first one's constants.
  if (linear && std::any_of(steps_.begin(), steps_.end(), [&](const Step& s) { return s.algorithm == algorithm; })) {
    return false;
  }
  Step step;
  step.algorithm = algorithm;
  step.alpha = alpha;
  step.beta = beta;
  steps_.push_back(step);
  return true;
}

bool PostOps::Binary(const Expr& x, const Expr& operand, dnnl::algorithm algorithm) {
  if (operand->kind != ExprKind::kVar || operand->dtype != DType::kFloat32 || operand->name.rfind("in", 0) != 0) {
    return false;
  }
  int k = 0;
  std::from_chars(operand->name.data() + 2, operand->name.data() + operand->name.size(), k);
  if (k < 1 || static_cast<size_t>(k) > extra_->size() || !Chain(x)) return false;
  const NDArray& array = (*extra_)[k - 1];
  int nd = out_.ndim(), offset = nd - array.shape().ndim();
  if (offset < 0 || array.dtype() != DType::kFloat32 || static_cast<int>(order_.size()) != nd) return false;
  // The operand's dims over out's axes (1 where it broadcasts), row-major, then reordered.
  std::vector<int64_t> dims(nd, 1), strides(nd, 1), logical_dims, logical_strides;
  for (int d = offset; d < nd; ++d) {
    dims[d] = array.shape()[d - offset];
    if (dims[d] != 1 && dims[d] != out_[d]) return false;
  }
  for (int d = nd - 2; d >= 0; --d) strides[d] = strides[d + 1] * dims[d + 1];
  for (int axis : order_) {
    logical_dims.push_back(dims[axis]);
    logical_strides.push_back(strides[axis]);
  }
  Step step;
  step.binary = true;
  step.algorithm = algorithm;
  step.operand = Desc(logical_dims, DType::kFloat32, logical_strides);
  step.data = array.data<float>();
  steps_.push_back(step);
  return true;
}

bool PostOps::Chain(const Expr& e) {
  using A = dnnl::algorithm;
  const auto& args = e->args;
  switch (e->kind) {
    case ExprKind::kVar:
      return e->name == "in0";
    case ExprKind::kSelect:  // relu: select(x > 0, x, 0)
      if (args[0]->kind == ExprKind::kBinary && args[0]->name == ">" && IsConst(args[0]->args[1], 0) &&
          IsConst(args[2], 0) && Same(args[0]->args[0], args[1])) {
        return Eltwise(args[1], A::eltwise_relu);
      }
      return false;
    case ExprKind::kCall:
      if (e->name == "tanh") return Eltwise(args[0], A::eltwise_tanh);
      if (e->name == "exp") return Eltwise(args[0], A::eltwise_exp);
      return false;
    case ExprKind::kBinary:
      break;
    default:
      return false;
  }
  // Sigmoid: 1 / (1 + exp(-x)).
  const Expr &a = args[0], &b = args[1];
  if (e->name == "/" && IsConst(a, 1) && b->kind == ExprKind::kBinary && b->name == "+" && IsConst(b->args[0], 1) &&
      b->args[1]->kind == ExprKind::kCall && b->args[1]->name == "exp" &&
      b->args[1]->args[0]->kind == ExprKind::kUnary && b->args[1]->args[0]->name == "-") {
    return Eltwise(b->args[1]->args[0]->args[0], A::eltwise_logistic);
  }
  bool left = ReadsResult(a), right = ReadsResult(b);
  if (left == right) return false;
  const Expr &x = left ? a : b, &other = left ? b : a;
  float c = static_cast<float>(other->value);
  bool constant = other->kind == ExprKind::kConst;
  if (e->name == "+") return constant ? Eltwise(x, A::eltwise_linear, 1, c) : Binary(x, other, A::binary_add);
  if (e->name == "*") return constant ? Eltwise(x, A::eltwise_linear, c, 0) : Binary(x, other, A::binary_mul);
  if (e->name == "-" && left) return constant ? Eltwise(x, A::eltwise_linear, 1, -c) : Binary(x, other, A::binary_sub);
  if (e->name == "-" && constant) return Eltwise(x, A::eltwise_linear, -1, c);
  if (e->name == "/" && left && constant && c != 0) return Eltwise(x, A::eltwise_linear, 1 / c, 0);
  return false;
}

bool PostOps::HasBinary() const {
  return std::any_of(steps_.begin(), steps_.end(), [](const Step& s) { return s.binary; });
}

dnnl::primitive_attr PostOps::Attr() const {
  dnnl::primitive_attr attr = DefaultAttr();
  dnnl::post_ops ops;
  for (const Step& step : steps_) {
    if (step.binary) {
      ops.append_binary(step.algorithm, step.operand);
    } else {
      ops.append_eltwise(1.0f, step.algorithm, step.alpha, step.beta);
    }
  }
  attr.set_post_ops(ops);
  return attr;
}

void PostOps::AddTo(PrimitiveKey* key) const {
  auto bits = [](float value) {
    uint32_t word = 0;
    std::memcpy(&word, &value, sizeof(word));
    return static_cast<int64_t>(word);
  };
  for (const Step& step : steps_) {
    key->Add(step.binary).Add(static_cast<int64_t>(step.algorithm));
    if (step.binary) {
      const auto& blocking = step.operand.data.format_desc.blocking;
      key->Add(step.operand.dims())
          .Add(std::vector<int64_t>(blocking.strides, blocking.strides + step.operand.data.ndims));
    } else {
      key->Add(bits(step.alpha)).Add(bits(step.beta));
    }
  }
}

void PostOps::AddArgs(std::unordered_map<int, dnnl::memory>* args) const {
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (!steps_[i].binary) continue;
    (*args)[DNNL_ARG_ATTR_MULTIPLE_POST_OP(static_cast<int>(i)) | DNNL_ARG_SRC_1] =
        Memory(steps_[i].operand, steps_[i].data);
  }
}

}  // namespace dnnl_utils
}  // namespace op
}  // namespace ir
