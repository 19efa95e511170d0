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

struct EpilogueRunCache;

/*!
 * \brief An "epilogue" group split for running: the anchor (a kOutEWiseFusable node such as
 * matmul or conv2d) and its elementwise epilogue as a "_fused" map node of its own whose input
 * 0 is the anchor's value. Derived from the subgraph when the fused node is parsed.
 */
struct FusedEpilogue {
  /*! \brief The anchor node's attributes and the group inputs it reads, in order. */
  NodeAttrs anchor;
  std::vector<int> anchor_inputs;
  /*! \brief Group output holding the anchor's value (read outside the group), or -1. */
  int anchor_output = -1;
  /*! \brief The epilogue: "_fused" map node over in0 (the anchor's value) and in1, in2, ... */
  NodeAttrs epilogue;
  /*! \brief Group input of each epilogue input after in0. */
  std::vector<int> extra_inputs;
  /*! \brief Group output of each epilogue output. */
  std::vector<int> outputs;
  /*!
   * \brief Group output the epilogue writes over the anchor's value in place (the epilogue's
   * output 0 then aliases its in0), or -1 when the anchor's value is a group output itself.
   */
  int in_place_output = -1;
  /*! \brief What the CPU runner derives per input signature (ops/fused_epilogue.cc), derived once. */
  std::shared_ptr<EpilogueRunCache> run_cache;
};

struct FusedGroup {
  /*!
   * \brief "map" (elementwise/broadcast over one domain), "reduce" (prologue + reduction) or
   * "epilogue" (a kOutEWiseFusable anchor and map members over its output's domain).
   */
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
  /*! \brief Kind "epilogue" only: the anchor and the epilogue (derived, not saved). */
  std::shared_ptr<const FusedEpilogue> epilogue;

  /*! \brief Node attributes of a "_fused" node holding this group. */
  std::map<std::string, std::string> ToAttrs() const;
  /*! \brief True when output `index` aliases an input. */
  bool IsAliasedOutput(int index) const;
};

/*! \brief The group of a "_fused" node (throws unless node is one). */
const FusedGroup& GetFusedGroup(const NodeAttrs& attrs);

}  // namespace ir

#endif  // IR_FUSION_H_
