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
 * \throws ir::Error for malformed JSON (nesting deeper than 64 levels included), unknown
 * fields, ops or types, references to a later node (so no cycle), repeated arg_nodes, or a
 * node- or entry-indexed attribute whose size differs from the graph's. The message names
 * the node (index and name) and the field, or the JSON path, line and column of a syntax error.
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
