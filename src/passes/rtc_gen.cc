/*!
 * \file rtc_gen.cc
 * \brief RTCGen: compiles the graph's kernel source for the target (through the kernel
 * cache) and gives every fused node a kernel (graph attribute "kernels").
 */
#include <chrono>

#include "ir/codegen.h"
#include "ir/fusion.h"
#include "ir/graph_attr.h"
#include "ir/op_kernel.h"
#include "ir/pass.h"

namespace ir {

namespace {
using StatsMap = std::map<std::string, double>;

/*!
 * \brief The kernel of a fused node: kernel `name` of `module`, resolved once, on the node's
 * inputs then its outputs that alias no input (the kernel's params).
 */
FCompute FusedKernel(std::shared_ptr<CompiledModule> module, const std::string& name, const FusedGroup& group,
                     size_t num_inputs, uint32_t num_outputs) {
  std::vector<uint32_t> written;
  for (uint32_t j = 0; j < num_outputs; ++j) {
    if (!group.IsAliasedOutput(static_cast<int>(j))) written.push_back(j);
  }
  size_t num_args = num_inputs + written.size();
  CompiledModule::Launcher launch = module->Resolve(name);
  return [module, launch, written, num_args](const OpContext& ctx, const NodeAttrs&, const std::vector<NDArray>& in,
                                             const std::vector<NDArray>& out) {
    IR_CHECK(in.size() + written.size() == num_args) << "fused kernel called with " << in.size() << " inputs";
    constexpr size_t kInline = 64;  // no allocation per launch for kernels of up to 64 params
    const NDArray* inline_args[kInline] = {};
    std::vector<const NDArray*> heap_args(num_args > kInline ? num_args : 0);
    const NDArray** args = num_args > kInline ? heap_args.data() : inline_args;
    for (size_t i = 0; i < in.size(); ++i) args[i] = &in[i];
    for (size_t k = 0; k < written.size(); ++k) args[in.size() + k] = &out[written[k]];
    launch(args, num_args, ctx);
  };
}
}  // namespace

IR_REGISTER_GRAPH_ATTR("kernels")
    .describe("Kernel to run for each node instead of its op's FCompute (empty = the op's own).")
    .set_index(AttrIndex::kNode)
    .set_type<std::vector<FCompute>>()
    .set_in_dump(false);
IR_REGISTER_GRAPH_ATTR_TYPE(StatsMap, "map_str_double");
IR_REGISTER_GRAPH_ATTR("rtc_stats")
    .describe(
        "RTCGen: kernel cache counters after compiling (compilations, memory_hits, disk_hits, "
        "corrupt_entries) and the time this pass spent getting the module (ms).")
    .set_type<StatsMap>()
    .set_in_dump(false);

IR_REGISTER_PASS(RTCGen)
    .describe(
        "Compiles kernel_source with the target's compiler through the kernel cache (memory and "
        "disk) and binds each fused node to its compiled kernel.")
    .depend_graph_attr("kernel_source")
    .depend_graph_attr("kernel_names")
    .provide_graph_attr("kernels")
    .provide_graph_attr("rtc_stats")
    .set_body([](Graph graph) {
      std::string target = TargetKind(graph.GetAttrOr<std::string>("target", "cpu"));
      const std::string& source = graph.GetAttr<std::string>("kernel_source");
      const auto& names = graph.GetAttr<std::vector<std::string>>("kernel_names");
      const IndexedGraph& idx = graph.indexed_graph();
      std::vector<FCompute> kernels(idx.num_nodes());
      auto start = std::chrono::steady_clock::now();
      if (!source.empty()) {
        std::shared_ptr<CompiledModule> module = KernelCache::Global().GetOrCompile(target, source);
        for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
          if (names[nid].empty()) continue;
          kernels[nid] = FusedKernel(module, names[nid], GetFusedGroup(idx[nid].source->attrs), idx[nid].inputs.size(),
                                     idx.num_outputs(nid));
        }
      }
      KernelCacheStats stats = KernelCache::Global().stats();
      double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
      graph.SetAttr("kernels", std::move(kernels));
      graph.SetAttr("rtc_stats", StatsMap{{"compilations", static_cast<double>(stats.compilations)},
                                          {"memory_hits", static_cast<double>(stats.memory_hits)},
                                          {"disk_hits", static_cast<double>(stats.disk_hits)},
                                          {"corrupt_entries", static_cast<double>(stats.corrupt_entries)},
                                          {"module_ms", ms}});
      return graph;
    });

}  // namespace ir
