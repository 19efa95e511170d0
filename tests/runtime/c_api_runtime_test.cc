#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/c_api.h"

namespace {

#define ASSERT_API(call) ASSERT_EQ((call), 0) << IRGetLastError()

/*! \brief op(inputs...) as a symbol, through the C API. */
IRSymbolHandle Apply(const char* op_name, const char* name, std::vector<IRSymbolHandle> inputs) {
  IROpHandle op = nullptr;
  IRSymbolHandle sym = nullptr;
  EXPECT_EQ(IRGetOpHandle(op_name, &op), 0) << IRGetLastError();
  EXPECT_EQ(IRSymbolCreateAtomicSymbol(op, 0, nullptr, nullptr, &sym), 0) << IRGetLastError();
  EXPECT_EQ(IRSymbolCompose(sym, name, static_cast<uint32_t>(inputs.size()), nullptr, inputs.data()), 0)
      << IRGetLastError();
  return sym;
}

IRNDArrayHandle FloatArray(std::vector<int64_t> shape, std::vector<float> values) {
  IRNDArrayHandle h = nullptr;
  EXPECT_EQ(IRNDArrayCreate(shape.data(), static_cast<int>(shape.size()), 0, values.data(), &h), 0);
  return h;
}

std::vector<float> ToFloats(IRNDArrayHandle h, size_t n) {
  std::vector<float> values(n);
  EXPECT_EQ(IRNDArraySyncCopyToCPU(h, values.data(), n * sizeof(float)), 0) << IRGetLastError();
  return values;
}

TEST(CAPIRuntimeTest, ArraysRoundTrip) {
  IRNDArrayHandle a = FloatArray({2, 3}, {1, 2, 3, 4, 5, 6});
  int ndim = 0, dtype = -1;
  const int64_t* shape = nullptr;
  ASSERT_API(IRNDArrayGetShape(a, &ndim, &shape));
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(shape[0], 2);
  EXPECT_EQ(shape[1], 3);
  ASSERT_API(IRNDArrayGetDType(a, &dtype));
  EXPECT_EQ(dtype, 0);
  EXPECT_EQ(ToFloats(a, 6), std::vector<float>({1, 2, 3, 4, 5, 6}));
  const void* data = nullptr;
  ndim = 0;
  dtype = -1;
  ASSERT_API(IRNDArrayGetData(a, &ndim, &shape, &dtype, &data));
  ASSERT_EQ(ndim, 2);
  EXPECT_EQ(shape[1], 3);
  EXPECT_EQ(dtype, 0);
  ASSERT_NE(data, nullptr);
  EXPECT_EQ(static_cast<const float*>(data)[5], 6.0f);
  float small[2];
  EXPECT_EQ(IRNDArraySyncCopyToCPU(a, small, sizeof(small)), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("has 24 bytes, the destination 8"), std::string::npos);
  IRNDArrayHandle zeros = nullptr;
  int64_t n = 3;
  ASSERT_API(IRNDArrayCreate(&n, 1, 3, nullptr, &zeros));
  std::vector<int64_t> z(3, 7);
  ASSERT_API(IRNDArraySyncCopyToCPU(zeros, z.data(), 24));
  EXPECT_EQ(z, std::vector<int64_t>({0, 0, 0}));
  EXPECT_EQ(IRNDArrayCreate(&n, 1, 9, nullptr, &zeros), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("unknown dtype value 9"), std::string::npos);
  IRNDArrayFree(a);
  IRNDArrayFree(zeros);
}

TEST(CAPIRuntimeTest, SessionRunsTrainsAndReports) {
  IRSessionHandle sess = nullptr;
  ASSERT_API(IRSessionCreate("{\"target\": \"cpu\", \"fusion\": false, \"seed\": 3, \"is_train\": true}", &sess));
  IRSymbolHandle w = nullptr, x = nullptr;
  ASSERT_API(IRSymbolCreateVariable("W", &w));
  ASSERT_API(IRSymbolCreateVariable("x", &x));
  const char* kind_key = "__kind__";
  const char* kind_value = "variable";
  ASSERT_API(IRSymbolSetAttrs(w, 1, &kind_key, &kind_value));
  IRSymbolHandle init = Apply("assign", "init", {w, x});
  IRSymbolHandle step = Apply("assign_add", "step", {w, x});
  IRSymbolHandle y = Apply("runtime_test_scale", "y", {w});

  const char* feed_names[] = {"x"};
  IRNDArrayHandle ones = FloatArray({2}, {1, 2});
  uint32_t num_out = 99;
  IRNDArrayHandle* outs = nullptr;
  ASSERT_API(IRSessionRun(sess, nullptr, init, 1, feed_names, &ones, &num_out, &outs));
  EXPECT_EQ(num_out, 0u);
  ASSERT_API(IRSessionRun(sess, nullptr, step, 1, feed_names, &ones, &num_out, &outs));
  ASSERT_API(IRSessionRun(sess, y, nullptr, 0, nullptr, nullptr, &num_out, &outs));
  ASSERT_EQ(num_out, 1u);
  IRNDArrayHandle result = outs[0];
  EXPECT_EQ(ToFloats(result, 2), std::vector<float>({4, 8}));

  const char* stats = nullptr;
  ASSERT_API(IRSessionGetStatsJSON(sess, &stats));
  EXPECT_NE(std::string(stats).find("\"kernels_launched\": 1"), std::string::npos) << stats;
  EXPECT_NE(std::string(stats).find("\"bound\": true"), std::string::npos) << stats;

  uint32_t num_vars = 0;
  const char** names = nullptr;
  ASSERT_API(IRSessionListVariables(sess, &num_vars, &names));
  ASSERT_EQ(num_vars, 1u);
  EXPECT_EQ(std::string(names[0]), "W");

  IRNDArrayHandle got = nullptr;
  int found = 0;
  ASSERT_API(IRSessionGetVariable(sess, "W", &got, &found));
  ASSERT_EQ(found, 1);
  EXPECT_EQ(ToFloats(got, 2), std::vector<float>({2, 4}));
  IRNDArrayFree(got);
  ASSERT_API(IRSessionGetVariable(sess, "missing", &got, &found));
  EXPECT_EQ(found, 0);

  IRNDArrayHandle replacement = FloatArray({2}, {10, 20});
  ASSERT_API(IRSessionSetVariable(sess, "W", replacement));
  IRNDArrayFree(replacement);
  ASSERT_API(IRSessionRun(sess, y, nullptr, 0, nullptr, nullptr, &num_out, &outs));
  EXPECT_EQ(ToFloats(outs[0], 2), std::vector<float>({20, 40}));
  EXPECT_EQ(ToFloats(result, 2), std::vector<float>({4, 8})) << "earlier outputs stay valid";
  IRNDArrayFree(outs[0]);
  IRNDArrayFree(result);

  IRGraphHandle graph = nullptr;
  ASSERT_API(IRSessionGetLastGraph(sess, &graph));
  const char* plan = nullptr;
  int success = 0;
  ASSERT_API(IRGraphGetAttrJSON(graph, "storage_id", &plan, &success));
  EXPECT_EQ(success, 1);
  IRGraphFree(graph);

  EXPECT_EQ(IRSessionRun(sess, y, nullptr, 1, feed_names, &ones, &num_out, &outs), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("feed 'x' is not an input of this graph"), std::string::npos);

  IRNDArrayFree(ones);
  for (IRSymbolHandle s : {w, x, init, step, y}) IRSymbolFree(s);
  ASSERT_API(IRSessionFree(sess));
}

TEST(CAPIRuntimeTest, BadOptionsAreReported) {
  IRSessionHandle sess = nullptr;
  EXPECT_EQ(IRSessionCreate("{\"fusoin\": true}", &sess), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("Unknown field fusoin"), std::string::npos) << IRGetLastError();
  EXPECT_EQ(IRSessionCreate("{\"target\": \"tpu\"}", &sess), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("unknown device 'tpu'"), std::string::npos);
  ASSERT_API(IRSessionCreate(nullptr, &sess));
  ASSERT_API(IRSessionFree(sess));
}

}  // namespace

