/*!
 * \file lazy_trace.cc
 * \brief Materialization of lazy arrays: the trace (the pending DAG reachable from the roots,
 * in canonical order), the live and foreign roots, the in-place check, the claims of values in
 * flight and the write-back (see include/ir/lazy.h).
 */
#include "runtime/lazy/lazy_trace.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/node.h"

namespace ir {
namespace lazy {
namespace {

/*! \brief A reference to a trace value in the topology encoding: leaf i, or output of node i. */
void EncodeRef(const Array::Value* value, const std::unordered_map<const Array::Value*, size_t>& leaves,
               const std::unordered_map<const Pending*, size_t>& nodes, std::vector<uint64_t>* code) {
  if (value->node) {
    code->push_back(nodes.at(value->node.get()) + 1);
    code->push_back(value->index);
  } else {
    code->push_back(0);
    code->push_back(leaves.at(value));
  }
}

}  // namespace

Trace::Trace(std::vector<ValuePtr> requested, uint64_t context) : roots(std::move(requested)) {
  std::unordered_map<const Array::Value*, size_t> leaf_index;
  std::unordered_map<const Pending*, size_t> node_index;
  std::unordered_set<const Array::Value*> is_root;
  for (const ValuePtr& root : roots) is_root.insert(root.get());
  std::vector<std::pair<const Pending*, size_t>> stack;
  auto visit = [&](const ValuePtr& value) {
    if (value->claimed_by == std::this_thread::get_id()) {
      throw Error(
          "lazy: a host callback needs a value its own trace is computing (the callback reads its own "
          "result): it can never be computed");
    }
    busy = busy || value->claimed_by != std::thread::id();
    if (!value->node) {
      if (leaf_index.emplace(value.get(), leaves.size()).second) leaves.push_back(value);
      return;
    }
    if (value->node->context != context && is_root.insert(value.get()).second) foreign.push_back(value);
    if (!node_index.count(value->node.get())) {
      node_index.emplace(value->node.get(), kOnStack);
      stack.emplace_back(value->node.get(), 0);
    }
  };
  for (const ValuePtr& root : roots) {
    visit(root);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs.size()) {
        visit(node->inputs[next++]);
        continue;
      }
      const Pending* done = node;
      stack.pop_back();
      topology.push_back(done->hash);
      for (const ValuePtr& input : done->inputs) EncodeRef(input.get(), leaf_index, node_index, &topology);
      node_index[done] = nodes.size();
      nodes.push_back(done);
    }
  }
  key = 0x7472616365;
  for (const ValuePtr& root : roots) {
    EncodeRef(root.get(), leaf_index, node_index, &topology);
    key = Mix(key, root->hash);
  }
  for (const ValuePtr& leaf : leaves) {
    uint64_t signature = Mix(LeafHash(leaf->data), leaf->hash);
    topology.push_back(signature);
    key = Mix(key, signature);
  }
  variable.assign(leaves.size(), false);
  for (const ValuePtr& root : roots) {
    if (IsAssign(root.get())) variable[leaf_index.at(root->node->inputs[0].get())] = true;
  }
}

Graph Trace::ToGraph() const {
  std::unordered_map<const Array::Value*, NodeEntry> entries;
  for (size_t i = 0; i < leaves.size(); ++i) {
    std::map<std::string, std::string> kind{{"__kind__", variable[i] ? "variable" : "placeholder"}};
    entries[leaves[i].get()] = NodeEntry{Node::CreateVariable("p" + std::to_string(i), kind), 0};
  }
  std::unordered_map<const Pending*, NodePtr> built;
  auto entry_of = [&](const Array::Value* value) {
    return value->node ? NodeEntry{built.at(value->node.get()), value->index} : entries.at(value);
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::vector<NodeEntry> inputs;
    for (const ValuePtr& input : nodes[i]->inputs) inputs.push_back(entry_of(input.get()));
    std::string name = nodes[i]->op->name + "_" + std::to_string(i);
    built[nodes[i]] = Node::Create(nodes[i]->op, name, nodes[i]->attrs, std::move(inputs));
  }
  std::vector<NodeEntry> outputs;
  std::vector<NodePtr> assigns;
  for (const ValuePtr& root : roots) {
    if (IsAssign(root.get())) {
      assigns.push_back(built.at(root->node.get()));
    } else {
      outputs.push_back(entry_of(root.get()));
    }
  }
  if (!assigns.empty()) {
    NodePtr token = Node::Create(Op::Get("no_op"), "assignments", {}, {});
    token->control_deps = std::move(assigns);
    outputs.push_back(NodeEntry{token, 0});
  }
  return Graph(std::move(outputs));
}

