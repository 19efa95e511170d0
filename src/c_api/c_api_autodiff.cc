/*!
 * \file c_api_autodiff.cc
 * \brief C API: reverse-mode gradients of symbols, and pfor loops closed over an index (jacobians).
 */
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "c_api/c_api_common.h"
#include "ir/autodiff.h"
#include "ir/symbol.h"
#include "ir/vectorize.h"

int IRSymbolGradient(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(ys);
  IR_API_CHECK_NOT_NULL(xs);
  IR_API_CHECK_NOT_NULL(out);
  std::vector<ir::NodeEntry> heads;
  if (grad_ys != nullptr) heads = static_cast<ir::Symbol*>(grad_ys)->outputs;
  auto result = std::make_unique<ir::Symbol>();
  result->outputs = ir::Gradients(static_cast<ir::Symbol*>(ys)->outputs, static_cast<ir::Symbol*>(xs)->outputs, heads);
  *out = result.release();
  IR_API_END();
}

int IRSymbolGradientEx(IRSymbolHandle ys, IRSymbolHandle xs, IRSymbolHandle grad_ys, uint32_t num_options,
                       const char** keys, const char** vals, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(ys);
  IR_API_CHECK_NOT_NULL(xs);
  IR_API_CHECK_ARRAY(keys, num_options);
  IR_API_CHECK_ARRAY(vals, num_options);
  IR_API_CHECK_NOT_NULL(out);
  ir::GradientOptions options;
  for (uint32_t i = 0; i < num_options; ++i) {
    std::string key = keys[i], value = vals[i];
    IR_CHECK(key == "simplify" || key == "fast_math" || key == "rule_sets")
        << "IRSymbolGradientEx: unknown option '" << key << "' (simplify, fast_math, rule_sets)";
    IR_CHECK(key == "rule_sets" || value == "0" || value == "1")
        << "IRSymbolGradientEx: option '" << key << "' is '" << value << "', expected 0 or 1";
    if (key == "simplify") options.simplify = value == "1";
    if (key == "fast_math") options.fast_math = value == "1";
    for (size_t start = 0; key == "rule_sets" && start < value.size();) {
      size_t comma = std::min(value.find(',', start), value.size());
      if (comma > start) options.rule_sets.push_back(value.substr(start, comma - start));
      start = comma + 1;
    }
  }
  std::vector<ir::NodeEntry> heads;
  if (grad_ys != nullptr) heads = static_cast<ir::Symbol*>(grad_ys)->outputs;
  auto result = std::make_unique<ir::Symbol>();
  result->outputs =
      ir::Gradients(static_cast<ir::Symbol*>(ys)->outputs, static_cast<ir::Symbol*>(xs)->outputs, heads, options);
  *out = result.release();
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
