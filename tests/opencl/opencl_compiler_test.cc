// The OpenCL printer, compiler and module, and program binaries in the kernel cache.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using opencl_test::OpenCLDevice;

ast::Expr I64(int64_t v) { return ast::Const(static_cast<double>(v), DType::kInt64); }

/*! \brief out0[i] = in0[i] * scale over n elements of `dtype`. */
Kernel ScaleKernel(int64_t n, double scale, DType dtype) {
  Kernel k;
  k.kind = Kernel::kMap;
  k.extents = {n};
  k.params = {KernelParam{"in0", dtype, false}, KernelParam{"out0", dtype, true}};
  k.lets.emplace_back("t0", ast::Load("in0", ast::Var("i0", DType::kInt64), dtype));
  k.stores.emplace_back(1, ast::Var("t0", dtype) * ast::Const(scale, dtype));
  k.AssignCanonicalName();
  return k;
}

/*! \brief out0[o, j] = sum over r of in0[o, r, j] for in0 of [outer, red, inner]. */
Kernel SumKernel(int64_t outer, int64_t red, int64_t inner) {
  Kernel k;
  k.kind = Kernel::kReduce;
  k.extents = {outer, red, inner};
  k.params = {KernelParam{"in0", DType::kFloat32, false}, KernelParam{"out0", DType::kFloat32, true}};
  ast::Expr position = (ast::Var("i0", DType::kInt64) * I64(red) + ast::Var("i1", DType::kInt64)) * I64(inner) +
                       ast::Var("i2", DType::kInt64);
  k.reduce_kind = "sum";
  k.reduce_value = ast::Load("in0", position, DType::kFloat32);
  k.reduce_output = 1;
  k.AssignCanonicalName();
  return k;
}

/*! \brief Sets IR_KERNEL_CACHE_DIR to a fresh directory for the scope of a test. */
class TempCacheDir {
 public:
  TempCacheDir() {
    char pattern[] = "/tmp/ir-opencl-cache-XXXXXX";
    path_ = mkdtemp(pattern);
    const char* old = getenv("IR_KERNEL_CACHE_DIR");
    had_old_ = old != nullptr;
    if (had_old_) old_ = old;
    setenv("IR_KERNEL_CACHE_DIR", path_.c_str(), 1);
  }
  ~TempCacheDir() {
    if (had_old_) {
      setenv("IR_KERNEL_CACHE_DIR", old_.c_str(), 1);
    } else {
      unsetenv("IR_KERNEL_CACHE_DIR");
    }
    std::system(("rm -rf " + path_).c_str());
  }
  /*! \brief The one cache entry written so far. */
  std::string Entry() const {
    std::string listing;
    FILE* pipe = popen(("ls " + path_ + "/*.kbin").c_str(), "r");
    char buf[512];
    while (pipe != nullptr && fgets(buf, sizeof(buf), pipe) != nullptr) listing += buf;
    if (pipe != nullptr) pclose(pipe);
    return listing.substr(0, listing.find('\n'));
  }

 private:
  std::string path_, old_;
  bool had_old_ = false;
};

std::vector<float> RunScale(CompiledModule& module, const Kernel& kernel, const std::vector<float>& values) {
  NDArray in = NDArray::FromVector<float>({static_cast<int64_t>(values.size())}, values).CopyTo(OpenCLDevice());
  NDArray out(in.shape(), DType::kFloat32, OpenCLDevice());
  OpContext ctx;
  ctx.device = OpenCLDevice();
  module.Launch(kernel.name, {in, out}, ctx);
  return out.ToVector<float>();
}

TEST(OpenCLPrinterTest, PassesOffsetsAndEnablesDoublesOnlyWhenUsed) {
  const KernelPrinter& printer = KernelPrinter::Get("opencl");
  std::string single = printer.Print({ScaleKernel(8, 2, DType::kFloat32)});
  EXPECT_NE(single.find("const long in0_offset"), std::string::npos) << single;
  EXPECT_NE(single.find("// ir-launch fused_"), std::string::npos) << single;
  EXPECT_EQ(single.find("cl_khr_fp64"), std::string::npos) << single;
  std::string twice = printer.Print({ScaleKernel(8, 2, DType::kFloat64)});
  EXPECT_NE(twice.find("#pragma OPENCL EXTENSION cl_khr_fp64 : enable"), std::string::npos) << twice;
  EXPECT_EQ(printer.Print({ScaleKernel(8, 2, DType::kFloat32)}), single) << "printing is canonical";
}

