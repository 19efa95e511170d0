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
#include "runtime/lazy/lazy_internal.h"

namespace ir {
namespace lazy {

/*!
 * \brief Releases long chains of pending nodes iteratively (no recursion depth limit). Under
 * DagMutex: a value this node held last may just have been written by a trace on another thread.
 */
Pending::~Pending() {
  if (inputs.empty()) return;
  DagLock dag(DagMutex());
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

ValuePtr ValueOf(const Array& array, const char* what) {
  IR_CHECK(array.defined()) << what << ": use of an undefined array";
  return array.cell()->value();
}

namespace {

std::shared_ptr<Array::Cell> NewCell(ValuePtr value) { return std::make_shared<Array::Cell>(std::move(value)); }

ValuePtr LeafValue(NDArray data) {
  IR_CHECK(data.defined()) << "lazy::Array: an undefined NDArray cannot be a leaf";
  auto value = std::make_shared<Array::Value>();
  value->hash = LeafHash(data);
  value->data = std::move(data);
  return value;
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

bool Array::is_pending() const {
  if (!defined()) return false;
  ValuePtr value = cell_->value();
  DagLock dag(DagMutex());
  return value->node != nullptr;
}

NDArray DataOf(const Array& array) {
  ValuePtr value = ValueOf(array);
  DagLock dag(DagMutex());
  return value->data;
}

NDArray Array::Eval() const {
  Materialize({*this});
  return DataOf(*this);
}

std::shared_ptr<Pending> RecordNode(Context& context, const Op* op, std::vector<ValuePtr> inputs,
                                    const std::map<std::string, std::string>& attrs, uint32_t num_outputs) {
  auto node = std::make_shared<Pending>();
  node->op = op;
  node->attrs = attrs;
  uint64_t h = Mix(0x6f70, reinterpret_cast<uintptr_t>(op));
  for (const auto& [key, text] : attrs) h = Mix(Mix(h, std::hash<std::string>()(key)), std::hash<std::string>()(text));
  for (const ValuePtr& input : inputs) h = Mix(h, input->hash);
  node->inputs = std::move(inputs);
  node->hash = h;
  node->num_outputs = num_outputs;
  node->seq = NextRecordSeq();
  node->context = ContextId(context);
  return node;
}

namespace {
/*!
 * \brief Every kTimedEvery-th op a thread records in a Context is timed (the first one too), and counted
 * kTimedEvery times in record_ns: reading the clock twice per op cost more than the rest of a record.
 */
constexpr uint64_t kTimedEvery = 16;
thread_local uint64_t ops_on_thread = 0;
thread_local uint64_t context_on_thread = 0;
}  // namespace

std::vector<Array> RecordOp(const Op* op, std::vector<ValuePtr> inputs, const std::map<std::string, std::string>& attrs,
                            uint32_t num_outputs) {
  Context& context = Context::Current();
  uint64_t id = ContextId(context);
  if (id != context_on_thread) {
    context_on_thread = id;
    ops_on_thread = 0;
  }
  bool timed = ops_on_thread++ % kTimedEvery == 0;
  uint64_t start = timed ? NowNs() : 0;
  std::shared_ptr<Pending> node = RecordNode(context, op, std::move(inputs), attrs, num_outputs);
  std::vector<Array> outputs;
  outputs.reserve(num_outputs);
  for (uint32_t i = 0; i < num_outputs; ++i) {
    auto value = std::make_shared<Array::Value>();
    value->node = node;
    value->index = i;
    value->hash = Mix(node->hash, i);
    outputs.emplace_back(NewCell(std::move(value)));
  }
  TrackRecorded(context, outputs, timed ? (NowNs() - start) * kTimedEvery : 0);
  return outputs;
}

std::vector<Array> ApplyN(const std::string& op, const std::vector<Array>& inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs) {
  return ApplyN(Op::Get(op), inputs, attrs, num_outputs);
}

std::vector<Array> ApplyN(const Op* op, const std::vector<Array>& inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs) {
  std::vector<const Array*> pointers;
  pointers.reserve(inputs.size());
  for (const Array& input : inputs) pointers.push_back(&input);
  return ApplyN(op, pointers.data(), pointers.size(), attrs, num_outputs);
}

std::vector<Array> ApplyN(const Op* op, const Array* const* inputs, size_t num_inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs) {
  IR_CHECK(op != nullptr) << "lazy::ApplyN: null op";
  std::vector<ValuePtr> values;
  values.reserve(num_inputs);
  for (size_t i = 0; i < num_inputs; ++i) values.push_back(ValueOf(*inputs[i]));
  return RecordOp(op, std::move(values), attrs, num_outputs);
}

Array Apply(const std::string& op, const std::vector<Array>& inputs, const std::map<std::string, std::string>& attrs) {
  return std::move(ApplyN(op, inputs, attrs, 1)[0]);
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
