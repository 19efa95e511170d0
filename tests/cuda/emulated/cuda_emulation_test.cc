// The CUDA backend's kernels, run by the emulator (cuda_emulator.h), against the CPU backend.
#include <gtest/gtest.h>

#include "cuda/cuda_test_util.h"
#include "cuda_emulator.h"
#include "ir/op.h"
#include "ir/runtime.h"
#include "ops/op_harness.h"
#include "runtime/device/kernel_selection.h"

namespace ir {
namespace {

using test::Apply;
using test::Var;
using Attrs = std::map<std::string, std::string>;
using Feeds = std::map<std::string, NDArray>;

class CUDAEmulationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { test::InstallCUDAEmulator(); }
};

/*! \brief The fetched values (on the host) of one run on `target`; variables start from `variables`. */
std::vector<NDArray> RunOn(const std::string& target, bool fusion, const std::vector<NodeEntry>& fetches,
                           const Feeds& feeds, const std::vector<std::string>& variables = {},
                           RunStats* stats = nullptr, int steps = 1) {
  SessionOptions options;
  options.target = target;
  options.fusion = fusion;
  Session session(options);
  std::unordered_map<std::string, NDArray> placeholders;
  for (const auto& kv : feeds) {
    if (std::find(variables.begin(), variables.end(), kv.first) != variables.end()) {
      session.variables().Set(kv.first, kv.second.CopyTo(Device::CPU()));
    } else {
      placeholders[kv.first] = kv.second;
    }
  }
  std::vector<NDArray> results;
  for (int step = 0; step < steps; ++step) results = session.Run(fetches, placeholders);
  if (stats != nullptr) *stats = session.last_stats();
  for (NDArray& r : results) r = r.CopyTo(Device::CPU());
  for (const std::string& name : variables) results.push_back(session.variables().Get(name).CopyTo(Device::CPU()));
  return results;
}

/*! \brief Same values on the emulated CUDA device as on the CPU, with and without fusion; nothing on the host. */
void ExpectSameAsCPU(const std::vector<NodeEntry>& fetches, const Feeds& feeds,
                     const std::vector<std::string>& variables = {}, double tol = 1e-5, int steps = 1) {
  std::vector<NDArray> expected = RunOn("cpu", false, fetches, feeds, variables, nullptr, steps);
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(fusion ? "fused" : "unfused");
    RunStats stats;
    int64_t derived_fallbacks = device::DerivedHostFallbacks();
    std::vector<NDArray> got = RunOn("cuda", fusion, fetches, feeds, variables, &stats, steps);
    ASSERT_EQ(got.size(), expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(StrCat("value ", i));
      test::ExpectNear(got[i], expected[i], tol, tol);
    }
    EXPECT_EQ(stats.host_fallbacks, 0u);
    EXPECT_EQ(device::DerivedHostFallbacks(), derived_fallbacks) << "derived kernels ran on the host";
  }
}

Feeds Random(const std::map<std::string, Shape>& shapes, DType dtype = DType::kFloat32) {
  Feeds feeds;
  uint64_t seed = 11;
  for (const auto& kv : shapes) feeds[kv.first] = test::RandomArray(kv.second, dtype, seed++);
  return feeds;
}

NDArray Ints(const Shape& shape, DType dtype, int64_t modulo) {
  NDArray a(shape, dtype);
  for (int64_t i = 0; i < a.Size(); ++i) {
    if (dtype == DType::kInt32) {
      a.data<int32_t>()[i] = static_cast<int32_t>((i * 7) % modulo);
    } else {
      a.data<int64_t>()[i] = (i * 7) % modulo;
    }
  }
  return a;
}

TEST_F(CUDAEmulationTest, ElementwiseChainsDiamondsAndBroadcasts) {
  NodeEntry x = Var("x"), y = Var("y"), b = Var("b"), c = Var("c");
  NodeEntry e = Apply("exp", "e", {x});
  NodeEntry chain = Apply("tanh", "chain", {Apply("add", "a", {Apply("multiply", "m", {e, y}), x})});
  NodeEntry diamond = Apply("add", "d", {Apply("sin", "s", {e}), Apply("cos", "co", {e})});
  NodeEntry bcast = Apply("multiply", "bc", {Apply("add", "xb", {x, b}), c});
  ExpectSameAsCPU({chain, diamond, bcast},
                  Random({{"x", Shape{4, 5, 8}}, {"y", Shape{4, 5, 8}}, {"b", Shape{8}}, {"c", Shape{4, 1, 1}}}));
}

