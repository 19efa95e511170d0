/*!
 * \file graph_executor.cc
 * \brief Executor: binds a graph per input signature (plans are cached) and runs it node by
 * node in topological order over a Workspace of the plan that only this run uses.
 */
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include "ir/collective.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ir/runtime.h"
#include "runtime/executor/body_executors.h"
#include "runtime/executor/bound_plan.h"
#include "runtime/executor/graph_inputs.h"
#include "runtime/executor/host_fallback.h"
#include "runtime/executor/plan_cache.h"

namespace ir {

using runtime::BoundPlan;
using runtime::Workspace;

namespace {

/*!
 * \brief Waits for a run's queued device work when the run ends, by an error too. A run then
 * returns with its work done: run_ms is true, and a process exiting right after a run leaves
 * nothing queued (POCL compiles a kernel on its worker thread at first launch; exiting then
 * let static destructors tear LLVM down under that thread, which crashed).
 */
class DeviceWait {
 public:
  explicit DeviceWait(Device device) : api_(device.type == DeviceType::kCPU ? nullptr : DeviceAPI::Get(device)) {}
  DeviceWait(const DeviceWait&) = delete;
  DeviceWait& operator=(const DeviceWait&) = delete;
  ~DeviceWait() {
    try {
      Wait();
    } catch (const Error&) {
      // Unwinding from the run's own error, which is the one to report.
    }
  }
  /*! \brief Waits now; throws the device's error. */
  void Wait() {
    DeviceAPI* api = api_;
    api_ = nullptr;
    if (api != nullptr) api->Synchronize();
  }

 private:
  DeviceAPI* api_;
};

}  // namespace

class Executor::Impl {
 public:
  Impl(Graph graph, SessionOptions options, std::shared_ptr<VariableStore> variables)
      : options_(std::move(options)), device_(Device::Parse(options_.target)), variables_(std::move(variables)) {
    IR_CHECK(variables_ != nullptr) << "Executor needs a VariableStore";
    Graph g = std::move(graph);  // graph-level attributes pass on (e.g. dump_filter)
    if (!options_.dump_dir.empty()) g.SetAttr("dump_dir", options_.dump_dir);
    // Reads before writes is semantics, not optimization: it runs whatever the pipeline is.
    graph_ = ApplyPass(std::move(g), "OrderMutations");
    inputs_ = runtime::ClassifyInputs(graph_);
    updates_variables_ =
        std::any_of(inputs_.begin(), inputs_.end(), [](const runtime::GraphInput& input) { return input.mutated; }) ||
        runtime::BodiesUpdateVariables(graph_);
  }

  std::vector<NDArray> Run(const std::unordered_map<std::string, NDArray>& feeds) {
    return Run(feeds, run_count_.fetch_add(1));
  }

  std::vector<NDArray> Run(const std::unordered_map<std::string, NDArray>& feeds, uint64_t run_number) {
    std::shared_lock<std::shared_mutex> reading;
    std::unique_lock<std::shared_mutex> updating;
    if (updates_variables_) {
      updating = variables_->LockForUpdate();
    } else {
      reading = variables_->LockForRead();
    }
    DeviceWait device_wait(device_);  // before the locks are released
    RunStats stats;
    std::vector<NDArray> outputs = RunLocked(feeds, run_number, false, &stats, Links());
    device_wait.Wait();
    std::lock_guard<std::mutex> lock(last_mutex_);
    last_stats_ = std::move(stats);
    return outputs;
  }

  /*!
   * \brief A body's run inside an outer run, which holds the store's lock and waits for the device;
   * `records` travel with the feeds of their names and come back with the outputs, whose producers
   * keep one for `call.output_gradients`.
   */
  BodyResult RunNested(const std::unordered_map<std::string, NDArray>& feeds, const BodyCall& call,
                       const std::unordered_map<std::string, ForwardRecordPtr>& records, uint64_t run_number,
                       RunStats* outer) {
    RunStats stats;
    BodyResult result;
    Links links{&records, &call.output_gradients, &result.records};
    result.outputs = RunLocked(feeds, run_number, true, &stats, links);
    outer->kernels_launched += stats.kernels_launched;
    outer->host_fallbacks += stats.host_fallbacks;
    for (std::string& name : stats.pfor_fallbacks) outer->pfor_fallbacks.push_back(std::move(name));
    for (std::string& name : stats.rewrites) outer->rewrites.push_back(std::move(name));
    outer->bind_ms += stats.bind_ms;
    outer->bound = outer->bound || stats.bound;
    for (NodeProfile& node : stats.nodes) outer->nodes.push_back(std::move(node));
    return result;
  }

