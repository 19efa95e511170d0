/*!
 * \file kernel_cache_fixture.h
 * \brief Shared by the kernel cache tests: a fresh IR_KERNEL_CACHE_DIR per test, generated
 * kernel sources no other run uses, and counters as differences.
 */
#ifndef IR_TESTS_PASSES_KERNEL_CACHE_FIXTURE_H_
#define IR_TESTS_PASSES_KERNEL_CACHE_FIXTURE_H_

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/codegen.h"

namespace ir {

/*! \brief The generated C source of x * scale + 1 over 64 floats: `scale` makes it unique. */
std::string KernelSource(double scale);

/*! \brief A scale no other run of the suite uses, so the first lookup really compiles. */
double FreshScale();

/*! \brief The global cache's counters now minus `before`. */
KernelCacheStats Delta(const KernelCacheStats& before);

/*! \brief The whole content of a file ("" when it cannot be read). */
std::string ReadWholeFile(const std::string& path);

/*! \brief Points IR_KERNEL_CACHE_DIR at a fresh private directory; restores it afterwards. */
class KernelCacheTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
  /*! \brief The names in the cache directory (hidden ones included). */
  std::vector<std::string> Entries() const;
  /*! \brief The path of the cache entry for `source` on the cpu target. */
  std::string EntryPath(const std::string& source) const;
  /*! \brief Looks `source` up past the memory cache and expects its disk entry counted corrupt
   *  and rebuilt, without an error. */
  void ExpectCorruptAndRebuilt(const std::string& source);

  std::string dir_, saved_;
  bool had_ = false;
};

}  // namespace ir

#endif  // IR_TESTS_PASSES_KERNEL_CACHE_FIXTURE_H_
