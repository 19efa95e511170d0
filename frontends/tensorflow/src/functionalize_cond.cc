/*!
 * \file functionalize_cond.cc
 * \brief TF1 Switch/Merge conds to kCondOp nodes. Each node gets the set of branches it lives
 * in, (predicate, port) pairs: Switch output p adds (pred, p) (port 0 = false, 1 = true), a Merge
 * removes the predicate both of its inputs carry with different ports. A Merge outside every
 * branch is an outermost cond: walking back from each of its inputs through the nodes of that
 * branch gives the branch body; Switches on the predicate become params (their data inputs the
 * cond's arguments), values from outside the branch extra arguments. Nested conds stay in the
 * bodies and are rebuilt when those are imported.
 */
#include <set>

#include "functionalize.h"
#include "graph_importer.h"
#include "ir/base.h"
#include "ir_tf_tensor.pb.h"

namespace ir {
namespace tf {
namespace {

/*! \brief A branch: (normalized predicate reference, Switch port). */
using Branch = std::pair<std::string, int>;
using BranchSet = std::set<Branch>;

bool IsSwitch(const tfproto::NodeDef& n) { return n.op() == "Switch" || n.op() == "RefSwitch"; }
bool IsMerge(const tfproto::NodeDef& n) { return n.op() == "Merge" || n.op() == "RefMerge"; }

class CondBuilder {
 public:
  explicit CondBuilder(const NodeGraph& g) : g_(g), state_(g.nodes().size()), merged_(g.nodes().size()) {}

  /*! \brief The rebuilt nodes replacing the graph's outermost Merges, and the nodes they absorb. */
  std::vector<tfproto::NodeDef> Build(std::vector<bool>* removed);

 private:
  const tfproto::NodeDef& N(int k) const { return g_.node(k); }
  std::string Pred(int sw) const;
  BranchSet StateOf(const std::string& input) const;
  void Propagate();
  tfproto::NodeDef BuildCond(int merge, std::vector<bool>* removed);

