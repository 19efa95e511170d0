/*!
 * \file fuzz_corpus_test.cc
 * \brief Replays the corpora of the checkpoint and SavedModel fuzz targets (fuzz_corpus/, written
 * by its make_corpus.py): hand-made seeds that load, and inputs that once crashed, ran away or
 * were read wrong, each now failing with its ir::Error. Anything else (a crash, another
 * exception) fails the test.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "fuzz_checkpoint.h"
#include "fuzz_saved_model.h"

namespace ir {
namespace tf {
namespace {

/*! \brief What each corpus input gives: "" (it loads) or a part of its error. */
const std::map<std::string, std::string>& Expected() {
  static const std::map<std::string, std::string> expected = {
      {"checkpoint/dtypes.bin", ""},
      {"checkpoint/snappy.bin", ""},
      {"checkpoint/one_block.bin", ""},
      {"checkpoint/keras_cnn.bin", ""},
      {"checkpoint/wrapped_block_size.bin", "a block handle points past the end of the file"},
      {"checkpoint/repeated_key.bin", "key 'w' is out of order or repeated"},
      {"checkpoint/repeated_block.bin", "overlaps or precedes the one before it"},
      {"saved_model/call.pb", ""},
      {"saved_model/if.pb", ""},
      {"saved_model/duplicate_equal_function.pb", ""},
      {"saved_model/duplicate_different_function.pb",
       "Cannot add function 'f' because a different function with the same name already exists."},
      {"saved_model/keras_cnn.pb", ""},
      {"saved_model/keras_sequential.pb", ""},
  };
  return expected;
}

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

TEST(TFFuzzCorpusTest, ReplaysTheCheckpointAndSavedModelCorpora) {
  std::filesystem::path root = std::filesystem::path(IR_TF_TEST_DATA_DIR) / "fuzz_corpus";
  int replayed = 0;
  for (const char* target : {"checkpoint", "saved_model"}) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(root / target)) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::string name = std::string(target) + "/" + path.filename().string();
      SCOPED_TRACE(name);
      std::string bytes = Read(path);
      std::string error = std::string(target) == "checkpoint" ? FuzzCheckpoint(bytes) : FuzzSavedModel(bytes);
      auto expected = Expected().find(name);
      if (expected == Expected().end()) continue;  // a corpus input the fuzzer added: it only must not crash
      if (expected->second.empty()) {
        EXPECT_EQ(error, "");
      } else {
        EXPECT_NE(error.find(expected->second), std::string::npos) << error;
      }
      ++replayed;
    }
  }
  EXPECT_EQ(replayed, static_cast<int>(Expected().size()));
}

}  // namespace
}  // namespace tf
}  // namespace ir