TEST(OpenCLPrinterTest, SharesLongReductionsWithinAWorkGroup) {
  const KernelPrinter& printer = KernelPrinter::Get("opencl");
  EXPECT_NE(printer.Print({SumKernel(2, 5000, 1)}).find("__local float partial[128]"), std::string::npos);
  EXPECT_EQ(printer.Print({SumKernel(300, 10, 2)}).find("__local"), std::string::npos);
}

TEST(OpenCLCompilerTest, GeneratedReductionsMatchTheHost) {
  IR_REQUIRE_OPENCL();
  // One program with both shapes of reduction kernel.
  Kernel group = SumKernel(2, 5000, 3), serial = SumKernel(40, 7, 3);
  std::shared_ptr<CompiledModule> module =
      KernelCache::Global().GetOrCompile("opencl", KernelPrinter::Get("opencl").Print({group, serial}));
  OpContext ctx;
  ctx.device = OpenCLDevice();
  for (const Kernel* k : {&group, &serial}) {
    int64_t outer = k->extents[0], red = k->extents[1], inner = k->extents[2];
    NDArray x = test::RandomArray({outer, red, inner}, DType::kFloat32, 1);
    NDArray expected = test::RunOp("sum", {{"axis", "1"}}, {x})[0];
    NDArray out(Shape{outer * inner}, DType::kFloat32, OpenCLDevice());
    module->Launch(k->name, {x.CopyTo(OpenCLDevice()), out}, ctx);
    test::ExpectNear(out.CopyTo(Device::CPU()).Reshape(expected.shape()), expected, 1e-4, 1e-4);
  }
}

TEST(OpenCLCompilerTest, ProgramBinariesRoundTripThroughTheDiskCache) {
  IR_REQUIRE_OPENCL();
  TempCacheDir dir;
  KernelCache& cache = KernelCache::Global();
  Kernel kernel = ScaleKernel(4, 3, DType::kFloat32);
  std::string source = KernelPrinter::Get("opencl").Print({kernel});
  cache.ClearMemory();
  KernelCacheStats before = cache.stats();
  RunScale(*cache.GetOrCompile("opencl", source), kernel, {1, 2, 3, 4});
  EXPECT_EQ(cache.stats().compilations, before.compilations + 1);

  cache.ClearMemory();
  std::shared_ptr<CompiledModule> loaded = cache.GetOrCompile("opencl", source);
  EXPECT_EQ(cache.stats().compilations, before.compilations + 1) << "loaded from the program binary on disk";
  EXPECT_EQ(cache.stats().disk_hits, before.disk_hits + 1);
  EXPECT_EQ(RunScale(*loaded, kernel, {1, 2, 3, 4}), std::vector<float>({3, 6, 9, 12}));

  // Damage the entry's binary: the checksum catches it and the kernel is built again.
  std::string entry = dir.Entry();
  ASSERT_FALSE(entry.empty());
  {
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-16, std::ios::end);
    file.write("0123456789abcdef", 16);
  }
  cache.ClearMemory();
  EXPECT_EQ(RunScale(*cache.GetOrCompile("opencl", source), kernel, {1, 0, -1, 2}), std::vector<float>({3, 0, -3, 6}));
  EXPECT_EQ(cache.stats().corrupt_entries, before.corrupt_entries + 1);
  EXPECT_EQ(cache.stats().compilations, before.compilations + 2);
}

TEST(OpenCLCompilerTest, LoadRejectsBlobsThatAreNotProgramBinaries) {
  IR_REQUIRE_OPENCL();
  const KernelCompiler& compiler = KernelCompiler::Get("opencl");
  EXPECT_ERROR(compiler.Load("not a blob"), "not a device module blob");
  EXPECT_ERROR(compiler.Load("IRDEV1 0 100\nshort"), "binary of 100 bytes expected");
  EXPECT_ERROR(compiler.Load("IRDEV1 0 5\nshort"), "cannot load an OpenCL program binary");
}

TEST(OpenCLCompilerTest, BuildFailuresReportTheLogAndTheSource) {
  IR_REQUIRE_OPENCL();
  const KernelCompiler& compiler = KernelCompiler::Get("opencl");
  std::string source = "__kernel void broken(__global float* x) { x[0] = no_such_variable; }\n";
  std::string message;
  try {
    compiler.Compile(source);
  } catch (const Error& err) {
    message = err.what();
  }
  EXPECT_NE(message.find("OpenCL kernel build failed"), std::string::npos) << message;
  EXPECT_NE(message.find("--- build log ---"), std::string::npos) << message;
  EXPECT_NE(message.find("no_such_variable"), message.rfind("no_such_variable")) << "in the log and the source";
  EXPECT_NE(message.find("--- source ---\n" + source), std::string::npos) << message;
  EXPECT_NE(compiler.Id().find("driver"), std::string::npos) << compiler.Id();
}

}  // namespace
}  // namespace ir
