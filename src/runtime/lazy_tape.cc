/*!
 * \file lazy_tape.cc
 * \brief The gradient tape over lazy arrays (see include/ir/lazy_tape.h): the forward region as an
 * ir::Graph, ir::Gradients on it, the gradient graph recorded back as pending lazy arrays.
 */
#include "ir/lazy_tape.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/node.h"
#include "runtime/lazy_internal.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief The node that computes `value`: pending, or kept when it materialized under a tape. */
const std::shared_ptr<Pending>& ProducerOf(const Array::Value& value) { return value.node ? value.node : value.origin; }

Array Wrap(ValuePtr value) {
  auto cell = std::make_shared<Array::Cell>();
  cell->value = std::move(value);
  return Array(std::move(cell));
}

/*!
 * \brief The part of the lazy DAG between some targets and the sources, as graph nodes. Nodes
 * some source flows into become op nodes; every other value they read becomes a variable bound
 * to the value itself (a constant of the backward pass, never recomputed when materialized).
 */
class ForwardRegion {
 public:
  /*! \brief Each source value becomes a variable: the xs of the gradient. */
  explicit ForwardRegion(const std::vector<ValuePtr>& sources) {
    for (const ValuePtr& source : sources) {
      if (!sources_.count(source.get())) sources_[source.get()] = Variable(source);
    }
  }

  /*! \brief Walks back from `roots` to the sources (iteratively: chains may be long). */
  void Add(const std::vector<ValuePtr>& roots) {
    std::vector<std::pair<std::shared_ptr<Pending>, size_t>> stack;
    auto visit = [&](const ValuePtr& value) {
      if (sources_.count(value.get())) {
        reached_.insert(value.get());
        return;
      }
      const std::shared_ptr<Pending>& producer = ProducerOf(*value);
      if (producer && visited_.insert(producer.get()).second) stack.emplace_back(producer, 0);
    };
    for (const ValuePtr& root : roots) {
      visit(root);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->inputs.size()) {
          visit(node->inputs[next++]);
          continue;
        }
        std::shared_ptr<Pending> done = std::move(node);
        stack.pop_back();
        Build(done);
      }
    }
  }

  /*! \brief The entry of `value`: a source's variable, its op node's output, else a constant. */
  NodeEntry EntryOf(const ValuePtr& value) {
    auto source = sources_.find(value.get());
    if (source != sources_.end()) return source->second;
    auto built = built_.find(ProducerOf(*value).get());
    if (built != built_.end()) {
      outputs_[built->second.get()][value->index] = value;
      return NodeEntry{built->second, value->index};
    }
    auto constant = constants_.find(value.get());
    if (constant == constants_.end()) constant = constants_.emplace(value.get(), Variable(value)).first;
    return constant->second;
  }

  bool Reached(const ValuePtr& source) const { return reached_.count(source.get()) > 0; }
  bool Contains(const Node* node) const { return bound_.count(node) || pending_.count(node); }

  /*! \brief The lazy value of output `index` of a region node: the one the forward pass made. */
  ValuePtr ValueOf(const Node* node, uint32_t index) {
    if (node->is_variable()) return bound_.at(node);
    ValuePtr& value = outputs_[node][index];
    if (!value) {  // an output no target read: a new value of the same node, hashed as ApplyN does
      const std::shared_ptr<Pending>& pending = pending_.at(node);
      value = std::make_shared<Array::Value>();
      value->node = pending;
      value->index = index;
      value->hash = Mix(pending->hash, index);
    }
    return value;
  }

 private:
  NodeEntry Variable(const ValuePtr& value) {
    NodePtr var = Node::CreateVariable("v" + std::to_string(bound_.size()));
    bound_[var.get()] = value;
    return NodeEntry{var, 0};
  }

  bool DependsOnSource(const ValuePtr& value) const {
    return sources_.count(value.get()) || built_.count(ProducerOf(*value).get());
  }

  /*! \brief An op node for `pending` (its inputs are built) when some input depends on a source. */
  void Build(const std::shared_ptr<Pending>& pending) {
    if (std::none_of(pending->inputs.begin(), pending->inputs.end(),
                     [&](const ValuePtr& input) { return DependsOnSource(input); })) {
      return;
    }
    std::vector<NodeEntry> inputs;
    for (const ValuePtr& input : pending->inputs) inputs.push_back(EntryOf(input));
    std::string name = pending->op->name + "_" + std::to_string(built_.size());
    NodePtr node = Node::Create(pending->op, name, pending->attrs, std::move(inputs));
    built_[pending.get()] = node;
    pending_[node.get()] = pending;
  }

  std::unordered_map<const Array::Value*, NodeEntry> sources_, constants_;
  std::unordered_set<const Array::Value*> reached_;
  std::unordered_set<const Pending*> visited_;
  /*! \brief Variable node -> the value it stands for. */
  std::unordered_map<const Node*, ValuePtr> bound_;
  std::unordered_map<const Pending*, NodePtr> built_;
  std::unordered_map<const Node*, std::shared_ptr<Pending>> pending_;
  /*! \brief Op node -> the values of its outputs that the walk met. */
  std::unordered_map<const Node*, std::unordered_map<uint32_t, ValuePtr>> outputs_;
};

