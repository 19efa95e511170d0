// The eager-mode C API (IRLazy*): values, shapes of pending arrays without computing them,
// several arrays in one trace, in-place assignment seen through the NDArray a leaf was made
// from, multi-output ops, and errors that name the node.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "ir/c_api.h"

namespace {

#define ASSERT_OK(call) ASSERT_EQ((call), 0) << IRGetLastError()

class CApiLazyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(IRLazyContextCreate("{\"fusion\": true}", &context_));
    ASSERT_OK(IRLazyContextSetCurrent(context_));
  }
  void TearDown() override {
    for (IRLazyHandle h : handles_) EXPECT_EQ(IRLazyFree(h), 0);
    EXPECT_EQ(IRLazyContextSetCurrent(nullptr), 0);
    EXPECT_EQ(IRLazyContextFree(context_), 0);
  }

  IRLazyHandle Keep(IRLazyHandle h) {
    handles_.push_back(h);
    return h;
  }

  IRLazyHandle Host(std::vector<int64_t> shape, const std::vector<float>& values) {
    IRLazyHandle h = nullptr;
    EXPECT_EQ(IRLazyFromHost(values.data(), static_cast<int>(shape.size()), shape.data(), 0, &h), 0)
        << IRGetLastError();
    return Keep(h);
  }

  /*! \brief Records `op`; returns every output (or an empty list, with the error in IRGetLastError). */
  std::vector<IRLazyHandle> Op(const char* op, std::vector<IRLazyHandle> inputs,
                               const std::map<std::string, std::string>& attrs = {}) {
    IROpHandle handle = nullptr;
    EXPECT_EQ(IRGetOpHandle(op, &handle), 0) << IRGetLastError();
    std::vector<const char*> keys, vals;
    for (const auto& kv : attrs) {
      keys.push_back(kv.first.c_str());
      vals.push_back(kv.second.c_str());
    }
    uint32_t n = 0;
    IRLazyHandle* outs = nullptr;
    if (IRLazyApply(handle, static_cast<uint32_t>(keys.size()), keys.data(), vals.data(),
                    static_cast<uint32_t>(inputs.size()), inputs.data(), &n, &outs) != 0) {
      return {};
    }
    std::vector<IRLazyHandle> result(outs, outs + n);
    for (IRLazyHandle h : result) Keep(h);
    return result;
  }

  std::vector<float> Values(IRLazyHandle h) {
    IRNDArrayHandle nd = nullptr;
    EXPECT_EQ(IRLazyToNDArray(h, &nd), 0) << IRGetLastError();
    if (nd == nullptr) return {};
    int ndim = 0, dtype = -1;
    const int64_t* dims = nullptr;
    const void* data = nullptr;
    EXPECT_EQ(IRNDArrayGetData(nd, &ndim, &dims, &dtype, &data), 0);
    size_t size = 1;
    for (int i = 0; i < ndim; ++i) size *= static_cast<size_t>(dims[i]);
    std::vector<float> out(static_cast<const float*>(data), static_cast<const float*>(data) + size);
    IRNDArrayFree(nd);
    return out;
  }

  std::vector<int64_t> ShapeOf(IRLazyHandle h) {
    int ndim = -1;
    const int64_t* dims = nullptr;
    EXPECT_EQ(IRLazyGetShape(h, &ndim, &dims), 0) << IRGetLastError();
    return std::vector<int64_t>(dims, dims + (ndim > 0 ? ndim : 0));
  }

  bool IsPending(IRLazyHandle h) {
    int pending = -1;
    EXPECT_EQ(IRLazyIsPending(h, &pending), 0);
    return pending == 1;
  }

  /*! \brief A counter of the Context's stats JSON ("cache_hits"...). */
  long Stat(const std::string& key) {
    const char* json = nullptr;
    EXPECT_EQ(IRLazyContextGetStatsJSON(context_, &json), 0);
    std::string text(json);
    size_t at = text.find("\"" + key + "\": ");
    EXPECT_NE(at, std::string::npos) << key << " missing from " << text;
    return at == std::string::npos ? -1 : std::stol(text.substr(at + key.size() + 4));
  }

  IRLazyContextHandle context_ = nullptr;
  std::vector<IRLazyHandle> handles_;
};

