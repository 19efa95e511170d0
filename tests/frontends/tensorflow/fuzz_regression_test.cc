/*!
 * \file fuzz_regression_test.cc
 * \brief Replays every hostile input that once crashed or ran away (fuzz_regressions/, named
 * `<what>.pb` or `<what>.pbtxt`): each must now load or fail with an ir::Error.
 */
#include <gtest/gtest.h>

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "fuzz_model.h"

namespace ir {
namespace tf {
namespace {

/*! \brief What the importer now says about the inputs that once crashed it or ran away. */
const std::map<std::string, std::string>& ExpectedErrors() {
  static const std::map<std::string, std::string> errors = {
      {"recursive_function.pbtxt", "more than 32 calls deep"},
      {"exponential_inlining.pbtxt", "the graph has more than 262144 nodes after inlining functions"},
      {"shape_of_huge_tensor.pbtxt", "input 1 ('shape') must be known before the graph runs"},
      {"overflowing_extent.pbtxt", "is too large"},
      {"exponential_bodies.pbtxt", "control-flow bodies have more than 262144 nodes in all"},
      {"if_empty_branch_name.pbtxt", "attribute 'then_branch' names no function (empty name)"},
      {"if_arity_mismatch.pbtxt", "then_branch function 'id' takes 1 argument(s), but the node passes 2"},
      {"while_recursive_body.pbtxt", "function 'b' calls itself through control-flow bodies (b -> b)"},
      {"deep_control_flow_nesting.pbtxt", "is nested more than 64 control-flow levels deep"},
      {"next_iteration_without_input.pbtxt", "NextIteration 'w/NextIteration' of while frame 'w' has no input"},
  };
  return errors;
}

TEST(TFFuzzRegressionTest, ReplaysEveryFixedCrasher) {
  std::string dir = std::string(IR_TF_TEST_DATA_DIR) + "/fuzz_regressions";
  DIR* d = opendir(dir.c_str());
  ASSERT_NE(d, nullptr) << dir;
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) names.push_back(e->d_name);
  closedir(d);
  std::sort(names.begin(), names.end());
  int replayed = 0;
  for (const std::string& name : names) {
    bool text = name.size() > 6 && name.compare(name.size() - 6, 6, ".pbtxt") == 0;
    bool binary = name.size() > 3 && name.compare(name.size() - 3, 3, ".pb") == 0;
    if (!text && !binary) continue;
    std::ifstream in(dir + "/" + name, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    SCOPED_TRACE(name);
    std::string error = FuzzModel(bytes.str(), text);  // must return, not crash or throw anything else
    auto expected = ExpectedErrors().find(name);
    if (expected != ExpectedErrors().end()) {
      EXPECT_NE(error.find(expected->second), std::string::npos) << error;
    }
    ++replayed;
  }
  EXPECT_GE(replayed, static_cast<int>(ExpectedErrors().size()));
}

}  // namespace
}  // namespace tf
}  // namespace ir
