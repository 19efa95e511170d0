/*!
 * \file print_graph.cc
 * \brief PrintGraph: writes the readable IR to stdout and keeps it as attribute "ir_text".
 */
#include <iostream>

#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "ir/pass.h"

namespace ir {

IR_REGISTER_GRAPH_ATTR("ir_text")
    .describe("The readable IR of the graph when PrintGraph ran.")
    .set_type<std::string>()
    .set_in_dump(false);

IR_REGISTER_GRAPH_ATTR("print_graph.quiet")
    .describe("Option of PrintGraph: when 1, keep the text in \"ir_text\" without printing it.")
    .set_type<int>();

IR_REGISTER_PASS(PrintGraph)
    .describe("Prints the graph as readable IR (one line per node, with shapes and dtypes when known).")
    .set_body([](Graph graph) {
      std::string text = PrintGraphText(graph);
      if (GetPassOption<int>(graph, "print_graph.quiet", 0) == 0) std::cout << text << std::flush;
      graph.SetAttr("ir_text", std::move(text));
      return graph;
    })
    .provide_graph_attr("ir_text");

}  // namespace ir
