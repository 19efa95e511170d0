/*!
 * \file functionalize_while.cc
 * \brief TF1 while frames to kWhileFrameOp nodes. Every node belongs to the frame of its
 * inputs: Enter opens the frame its `frame_name` names, Exit returns to the parent frame, and a
 * node without inputs (or tied to a frame only by a control edge) follows what reaches it. A loop
 * variable is Enter -> Merge(Enter, NextIteration) -> Switch(Merge, LoopCond); Switch:1 feeds the
 * body, Switch:0 the Exits. Constant Enters are loop invariants: extra loop variables the body
 * returns unchanged. Only the outermost frames are rebuilt here; inner ones live in the bodies.
 */
#include <set>

#include "functionalize.h"
#include "graph_importer.h"
#include "ir/base.h"

namespace ir {
namespace tf {
namespace {

/*! \brief One loop variable of a frame: its Enter, Merge, Switch, NextIteration. */
struct LoopVar {
  int enter, merge, sw, next;
};

/*! \brief The first consumer of `k` with op `op` reading it at data slot `slot` (-1 = any), or -1. */
int ConsumerWithOp(const NodeGraph& g, int k, const std::string& op, int slot = -1) {
  for (const auto& use : g.Consumers(k)) {
    if (g.node(use.first).op() == op && !IsControl(g.node(use.first).input(use.second)) &&
        (slot < 0 || use.second == slot)) {
      return use.first;
    }
  }
  return -1;
}

/*!
 * \brief The Exits of the loop variable whose Switch is `sw`: the Exits reading Switch:0, directly
 * or through Identity nodes (TF's gradients gate a loop variable's gradient through a tuple's
 * Identity before its Exit).
 */
std::vector<int> ExitsOf(const NodeGraph& g, int sw) {
  std::vector<int> exits, todo{sw};
  std::set<int> seen{sw};
  while (!todo.empty()) {
    int k = todo.back();
    todo.pop_back();
    for (const auto& use : g.Consumers(k)) {
      const std::string& in = g.node(use.first).input(use.second);
      if (IsControl(in) || TensorRef::Parse(in).index != 0 || !seen.insert(use.first).second) continue;
      if (IsExit(g.node(use.first))) exits.push_back(use.first);
      if (g.node(use.first).op() == "Identity") todo.push_back(use.first);
    }
  }
  return exits;
}

/*! \brief Rebuilds one outermost frame. */
class WhileBuilder {
 public:
  WhileBuilder(const NodeGraph& g, const Frames& frames, int f) : g_(g), frames_(frames), f_(f) {
    for (size_t k = 0; k < g.nodes().size(); ++k) {
      if (frames.Within(frames.of[k], f)) members_.insert(static_cast<int>(k));
    }
  }

  /*! \brief The rebuilt loop node followed by an Identity per Exit; members() are replaced. */
  std::vector<tfproto::NodeDef> Build();
  const std::set<int>& members() const { return members_; }

 private:
  std::string Where() const { return StrCat("while frame '", frames_.name[f_], "'"); }
  std::vector<int> ExitsOf(int sw) const { return tf::ExitsOf(g_, sw); }
  const tfproto::NodeDef& N(int k) const { return g_.node(k); }
  void FindLoopVars();
  LoopVar TraceLoopVar(int enter);
  BodyDef Extract(const std::map<std::string, std::string>& rename, std::vector<std::string> params,
                  const std::vector<std::string>& outputs) const;

