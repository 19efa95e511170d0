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
          std::string name = names[nid];
          kernels[nid] = [module, name](const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                                        const std::vector<NDArray>& out) {
            const FusedGroup& group = GetFusedGroup(attrs);
            std::vector<NDArray> args = in;
            for (size_t j = 0; j < out.size(); ++j) {
              if (!group.IsAliasedOutput(static_cast<int>(j))) args.push_back(out[j]);
            }
            module->Launch(name, args, ctx);
          };
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
