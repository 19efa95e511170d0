/*!
 * \file bound_plan.cc
 * \brief Binding: pass pipeline, kernel selection, seeds and the memory pool of a plan.
 */
#include "runtime/executor/bound_plan.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <unordered_map>

#include "codegen/single_op_kernel.h"
#include "ir/cpu_kernel.h"
#include "ir/fusion.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ir/pipeline.h"

namespace ir {
namespace runtime {
namespace {

/*! \brief FNV-1a: a hash of a string that is the same in every process. */
uint64_t StableHash(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

/*! \brief options.seed, the node's name and its "seed" attribute (if any), mixed. */
uint64_t NodeSeedBase(const NodeAttrs& attrs, uint64_t graph_seed) {
  uint64_t h = SplitMix64(SplitMix64(graph_seed) ^ StableHash(attrs.name));
  auto it = attrs.dict.find("seed");
  if (it != attrs.dict.end()) h = SplitMix64(h ^ SplitMix64(StableHash(it->second)));
  return h;
}

std::string InputsDesc(const std::vector<GraphInput>& inputs, const std::vector<NDArray>& values) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < inputs.size(); ++i) {
    parts.push_back(values[i].defined() ? StrCat(inputs[i].name, ": ", DTypeName(values[i].dtype()), values[i].shape())
                                        : StrCat(inputs[i].name, ": uninitialized"));
  }
  return parts.empty() ? std::string("no inputs") : Join(parts, ", ");
}

/*! \brief The graph the pipeline starts from: pass options and input shapes/dtypes attached. */
Graph PipelineInput(const Graph& graph, const std::vector<NDArray>& values, const SessionOptions& options) {
  Graph g = graph;
  ShapeVector shapes;
  DTypeVector dtypes;
  for (const NDArray& value : values) {
    shapes.push_back(value.defined() ? value.shape() : Shape());
    dtypes.push_back(value.defined() ? value.dtype() : DType::kUnknown);
  }
  g.SetAttr("shape_inputs", std::move(shapes));
  g.SetAttr("dtype_inputs", std::move(dtypes));
  g.SetAttr("target", options.target);
  if (options.fmax >= 0) g.SetAttr("fusion.fmax", options.fmax);
  g.SetAttr("collective.bucket_bytes", options.collective_bucket_bytes);
  g.SetAttr("collective.first_bucket_bytes", options.collective_first_bucket_bytes);
  if (!options.dump_dir.empty()) g.SetAttr("dump_dir", options.dump_dir);
  if (options.fast_math) g.SetAttr("simplify.fast_math", 1);
  if (options.nsz) g.SetAttr("simplify.nsz", 1);
  if (!options.rule_sets.empty()) g.SetAttr("simplify.sets", options.rule_sets);
  return g;
}

/*! \brief Per input node of the bound graph, the executor input of the same name. */
std::vector<size_t> MatchInputs(const IndexedGraph& idx, const std::vector<GraphInput>& inputs) {
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < inputs.size(); ++i) by_name.emplace(inputs[i].name, i);
  std::vector<size_t> index;
  for (uint32_t nid : idx.input_nodes()) {
    auto it = by_name.find(idx[nid].source->attrs.name);
    IR_CHECK(it != by_name.end()) << "the pass pipeline added input '" << idx[nid].source->attrs.name
                                  << "', which the executor cannot provide";
    index.push_back(it->second);
  }
  return index;
}

std::mutex& SelectorMutex() {
  static std::mutex mutex;
  return mutex;
}

std::map<DeviceType, KernelSelector>& Selectors() {
  static auto* selectors = new std::map<DeviceType, KernelSelector>();  // used until exit
  return *selectors;
}

/*! \brief The kernel of nodes of `op` on `device` without a selector: the target's FCompute, else the CPU's. */
NodeKernel DefaultKernel(const Op* op, Device device) {
  const auto* target_map = Op::FindAttr<FCompute>(FComputeKey(device.type));
  if (target_map != nullptr && target_map->count(op)) return NodeKernel{(*target_map)[op], false};
  return NodeKernel{CpuKernelOf(op), device.type != DeviceType::kCPU};  // FCompute, or from FCodeGen
}

NodeKernel KernelOf(const Op* op, Device device) {
  KernelSelector selector;
  {
    std::lock_guard<std::mutex> lock(SelectorMutex());
    auto it = Selectors().find(device.type);
    if (it != Selectors().end()) selector = it->second;
  }
  return selector ? selector(op) : DefaultKernel(op, device);
}

/*! \brief Picks every op node's kernel: generated for the graph, else the device's choice. */
void SelectKernels(const Graph& graph, Device device, BoundPlan* plan) {
  const IndexedGraph& idx = graph.indexed_graph();
  const std::vector<FCompute>* generated =
      graph.HasAttr("kernels") ? &graph.GetAttr<std::vector<FCompute>>("kernels") : nullptr;
  IR_CHECK(generated == nullptr || generated->size() == idx.num_nodes())
      << "graph attribute 'kernels' has " << generated->size() << " elements for " << idx.num_nodes() << " nodes";
  plan->kernels.assign(idx.num_nodes(), FCompute());
  plan->on_host.assign(idx.num_nodes(), false);
  plan->control_flow.assign(idx.num_nodes(), nullptr);
  plan->shaped.assign(idx.num_nodes(), nullptr);
  const auto* control_flow = Op::FindAttr<FControlFlow>("FControlFlow");
  const auto* shaped = Op::FindAttr<FComputeShaped>("FComputeShaped");
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) continue;
    if (control_flow != nullptr && control_flow->count(node->op())) {
      plan->control_flow[nid] = &(*control_flow)[node->op()];
      continue;
    }
    if (shaped != nullptr && shaped->count(node->op())) {
      plan->shaped[nid] = &(*shaped)[node->op()];
      continue;
    }
    if (generated != nullptr && (*generated)[nid]) {
      plan->kernels[nid] = (*generated)[nid];
      continue;
    }
    NodeKernel chosen = KernelOf(node->op(), device);
    IR_CHECK(chosen.kernel) << "no kernel for node '" << node->attrs.name << "' (op " << node->op()->name << ") on "
                            << device.ToString() << ": the op registers no device kernel, no FCompute and no FCodeGen";
    plan->kernels[nid] = chosen.kernel;
    plan->on_host[nid] = chosen.on_host;
  }
}

