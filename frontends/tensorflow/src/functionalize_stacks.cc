/*!
 * \file functionalize_stacks.cc
 * \brief The stacks of TF1's own gradient loops as dataflow, before the frames are rebuilt.
 *
 * tf.gradients of a while loop keeps each forward value the gradient loop needs on a stack: a
 * StackV2 ("f_acc") outside the loops, a StackPushV2 in the forward frame (once per iteration)
 * and a StackPopV2 in the gradient frame, which runs as many iterations backwards. Both reach
 * the stack's handle through constant Enters. The IR has no stacks, so each becomes an array
 * (kStackArrayOp: holding nothing, it adopts the first value's shape) and a count, threaded as
 * loop variables (Enter/Merge/Switch/Identity/NextIteration/Exit, the frame's own LoopCond)
 * through every frame from the top level down to the pushes' frame: a push writes row `count` and
 * counts one more (the array grows, doubling). The forward loop's final array enters the
 * gradient frames as a loop invariant and its count as a loop variable there: a pop counts one
 * less and reads that row. So pops return the pushed values last first, as TF's stacks do.
 *
 * A stack whose popped values only feed control edges (TF's `flow_out` of a TensorArray write's
 * gradient: a barrier) gets a scalar pushed instead of its value. Stacks used any other way
 * (pushes in several frames, pops guarded by a cond's Switch...) are left as they are.
 */
#include <algorithm>
#include <set>

#include "functionalize.h"
#include "graph_importer.h"
#include "ir/base.h"
#include "ir_tf_tensor.pb.h"

namespace ir {
namespace tf {
namespace {

using tfproto::NodeDef;

bool IsStack(const NodeDef& n) { return n.op() == "StackV2" || n.op() == "Stack"; }
bool IsPush(const NodeDef& n) { return n.op() == "StackPushV2" || n.op() == "StackPush"; }
bool IsPop(const NodeDef& n) { return n.op() == "StackPopV2" || n.op() == "StackPop"; }
bool IsClose(const NodeDef& n) { return n.op() == "StackCloseV2" || n.op() == "StackClose"; }
bool Forwards(const NodeDef& n) { return IsEnter(n) || n.op() == "Identity" || n.op() == "RefIdentity"; }

/*! \brief A stack's pushes, pops, closes and the Enter/Identity nodes its handle passes through. */
struct StackUses {
  std::vector<int> pushes, pops, closes, path;
  bool other = false;  // the handle reaches another op, or another input of one
};

StackUses FindUses(const NodeGraph& g, int stack) {
  StackUses uses;
  std::vector<int> todo{stack};
  std::set<int> seen{stack};
  while (!todo.empty()) {
    int k = todo.back();
    todo.pop_back();
    for (const auto& use : g.Consumers(k)) {
      const NodeDef& n = g.node(use.first);
      if (IsControl(n.input(use.second)) || !seen.insert(use.first).second) continue;
      bool handle = use.second == 0;
      if (handle && Forwards(n)) {
        uses.path.push_back(use.first);
        todo.push_back(use.first);
      } else if (handle && IsPush(n) && n.input_size() >= 2) {
        uses.pushes.push_back(use.first);
      } else if (handle && IsPop(n)) {
        uses.pops.push_back(use.first);
      } else if (handle && IsClose(n)) {
        uses.closes.push_back(use.first);
      } else {
        uses.other = true;
      }
    }
  }
  for (auto* list : {&uses.pushes, &uses.pops}) std::sort(list->begin(), list->end());
  return uses;
}

/*! \brief Whether every reader of node `k` is a control edge or an Identity only read that way. */
bool ControlOnly(const NodeGraph& g, int k, int depth = 0) {
  for (const auto& use : g.Consumers(k)) {
    const NodeDef& n = g.node(use.first);
    if (IsControl(n.input(use.second))) continue;
    if (n.op() != "Identity" || depth > 16 || !ControlOnly(g, use.first, depth + 1)) return false;
  }
  return true;
}

int TypeOf(const NodeDef& n, const std::string& key) {
  auto it = n.attr().find(key);
  return it == n.attr().end() ? 0 : it->second.type();
}

NodeDef MakeNode(const std::string& name, const std::string& op, const std::vector<std::string>& inputs, int dtype) {
  NodeDef n;
  n.set_name(name);
  n.set_op(op);
  for (const std::string& in : inputs) n.add_input(in);
  if (dtype != 0) (*n.mutable_attr())["T"].set_type(static_cast<tfproto::DataType>(dtype));
  return n;
}

/*! \brief A scalar Const of `dtype` (int32 or float) holding 0; `pin` ties it to a frame. */
NodeDef ZeroConst(const std::string& name, int dtype, const std::string& pin) {
  NodeDef n =
      MakeNode(name, "Const", pin.empty() ? std::vector<std::string>{} : std::vector<std::string>{"^" + pin}, 0);
  (*n.mutable_attr())["dtype"].set_type(static_cast<tfproto::DataType>(dtype));
  tfproto::TensorProto* t = (*n.mutable_attr())["value"].mutable_tensor();
  t->set_dtype(static_cast<tfproto::DataType>(dtype));
  t->mutable_tensor_shape();
  if (dtype == tfproto::DT_INT32) {
    t->add_int_val(0);
  } else {
    t->add_float_val(0);
  }
  return n;
}

class StackLowering {
 public:
  StackLowering(const NodeGraph& g, const Frames& frames) : g_(g), frames_(frames) {
    for (size_t k = 0; k < g.nodes().size(); ++k) {
      if (g.node(k).op() == "LoopCond") loop_cond_.emplace(frames.of[k], g.node(k).name());
    }
  }

