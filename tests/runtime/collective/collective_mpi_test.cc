// ir-collective-test: the collective engine over a real process group, run under mpirun by
// scripts/mpirun_test.sh (ctest Collective.<impl>.np<N>...). Every rank checks its results and
// prints "collective-test rank R: PASS <mode>" at the end; any failed check exits nonzero.
//   ir-collective-test ok <transport> <np>       buckets, bit-identical sums, allgather,
//                                                broadcast, then a mismatch every rank reports
//   ir-collective-test timeout <transport> <np>  rank 0 submits what no other rank does: it
//                                                fails within its timeout; others never submit
//   ir-collective-test exit <transport> <np>     a bucket and a timeline span (IR_TIMELINE
//                                                names the file), then exit without Shutdown
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "ir/collective.h"

namespace coll = ir::collective;

namespace {

int g_rank = -1;

#define EXPECT(cond, ...)                                                                      \
  do {                                                                                         \
    if (!(cond)) {                                                                             \
      std::fprintf(stderr, "rank %d: check failed at line %d: %s: ", g_rank, __LINE__, #cond); \
      std::fprintf(stderr, __VA_ARGS__);                                                       \
      std::fprintf(stderr, "\n");                                                              \
      std::exit(2);                                                                            \
    }                                                                                          \
  } while (0)

// The message of what `call` throws; fails the test when it throws nothing.
std::string Thrown(const std::function<void()>& call, const char* what) {
  try {
    call();
  } catch (const std::exception& e) {
    return e.what();
  }
  EXPECT(false, "%s did not throw", what);
  return "";
}

bool Contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ir::NDArray Filled(std::vector<int64_t> dims, const std::function<float(int64_t)>& value) {
  ir::NDArray a(ir::Shape(dims), ir::DType::kFloat32);
  for (int64_t i = 0; i < a.Size(); ++i) a.data<float>()[i] = value(i);
  return a;
}

uint64_t HashBytes(const void* data, size_t bytes) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ static_cast<const unsigned char*>(data)[i]) * 1099511628211ull;
  return h;
}

// Two buckets in flight at once, members submitted in a different order on every rank.
void TestBuckets(int rank, int size) {
  const std::vector<int64_t> lengths = {5, 1000, 3};
  std::vector<int64_t> tickets(6);
  // Within a bucket any order; across ranks the buckets must still complete in one order
  // (the agreement checks it): A's members interleave with B's, and A completes first.
  std::vector<int> a = {0, 1, 2}, b = {3, 4, 5};
  std::rotate(a.begin(), a.begin() + rank % 3, a.end());
  std::rotate(b.begin(), b.begin() + (rank + 1) % 3, b.end());
  std::vector<int> order = {a[0], b[0], a[1], b[1], a[2], b[2]};
  for (int k : order) {
    coll::AllreduceRequest req;
    int bucket = k / 3, i = k % 3;
    req.bucket = bucket == 0 ? "grads/a,grads/b,grads/c" : "grads/d,grads/e,grads/f";
    req.num_members = 3;
    req.index = i;
    req.name = "grads/" + std::string(1, static_cast<char>('a' + k));
    req.op = bucket == 0 ? coll::ReduceOp::kSum : coll::ReduceOp::kAverage;
    if (k == 4) {
      req.value = ir::NDArray::FromVector<int64_t>({4}, {rank * 10 + 1, 2, 3, size});
    } else {
      req.value = Filled({lengths[i]}, [&](int64_t j) { return static_cast<float>((rank + 1) * (j + 1) + k); });
    }
    tickets[k] = coll::SubmitAllreduce(req);
  }
  float ranks_sum = static_cast<float>(size * (size + 1) / 2);
  for (int k = 0; k < 6; ++k) {
    ir::NDArray out;
    coll::WaitAllreduce(tickets[k], &out);
    if (k == 4) {
      std::vector<int64_t> got = out.ToVector<int64_t>();
      int64_t sum0 = 10 * size * (size - 1) / 2 + size;
      EXPECT(got[0] == sum0 / size && got[1] == 2 && got[3] == size, "int64 average: %lld %lld",
             static_cast<long long>(got[0]), static_cast<long long>(got[1]));
      continue;
    }
    std::vector<float> got = out.ToVector<float>();
    EXPECT(static_cast<int64_t>(got.size()) == lengths[k % 3], "size %zu", got.size());
    for (size_t j = 0; j < got.size(); ++j) {
      float sum = ranks_sum * static_cast<float>(j + 1) + static_cast<float>(size * k);
      float want = k < 3 ? sum : sum / static_cast<float>(size);
      EXPECT(got[j] == want, "member %d [%zu]: %g, want %g", k, j, got[j], want);
    }
  }
  // WaitAllreduce into a preallocated array of another shape with as many elements.
  coll::AllreduceRequest req;
  req.bucket = req.name = "matrix";
  req.value = Filled({2, 3}, [&](int64_t j) { return static_cast<float>(j * rank); });
  int64_t ticket = coll::SubmitAllreduce(req);
  ir::NDArray out(ir::Shape({6}), ir::DType::kFloat32);
  coll::WaitAllreduce(ticket, &out);
  EXPECT(out.ToVector<float>()[5] == 5.0f * (size * (size - 1) / 2), "preallocated out: %g", out.ToVector<float>()[5]);
}

