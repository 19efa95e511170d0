/*!
 * \file codegen.cc
 * \brief CodeGen: one kernel per fused node, printed for the target as one translation unit.
 */
#include <set>

#include "codegen/kernel_builder.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/pass.h"

namespace ir {

IR_REGISTER_GRAPH_ATTR("kernel_source")
    .describe("CodeGen: every generated kernel of the graph, in the target's dialect, as one unit.")
    .set_type<std::string>();
IR_REGISTER_GRAPH_ATTR("kernel_names")
    .describe("CodeGen: the kernel of each node (\"\" for nodes that run their op's kernel).")
    .set_index(AttrIndex::kNode)
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("codegen_log")
    .describe("CodeGen: fused nodes left to their unfused kernels, and why.")
    .set_type<std::vector<std::string>>();

IR_REGISTER_PASS(CodeGen)
    .describe(
        "Builds a kernel for every _fused node from its members' FCodeGen expressions and prints "
        "them all in the target's dialect (C, OpenCL C or CUDA C).")
    .depend_graph_attr("shape")
    .depend_graph_attr("dtype")
    .provide_graph_attr("kernel_source")
    .provide_graph_attr("kernel_names")
    .provide_graph_attr("codegen_log")
    .set_body([](Graph graph) {
      std::string target = TargetKind(graph.GetAttrOr<std::string>("target", "cpu"));
      const KernelPrinter& printer = KernelPrinter::Get(target);
      const IndexedGraph& idx = graph.indexed_graph();
      const auto& shapes = graph.GetAttr<ShapeVector>("shape");
      const auto& dtypes = graph.GetAttr<DTypeVector>("dtype");
      const Op* fused_op = Op::Get("_fused");
      std::vector<std::string> names(idx.num_nodes()), log;
      std::vector<Kernel> kernels;
      std::set<std::string> seen;
      for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
        const Node* node = idx[nid].source;
        // An epilogue group's _fused kernel runs its anchor op, then the epilogue's own kernel.
        if (node->op() != fused_op || GetFusedGroup(node->attrs).epilogue) continue;
        std::vector<Shape> in_shapes;
        std::vector<DType> in_types;
        for (const auto& e : idx[nid].inputs) {
          in_shapes.push_back(shapes[idx.entry_id(e)]);
          in_types.push_back(dtypes[idx.entry_id(e)]);
        }
        try {
          Kernel kernel = codegen::BuildKernel(GetFusedGroup(node->attrs), in_shapes, in_types);
          names[nid] = kernel.name;
          if (seen.insert(kernel.name).second) kernels.push_back(std::move(kernel));
        } catch (const Error& err) {
          log.push_back(StrCat("'", node->attrs.name, "' runs unfused: ", err.what()));
        }
      }
      graph.SetAttr("kernel_source", kernels.empty() ? std::string() : printer.Print(kernels));
      graph.SetAttr("kernel_names", std::move(names));
      graph.SetAttr("codegen_log", std::move(log));
      return graph;
    });

}  // namespace ir
