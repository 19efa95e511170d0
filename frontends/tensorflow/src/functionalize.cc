/*!
 * \file functionalize.cc
 * \brief Shared pieces of the TF1 control-flow rebuild: node indexing, body encoding, params.
 */
#include "functionalize.h"

#include <algorithm>
#include <set>

#include "graph.pb.h"
#include "graph_importer.h"
#include "ir/base.h"

namespace ir {
namespace tf {

std::string RefName(const std::string& node, int index) { return index == 0 ? node : StrCat(node, ":", index); }

bool IsControl(const std::string& input) { return !input.empty() && input[0] == '^'; }

std::vector<tensorflow::NodeDef> ReplaceNodes(std::vector<tensorflow::NodeDef> nodes, const std::vector<bool>& removed,
                                              std::vector<tensorflow::NodeDef> added) {
  if (added.empty()) return nodes;
  std::vector<tensorflow::NodeDef> out;
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (!removed[k]) out.push_back(std::move(nodes[k]));
  }
  for (auto& n : added) out.push_back(std::move(n));
  return out;
}

NodeGraph::NodeGraph(const std::vector<tensorflow::NodeDef>& nodes) : nodes_(&nodes), consumers_(nodes.size()) {
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

void EncodeBody(const BodyDef& body, int k, tensorflow::NodeDef* node) {
  tensorflow::GraphDef graph;
  for (const auto& n : body.nodes) *graph.add_node() = n;
  auto& attrs = *node->mutable_attr();
  attrs[StrCat("body", k)].set_s(graph.SerializeAsString());
  for (const std::string& p : body.params) attrs[StrCat("params", k)].mutable_list()->add_s(p);
  for (const std::string& o : body.outputs) attrs[StrCat("outputs", k)].mutable_list()->add_s(o);
}

BodyDef DecodeBody(const tensorflow::NodeDef& node, int k) {
  BodyDef body;
  auto get = [&](const std::string& key) -> const tensorflow::AttrValue& {
    auto it = node.attr().find(StrCat(key, k));
    IR_CHECK(it != node.attr().end()) << "rebuilt control-flow node '" << node.name() << "' lacks " << key << k;
    return it->second;
  };
  tensorflow::GraphDef graph;
  IR_CHECK(graph.ParseFromString(get("body").s())) << "rebuilt control-flow node '" << node.name() << "': bad body";
  body.nodes.assign(graph.node().begin(), graph.node().end());
  if (node.attr().count(StrCat("params", k))) {
    body.params.assign(get("params").list().s().begin(), get("params").list().s().end());
  }
  body.outputs.assign(get("outputs").list().s().begin(), get("outputs").list().s().end());
  return body;
}

tensorflow::NodeDef ParamNode(const std::string& name, int dtype) {
  tensorflow::NodeDef node;
  node.set_name(name);
  node.set_op("Placeholder");
  (*node.mutable_attr())["dtype"].set_type(static_cast<tensorflow::DataType>(dtype));
  return node;
}

int TypeAttr(const tensorflow::NodeDef& node) {
  auto it = node.attr().find("T");
  return it == node.attr().end() ? 0 : it->second.type();
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

std::vector<tensorflow::NodeDef> FunctionalizeControlFlow(std::vector<tensorflow::NodeDef> nodes) {
  static const std::set<std::string> kOps{"Enter",         "RefEnter",         "Exit",    "RefExit",
                                          "Switch",        "RefSwitch",        "Merge",   "RefMerge",
                                          "NextIteration", "RefNextIteration", "LoopCond"};
  bool any = std::any_of(nodes.begin(), nodes.end(), [](const tensorflow::NodeDef& n) { return kOps.count(n.op()); });
  if (!any) return nodes;
  NestingGuard::StartImport();
  return FunctionalizeConds(FunctionalizeLoops(std::move(nodes)));
}

}  // namespace tf
}  // namespace ir
