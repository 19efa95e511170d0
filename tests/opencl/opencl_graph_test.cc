// Graphs on the OpenCL device: generated elementwise kernels with fusion off, and random
// elementwise/broadcast/reduction graphs through Fusion + CodeGen + RTCGen, against the CPU.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "ir/codegen.h"
#include "ir/graph.h"
#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "runtime/opencl/opencl_ops.h"
#include "test_util.h"

namespace ir {
namespace {

using Feeds = std::unordered_map<std::string, NDArray>;

SessionOptions Options(const std::string& target, bool fusion) {
  SessionOptions options;
  options.target = target;
  options.fusion = fusion;
  return options;
}

NodeEntry Placeholder(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

/*! \brief Runs `fetches` on the CPU unfused and on `target`, and expects equal results. */
RunStats ExpectSameAsCpu(const std::vector<NodeEntry>& fetches, const Feeds& feeds, const SessionOptions& options,
                         double tol = 1e-5) {
  Session cpu(Options("cpu", false)), device(options);
  std::vector<NDArray> expected = cpu.Run(fetches, feeds);
  std::vector<NDArray> got = device.Run(fetches, feeds);
  for (size_t i = 0; i < fetches.size(); ++i) {
    SCOPED_TRACE(StrCat("fetch ", i, " (", fetches[i].node->attrs.name, ")"));
    EXPECT_EQ(got[i].device().type, DeviceType::kOpenCL);
    test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], tol, tol);
  }
  return device.last_stats();
}

TEST(OpenCLGraphTest, ElementwiseOpsRunGeneratedKernelsWithFusionOff) {
  IR_REQUIRE_OPENCL();
  NodeEntry x = Placeholder("x"), y = Placeholder("y");
  NodeEntry s = MakeNode("sigmoid", "s", {x});
  NodeEntry b = MakeNode("add", "b", {s, y});
  NodeEntry w = MakeNode("where", "w", {MakeNode("greater", "g", {b, MakeNode("zeros_like", "z", {b})}), b, s});
  NodeEntry c = MakeNode("cast", "c", {w}, {{"dtype", "int32"}});
  Feeds feeds{{"x", test::RandomArray({3, 4}, DType::kFloat32, 1, -3, 3)},
              {"y", test::RandomArray({4}, DType::kFloat32, 2, -3, 3)}};
  RunStats stats = ExpectSameAsCpu({b, w, c}, feeds, Options("opencl", false));
  EXPECT_EQ(stats.host_fallbacks, 0u);
  // Another session binds the same graph: every kernel comes from the cache.
  int64_t compilations = KernelCache::Global().stats().compilations;
  ExpectSameAsCpu({b, w, c}, feeds, Options("opencl", false));
  EXPECT_EQ(KernelCache::Global().stats().compilations, compilations);
}

TEST(OpenCLGraphTest, OpsWithoutDeviceCodeFallBackCounted) {
  IR_REQUIRE_OPENCL();
  // power has no generated code for integers: the generic kernel runs it on host copies.
  int64_t before = opencl::GenericHostFallbacks();
  NodeEntry p = MakeNode("power", "p", {Placeholder("a"), Placeholder("b")});
  Feeds feeds{{"a", NDArray::FromVector<int32_t>({3}, {2, -3, 4})},
              {"b", NDArray::FromVector<int32_t>({3}, {3, 2, 0})}};
  ExpectSameAsCpu({p}, feeds, Options("opencl", false));
  EXPECT_EQ(opencl::GenericHostFallbacks(), before + 1);
}

/*! \brief A random graph of elementwise, broadcast and reduction ops over [b, c], [c] and [b, 1] inputs. */
class RandomGraph {
 public:
  explicit RandomGraph(uint64_t seed) : rng_(seed) {
    int64_t b = Pick(1, 5), c = Pick(1, 7);
    Add("x0", {b, c});
    Add("x1", {c});
    Add("x2", {b, 1});
    int steps = static_cast<int>(Pick(5, 12));
    for (int i = 0; i < steps; ++i) Step(i);
    fetches_ = {values_.back().entry, values_[values_.size() - 2].entry, values_[Pick(3, values_.size() - 1)].entry};
    // Only the placeholders the fetches read can be fed.
    Graph graph(fetches_);
    const IndexedGraph& idx = graph.indexed_graph();
    Feeds used;
    for (uint32_t nid : idx.input_nodes()) used[idx[nid].source->attrs.name] = feeds_.at(idx[nid].source->attrs.name);
    feeds_ = used;
  }
  const std::vector<NodeEntry>& fetches() const { return fetches_; }
  const Feeds& feeds() const { return feeds_; }

