/*!
 * \file test_util.h
 * \brief Assertions shared by the test suites.
 */
#ifndef IR_TESTS_TEST_UTIL_H_
#define IR_TESTS_TEST_UTIL_H_

#include <gtest/gtest.h>

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

#endif  // IR_TESTS_TEST_UTIL_H_
