/*!
 * \file c_api_rewrite.cc
 * \brief C API: loading user rewrite-rule files (the rules Simplify applies).
 */
#include "c_api/c_api_common.h"
#include "ir/rewrite.h"

int IRRulesLoadFile(const char* path, const char** out_set) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(path);
  IR_API_CHECK_NOT_NULL(out_set);
  auto* buf = ir::capi::ThreadReturnBuffer();
  buf->str = ir::rewrite::LoadRuleFile(path);
  *out_set = buf->str.c_str();
  IR_API_END();
}
