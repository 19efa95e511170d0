/*!
 * \file tool_test.cc
 * \brief ir-tf-run end to end: flags, .npy in and out, exit codes.
 */
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ir_tf/npy.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

struct ToolResult {
  int status = -1;
  std::string output;
};

/*! \brief Runs ir-tf-run with `args`, capturing stdout and stderr. */
ToolResult RunTool(const std::string& args) {
  std::string log = ::testing::TempDir() + "ir_tf_run_" + std::to_string(getpid()) + ".log";
  std::string command = std::string(IR_TF_RUN_TOOL) + " " + args + " > " + log + " 2>&1";
  ToolResult result;
  int raw = std::system(command.c_str());
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  result.output = text.str();
  std::remove(log.c_str());
  return result;
}

std::string TempDir(const std::string& name) {
  std::string dir = ::testing::TempDir() + name + "_" + std::to_string(getpid());
  std::system(("mkdir -p " + dir).c_str());
  return dir;
}

TEST(IrTfRunTest, RunsASavedModelFromNpyToNpy) {
  IR_TF_REQUIRE(model, "tensorflow-serving/saved_model_half_plus_two_tf2_cpu");
  std::string dir = TempDir("tool_saved_model");
  WriteNpy(dir + "/x.npy", NDArray::FromVector<float>(Shape{1}, {10}));
  ToolResult r =
      RunTool("--graph " + model + " --signature serving_default --feed x=" + dir + "/x.npy --fetch y --out " + dir);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("restored 3 variable(s)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("y: float32[1] = [7]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("total:"), std::string::npos) << r.output;
  test::ExpectClose(ReadNpy(dir + "/y.npy"), {7}, "y.npy", 0, 0);
}

TEST(IrTfRunTest, TrainsWithInitRunStepsAndRandomFeeds) {
  IR_TF_REQUIRE(model, "dl4j-test-resources/mnist_00/model.txt");
  std::string dir = TempDir("tool_train");
  ToolResult r = RunTool("--graph " + model +
                         " --feed input=random:1 --feed target=random:2 --init init "
                         "--run GradientDescent --steps 5 --fetch Mean --fetch Variable_1:0 --out " +
                         dir + " --dump " + dir + "/ir --no-fusion");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("run 'GradientDescent' x 5:"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(" FoldConstants "), std::string::npos) << r.output;
  EXPECT_EQ(ReadNpy(dir + "/Variable_1_0.npy").shape(), Shape{10});
  EXPECT_EQ(ReadNpy(dir + "/Mean.npy").shape(), Shape::Scalar());
  EXPECT_EQ(std::system(("ls " + dir + "/ir | grep -q _TFImport.txt").c_str()), 0) << "--dump shows the import";
  EXPECT_EQ(std::system(("ls " + dir + "/ir | grep -q _FoldConstants.txt").c_str()), 0) << "and every pass after it";
}

TEST(IrTfRunTest, ListsUnsupportedOps) {
  IR_TF_REQUIRE(model, "dl4j-test-resources/mnist_00/model.txt");
  ToolResult r = RunTool("--graph " + model + " --list-unsupported");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("unsupported: save/SaveV2 (op SaveV2)"), std::string::npos) << r.output;
}

TEST(IrTfRunTest, ReportsErrorsWithAnExitCode) {
  ToolResult missing = RunTool("--graph /nonexistent.pb --fetch y");
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.output.find("ir-tf-run: error: '/nonexistent.pb' does not exist"), std::string::npos)
      << missing.output;
  ToolResult usage = RunTool("--fetch y");
  EXPECT_EQ(usage.status, 2);
  EXPECT_NE(usage.output.find("--graph is required"), std::string::npos) << usage.output;
}

/*! \brief Empty when an OpenCL device can be used, else why not. */
std::string WhyNoOpenCL() {
  try {
    DeviceAPI::Get(Device{DeviceType::kOpenCL, 0});
    return "";
  } catch (const Error& err) {
    return err.what();
  }
}

TEST(IrTfRunTest, PrintsOpenCLFetchesAndExitsCleanly) {
  std::string why = WhyNoOpenCL();
  if (!why.empty()) GTEST_SKIP() << "no OpenCL device, skipping: " << why;
  using namespace test::pbtxt;  // NOLINT(build/namespaces): graph builders
  // A matmul and a reduction: library kernels whose first launch makes POCL compile them on
  // its worker thread, which crashed processes exiting with such work queued.
  std::string graph = Placeholder("x", {2, 3}) + Const("w", {3, 2}, {1, 0, 0, 1, 1, 1}) +
                      Node("y", "MatMul", {"x", "w"}, Type()) + Ints("axes", {0, 1}) +
                      Node("total", "Sum", {"y", "axes"}, Type() + Type("DT_INT32", "Tidx"));
  std::string dir = TempDir("tool_opencl");
  std::ofstream(dir + "/graph.pbtxt") << graph;
  WriteNpy(dir + "/x.npy", NDArray::FromVector<float>(Shape{2, 3}, {1, 2, 3, 4, 5, 6}));
  for (int attempt = 0; attempt < 5; ++attempt) {
    ToolResult r = RunTool("--graph " + dir + "/graph.pbtxt --target opencl --feed x=" + dir +
                           "/x.npy --fetch y --fetch total --out " + dir);
    ASSERT_EQ(r.status, 0) << "attempt " << attempt << ":\n" << r.output;
    EXPECT_NE(r.output.find("y: float32[2,2] = [4, 5, 10, 11]"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("total: float32[] = [30]"), std::string::npos) << r.output;
  }
  test::ExpectClose(ReadNpy(dir + "/y.npy"), {4, 5, 10, 11}, "y.npy", 0, 0);
}

}  // namespace
}  // namespace tf
}  // namespace ir
