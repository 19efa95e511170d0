/*!
 * \file pass.h
 * \brief Pass registry and the checked pass manager.
 *
 * A pass is a function Graph -> Graph registered by name with a contract: the graph
 * attributes and op attributes it depends on, and the graph attributes it provides.
 * ApplyPasses checks the contract before and after every pass, verifies the graph,
 * times each pass and can dump the IR after each one (IR_DUMP_DIR).
 */
#ifndef IR_PASS_H_
#define IR_PASS_H_

#include <functional>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/graph.h"

namespace ir {

/*! \brief The body of a pass. It may return its input (changed or not) or a new graph. */
using PassFunction = std::function<Graph(Graph src)>;

/*! \brief A registered pass and its contract. */
struct PassReg {
  std::string name;
  std::string description;
  PassFunction body;
  /*! \brief True when the pass may change nodes or edges (not only attributes). */
  bool change_graph = false;
  /*! \brief Op attributes every op in the graph must register before the pass runs. */
  std::vector<std::string> op_attr_dependency;
  /*! \brief Graph attributes that must be present before the pass runs. */
  std::vector<std::string> graph_attr_dependency;
  /*! \brief Graph attributes the pass guarantees to set. */
  std::vector<std::string> provided_graph_attr;

  PassReg& describe(const std::string& text) {
    description = text;
    return *this;
  }
  PassReg& set_body(PassFunction fn) {
    body = std::move(fn);
    return *this;
  }
  PassReg& set_change_graph(bool value) {
    change_graph = value;
    return *this;
  }
  PassReg& depend_op_attr(const std::string& key) {
    op_attr_dependency.push_back(key);
    return *this;
  }
  PassReg& depend_graph_attr(const std::string& key) {
    graph_attr_dependency.push_back(key);
    return *this;
  }
  PassReg& provide_graph_attr(const std::string& key) {
    provided_graph_attr.push_back(key);
    return *this;
  }

  /*! \brief Registers (or reopens) pass `name`. */
  static PassReg& Register(const std::string& name);
  /*! \brief The pass named `name`; throws listing the registered passes when unknown. */
  static const PassReg& Get(const std::string& name);
  static std::vector<std::string> ListNames();
  /*! \brief Names of the passes that provide graph attribute `key`. */
  static std::vector<std::string> ProvidersOf(const std::string& key);
};

#define IR_REGISTER_PASS(PassName) \
  static ::ir::PassReg& IR_UNIQUE_NAME_(__ir_pass_) __attribute__((unused)) = ::ir::PassReg::Register(#PassName)

/*! \brief Wall time of one applied pass; ApplyPasses appends these to "pass_timings". */
struct PassTiming {
  std::string pass;
  double milliseconds = 0;
  void Save(dmlc::JSONWriter* writer) const;
  void Load(dmlc::JSONReader* reader);
};

/*!
 * \brief Applies passes in order, checking each one's contract.
 *
 * Before a pass: every graph attribute it depends on is present (the error names the
 * passes that provide it) and every op in the graph registers each op attribute it
 * depends on. After it: every attribute it provides is present; if it changes the graph,
 * stale node- and entry-indexed attributes it did not provide are dropped; the graph
 * verifier runs. Timings are appended to the graph attribute "pass_timings".
 */
Graph ApplyPasses(Graph graph, const std::vector<std::string>& passes);
inline Graph ApplyPass(Graph graph, const std::string& pass) { return ApplyPasses(std::move(graph), {pass}); }

/*!
 * \brief Checks a graph's invariants: acyclic, entry indices within each node's outputs,
 * input counts matching each op's signature, node/entry-indexed attributes sized to the graph.
 * \throws ir::Error describing the first violation.
 */
void VerifyGraph(const Graph& graph);

/*!
 * \brief Reads a pass option: graph attribute `key` if set, else `def`.
 * Integer options set as int64 (e.g. from JSON) are accepted for int and vice versa.
 */
template <typename T>
T GetPassOption(const Graph& graph, const std::string& key, const T& def) {
  return graph.GetAttrOr<T>(key, def);
}
template <>
int GetPassOption<int>(const Graph& graph, const std::string& key, const int& def);

/*!
 * \brief Shapes of the outputs of `body` given its params' shapes (the InferShape pass on the
 * body); `where` prefixes errors (e.g. "node 'x' (op cond): in body 0").
 */
std::vector<Shape> InferSubgraphShapes(const Subgraph& body, const std::vector<Shape>& params,
                                       const std::string& where);
/*! \brief The same for dtypes (the InferType pass). */
std::vector<DType> InferSubgraphTypes(const Subgraph& body, const std::vector<DType>& params, const std::string& where);

}  // namespace ir

#endif  // IR_PASS_H_
