/*!
 * \file simplify_options.cc
 * \brief Simplify's options: the simplify.* graph attributes (what a caller sets, what the pass
 * records), read into SimplifyOptions, and which rule tags (nsz, fast_math) they enable.
 */
#include <string>
#include <vector>

#include "ir/graph_attr.h"
#include "ir/rewrite.h"

namespace ir {
namespace rewrite {
namespace {

std::vector<std::string> StringsAttr(const Graph& g, const std::string& key) {
  return g.GetAttrOr<std::vector<std::string>>(key, {});
}

}  // namespace

bool TagEnabled(RuleTag tag, const SimplifyOptions& options) {
  if (tag == RuleTag::kFastMath) return options.fast_math;
  return tag != RuleTag::kNsz || options.fast_math || options.nsz;
}

SimplifyOptions SimplifyOptionsFromGraph(const Graph& graph) {
  SimplifyOptions options;
  options.fast_math = graph.GetAttrOr<int>("simplify.fast_math", 0) != 0;
  options.nsz = graph.GetAttrOr<int>("simplify.nsz", 0) != 0;
  options.sets = StringsAttr(graph, "simplify.sets");
  options.disabled = StringsAttr(graph, "simplify.disable");
  options.explain = StringsAttr(graph, "simplify.explain");
  return options;
}

}  // namespace rewrite

IR_REGISTER_GRAPH_ATTR("simplify.fast_math")
    .describe("Option of Simplify: also apply the nsz and fast_math rules (which change special values) when nonzero.")
    .set_type<int>();
IR_REGISTER_GRAPH_ATTR("simplify.nsz")
    .describe("Option of Simplify: also apply the nsz rules (bit for bit but for the sign of zero) when nonzero.")
    .set_type<int>();
IR_REGISTER_GRAPH_ATTR("simplify.sets")
    .describe("Option of Simplify: the rule sets to apply (default: every registered set).")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("simplify.disable")
    .describe("Option of Simplify: rules never to apply, by name.")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("simplify.explain")
    .describe("Option of Simplify: rules whose failures to match are written to simplify.explained.")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("simplify.fired")
    .describe("Rewrites Simplify made, \"rule @ node\" in the order they fired (printed in IR dumps).")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("simplify.explained")
    .describe("Why the rules named in simplify.explain did not fire: \"rule @ node: reason\".")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("simplify.merged")
    .describe(
        "Nodes Simplify's last step made an output of a sibling (FSubsumedBy, ir/subsume.h): \"node into "
        "sibling\"; simplify.fired lists them too, as \"subsumed @ node into sibling\".")
    .set_type<std::vector<std::string>>();

}  // namespace ir
