// The kernel cache loads machine code: entries and directories someone else could have
// written are ignored, special files never block, temporary files are not predictable,
// modes do not depend on the umask, and malformed or mismatched entries are rebuilt.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <string>

#include "ir/codegen.h"
#include "passes/kernel_cache_fixture.h"
#include "test_util.h"

namespace ir {
namespace {

void WriteWholeFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

mode_t ModeOf(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

class KernelCacheSecurityTest : public KernelCacheTest {
 protected:
  // Caches `source` on disk and forgets it in memory: the next lookup goes to the entry.
  std::string CachedEntry(const std::string& source) {
    KernelCache::Global().GetOrCompile("cpu", source);
    KernelCache::Global().ClearMemory();
    std::string path = EntryPath(source);
    EXPECT_TRUE(S_ISREG(ModeOf(path))) << path;
    return path;
  }

  // Looks `source` up again and expects the entry refused (not loaded) and the kernel rebuilt.
  void ExpectRefusedAndRebuilt(const std::string& source) {
    KernelCacheStats start = KernelCache::Global().stats();
    KernelCache::Global().GetOrCompile("cpu", source);
    KernelCacheStats d = Delta(start);
    EXPECT_EQ(d.refused_entries, 1);
    EXPECT_EQ(d.disk_hits, 0);
    EXPECT_EQ(d.compilations, 1);
  }

  // Like ExpectRefusedAndRebuilt, in a child process killed if it takes over 60 s.
  void ExpectRefusedWithoutHanging(const std::string& source) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      alarm(60);
      KernelCacheStats start = KernelCache::Global().stats();
      KernelCache::Global().GetOrCompile("cpu", source);
      KernelCacheStats d = Delta(start);
      _exit(d.refused_entries == 1 && d.disk_hits == 0 ? 0 : 1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM) << "the lookup hung";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the entry was not refused";
  }
};

TEST_F(KernelCacheSecurityTest, SymlinkEntryIsIgnoredAndNotFollowed) {
  std::string source = KernelSource(FreshScale());
  std::string path = CachedEntry(source);
  // A valid entry outside the directory, reached through a link: it must not be loaded.
  std::string outside = dir_ + "-outside";
  ASSERT_EQ(std::rename(path.c_str(), outside.c_str()), 0);
  ASSERT_EQ(symlink(outside.c_str(), path.c_str()), 0);
  ExpectRefusedAndRebuilt(source);
  EXPECT_TRUE(S_ISREG(ModeOf(path))) << "the rebuilt entry replaces the link";
  std::remove(outside.c_str());
}

TEST_F(KernelCacheSecurityTest, EntryOwnedByAnotherUserIsIgnored) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  std::string source = KernelSource(FreshScale());
  std::string path = CachedEntry(source);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  ExpectRefusedAndRebuilt(source);
}

TEST_F(KernelCacheSecurityTest, GroupOrWorldWritableEntryIsIgnored) {
  for (mode_t mode : {0620, 0602}) {
    std::string source = KernelSource(FreshScale());
    std::string path = CachedEntry(source);
    ASSERT_EQ(chmod(path.c_str(), mode), 0);
    ExpectRefusedAndRebuilt(source);
    KernelCache::Global().ClearMemory();
  }
}

TEST_F(KernelCacheSecurityTest, FifoEntryDoesNotBlock) {
  std::string source = KernelSource(FreshScale());
  std::string path = CachedEntry(source);
  ASSERT_EQ(std::remove(path.c_str()), 0);
  ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
  ExpectRefusedWithoutHanging(source);
}

TEST_F(KernelCacheSecurityTest, SymlinkToDevZeroIsRefusedAtOnce) {
  std::string source = KernelSource(FreshScale());
  std::string path = CachedEntry(source);
  ASSERT_EQ(std::remove(path.c_str()), 0);
  ASSERT_EQ(symlink("/dev/zero", path.c_str()), 0);
  ExpectRefusedWithoutHanging(source);
}

TEST_F(KernelCacheSecurityTest, PlantedSymlinksAtTemporaryNamesAreNotWrittenThrough) {
  std::string source = KernelSource(FreshScale());
  std::string path = EntryPath(source);
  std::string victim = dir_ + "-victim";
  WriteWholeFile(victim, "precious");
  // Earlier versions named temporaries .tmp-<pid>-<counter>-<hash of the entry path>.
  for (int counter = 1; counter <= 500; ++counter) {
    std::string name = StrCat(dir_, "/.tmp-", getpid(), "-", counter, "-", HashHex(path));
    ASSERT_EQ(symlink(victim.c_str(), name.c_str()), 0);
  }
  KernelCache::Global().GetOrCompile("cpu", source);
  EXPECT_EQ(ReadWholeFile(victim), "precious");
  EXPECT_TRUE(S_ISREG(ModeOf(path)));
  std::remove(victim.c_str());
}

TEST_F(KernelCacheSecurityTest, ModesArePrivateWhateverTheUmask) {
  std::string cache = dir_ + "/new/cache";
  setenv("IR_KERNEL_CACHE_DIR", cache.c_str(), 1);
  mode_t old = umask(0);
  std::string source = KernelSource(FreshScale());
  KernelCache::Global().GetOrCompile("cpu", source);
  umask(old);
  EXPECT_EQ(ModeOf(cache) & 07777, 0700u);
  EXPECT_EQ(ModeOf(dir_ + "/new") & 07777, 0700u);
  std::string key = StrCat("cpu\n", KernelCompiler::Get("cpu").Id(), "\n", source);
  EXPECT_EQ(ModeOf(StrCat(cache, "/cpu-", HashHex(key), ".kbin")) & 07777, 0600u);
}

TEST_F(KernelCacheSecurityTest, UnsafeDirectoryIsNotUsed) {
  std::string shared = dir_ + "/shared";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  std::string link = dir_ + "/link";
  ASSERT_EQ(symlink(dir_.c_str(), link.c_str()), 0);
  for (const std::string& unsafe : {shared, link}) {
    setenv("IR_KERNEL_CACHE_DIR", unsafe.c_str(), 1);
    EXPECT_EQ(KernelCache::Global().directory(), "") << unsafe;
    KernelCacheStats start = KernelCache::Global().stats();
    KernelCache::Global().GetOrCompile("cpu", KernelSource(FreshScale()));
    EXPECT_EQ(Delta(start).compilations, 1) << "kernels still compile, in memory only";
  }
  EXPECT_EQ(Entries().size(), 2u) << "nothing was written through the link or into the shared directory";
  EXPECT_EQ(system(("test -z \"$(ls -A '" + shared + "')\"").c_str()), 0);
}

TEST_F(KernelCacheSecurityTest, HugeOrNegativeSizeFieldsAreRebuilt) {
  std::string source = KernelSource(FreshScale());
  std::string path = CachedEntry(source);
  for (const char* header :
       {"IRKC1 0123456789abcdef 99999999999999999999\n", "IRKC1 0123456789abcdef -5\n",
        "IRKC2 99999999999 1 0123456789abcdef\n", "IRKC2 -1 -1 0123456789abcdef\n",
        "IRKC2 18446744073709551615 18446744073709551615 0123456789abcdef\nxy", "IRKC2 1 1 short\nab", "IRKC2"}) {
    WriteWholeFile(path, header);
    ExpectCorruptAndRebuilt(source);
  }
}

TEST_F(KernelCacheSecurityTest, WellFormedEntryForAnotherKeyIsRebuilt) {
  std::string source = KernelSource(FreshScale());
  std::string other = KernelSource(FreshScale());
  std::string path = CachedEntry(source);
  std::string other_path = CachedEntry(other);
  // A whole, checksummed entry of another kernel under this kernel's name.
  WriteWholeFile(path, ReadWholeFile(other_path));
  ExpectCorruptAndRebuilt(source);
}

}  // namespace
}  // namespace ir
