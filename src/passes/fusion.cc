/*!
 * \file fusion.cc
 * \brief The Fusion pass: groups elementwise/broadcast chains and reduction prologues into
 * "_fused" nodes, at most F_max unique array inputs each, and records every group and every
 * refusal.
 */
#include "ir/codegen.h"
#include "ir/graph_attr.h"
#include "ir/pass.h"
#include "passes/fusion_plan.h"

namespace ir {
namespace {

constexpr int kDefaultMaxGroupSize = 64;

}  // namespace

IR_REGISTER_GRAPH_ATTR_TYPE(std::vector<fusion::GroupRecord>, "list_fusion_group");

IR_REGISTER_GRAPH_ATTR("fusion.fmax")
    .describe("Option: most unique array inputs of a fused kernel (scalars folded into it do not count).")
    .set_type<int>();
IR_REGISTER_GRAPH_ATTR("fusion.max_group_size").describe("Option: most nodes in one fused group.").set_type<int>();
IR_REGISTER_GRAPH_ATTR("target")
    .describe("Option: the device kernels are generated for (\"cpu\", \"opencl\", \"cuda\").")
    .set_type<std::string>();
IR_REGISTER_GRAPH_ATTR("fusion_groups")
    .describe("Fusion: one record per fused node (members, inputs, outputs, kind).")
    .set_type<std::vector<fusion::GroupRecord>>();
IR_REGISTER_GRAPH_ATTR("fusion_log")
    .describe("Fusion: why nodes were not fused or groups not merged.")
    .set_type<std::vector<std::string>>();

IR_REGISTER_PASS(Fusion)
    .describe(
        "Groups elementwise/broadcast chains (diamonds included), reduction prologues and "
        "epilogues of matmul/conv-like ops into _fused nodes with at most fusion.fmax unique "
        "array inputs each (0-d inputs not counted).")
    .set_change_graph(true)
    .depend_graph_attr("shape")
    .depend_graph_attr("dtype")
    .depend_op_attr("TOpPattern")
    .provide_graph_attr("shape")
    .provide_graph_attr("dtype")
    .provide_graph_attr("fusion_groups")
    .provide_graph_attr("fusion_log")
    .set_body([](Graph graph) {
      std::string target = graph.GetAttrOr<std::string>("target", "cpu");
      int fmax = GetPassOption<int>(graph, "fusion.fmax", TargetDefaults::Get(target).fmax);
      int max_size = GetPassOption<int>(graph, "fusion.max_group_size", kDefaultMaxGroupSize);
      IR_CHECK(fmax >= 1) << "fusion.fmax must be at least 1, got " << fmax;
      IR_CHECK(max_size >= 1) << "fusion.max_group_size must be at least 1, got " << max_size;
      fusion::Plan plan = fusion::PlanFusion(graph, fmax, max_size);
      fusion::AnchorEpilogues(graph, fmax, max_size, &plan);
      std::vector<fusion::GroupRecord> records;
      Graph fused = fusion::RewriteFusedGraph(graph, plan, &records);
      fused.SetAttr("fusion_groups", std::move(records));
      fused.SetAttr("fusion_log", plan.log);
      return fused;
    });

}  // namespace ir
