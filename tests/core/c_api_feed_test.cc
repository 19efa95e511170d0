// IRSessionRun validates its feeds: a name given twice, an unknown name, a missing
// placeholder and a value of the wrong dtype or shape are errors naming the feed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/c_api.h"

namespace {

#define ASSERT_OK(call) ASSERT_EQ((call), 0) << IRGetLastError()

class CApiFeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    IROpHandle add = nullptr;
    ASSERT_OK(IRGetOpHandle("add", &add));
    const char* key = "__shape__";
    const char* shape = "[2]";
    ASSERT_OK(IRSymbolCreateVariable("x", &x_));
    ASSERT_OK(IRSymbolSetAttrs(x_, 1, &key, &shape));
    ASSERT_OK(IRSymbolCreateVariable("b", &b_));
    ASSERT_OK(IRSymbolCreateAtomicSymbol(add, 0, nullptr, nullptr, &y_));
    IRSymbolHandle args[] = {x_, b_};
    ASSERT_OK(IRSymbolCompose(y_, "y", 2, nullptr, args));
    ASSERT_OK(IRSessionCreate("{\"fusion\": false}", &session_));
  }
  void TearDown() override {
    for (IRSymbolHandle s : {x_, b_, y_}) IRSymbolFree(s);
    for (IRNDArrayHandle a : arrays_) IRNDArrayFree(a);
    IRSessionFree(session_);
  }

  IRNDArrayHandle Array(std::vector<int64_t> shape, int dtype) {
    IRNDArrayHandle h = nullptr;
    EXPECT_EQ(IRNDArrayCreate(shape.data(), static_cast<int>(shape.size()), dtype, nullptr, &h), 0);
    arrays_.push_back(h);
    return h;
  }

  /*! \brief Runs y with the feeds; returns the error message ("" on success). */
  std::string Run(std::vector<const char*> names, std::vector<IRNDArrayHandle> values) {
    uint32_t n = 0;
    IRNDArrayHandle* outs = nullptr;
    if (IRSessionRun(session_, y_, nullptr, static_cast<uint32_t>(names.size()), names.data(), values.data(), &n,
                     &outs) != 0) {
      return IRGetLastError();
    }
    for (uint32_t i = 0; i < n; ++i) IRNDArrayFree(outs[i]);
    return "";
  }

  IRSymbolHandle x_ = nullptr, b_ = nullptr, y_ = nullptr;
  IRSessionHandle session_ = nullptr;
  std::vector<IRNDArrayHandle> arrays_;
};

TEST_F(CApiFeedTest, AcceptsOneValuePerInput) { EXPECT_EQ(Run({"x", "b"}, {Array({2}, 0), Array({2}, 0)}), ""); }

TEST_F(CApiFeedTest, RejectsAFeedGivenTwice) {
  std::string error = Run({"x", "b", "x"}, {Array({2}, 0), Array({2}, 0), Array({2}, 0)});
  EXPECT_NE(error.find("IRSessionRun: feed 'x' is given twice (feeds 0 and 2)"), std::string::npos) << error;
}

TEST_F(CApiFeedTest, RejectsUnknownMissingAndMismatchedFeeds) {
  std::string unknown = Run({"x", "b", "z"}, {Array({2}, 0), Array({2}, 0), Array({2}, 0)});
  EXPECT_NE(unknown.find("feed 'z' is not an input of this graph"), std::string::npos) << unknown;
  std::string missing = Run({"x"}, {Array({2}, 0)});
  EXPECT_NE(missing.find("'b'"), std::string::npos) << missing;
  std::string dtype = Run({"x", "b"}, {Array({2}, 0), Array({2}, 2)});
  EXPECT_NE(dtype.find("b: int32[2]"), std::string::npos) << dtype;
  EXPECT_NE(dtype.find("input 1 has dtype int32 but must be float32"), std::string::npos) << dtype;
  std::string shape = Run({"x", "b"}, {Array({3}, 0), Array({2}, 0)});
  EXPECT_NE(shape.find("feed for placeholder 'x' has shape [3]"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[2]"), std::string::npos) << shape;
}

}  // namespace
