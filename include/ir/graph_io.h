/*!
 * \file graph_io.h
 * \brief Saving and loading graphs as JSON, and printing them as text and Graphviz dot.
 */
#ifndef IR_GRAPH_IO_H_
#define IR_GRAPH_IO_H_

#include <string>

#include "ir/graph.h"

namespace ir {

/*!
 * \brief The graph as JSON: nodes in topological order (op, name, attrs, inputs, control
 * deps), head entries and every attribute whose type has a JSON codec. Attributes without
 * one are skipped and listed under "skipped_attrs".
 */
std::string SaveJSON(const Graph& graph);

/*!
 * \brief Rebuilds a graph saved by SaveJSON: node attributes are parsed again by their ops,
 * graph attributes restored with their types. SaveJSON(LoadJSON(s)) == s.
 * \throws ir::Error for malformed JSON, unknown ops or types, or dangling references.
 */
Graph LoadJSON(const std::string& json);

/*!
 * \brief A readable listing: one line per node with its op, attributes, inputs and its
 * node- and entry-indexed graph attributes (shapes, dtypes...), then graph-level attributes.
 */
std::string PrintGraphText(const Graph& graph);

/*! \brief The graph in Graphviz dot syntax; edges are labelled with shapes when known. */
std::string PrintGraphDot(const Graph& graph);

}  // namespace ir

#endif  // IR_GRAPH_IO_H_
