/*!
 * \file fusion.h
 * \brief What the Fusion pass records: a fused node's group (members, inputs, outputs).
 *
 * Fusion replaces each group of nodes by one node of op "_fused" whose attribute
 * "subgraph" holds the group as a graph in JSON: its variables are the group's unique array
 * inputs (in order, named in0, in1, ...), its outputs the values the group writes out. The
 * op's parser turns that into a FusedGroup (NodeAttrs::parsed), so a fused graph saves,
 * loads and runs (unfused, member by member) without CodeGen.
 */
#ifndef IR_FUSION_H_
#define IR_FUSION_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace ir {

struct FusedGroup {
  /*! \brief "map" (elementwise/broadcast over one domain) or "reduce" (prologue + reduction). */
  std::string kind = "map";
  /*! \brief The members; variables are the group inputs in input order. */
  Graph subgraph;
  /*! \brief Inputs some member writes in place (e.g. assign into a variable). */
  std::vector<int> mutated_inputs;
  /*!
   * \brief (input, output) pairs: output `second` is the mutated input `first` (the kernel
   * writes the input's buffer; the output aliases it).
   */
  std::vector<std::pair<int, int>> aliases;
  /*!
   * \brief Mutated inputs no member reads (only overwritten, as by assign): running the group
   * may initialize such a variable.
   */
  std::vector<int> overwritten_inputs;

  /*! \brief Node attributes of a "_fused" node holding this group. */
  std::map<std::string, std::string> ToAttrs() const;
  /*! \brief True when output `index` aliases an input. */
  bool IsAliasedOutput(int index) const;
};

/*! \brief The group of a "_fused" node (throws unless node is one). */
const FusedGroup& GetFusedGroup(const NodeAttrs& attrs);

}  // namespace ir

#endif  // IR_FUSION_H_
