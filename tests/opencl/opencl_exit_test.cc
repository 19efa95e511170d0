// A process that exits right after a run: POCL compiles a kernel's work-group function on its
// worker thread at the kernel's first launch, and exiting while it did let static destructors
// tear LLVM down under that thread (a crash at exit). Runs now return with their work done.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"

namespace ir {
namespace {

/*! \brief Runs kernels never built before (fresh caches in `dir`) on opencl:0, then exits at once. */
[[noreturn]] void RunFreshKernelsAndExit(const std::string& dir) {
  setenv("POCL_CACHE_DIR", (dir + "/pocl").c_str(), 1);
  setenv("IR_KERNEL_CACHE_DIR", (dir + "/ir").c_str(), 1);
  SessionOptions options;
  options.target = "opencl";
  options.fusion = false;
  Session session(options);
  NodeEntry y = test::Apply("exp", "y", {test::Apply("sigmoid", "s", {test::Var("x")})});
  session.Run({y}, {{"x", NDArray::FromVector<float>(Shape{4}, {1, 2, 3, 4})}});
  std::exit(0);  // no read-back of the result
}

TEST(OpenCLExitTest, ExitingRightAfterARunIsClean) {
  IR_REQUIRE_OPENCL();
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts afresh: no inherited OpenCL state
  for (int attempt = 0; attempt < 6; ++attempt) {
    std::string cache = StrCat(::testing::TempDir(), "ir_pocl_exit_", getpid(), "_", attempt);
    EXPECT_EXIT(RunFreshKernelsAndExit(cache), ::testing::ExitedWithCode(0), "") << "attempt " << attempt;
    std::system(("rm -rf '" + cache + "'").c_str());
  }
}

}  // namespace
}  // namespace ir
