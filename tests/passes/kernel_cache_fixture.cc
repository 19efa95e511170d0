// The kernel cache tests' fixture (see kernel_cache_fixture.h).
#include "passes/kernel_cache_fixture.h"

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ir/pass.h"
#include "ops/op_harness.h"

namespace ir {

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

double FreshScale() {
  static int calls = 0;
  auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  return 1.0 + static_cast<double>((now ^ (static_cast<long long>(getpid()) << 20)) % 1000003) / 1000003.0 + ++calls;
}

KernelCacheStats Delta(const KernelCacheStats& before) {
  KernelCacheStats now = KernelCache::Global().stats();
  return KernelCacheStats{now.compilations - before.compilations, now.memory_hits - before.memory_hits,
                          now.disk_hits - before.disk_hits, now.corrupt_entries - before.corrupt_entries,
                          now.refused_entries - before.refused_entries};
}

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void KernelCacheTest::SetUp() {
  const char* old = std::getenv("IR_KERNEL_CACHE_DIR");
  saved_ = old != nullptr ? old : "";
  had_ = old != nullptr;
  char pattern[] = "/tmp/ir-kcache-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  dir_ = pattern;
  setenv("IR_KERNEL_CACHE_DIR", dir_.c_str(), 1);
  KernelCache::Global().ClearMemory();
}

void KernelCacheTest::TearDown() {
  if (had_) {
    setenv("IR_KERNEL_CACHE_DIR", saved_.c_str(), 1);
  } else {
    unsetenv("IR_KERNEL_CACHE_DIR");
  }
  std::string command = "chmod -R u+rwx '" + dir_ + "' && rm -rf '" + dir_ + "'";
  EXPECT_EQ(std::system(command.c_str()), 0);
}

std::vector<std::string> KernelCacheTest::Entries() const {
  std::vector<std::string> names;
  DIR* dir = opendir(dir_.c_str());
  while (dir != nullptr) {
    dirent* entry = readdir(dir);
    if (entry == nullptr) break;
    std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  if (dir != nullptr) closedir(dir);
  return names;
}

std::string KernelCacheTest::EntryPath(const std::string& source) const {
  std::string key = StrCat("cpu\n", KernelCompiler::Get("cpu").Id(), "\n", source);
  return StrCat(dir_, "/cpu-", HashHex(key), ".kbin");
}

void KernelCacheTest::ExpectCorruptAndRebuilt(const std::string& source) {
  KernelCache::Global().ClearMemory();
  KernelCacheStats start = KernelCache::Global().stats();
  KernelCache::Global().GetOrCompile("cpu", source);
  KernelCacheStats d = Delta(start);
  EXPECT_EQ(d.corrupt_entries, 1);
  EXPECT_EQ(d.compilations, 1);
  EXPECT_EQ(d.disk_hits, 0);
  KernelCache::Global().ClearMemory();
}

}  // namespace ir
