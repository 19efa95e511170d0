/*!
 * \file c_api_autodiff.cc
 * \brief C API: reverse-mode gradients of symbols (the Gradient pass), and pfor loops closed
 * over an index (jacobians).
 */
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "c_api/c_api_common.h"
#include "ir/pass.h"
#include "ir/symbol.h"
#include "ir/vectorize.h"

namespace {

/*!
 * \brief The Gradient pass's input graph for `ys`, with the options of `json` ({"stop_nodes":
 * [..]}, optional) as the graph attributes the pass reads. The rewrite-rule options gradients
 * once took (simplify, fast_math, rule_sets) are refused: gradients are built without rules,
 * which run when a session binds the graph (its options of the same names).
 */
ir::Graph GradientGraph(const std::vector<ir::NodeEntry>& ys, const char* json) {
  ir::Graph graph(ys);
  if (json == nullptr || std::string(json).find_first_not_of(" \t\r\n") == std::string::npos) return graph;
  std::vector<std::string> stop_nodes;
  const std::vector<std::string> unset = {"\x01"};  // tells a key left out from an empty list
  int simplify = -1, fast_math = -1;
  std::vector<std::string> rule_sets = unset;
  ir::detail::WithJSONContext("gradient options", [&] {
    std::istringstream is(ir::capi::NumericBooleans(json));
    dmlc::JSONReader reader(&is);
    dmlc::JSONObjectReadHelper helper;
    helper.DeclareOptionalField("stop_nodes", &stop_nodes);
    helper.DeclareOptionalField("simplify", &simplify);
    helper.DeclareOptionalField("fast_math", &fast_math);
    helper.DeclareOptionalField("rule_sets", &rule_sets);
    helper.ReadAllFields(&reader);
  });
  IR_CHECK(simplify == -1 && fast_math == -1 && rule_sets == unset)
      << "IRSymbolGradientEx: the options simplify, fast_math and rule_sets are gone: gradients are built "
         "without rewrite rules, which run when a session binds the graph (the session options of those names)";
  if (!stop_nodes.empty()) graph.SetAttr("grad.stop_nodes", stop_nodes);
  return graph;
}

/*! \brief The gradients of `ys` with respect to `xs` (heads `grad_ys`, may be NULL), options from `json`. */
std::unique_ptr<ir::Symbol> GradientSymbol(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys,
                                           const char* json) {
  ir::Graph graph = GradientGraph(static_cast<ir::Symbol*>(ys)->outputs, json);
  graph.SetAttr("grad_xs", static_cast<ir::Symbol*>(xs)->outputs);
  if (grad_ys != nullptr) graph.SetAttr("grad_ys_out_grad", static_cast<ir::Symbol*>(grad_ys)->outputs);
  auto result = std::make_unique<ir::Symbol>();
  result->outputs = ir::ApplyPass(std::move(graph), "Gradient").outputs;
  return result;
}

}  // namespace

int IRSymbolGradient(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(ys);
  IR_API_CHECK_NOT_NULL(xs);
  IR_API_CHECK_NOT_NULL(out);
  *out = GradientSymbol(ys, xs, grad_ys, nullptr).release();
  IR_API_END();
}

int IRSymbolGradientEx(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys, const char* options_json,
                       IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(ys);
  IR_API_CHECK_NOT_NULL(xs);
  IR_API_CHECK_NOT_NULL(out);
  *out = GradientSymbol(ys, xs, grad_ys, options_json).release();
  IR_API_END();
}

int IRSymbolCreatePfor(const char* node_name, IRSymbolHandle index, IRSymbolHandle outputs, IRSymbolHandle inside,
                       IRSymbolHandle n_from, uint32_t num_attrs, const char** keys, const char** vals,
                       IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(node_name);
  IR_API_CHECK_NOT_NULL(index);
  IR_API_CHECK_NOT_NULL(outputs);
  IR_API_CHECK_ARRAY(keys, num_attrs);
  IR_API_CHECK_ARRAY(vals, num_attrs);
  IR_API_CHECK_NOT_NULL(out);
  const std::vector<ir::NodeEntry>& index_out = static_cast<ir::Symbol*>(index)->outputs;
  IR_CHECK(index_out.size() == 1 && index_out[0].node->is_variable())
      << "IRSymbolCreatePfor '" << node_name << "': the index must be one variable";
  std::map<std::string, std::string> attrs;
  for (uint32_t i = 0; i < num_attrs; ++i) attrs[keys[i]] = vals[i];
  std::vector<ir::NodePtr> built;
  if (inside != nullptr) {
    for (const ir::NodeEntry& e : static_cast<ir::Symbol*>(inside)->outputs) built.push_back(e.node);
  }
  const ir::NodeEntry* count = nullptr;
  if (n_from != nullptr) {
    const std::vector<ir::NodeEntry>& from = static_cast<ir::Symbol*>(n_from)->outputs;
    IR_CHECK(from.size() == 1) << "IRSymbolCreatePfor '" << node_name << "': n_from must be one value";
    count = &from[0];
  }
  auto result = std::make_unique<ir::Symbol>();
  result->outputs =
      ir::ClosePfor(index_out[0].node, static_cast<ir::Symbol*>(outputs)->outputs, built, count, attrs, node_name);
  *out = result.release();
  IR_API_END();
}