  const NodeGraph& g_;
  const Frames& frames_;
  int f_;
  std::set<int> members_, structural_;
  std::vector<LoopVar> vars_;
  std::vector<int> invariants_;
  int loop_cond_ = -1;
};

LoopVar WhileBuilder::TraceLoopVar(int enter) {
  LoopVar v{enter, ConsumerWithOp(g_, enter, "Merge"), -1, -1};
  IR_CHECK(v.merge >= 0) << "Enter '" << N(enter).name() << "' (a loop variable of " << Where() << ") feeds no Merge";
  const tfproto::NodeDef& merge = N(v.merge);
  for (const std::string& in : merge.input()) {
    int src = IsControl(in) ? -1 : g_.Source(in);
    if (src >= 0 && N(src).op() == "NextIteration") v.next = src;
  }
  IR_CHECK(v.next >= 0) << "Merge '" << merge.name() << "' of " << Where()
                        << " has no NextIteration input: a loop variable is Merge(Enter, NextIteration)";
  v.sw = ConsumerWithOp(g_, v.merge, "Switch", 0);
  IR_CHECK(v.sw >= 0) << "Merge '" << merge.name() << "' of " << Where() << " feeds no Switch";
  const tfproto::NodeDef& sw = N(v.sw);
  int cond = sw.input_size() == 2 ? g_.Source(sw.input(1)) : -1;
  IR_CHECK(cond >= 0 && N(cond).op() == "LoopCond")
      << "Switch '" << sw.name() << "' of " << Where() << ": its predicate is not a LoopCond";
  IR_CHECK(loop_cond_ < 0 || loop_cond_ == cond)
      << "Switch '" << sw.name() << "' of " << Where() << " uses another LoopCond than the other loop variables";
  loop_cond_ = cond;
  return v;
}

void WhileBuilder::FindLoopVars() {
  for (int k : members_) {
    if (!IsEnter(N(k)) || frames_.of[k] != f_) continue;
    if (g_.Consumers(k).empty()) continue;  // feeds nothing (TF's gradients leave `b_exit`s so)
    auto it = N(k).attr().find("is_constant");
    bool constant = it != N(k).attr().end() && it->second.b();
    IR_CHECK(N(k).input_size() >= 1 && !IsControl(N(k).input(0))) << "Enter '" << N(k).name() << "' has no input";
    structural_.insert(k);
    if (constant) {
      invariants_.push_back(k);
      continue;
    }
    vars_.push_back(TraceLoopVar(k));
    structural_.insert({vars_.back().merge, vars_.back().sw, vars_.back().next});
  }
  IR_CHECK(!vars_.empty()) << Where() << " has no loop variable (no Enter with is_constant false)";
  structural_.insert(loop_cond_);
  for (int k : members_) {
    if (IsExit(N(k)) && frames_.of[k] == f_) structural_.insert(k);
  }
}

/*!
 * \brief The nodes `outputs` need, inputs renamed by `rename` (keys are references as written,
 * "^name" for control ones); params are Placeholders. Control edges from outside are dropped.
 */
BodyDef WhileBuilder::Extract(const std::map<std::string, std::string>& rename, std::vector<std::string> params,
                              const std::vector<std::string>& outputs) const {
  BodyDef body;
  std::set<int> taken;
  std::vector<int> stack;
  auto map_ref = [&](const std::string& ref, const std::string& reader) -> std::string {
    TensorRef r = TensorRef::Parse(ref);
    std::string key = r.control ? "^" + r.node : RefName(r.node, r.index);
    auto it = rename.find(key);
    if (it != rename.end()) return it->second;
    int src = g_.Find(r.node);
    bool inside = src >= 0 && members_.count(src) && !structural_.count(src);
    if (!inside) {
      IR_CHECK(r.control) << "node '" << reader << "' in " << Where() << " reads '" << ref
                          << "', which is not a value of this loop iteration (TF1 loops read outer values "
                             "through Enter)";
      return "";
    }
    if (taken.insert(src).second) stack.push_back(src);
    return ref;
  };
  for (const std::string& out : outputs) body.outputs.push_back(map_ref(out, "output of " + Where()));
  while (!stack.empty()) {
    tfproto::NodeDef node = N(stack.back());
    stack.pop_back();
    node.clear_input();
    for (const std::string& in : N(g_.Find(node.name())).input()) {
      std::string mapped = map_ref(in, node.name());
      if (!mapped.empty()) node.add_input(mapped);
    }
    body.nodes.push_back(std::move(node));
  }
  NestingGuard::Charge(body.nodes.size());
  body.params = std::move(params);
  return body;
}

std::vector<tfproto::NodeDef> WhileBuilder::Build() {
  FindLoopVars();
  std::map<std::string, std::string> cond_names, body_names;
  std::vector<std::string> cond_params, body_params, body_outputs;
  std::vector<tfproto::NodeDef> params;
  for (const LoopVar& v : vars_) {
    const std::string &m = N(v.merge).name(), &s = N(v.sw).name();
    cond_names[m] = m;
    cond_names["^" + m] = "^" + m;
    cond_params.push_back(m);
    for (const std::string& key : {s + ":1", m}) body_names[key] = s;
    for (const std::string& key : {"^" + s, "^" + m}) body_names[key] = "^" + s;
    body_params.push_back(s);
    IR_CHECK(N(v.next).input_size() >= 1 && !IsControl(N(v.next).input(0)))
        << "NextIteration '" << N(v.next).name() << "' of " << Where() << " has no input";
    body_outputs.push_back(N(v.next).input(0));
  }
  for (int k : invariants_) {
    const std::string& e = N(k).name();
    for (auto* names : {&cond_names, &body_names}) {
      (*names)[e] = e;
      (*names)["^" + e] = "^" + e;
    }
    cond_params.push_back(e);
    body_params.push_back(e);
    body_outputs.push_back(e);
  }
  IR_CHECK(N(loop_cond_).input_size() >= 1) << "LoopCond '" << N(loop_cond_).name() << "' has no input";
  BodyDef cond = Extract(cond_names, cond_params, {N(loop_cond_).input(0)});
  BodyDef body = Extract(body_names, body_params, body_outputs);
  std::vector<int> enters;
  for (const LoopVar& v : vars_) enters.push_back(v.enter);
  enters.insert(enters.end(), invariants_.begin(), invariants_.end());
  for (size_t i = 0; i < enters.size(); ++i) {
    int dtype = TypeAttr(N(enters[i]));
    cond.nodes.push_back(ParamNode(cond.params[i], dtype));
    body.nodes.push_back(ParamNode(body.params[i], dtype));
  }

  tfproto::NodeDef loop;
  std::string base = frames_.name[f_];
  while (!base.empty() && base.back() == '/') base.pop_back();
  loop.set_name(base + "/while_loop");
  for (int n = 1; g_.Find(loop.name()) >= 0; ++n) loop.set_name(StrCat(base, "/while_loop_", n));
  loop.set_op(kWhileFrameOp);
  for (int k : enters) loop.add_input(N(k).input(0));
  auto& attrs = *loop.mutable_attr();
  attrs["num_loop_vars"].set_i(static_cast<int64_t>(vars_.size()));
  attrs["frame_name"].set_s(frames_.name[f_]);
  EncodeBody(cond, 0, &loop);
  EncodeBody(body, 1, &loop);
  std::vector<tfproto::NodeDef> out{loop};
  for (size_t i = 0; i < vars_.size(); ++i) {
    for (int k : ExitsOf(vars_[i].sw)) {
      const tfproto::NodeDef& exit = N(k);
      tfproto::NodeDef id;
      id.set_name(exit.name());
      id.set_op("Identity");
      id.add_input(RefName(loop.name(), static_cast<int>(i)));
      (*id.mutable_attr())["T"] = exit.attr().count("T") ? exit.attr().at("T") : tfproto::AttrValue();
      out.push_back(std::move(id));
    }
  }
  return out;
}

}  // namespace

std::vector<tfproto::NodeDef> FunctionalizeLoops(std::vector<tfproto::NodeDef> nodes) {
  NodeGraph g(nodes);
  Frames frames = AssignFrames(g);
  std::vector<bool> removed(nodes.size(), false);
  std::vector<tfproto::NodeDef> added;
  for (size_t f = 1; f < frames.name.size(); ++f) {
    if (frames.parent[f] != 0) continue;
    WhileBuilder builder(g, frames, static_cast<int>(f));
    for (tfproto::NodeDef& n : builder.Build()) added.push_back(std::move(n));
    for (int k : builder.members()) removed[k] = true;
  }
  return ReplaceNodes(std::move(nodes), removed, std::move(added));
}

}  // namespace tf
}  // namespace ir