/*!
 * \brief Records the gradient graph `grads` as lazy arrays: region nodes are the forward pass's
 * values, every other node is recorded with ApplyN (so it hashes and caches like any op).
 */
std::vector<Array> RecordBackward(const std::vector<NodeEntry>& grads, ForwardRegion* region) {
  std::unordered_map<const Node*, std::vector<Array>> recorded;
  auto array_of = [&](const NodeEntry& e) {
    if (region->Contains(e.node.get())) return Wrap(region->ValueOf(e.node.get(), e.index));
    return recorded.at(e.node.get()).at(e.index);
  };
  PostOrderDFSVisit(grads, [&](const NodePtr& node) {
    if (region->Contains(node.get())) return;
    IR_CHECK(!node->is_variable() && node->attrs.subgraphs.empty())
        << "GradientTape: " << NodeDesc(node->attrs) << " of the gradient cannot be recorded lazily";
    std::vector<Array> inputs;
    for (const NodeEntry& e : node->inputs) inputs.push_back(array_of(e));
    recorded[node.get()] = ApplyN(node->op()->name, inputs, SavedAttrs(node->attrs), node->num_outputs());
  });
  std::vector<Array> out;
  for (const NodeEntry& g : grads) out.push_back(array_of(g));
  return out;
}

const ValuePtr& ValueOf(const Array& array, const char* what) {
  IR_CHECK(array.defined()) << "GradientTape.gradient: undefined " << what;
  return array.cell()->value;
}

}  // namespace

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
  watched_.emplace_back(array.cell(), array.cell()->value);
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
    const ValuePtr& now = ValueOf(sources[i], "source");
    for (const auto& [cell, then] : watched_) {
      if (cell != sources[i].cell()) continue;
      for (const ValuePtr& v : {then, now}) {
        if (std::find(values[i].begin(), values[i].end(), v) == values[i].end()) values[i].push_back(v);
      }
    }
    all.insert(all.end(), values[i].begin(), values[i].end());
  }
  ForwardRegion region(all);
  std::vector<ValuePtr> roots;
  for (const Array& target : targets) roots.push_back(ValueOf(target, "target"));
  region.Add(roots);
  std::vector<NodeEntry> ys, head_entries, xs;
  for (const ValuePtr& root : roots) ys.push_back(region.EntryOf(root));
  for (const Array& head : heads) head_entries.push_back(region.EntryOf(ValueOf(head, "output gradient")));
  std::vector<ValuePtr> reached;
  for (const ValuePtr& v : all) {
    if (region.Reached(v) && std::find(reached.begin(), reached.end(), v) == reached.end()) {
      reached.push_back(v);
      xs.push_back(region.EntryOf(v));
    }
  }
  std::vector<Array> result(sources.size());
  if (xs.empty()) return result;
  GradientOptions options;
  options.simplify = false;  // keep the forward nodes: the backward pass reads their values
  std::vector<Array> grads = RecordBackward(Gradients(ys, xs, head_entries, options), &region);
  for (size_t i = 0; i < sources.size(); ++i) {
    for (const ValuePtr& v : values[i]) {
      size_t k = static_cast<size_t>(std::find(reached.begin(), reached.end(), v) - reached.begin());
      if (k == reached.size()) continue;
      result[i] = result[i].defined() ? result[i] + grads[k] : grads[k];
    }
  }
  return result;
}

}  // namespace lazy
}  // namespace ir