  /*! \brief How a body's run links to the records outside it (see BodyCall); any may be null. */
  struct Links {
    const std::unordered_map<std::string, ForwardRecordPtr>* feeds = nullptr;
    const std::vector<const NodeAttrs*>* output_gradients = nullptr;
    std::vector<ForwardRecordPtr>* outputs = nullptr;
  };

  /*!
   * \brief Binds (or finds the plan) and runs every node; the caller holds the store's lock. A
   * body's run also takes the records of its params by name and gives those of its outputs.
   */
  std::vector<NDArray> RunLocked(const std::unordered_map<std::string, NDArray>& feeds, uint64_t run_number,
                                 bool nested, RunStats* stats_out, const Links& links) {
    auto start = std::chrono::steady_clock::now();
    RunStats& stats = *stats_out;
    std::vector<NDArray> values = runtime::ResolveInputs(inputs_, feeds, variables_.get(), device_);
    // Two captures fit std::function's inline buffer: no allocation per run.
    runtime::PlanCache::Lease lease = plans_.Checkout(
        runtime::SignatureOf(values),
        [this, &values] { return runtime::Bind(graph_, inputs_, values, options_, device_); }, device_);
    const BoundPlan& plan = lease.plan();
    if (lease.bound()) {
      stats.bound = true;
      stats.bind_ms = plan.bind_ms;
    }
    CheckBoundInputs(plan, values);
    RunContext run{plan, lease.workspace(), InputData(plan, values), run_number, &stats, {}, {}, {}, {}, {}};
    if (plan.dynamic) run.shapes = plan.shapes;
    const IndexedGraph& idx = plan.graph.indexed_graph();
    bool linked = (links.feeds != nullptr && !links.feeds->empty()) ||
                  (links.output_gradients != nullptr && !links.output_gradients->empty());
    if (plan.records || linked) PlaceRecords(&run, links);
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      if (!idx[nid].source->is_variable()) RunNode(&run, nid);
    }
    std::vector<NDArray> outputs = Fetch(plan, run.data, nested);
    for (const IndexedGraph::Entry& out : idx.outputs()) {
      if (links.outputs == nullptr) break;
      links.outputs->push_back(run.records.empty() ? nullptr : run.records[idx.entry_id(out)]);
    }
    for (const char* key : {"vectorize.fallbacks", "simplify.fired"}) {
      if (!plan.graph.HasAttr(key)) continue;
      auto& into = std::string(key) == "simplify.fired" ? stats.rewrites : stats.pfor_fallbacks;
      for (const std::string& name : plan.graph.GetAttr<std::vector<std::string>>(key)) into.push_back(name);
    }
    stats.bytes_allocated = plan.pool_bytes;
    stats.bytes_without_reuse = plan.no_reuse_bytes;
    stats.memory_lower_bound_bytes = plan.lower_bound_bytes;
    double total = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    stats.run_ms = total - stats.bind_ms;
    std::lock_guard<std::mutex> lock(last_mutex_);
    last_graph_ = &plan.graph;
    return outputs;
  }

  RunStats last_stats() const {
    std::lock_guard<std::mutex> lock(last_mutex_);
    return last_stats_;
  }
  const Graph& bound_graph() const {
    std::lock_guard<std::mutex> lock(last_mutex_);
    IR_CHECK(last_graph_ != nullptr) << "the executor has not run yet: no bound graph";
    return *last_graph_;  // plans stay in plans_ as long as the executor
  }

