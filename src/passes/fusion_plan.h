/*!
 * \file fusion_plan.h
 * \brief The Fusion pass's two halves: choosing groups (FusionPlanner) and rewriting the graph
 * so each group becomes one "_fused" node (RewriteFusedGraph).
 */
#ifndef IR_PASSES_FUSION_PLAN_H_
#define IR_PASSES_FUSION_PLAN_H_

#include <string>
#include <vector>

#include "ir/graph.h"

namespace ir {
namespace fusion {

/*! \brief A chosen group: members in topological order over one iteration domain. */
struct Group {
  /*!
   * \brief "map", "reduce", or "row": reductions over the trailing axes of one domain and the
   * elementwise nodes around them, each member computing per element or per row.
   */
  std::string kind = "map";
  std::vector<uint32_t> members;
  /*! \brief Shape every member computes over (the reductions' input shape for "reduce" and "row"). */
  Shape domain;
  /*! \brief A reduce group takes no more members, unless it turns into a row group. */
  bool closed = false;
  /*!
   * \brief For "row" groups, and "reduce" groups that may become one: the first reduced axis
   * (the rows are the axes before it, the reduced axes run to the last); -1 otherwise.
   */
  int split = -1;
  /*! \brief Node id of the kOutEWiseFusable op whose output the members take as their epilogue, -1 if none. */
  int anchor = -1;
  /*!
   * \brief Members that pass their input 0 through unchanged (a reduction whose output has its
   * input's shape, as collapse_sum_like of a matmul gradient): the subgraph reads the input instead.
   */
  std::vector<uint32_t> identities = {};
};

/*! \brief The grouping decisions for one graph. */
struct Plan {
  std::vector<Group> groups;
  /*! \brief Group of each node id, -1 when the node stays as it is. */
  std::vector<int> group_of;
  /*! \brief Nodes duplicated into every group that reads them (scalar constants). */
  std::vector<bool> foldable;
  /*! \brief Why nodes were not fused or groups not merged, in graph order. */
  std::vector<std::string> log;
};

/*!
 * \brief Chooses groups greedily in topological order: an elementwise/broadcast node joins
 * (and merges) the groups of its producers when the merged group keeps one domain, at most
 * `fmax` unique array inputs and `max_size` members, and no path leaves and re-enters it;
 * a reduction absorbs the group producing its input as a prologue. A reduction over trailing
 * axes, the elementwise nodes that read it per row and later such reductions of the same
 * domain form one "row" group.
 */
Plan PlanFusion(const Graph& graph, int fmax, int max_size);

/*! \brief The unit of node `nid`: its group's index, or groups.size() + nid when it is unfused. */
uint32_t UnitOf(const Plan& plan, uint32_t nid);

/*!
 * \brief The plan's units in dependency order (smallest first node first; iterative). When
 * groups depend on each other in a cycle the order is partial; `cyclic`, if given, marks the
 * units left out.
 */
std::vector<uint32_t> UnitOrder(const IndexedGraph& idx, const Plan& plan, std::vector<bool>* cyclic = nullptr);

/*!
 * \brief Dissolves groups into unfused nodes until the units form a DAG, logging each: fusion
 * never turns a runnable graph into one that cannot be ordered.
 */
void SplitCyclicGroups(const IndexedGraph& idx, Plan* plan);

/*!
 * \brief Anchors map groups to the kOutEWiseFusable node (matmul, conv2d) whose output 0 they
 * read, over that output's domain (fusion_epilogue.cc): the group becomes an "epilogue" group
 * (the anchor's output stays a group output when read elsewhere) when the merged group keeps
 * `fmax` inputs (the anchor's counted) and `max_size` members, writes no variable, and the
 * plan stays acyclic.
 */
void AnchorEpilogues(const Graph& graph, int fmax, int max_size, Plan* plan);

/*! \brief One entry of the "fusion_groups" attribute (JSON-able). */
struct GroupRecord {
  std::string node;
  std::string kind;
  std::vector<std::string> members;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  void Save(dmlc::JSONWriter* writer) const;
  void Load(dmlc::JSONReader* reader);
};

/*!
 * \brief Replaces each planned group by one "_fused" node; the result carries "shape" and
 * "dtype" for its entries and appends one GroupRecord per fused node to `records`.
 */
Graph RewriteFusedGraph(const Graph& graph, const Plan& plan, std::vector<GroupRecord>* records);

/*!
 * \brief The group's inputs: ExternalInputs of its members, where an identity reads its input 0
 * only (a collapse_sum_like's `like` gives a shape, no values).
 */
std::vector<uint32_t> GroupInputs(const IndexedGraph& idx, const Group& group, const std::vector<bool>& foldable);

/*! \brief Entry ids `members` read that are produced outside them (foldable nodes excluded), in order. */
std::vector<uint32_t> ExternalInputs(const IndexedGraph& idx, const std::vector<uint32_t>& members,
                                     const std::vector<bool>& foldable);

/*!
 * \brief Most unique inputs of one kernel, 0-d ones included: a bound on its arguments (OpenCL
 * guarantees 1 KiB of kernel arguments, 128 pointers, outputs included; CUDA 4 KiB).
 */
constexpr int kMaxKernelInputs = 64;

/*!
 * \brief Why the entry ids `inputs` (with `shapes`, by entry id) are too many for one kernel:
 * more than `fmax` that are not 0-d (F_max bounds the memory streams; a 0-d input is one load,
 * eager mode's scalar parameters), or more than kMaxKernelInputs in all. "" when they fit.
 */
std::string InputBoundRefusal(const ShapeVector& shapes, const std::vector<uint32_t>& inputs, int fmax);

}  // namespace fusion
}  // namespace ir

#endif  // IR_PASSES_FUSION_PLAN_H_
