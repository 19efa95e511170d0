// Control flow on the OpenCL device against the CPU: the TensorArray kernels, cond, a while_loop
// with an elementwise chain, an RNN-like loop reading its inputs from and writing its outputs to
// tensor arrays, and that loop's gradient.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/autodiff.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/runtime.h"
#include "opencl/opencl_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace {

using Feeds = std::unordered_map<std::string, NDArray>;
using opencl_test::ExpectSameOnDevice;
using test::RandomArray;

NodeEntry V(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }
NodeEntry N(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
            const std::map<std::string, std::string>& attrs = {}) {
  return MakeNode(op, name, std::move(in), attrs);
}
NDArray I32(int32_t value) { return NDArray::Scalar<int32_t>(value); }
NDArray Rand(const Shape& shape, uint64_t seed) { return RandomArray(shape, DType::kFloat32, seed); }

/*! \brief A body over fresh params named `prefix`/p<i>, returning fn(params). */
std::shared_ptr<const Subgraph> MakeBody(const std::string& prefix, size_t n,
                                         const std::function<std::vector<NodeEntry>(std::vector<NodeEntry>)>& fn) {
  auto body = std::make_shared<Subgraph>();
  std::vector<NodeEntry> params;
  for (size_t i = 0; i < n; ++i) {
    params.push_back(V(prefix + "/p" + std::to_string(i)));
    body->params.push_back(params.back().node);
  }
  body->graph.outputs = fn(params);
  return body;
}

NodePtr ControlFlow(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
                    std::vector<std::shared_ptr<const Subgraph>> bodies) {
  return Node::Create(Op::Get(op), name, {}, std::move(inputs), std::move(bodies));
}

/*! \brief Runs `fetches` on the CPU and on OpenCL (fused and not); expects equal results, returns the last stats. */
RunStats ExpectSameAsCpu(const std::vector<NodeEntry>& fetches, const Feeds& feeds, double tol = 1e-5) {
  SessionOptions cpu_options;
  cpu_options.fusion = false;
  Session cpu(cpu_options);
  std::vector<NDArray> expected = cpu.Run(fetches, feeds);
  RunStats stats;
  for (bool fusion : {false, true}) {
    SessionOptions options;
    options.target = "opencl";
    options.fusion = fusion;
    Session device(options);
    std::vector<NDArray> got = device.Run(fetches, feeds);
    for (size_t i = 0; i < fetches.size(); ++i) {
      SCOPED_TRACE(StrCat("fetch ", i, " (", fetches[i].node->attrs.name, "), fusion ", fusion));
      EXPECT_EQ(got[i].device().type, DeviceType::kOpenCL);
      test::ExpectNear(got[i].CopyTo(Device::CPU()), expected[i], tol, tol);
    }
    stats = device.last_stats();
  }
  return stats;
}

TEST(OpenCLControlFlowTest, TensorArrayKernelsMatchTheCpu) {
  IR_REQUIRE_OPENCL();
  NDArray ta = Rand({6, 3, 5}, 1);
  ExpectSameOnDevice("tensor_array_read", {}, {ta, I32(4)});
  ExpectSameOnDevice("tensor_array_write", {}, {ta, NDArray::Scalar<int64_t>(0), Rand({3, 5}, 2)});
  ExpectSameOnDevice("tensor_array_gather", {}, {ta, NDArray::FromVector<int32_t>(Shape{4}, {2, 3, 0, 2})});
  ExpectSameOnDevice("tensor_array_scatter", {},
                     {ta, NDArray::FromVector<int64_t>(Shape{3}, {5, 1, 2}), Rand({3, 3, 5}, 3)});
  EXPECT_ERROR(opencl_test::RunOpOn(opencl_test::OpenCLDevice(), "tensor_array_read", {}, {ta, I32(6)}),
               "tried to read from index 6 but array size is: 6");
}

TEST(OpenCLControlFlowTest, CondRunsTheTakenBranchOnTheDevice) {
  IR_REQUIRE_OPENCL();
  auto then_branch = MakeBody("c/then", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("tanh", "c/t", {N("multiply", "c/m", {p[0], p[1]})})};
  });
  auto else_branch = MakeBody("c/else", 2, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("subtract", "c/s", {N("exp", "c/e", {p[0]}), p[1]})};
  });
  NodePtr c = ControlFlow("cond", "c", {V("pred"), V("a"), V("b")}, {then_branch, else_branch});
  for (bool pred : {true, false}) {
    ExpectSameAsCpu({{c, 0}}, {{"pred", NDArray::Scalar<bool>(pred)}, {"a", Rand({4, 7}, 4)}, {"b", Rand({7}, 5)}});
  }
}