/*! \brief Per node facts the run loop needs: mutated inputs, overwriting, seeds. */
void DescribeNodes(const Graph& graph, uint64_t graph_seed, BoundPlan* plan) {
  const IndexedGraph& idx = graph.indexed_graph();
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  plan->mutated.assign(idx.num_nodes(), {});
  plan->overwritten.assign(idx.num_nodes(), {});
  plan->seed_base.assign(idx.num_nodes(), 0);
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) continue;
    if (mutate != nullptr && mutate->count(node->op())) plan->mutated[nid] = (*mutate)[node->op()](node->attrs);
    plan->overwritten[nid] = OverwrittenInputsOf(*node);
    plan->seed_base[nid] = NodeSeedBase(node->attrs, graph_seed);
  }
}

/*!
 * \brief Links gradient nodes to the forward nodes whose records they read (FForwardInput): the
 * forward node is told which gradient node it keeps values for, the last reader takes the record.
 */
void LinkForwardRecords(const Graph& graph, BoundPlan* plan) {
  const IndexedGraph& idx = graph.indexed_graph();
  const auto* forward_input = Op::FindAttr<FForwardInput>("FForwardInput");
  plan->forward_input.assign(idx.num_nodes(), -1);
  plan->takes_record.assign(idx.num_nodes(), false);
  plan->gradient.assign(idx.num_nodes(), nullptr);
  std::unordered_map<uint32_t, uint32_t> last_reader;  // entry -> node
  for (uint32_t nid = 0; nid < idx.num_nodes() && forward_input != nullptr; ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable() || !forward_input->count(node->op())) continue;
    int k = (*forward_input)[node->op()](node->attrs, static_cast<uint32_t>(idx[nid].inputs.size()));
    if (k < 0) continue;
    IR_CHECK(static_cast<size_t>(k) < idx[nid].inputs.size())
        << NodeDesc(node->attrs) << ": FForwardInput names input " << k << " of " << idx[nid].inputs.size();
    plan->forward_input[nid] = k;
    plan->records = true;
    const IndexedGraph::Entry& in = idx[nid].inputs[k];
    last_reader[idx.entry_id(in)] = nid;
    if (in.index == 0 && plan->control_flow[in.node_id] != nullptr && plan->gradient[in.node_id] == nullptr) {
      plan->gradient[in.node_id] = &node->attrs;
    }
  }
  for (const auto& [eid, nid] : last_reader) plan->takes_record[nid] = true;
}

