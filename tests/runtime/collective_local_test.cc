// The collective engine in one process (the "local" transport): buckets, synchronous
// collectives, the incomplete-bucket timeout, errors, the timeline. Multi-process runs are
// tests/runtime/collective (ctest Collective.*).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "ir/collective.h"

namespace coll = ir::collective;

namespace {

coll::InitOptions Local(double timeout_s = 0, const std::string& timeline = "") {
  coll::InitOptions options;
  options.transport = "local";
  options.timeout_s = timeout_s;
  options.timeline = timeline;
  return options;
}

// Any exception's message ("" when nothing was thrown).
template <typename F>
std::string ErrorOf(F&& call) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

coll::AllreduceRequest Member(const std::string& bucket, int n, int index, const std::string& name,
                              const ir::NDArray& value, coll::ReduceOp op = coll::ReduceOp::kSum) {
  coll::AllreduceRequest req;
  req.bucket = bucket;
  req.num_members = n;
  req.index = index;
  req.name = name;
  req.value = value;
  req.op = op;
  return req;
}

class CollectiveLocalTest : public ::testing::Test {
 protected:
  void TearDown() override { coll::Shutdown(); }
};

TEST_F(CollectiveLocalTest, GroupOfOneReducesBucketsSubmittedOutOfOrder) {
  coll::Init(Local());
  coll::Init(Local());  // A second Init is a no-op.
  EXPECT_TRUE(coll::IsInitialized());
  EXPECT_EQ(coll::Size(), 1);
  EXPECT_EQ(coll::Rank(), 0);
  EXPECT_EQ(coll::LocalSize(), 1);
  EXPECT_EQ(coll::TransportName(), "local");
  auto a = ir::NDArray::FromVector<float>({3}, {1, 2, 3});
  auto b = ir::NDArray::FromVector<double>({2, 2}, {4, 5, 6, 7});
  auto c = ir::NDArray::FromVector<float>({1}, {8});
  int64_t tc = coll::SubmitAllreduce(Member("a,b,c", 3, 2, "c", c, coll::ReduceOp::kAverage));
  int64_t ta = coll::SubmitAllreduce(Member("a,b,c", 3, 0, "a", a));
  a.data<float>()[0] = 100;  // Copied at submission: later writes do not reach the collective.
  int64_t tb = coll::SubmitAllreduce(Member("a,b,c", 3, 1, "b", b));
  ir::NDArray oa, ob, oc(ir::Shape({1}), ir::DType::kFloat32);
  coll::WaitAllreduce(tb, &ob);
  coll::WaitAllreduce(ta, &oa);
  coll::WaitAllreduce(tc, &oc);
  EXPECT_EQ(oa.ToVector<float>(), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(ob.ToVector<double>(), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(ob.shape(), ir::Shape({2, 2}));
  EXPECT_EQ(oc.ToVector<float>(), (std::vector<float>{8}));
  coll::EngineStats stats = coll::Stats();
  EXPECT_EQ(stats.collectives, 1);
  EXPECT_EQ(stats.tensors, 3);
  EXPECT_EQ(stats.bytes, 3 * 4 + 4 * 8 + 4);
  EXPECT_NE(ErrorOf([&] { coll::WaitAllreduce(ta, &oa); }).find("unknown ticket"), std::string::npos);
  coll::ResetStats();
  EXPECT_EQ(coll::Stats().collectives, 0);
}

TEST_F(CollectiveLocalTest, SynchronousCollectivesAreCopies) {
  coll::Init(Local());
  auto x = ir::NDArray::FromVector<int32_t>({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(coll::Allreduce("x", x, coll::ReduceOp::kAverage).ToVector<int32_t>(), x.ToVector<int32_t>());
  ir::NDArray gathered = coll::Allgather("x", x);
  EXPECT_EQ(gathered.shape(), ir::Shape({2, 2}));
  EXPECT_EQ(gathered.ToVector<int32_t>(), x.ToVector<int32_t>());
  EXPECT_EQ(coll::Broadcast("x", x, 0).ToVector<int32_t>(), x.ToVector<int32_t>());
  EXPECT_NE(ErrorOf([&] { coll::Broadcast("x", x, 1); }).find("from rank 1 in a group of size 1"), std::string::npos);
  EXPECT_NE(ErrorOf([&] { coll::Allgather("s", ir::NDArray::Scalar<float>(1)); }).find("scalar"), std::string::npos);
  auto flags = ir::NDArray::FromVector<bool>({2}, {true, false});
  EXPECT_NE(
      ErrorOf([&] { coll::Allreduce("flags", flags, coll::ReduceOp::kSum); }).find("bool tensors cannot be summed"),
      std::string::npos);
  EXPECT_EQ(coll::Stats().collectives, 3);  // Counted since Init; the rejected calls never ran.
}

TEST_F(CollectiveLocalTest, IncompleteBucketFailsAfterTheTimeoutNamingWhatIsMissing) {
  coll::Init(Local(0.2));
  auto v = ir::NDArray::FromVector<float>({2}, {1, 2});
  int64_t ticket = coll::SubmitAllreduce(Member("g/a,g/b,g/c", 3, 0, "g/a", v));
  coll::SubmitAllreduce(Member("g/a,g/b,g/c", 3, 2, "g/c", v));
  ir::NDArray out;
  std::string error = ErrorOf([&] { coll::WaitAllreduce(ticket, &out); });
  EXPECT_NE(error.find("bucket [g/a,g/b,g/c] has waited 0.2 s for members never submitted on this rank: [#1] of 3 "
                       "(submitted: [g/a, g/c])"),
            std::string::npos)
      << error;
  // The group is broken: every later call fails alike, at once.
  EXPECT_EQ(ErrorOf([&] { coll::Allreduce("x", v, coll::ReduceOp::kSum); }), error);
  coll::Shutdown();
  // A new group starts clean.
  coll::Init(Local());
  EXPECT_EQ(coll::Allreduce("x", v, coll::ReduceOp::kSum).ToVector<float>(), v.ToVector<float>());
}

TEST_F(CollectiveLocalTest, MisuseIsReported) {
  EXPECT_FALSE(coll::IsInitialized());
  EXPECT_NE(ErrorOf([] { coll::Rank(); }).find("Init has not run"), std::string::npos);
  auto v = ir::NDArray::FromVector<float>({1}, {1});
  EXPECT_NE(ErrorOf([&] { coll::SubmitAllreduce(Member("k", 1, 0, "v", v)); }).find("Init has not run"),
            std::string::npos);
  coll::InitOptions bogus;
  bogus.transport = "carrier-pigeon";
  EXPECT_NE(ErrorOf([&] { coll::Init(bogus); }).find("unknown collective transport \"carrier-pigeon\""),
            std::string::npos);
  EXPECT_FALSE(coll::IsInitialized());
  if (std::getenv("OMPI_COMM_WORLD_SIZE") == nullptr && std::getenv("PMI_SIZE") == nullptr) {
    coll::InitOptions mpi;
    mpi.transport = "mpi";
    EXPECT_NE(ErrorOf([&] { coll::Init(mpi); }).find("no MPI launcher started this process"), std::string::npos);
  }
  coll::Init(Local());
  EXPECT_NE(ErrorOf([&] { coll::SubmitAllreduce(Member("k", 2, 2, "v", v)); }).find("member #2 of a bucket of 2"),
            std::string::npos);
  coll::SubmitAllreduce(Member("k", 2, 0, "v", v));
  EXPECT_NE(ErrorOf([&] { coll::SubmitAllreduce(Member("k", 3, 1, "w", v)); }).find("says it has 3 members"),
            std::string::npos);
  EXPECT_NE(ErrorOf([&] { coll::SubmitAllreduce(Member("k", 2, 0, "v", v)); }).find("submitted twice"),
            std::string::npos);
}

TEST_F(CollectiveLocalTest, TimelineIsChromeTraceJson) {
  std::string path = ::testing::TempDir() + "collective_timeline_test.json";
  std::remove(path.c_str());
  coll::Init(Local(0, path));
  EXPECT_TRUE(coll::TimelineEnabled());
  auto v = ir::NDArray::FromVector<float>({2}, {1, 2});
  int64_t t0 = coll::SubmitAllreduce(Member("w,b", 2, 0, "w", v));
  int64_t t1 = coll::SubmitAllreduce(Member("w,b", 2, 1, "b", v));
  ir::NDArray out;
  coll::WaitAllreduce(t0, &out);
  coll::WaitAllreduce(t1, &out);
  double begin = coll::Microseconds();
  coll::TimelineRecord("matmul \"1\"", "executor", begin, coll::Microseconds());
  EXPECT_LE(begin, coll::Microseconds());
  coll::Shutdown();
  EXPECT_FALSE(coll::TimelineEnabled());
  std::ifstream file(path);
  ASSERT_TRUE(file.good()) << path;
  std::stringstream text;
  text << file.rdbuf();
  std::string json = text.str();
  EXPECT_EQ(json.rfind("{\"traceEvents\":[", 0), 0u);
  EXPECT_EQ(json.substr(json.size() - 3), "]}\n");
  for (const char* part : {"\"name\":\"allreduce of [w, b]\",\"cat\":\"agreement\",\"ph\":\"X\"", "\"cat\":\"queue\"",
                           "\"cat\":\"pack\"", "\"cat\":\"transport\"", "\"cat\":\"unpack\"",
                           "\"name\":\"matmul \\\"1\\\"\",\"cat\":\"executor\"", "\"pid\":0", "\"ph\":\"M\""}) {
    EXPECT_NE(json.find(part), std::string::npos) << part << " in " << json;
  }
  std::ifstream tmp(path + ".tmp");
  EXPECT_FALSE(tmp.good()) << "the temporary file was renamed";
}

}  // namespace