std::string Trace::Describe() const {
  std::vector<std::string> leaf_text, root_text;
  for (const ValuePtr& leaf : leaves) {
    leaf_text.push_back(StrCat(leaf->data.shape(), " ", DTypeName(leaf->data.dtype())));
  }
  for (const ValuePtr& root : roots) {
    root_text.push_back(StrCat(root->node->op->name, "_", IndexOf(root->node.get())));
  }
  return StrCat(Join(root_text, ", "), " of leaves ", Join(leaf_text, ", "));
}

namespace {

/*! \brief `roots` in recording order: the trace key does not depend on the order of a request. */
std::vector<ValuePtr> InRecordingOrder(std::vector<ValuePtr> roots) {
  std::sort(roots.begin(), roots.end(), [](const ValuePtr& a, const ValuePtr& b) {
    return a->node->seq != b->node->seq ? a->node->seq < b->node->seq : a->index < b->index;
  });
  return roots;
}

/*!
 * \brief The trace of the requested and live roots, under `dag`; its live roots (not requested)
 * in *live. Waits while another trace computes one of its values. A pending value of another
 * Context becomes a root. On a cache miss the live roots are inferred first: one that is invalid
 * is left out (it throws when requested itself, not in others' traces).
 */
Trace TraceOf(Context::Impl& impl, const std::vector<ValuePtr>& requested,
              const std::unordered_set<const Array::Value*>& skip, DagLock& dag, std::vector<ValuePtr>* live) {
  for (;;) {
    size_t live_start = 0;
    std::vector<ValuePtr> roots = impl.Roots(requested, skip, &live_start);
    Trace trace(InRecordingOrder(roots), impl.id_);
    if (trace.busy) {
      WaitForValuesInFlight(dag);
      continue;
    }
    live->assign(roots.begin() + static_cast<std::ptrdiff_t>(live_start), roots.end());
    roots.resize(live_start);
    for (const ValuePtr& value : trace.foreign) {
      if (!skip.count(value.get())) roots.push_back(value);
    }
    bool rebuild = roots.size() > live_start;
    if (!rebuild && impl.Cached(trace)) return trace;
    auto valid_end = std::remove_if(live->begin(), live->end(), [](const ValuePtr& v) { return !InferPending(*v); });
    rebuild = rebuild || valid_end != live->end();
    live->erase(valid_end, live->end());
    if (!rebuild) return trace;
    roots.insert(roots.end(), live->begin(), live->end());
    return Trace(InRecordingOrder(std::move(roots)), impl.id_);
  }
}

/*!
 * \brief Whether `assign`'s value has its variable's shape and dtype (inferred, so known; or
 * computed already, e.g. as a live array of another thread's trace in a shared Context).
 */
bool SameShapeAndType(const Pending& assign) {
  const Array::Value& value = *assign.inputs[1];
  if (!InferPending(value)) return false;
  const NDArray& variable = assign.inputs[0]->data;
  if (!value.node) return value.data.shape() == variable.shape() && value.data.dtype() == variable.dtype();
  return value.node->shapes[value.index] == variable.shape() && value.node->dtypes[value.index] == variable.dtype();
}

/*!
 * \brief Whether each assigned leaf of `trace` can be written in place: its only holders are
 * its cell, the trace (its leaves) and the trace's nodes (which run before the write or are
 * freed after it), its buffer is on the target and overlaps no other leaf, and (checked on a
 * miss: a hit ran before with the same shapes) the value has its shape and dtype. Under DagMutex.
 */
bool CanWriteInPlace(const Trace& trace, const Device& device, bool cached) {
  std::unordered_map<const Array::Value*, long> readers;
  for (const Pending* node : trace.nodes) {
    for (const ValuePtr& input : node->inputs) readers[input.get()] += input->node ? 0 : 1;
  }
  for (const ValuePtr& root : trace.roots) {
    if (!Trace::IsAssign(root.get())) continue;
    const ValuePtr& target = root->node->inputs[0];
    if (target.use_count() != 2 + readers[target.get()] || target->data.device() != device) return false;
    if (!cached && !SameShapeAndType(*root->node)) return false;
    for (const ValuePtr& leaf : trace.leaves) {
      if (leaf != target && leaf->data.Overlaps(target->data)) return false;
    }
  }
  return true;
}

/*!
 * \brief Claims a trace's roots for this thread while it runs (the walk waited for or refused any
 * claimed already); releases them and wakes the waiters at its end. Under DagMutex.
 */
class Claim {
 public:
  explicit Claim(const std::vector<ValuePtr>& roots) : roots_(roots) {
    for (const ValuePtr& root : roots_) root->claimed_by = std::this_thread::get_id();
  }
  ~Claim() {
    DagLock dag(DagMutex());
    for (const ValuePtr& root : roots_) root->claimed_by = std::thread::id();
    NotifyValuesDone();
  }
  Claim(const Claim&) = delete;
  Claim& operator=(const Claim&) = delete;