TEST_F(CApiLazyTest, ValuesAndShapesOfPendingArrays) {
  IRLazyHandle a = Host({2, 3}, {1, 2, 3, 4, 5, 6}), b = Host({3}, {10, 20, 30});
  IRLazyHandle c = Op("add", {a, b})[0];
  IRLazyHandle total = Op("sum", {c}, {{"axis", "[1]"}})[0];
  EXPECT_TRUE(IsPending(total));
  EXPECT_EQ(ShapeOf(c), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ShapeOf(total), (std::vector<int64_t>{2}));
  int dtype = -1;
  ASSERT_OK(IRLazyGetDType(total, &dtype));
  EXPECT_EQ(dtype, 0);
  EXPECT_TRUE(IsPending(total)) << "the shape of a pending array is inferred, not computed";
  EXPECT_EQ(Stat("kernels_launched"), 0);
  EXPECT_EQ(Values(total), (std::vector<float>{66, 75}));
  EXPECT_FALSE(IsPending(total));
  EXPECT_GE(Stat("ops_recorded"), 2);
}

TEST_F(CApiLazyTest, ScalarsAreZeroDimensionalLeavesOfTheirDType) {
  IRLazyHandle s = nullptr;
  ASSERT_OK(IRLazyScalar(2.5, 1, &s));
  Keep(s);
  int dtype = -1;
  ASSERT_OK(IRLazyGetDType(s, &dtype));
  EXPECT_EQ(dtype, 1);
  EXPECT_TRUE(ShapeOf(s).empty());
  EXPECT_NE(IRLazyScalar(1, 99, &s), 0);
  EXPECT_NE(std::string(IRGetLastError()).find("unknown dtype value 99"), std::string::npos) << IRGetLastError();
}

TEST_F(CApiLazyTest, MaterializesTwoArraysInOneTrace) {
  IRLazyHandle a = Host({4}, {1, 2, 3, 4});
  IRLazyHandle e = Op("exp", {a})[0];
  IRLazyHandle x = Op("multiply", {e, a})[0], y = Op("add", {e, a})[0];
  IRLazyHandle both[] = {x, y};
  ASSERT_OK(IRLazyMaterialize(2, both));
  EXPECT_EQ(Stat("cache_misses"), 1);
  EXPECT_FALSE(IsPending(x));
  EXPECT_FALSE(IsPending(y));
  std::vector<float> xv = Values(x), yv = Values(y);
  ASSERT_EQ(xv.size(), 4u);
  ASSERT_EQ(yv.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    float v = static_cast<float>(i + 1);
    EXPECT_NEAR(xv[i], std::exp(v) * v, 1e-3f * std::exp(v) * v);
    EXPECT_NEAR(yv[i], std::exp(v) + v, 1e-3f * std::exp(v));
  }
  EXPECT_EQ(Stat("cache_misses"), 1) << "reading materialized arrays runs nothing";
  EXPECT_EQ(Stat("evictions"), 0);
}

TEST_F(CApiLazyTest, MultiOutputOpsGiveOneHandlePerOutput) {
  IRLazyHandle a = Host({4}, {1, 2, 3, 4});
  std::vector<IRLazyHandle> parts = Op("split", {a}, {{"num_outputs", "2"}});
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(Values(parts[1]), (std::vector<float>{3, 4}));
}