 private:
  /*! \brief What one run works on: its plan, its buffers, its values per entry, its number and stats. */
  struct RunContext {
    const BoundPlan& plan;
    const Workspace& workspace;
    std::vector<NDArray> data;
    uint64_t run_number;
    RunStats* stats;
    /*! \brief The current node's input and output arrays. */
    std::vector<NDArray> in, out;
    /*! \brief A dynamic plan's shapes as this run finds them (empty for a static plan). */
    ShapeVector shapes;
    /*! \brief Per entry, the record travelling with its value (empty when the plan reads none). */
    std::vector<ForwardRecordPtr> records;
    /*! \brief Per node, the gradient node it keeps a record for: the plan's, and the caller's for outputs. */
    std::vector<const NodeAttrs*> gradients;
  };

  /*! \brief Tracks records per entry: the params' records placed, the outputs' producers told to keep them. */
  static void PlaceRecords(RunContext* run, const Links& links) {
    const IndexedGraph& idx = run->plan.graph.indexed_graph();
    run->records.assign(idx.num_node_entries(), nullptr);
    run->gradients = run->plan.gradient;
    for (uint32_t nid : idx.input_nodes()) {
      if (links.feeds == nullptr) break;
      auto it = links.feeds->find(idx[nid].source->attrs.name);
      if (it != links.feeds->end()) run->records[idx.entry_id(nid, 0)] = it->second;
    }
    for (size_t k = 0;
         links.output_gradients != nullptr && k < links.output_gradients->size() && k < idx.outputs().size(); ++k) {
      const IndexedGraph::Entry& out = idx.outputs().at(k);
      const NodeAttrs* gradient = (*links.output_gradients)[k];
      if (gradient == nullptr || out.index != 0 || run->plan.control_flow[out.node_id] == nullptr) continue;
      if (run->gradients[out.node_id] == nullptr) run->gradients[out.node_id] = gradient;
    }
  }

  /*! \brief The shape of entry `eid` in this run: the plan's, or as found so far in a dynamic run. */
  static const Shape& ShapeOf(const RunContext& run, uint32_t eid) {
    return run.plan.dynamic ? run.shapes[eid] : run.plan.shapes[eid];
  }

  /*!
   * \brief In a dynamic run, the output shapes of node `nid` left unknown at bind, inferred by its
   * op from the shapes of the arrays it reads.
   */
  void InferRunShapes(RunContext* run, uint32_t nid) const {
    const IndexedGraph& idx = run->plan.graph.indexed_graph();
    const NodeAttrs& attrs = idx[nid].source->attrs;
    std::vector<Shape> in, out;
    bool known = true;
    for (uint32_t j = 0; j < idx.num_outputs(nid); ++j) {
      out.push_back(run->shapes[idx.entry_id(nid, j)]);
      known = known && out.back().is_known();
    }
    if (known) return;
    for (const NDArray& a : run->in) in.push_back(a.shape());
    Op::GetAttr<FInferShape>("FInferShape")[attrs.op](attrs, &in, &out);
    for (uint32_t j = 0; j < out.size(); ++j) {
      std::vector<std::string> shapes;
      for (const Shape& shape : in) shapes.push_back(shape.ToString());
      IR_CHECK(out[j].is_known()) << NodeDesc(attrs) << ": cannot tell the shape of output " << j
                                  << " from its inputs' shapes " << Join(shapes, ", ");
      run->shapes[idx.entry_id(nid, j)] = out[j];
    }
  }

  /*! \brief Passes may refine but never change an input's shape; a change is a bug worth naming. */
  void CheckBoundInputs(const BoundPlan& plan, const std::vector<NDArray>& values) const {
    const IndexedGraph& idx = plan.graph.indexed_graph();
    const ShapeVector& shapes = plan.shapes;
    const DTypeVector& dtypes = plan.dtypes;
    for (size_t k = 0; k < idx.input_nodes().size(); ++k) {
      const NDArray& value = values[plan.input_index[k]];
      uint32_t eid = idx.entry_id(idx.input_nodes()[k], 0);
      IR_CHECK(!value.defined() || (shapes[eid] == value.shape() && dtypes[eid] == value.dtype()))
          << "input '" << inputs_[plan.input_index[k]].name << "' is " << DTypeName(value.dtype()) << value.shape()
          << " but the plan was bound with " << DTypeName(dtypes[eid]) << shapes[eid];
    }
  }