  /*! \brief Lowers stack `s` when its uses follow the pattern of TF's gradients; false leaves it as it is. */
  bool Lower(int s, const StackUses& uses);

  std::vector<NodeDef> added;
  std::map<int, NodeDef> replaced;
  std::set<int> removed;

 private:
  /*! \brief One value threaded through a chain of frames: per frame its NextIteration (in `added`) and Exit. */
  struct Thread {
    std::string inner;  // the value inside the innermost frame's iteration
    std::vector<size_t> next;
    std::vector<std::string> exits;
  };
  Thread Through(const std::vector<int>& chain, const std::string& init, int dtype, const std::string& base);
  /*! \brief Ends `t`: the innermost iteration's new value `updated`; returns the value after the outermost frame. */
  std::string Close(const Thread& t, const std::string& updated);
  /*! \brief `init` entered as a loop invariant into each frame of `chain`; the innermost value. */
  std::string Invariant(const std::vector<int>& chain, const std::string& init, int dtype, const std::string& base);
  NodeDef Enter(const std::string& name, const std::string& input, int frame, int dtype, bool constant) const;
  /*! \brief A frame of `frames` holding the uses, when they all share it and TF's pattern holds, else 0. */
  int SharedFrame(const std::vector<int>& uses) const;

  const NodeGraph& g_;
  const Frames& frames_;
  std::map<int, std::string> loop_cond_;
};

NodeDef StackLowering::Enter(const std::string& name, const std::string& input, int frame, int dtype,
                             bool constant) const {
  NodeDef n = MakeNode(name, "Enter", {input}, dtype);
  auto& attrs = *n.mutable_attr();
  attrs["frame_name"].set_s(frames_.name[frame]);
  attrs["is_constant"].set_b(constant);
  attrs["parallel_iterations"].set_i(1);
  return n;
}

StackLowering::Thread StackLowering::Through(const std::vector<int>& chain, const std::string& init, int dtype,
                                             const std::string& base) {
  Thread t;
  std::string value = init;
  for (size_t i = 0; i < chain.size(); ++i) {
    std::string pre = StrCat(base, "_", i);
    added.push_back(Enter(pre + "/Enter", value, chain[i], dtype, false));
    NodeDef merge = MakeNode(pre + "/Merge", "Merge", {pre + "/Enter", pre + "/NextIteration"}, dtype);
    (*merge.mutable_attr())["N"].set_i(2);
    added.push_back(merge);
    added.push_back(MakeNode(pre + "/Switch", "Switch", {pre + "/Merge", loop_cond_.at(chain[i])}, dtype));
    added.push_back(MakeNode(pre + "/Identity", "Identity", {pre + "/Switch:1"}, dtype));
    added.push_back(MakeNode(pre + "/Exit", "Exit", {pre + "/Switch"}, dtype));
    t.next.push_back(added.size());
    added.push_back(MakeNode(pre + "/NextIteration", "NextIteration", {}, dtype));
    t.exits.push_back(pre + "/Exit");
    value = pre + "/Identity";
  }
  t.inner = value;
  return t;
}

std::string StackLowering::Close(const Thread& t, const std::string& updated) {
  std::string value = updated;
  for (size_t i = t.next.size(); i-- > 0;) {
    added[t.next[i]].add_input(value);
    value = t.exits[i];
  }
  return value;
}

std::string StackLowering::Invariant(const std::vector<int>& chain, const std::string& init, int dtype,
                                     const std::string& base) {
  std::string value = init;
  for (size_t i = 0; i < chain.size(); ++i) {
    added.push_back(Enter(StrCat(base, "_", i), value, chain[i], dtype, true));
    value = added.back().name();
  }
  return value;
}

int StackLowering::SharedFrame(const std::vector<int>& uses) const {
  int frame = uses.empty() ? 0 : frames_.of[uses[0]];
  for (int k : uses) {
    if (frames_.of[k] != frame) return 0;
  }
  for (int f : frames_.Chain(frame)) {
    if (!loop_cond_.count(f)) return 0;
  }
  return frame;
}

bool StackLowering::Lower(int s, const StackUses& uses) {
  int push_frame = SharedFrame(uses.pushes), pop_frame = SharedFrame(uses.pops);
  if (uses.other || frames_.of[s] != 0 || push_frame == 0 || (!uses.pops.empty() && pop_frame == 0)) return false;
  std::vector<int> forward = frames_.Chain(push_frame), backward = frames_.Chain(pop_frame);
  if (!uses.pops.empty() && forward[0] == backward[0]) return false;
  const NodeDef& stack = g_.node(s);
  int dtype = TypeOf(stack, "elem_type");
  bool control_only = dtype == tfproto::DT_FLOAT;
  for (int q : uses.pops) control_only = control_only && ControlOnly(g_, q);
  for (int p : uses.pushes) {  // and nothing reads what a push passes on
    for (const auto& use : g_.Consumers(p)) {
      control_only = control_only && IsControl(g_.node(use.first).input(use.second));
    }
  }
  const std::string base = stack.name() + "/__lowered";

  NodeDef array = MakeNode(base + "/array", kStackArrayOp, {}, 0);
  (*array.mutable_attr())["elem_type"].set_type(static_cast<tfproto::DataType>(dtype));
  added.push_back(array);
  added.push_back(ZeroConst(base + "/count", tfproto::DT_INT32, ""));
  Thread arrays = Through(forward, base + "/array", dtype, base + "/forward_array");
  Thread counts = Through(forward, base + "/count", tfproto::DT_INT32, base + "/forward_count");
  std::string cur_array = arrays.inner, cur_count = counts.inner;
  for (int p : uses.pushes) {
    const NodeDef& push = g_.node(p);
    std::string value = push.input(1);
    if (control_only) {
      added.push_back(ZeroConst(push.name() + "/__token", dtype, TensorRef::Parse(value).node));
      value = added.back().name();
    }
    NodeDef lowered = MakeNode(push.name(), kStackPushOp, {cur_array, cur_count, value}, dtype);
    for (int i = 2; i < push.input_size(); ++i) lowered.add_input(push.input(i));
    replaced[p] = lowered;
    cur_array = push.name() + ":1";
    cur_count = push.name() + ":2";
  }
  std::string final_array = Close(arrays, cur_array), final_count = Close(counts, cur_count);
  if (!uses.pops.empty()) {
    std::string rows = Invariant(backward, final_array, dtype, base + "/backward_array");
    Thread back = Through(backward, final_count, tfproto::DT_INT32, base + "/backward_count");
    cur_count = back.inner;
    for (int q : uses.pops) {
      const NodeDef& pop = g_.node(q);
      NodeDef lowered = MakeNode(pop.name(), kStackPopOp, {rows, cur_count}, 0);
      (*lowered.mutable_attr())["elem_type"].set_type(static_cast<tfproto::DataType>(dtype));
      for (int i = 1; i < pop.input_size(); ++i) lowered.add_input(pop.input(i));
      replaced[q] = lowered;
      cur_count = pop.name() + ":1";
    }
    Close(back, cur_count);
  }
  for (int c : uses.closes) {
    NodeDef noop = MakeNode(g_.node(c).name(), "NoOp", {}, 0);
    for (const std::string& in : g_.node(c).input()) {
      if (IsControl(in)) noop.add_input(in);
    }
    replaced[c] = noop;
  }
  removed.insert(s);
  removed.insert(uses.path.begin(), uses.path.end());
  return true;
}

}  // namespace

std::vector<NodeDef> LowerStacks(std::vector<NodeDef> nodes) {
  bool any = std::any_of(nodes.begin(), nodes.end(), [](const NodeDef& n) { return IsStack(n); });
  if (!any) return nodes;
  NodeGraph g(nodes);
  Frames frames = AssignFrames(g);
  StackLowering lowering(g, frames);
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (IsStack(nodes[k])) lowering.Lower(static_cast<int>(k), FindUses(g, static_cast<int>(k)));
  }
  if (lowering.removed.empty()) return nodes;
  std::vector<bool> removed(nodes.size(), false);
  for (int k : lowering.removed) removed[k] = true;
  for (auto& kv : lowering.replaced) nodes[kv.first] = std::move(kv.second);
  return ReplaceNodes(std::move(nodes), removed, std::move(lowering.added));
}

}  // namespace tf
}  // namespace ir
