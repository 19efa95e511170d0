/*!
 * \file lazy_assign.cc
 * \brief Assignment of lazy arrays: in the trace (assign nodes whose fused kernels write the old
 * buffer in place) when the target qualifies, else by a copy after the trace ran. Assignments
 * to an array are serialized (AssignLocks), so an update (+=) is atomic across threads.
 */
#include <unordered_set>

#include "ir/lazy.h"
#include "runtime/lazy/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief "[2,2] float32": a value's shape and dtype, for errors. */
std::string Signature(const Shape& shape, DType dtype) { return StrCat(shape, " ", DTypeName(dtype)); }

/*!
 * \brief Makes `target` hold `result` (computed): copied into the old buffer when it is a leaf of
 * that shape and dtype (holders of that NDArray see the change), else into a new buffer of its
 * own. The write holds the buffer's exclusive lock: a trace reading it sees the old or the new
 * value, whole.
 */
void AssignByCopy(const Array& target, const NDArray& result) {
  Array::Cell& cell = *target.cell();
  ValuePtr old = cell.value();
  DagLock dag(DagMutex());
  bool reuse = old && !old->node && old->data.shape() == result.shape() && old->data.dtype() == result.dtype();
  if (!reuse) {
    dag.unlock();
    // A buffer of our own: sharing `value`'s would let a later in-place Assign change it too.
    NDArray buffer(result.shape(), result.dtype(), result.device());
    {
      BufferLocks locks({result}, {});
      buffer.CopyFrom(result);
    }
    cell.set_value(Array(std::move(buffer)).cell()->value());
    return;
  }
  if (old->data.Overlaps(result)) return;  // a.Assign(a)
  NDArray buffer = old->data;
  dag.unlock();
  BufferLocks locks({result}, {buffer});
  dag.lock();
  if (old.use_count() > 2) {
    // Pending nodes recorded before the assignment read the old value (the cell and `old` are
    // the other two holders): give them a snapshot and keep the buffer (and its holders) with
    // this array.
    auto fresh = std::make_shared<Array::Value>(*old);
    old->data = buffer.CopyTo(buffer.device());
    cell.set_value(std::move(fresh));
  }
  dag.unlock();
  buffer.CopyFrom(result);
}

/*!
 * \brief Whether targets[i] = values[i] may run in the trace: a materialized target, a pending
 * value, neither shared with another pair (the writes would race), no tape recording (it keeps
 * nodes that read the old value). The trace checks the rest (lazy_trace.cc CanWriteInPlace).
 * Under DagMutex.
 */
bool InTrace(const std::vector<ValuePtr>& targets, const std::vector<ValuePtr>& values, size_t i) {
  if (ActiveTapes() > 0 || !targets[i] || !values[i]) return false;
  const ValuePtr& target = targets[i];
  if (target->node || !target->data.defined() || !values[i]->node) return false;
  for (size_t j = 0; j < targets.size(); ++j) {
    if (j == i) continue;
    if (values[j] == values[i]) return false;
    const ValuePtr& other = targets[j];
    if (other && other->data.defined() && other->data.Overlaps(target->data)) return false;
  }
  return true;
}

/*! \brief The shape and dtype of the array: a leaf's, else inferred (ShapeOf). */
std::pair<Shape, DType> SignatureOf(const Array& array) { return {ShapeOf(array), DTypeOf(array)}; }

/*!
 * \brief Throws ir::Error unless each defined target of `indices` has the shape and dtype of its
 * value (an assignment keeps them, as tf.Variable.assign does). Called before anything is written.
 */
void CheckSignatures(const std::vector<Array>& targets, const std::vector<Array>& values,
                     const std::vector<size_t>& indices) {
  for (size_t i : indices) {
    if (!targets[i].defined() || !targets[i].cell()->value()) continue;
    auto [shape, dtype] = SignatureOf(targets[i]);
    auto [value_shape, value_dtype] = SignatureOf(values[i]);
    IR_CHECK(value_shape == shape && value_dtype == dtype)
        << "lazy::Assign: target " << i << " is " << Signature(shape, dtype) << " but its value is "
        << Signature(value_shape, value_dtype) << ": an assignment keeps the array's shape and dtype";
  }
}