  /*! \brief Per entry of the bound graph: the input values placed at the input nodes. */
  std::vector<NDArray> InputData(const BoundPlan& plan, const std::vector<NDArray>& values) const {
    const IndexedGraph& idx = plan.graph.indexed_graph();
    std::vector<NDArray> data(idx.num_node_entries());
    for (size_t k = 0; k < idx.input_nodes().size(); ++k) {
      data[idx.entry_id(idx.input_nodes()[k], 0)] = values[plan.input_index[k]];
    }
    return data;
  }

  /*!
   * \brief The array of input `k` of node `nid`. An undefined one is an uninitialized variable:
   * an op that overwrites it allocates and stores it, anything else is an error.
   */
  NDArray InputArray(RunContext* run, uint32_t nid, uint32_t k) {
    const BoundPlan& plan = run->plan;
    const IndexedGraph& idx = plan.graph.indexed_graph();
    const IndexedGraph::Entry& in = idx[nid].inputs[k];
    NDArray& value = run->data[idx.entry_id(in)];
    if (value.defined()) return value;
    const std::string& var = idx[in.node_id].source->attrs.name;
    const std::vector<uint32_t>& overwrites = plan.overwritten[nid];
    bool overwritten = std::find(overwrites.begin(), overwrites.end(), k) != overwrites.end();
    IR_CHECK(overwritten) << "variable '" << var << "' is not initialized (run its initializer first); node '"
                          << idx[nid].source->attrs.name << "' (op " << idx[nid].source->op()->name << ") reads it";
    uint32_t eid = idx.entry_id(in);
    value = NDArray(plan.shapes[eid], plan.dtypes[eid], device_);
    variables_->Set(var, value);
    return value;
  }

  /*! \brief Output `j` of node `nid`: its view in the run's pool, fresh storage, or the input it aliases. */
  NDArray OutputArray(const RunContext& run, uint32_t nid, uint32_t j, const std::vector<NDArray>& in) const {
    const BoundPlan& plan = run.plan;
    const IndexedGraph& idx = plan.graph.indexed_graph();
    uint32_t eid = idx.entry_id(nid, j);
    int sid = plan.storage_id[eid];
    if (sid >= 0) return run.workspace.views[eid];
    if (sid == -2) return NDArray(ShapeOf(run, eid), plan.dtypes[eid], device_);
    int alias = plan.inplace_index[eid];
    IR_CHECK(alias >= 0 && alias < static_cast<int>(in.size()))
        << "node '" << idx[nid].source->attrs.name << "' output " << j
        << " has external storage but aliases no input (storage_inplace_index " << alias << ")";
    return in[alias];
  }

  void RunNode(RunContext* run, uint32_t nid) {
    const BoundPlan& plan = run->plan;
    const IndexedGraph& idx = plan.graph.indexed_graph();
    std::vector<NDArray>& in = run->in;  // reused node to node: no allocation per node
    std::vector<NDArray>& out = run->out;
    in.clear();
    out.clear();
    for (uint32_t k = 0; k < idx[nid].inputs.size(); ++k) in.push_back(InputArray(run, nid, k));
    bool control_flow = plan.control_flow[nid] != nullptr;  // its bodies' results are its outputs
    bool allocates = control_flow || plan.shaped[nid] != nullptr;
    if (plan.dynamic && !allocates) InferRunShapes(run, nid);
    for (uint32_t j = 0; j < idx.num_outputs(nid) && !allocates; ++j) {
      out.push_back(OutputArray(*run, nid, j, in));
      run->data[idx.entry_id(nid, j)] = out.back();
    }
    OpContext ctx;
    ctx.device = device_;
    ctx.is_train = options_.is_train;
    ctx.seed = runtime::SplitMix64(plan.seed_base[nid] ^ runtime::SplitMix64(run->run_number));
    const NodeAttrs& attrs = idx[nid].source->attrs;
    auto start = options_.profile ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    const double timeline_begin = collective::TimelineEnabled() ? collective::Microseconds() : -1;
    if (control_flow) {
      RunControlFlow(run, nid, ctx);
    } else if (plan.shaped[nid] != nullptr) {
      StoreResults(run, nid, (*plan.shaped[nid])(ctx, attrs, in));
      ++run->stats->kernels_launched;
    } else if (plan.on_host[nid]) {
      runtime::RunOnHost(plan.kernels[nid], ctx, attrs, in, out, plan.mutated[nid]);
      ++run->stats->host_fallbacks;
      ++run->stats->kernels_launched;
    } else {
      plan.kernels[nid](ctx, attrs, in, out);
      ++run->stats->kernels_launched;
    }
    if (options_.profile) Profile(run, nid, start);
    if (timeline_begin >= 0) {
      collective::TimelineRecord(attrs.name, attrs.op->name, timeline_begin, collective::Microseconds());
    }
  }

