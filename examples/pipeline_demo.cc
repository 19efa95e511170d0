/*!
 * \file pipeline_demo.cc
 * \brief Builds a graph with the Symbol API from an op loaded out of a shared library,
 * applies a pass pipeline and prints the IR and the pass timings.
 *
 * Usage: ir-pipeline-demo [path/to/libexample_ops.so]
 */
#include <iostream>

#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir/symbol.h"

namespace {

ir::Symbol Axpby(const ir::Symbol& x, const ir::Symbol& y, double alpha, double beta, const std::string& name) {
  ir::Symbol sym = ir::Symbol::CreateFunctor(ir::Op::Get("axpby"),
                                             {{"alpha", std::to_string(alpha)}, {"beta", std::to_string(beta)}}, name);
  sym.Compose({x, y}, {});
  return sym;
}

}  // namespace

int main(int argc, char** argv) {
  std::string library = argc > 1 ? argv[1] : std::string(IR_DEMO_LIB_DIR) + "/libexample_ops.so";
  try {
    std::cout << "Loading op library " << library << "\n";
    ir::LoadOpLibrary(library);
    ir::Symbol x = ir::Symbol::CreateVariable("x"), y = ir::Symbol::CreateVariable("y");
    ir::Symbol h = Axpby(x, y, 2.0, -1.0, "h");
    ir::Symbol out = Axpby(h, x, 0.5, 0.5, "out");
    ir::Graph graph(out.outputs);
    std::cout << "Applying passes: PrintGraph\n";
    graph = ir::ApplyPasses(graph, {"PrintGraph"});
    std::cout << "Graphviz:\n" << ir::PrintGraphDot(graph);
    for (const auto& t : graph.GetAttr<std::vector<ir::PassTiming>>("pass_timings")) {
      std::cout << "pass " << t.pass << ": " << t.milliseconds << " ms\n";
    }
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
  return 0;
}
