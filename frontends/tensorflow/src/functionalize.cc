/*!
 * \file functionalize.cc
 * \brief Shared pieces of the TF1 control-flow rebuild: node indexing, body encoding, params.
 */
#include "functionalize.h"

#include <algorithm>
#include <deque>
#include <set>

#include "graph_importer.h"
#include "ir/base.h"
#include "ir_tf_graph.pb.h"

namespace ir {
namespace tf {

std::string RefName(const std::string& node, int index) { return index == 0 ? node : StrCat(node, ":", index); }

bool IsControl(const std::string& input) { return !input.empty() && input[0] == '^'; }

std::vector<tfproto::NodeDef> ReplaceNodes(std::vector<tfproto::NodeDef> nodes, const std::vector<bool>& removed,
                                           std::vector<tfproto::NodeDef> added) {
  if (added.empty()) return nodes;
  std::set<std::string> gone;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (removed[k]) gone.insert(nodes[k].name());
  }
  for (const auto& n : added) gone.erase(n.name());
  std::vector<tfproto::NodeDef> out;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (removed[k]) continue;
    auto* inputs = nodes[k].mutable_input();
    inputs->erase(
        std::remove_if(inputs->begin(), inputs->end(),
                       [&](const std::string& in) { return IsControl(in) && gone.count(TensorRef::Parse(in).node); }),
        inputs->end());
    out.push_back(std::move(nodes[k]));
  }
  for (auto& n : added) out.push_back(std::move(n));
  return out;
}

NodeGraph::NodeGraph(const std::vector<tfproto::NodeDef>& nodes) : nodes_(&nodes), consumers_(nodes.size()) {
  for (size_t k = 0; k < nodes.size(); ++k) by_name_.emplace(nodes[k].name(), static_cast<int>(k));
  for (size_t k = 0; k < nodes.size(); ++k) {
    for (int i = 0; i < nodes[k].input_size(); ++i) {
      int src = Source(nodes[k].input(i));
      if (src >= 0) consumers_[src].emplace_back(static_cast<int>(k), i);
    }
  }
}

int NodeGraph::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

int NodeGraph::Source(const std::string& input) const { return Find(TensorRef::Parse(input).node); }

std::vector<int> NodeGraph::TopologicalOrder() const {
  std::vector<int> pending(nodes_->size(), 0), order, ready;
  for (size_t k = 0; k < nodes_->size(); ++k) {
    for (const std::string& in : (*nodes_)[k].input()) pending[k] += Source(in) >= 0;
    if (pending[k] == 0) ready.push_back(static_cast<int>(k));
  }
  while (!ready.empty()) {
    int k = ready.back();
    ready.pop_back();
    order.push_back(k);
    for (const auto& use : consumers_[k]) {
      if (--pending[use.first] == 0) ready.push_back(use.first);
    }
  }
  return order;
}

void EncodeBody(const BodyDef& body, int k, tfproto::NodeDef* node) {
  tfproto::GraphDef graph;
  for (const auto& n : body.nodes) *graph.add_node() = n;
  auto& attrs = *node->mutable_attr();
  attrs[StrCat("body", k)].set_s(graph.SerializeAsString());
  for (const std::string& p : body.params) attrs[StrCat("params", k)].mutable_list()->add_s(p);
  for (const std::string& o : body.outputs) attrs[StrCat("outputs", k)].mutable_list()->add_s(o);
}

BodyDef DecodeBody(const tfproto::NodeDef& node, int k) {
  BodyDef body;
  auto get = [&](const std::string& key) -> const tfproto::AttrValue& {
    auto it = node.attr().find(StrCat(key, k));
    IR_CHECK(it != node.attr().end()) << "rebuilt control-flow node '" << node.name() << "' lacks " << key << k;
    return it->second;
  };
  tfproto::GraphDef graph;
  IR_CHECK(graph.ParseFromString(get("body").s())) << "rebuilt control-flow node '" << node.name() << "': bad body";
  body.nodes.assign(graph.node().begin(), graph.node().end());
  if (node.attr().count(StrCat("params", k))) {
    body.params.assign(get("params").list().s().begin(), get("params").list().s().end());
  }
  body.outputs.assign(get("outputs").list().s().begin(), get("outputs").list().s().end());
  return body;
}

tfproto::NodeDef ParamNode(const std::string& name, int dtype) {
  tfproto::NodeDef node;
  node.set_name(name);
  node.set_op("Placeholder");
  (*node.mutable_attr())["dtype"].set_type(static_cast<tfproto::DataType>(dtype));
  return node;
}

int TypeAttr(const tfproto::NodeDef& node) {
  auto it = node.attr().find("T");
  return it == node.attr().end() ? 0 : it->second.type();
}

int Frames::Child(const std::string& frame_name, int outer, const tfproto::NodeDef& enter) {
  for (size_t f = 1; f < name.size(); ++f) {
    if (name[f] != frame_name) continue;
    IR_CHECK(parent[f] == outer) << "Enter '" << enter.name() << "' enters frame '" << frame_name
                                 << "' from another frame than its other Enters do";
    return static_cast<int>(f);
  }
  name.push_back(frame_name);
  parent.push_back(outer);
  return static_cast<int>(name.size() - 1);
}

bool Frames::Within(int f, int outer) const {
  for (; f > 0; f = parent[f]) {
    if (f == outer) return true;
  }
  return false;
}

std::vector<int> Frames::Chain(int f) const {
  std::vector<int> chain;
  for (; f > 0; f = parent[f]) chain.insert(chain.begin(), f);
  return chain;
}

