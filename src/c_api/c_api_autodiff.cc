/*!
 * \file c_api_autodiff.cc
 * \brief C API: reverse-mode gradients of symbols.
 */
#include <memory>

#include "c_api/c_api_common.h"
#include "ir/autodiff.h"
#include "ir/symbol.h"

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