TEST_F(CApiLazyTest, AssignWritesInPlaceSeenThroughTheNDArrayAndCopies) {
  int64_t shape[] = {3};
  float init[] = {1, 2, 3};
  IRNDArrayHandle nd = nullptr;
  ASSERT_OK(IRNDArrayCreate(shape, 1, 0, init, &nd));
  IRLazyHandle w = nullptr, alias = nullptr, half = nullptr;
  ASSERT_OK(IRLazyFromNDArray(nd, &w));
  Keep(w);
  ASSERT_OK(IRLazyCopy(w, &alias));
  Keep(alias);
  ASSERT_OK(IRLazyScalar(0.5, 0, &half));
  Keep(half);
  IRLazyHandle update = Op("subtract", {w, Op("multiply", {w, half})[0]})[0];
  ASSERT_OK(IRLazyAssign(1, &w, &update));
  int ndim = 0, dtype = 0;
  const int64_t* dims = nullptr;
  const void* data = nullptr;
  ASSERT_OK(IRNDArrayGetData(nd, &ndim, &dims, &dtype, &data));
  const float* v = static_cast<const float*>(data);
  EXPECT_EQ(std::vector<float>(v, v + 3), (std::vector<float>{0.5f, 1, 1.5f}));
  EXPECT_EQ(Values(alias), (std::vector<float>{0.5f, 1, 1.5f}));
  IRNDArrayFree(nd);
}

TEST_F(CApiLazyTest, BadShapesAreErrorsNamingTheNode) {
  IRLazyHandle a = Host({2, 3}, {1, 2, 3, 4, 5, 6}), b = Host({4}, {1, 2, 3, 4});
  IRLazyHandle c = Op("add", {a, b})[0];
  int ndim = 0;
  const int64_t* dims = nullptr;
  EXPECT_EQ(IRLazyGetShape(c, &ndim, &dims), -1);
  std::string shape_error = IRGetLastError();
  EXPECT_NE(shape_error.find("add"), std::string::npos) << shape_error;
  EXPECT_EQ(IRLazyMaterialize(1, &c), -1);
  std::string error = IRGetLastError();
  EXPECT_NE(error.find("add"), std::string::npos) << error;
  EXPECT_NE(error.find("[4]"), std::string::npos) << error;
}

TEST_F(CApiLazyTest, TapeGradientsArePendingHandlesOrNull) {
  IRLazyHandle w = Host({3}, {1, 2, 3}), other = Host({3}, {4, 5, 6});
  for (int persistent : {0, 1}) {
    IRLazyTapeHandle tape = nullptr;
    ASSERT_OK(IRLazyTapeCreate(persistent, &tape));
    ASSERT_OK(IRLazyTapeWatch(tape, w));
    IRLazyHandle y = Op("sum", {Op("multiply", {w, w})[0]})[0];
    ASSERT_OK(IRLazyTapeStop(tape));
    IRLazyHandle sources[] = {w, other};
    IRLazyHandle grads[2] = {nullptr, nullptr};
    ASSERT_OK(IRLazyTapeGradient(tape, 1, &y, nullptr, 2, sources, grads));
    ASSERT_NE(grads[0], nullptr);
    EXPECT_EQ(grads[1], nullptr) << "an unwatched source has no gradient (TF: None)";
    Keep(grads[0]);
    EXPECT_TRUE(IsPending(grads[0]));
    EXPECT_EQ(Values(grads[0]), (std::vector<float>{2, 4, 6}));
    IRLazyHandle head = nullptr;
    ASSERT_OK(IRLazyScalar(3, 0, &head));
    Keep(head);
    int rc = IRLazyTapeGradient(tape, 1, &y, &head, 1, sources, grads);
    if (persistent) {
      ASSERT_OK(rc);
      Keep(grads[0]);
      EXPECT_EQ(Values(grads[0]), (std::vector<float>{6, 12, 18}));
      IRLazyHandle no_head = nullptr;  // a NULL entry: ones, like heads == NULL
      ASSERT_OK(IRLazyTapeGradient(tape, 1, &y, &no_head, 1, sources, grads));
      Keep(grads[0]);
      EXPECT_EQ(Values(grads[0]), (std::vector<float>{2, 4, 6}));
    } else {
      EXPECT_EQ(rc, -1);
      EXPECT_NE(std::string(IRGetLastError()).find("only be called once on non-persistent tapes"), std::string::npos)
          << IRGetLastError();
    }
    ASSERT_OK(IRLazyTapeFree(tape));
  }
}

}  // namespace