TEST(CAPIRuntimeTest, BorrowedFeedsAreReadNeverWrittenAndNotKept) {
  IRSessionHandle sess = nullptr;
  ASSERT_API(IRSessionCreate("{\"fusion\": false}", &sess));
  IRSymbolHandle w = nullptr, x = nullptr;
  ASSERT_API(IRSymbolCreateVariable("W", &w));
  ASSERT_API(IRSymbolCreateVariable("x", &x));
  IRSymbolHandle step = Apply("assign_add", "step", {w, x});  // mutates W: a fed W is copied first
  const char* names[] = {"W", "x"};
  int dtypes[] = {0, 0}, ndims[] = {1, 1};
  int64_t shapes[] = {2, 2};
  float fed_w[] = {1, 2}, fed_x[] = {10, 20};
  void* data[] = {fed_w, fed_x};
  uint32_t num_out = 0;
  IRNDArrayHandle* outs = nullptr;
  ASSERT_API(IRSessionRunBorrowed(sess, step, nullptr, 2, names, dtypes, ndims, shapes, data, &num_out, &outs));
  ASSERT_EQ(num_out, 1u);
  EXPECT_EQ(ToFloats(outs[0], 2), std::vector<float>({11, 22}));
  IRNDArrayFree(outs[0]);
  EXPECT_EQ(std::vector<float>(fed_w, fed_w + 2), std::vector<float>({1, 2})) << "the fed W was written";
  fed_x[0] = 100;  // the next run reads the memory again: nothing cached
  ASSERT_API(IRSessionRunBorrowed(sess, step, nullptr, 2, names, dtypes, ndims, shapes, data, &num_out, &outs));
  EXPECT_EQ(ToFloats(outs[0], 2), std::vector<float>({101, 22}));
  IRNDArrayFree(outs[0]);

  char bytes[16] = {};
  void* misaligned[] = {fed_w, bytes + 1};
  EXPECT_EQ(IRSessionRunBorrowed(sess, step, nullptr, 2, names, dtypes, ndims, shapes, misaligned, &num_out, &outs),
            -1);
  EXPECT_NE(std::string(IRGetLastError()).find("feed 'x': data is not aligned"), std::string::npos) << IRGetLastError();
  int64_t wrong[] = {2, 3};
  float three[] = {1, 2, 3};
  void* wrong_data[] = {fed_w, three};
  EXPECT_EQ(IRSessionRunBorrowed(sess, step, nullptr, 2, names, dtypes, ndims, wrong, wrong_data, &num_out, &outs), -1);
  EXPECT_NE(std::string(IRGetLastError()).find("[2]"), std::string::npos) << IRGetLastError();
  for (IRSymbolHandle s : {w, x, step}) IRSymbolFree(s);
  ASSERT_API(IRSessionFree(sess));
}