/*! \brief The op of `node` for profiles: a fused node lists its kind and its members' ops. */
std::string OpDescription(const Node& node) {
  if (node.op()->name != "_fused") return node.op()->name;
  const FusedGroup& group = GetFusedGroup(node.attrs);
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  std::vector<std::string> members;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (!idx[nid].source->is_variable()) members.push_back(idx[nid].source->op()->name);
  }
  return StrCat("_fused[", group.kind, "](", Join(members, ","), ")");
}

/*! \brief The largest pooled entry, for errors: "output 0 of node 'x' ([2,3] float32)". */
std::string LargestUser(const BoundPlan& plan) {
  const IndexedGraph& idx = plan.graph.indexed_graph();
  std::string user = "none";
  size_t largest = 0;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (uint32_t i = 0; i < idx.num_outputs(nid); ++i) {
      uint32_t eid = idx.entry_id(nid, i);
      size_t bytes = static_cast<size_t>(plan.shapes[eid].Bytes(plan.dtypes[eid]));
      if (plan.storage_id[eid] < 0 || bytes < largest) continue;
      largest = bytes;
      user = StrCat("output ", i, " of node '", idx[nid].source->attrs.name, "' (", plan.shapes[eid], " ",
                    DTypeName(plan.dtypes[eid]), ")");
    }
  }
  return user;
}

/*!
 * \brief Whether some shape of `graph` may be known only at run time: it has a control-flow node
 * (a loop variable whose shape changes across iterations) or an op whose output shape is a
 * tensor's value (FComputeShaped). Elsewhere an unknown shape is an error.
 */
bool MayHaveDynamicShapes(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  const auto* shaped = Op::FindAttr<FComputeShaped>("FComputeShaped");
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (!node->attrs.subgraphs.empty() || (shaped != nullptr && !node->is_variable() && shaped->count(node->op()))) {
      return true;
    }
  }
  return false;
}

/*!
 * \brief Whether some entry of the bound `graph` has an unknown shape; throws, naming the node, when
 * one can never become known: an input, or the output of a node that computes its shapes from its
 * inputs' (no FComputeShaped, no bodies) while those are all known.
 */
bool HasUnknownShapes(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  const ShapeVector& shapes = graph.GetAttr<ShapeVector>("shape");
  const auto* shaped = Op::FindAttr<FComputeShaped>("FComputeShaped");
  bool any = false;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    bool unknown_out = false;
    for (uint32_t j = 0; j < idx.num_outputs(nid); ++j)
      unknown_out = unknown_out || !shapes[idx.entry_id(nid, j)].is_known();
    if (!unknown_out) continue;
    any = true;
    IR_CHECK(!node->is_variable()) << "input '" << node->attrs.name << "' has the unknown shape "
                                   << shapes[idx.entry_id(nid, 0)] << ": nothing computes it when the graph runs";
    bool allocates = !node->attrs.subgraphs.empty() || (shaped != nullptr && shaped->count(node->op()));
    std::vector<std::string> in;
    bool from_unknown = false;
    for (const IndexedGraph::Entry& e : idx[nid].inputs) {
      in.push_back(shapes[idx.entry_id(e)].ToString());
      from_unknown = from_unknown || !shapes[idx.entry_id(e)].is_known();
    }
    IR_CHECK(allocates || from_unknown) << NodeDesc(node->attrs) << ": cannot tell its output shapes from its inputs' "
                                        << (in.empty() ? std::string("(none)") : Join(in, ", "))
                                        << ", and it runs no kernel that finds them";
  }
  return any;
}

}  // namespace

void RegisterKernelSelector(DeviceType type, KernelSelector selector) {
  std::lock_guard<std::mutex> lock(SelectorMutex());
  Selectors()[type] = std::move(selector);
}

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::vector<std::string> DefaultPipeline(const SessionOptions& options) {
  return Pipeline("session").Passes({{"simplify", options.simplify}, {"fusion", options.fusion}});
}