  /*!
   * \brief Runs a control-flow node: its FControlFlow runs bodies through executors of their own
   * (bound per input signature, reused every iteration); its outputs are the arrays they return.
   */
  void RunControlFlow(RunContext* run, uint32_t nid, const OpContext& base) {
    const BoundPlan& plan = run->plan;
    const IndexedGraph& idx = plan.graph.indexed_graph();
    const NodeAttrs& attrs = idx[nid].source->attrs;
    OpContext ctx = base;
    ForwardRecordPtr made;
    if (!run->records.empty()) {  // a gradient node reads its forward's record; a forward node keeps one
      if (plan.forward_input[nid] >= 0) {
        ForwardRecordPtr& slot = run->records[idx.entry_id(idx[nid].inputs[plan.forward_input[nid]])];
        ctx.forward = plan.takes_record[nid] ? std::move(slot) : slot;
      }
      ctx.gradient = run->gradients[nid];
      if (ctx.gradient != nullptr) ctx.record = &made;
    }
    BodyRunner run_body([this, run, &attrs](const BodyCall& call) {
      IR_CHECK(call.body != nullptr || call.index < attrs.subgraphs.size())
          << NodeDesc(attrs) << " has no body " << call.index;
      const Subgraph& subgraph = call.body != nullptr ? *call.body : *attrs.subgraphs[call.index];
      runtime::BodyExecutors::Body& body = bodies_.Get(subgraph, call.donate, options_, variables_);
      uint64_t number = runtime::SplitMix64(run->run_number ^ runtime::SplitMix64(call.key + 0x5bd1e995u));
      return body.executor->impl_->RunNested(body.Feeds(attrs, call.index, call.args), call,
                                             body.FeedRecords(call.records), number, run->stats);
    });
    StoreResults(run, nid, (*plan.control_flow[nid])(ctx, attrs, run->in, run_body));
    if (made) run->records[idx.entry_id(nid, 0)] = std::move(made);
  }

  /*!
   * \brief Makes `results`, the arrays a node computed and allocated itself (control flow,
   * FComputeShaped), its outputs: checked against the bound shapes (merged in a dynamic plan).
   */
  void StoreResults(RunContext* run, uint32_t nid, const std::vector<NDArray>& results) const {
    const BoundPlan& plan = run->plan;
    const IndexedGraph& idx = plan.graph.indexed_graph();
    const NodeAttrs& attrs = idx[nid].source->attrs;
    IR_CHECK(results.size() == idx.num_outputs(nid))
        << NodeDesc(attrs) << " computed " << results.size() << " outputs, it has " << idx.num_outputs(nid);
    for (uint32_t j = 0; j < results.size(); ++j) {
      uint32_t eid = idx.entry_id(nid, j);
      Shape found;
      IR_CHECK(Shape::Merge(results[j].shape(), plan.shapes[eid], &found) &&
               (plan.dynamic || results[j].shape() == plan.shapes[eid]) && results[j].dtype() == plan.dtypes[eid])
          << NodeDesc(attrs) << ": output " << j << " is " << DTypeName(results[j].dtype()) << results[j].shape()
          << " but the graph was bound for " << DTypeName(plan.dtypes[eid]) << plan.shapes[eid]
          << " (a value whose shape changes across iterations needs a shape invariant)";
      if (plan.dynamic) run->shapes[eid] = results[j].shape();
      // A body may pass an argument through (a zero-trip loop returns its inputs): the output must
      // not alias an input, whose storage the plan may reuse once this node has read it.
      bool aliases =
          std::any_of(run->in.begin(), run->in.end(), [&](const NDArray& input) { return input.Overlaps(results[j]); });
      run->data[eid] = aliases ? results[j].CopyTo(results[j].device()) : results[j];
    }
  }

