/*!
 * \file lazy.cc
 * \brief Lazy arrays: recording with incremental hashes, traces cached by hash, materialization
 * through an Executor (see include/ir/lazy.h).
 */
#include "ir/lazy.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <unordered_map>

#include "ir/node.h"
#include "ir/op.h"
#include "runtime/lazy_internal.h"

namespace ir {
namespace lazy {

/*! \brief Releases long chains of pending nodes iteratively (no recursion depth limit). */
Pending::~Pending() {
  std::vector<ValuePtr> stack = std::move(inputs);
  while (!stack.empty()) {
    ValuePtr value = std::move(stack.back());
    stack.pop_back();
    if (value.use_count() != 1) continue;
    for (std::shared_ptr<Pending>* node : {&value->node, &value->origin}) {
      if (*node && node->use_count() == 1) {
        for (ValuePtr& input : (*node)->inputs) stack.push_back(std::move(input));
      }
    }
  }
}

namespace {

std::shared_ptr<Array::Cell> NewCell(ValuePtr value) {
  auto cell = std::make_shared<Array::Cell>();
  cell->value = std::move(value);
  return cell;
}

ValuePtr LeafValue(NDArray data) {
  IR_CHECK(data.defined()) << "lazy::Array: an undefined NDArray cannot be a leaf";
  auto value = std::make_shared<Array::Value>();
  value->hash = LeafHash(data);
  value->data = std::move(data);
  return value;
}

const ValuePtr& ValueOf(const Array& array) {
  IR_CHECK(array.defined()) << "lazy::Array: use of an undefined array";
  return array.cell()->value;
}

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

/*! \brief The pending DAG reachable from some values, in canonical (DFS post-) order. */
struct Trace {
  std::vector<const Array::Value*> roots;
  std::vector<const Array::Value*> leaves;
  std::vector<const Pending*> nodes;
  /*! \brief Per node its hash and input refs, then the root refs, then the leaf signatures. */
  std::vector<uint64_t> topology;
  uint64_t key = 0;