TEST_F(CUDAEmulationTest, ReductionsInThreadBlockAndColumnForm) {
  for (Shape shape : {Shape{64, 10}, Shape{3, 3000}, Shape{300, 7}}) {
    SCOPED_TRACE(StrCat("shape ", shape));
    NodeEntry a = Var("a"), b = Var("b");
    NodeEntry rows = Apply("sum", "rows", {Apply("multiply", "ab", {a, b})}, {{"axis", "1"}});
    NodeEntry cols = Apply("max", "cols", {Apply("exp", "ea", {a})}, {{"axis", "0"}});
    NodeEntry all = Apply("mean", "all", {Apply("square", "sq", {b})});
    NodeEntry low = Apply("min", "low", {a}, {{"axis", "1"}, {"keepdims", "true"}});
    ExpectSameAsCPU({rows, cols, all, low}, Random({{"a", shape}, {"b", shape}}), {}, 1e-4);
  }
}

TEST_F(CUDAEmulationTest, OpLibraryLoadedAtRunTimeRunsItsPortableDeviceKernel) {
  // tests/core/libs/device_ops.cc: an opaque op whose device kernel is written once, outside src/.
  LoadOpLibrary(std::string(IR_TEST_LIB_DIR) + "/libdevice_ops.so");
  NodeEntry x = Var("x");
  NodeEntry mirrored = Apply("mirror_rows", "m", {Apply("exp", "e", {x})}, {{"scale", "0.5"}});
  ExpectSameAsCPU({Apply("add", "y", {mirrored, x})}, Random({{"x", Shape{4, 9}}}));
}

TEST_F(CUDAEmulationTest, SoftmaxFamily) {
  NodeEntry x = Var("x"), dense = Var("dense"), labels = Var("labels"), labels64 = Var("labels64");
  NodeEntry x3 = Var("x3");
  std::vector<NodeEntry> fetches = {
      Apply("softmax", "sm", {x}),
      Apply("log_softmax", "lsm", {x}),
      Apply("softmax", "sm0", {x}, {{"axis", "0"}}),
      Apply("log_softmax", "lsm3", {x3}, {{"axis", "1"}}),
      Apply("softmax_cross_entropy_with_logits", "ce", {x, dense}, {}, 0),
      Apply("sparse_softmax_cross_entropy_with_logits", "sce", {x, labels}, {}, 0),
      Apply("sparse_softmax_cross_entropy_with_logits", "sce64", {x, labels64}, {}, 0),
      Apply("softmax_cross_entropy_with_logits", "gce", {x, dense}, {{"general_labels", "true"}}, 0)};
  fetches.push_back(NodeEntry{fetches[4].node, 1});
  fetches.push_back(NodeEntry{fetches[5].node, 1});
  fetches.push_back(NodeEntry{fetches[7].node, 1});  // backprop = softmax * sum(labels) - labels
  Feeds feeds = Random({{"x", Shape{6, 10}}, {"dense", Shape{6, 10}}, {"x3", Shape{2, 5, 3}}});
  feeds["labels"] = Ints(Shape{6}, DType::kInt32, 10);
  feeds["labels64"] = Ints(Shape{6}, DType::kInt64, 10);
  ExpectSameAsCPU(fetches, feeds, {}, 1e-5);
}

TEST_F(CUDAEmulationTest, MatmulWithTransposesAndBatches) {
  NodeEntry a = Var("a"), b = Var("b"), at = Var("at"), bt = Var("bt"), ba = Var("ba"), bb = Var("bb");
  std::vector<NodeEntry> fetches = {
      Apply("matmul", "mm", {a, b}), Apply("matmul", "mta", {at, b}, {{"transpose_a", "true"}}),
      Apply("matmul", "mtb", {a, bt}, {{"transpose_b", "true"}}), Apply("matmul", "batched", {ba, bb})};
  ExpectSameAsCPU(fetches,
                  Random({{"a", Shape{21, 19}},
                          {"b", Shape{19, 17}},
                          {"at", Shape{19, 21}},
                          {"bt", Shape{17, 19}},
                          {"ba", Shape{2, 1, 5, 7}},
                          {"bb", Shape{3, 7, 4}}}),
                  {}, 1e-5);
  NodeEntry ia = Var("ia"), ib = Var("ib");
  ExpectSameAsCPU({Apply("matmul", "imm", {ia, ib})},
                  {{"ia", Ints(Shape{5, 6}, DType::kInt32, 9)}, {"ib", Ints(Shape{6, 3}, DType::kInt32, 5)}});
}

