// The kernel cache: memory and disk hits, corrupt entries rebuilt, concurrent processes,
// and compile failures that carry the source and the compiler's log.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "ir/pass.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

// The generated C source of x * scale + 1 over 64 floats: `scale` makes it unique per test.
std::string KernelSource(double scale) {
  NodeEntry x{Node::CreateVariable("x"), 0};
  NodeEntry y = MakeNode("add_scalar", "y", {MakeNode("multiply_scalar", "s", {x}, {{"scalar", StrCat(scale)}})},
                         {{"scalar", "1"}});
  Graph graph({y});
  graph.SetAttr("shape_inputs", ShapeVector{Shape{64}});
  graph.SetAttr("dtype_inputs", DTypeVector{DType::kFloat32});
  graph.SetAttr("fusion.fmax", 4);
  Graph compiled = ApplyPasses(graph, {"InferShape", "InferType", "Fusion", "CodeGen"});
  return compiled.GetAttr<std::string>("kernel_source");
}

// A scale no other run of the suite uses, so the first lookup really compiles.
double FreshScale() {
  static int calls = 0;
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return 1.0 + static_cast<double>((now ^ (static_cast<long long>(getpid()) << 20)) % 1000003) / 1000003.0 + ++calls;
}

class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* old = std::getenv("IR_KERNEL_CACHE_DIR");
    saved_ = old != nullptr ? old : "";
    had_ = old != nullptr;
    char pattern[] = "/tmp/ir-kcache-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    setenv("IR_KERNEL_CACHE_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    if (had_) {
      setenv("IR_KERNEL_CACHE_DIR", saved_.c_str(), 1);
    } else {
      unsetenv("IR_KERNEL_CACHE_DIR");
    }
    std::string command = "rm -rf '" + dir_ + "'";
    EXPECT_EQ(std::system(command.c_str()), 0);
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    FILE* pipe = popen(("ls -A '" + dir_ + "'").c_str(), "r");
    char line[512];
    while (pipe != nullptr && fgets(line, sizeof(line), pipe) != nullptr) {
      std::string name(line);
      if (!name.empty() && name.back() == '\n') name.pop_back();
      names.push_back(name);
    }
    if (pipe != nullptr) pclose(pipe);
    return names;
  }
  std::string dir_, saved_;
  bool had_ = false;
};

KernelCacheStats Delta(const KernelCacheStats& before) {
  KernelCacheStats now = KernelCache::Global().stats();
  return KernelCacheStats{now.compilations - before.compilations, now.memory_hits - before.memory_hits,
                          now.disk_hits - before.disk_hits, now.corrupt_entries - before.corrupt_entries};
}

TEST_F(KernelCacheTest, CompilesOnceThenHitsMemoryThenDisk) {
  std::string source = KernelSource(FreshScale());
  KernelCacheStats start = KernelCache::Global().stats();
  auto first = KernelCache::Global().GetOrCompile("cpu", source);
  auto second = KernelCache::Global().GetOrCompile("cpu", source);
  EXPECT_EQ(first.get(), second.get());
  KernelCacheStats d = Delta(start);
  EXPECT_EQ(d.compilations, 1);
  EXPECT_EQ(d.memory_hits, 1);
  std::vector<std::string> entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].rfind("cpu-", 0), 0u) << entries[0];
  // A new process (simulated by forgetting the memory cache) loads it from disk.
  KernelCache::Global().ClearMemory();
  KernelCache::Global().GetOrCompile("cpu", source);
  d = Delta(start);
  EXPECT_EQ(d.compilations, 1);
  EXPECT_EQ(d.disk_hits, 1);
}

TEST_F(KernelCacheTest, CorruptOrTruncatedEntriesAreRebuilt) {
  std::string source = KernelSource(FreshScale());
  KernelCache::Global().GetOrCompile("cpu", source);
  std::vector<std::string> entries = Entries();
  ASSERT_EQ(entries.size(), 1u);
  std::string path = dir_ + "/" + entries[0];
  std::string good;
  {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    good = ss.str();
  }
  for (const std::string& damaged : {good.substr(0, good.size() / 2), std::string("garbage"),
                                     good.substr(0, good.size() - 1) + "x"}) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << damaged;
    }
    KernelCache::Global().ClearMemory();
    KernelCacheStats start = KernelCache::Global().stats();
    KernelCache::Global().GetOrCompile("cpu", source);
    KernelCacheStats d = Delta(start);
    EXPECT_EQ(d.corrupt_entries, 1);
    EXPECT_EQ(d.compilations, 1);
    EXPECT_EQ(d.disk_hits, 0);
  }
  // The rebuilt entry is whole again.
  KernelCache::Global().ClearMemory();
  KernelCacheStats start = KernelCache::Global().stats();
  KernelCache::Global().GetOrCompile("cpu", source);
  EXPECT_EQ(Delta(start).disk_hits, 1);
}

TEST_F(KernelCacheTest, ConcurrentProcessesNeverSeeAHalfWrittenEntry) {
  std::string source = KernelSource(FreshScale());
  const int kProcesses = 4;
  std::vector<pid_t> children;
  for (int i = 0; i < kProcesses; ++i) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int code = 0;
      try {
        KernelCache::Global().ClearMemory();
        KernelCacheStats start = KernelCache::Global().stats();
        for (int round = 0; round < 3; ++round) {
          KernelCache::Global().GetOrCompile("cpu", source);
          KernelCache::Global().ClearMemory();
        }
        if (Delta(start).corrupt_entries != 0) code = 2;
      } catch (...) {
        code = 1;
      }
      _exit(code);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: a lookup threw; 2: a process saw a corrupt entry";
  }
  std::vector<std::string> entries = Entries();
  ASSERT_EQ(entries.size(), 1u) << "no temporary files are left behind";
  KernelCache::Global().ClearMemory();
  KernelCacheStats start = KernelCache::Global().stats();
  KernelCache::Global().GetOrCompile("cpu", source);
  EXPECT_EQ(Delta(start).disk_hits, 1);
}

TEST_F(KernelCacheTest, CompileErrorsCarryTheSourceAndTheCompilerLog) {
  std::string source = "void broken_kernel(void) { this is not C; }\n";
  EXPECT_ERROR(KernelCache::Global().GetOrCompile("cpu", source), "--- source ---\n" + source);
  EXPECT_ERROR(KernelCache::Global().GetOrCompile("cpu", source), "error:");
  EXPECT_ERROR(KernelCache::Global().GetOrCompile("no-such-target", source), "no-such-target");
}

TEST_F(KernelCacheTest, AMissingCompilerIsNamed) {
  std::string source = KernelSource(FreshScale());
  setenv("IR_CC", "/nonexistent/ir-test-cc", 1);
  EXPECT_ERROR(KernelCache::Global().GetOrCompile("cpu", source), "'/nonexistent/ir-test-cc' not found");
  unsetenv("IR_CC");
}

TEST_F(KernelCacheTest, DisabledDiskCacheStillCompiles) {
  setenv("IR_KERNEL_CACHE_DIR", "off", 1);
  EXPECT_EQ(KernelCache::Global().directory(), "");
  std::string source = KernelSource(FreshScale());
  KernelCacheStats start = KernelCache::Global().stats();
  KernelCache::Global().GetOrCompile("cpu", source);
  EXPECT_EQ(Delta(start).compilations, 1);
  EXPECT_TRUE(Entries().empty());
}

}  // namespace
}  // namespace ir
