/*!
 * \file rules_fuzzer.cc
 * \brief libFuzzer target: each input is rule-language text (docs/REWRITE_RULES.md).
 *
 * ir::Error is the expected outcome for bad text; a file that parses is checked against the
 * registries (CheckRules), which may also only throw ir::Error. Anything else (a crash, another
 * exception, a hang, deep recursion) is a bug.
 */
#include <cstddef>
#include <cstdint>
#include <string>

#include "ir/rewrite.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ir::rewrite::CheckRules(ir::rewrite::ParseRules(std::string(reinterpret_cast<const char*>(data), size), "fuzz"));
  } catch (const ir::Error&) {
  }
  return 0;
}