TEST_F(CUDAEmulationTest, MatmulAndConvEpilogues) {
  // Fused, each matmul/conv2d runs its device kernel and then its epilogue's generated kernel.
  NodeEntry x = Var("x"), w = Var("w"), b = Var("b"), g = Var("g"), img = Var("img"), k = Var("k");
  NodeEntry h = Apply("relu", "h", {Apply("bias_add", "hb", {Apply("matmul", "mm", {x, w}), b})});
  NodeEntry dh = Apply("relu_grad", "dh", {Apply("matmul", "dx", {g, w}, {{"transpose_b", "true"}}), x});
  NodeEntry conv = Apply("conv2d", "conv", {img, k}, {{"padding", "SAME"}});
  NodeEntry act = Apply("tanh", "act", {Apply("add", "cr", {Apply("bias_add", "cb", {conv, b}), Var("r")})});
  ExpectSameAsCPU({h, dh, act},
                  Random({{"x", Shape{5, 12}},
                          {"w", Shape{12, 7}},
                          {"b", Shape{7}},
                          {"g", Shape{5, 7}},
                          {"img", Shape{2, 6, 5, 3}},
                          {"k", Shape{3, 3, 3, 7}},
                          {"r", Shape{2, 6, 5, 7}}}),
                  {}, 1e-4);
}

/*! \brief A convolution or pooling, its data input shaped for `format`. */
struct WindowCase {
  std::string format;
  Attrs attrs;
};

TEST_F(CUDAEmulationTest, ConvolutionAndItsBackprops) {
  std::vector<WindowCase> cases = {{"NHWC", {{"padding", "SAME"}, {"strides", "2"}}},
                                   {"NHWC", {{"padding", "VALID"}, {"dilations", "2"}}},
                                   {"NCHW", {{"pads", "(1,0,2,1)"}, {"strides", "(1,2)"}}}};
  for (WindowCase c : cases) {
    c.attrs["data_format"] = c.format;
    SCOPED_TRACE(StrCat(c.format, " ", c.attrs.begin()->second));
    Shape data = c.format == "NHWC" ? Shape{2, 9, 8, 3} : Shape{2, 3, 9, 8};
    NodeEntry x = Var("x"), w = Var("w");
    NodeEntry y = Apply("conv2d", "conv", {x, w}, c.attrs);
    // The backprops of sum(y * r) for a fixed random r: dx and dw through the two ops.
    NodeEntry r = Apply("sin", "r", {Apply("multiply_scalar", "ry", {y}, {{"scalar", "3"}})});
    NodeEntry dx = Apply("conv2d_backprop_input", "dx", {r, w, x}, c.attrs);
    NodeEntry dw = Apply("conv2d_backprop_filter", "dw", {x, r, w}, c.attrs);
    ExpectSameAsCPU({y, dx, dw}, Random({{"x", data}, {"w", Shape{3, 2, 3, 4}}}), {}, 1e-4);
  }
}

TEST_F(CUDAEmulationTest, ImagePatchesAndTheirGradient) {
  Attrs attrs = {{"ksizes", "(3,2)"}, {"strides", "2"}, {"rates", "(1,2)"}, {"padding", "SAME"}};
  NodeEntry x = Var("x");
  NodeEntry p = Apply("extract_image_patches", "p", {x}, attrs);
  NodeEntry dx = Apply("extract_image_patches_grad", "dx", {Apply("sin", "dy", {p}), x}, attrs);
  ExpectSameAsCPU({p, dx}, Random({{"x", Shape{2, 9, 8, 3}}}), {}, 1e-5);
}

TEST_F(CUDAEmulationTest, PoolingAndItsGradients) {
  std::vector<WindowCase> cases = {{"NHWC", {{"ksize", "3"}, {"strides", "2"}, {"padding", "SAME"}}},
                                   {"NCHW", {{"ksize", "(2,3)"}, {"strides", "(2,1)"}, {"padding", "VALID"}}},
                                   {"NHWC", {{"ksize", "3"}, {"strides", "2"}, {"pads", "(1,1,0,2)"}}}};
  for (WindowCase c : cases) {
    c.attrs["data_format"] = c.format;
    SCOPED_TRACE(StrCat(c.format, " ", c.attrs.count("pads") ? c.attrs.at("pads") : c.attrs.at("padding")));
    Shape data = c.format == "NHWC" ? Shape{2, 7, 8, 3} : Shape{2, 3, 7, 8};
    NodeEntry x = Var("x");
    NodeEntry mx = Apply("max_pool2d", "mx", {x}, c.attrs), av = Apply("avg_pool2d", "av", {x}, c.attrs);
    NodeEntry dy = Apply("cos", "dy", {mx});
    NodeEntry dmx = Apply("max_pool2d_grad", "dmx", {x, mx, dy}, c.attrs);
    NodeEntry dav = Apply("avg_pool2d_grad", "dav", {Apply("cos", "dya", {av}), x}, c.attrs);
    ExpectSameAsCPU({mx, av, dmx, dav}, Random({{"x", data}}), {}, 1e-5);
  }
}

