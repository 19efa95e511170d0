// The kernel cache: memory and disk hits, corrupt entries rebuilt, concurrent processes,
// and compile failures that carry the source and the compiler's log.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "ir/codegen.h"
#include "passes/kernel_cache_fixture.h"
#include "test_util.h"

namespace ir {
namespace {

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
  std::string good = ReadWholeFile(path);
  for (const std::string& damaged :
       {good.substr(0, good.size() / 2), std::string("garbage"), good.substr(0, good.size() - 1) + "x"}) {
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << damaged;
    }
    ExpectCorruptAndRebuilt(source);
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
