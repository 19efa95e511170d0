/*!
 * \file functionalize.h
 * \brief Rebuilding TF1 dataflow control flow (Enter/Merge/Switch/LoopCond/NextIteration/Exit
 * frames and Switch/Merge conds) into single nodes whose bodies are node lists of their own,
 * before the topological import. The importer converts those nodes into our `while_loop` and
 * `cond` by importing each body recursively (convert_control_flow.cc).
 */
#ifndef IR_TF_FUNCTIONALIZE_H_
#define IR_TF_FUNCTIONALIZE_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir_tf_node_def.pb.h"

namespace ir {
namespace tf {

/*! \brief Op name of a rebuilt TF1 while frame (inputs: loop vars, then loop invariants). */
constexpr const char* kWhileFrameOp = "__tf1_while__";
/*! \brief Op name of a rebuilt TF1 cond (inputs: predicate, then branch arguments). */
constexpr const char* kCondOp = "__tf1_cond__";

/*!
 * \brief Replaces every outermost while frame and every outermost cond of `nodes` by one node
 * (kWhileFrameOp / kCondOp) whose bodies are stored in its attributes; nested control flow stays
 * inside the bodies and is rebuilt when they are imported. Graphs without Enter/Switch nodes are
 * returned unchanged but for AnnotateTensorArrays. When `roots` (node names) are given, only the
 * nodes they need take part (NeededNodes): frames and dead nodes the fetches do not reach are
 * dropped first. Stacks of TF's own gradient loops become loop variables (LowerStacks). Throws
 * ir::Error naming the node for malformed frames.
 */
std::vector<tfproto::NodeDef> FunctionalizeControlFlow(std::vector<tfproto::NodeDef> nodes,
                                                       const std::vector<std::string>& roots = {},
                                                       const std::set<std::string>& fed = {});

/*!
 * \brief The nodes `roots` need: their data and control inputs, transitively (not past the `fed`
 * nodes, which stay), and the pushes onto every stack they reach (a pop reads what the pushes stored).
 */
std::vector<tfproto::NodeDef> NeededNodes(std::vector<tfproto::NodeDef> nodes, const std::vector<std::string>& roots,
                                          const std::set<std::string>& fed);

/*!
 * \brief TF1 gradient loops' stacks (StackV2/StackPushV2/StackPopV2 and the older Stack ops) as
 * dataflow: each stack becomes an array and a count, loop variables of the frames its pushes run
 * in (kStackPushOp writes the row the count names and counts one more) and of the frames its pops
 * run in (kStackPopOp counts one less and reads that row), the array passed into the gradient
 * loop as an invariant. A stack used any other way is left as it is (its converter rejects it).
 */
std::vector<tfproto::NodeDef> LowerStacks(std::vector<tfproto::NodeDef> nodes);

/*!
 * \brief Marks each TensorArray write and scatter by the array its handle comes from (through
 * Enter and Identity): attribute kGrowsAttr for an array of `dynamic_size`, kGradientArrayAttr for
 * a gradient array (TensorArrayGradV3: its writes start from zeros, not from the flow).
 */
std::vector<tfproto::NodeDef> AnnotateTensorArrays(std::vector<tfproto::NodeDef> nodes);

/*! \brief Op of a lowered stack's first state (attribute elem_type): an array holding nothing. */
constexpr const char* kStackArrayOp = "__tf1_stack_array__";
/*! \brief Op of a lowered push: inputs (array, count, value), outputs (value, array, count). */
constexpr const char* kStackPushOp = "__tf1_stack_push__";
/*! \brief Op of a lowered pop: inputs (array, count), outputs (value, count). */
constexpr const char* kStackPopOp = "__tf1_stack_pop__";
/*! \brief Attribute AnnotateTensorArrays sets on writes to arrays of dynamic_size. */
constexpr const char* kGrowsAttr = "_ir_dynamic_size";
/*! \brief Attribute AnnotateTensorArrays sets on writes to gradient arrays. */
constexpr const char* kGradientArrayAttr = "_ir_gradient_array";

/*! \brief Loop frames only (the first step of FunctionalizeControlFlow). */
std::vector<tfproto::NodeDef> FunctionalizeLoops(std::vector<tfproto::NodeDef> nodes);
/*! \brief Switch/Merge conds only, on a graph without loop frames (the second step). */
std::vector<tfproto::NodeDef> FunctionalizeConds(std::vector<tfproto::NodeDef> nodes);

/*! \brief One body of a rebuilt node: its nodes, its params (Placeholder nodes among them) and results. */
struct BodyDef {
  std::vector<tfproto::NodeDef> nodes;
  std::vector<std::string> params;
  std::vector<std::string> outputs;
};

/*! \brief Stores `body` as attributes "body<k>", "params<k>", "outputs<k>" of `node`. */
void EncodeBody(const BodyDef& body, int k, tfproto::NodeDef* node);
/*! \brief The body EncodeBody stored. */
BodyDef DecodeBody(const tfproto::NodeDef& node, int k);

/*! \brief A Placeholder node named `name` of TF type `dtype` (a body param). */
tfproto::NodeDef ParamNode(const std::string& name, int dtype);
/*! \brief The TF type attribute "T" of `node` (DT_INVALID when absent). */
int TypeAttr(const tfproto::NodeDef& node);

/*!
 * \brief Node lists indexed by name with their consumers, for the rewrites. Inputs are
 * "name", "name:i", "^name".
 */
class NodeGraph {
 public:
  explicit NodeGraph(const std::vector<tfproto::NodeDef>& nodes);
  /*! \brief Index of the node named `name`, or -1. */
  int Find(const std::string& name) const;
  /*! \brief Index of the node `input` (a reference) names, or -1. */
  int Source(const std::string& input) const;
  /*! \brief (consumer, input slot) pairs reading node `k`. */
  const std::vector<std::pair<int, int>>& Consumers(int k) const { return consumers_[k]; }
  const std::vector<tfproto::NodeDef>& nodes() const { return *nodes_; }
  const tfproto::NodeDef& node(int k) const { return (*nodes_)[k]; }
  /*! \brief Node indices in an order where inputs come first (nodes on cycles are left out). */
  std::vector<int> TopologicalOrder() const;