TEST_F(CUDAEmulationTest, StridedReductionsAndArgReductions) {
  NodeEntry x = Var("x"), nchw = Var("nchw"), y = Var("y"), like = Var("like");
  std::vector<NodeEntry> fetches = {
      Apply("sum", "s02", {x}, {{"axis", "(0,2)"}}), Apply("max", "m02", {x}, {{"axis", "(0,2)"}}),
      Apply("prod", "p1", {x}, {{"axis", "1"}}),     Apply("bias_add_grad", "bg", {nchw}, {{"data_format", "NCHW"}}),
      Apply("bias_add_grad", "bgl", {nchw}),         Apply("collapse_sum_like", "cs", {y, like}),
      Apply("argmax", "am", {x}, {{"axis", "1"}}),   Apply("argmin", "an", {x}, {{"axis", "-1"}})};
  ExpectSameAsCPU(
      fetches,
      Random({{"x", Shape{3, 4, 5}}, {"nchw", Shape{2, 3, 4, 5}}, {"y", Shape{4, 3, 5}}, {"like", Shape{3, 1}}}), {},
      1e-5);
}

TEST_F(CUDAEmulationTest, DataMovementAndState) {
  NodeEntry x = Var("x"), idx = Var("idx"), idx64 = Var("idx64"), og = Var("og"), v = Var("v"), u = Var("u"),
            d = Var("d");
  std::vector<NodeEntry> fetches = {
      Apply("transpose", "t", {x}, {{"axes", "(2,0,1)"}}),
      Apply("transpose", "tr", {x}),
      Apply("one_hot", "oh", {idx}, {{"depth", "6"}}),
      Apply("one_hot", "oh0", {idx64}, {{"depth", "4"}, {"axis", "0"}, {"on_value", "2.5"}, {"off_value", "-1"}}),
      Apply("_reduce_grad_broadcast", "rgb", {og, x}, {{"axis", "1"}, {"normalize", "true"}}),
      Apply("reshape", "rs", {x}, {{"shape", "(4, -1)"}}),
      Apply("expand_dims", "ed", {x}, {{"axis", "1"}}),
      Apply("cast", "ci", {Apply("greater", "gt", {x, Apply("zeros_like", "z", {x})})}, {{"dtype", "int32"}}),
      Apply("assign_add", "add_v", {v, d}),
      Apply("assign_sub", "sub_u", {u, d})};
  Feeds feeds = Random({{"x", Shape{3, 4, 5}}, {"og", Shape{3, 5}}, {"v", Shape{7}}, {"u", Shape{7}}, {"d", Shape{7}}});
  feeds["idx"] = Ints(Shape{2, 3}, DType::kInt32, 7);
  feeds["idx64"] = Ints(Shape{5}, DType::kInt64, 5);
  ExpectSameAsCPU(fetches, feeds, {"v", "u"});
}

TEST_F(CUDAEmulationTest, AdamUpdateOnVariables) {
  NodeEntry g = Var("g"), m = Var("m"), v = Var("v"), w = Var("w");
  auto scale = [](const std::string& name, NodeEntry e, const char* s) {
    return Apply("multiply_scalar", name, {e}, {{"scalar", s}});
  };
  NodeEntry m1 = Apply("add", "m1", {scale("md", m, "0.9"), scale("gp", g, "0.1")});
  NodeEntry v1 = Apply("add", "v1", {scale("vd", v, "0.999"), scale("g2p", Apply("square", "g2", {g}), "0.001")});
  NodeEntry step =
      Apply("divide", "step", {m1, Apply("add_scalar", "den", {Apply("sqrt", "rv", {v1})}, {{"scalar", "1e-8"}})});
  NodeEntry w1 = Apply("subtract", "w1", {w, scale("lrs", step, "0.001")});
  std::vector<NodeEntry> updates = {Apply("assign", "am", {m, m1}), Apply("assign", "av", {v, v1}),
                                    Apply("assign", "aw", {w, w1})};
  Feeds feeds = Random({{"g", Shape{1000}}, {"m", Shape{1000}}, {"w", Shape{1000}}});
  feeds["v"] = test::RandomArray(Shape{1000}, DType::kFloat32, 5, 0, 1);
  ExpectSameAsCPU(updates, feeds, {"m", "v", "w"}, 1e-5, 2);
}

// A small LeNet (12x12 images, 2 and 4 channels, 8 hidden units): host threads make the
// emulated block barriers slow, so the full-size network is only compiled (ir_cuda_tests).
TEST_F(CUDAEmulationTest, LeNetTrainingStepsMatchTheCPU) {
  test::LeNet net = test::BuildLeNet(4, 12, 2, 4, 8);
  ExpectSameAsCPU(net.outputs, net.feeds, net.variables, 1e-4, 2);
}

}  // namespace
}  // namespace ir
