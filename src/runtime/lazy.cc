/*!
 * \file lazy.cc
 * \brief Lazy arrays: recording with incremental hashes, traces cached by hash, materialization
 * through an Executor (see include/ir/lazy.h).
 */
#include "ir/lazy.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <unordered_map>

#include "ir/node.h"
#include "ir/op.h"
#include "runtime/lazy_internal.h"

namespace ir {
namespace lazy {

/*! \brief Releases long chains of pending nodes iteratively (no recursion depth limit). */
Pending::~Pending() {
  std::vector<ValuePtr> stack = std::move(inputs);
  while (!stack.empty()) {
    ValuePtr value = std::move(stack.back());
    stack.pop_back();
    if (value.use_count() != 1) continue;
    for (std::shared_ptr<Pending>* node : {&value->node, &value->origin}) {
      if (*node && node->use_count() == 1) {
        for (ValuePtr& input : (*node)->inputs) stack.push_back(std::move(input));
      }
    }
  }
}

namespace {

std::shared_ptr<Array::Cell> NewCell(ValuePtr value) {
  auto cell = std::make_shared<Array::Cell>();
  cell->value = std::move(value);
  return cell;
}

ValuePtr LeafValue(NDArray data) {
  IR_CHECK(data.defined()) << "lazy::Array: an undefined NDArray cannot be a leaf";
  auto value = std::make_shared<Array::Value>();
  value->hash = LeafHash(data);
  value->data = std::move(data);
  return value;
}

const ValuePtr& ValueOf(const Array& array) {
  IR_CHECK(array.defined()) << "lazy::Array: use of an undefined array";
  return array.cell()->value;
}

}  // namespace

Array::Array(NDArray value) : cell_(NewCell(LeafValue(std::move(value)))) {}
Array::Array(float scalar) : Array(NDArray::Scalar<float>(scalar)) {}

Array Array::Scalar(double value, DType dtype) {
  NDArray data(Shape::Scalar(), dtype);
  switch (dtype) {
    case DType::kFloat32:
      *data.data<float>() = static_cast<float>(value);
      break;
    case DType::kFloat64:
      *data.data<double>() = value;
      break;
    case DType::kInt32:
      *data.data<int32_t>() = static_cast<int32_t>(value);
      break;
    case DType::kInt64:
      *data.data<int64_t>() = static_cast<int64_t>(value);
      break;
    case DType::kBool:
      *data.data<bool>() = value != 0;
      break;
    default:
      throw Error(StrCat("lazy::Array::Scalar: no scalar of dtype ", DTypeName(dtype)));
  }
  return Array(std::move(data));
}

bool Array::is_pending() const { return defined() && cell_->value->node != nullptr; }

const NDArray& Array::Eval() const {
  Materialize({*this});
  return cell_->value->data;
}

Array& Array::Assign(const Array& value) {
  NDArray result = value.Eval();
  ValuePtr& old = cell_ ? cell_->value : (cell_ = NewCell(nullptr))->value;
  bool reuse = old && !old->node && old->data.shape() == result.shape() && old->data.dtype() == result.dtype();
  if (!reuse) {
    // A buffer of our own: sharing `value`'s would let a later in-place Assign change it too.
    NDArray buffer(result.shape(), result.dtype(), result.device());
    buffer.CopyFrom(result);
    old = LeafValue(std::move(buffer));
    return *this;
  }
  if (old->data.Overlaps(result)) return *this;  // a.Assign(a)
  if (old.use_count() > 1) {
    // Pending nodes recorded before the assignment read the old value: give them a snapshot
    // and keep the buffer (and its holders) with this array.
    auto fresh = std::make_shared<Value>(*old);
    old->data = old->data.CopyTo(old->data.device());
    old = std::move(fresh);
  }
  old->data.CopyFrom(result);
  return *this;
}

Array& Array::operator+=(const Array& rhs) { return Assign(*this + rhs); }
Array& Array::operator-=(const Array& rhs) { return Assign(*this - rhs); }
Array& Array::operator*=(const Array& rhs) { return Assign(*this * rhs); }

std::vector<Array> ApplyN(const std::string& op, const std::vector<Array>& inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs) {
  uint64_t start = NowNs();
  auto node = std::make_shared<Pending>();
  node->op = Op::Get(op);
  node->attrs = attrs;
  uint64_t h = Mix(0x6f70, reinterpret_cast<uintptr_t>(node->op));
  for (const auto& [key, text] : attrs) h = Mix(Mix(h, std::hash<std::string>()(key)), std::hash<std::string>()(text));
  node->inputs.reserve(inputs.size());
  for (const Array& input : inputs) {
    node->inputs.push_back(ValueOf(input));
    h = Mix(h, node->inputs.back()->hash);
  }
  node->hash = h;
  node->num_outputs = num_outputs;
  node->seq = NextRecordSeq();
  Context& context = Context::Current();
  std::vector<Array> outputs;
  outputs.reserve(num_outputs);
  for (uint32_t i = 0; i < num_outputs; ++i) {
    auto value = std::make_shared<Array::Value>();
    value->node = node;
    value->index = i;
    value->hash = Mix(h, i);
    outputs.emplace_back(NewCell(std::move(value)));
    TrackLive(context, outputs.back().cell());
  }
  Stats& stats = context.mutable_stats();
  stats.ops_recorded += 1;
  stats.record_ns += NowNs() - start;
  return outputs;
}

Array Apply(const std::string& op, const std::vector<Array>& inputs, const std::map<std::string, std::string>& attrs) {
  return std::move(ApplyN(op, inputs, attrs, 1)[0]);
}

void AssignAll(const std::vector<Array>& targets, const std::vector<Array>& values) {
  IR_CHECK(targets.size() == values.size()) << "lazy::AssignAll: one value per target";
  Materialize(values);
  for (size_t i = 0; i < targets.size(); ++i) const_cast<Array&>(targets[i]).Assign(values[i]);
}

Array operator+(const Array& lhs, const Array& rhs) { return Apply("add", {lhs, rhs}); }
Array operator-(const Array& lhs, const Array& rhs) { return Apply("subtract", {lhs, rhs}); }
Array operator*(const Array& lhs, const Array& rhs) { return Apply("multiply", {lhs, rhs}); }
Array operator/(const Array& lhs, const Array& rhs) { return Apply("divide", {lhs, rhs}); }
Array operator-(const Array& x) { return Apply("negative", {x}); }
Array exp(const Array& x) { return Apply("exp", {x}); }
Array log(const Array& x) { return Apply("log", {x}); }
Array relu(const Array& x) { return Apply("relu", {x}); }

namespace {
Array Reduce(const std::string& op, const Array& x, const std::vector<int>& axes, bool keepdims) {
  std::map<std::string, std::string> attrs;
  if (!axes.empty()) attrs["axis"] = "[" + Join(axes, ",") + "]";
  if (keepdims) attrs["keepdims"] = "true";
  return Apply(op, {x}, attrs);
}
}  // namespace

Array sum(const Array& x, const std::vector<int>& axes, bool keepdims) { return Reduce("sum", x, axes, keepdims); }
Array mean(const Array& x, const std::vector<int>& axes, bool keepdims) { return Reduce("mean", x, axes, keepdims); }

Array matmul(const Array& a, const Array& b, bool transpose_a, bool transpose_b) {
  std::map<std::string, std::string> attrs;
  if (transpose_a) attrs["transpose_a"] = "true";
  if (transpose_b) attrs["transpose_b"] = "true";
  return Apply("matmul", {a, b}, attrs);
}

}  // namespace lazy
}  // namespace ir