/*! \brief The op that combines a target with the given value in an update. */
const char* UpdateOp(Update update) {
  switch (update) {
    case Update::kAdd:
      return "add";
    case Update::kSubtract:
      return "subtract";
    case Update::kMultiply:
      return "multiply";
    case Update::kAssign:
      break;
  }
  return nullptr;
}

}  // namespace

void AssignAll(const std::vector<Array>& targets, const std::vector<Array>& given, Update update) {
  IR_CHECK(targets.size() == given.size()) << "lazy::AssignAll: one value per target";
  static const Op* assign = Op::Get("assign");
  AssignLocks assignment(targets);  // an update reads and writes its target with no other assignment between
  std::vector<Array> values = given;
  for (size_t i = 0; update != Update::kAssign && i < values.size(); ++i) {
    IR_CHECK(targets[i].defined()) << "lazy::AssignAll: target " << i << " of an update is an undefined array";
    values[i] = Apply(UpdateOp(update), {targets[i], given[i]});
  }
  std::vector<size_t> in_trace, by_copy;
  std::vector<ValuePtr> assigns;
  std::vector<ValuePtr> requested;
  std::unordered_set<const Array::Value*> skip;  // computed into the targets, not as outputs
  {
    std::vector<ValuePtr> old(targets.size()), fresh(values.size());
    for (size_t i = 0; i < targets.size(); ++i) {
      if (targets[i].defined()) old[i] = targets[i].cell()->value();
      if (values[i].defined()) fresh[i] = values[i].cell()->value();
    }
    Context& context = Context::Current();
    DagLock dag(DagMutex());
    for (size_t i = 0; i < targets.size(); ++i) {
      if (InTrace(old, fresh, i)) {
        auto out = std::make_shared<Array::Value>();
        out->node = RecordNode(context, assign, {old[i], fresh[i]}, {}, 1);
        out->hash = Mix(out->node->hash, 0);
        assigns.push_back(std::move(out));
        skip.insert(fresh[i].get());
        in_trace.push_back(i);
      } else {
        IR_CHECK(fresh[i] != nullptr) << "lazy::AssignAll: value " << i << " is an undefined array";
        requested.push_back(fresh[i]);
        by_copy.push_back(i);
      }
    }
  }  // (the targets' values are held by their cells and assign nodes only: CanWriteInPlace counts them)
  CheckSignatures(targets, values, by_copy);  // (the in-trace ones: CanWriteInPlace, on a miss)
  bool in_place = !assigns.empty() && MaterializeAssigning(requested, assigns, skip);
  if (!in_place) {
    assigns.clear();  // releases the old values: a copy snapshots them only if others still read them
    in_trace.clear();
    by_copy.clear();
    for (size_t i = 0; i < targets.size(); ++i) by_copy.push_back(i);
    requested.clear();
    std::vector<Array> copied;
    for (size_t i : by_copy) copied.push_back(values[i]);
    CheckSignatures(targets, values, by_copy);
    Materialize(copied);
  }
  // The value is the target's new value: it shares the written buffer (as tf.Variable.assign
  // returns the variable); a later in-place assignment snapshots it since it is then shared.
  for (size_t i : in_trace) values[i].cell()->set_value(targets[i].cell()->value());
  for (size_t i : by_copy) {
    Array& target = const_cast<Array&>(targets[i]);
    if (!target.defined()) target = Array(std::make_shared<Array::Cell>());
    AssignByCopy(target, DataOf(values[i]));
  }
}

NDArray ReadValue(const Array& array) {
  NDArray value = array.Eval();
  BufferLocks locks({value}, {});
  return value.CopyTo(value.device());
}

Array& Array::Assign(const Array& value) {
  if (!cell_) cell_ = std::make_shared<Cell>();
  AssignAll({*this}, {value});
  return *this;
}

Array& Array::operator+=(const Array& rhs) {
  AssignAll({*this}, {rhs}, Update::kAdd);
  return *this;
}
Array& Array::operator-=(const Array& rhs) {
  AssignAll({*this}, {rhs}, Update::kSubtract);
  return *this;
}
Array& Array::operator*=(const Array& rhs) {
  AssignAll({*this}, {rhs}, Update::kMultiply);
  return *this;
}

}  // namespace lazy
}  // namespace ir