 private:
  struct Value {
    NodeEntry entry;
    std::vector<int64_t> shape;
  };

  int64_t Pick(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  const Value& Any() { return values_[Pick(0, values_.size() - 1)]; }

  void Add(const std::string& name, std::vector<int64_t> shape) {
    values_.push_back(Value{Placeholder(name), shape});
    feeds_[name] = test::RandomArray(Shape(shape), DType::kFloat32, Pick(1, 1000), 0.5, 1.5);
  }

  static std::vector<int64_t> Broadcast(std::vector<int64_t> a, std::vector<int64_t> b) {
    if (a.size() < b.size()) std::swap(a, b);
    for (size_t i = 0; i < b.size(); ++i) {
      int64_t& d = a[a.size() - b.size() + i];
      d = d == 1 ? b[i] : d;
    }
    return a;
  }

  void Step(int i) {
    std::string name = StrCat("n", i);
    int kind = static_cast<int>(Pick(0, 9));
    if (kind < 4) {
      static const char* const kUnary[] = {"tanh", "sigmoid", "sin", "abs", "negative", "relu", "softplus", "cos"};
      const Value& x = Any();
      values_.push_back(Value{MakeNode(kUnary[Pick(0, 7)], name, {x.entry}), x.shape});
    } else if (kind < 8) {
      static const char* const kBinary[] = {"add", "subtract", "multiply", "maximum", "minimum"};
      const Value& a = Any();
      const Value& b = Any();
      values_.push_back(Value{MakeNode(kBinary[Pick(0, 4)], name, {a.entry, b.entry}), Broadcast(a.shape, b.shape)});
    } else {
      static const char* const kReduce[] = {"sum", "mean", "max"};
      const Value& x = Any();
      if (x.shape.empty()) return;
      int axis = static_cast<int>(Pick(0, x.shape.size() - 1));
      bool keep = Pick(0, 1) == 1;
      std::vector<int64_t> shape = x.shape;
      if (keep) {
        shape[axis] = 1;
      } else {
        shape.erase(shape.begin() + axis);
      }
      values_.push_back(Value{MakeNode(kReduce[Pick(0, 2)], name, {x.entry},
                                       {{"axis", std::to_string(axis)}, {"keepdims", keep ? "1" : "0"}}),
                              shape});
    }
  }

  std::mt19937_64 rng_;
  std::vector<Value> values_;
  std::vector<NodeEntry> fetches_;
  Feeds feeds_;
};

TEST(OpenCLGraphTest, FusedRandomGraphsMatchUnfusedCpu) {
  IR_REQUIRE_OPENCL();
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE(StrCat("graph seed ", seed));
    RandomGraph graph(seed);
    Session device(Options("opencl", true));
    Session cpu(Options("cpu", false));
    std::vector<NDArray> got = device.Run(graph.fetches(), graph.feeds());
    std::vector<NDArray> expected = cpu.Run(graph.fetches(), graph.feeds());
    for (size_t i = 0; i < got.size(); ++i) test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], 1e-5, 1e-4);
    EXPECT_EQ(device.last_stats().host_fallbacks, 0u);
    EXPECT_FALSE(device.last_graph().GetAttr<std::string>("kernel_source").empty()) << "nothing was fused";
  }
}

}  // namespace
}  // namespace ir