 private:
  const std::vector<ValuePtr>& roots_;
};

/*!
 * \brief Runs `trace` (its roots claimed) and makes its roots leaves. Entered and left with `dag`
 * held; the nodes it frees are moved to *freed (released by the caller, outside the lock).
 */
void RunAndStore(Context::Impl& impl, const Trace& trace, DagLock& dag, std::vector<std::shared_ptr<Pending>>* freed) {
  Claim claim(trace.roots);
  std::vector<NDArray> outputs = impl.Run(trace, dag);
  for (size_t i = 0; i < trace.roots.size(); ++i) {
    Array::Value& value = *trace.roots[i];
    value.data = std::move(outputs[i]);
    if (ActiveTapes() > 0) value.origin = value.node;  // the tape differentiates through it
    freed->push_back(std::move(value.node));           // frees the pending DAG nothing else references
  }
}

}  // namespace

bool MaterializeAssigning(const std::vector<ValuePtr>& requested, const std::vector<ValuePtr>& assigns,
                          const std::unordered_set<const Array::Value*>& skip) {
  Context& context = Context::Current();
  Context::Impl& impl = context.impl();
  uint64_t start = NowNs();
  std::vector<ValuePtr> wanted = requested;
  wanted.insert(wanted.end(), assigns.begin(), assigns.end());
  std::vector<std::shared_ptr<Pending>> freed;  // declared first: released after the locks
  std::lock_guard<std::recursive_mutex> run(impl.run_mutex_);
  DagLock dag(DagMutex());
  for (;;) {
    std::vector<ValuePtr> live;
    Trace trace = TraceOf(impl, wanted, skip, dag, &live);
    if (!assigns.empty() && !CanWriteInPlace(trace, impl.device_, impl.Cached(trace))) return false;
    if (trace.roots.empty()) return true;
    try {
      RunAndStore(impl, trace, dag, &freed);
      break;
    } catch (const Error&) {
      // The error may be a live array's only: those are computed when requested from now on, and
      // the requested ones again without them (if they fail then, the error is theirs).
      if (live.empty()) throw;
      for (const ValuePtr& value : live) value->node->isolated = true;
    }
  }
  Stats delta;
  delta.execute_ns = NowNs() - start;
  impl.AddStats(delta);
  return true;
}

void Materialize(const std::vector<Array>& arrays) {
  std::vector<ValuePtr> requested;
  requested.reserve(arrays.size());
  for (const Array& array : arrays) requested.push_back(ValueOf(array));
  MaterializeAssigning(requested, {}, {});
}

}  // namespace lazy
}  // namespace ir
