/*!
 * \file limits_test_util.h
 * \brief Helpers of the tests that feed hostile inputs: a temporary directory, the peak memory
 * so far, and running a call with a time limit so that a hang fails the test.
 */
#ifndef IR_TESTS_LIMITS_TEST_UTIL_H_
#define IR_TESTS_LIMITS_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include "ir/base.h"

namespace ir {
namespace tf {
namespace test {

/*! \brief A fresh directory under the system temp dir, removed with its contents afterwards. */
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "ir-tf-hostile-XXXXXX").string();
    path_ = mkdtemp(&pattern[0]) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string File(const std::string& name, const std::string& bytes) const {
    std::string path = path_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path;
  }
  std::string Fifo(const std::string& name) const {
    std::string path = path_ + "/" + name;
    EXPECT_EQ(mkfifo(path.c_str(), 0600), 0) << path;
    return path;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/*! \brief The peak resident memory of this process so far, in MiB. */
inline long PeakRssMiB() {
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

/*!
 * \brief The ir::Error message `f` throws, "<no error>" when it returns, or "<timed out>" when it
 * is still running after `seconds` (it runs on a detached thread so that a hang fails the test).
 */
inline std::string ErrorWithin(std::function<void()> f, int seconds = 20) {
  auto done = std::make_shared<std::promise<std::string>>();
  std::future<std::string> result = done->get_future();
  std::thread([f, done] {
    try {
      f();
      done->set_value("<no error>");
    } catch (const Error& err) {
      done->set_value(err.what());
    }
  }).detach();
  if (result.wait_for(std::chrono::seconds(seconds)) != std::future_status::ready) return "<timed out>";
  return result.get();
}

}  // namespace test
}  // namespace tf
}  // namespace ir

#endif  // IR_TESTS_LIMITS_TEST_UTIL_H_
