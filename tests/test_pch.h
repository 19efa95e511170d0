/*!
 * \file test_pch.h
 * \brief The headers most test files include, precompiled once per test suite (tests/CMakeLists.txt,
 *        IR_TEST_PCH). Every test file still includes what it uses: this list only saves parsing time.
 */
#ifndef IR_TESTS_TEST_PCH_H_
#define IR_TESTS_TEST_PCH_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/ndarray.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ir/runtime.h"

#endif  // IR_TESTS_TEST_PCH_H_