TEST(OpenCLControlFlowTest, WhileLoopWithAnElementwiseChain) {
  IR_REQUIRE_OPENCL();
  auto cond = MakeBody("w/cond", 3, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("less", "w/less", {p[0], p[1]})};
  });
  auto body = MakeBody("w/body", 3, [](std::vector<NodeEntry> p) {
    NodeEntry sq = N("multiply", "w/sq", {p[2], p[2]});
    NodeEntry next = N("add", "w/next", {N("multiply_scalar", "w/half", {sq}, {{"scalar", "0.5"}}), p[2]});
    return std::vector<NodeEntry>{N("add_scalar", "w/inc", {p[0]}, {{"scalar", "1"}}), p[1],
                                  N("sigmoid", "w/sig", {next})};
  });
  NodePtr loop = ControlFlow("while_loop", "w", {V("i0"), V("n"), V("x")}, {cond, body});
  for (int n : {0, 3}) {
    ExpectSameAsCpu({{loop, 0}, {loop, 2}}, {{"i0", I32(0)}, {"n", I32(n)}, {"x", Rand({5, 6}, 6)}});
  }
}

/*!
 * \brief for t in [0, n): h = tanh(x[t] W + h U); out[t] = h. Loop vars (t, n, h, xs, outs, W, U):
 * xs [T, B, I] is read with tensor_array_read, outs [T, B, H] written with tensor_array_write.
 */
NodePtr RnnLoop() {
  auto cond = MakeBody("rnn/cond", 7, [](std::vector<NodeEntry> p) {
    return std::vector<NodeEntry>{N("less", "rnn/less", {p[0], p[1]})};
  });
  auto body = MakeBody("rnn/body", 7, [](std::vector<NodeEntry> p) {
    NodeEntry x_t = N("tensor_array_read", "rnn/x_t", {p[3], p[0]});
    NodeEntry pre = N("add", "rnn/pre", {N("matmul", "rnn/xw", {x_t, p[5]}), N("matmul", "rnn/hu", {p[2], p[6]})});
    NodeEntry h = N("tanh", "rnn/h", {pre});
    NodeEntry outs = N("tensor_array_write", "rnn/write", {p[4], p[0], h});
    return std::vector<NodeEntry>{
        N("add_scalar", "rnn/inc", {p[0]}, {{"scalar", "1"}}), p[1], h, p[3], outs, p[5], p[6]};
  });
  return ControlFlow("while_loop", "rnn", {V("t0"), V("n"), V("h0"), V("xs"), V("outs0"), V("W"), V("U")},
                     {cond, body});
}

Feeds RnnFeeds(int steps) {
  const int64_t T = 7, B = 4, I = 5, H = 6;
  return {{"t0", I32(0)},
          {"n", I32(steps)},
          {"h0", Rand({B, H}, 7)},
          {"xs", Rand({T, B, I}, 8)},
          {"outs0", NDArray::FromVector<float>(Shape{T, B, H}, std::vector<float>(T * B * H))},
          {"W", Rand({I, H}, 9)},
          {"U", RandomArray({H, H}, DType::kFloat32, 10, -0.5, 0.5)}};
}

TEST(OpenCLControlFlowTest, RnnLoopOverTensorArrays) {
  IR_REQUIRE_OPENCL();
  NodePtr loop = RnnLoop();
  for (int steps : {5, 7}) {
    RunStats stats = ExpectSameAsCpu({{loop, 2}, {loop, 4}}, RnnFeeds(steps), 1e-5);
    EXPECT_EQ(stats.host_fallbacks, 0u);
  }
}

TEST(OpenCLControlFlowTest, RnnLoopGradient) {
  IR_REQUIRE_OPENCL();
  NodePtr loop = RnnLoop();
  NodeEntry loss =
      N("add", "loss", {N("sum", "sum_h", {{loop, 2}}), N("sum", "sum_outs", {N("square", "sq_outs", {{loop, 4}})})});
  std::vector<NodeEntry> wrt;
  for (const char* name : {"h0", "xs", "W", "U"}) {
    for (const NodeEntry& in : loop->inputs) {
      if (in.node->attrs.name == name) wrt.push_back(in);
    }
  }
  std::vector<NodeEntry> grads = Gradients({loss}, wrt);
  ExpectSameAsCpu(grads, RnnFeeds(6), 1e-4);
}

}  // namespace
}  // namespace ir
