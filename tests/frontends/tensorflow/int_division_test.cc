/*!
 * \file int_division_test.cc
 * \brief Integer division, modulo and power imported from TensorFlow: TensorFlow's rounding,
 * and TensorFlow's errors where its kernels raise (our own ops compute defined values there).
 */
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ir_tf/npy.h"
#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

/*! \brief x and y (int32 [4] placeholders) and `op`(x, y) named "r". */
std::string Binary(const std::string& op, const std::string& dtype = "DT_INT32") {
  return Placeholder("x", {4}, dtype) + Placeholder("y", {4}, dtype) + Node("r", op, {"x", "y"}, Type(dtype));
}

NDArray Ints(const std::vector<int32_t>& values) {
  return NDArray::FromVector<int32_t>(Shape{static_cast<int64_t>(values.size())}, values);
}

NDArray RunBinary(const std::string& op, const NDArray& x, const NDArray& y, bool fusion = false) {
  std::string dtype = x.dtype() == DType::kInt32 ? "DT_INT32" : "DT_FLOAT";
  return test::RunText(Binary(op, dtype), {{"x", x}, {"y", y}}, {"r"}, fusion)[0];
}

const NDArray kX = Ints({-7, 7, -7, 7});
const NDArray kY = Ints({2, 2, -2, -2});

TEST(TFIntDivisionTest, RoundsAsTensorFlowForNegativeOperands) {
  ExpectClose(RunBinary("FloorDiv", kX, kY), {-4, 3, 3, -4}, "FloorDiv", 0, 0);
  ExpectClose(RunBinary("FloorMod", kX, kY), {1, 1, -1, -1}, "FloorMod", 0, 0);
  ExpectClose(RunBinary("TruncateDiv", kX, kY), {-3, 3, 3, -3}, "TruncateDiv", 0, 0);
  ExpectClose(RunBinary("Div", kX, kY), {-3, 3, 3, -3}, "Div of integers truncates", 0, 0);
  ExpectClose(RunBinary("TruncateMod", kX, kY), {-1, 1, -1, 1}, "TruncateMod", 0, 0);
  ExpectClose(RunBinary("Mod", kX, kY), {-1, 1, -1, 1}, "Mod", 0, 0);
  NDArray fx = NDArray::FromVector<float>(Shape{4}, {-7.5f, 7.5f, -7.5f, 7.5f});
  NDArray fy = NDArray::FromVector<float>(Shape{4}, {2, 2, -2, -2});
  ExpectClose(RunBinary("Mod", fx, fy), {-1.5, 1.5, -1.5, 1.5}, "Mod of floats is fmod");
  ExpectClose(RunBinary("TruncateDiv", fx, fy), {-3, 3, 3, -3}, "TruncateDiv of floats");
  ExpectClose(RunBinary("Pow", Ints({2, 3, -2, 5}), Ints({3, 2, 3, 0})), {8, 9, -8, 1}, "Pow", 0, 0);
}

TEST(TFIntDivisionTest, FedZeroDivisorRaisesTensorFlowsError) {
  NDArray zero = Ints({1, 0, 3, 4});
  for (const char* op : {"FloorDiv", "FloorMod", "Div", "TruncateDiv", "Mod", "TruncateMod"}) {
    for (bool fusion : {false, true}) {
      SCOPED_TRACE(std::string(op) + (fusion ? " fused" : " unfused"));
      EXPECT_ERROR(RunBinary(op, kX, zero, fusion), "Integer division by zero");
      EXPECT_ERROR(RunBinary(op, kX, zero, fusion), std::string("TensorFlow node 'r' (op ") + op + ")");
    }
  }
}

TEST(TFIntDivisionTest, NegativeIntegerExponentRaises) {
  for (bool fusion : {false, true}) {
    EXPECT_ERROR(RunBinary("Pow", kX, Ints({1, 2, -1, 0}), fusion),
                 "Integers to negative integer powers are not allowed");
  }
  NDArray fx = NDArray::FromVector<float>(Shape{4}, {2, 2, 2, 2});
  NDArray fy = NDArray::FromVector<float>(Shape{4}, {-1, 0, 1, 2});
  ExpectClose(RunBinary("Pow", fx, fy), {0.5, 1, 2, 4}, "negative float exponents are fine");
}

TEST(TFIntDivisionTest, InputsMustHaveTheDtypeOfT) {
  // T decides whether the divisor is checked: integer inputs under a float T would divide by 0.
  std::string graph = Placeholder("x", {4}, "DT_INT32") + Placeholder("y", {4}, "DT_INT32") +
                      Node("r", "FloorDiv", {"x", "y"}, Type("DT_FLOAT"));
  EXPECT_ERROR(test::RunText(graph, {{"x", kX}, {"y", kY}}, {"r"}),
               "TensorFlow node 'r' (op FloorDiv): input 0 has dtype int32 but attribute 'T' is float32");
}

TEST(TFIntDivisionTest, ZeroDivisorIsACleanErrorOfIrTfRun) {
  std::string dir = ::testing::TempDir() + "int_division_" + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  std::ofstream(dir + "/graph.pbtxt") << Binary("FloorDiv");
  WriteNpy(dir + "/x.npy", kX);
  WriteNpy(dir + "/y.npy", Ints({1, 1, 0, 1}));
  std::string command = std::string(IR_TF_RUN_TOOL) + " --graph " + dir + "/graph.pbtxt --feed x=" + dir +
                        "/x.npy --feed y=" + dir + "/y.npy --fetch r > " + dir + "/log 2>&1";
  int raw = std::system(command.c_str());
  std::ifstream in(dir + "/log");
  std::ostringstream log;
  log << in.rdbuf();
  ASSERT_TRUE(WIFEXITED(raw)) << log.str();
  EXPECT_EQ(WEXITSTATUS(raw), 1) << log.str();
  EXPECT_NE(log.str().find("ir-tf-run: error:"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("TensorFlow node 'r' (op FloorDiv): Integer division by zero"), std::string::npos)
      << log.str();
}

}  // namespace
}  // namespace tf
}  // namespace ir
