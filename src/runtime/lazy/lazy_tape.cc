/*!
 * \file lazy_tape.cc
 * \brief The gradient tape over lazy arrays (see include/ir/lazy_tape.h): watched sources, and on
 * a tape-cache miss the forward region as an ir::Graph, ir::Gradients on it and the gradient
 * graph as a replayable backward program (lazy_tape_cache.cc walks, caches and replays).
 */
#include "ir/lazy_tape.h"

#include <algorithm>
#include <string>
#include <unordered_map>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/node.h"
#include "runtime/lazy/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

ValuePtr TapeValueOf(const Array& array, const char* what) {
  IR_CHECK(array.defined()) << "GradientTape.gradient: undefined " << what;
  return array.cell()->value();
}

}  // namespace

TapeProgram DeriveTapeProgram(const TapeRegion& region) {
  // Region values as graph entries: sources and constants are variables, region nodes op nodes.
  std::unordered_map<const Node*, TapeRef> refs;
  std::vector<NodeEntry> sources, constants, built;
  auto variable = [&](TapeRef::Kind kind, size_t i, std::vector<NodeEntry>* list) {
    NodePtr var = Node::CreateVariable(StrCat(kind == TapeRef::kSource ? "x" : "c", i));
    refs[var.get()] = TapeRef{kind, static_cast<uint32_t>(i), 0};
    list->push_back(NodeEntry{var, 0});
  };
  for (size_t i = 0; i < region.sources.size(); ++i) variable(TapeRef::kSource, i, &sources);
  for (size_t i = 0; i < region.constants.size(); ++i) variable(TapeRef::kConstant, i, &constants);
  auto entry_of = [&](const TapeRef& ref) {
    if (ref.kind == TapeRef::kSource) return sources[ref.node];
    if (ref.kind == TapeRef::kConstant) return constants[ref.node];
    return NodeEntry{built[ref.node].node, ref.index};
  };
  for (size_t k = 0; k < region.nodes.size(); ++k) {
    std::vector<NodeEntry> inputs;
    for (const TapeRef& ref : region.inputs[k]) inputs.push_back(entry_of(ref));
    const Pending& pending = *region.nodes[k];
    NodePtr node = Node::Create(pending.op, StrCat(pending.op->name, "_", k), pending.attrs, std::move(inputs));
    refs[node.get()] = TapeRef{TapeRef::kRegion, static_cast<uint32_t>(k), 0};
    built.push_back(NodeEntry{node, 0});
  }
  std::vector<NodeEntry> ys, heads, xs;
  for (const TapeRef& ref : region.roots) ys.push_back(entry_of(ref));
  for (const TapeRef& ref : region.heads) heads.push_back(entry_of(ref));
  for (uint32_t j : region.xs) xs.push_back(sources[j]);
  std::vector<NodeEntry> grads = Gradients(ys, xs, heads);  // (no rewrite: the forward nodes stay)
  // The gradient graph's other nodes become the program's steps, in post order.
  TapeProgram program;
  auto ref_of = [&](const NodeEntry& e) {
    TapeRef ref = refs.at(e.node.get());
    ref.index = e.index;
    return ref;
  };
  PostOrderDFSVisit(grads, [&](const NodePtr& node) {
    if (refs.count(node.get())) return;
    IR_CHECK(!node->is_variable() && node->attrs.subgraphs.empty())
        << "GradientTape: " << NodeDesc(node->attrs) << " of the gradient cannot be recorded lazily";
    TapeProgram::Step step{node->op(), SavedAttrs(node->attrs), node->num_outputs(), {}};
    for (const NodeEntry& e : node->inputs) step.inputs.push_back(ref_of(e));
    refs[node.get()] = TapeRef{TapeRef::kBackward, static_cast<uint32_t>(program.steps.size()), 0};
    program.steps.push_back(std::move(step));
  });
  for (size_t i = 0; i < grads.size(); ++i) {
    program.results.push_back(ref_of(grads[i]));
    program.unreached.push_back(IsUnreachedGradient(grads[i], xs[i]));
  }
  return program;
}

GradientTape::GradientTape(bool persistent) : persistent_(persistent) { ++ActiveTapes(); }

GradientTape::~GradientTape() { Release(); }

void GradientTape::Stop() { recording_ = false; }

void GradientTape::Release() {
  if (!answerable_) return;
  answerable_ = false;
  --ActiveTapes();
}

void GradientTape::Watch(const Array& array) {
  IR_CHECK(array.defined()) << "GradientTape.watch: undefined array";
  watched_.emplace_back(array.cell(), array.cell()->value());
}

std::vector<Array> GradientTape::Gradient(const std::vector<Array>& targets, const std::vector<Array>& sources,
                                          const std::vector<Array>& heads) {
  IR_CHECK(persistent_ || answerable_) << "GradientTape.gradient can only be called once on non-persistent tapes.";
  IR_CHECK(heads.empty() || heads.size() == targets.size())
      << "GradientTape.gradient: " << heads.size() << " output gradients for " << targets.size() << " targets";
  if (!persistent_) Release();
  // A watched source stands for its value when watched and its value now (after an assignment).
  std::vector<std::vector<ValuePtr>> values(sources.size());
  std::vector<ValuePtr> all;
  for (size_t i = 0; i < sources.size(); ++i) {
    ValuePtr now = TapeValueOf(sources[i], "source");
    for (const auto& [cell, then] : watched_) {
      if (cell != sources[i].cell()) continue;
      for (const ValuePtr& v : {then, now}) {
        if (std::find(values[i].begin(), values[i].end(), v) == values[i].end()) values[i].push_back(v);
      }
    }
    all.insert(all.end(), values[i].begin(), values[i].end());
  }
  std::vector<ValuePtr> roots, head_values;
  for (const Array& target : targets) roots.push_back(TapeValueOf(target, "target"));
  for (const Array& head : heads) head_values.push_back(TapeValueOf(head, "output gradient"));
  DagLock dag(DagMutex());  // the walk reads pending nodes and origins other threads may compute
  TapeRegion region(all, roots, head_values);
  dag.unlock();
  std::vector<Array> result(sources.size());
  if (region.xs.empty()) return result;
  std::shared_ptr<const TapeProgram> program = TapeProgramFor(region);
  std::vector<Array> grads = ReplayTapeProgram(*program, &region);
  for (size_t i = 0; i < sources.size(); ++i) {
    for (const ValuePtr& v : values[i]) {
      size_t k = region.ReachedIndex(v.get());
      if (k == grads.size() || program->unreached[k]) continue;
      result[i] = result[i].defined() ? result[i] + grads[k] : grads[k];
    }
  }
  return result;
}

}  // namespace lazy
}  // namespace ir