 private:
  const std::vector<tfproto::NodeDef>* nodes_;
  std::map<std::string, int> by_name_;
  std::vector<std::vector<std::pair<int, int>>> consumers_;
};

/*! \brief The frame tree and each node's frame (0 = outside every loop). */
struct Frames {
  std::vector<std::string> name{""};
  std::vector<int> parent{-1};
  std::vector<int> of;

  /*! \brief The frame `frame_name` nested in `outer`, made on first use; `enter` names errors. */
  int Child(const std::string& frame_name, int outer, const tfproto::NodeDef& enter);
  /*! \brief True when frame `f` is `outer` or nested in it. */
  bool Within(int f, int outer) const;
  /*! \brief The frames from the outermost one down to `f`. */
  std::vector<int> Chain(int f) const;
};

/*!
 * \brief Assigns frames breadth-first from the nodes without inputs: Enter opens the frame its
 * `frame_name` names, Exit returns to the parent, the NextIteration -> Merge back edge assigns
 * nothing, and a node tied to a frame only by a control edge joins it.
 */
Frames AssignFrames(const NodeGraph& g);

bool IsEnter(const tfproto::NodeDef& n);
bool IsExit(const tfproto::NodeDef& n);
/*! \brief The frame_name attribute of an Enter (throws naming it when absent). */
std::string FrameName(const tfproto::NodeDef& enter);

/*!
 * \brief The node whose output 0 the data input `input` carries, seen through the Enter and
 * Identity nodes a TensorArray or stack handle passes into loops (-1 when it names no node).
 */
int HandleSource(const NodeGraph& g, const std::string& input);

/*!
 * \brief Bounds on rebuilding: a body imported inside another is one level deeper (at most
 * kMaxNesting), and the nodes copied into bodies over one top-level import are counted (at most
 * kMaxCopies: hostile graphs could make nested conds copy their branches exponentially often).
 */
class NestingGuard {
 public:
  static constexpr int kMaxNesting = 64;
  static constexpr size_t kMaxCopies = size_t{1} << 20;
  /*! \brief Enters one level; throws naming `what` when too deep. */
  explicit NestingGuard(const std::string& what);
  ~NestingGuard();
  NestingGuard(const NestingGuard&) = delete;
  NestingGuard& operator=(const NestingGuard&) = delete;
  /*! \brief Counts `n` copied nodes; throws when the import copied too many. */
  static void Charge(size_t n);
  /*! \brief Starts counting for a top-level import (no-op inside a body). */
  static void StartImport();
};

/*! \brief "name" for output 0, else "name:i". */
std::string RefName(const std::string& node, int index);
/*! \brief True for a control input "^name". */
bool IsControl(const std::string& input);

/*!
 * \brief `nodes` without those flagged in `removed`, then the `added` ones (a rebuilt construct).
 * Control inputs naming a removed node no added one replaces are dropped: they ordered nothing
 * that remains (a Const tied to a Switch the rebuild absorbed).
 */
std::vector<tfproto::NodeDef> ReplaceNodes(std::vector<tfproto::NodeDef> nodes, const std::vector<bool>& removed,
                                           std::vector<tfproto::NodeDef> added);

}  // namespace tf
}  // namespace ir

#endif  // IR_TF_FUNCTIONALIZE_H_