// Random float32 sums whose rounding depends on the order of the additions: every rank must
// still hold the same bits.
void TestBitIdentical(int rank, int size) {
  std::mt19937 gen(1234 + rank);
  std::uniform_real_distribution<float> dist(-1e3f, 1e3f);
  for (coll::ReduceOp op : {coll::ReduceOp::kSum, coll::ReduceOp::kAverage}) {
    ir::NDArray value = Filled({100003}, [&](int64_t) { return dist(gen) * 1e-3f + dist(gen); });
    ir::NDArray sum = coll::Allreduce("bits", value, op);
    int64_t hash = static_cast<int64_t>(HashBytes(sum.data(), sum.nbytes()));
    ir::NDArray all = coll::Allgather("bits_hash", ir::NDArray::FromVector<int64_t>({1}, {hash}));
    std::vector<int64_t> hashes = all.ToVector<int64_t>();
    EXPECT(static_cast<int>(hashes.size()) == size, "%zu hashes", hashes.size());
    for (int r = 0; r < size; ++r) EXPECT(hashes[r] == hashes[0], "rank %d's sum differs from rank 0's", r);
  }
}

void TestAllgatherBroadcast(int rank, int size) {
  ir::NDArray mine = Filled({rank + 1, 3}, [&](int64_t i) { return static_cast<float>(rank * 100 + i); });
  ir::NDArray all = coll::Allgather("rows", mine);
  EXPECT(all.shape().ndim() == 2 && all.shape()[0] == size * (size + 1) / 2 && all.shape()[1] == 3, "shape %s",
         all.shape().ToString().c_str());
  std::vector<float> got = all.ToVector<float>();
  size_t at = 0;
  for (int r = 0; r < size; ++r) {
    for (int64_t i = 0; i < (r + 1) * 3; ++i, ++at) {
      EXPECT(got[at] == static_cast<float>(r * 100 + i), "allgather [%zu] = %g", at, got[at]);
    }
  }
  int root = size > 1 ? 1 : 0;
  ir::NDArray value = Filled({4}, [&](int64_t i) { return static_cast<float>(rank * 10 + i); });
  std::vector<float> b = coll::Broadcast("params/w", value, root).ToVector<float>();
  for (int64_t i = 0; i < 4; ++i) EXPECT(b[i] == static_cast<float>(root * 10 + i), "broadcast [%lld]", (long long)i);
  EXPECT(value.ToVector<float>()[0] == static_cast<float>(rank * 10), "broadcast changed its input");
}

// Rank 1 submits another tensor (2 ranks) or an allgather whose second dimension differs
// (3 ranks): every rank fails, naming each side; later calls fail alike. It breaks the group,
// so it comes last.
void TestMismatch(int rank, int size) {
  ir::NDArray value = Filled({2, rank == 1 && size == 3 ? 4 : 3}, [](int64_t) { return 1.0f; });
  std::string error;
  if (size == 2) {
    std::string name = rank == 1 ? "grad/w2" : "grad/w1";
    error = Thrown([&] { coll::Allreduce(name, value, coll::ReduceOp::kSum); }, "mismatched allreduce");
    EXPECT(Contains(error,
                    "collective #10 differs across ranks: rank 0 submitted allreduce of [grad/w1]; "
                    "rank 1 submitted allreduce of [grad/w2]"),
           "message: %s", error.c_str());
  } else {
    error = Thrown([&] { coll::Allgather("rows", value); }, "mismatched allgather");
    EXPECT(Contains(error,
                    "differs across ranks: rank 0 submitted allgather of [rows float32[2,3]]; rank 1 "
                    "submitted allgather of [rows float32[2,4]]; rank 2"),
           "message: %s", error.c_str());
  }
  std::string again = Thrown([&] { coll::Broadcast("x", value, 0); }, "broadcast after a mismatch");
  EXPECT(again == error, "later call: %s", again.c_str());
}