  const NodeGraph& g_;
  std::vector<BranchSet> state_;
  std::vector<std::string> merged_;  // the predicate each Merge joins
};

/*! \brief The Switch's predicate reference, seen through Identity nodes. */
std::string CondBuilder::Pred(int sw) const {
  IR_CHECK(N(sw).input_size() >= 2 && !IsControl(N(sw).input(1)))
      << "Switch '" << N(sw).name() << "' needs a data input and a predicate";
  std::string ref = N(sw).input(1);
  for (int src = g_.Source(ref);
       src >= 0 && N(src).op() == "Identity" && N(src).input_size() >= 1 && !IsControl(N(src).input(0));
       src = g_.Source(ref)) {
    ref = N(src).input(0);
  }
  TensorRef r = TensorRef::Parse(ref);
  return RefName(r.node, r.index);
}

/*! \brief The branches of the value `input` refers to. */
BranchSet CondBuilder::StateOf(const std::string& input) const {
  int src = g_.Source(input);
  if (src < 0) return {};
  BranchSet s = state_[src];
  if (IsSwitch(N(src)) && !IsControl(input)) s.insert({Pred(src), TensorRef::Parse(input).index});
  return s;
}

void CondBuilder::Propagate() {
  for (int k : g_.TopologicalOrder()) {
    BranchSet s;
    for (const std::string& in : N(k).input()) {
      BranchSet more = StateOf(in);
      s.insert(more.begin(), more.end());
    }
    std::string both;
    for (const Branch& b : s) {
      if (b.second == 1 && s.count({b.first, 0})) both = b.first;
    }
    if (IsMerge(N(k))) {
      IR_CHECK(!both.empty()) << "Merge '" << N(k).name()
                              << "' does not join the two branches of a cond (no Switch on one predicate reaches "
                                 "its inputs through both ports)";
      s.erase({both, 0});
      s.erase({both, 1});
      merged_[k] = both;
    } else {
      IR_CHECK(both.empty()) << "node '" << N(k).name() << "' (op " << N(k).op()
                             << ") reads both branches of the cond on '" << both << "' without a Merge";
    }
    state_[k] = std::move(s);
  }
}

/*! \brief An int32 scalar Const named `name` (the Merge value_index of a branch). */
tfproto::NodeDef IndexConst(const std::string& name, int value) {
  tfproto::NodeDef node;
  node.set_name(name);
  node.set_op("Const");
  (*node.mutable_attr())["dtype"].set_type(tfproto::DT_INT32);
  tfproto::TensorProto* t = (*node.mutable_attr())["value"].mutable_tensor();
  t->set_dtype(tfproto::DT_INT32);
  t->mutable_tensor_shape();
  t->add_int_val(value);
  return node;
}

tfproto::NodeDef CondBuilder::BuildCond(int merge, std::vector<bool>* removed) {
  const tfproto::NodeDef& m = N(merge);
  const std::string& pred = merged_[merge];
  std::vector<std::string> inputs;
  for (const std::string& in : m.input()) {
    if (!IsControl(in)) inputs.push_back(in);
  }
  IR_CHECK(inputs.size() == 2) << "Merge '" << m.name() << "' has " << inputs.size()
                               << " data inputs; a cond's Merge joins exactly two branches";
  std::map<std::string, std::string> params;  // argument reference -> param name
  std::vector<std::string> args;
  std::string pred_switch;
  BodyDef branches[2];
  int taken_input[2] = {0, 0};  // the Merge input each branch feeds (its value_index)
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string& in = inputs[i];
    BranchSet s = StateOf(in);
    int port = s.count({pred, 1}) ? 1 : 0;
    IR_CHECK(s.count({pred, port})) << "Merge '" << m.name() << "': input '" << in
                                    << "' is in neither branch of the cond on '" << pred << "'";
    BodyDef& body = branches[1 - port];
    taken_input[1 - port] = static_cast<int>(i);
    IR_CHECK(body.outputs.empty()) << "Merge '" << m.name() << "': both inputs come from the "
                                   << (port ? "true" : "false") << " branch of the cond on '" << pred << "'";
    std::set<int> taken;
    std::vector<int> stack;
    auto map_ref = [&](const std::string& ref) -> std::string {
      int src = g_.Source(ref);
      TensorRef r = TensorRef::Parse(ref);
      if (src < 0) return ref;  // the importer names the missing node
      bool boundary = IsSwitch(N(src)) && Pred(src) == pred && !r.control;
      if (!boundary && StateOf(ref).count({pred, port})) {
        if (taken.insert(src).second) stack.push_back(src);
        return ref;
      }
      if (r.control) return "";
      std::string arg = boundary ? N(src).input(0) : RefName(r.node, r.index);
      if (boundary) pred_switch = N(src).name();
      auto it = params.find(arg);
      if (it == params.end()) {
        it = params.emplace(arg, StrCat(m.name(), "/__arg", params.size())).first;
        args.push_back(arg);
      }
      return it->second;
    };
    body.outputs.push_back(map_ref(in));
    while (!stack.empty()) {
      int k = stack.back();
      stack.pop_back();
      tfproto::NodeDef node = N(k);
      node.clear_input();
      for (const std::string& ref : N(k).input()) {
        std::string mapped = map_ref(ref);
        if (!mapped.empty()) node.add_input(mapped);
      }
      body.nodes.push_back(std::move(node));
      NestingGuard::Charge(1);
      (*removed)[k] = true;
    }
  }
  IR_CHECK(!pred_switch.empty()) << "Merge '" << m.name() << "': no branch reads a Switch on '" << pred << "'";
  tfproto::NodeDef cond;
  cond.set_name(m.name());
  cond.set_op(kCondOp);
  cond.add_input(pred);
  for (const std::string& arg : args) cond.add_input(arg);
  (*cond.mutable_attr())["pred_switch"].set_s(pred_switch);
  for (int b = 0; b < 2; ++b) {
    for (const std::string& arg : args) branches[b].params.push_back(params.at(arg));
    for (const std::string& p : branches[b].params) branches[b].nodes.push_back(ParamNode(p, TypeAttr(m)));
    // Output 1, Merge's value_index: which input was taken.
    branches[b].nodes.push_back(IndexConst(m.name() + "/__index", taken_input[b]));
    branches[b].outputs.push_back(m.name() + "/__index");
    EncodeBody(branches[b], b, &cond);
  }
  return cond;
}

std::vector<tfproto::NodeDef> CondBuilder::Build(std::vector<bool>* removed) {
  Propagate();
  std::vector<tfproto::NodeDef> out;
  for (size_t k = 0; k < g_.nodes().size(); ++k) {
    if (IsMerge(N(k)) && state_[k].empty() && !merged_[k].empty()) {
      out.push_back(BuildCond(static_cast<int>(k), removed));
      (*removed)[k] = true;
    }
  }
  for (size_t k = 0; k < g_.nodes().size(); ++k) {
    // Switches (their values are now cond arguments) and nodes left in a branch (pivots).
    if (!out.empty() && (IsSwitch(N(k)) || !state_[k].empty())) (*removed)[k] = true;
  }
  return out;
}

}  // namespace

std::vector<tfproto::NodeDef> FunctionalizeConds(std::vector<tfproto::NodeDef> nodes) {
  NodeGraph g(nodes);
  std::vector<bool> removed(nodes.size(), false);
  std::vector<tfproto::NodeDef> added = CondBuilder(g).Build(&removed);
  return ReplaceNodes(std::move(nodes), removed, std::move(added));
}

}  // namespace tf
}  // namespace ir