std::shared_ptr<BoundPlan> Bind(const Graph& graph, const std::vector<GraphInput>& inputs,
                                const std::vector<NDArray>& values, const SessionOptions& options, Device device) {
  auto start = std::chrono::steady_clock::now();
  auto plan = std::make_shared<BoundPlan>();
  try {
    Graph input = PipelineInput(graph, values, options);
    std::vector<std::string> passes = options.passes.empty() ? DefaultPipeline(options) : options.passes;
    // Shapes found as nodes run get fresh storage; the rest is planned, and fused, as usual.
    bool may = MayHaveDynamicShapes(input);
    if (may) input.SetAttr("memory.dynamic_shapes", 1);
    plan->graph = ApplyPasses(std::move(input), passes);
    plan->dynamic = may && plan->graph.HasAttr("shape") && HasUnknownShapes(plan->graph);
  } catch (const Error& err) {
    throw Error(StrCat("cannot bind the graph for inputs (", InputsDesc(inputs, values), "): ", err.what()));
  }
  for (const char* key :
       {"shape", "dtype", "storage_id", "storage_inplace_index", "storage_offset", "memory_plan_bytes"}) {
    IR_CHECK(plan->graph.HasAttr(key)) << "the pass pipeline did not provide graph attribute '" << key
                                       << "' (end it with PlanMemory)";
  }
  plan->shapes = plan->graph.GetAttr<ShapeVector>("shape");
  plan->dtypes = plan->graph.GetAttr<DTypeVector>("dtype");
  plan->storage_id = plan->graph.GetAttr<std::vector<int>>("storage_id");
  plan->inplace_index = plan->graph.GetAttr<std::vector<int>>("storage_inplace_index");
  plan->storage_offset = plan->graph.GetAttr<std::vector<int64_t>>("storage_offset");
  plan->input_index = MatchInputs(plan->graph.indexed_graph(), inputs);
  SelectKernels(plan->graph, device, plan.get());
  DescribeNodes(plan->graph, options.seed, plan.get());
  LinkForwardRecords(plan->graph, plan.get());
  if (options.profile) {
    const IndexedGraph& idx = plan->graph.indexed_graph();
    plan->op_desc.assign(idx.num_nodes(), std::string());
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      if (!idx[nid].source->is_variable()) plan->op_desc[nid] = OpDescription(*idx[nid].source);
    }
  }
  plan->pool_bytes = static_cast<size_t>(plan->graph.GetAttr<int64_t>("memory_plan_bytes"));
  plan->no_reuse_bytes = static_cast<size_t>(plan->graph.GetAttrOr<int64_t>("memory_no_reuse_bytes", 0));
  plan->lower_bound_bytes = static_cast<size_t>(plan->graph.GetAttrOr<int64_t>("memory_lower_bound_bytes", 0));
  plan->bind_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return plan;
}

std::unique_ptr<Workspace> AllocateWorkspace(const BoundPlan& plan, Device device) {
  auto workspace = std::make_unique<Workspace>();
  workspace->views.assign(plan.storage_id.size(), NDArray());
  auto pooled = std::count_if(plan.storage_id.begin(), plan.storage_id.end(), [](int sid) { return sid >= 0; });
  if (pooled == 0) return workspace;
  try {
    workspace->arena = std::make_shared<Storage>(plan.pool_bytes, device);
  } catch (const std::exception& err) {  // std::bad_alloc included: the user learns what did not fit
    std::string others = pooled > 1 ? StrCat(" and ", pooled - 1, " other pooled values") : "";
    throw Error(StrCat("cannot allocate ", plan.pool_bytes, " bytes for ", LargestUser(plan), others, " on ",
                       device.ToString(), ": ", err.what()));
  }
  for (size_t eid = 0; eid < plan.storage_id.size(); ++eid) {
    if (plan.storage_id[eid] < 0) continue;
    workspace->views[eid] = NDArray::FromStorage(workspace->arena, static_cast<size_t>(plan.storage_offset[eid]),
                                                 plan.shapes[eid], plan.dtypes[eid]);
  }
  return workspace;
}

}  // namespace runtime
}  // namespace ir
