/*!
 * \file fused_group.cc
 * \brief A "_fused" node's group (ir/fusion.h): its attributes and the access every layer shares.
 *
 * The op itself (parsing, inference, the unfused runner) is registered in src/ops/fused/fused.cc;
 * passes, codegen and the runtime read groups through these functions only.
 */
#include <sstream>

#include "ir/fusion.h"
#include "ir/graph_io.h"
#include "ir/op.h"

namespace ir {

std::map<std::string, std::string> FusedGroup::ToAttrs() const {
  std::ostringstream aliases_text, mutated_text, overwritten_text;
  for (size_t i = 0; i < overwritten_inputs.size(); ++i) overwritten_text << (i ? "," : "") << overwritten_inputs[i];
  for (size_t i = 0; i < aliases.size(); ++i) {
    aliases_text << (i ? "," : "") << aliases[i].first << ":" << aliases[i].second;
  }
  for (size_t i = 0; i < mutated_inputs.size(); ++i) mutated_text << (i ? "," : "") << mutated_inputs[i];
  return {{"kind", kind},
          {"subgraph", SaveJSON(subgraph)},
          {"aliases", aliases_text.str()},
          {"mutated_inputs", mutated_text.str()},
          {"overwritten_inputs", overwritten_text.str()}};
}

bool FusedGroup::IsAliasedOutput(int index) const {
  for (const auto& alias : aliases) {
    if (alias.second == index) return true;
  }
  return false;
}

const FusedGroup& GetFusedGroup(const NodeAttrs& attrs) {
  IR_CHECK(attrs.op != nullptr && attrs.op->name == "_fused" && !attrs.parsed.empty())
      << "node '" << attrs.name << "' is not a fused node";
  return *dmlc::get<std::shared_ptr<const FusedGroup>>(attrs.parsed);
}

}  // namespace ir