void RunOk(int size) {
  int rank = coll::Rank();
  TestBuckets(rank, size);
  TestBitIdentical(rank, size);
  TestAllgatherBroadcast(rank, size);
  coll::EngineStats stats = coll::Stats();
  EXPECT(stats.collectives >= 8 && stats.tensors >= 10 && stats.bytes > 400000, "stats %lld %lld %lld",
         (long long)stats.collectives, (long long)stats.tensors, (long long)stats.bytes);
  if (size > 1) TestMismatch(rank, size);
}

void RunTimeout() {
  int rank = coll::Rank();
  if (rank != 0) {
    // Stands for a rank busy elsewhere: it never submits; the launcher ends it once rank 0 leaves.
    std::this_thread::sleep_for(std::chrono::seconds(40));
    std::exit(3);
  }
  coll::AllreduceRequest req;
  req.bucket = "pending/a,pending/b";
  req.num_members = 2;
  req.name = "pending/a";
  req.value = Filled({2}, [](int64_t) { return 1.0f; });
  coll::SubmitAllreduce(req);
  ir::NDArray value = Filled({3}, [](int64_t) { return 1.0f; });
  std::string error = Thrown([&] { coll::Allreduce("lonely", value, coll::ReduceOp::kSum); }, "lonely allreduce");
  EXPECT(Contains(error, "rank 0 waited 1 s for the other ranks to submit collective #1 (allreduce of [lonely])") &&
             Contains(error, "pending on this rank: [pending/a (bucket incomplete)]"),
         "message: %s", error.c_str());
  std::string again = Thrown([&] { coll::Allgather("rows", value); }, "allgather after a timeout");
  EXPECT(again == error, "later call: %s", again.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s ok|timeout|exit <transport> <np>\n", argv[0]);
    return 2;
  }
  std::string mode = argv[1], transport = argv[2];
  int np = std::atoi(argv[3]);
  coll::InitOptions options;
  options.transport = transport;
  // Rank 0 of the timeout case gives up after 1 s; the others would wait long.
  const char* rank_env = std::getenv(transport == "openmpi" ? "OMPI_COMM_WORLD_RANK" : "PMI_RANK");
  bool rank0 = rank_env == nullptr || std::atoi(rank_env) == 0;
  options.timeout_s = mode == "timeout" && rank0 ? 1 : 30;
  try {
    coll::Init(options);
    g_rank = coll::Rank();
    EXPECT(coll::Size() == np && coll::TransportName() == transport, "group %s of size %d",
           coll::TransportName().c_str(), coll::Size());
    EXPECT(coll::LocalSize() == np && coll::LocalRank() == g_rank, "local %d of %d", coll::LocalRank(),
           coll::LocalSize());
    if (mode == "ok") {
      RunOk(np);
    } else if (mode == "timeout") {
      RunTimeout();
    } else if (mode == "exit") {
      // The at-exit handlers stop the engine and write the timeline (check_timeline.cmake reads it).
      coll::Allreduce("at_exit", Filled({3}, [](int64_t) { return 1.0f; }), coll::ReduceOp::kSum);
      coll::TimelineRecord("step", "executor", coll::Microseconds(), coll::Microseconds() + 1);
      std::printf("collective-test rank %d: PASS exit\n", g_rank);
      return 0;
    } else {
      EXPECT(false, "unknown mode %s", mode.c_str());
    }
    coll::Shutdown();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rank %d: unexpected error: %s\n", g_rank, e.what());
    return 1;
  }
  std::printf("collective-test rank %d: PASS %s\n", g_rank, mode.c_str());
  return 0;
}
