/*!
 * \file rules_fuzz_corpus_test.cc
 * \brief Replays the corpus of the rule-language fuzz target (fuzz/rules_seeds/, hand-made, and
 * whatever inputs a fuzzing run found and was fixed for): each file goes through what
 * fuzz/rules_fuzzer.cc does, ParseRules then CheckRules, and may only end in an ir::Error.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/rewrite.h"

namespace ir {
namespace {

TEST(RulesFuzzCorpusTest, EveryInputParsesOrFailsWithAnError) {
  std::filesystem::path dir = std::filesystem::path(IR_TEST_SOURCE_DIR) / "fuzz" / "rules_seeds";
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u) << dir;
  for (const auto& path : files) {
    SCOPED_TRACE(path.filename().string());
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    try {
      rewrite::CheckRules(rewrite::ParseRules(text.str(), "fuzz"));
    } catch (const Error&) {
      // the expected outcome for a bad file; a crash or another exception fails the test
    }
  }
}

}  // namespace
}  // namespace ir
