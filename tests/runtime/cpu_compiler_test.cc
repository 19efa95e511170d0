// The cpu KernelCompiler runs the C compiler without a shell (TMPDIR is never interpreted)
// and kills it, with everything it started, when it overruns IR_COMPILE_TIMEOUT.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "ir/codegen.h"
#include "test_util.h"

namespace ir {
namespace {

const char* kSource = "void ir_test_kernel(void* const* args) { *(float*)args[0] = 42.0f; }\n";

/*! \brief Sets an environment variable for one scope, restoring the old value afterwards. */
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

/*! \brief A fresh directory under /tmp, removed with its content at the end of the scope. */
class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/ir-cc-test-XXXXXX";
    path_ = mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~ScratchDir() { EXPECT_EQ(std::system(("rm -rf '" + path_ + "'").c_str()), 0); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

// True while process `pid` runs (a zombie no reaper collected counts as gone).
bool Running(pid_t pid) {
  std::ifstream stat(StrCat("/proc/", pid, "/stat"));
  std::string pid_field, comm, state;
  return static_cast<bool>(stat >> pid_field >> comm >> state) && state != "Z";
}

TEST(CPUCompilerTest, TmpdirWithSpacesOrShellSyntaxCompilesAndRunsNothing) {
  ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty());
  std::string marker = scratch.path() + "/pwned";
  for (const std::string& name : {std::string("with space"), "x;touch " + marker + ";y", "$(touch " + marker + ")"}) {
    std::string tmpdir = scratch.path() + "/" + name;
    for (size_t pos = scratch.path().size() + 1; pos != std::string::npos; pos = tmpdir.find('/', pos + 1)) {
      mkdir(tmpdir.substr(0, pos).c_str(), 0700);
    }
    ASSERT_EQ(mkdir(tmpdir.c_str(), 0700), 0) << tmpdir;
    ScopedEnv env("TMPDIR", tmpdir);
    std::string blob = KernelCompiler::Get("cpu").Compile(kSource);
    EXPECT_FALSE(blob.empty()) << tmpdir;
    KernelCompiler::Get("cpu").Load(blob);
  }
  EXPECT_FALSE(Exists(marker)) << "a command hidden in TMPDIR was executed";
}

TEST(CPUCompilerTest, HangingCompilerIsKilledWithItsChildrenAfterTheTimeout) {
  ScratchDir scratch;
  std::string compiler = scratch.path() + "/hanging cc";
  std::string pid_file = scratch.path() + "/child.pid";
  {
    std::ofstream script(compiler);
    script << "#!/bin/sh\nsleep 1000 &\necho $! > '" << pid_file << "'\nwait\n";
  }
  ASSERT_EQ(chmod(compiler.c_str(), 0700), 0);
  ScopedEnv cc("IR_CC", compiler);
  ScopedEnv timeout("IR_COMPILE_TIMEOUT", "1.5");
  auto start = std::chrono::steady_clock::now();
  EXPECT_ERROR(KernelCompiler::Get("cpu").Compile(kSource),
               "C compiler '" + compiler + "' did not finish within 1.5 s");
  EXPECT_ERROR(KernelCompiler::Get("cpu").Compile(kSource), "IR_COMPILE_TIMEOUT");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
  std::ifstream in(pid_file);
  pid_t child = 0;
  ASSERT_TRUE(static_cast<bool>(in >> child)) << "the script did not start its child";
  for (int i = 0; i < 100 && Running(child); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(Running(child)) << "the compiler's own child outlived the timeout";
}

TEST(CPUCompilerTest, InvalidTimeoutIsNamed) {
  for (const char* value : {"abc", "-1", "0", "5s"}) {
    ScopedEnv timeout("IR_COMPILE_TIMEOUT", value);
    EXPECT_ERROR(KernelCompiler::Get("cpu").Compile(kSource), StrCat("IR_COMPILE_TIMEOUT='", value, "'"));
  }
}

TEST(CPUCompilerTest, CompilerWithArgumentsIsNotSplitByAShell) {
  ScopedEnv cc("IR_CC", "gcc -DX=1");
  EXPECT_ERROR(KernelCompiler::Get("cpu").Compile(kSource), "C compiler 'gcc -DX=1' not found");
}

}  // namespace
}  // namespace ir