bool IsEnter(const tfproto::NodeDef& n) { return n.op() == "Enter" || n.op() == "RefEnter"; }
bool IsExit(const tfproto::NodeDef& n) { return n.op() == "Exit" || n.op() == "RefExit"; }

std::string FrameName(const tfproto::NodeDef& enter) {
  auto it = enter.attr().find("frame_name");
  IR_CHECK(it != enter.attr().end() && !it->second.s().empty())
      << "Enter '" << enter.name() << "' has no frame_name attribute";
  return it->second.s();
}

Frames AssignFrames(const NodeGraph& g) {
  Frames frames;
  frames.of.assign(g.nodes().size(), -1);
  std::deque<int> queue;
  for (size_t k = 0; k < g.nodes().size(); ++k) {
    bool source = true;
    for (const std::string& in : g.node(k).input()) source = source && g.Source(in) < 0;
    if (source) {
      frames.of[k] = 0;
      queue.push_back(static_cast<int>(k));
    }
  }
  while (!queue.empty()) {
    int u = queue.front();
    queue.pop_front();
    int out = frames.of[u];
    if (IsExit(g.node(u))) {
      IR_CHECK(out != 0) << "Exit '" << g.node(u).name() << "' is not inside a while loop frame (no Enter leads to it)";
      out = frames.parent[out];
    }
    // NextIteration -> Merge is the back edge: a Merge takes its frame from its Enter.
    if (g.node(u).op() == "NextIteration" || g.node(u).op() == "RefNextIteration") continue;
    for (const auto& use : g.Consumers(u)) {
      int v = use.first;
      if (frames.of[v] >= 0) continue;
      frames.of[v] = IsEnter(g.node(v)) ? frames.Child(FrameName(g.node(v)), out, g.node(v)) : out;
      queue.push_back(v);
    }
  }
  for (int& f : frames.of) f = f < 0 ? 0 : f;
  return frames;
}

int HandleSource(const NodeGraph& g, const std::string& input) {
  static const std::set<std::string> kForwarding{"Enter", "RefEnter", "Identity", "RefIdentity"};
  int src = IsControl(input) ? -1 : g.Source(input);
  for (int hops = 0; src >= 0 && kForwarding.count(g.node(src).op()) && hops < 1024; ++hops) {
    const tfproto::NodeDef& n = g.node(src);
    src = n.input_size() >= 1 && !IsControl(n.input(0)) ? g.Source(n.input(0)) : -1;
  }
  return src;
}

namespace {
bool IsStackPush(const tfproto::NodeDef& n) { return n.op() == "StackPushV2" || n.op() == "StackPush"; }
}  // namespace

std::vector<tfproto::NodeDef> NeededNodes(std::vector<tfproto::NodeDef> nodes, const std::vector<std::string>& roots,
                                          const std::set<std::string>& fed) {
  NodeGraph g(nodes);
  std::map<int, std::vector<int>> pushes;  // stack -> the pushes onto it
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (IsStackPush(nodes[k]) && nodes[k].input_size() >= 1) {
      int stack = HandleSource(g, nodes[k].input(0));
      if (stack >= 0) pushes[stack].push_back(static_cast<int>(k));
    }
  }
  std::vector<bool> needed(nodes.size(), false);
  std::vector<int> stack;
  auto need = [&](int k) {
    if (k >= 0 && !needed[k]) {
      needed[k] = true;
      stack.push_back(k);
    }
  };
  for (const std::string& root : roots) need(g.Find(root));
  for (const std::string& name : fed) need(g.Find(name));  // fed names must stay (a body's params)
  while (!stack.empty()) {
    int k = stack.back();
    stack.pop_back();
    if (fed.count(nodes[k].name())) continue;
    for (const std::string& in : nodes[k].input()) need(g.Source(in));
    auto it = pushes.find(k);
    if (it != pushes.end()) {
      for (int push : it->second) need(push);
    }
  }
  std::vector<tfproto::NodeDef> out;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (needed[k]) out.push_back(std::move(nodes[k]));
  }
  return out;
}

namespace {
thread_local int nesting = 0;
thread_local size_t copies = 0;
}  // namespace

NestingGuard::NestingGuard(const std::string& what) {
  IR_CHECK(nesting < kMaxNesting) << what << " is nested more than " << kMaxNesting
                                  << " control-flow levels deep inside other loops and conds";
  ++nesting;
}

NestingGuard::~NestingGuard() { --nesting; }

void NestingGuard::Charge(size_t n) {
  copies += n;
  IR_CHECK(copies <= kMaxCopies) << "rebuilding the graph's control flow copies more than " << kMaxCopies
                                 << " nodes into loop and cond bodies";
}

void NestingGuard::StartImport() {
  if (nesting == 0) copies = 0;
}

std::vector<tfproto::NodeDef> FunctionalizeControlFlow(std::vector<tfproto::NodeDef> nodes,
                                                       const std::vector<std::string>& roots,
                                                       const std::set<std::string>& fed) {
  static const std::set<std::string> kOps{"Enter",         "RefEnter",         "Exit",    "RefExit",
                                          "Switch",        "RefSwitch",        "Merge",   "RefMerge",
                                          "NextIteration", "RefNextIteration", "LoopCond"};
  nodes = AnnotateTensorArrays(std::move(nodes));
  bool any = std::any_of(nodes.begin(), nodes.end(), [](const tfproto::NodeDef& n) { return kOps.count(n.op()); });
  if (!any) return nodes;
  NestingGuard::StartImport();
  if (!roots.empty()) nodes = NeededNodes(std::move(nodes), roots, fed);
  return FunctionalizeConds(FunctionalizeLoops(LowerStacks(std::move(nodes))));
}

}  // namespace tf
}  // namespace ir