  explicit Trace(std::vector<const Array::Value*> requested) : roots(std::move(requested)) {
    std::unordered_map<const Array::Value*, size_t> leaf_index;
    std::unordered_map<const Pending*, size_t> node_index;
    std::vector<std::pair<const Pending*, size_t>> stack;
    auto visit = [&](const Array::Value* value) {
      if (!value->node) {
        if (leaf_index.emplace(value, leaves.size()).second) leaves.push_back(value);
      } else if (!node_index.count(value->node.get())) {
        node_index.emplace(value->node.get(), kOnStack);
        stack.emplace_back(value->node.get(), 0);
      }
    };
    for (const Array::Value* root : roots) {
      visit(root);
      while (!stack.empty()) {
        auto& [node, next] = stack.back();
        if (next < node->inputs.size()) {
          visit(node->inputs[next++].get());
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
    for (const Array::Value* root : roots) {
      EncodeRef(root, leaf_index, node_index, &topology);
      key = Mix(key, root->hash);
    }
    for (const Array::Value* leaf : leaves) {
      uint64_t signature = Mix(LeafHash(leaf->data), leaf->hash);
      topology.push_back(signature);
      key = Mix(key, signature);
    }
  }

  /*! \brief The trace as a graph: leaf i is placeholder "p<i>", node i is named "<op>_<i>". */
  Graph ToGraph() const {
    std::unordered_map<const Array::Value*, NodeEntry> entries;
    for (size_t i = 0; i < leaves.size(); ++i) {
      entries[leaves[i]] = NodeEntry{Node::CreateVariable("p" + std::to_string(i)), 0};
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
    for (const Array::Value* root : roots) outputs.push_back(entry_of(root));
    return Graph(std::move(outputs));
  }

  /*! \brief "sum_3 of leaves [4,3] float32, [3] float32": names the trace in errors. */
  std::string Describe() const {
    std::vector<std::string> leaf_text, root_text;
    for (const Array::Value* leaf : leaves) {
      leaf_text.push_back(StrCat(leaf->data.shape(), " ", DTypeName(leaf->data.dtype())));
    }
    for (const Array::Value* root : roots) {
      root_text.push_back(StrCat(root->node->op->name, "_", IndexOf(root->node.get())));
    }
    return StrCat(Join(root_text, ", "), " of leaves ", Join(leaf_text, ", "));
  }

 private:
  static constexpr size_t kOnStack = static_cast<size_t>(-1);
  size_t IndexOf(const Pending* node) const {
    return static_cast<size_t>(std::find(nodes.begin(), nodes.end(), node) - nodes.begin());
  }
};

}  // namespace

/*! \brief A compiled trace: its topology (to confirm a hit) and the Executor that runs it. */
struct CachedTrace {
  std::vector<uint64_t> topology;
  std::unique_ptr<Executor> executor;
  std::vector<std::string> feed_names;
};

class Context::Impl {
 public:
  explicit Impl(SessionOptions options) : options_(std::move(options)) {}

  /*! \brief Computes `trace` and returns one array per root. */
  std::vector<NDArray> Run(const Trace& trace) {
    auto found = cache_.find(trace.key);
    if (found != cache_.end() && found->second.topology == trace.topology) {
      ++stats_.cache_hits;
    } else {
      ++stats_.cache_misses;
      found = cache_.insert_or_assign(trace.key, Compile(trace)).first;
    }
    CachedTrace& cached = found->second;
    std::unordered_map<std::string, NDArray> feeds;
    for (size_t i = 0; i < trace.leaves.size(); ++i) feeds.emplace(cached.feed_names[i], trace.leaves[i]->data);
    try {
      std::vector<NDArray> outputs = cached.executor->Run(feeds);
      RunStats run = cached.executor->last_stats();
      stats_.kernels_launched += run.kernels_launched;
      stats_.traces_compiled += run.bound ? 1 : 0;
      return outputs;
    } catch (const Error& err) {
      cache_.erase(found);  // a trace that failed to bind is not kept: it would fail again
      throw Error(StrCat("lazy: materializing ", trace.Describe(), ": ", err.what()));
    }
  }

  SessionOptions options_;
  Stats stats_;
  std::unordered_map<uint64_t, CachedTrace> cache_;
  /*! \brief Variables persist here; traces only read placeholders today (Assign copies). */
  std::shared_ptr<VariableStore> variables_ = std::make_shared<VariableStore>();

 private:
  CachedTrace Compile(const Trace& trace) {
    CachedTrace cached;
    cached.topology = trace.topology;
    try {
      cached.executor = std::make_unique<Executor>(trace.ToGraph(), options_, variables_);
    } catch (const Error& err) {
      throw Error(StrCat("lazy: materializing ", trace.Describe(), ": ", err.what()));
    }
    for (size_t i = 0; i < trace.leaves.size(); ++i) cached.feed_names.push_back("p" + std::to_string(i));
    return cached;
  }
};

namespace {
thread_local Context* current_context = nullptr;
}  // namespace

Context::Context(SessionOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Context::~Context() = default;

Context& Context::Current() {
  if (current_context) return *current_context;
  thread_local Context default_context;
  return default_context;
}

Context::Scope::Scope(Context* context) : previous_(current_context) { current_context = context; }
Context::Scope::~Scope() { current_context = previous_; }

const SessionOptions& Context::options() const { return impl_->options_; }
const Stats& Context::stats() const { return impl_->stats_; }
Stats& Context::mutable_stats() { return impl_->stats_; }
void Context::ResetStats() { impl_->stats_ = Stats(); }
size_t Context::cache_size() const { return impl_->cache_.size(); }

Array::Array(NDArray value) : cell_(NewCell(LeafValue(std::move(value)))) {}
Array::Array(float scalar) : Array(NDArray::Scalar<float>(scalar)) {}

bool Array::is_pending() const { return defined() && cell_->value->node != nullptr; }

const NDArray& Array::Eval() const {
  Materialize({*this});
  return cell_->value->data;
}

Array& Array::Assign(const Array& value) {
  NDArray result = value.Eval();
  ValuePtr& old = cell_ ? cell_->value : (cell_ = NewCell(nullptr))->value;
  bool reuse = old && !old->node && old->data.shape() == result.shape() && old->data.dtype() == result.dtype();
  if (!reuse) {
    // A buffer of our own: sharing `value`'s would let a later in-place Assign change it too.
    NDArray buffer(result.shape(), result.dtype(), result.device());
    buffer.CopyFrom(result);
    old = LeafValue(std::move(buffer));
    return *this;
  }
  if (old->data.Overlaps(result)) return *this;  // a.Assign(a)
  if (old.use_count() > 1) {
    // Pending nodes recorded before the assignment read the old value: give them a snapshot
    // and keep the buffer (and its holders) with this array.
    auto fresh = std::make_shared<Value>(*old);
    old->data = old->data.CopyTo(old->data.device());
    old = std::move(fresh);
  }
  old->data.CopyFrom(result);
  return *this;
}

Array& Array::operator+=(const Array& rhs) { return Assign(*this + rhs); }
Array& Array::operator-=(const Array& rhs) { return Assign(*this - rhs); }
Array& Array::operator*=(const Array& rhs) { return Assign(*this * rhs); }

std::vector<Array> ApplyN(const std::string& op, const std::vector<Array>& inputs,
                          const std::map<std::string, std::string>& attrs, uint32_t num_outputs) {
  uint64_t start = NowNs();
  auto node = std::make_shared<Pending>();
  node->op = Op::Get(op);
  node->attrs = attrs;
  uint64_t h = Mix(0x6f70, reinterpret_cast<uintptr_t>(node->op));
  for (const auto& [key, text] : attrs) h = Mix(Mix(h, std::hash<std::string>()(key)), std::hash<std::string>()(text));
  node->inputs.reserve(inputs.size());
  for (const Array& input : inputs) {
    node->inputs.push_back(ValueOf(input));
    h = Mix(h, node->inputs.back()->hash);
  }
  node->hash = h;
  std::vector<Array> outputs;
  outputs.reserve(num_outputs);
  for (uint32_t i = 0; i < num_outputs; ++i) {
    auto value = std::make_shared<Array::Value>();
    value->node = node;
    value->index = i;
    value->hash = Mix(h, i);
    outputs.emplace_back(NewCell(std::move(value)));
  }
  Stats& stats = Context::Current().mutable_stats();
  stats.ops_recorded += 1;
  stats.record_ns += NowNs() - start;
  return outputs;
}

Array Apply(const std::string& op, const std::vector<Array>& inputs, const std::map<std::string, std::string>& attrs) {
  return std::move(ApplyN(op, inputs, attrs, 1)[0]);
}

void Materialize(const std::vector<Array>& arrays) {
  std::vector<const Array::Value*> roots;
  for (const Array& array : arrays) {
    const Array::Value* value = ValueOf(array).get();
    if (value->node && std::find(roots.begin(), roots.end(), value) == roots.end()) roots.push_back(value);
  }
  if (roots.empty()) return;
  Context& context = Context::Current();
  uint64_t start = NowNs();
  Trace trace(roots);
  std::vector<NDArray> outputs = context.impl().Run(trace);
  for (size_t i = 0; i < roots.size(); ++i) {
    auto* value = const_cast<Array::Value*>(roots[i]);
    value->data = std::move(outputs[i]);
    if (ActiveTapes() > 0) value->origin = value->node;  // the tape differentiates through it
    value->node.reset();                                 // frees the pending DAG nothing else references
  }
  context.mutable_stats().execute_ns += NowNs() - start;
}

// First version: materializes (lazy inference over the pending DAG replaces it).
Shape ShapeOf(const Array& array) { return array.Eval().shape(); }
DType DTypeOf(const Array& array) { return array.Eval().dtype(); }

void AssignAll(const std::vector<Array>& targets, const std::vector<Array>& values) {
  IR_CHECK(targets.size() == values.size()) << "lazy::AssignAll: one value per target";
  Materialize(values);
  for (size_t i = 0; i < targets.size(); ++i) const_cast<Array&>(targets[i]).Assign(values[i]);
}

Array operator+(const Array& lhs, const Array& rhs) { return Apply("add", {lhs, rhs}); }
Array operator-(const Array& lhs, const Array& rhs) { return Apply("subtract", {lhs, rhs}); }
Array operator*(const Array& lhs, const Array& rhs) { return Apply("multiply", {lhs, rhs}); }
Array operator/(const Array& lhs, const Array& rhs) { return Apply("divide", {lhs, rhs}); }
Array operator-(const Array& x) { return Apply("negative", {x}); }
Array exp(const Array& x) { return Apply("exp", {x}); }
Array log(const Array& x) { return Apply("log", {x}); }
Array relu(const Array& x) { return Apply("relu", {x}); }

namespace {
Array Reduce(const std::string& op, const Array& x, const std::vector<int>& axes, bool keepdims) {
  std::map<std::string, std::string> attrs;
  if (!axes.empty()) attrs["axis"] = "[" + Join(axes, ",") + "]";
  if (keepdims) attrs["keepdims"] = "true";
  return Apply(op, {x}, attrs);
}
}  // namespace

Array sum(const Array& x, const std::vector<int>& axes, bool keepdims) { return Reduce("sum", x, axes, keepdims); }
Array mean(const Array& x, const std::vector<int>& axes, bool keepdims) { return Reduce("mean", x, axes, keepdims); }

Array matmul(const Array& a, const Array& b, bool transpose_a, bool transpose_b) {
  std::map<std::string, std::string> attrs;
  if (transpose_a) attrs["transpose_a"] = "true";
  if (transpose_b) attrs["transpose_b"] = "true";
  return Apply("matmul", {a, b}, attrs);
}

}  // namespace lazy
}  // namespace ir