  /*! \brief Records node `nid`'s time since `start`, its device work done first. */
  void Profile(RunContext* run, uint32_t nid, std::chrono::steady_clock::time_point start) const {
    if (device_.type != DeviceType::kCPU) DeviceAPI::Get(device_)->Synchronize();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    run->stats->nodes.push_back(
        NodeProfile{run->plan.graph.indexed_graph()[nid].source->attrs.name, run->plan.op_desc[nid], ms});
  }

  /*! \brief Whether entry `e` is, or aliases, a variable some op of the plan writes (a stored variable). */
  static bool IsStoredVariable(const BoundPlan& plan, IndexedGraph::Entry e) {
    const IndexedGraph& idx = plan.graph.indexed_graph();
    const std::vector<uint32_t>& mutated = idx.mutable_input_nodes();
    for (;;) {
      if (idx[e.node_id].source->is_variable()) {
        return std::find(mutated.begin(), mutated.end(), e.node_id) != mutated.end();
      }
      uint32_t eid = idx.entry_id(e);
      int alias = plan.inplace_index[eid];
      if (plan.storage_id[eid] != -1 || alias < 0) return false;
      e = idx[e.node_id].inputs[alias];
    }
  }

  /*!
   * \brief The graph outputs; values not in fresh storage are copied so later runs cannot change
   * them. A body (`nested`) returns as they are the params it passes through and the outputs it
   * wrote into donated params: its caller owns those arrays. Only a stored variable is copied.
   */
  std::vector<NDArray> Fetch(const BoundPlan& plan, const std::vector<NDArray>& data, bool nested) const {
    const IndexedGraph& idx = plan.graph.indexed_graph();
    std::vector<NDArray> outputs;
    for (const IndexedGraph::Entry& out : idx.outputs()) {
      uint32_t eid = idx.entry_id(out);
      const NDArray& value = data[eid];
      IR_CHECK(value.defined()) << "output '" << idx[out.node_id].source->attrs.name << "' was not computed";
      bool owned = plan.storage_id[eid] == -2 || (nested && plan.storage_id[eid] == -1 && !IsStoredVariable(plan, out));
      outputs.push_back(owned ? value : value.CopyTo(value.device()));
    }
    return outputs;
  }

  SessionOptions options_;
  Device device_;
  std::shared_ptr<VariableStore> variables_;
  Graph graph_;
  std::vector<runtime::GraphInput> inputs_;
  /*! \brief Some op of the graph writes a variable: runs hold the store's update lock. */
  bool updates_variables_ = false;
  runtime::PlanCache plans_;
  /*! \brief Executors of the bodies of the graph's control-flow nodes. */
  runtime::BodyExecutors bodies_;
  /*! \brief Numbers runs (seeds of random ops differ run to run). */
  std::atomic<uint64_t> run_count_{0};
  mutable std::mutex last_mutex_;
  RunStats last_stats_;
  const Graph* last_graph_ = nullptr;
};

Executor::Executor(Graph graph, SessionOptions options, std::shared_ptr<VariableStore> variables)
    : impl_(new Impl(std::move(graph), std::move(options), std::move(variables))) {}
Executor::~Executor() = default;
std::vector<NDArray> Executor::Run(const std::unordered_map<std::string, NDArray>& feeds) { return impl_->Run(feeds); }
std::vector<NDArray> Executor::Run(const std::unordered_map<std::string, NDArray>& feeds, uint64_t run_number) {
  return impl_->Run(feeds, run_number);
}
RunStats Executor::last_stats() const { return impl_->last_stats(); }
const Graph& Executor::bound_graph() const { return impl_->bound_graph(); }

}  // namespace ir
