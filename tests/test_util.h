/*!
 * \file test_util.h
 * \brief Assertions shared by the test suites.
 */
#ifndef IR_TESTS_TEST_UTIL_H_
#define IR_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "ir/base.h"

/*! \brief Expects `stmt` to throw ir::Error whose message contains `substring`. */
#define EXPECT_ERROR(stmt, substring)                                                      \
  do {                                                                                     \
    try {                                                                                  \
      stmt;                                                                                \
      ADD_FAILURE() << "expected ir::Error containing \"" << (substring) << "\"";          \
    } catch (const ::ir::Error& err) {                                                     \
      EXPECT_NE(std::string(err.what()).find(substring), std::string::npos) << err.what(); \
    }                                                                                      \
  } while (0)

namespace ir {
namespace test {

/*! \brief A "<key>: N kB" line of /proc/self/status (e.g. VmHWM, the peak RSS) in bytes; -1 when absent. */
inline long long ProcStatusBytes(const std::string& key) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1)) * 1024;
  }
  return -1;
}

/*! \brief Resets the peak RSS to the current RSS (Linux clear_refs "5"); false when not allowed. */
inline bool ResetPeakRss() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return clear.good();
}

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_TEST_UTIL_H_
