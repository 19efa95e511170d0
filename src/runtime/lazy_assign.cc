/*!
 * \file lazy_assign.cc
 * \brief Assignment of lazy arrays: in the trace (assign nodes whose fused kernels write the old
 * buffer in place) when the target qualifies, else by a copy after the trace ran.
 */
#include <unordered_set>

#include "ir/lazy.h"
#include "runtime/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

/*!
 * \brief Makes `target` hold `result` (computed): copied into the old buffer when shape and dtype
 * match (holders of that NDArray see the change), else into a new buffer of its own.
 */
void AssignByCopy(Array& target, const NDArray& result) {
  ValuePtr& old = target.cell()->value;
  bool reuse = old && !old->node && old->data.shape() == result.shape() && old->data.dtype() == result.dtype();
  if (!reuse) {
    // A buffer of our own: sharing `value`'s would let a later in-place Assign change it too.
    NDArray buffer(result.shape(), result.dtype(), result.device());
    buffer.CopyFrom(result);
    old = Array(std::move(buffer)).cell()->value;
    return;
  }
  if (old->data.Overlaps(result)) return;  // a.Assign(a)
  if (old.use_count() > 1) {
    // Pending nodes recorded before the assignment read the old value: give them a snapshot
    // and keep the buffer (and its holders) with this array.
    auto fresh = std::make_shared<Array::Value>(*old);
    old->data = old->data.CopyTo(old->data.device());
    old = std::move(fresh);
  }
  old->data.CopyFrom(result);
}

/*!
 * \brief Whether targets[i] = values[i] may run in the trace: a materialized target, a pending
 * value, neither shared with another pair (the writes would race), no tape recording (it keeps
 * nodes that read the old value). The trace checks the rest (lazy_trace.cc CanWriteInPlace).
 */
bool InTrace(const std::vector<Array>& targets, const std::vector<Array>& values, size_t i) {
  if (ActiveTapes() > 0 || !targets[i].defined() || !values[i].defined()) return false;
  const ValuePtr& target = targets[i].cell()->value;
  const ValuePtr& value = values[i].cell()->value;
  if (!target || target->node || !target->data.defined() || !value->node) return false;
  for (size_t j = 0; j < targets.size(); ++j) {
    if (j == i) continue;
    if (values[j].defined() && values[j].cell()->value == value) return false;
    const Array::Cell* other = targets[j].cell().get();
    if (other && other->value && other->value->data.defined() && other->value->data.Overlaps(target->data)) {
      return false;
    }
  }
  return true;
}

}  // namespace

void AssignAll(const std::vector<Array>& targets, const std::vector<Array>& values) {
  IR_CHECK(targets.size() == values.size()) << "lazy::AssignAll: one value per target";
  static const Op* assign = Op::Get("assign");
  std::vector<size_t> in_trace, by_copy;
  std::vector<ValuePtr> assigns;
  std::vector<const Array::Value*> requested;
  std::unordered_set<const Array::Value*> skip;  // computed into the targets, not as outputs
  for (size_t i = 0; i < targets.size(); ++i) {
    if (InTrace(targets, values, i)) {
      auto out = std::make_shared<Array::Value>();
      out->node = RecordNode(assign, {targets[i].cell()->value, values[i].cell()->value}, {}, 1);
      out->hash = Mix(out->node->hash, 0);
      assigns.push_back(std::move(out));
      skip.insert(values[i].cell()->value.get());
      in_trace.push_back(i);
    } else {
      IR_CHECK(values[i].defined()) << "lazy::AssignAll: value " << i << " is an undefined array";
      requested.push_back(values[i].cell()->value.get());
      by_copy.push_back(i);
    }
  }
  if (!assigns.empty() && !MaterializeAssigning(requested, assigns, skip)) {
    assigns.clear();  // releases the old values: a copy snapshots them only if others still read them
    in_trace.clear();
    by_copy.clear();
    Materialize(values);
    for (size_t i = 0; i < targets.size(); ++i) by_copy.push_back(i);
  } else if (assigns.empty()) {
    Materialize(values);
  }
  // The value is the target's new value: it shares the written buffer (as tf.Variable.assign
  // returns the variable); a later in-place assignment snapshots it since it is then shared.
  for (size_t i : in_trace) values[i].cell()->value = targets[i].cell()->value;
  for (size_t i : by_copy) {
    Array& target = const_cast<Array&>(targets[i]);
    if (!target.defined()) target = Array(std::make_shared<Array::Cell>());
    AssignByCopy(target, values[i].cell()->value->data);
  }
}

Array& Array::Assign(const Array& value) {
  if (!cell_) cell_ = std::make_shared<Cell>();
  AssignAll({*this}, {value});
  return *this;
}

Array& Array::operator+=(const Array& rhs) { return Assign(*this + rhs); }
Array& Array::operator-=(const Array& rhs) { return Assign(*this - rhs); }
Array& Array::operator*=(const Array& rhs) { return Assign(*this * rhs); }

}  // namespace lazy
}  // namespace ir
