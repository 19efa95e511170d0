/*!
 * \file node.h
 * \brief Nodes of the computation graph and the edges (entries) between them.
 */
#ifndef IR_NODE_H_
#define IR_NODE_H_

#include <dmlc/any.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ir {

class Op;
class Node;
struct Subgraph;
/*! \brief Nodes are shared: a node lives as long as some entry or graph refers to it. */
using NodePtr = std::shared_ptr<Node>;

/*! \brief Everything a node knows about itself apart from its inputs. */
struct NodeAttrs {
  /*! \brief The op; nullptr for a variable (an input of the graph). */
  const Op* op = nullptr;
  std::string name;
  /*! \brief Attributes as strings, sorted by key (so printing is deterministic). */
  std::map<std::string, std::string> dict;
  /*! \brief The op's typed view of dict, filled by Op::attr_parser. */
  dmlc::any parsed;
  /*!
   * \brief Bodies of a control-flow node (cond's branches, while_loop's condition and body):
   * graphs of their own, closed over their params (see Subgraph in ir/graph.h). Shared, never
   * changed once the node is built.
   */
  std::vector<std::shared_ptr<const Subgraph>> subgraphs;
};

/*!
 * \brief attrs.dict plus what the op's FSaveAttrs adds: the string attributes that rebuild the
 * node (what SaveJSON writes). Costs an encoding of any state held only in attrs.parsed.
 */
std::map<std::string, std::string> SavedAttrs(const NodeAttrs& attrs);

/*! \brief "node 'x' (op add)": how errors of ops and passes name a node. */
std::string NodeDesc(const NodeAttrs& attrs);

/*! \brief Output `index` of `node`: the value flowing along an edge. */
struct NodeEntry {
  NodePtr node;
  uint32_t index = 0;

  bool operator==(const NodeEntry& other) const { return node == other.node && index == other.index; }
  bool operator!=(const NodeEntry& other) const { return !(*this == other); }
};

/*! \brief A node: an op applied to input entries, or a variable when op is null. */
class Node {
 public:
  NodeAttrs attrs;
  std::vector<NodeEntry> inputs;
  /*! \brief Nodes that must run before this one although no value flows from them. */
  std::vector<NodePtr> control_deps;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  /*! \brief Releases long input chains iteratively (no recursion depth limit). */
  ~Node();

  const Op* op() const { return attrs.op; }
  bool is_variable() const { return attrs.op == nullptr; }
  /*! \brief Number of outputs (1 for a variable). */
  uint32_t num_outputs() const;
  /*! \brief Parses attrs.dict again after an edit (no-op for variables); throws on bad values. */
  void ReparseAttrs();

  /*! \brief An empty node. */
  static NodePtr Create();
  /*!
   * \brief A node of `op` named `name`: parses `dict` with the op's parser and checks the
   * number of inputs against the op's signature. Throws ir::Error naming op and node.
   */
  static NodePtr Create(const Op* op, const std::string& name, const std::map<std::string, std::string>& dict,
                        std::vector<NodeEntry> inputs, std::vector<std::shared_ptr<const Subgraph>> subgraphs = {});
  /*! \brief A variable (graph input) named `name` with optional hidden attributes. */
  static NodePtr CreateVariable(const std::string& name, const std::map<std::string, std::string>& dict = {});
};

/*! \brief Shorthand: entry `index` of a new node of op `op_name`. */
NodeEntry MakeNode(const std::string& op_name, const std::string& node_name, std::vector<NodeEntry> inputs,
                   const std::map<std::string, std::string>& dict = {}, uint32_t index = 0);

}  // namespace ir

#endif  // IR_NODE_H_
