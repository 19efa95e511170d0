/*!
 * \file graph_importer.cc
 * \brief Converting TF nodes into our graph: name resolution, ordering, control inputs, and
 * the values converters need before the graph runs.
 */
#include "graph_importer.h"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "converter.h"
#include "functionalize.h"
#include "ir/constant.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir/pipeline.h"

namespace ir {
namespace tf {

namespace {

/*! \brief A graph computing `entry` for the importer's own queries (never dumped). */
Graph Internal(const NodeEntry& entry) {
  Graph g({entry});
  g.SetAttr("dump_dir", std::string());
  return g;
}

}  // namespace

TensorRef TensorRef::Parse(const std::string& text) {
  TensorRef ref;
  std::string rest = text;
  if (!rest.empty() && rest[0] == '^') {
    ref.control = true;
    rest = rest.substr(1);
  }
  size_t colon = rest.find(':');
  ref.node = rest.substr(0, colon);
  IR_CHECK(!ref.node.empty()) << "'" << text << "' names no node";
  if (colon != std::string::npos) {
    std::string index = rest.substr(colon + 1);
    IR_CHECK(!ref.control && !index.empty() && index.size() < 10 &&
             index.find_first_not_of("0123456789") == std::string::npos)
        << "'" << text << "' is not a tensor reference of the form name, name:index or ^name";
    ref.index = std::stoi(index);
  }
  return ref;
}

GraphImporter::GraphImporter(std::vector<tfproto::NodeDef> nodes, ImportSpec spec)
    : nodes_(std::move(nodes)), spec_(std::move(spec)) {}

std::string GraphImporter::Describe(size_t k) const {
  return StrCat("'", nodes_[k].name(), "' (op ", nodes_[k].op(), ")");
}

void GraphImporter::IndexNodes() {
  for (size_t k = 0; k < nodes_.size(); ++k) {
    IR_CHECK(!nodes_[k].name().empty()) << "node " << k << " (op " << nodes_[k].op() << ") has no name";
    auto inserted = by_name_.emplace(nodes_[k].name(), k);
    IR_CHECK(inserted.second) << "two nodes are named '" << nodes_[k].name() << "' (ops "
                              << nodes_[inserted.first->second].op() << " and " << nodes_[k].op() << ")";
  }
}

/*! \brief The requested outputs, or every node that no other node reads. */
std::vector<TensorRef> GraphImporter::Roots() const {
  std::vector<TensorRef> roots;
  if (!spec_.outputs.empty()) {
    for (const std::string& name : spec_.outputs) {
      roots.push_back(TensorRef::Parse(name));
      IR_CHECK(by_name_.count(roots.back().node)) << "requested output '" << name << "' names no node of the graph";
    }
    return roots;
  }
  std::vector<bool> read(nodes_.size(), false);
  for (const auto& def : nodes_) {
    for (const std::string& in : def.input()) {
      auto it = by_name_.find(TensorRef::Parse(in).node);
      if (it != by_name_.end()) read[it->second] = true;
    }
  }
  for (size_t k = 0; k < nodes_.size(); ++k) {
    if (!read[k]) roots.push_back(TensorRef{nodes_[k].name(), 0, true});
  }
  return roots;
}

void GraphImporter::ThrowCycle(const std::vector<std::pair<size_t, int>>& stack, size_t start) const {
  std::vector<std::string> path;
  bool on = false;
  for (const auto& frame : stack) {
    on = on || frame.first == start;
    if (on) path.push_back(Describe(frame.first));
  }
  path.push_back(Describe(start));
  throw Error(StrCat("the graph has a cycle (control flow loops are not supported): ", Join(path, " -> ")));
}

/*! \brief Indices of the nodes the roots need, each after its inputs (iterative DFS). */
std::vector<size_t> GraphImporter::TopologicalOrder(const std::vector<TensorRef>& roots) const {
  enum State : char { kNew, kActive, kDone };
  std::vector<State> state(nodes_.size(), kNew);
  std::vector<size_t> order;
  std::vector<std::pair<size_t, int>> stack;  // (node, next input to visit)
  for (const TensorRef& root : roots) {
    size_t r = by_name_.at(root.node);
    if (state[r] != kNew) continue;
    state[r] = kActive;
    stack.emplace_back(r, 0);
    while (!stack.empty()) {
      auto& [k, next] = stack.back();
      const tfproto::NodeDef& def = nodes_[k];
      bool fed = spec_.feed_shapes.count(def.name()) != 0;
      if (fed || next == def.input_size()) {
        state[k] = kDone;
        order.push_back(k);
        stack.pop_back();
        continue;
      }
      const std::string& in = def.input(next++);
      TensorRef ref = TensorRef::Parse(in);
      auto it = by_name_.find(ref.node);
      IR_CHECK(it != by_name_.end()) << "node " << Describe(k) << ": input " << next - 1 << " '" << in
                                     << "' names no node of the graph";
      if (state[it->second] == kActive) ThrowCycle(stack, it->second);
      if (state[it->second] == kNew) {
        state[it->second] = kActive;
        stack.emplace_back(it->second, 0);
      }
    }
  }
  return order;
}

NodeEntry GraphImporter::Resolve(const tfproto::NodeDef& def, int slot, const TensorRef& ref) const {
  const std::vector<NodeEntry>& outs = tensors_.at(ref.node);
  IR_CHECK(ref.index < static_cast<int>(outs.size()))
      << "input " << slot << " '" << def.input(slot) << "' asks for output " << ref.index << " of "
      << Describe(by_name_.at(ref.node)) << ", which has " << outs.size() << " output(s) here";
  NodeEntry entry = outs[ref.index];
  auto folded = folded_.find({entry.node.get(), entry.index});
  return folded != folded_.end() && folded->second.node != nullptr ? folded->second : entry;
}

void GraphImporter::Convert(const tfproto::NodeDef& def) {
  bool fed = spec_.feed_shapes.count(def.name()) != 0;
  std::vector<NodeEntry> inputs;
  std::vector<NodePtr> controls;
  if (!fed) {
    for (int i = 0; i < def.input_size(); ++i) {
      TensorRef ref = TensorRef::Parse(def.input(i));
      if (!ref.control) {
        inputs.push_back(Resolve(def, i, ref));
        continue;
      }
      for (const NodeEntry& e : tensors_.at(ref.node)) {
        if (!e.node->is_variable() && std::find(controls.begin(), controls.end(), e.node) == controls.end()) {
          controls.push_back(e.node);
        }
      }
    }
  }
  ImportContext ctx(this, def, std::move(inputs));
  std::vector<NodeEntry> outs;
  try {
    const Converter* converter = fed ? FindConverter("__fed__") : FindConverter(def.op());
    IR_CHECK(converter != nullptr) << "no converter for TensorFlow op '" << def.op()
                                   << "' (ir-tf-run --list-unsupported lists every such node)";
    outs = (*converter)(ctx);
    IR_CHECK(!outs.empty()) << "the converter produced no outputs";
  } catch (const UnfedPlaceholderError& err) {
    throw Error(StrCat("placeholder '", err.placeholder(), "' must be fed: TensorFlow node '", def.name(), "' (op ",
                       def.op(), ") ", err.what()));
  } catch (const Error& err) {
    throw Error(StrCat("TensorFlow node '", def.name(), "' (op ", def.op(), "): ", err.what()));
  }
  if (!controls.empty()) {
    std::vector<NodePtr> targets = ctx.created();
    if (targets.empty()) {  // a pass-through (Identity): keep the dependency on a node of its own
      for (NodeEntry& out : outs) {
        out = MakeNode("identity", def.name(), {out});
        targets.push_back(out.node);
      }
    }
    for (const NodePtr& node : targets) {
      if (!node->is_variable()) node->control_deps.insert(node->control_deps.end(), controls.begin(), controls.end());
    }
  }
  tensors_[def.name()] = std::move(outs);
}

std::vector<NodeEntry> GraphImporter::Outputs(const std::vector<TensorRef>& roots,
                                              std::vector<std::string>* names) const {
  std::vector<NodeEntry> outputs;
  for (const TensorRef& ref : roots) {
    const std::vector<NodeEntry>& outs = tensors_.at(ref.node);
    if (!ref.control) {
      IR_CHECK(ref.index < static_cast<int>(outs.size()))
          << "requested output '" << ref.node << ":" << ref.index << "': node " << Describe(by_name_.at(ref.node))
          << " has " << outs.size() << " output(s) here";
      outputs.push_back(outs[ref.index]);
      names->push_back(StrCat(ref.node, ":", ref.index));
      continue;
    }
    if (!spec_.outputs.empty()) {
      outputs.push_back(outs[0]);
      names->push_back("^" + ref.node);
      continue;
    }
    for (size_t i = 0; i < outs.size(); ++i) {
      outputs.push_back(outs[i]);
      names->push_back(StrCat(ref.node, ":", i));
    }
  }
  return outputs;
}

Graph GraphImporter::Import(std::vector<std::string>* output_names) {
  IndexNodes();
  // TF1 loops and conds become single nodes first: the rest of the import sees a DAG. Only the
  // nodes the requested outputs need take part (with none requested, every node does).
  std::vector<std::string> needed;
  std::set<std::string> fed;
  if (!spec_.outputs.empty()) {
    for (const TensorRef& root : Roots()) needed.push_back(root.node);
  }
  for (const auto& kv : spec_.feed_shapes) fed.insert(TensorRef::Parse(kv.first).node);
  nodes_ = FunctionalizeControlFlow(std::move(nodes_), needed, fed);
  by_name_.clear();
  IndexNodes();
  std::vector<TensorRef> roots = Roots();
  for (const auto& kv : spec_.feed_shapes) {
    IR_CHECK(by_name_.count(TensorRef::Parse(kv.first).node)) << "feed '" << kv.first << "' names no node of the graph";
    IR_CHECK(TensorRef::Parse(kv.first).index == 0) << "feed '" << kv.first << "': only output 0 of a node can be fed";
  }
  for (size_t k : TopologicalOrder(roots)) Convert(nodes_[k]);
  return Graph(Outputs(roots, output_names));
}

NDArray GraphImporter::Fold(const NodeEntry& entry) {
  if (entry.node->is_variable()) return NDArray();
  if (entry.node->op()->name == "constant") return ConstantNodeValue(*entry.node);
  EntryKey key{entry.node.get(), entry.index};
  auto it = folded_.find(key);
  if (it == folded_.end()) {
    Graph g = Internal(entry);
    g.SetAttr("fold_constants.max_bytes", static_cast<int>(std::min<int64_t>(spec_.max_const_bytes, 1 << 30)));
    g = ApplyPasses(std::move(g), Pipeline("fold_constants").Passes());
    NodeEntry out = g.outputs[0];
    bool constant = !out.node->is_variable() && out.node->op()->name == "constant";
    it = folded_.emplace(key, constant ? out : NodeEntry()).first;
  }
  return it->second.node == nullptr ? NDArray() : ConstantNodeValue(*it->second.node);
}

Shape GraphImporter::ShapeOf(const NodeEntry& entry) {
  EntryKey key{entry.node.get(), entry.index};
  auto it = shapes_.find(key);
  if (it != shapes_.end()) return it->second;
  Graph g = ApplyPass(Internal(entry), "InferShape");
  Shape shape = g.GetAttr<ShapeVector>("shape")[g.indexed_graph().entry_id(entry)];
  if (shape.is_known()) shapes_[key] = shape;
  return shape;
}

std::vector<std::string> GraphImporter::UnfedPlaceholders(const NodeEntry& entry) const {
  std::vector<std::string> names;
  std::unordered_set<const Node*> seen{entry.node.get()};
  std::vector<const Node*> stack{entry.node.get()};
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (node->is_variable()) {
      auto kind = node->attrs.dict.find("__kind__");
      bool placeholder = kind != node->attrs.dict.end() && kind->second == "placeholder";
      if (placeholder && !spec_.feed_shapes.count(node->attrs.name)) names.push_back(node->attrs.name);
      continue;
    }
    for (const NodeEntry& in : node->inputs) {
      if (seen.insert(in.node.get()).second) stack.push_back(in.node.get());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

DType GraphImporter::TypeOf(const NodeEntry& entry) {
  Graph g = ApplyPass(Internal(entry), "InferType");
  return g.GetAttr<DTypeVector>("dtype")[g.indexed_graph().entry_id(entry)];
}

}  // namespace tf
}  // namespace ir
