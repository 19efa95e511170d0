// Per-example gradients, jacobians and batch jacobians of real models: the vectorized graphs equal
// the loops (the pfor kernel), and no node of their forward or backward graphs falls back to a loop.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "ir/autodiff.h"
#include "passes/vectorize_harness.h"

namespace ir {
namespace {

using pfor_test::AsDoubles;
using pfor_test::Op;
using pfor_test::RandomArray;

NodeEntry Var(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

/*!
 * \brief A layer whose parameters' gradients each end in one reduction: y = op(a, w) (conv2d or
 * matmul), then bias_add(y, b). Recorded so that a test can bound those reductions' error.
 */
struct Layer {
  NodeEntry a, w, b, y;
  std::string op;
  std::map<std::string, std::string> attrs;
};

/*! \brief conv (VALID or SAME, stride 1) + bias + relu + 2x2 max pool, NHWC. */
NodeEntry ConvBlock(NodeEntry x, NodeEntry w, NodeEntry b, const std::string& padding, const std::string& name,
                    std::vector<Layer>* layers) {
  std::map<std::string, std::string> attrs = {{"strides", "(1,1)"}, {"padding", padding}};
  NodeEntry c = Op("conv2d", name + "/conv", {x, w}, attrs);
  if (layers) layers->push_back({x, w, b, c, "conv2d", attrs});
  NodeEntry h = Op("relu", name + "/relu", {Op("bias_add", name + "/bias", {c, b})});
  return Op("max_pool2d", name + "/pool", {h}, {{"ksize", "(2,2)"}, {"strides", "(2,2)"}});
}

NodeEntry Dense(NodeEntry x, NodeEntry w, NodeEntry b, bool relu, const std::string& name, std::vector<Layer>* layers) {
  NodeEntry m = Op("matmul", name + "/matmul", {x, w});
  if (layers) layers->push_back({x, w, b, m, "matmul", {}});
  NodeEntry y = Op("bias_add", name + "/bias", {m, b});
  return relu ? Op("relu", name + "/relu", {y}) : y;
}

/*! \brief A LeNet: two conv blocks (channels c1, c2, padding), fc hidden, fc 10; mean cross-entropy. */
struct LeNet {
  int64_t c1, c2, hidden, flat;
  std::string padding;
  std::vector<NodeEntry> params{Var("w1"), Var("b1"), Var("w2"), Var("b2"), Var("w3"), Var("b3"), Var("w4"), Var("b4")};

  std::vector<Shape> ParamShapes() const {
    return {Shape{5, 5, 1, c1},  Shape{c1},     Shape{5, 5, c1, c2}, Shape{c2},
            Shape{flat, hidden}, Shape{hidden}, Shape{hidden, 10},   Shape{10}};
  }
  /*! \brief The mean loss of `batch` (images, labels); `layers`, when given, gets the four layers. */
  NodeEntry Loss(const std::vector<NodeEntry>& batch, std::vector<Layer>* layers = nullptr) const {
    const auto& p = params;
    NodeEntry h = ConvBlock(ConvBlock(batch[0], p[0], p[1], padding, "c1", layers), p[2], p[3], padding, "c2", layers);
    h = Op("reshape", "flat", {h}, {{"shape", "(-1," + std::to_string(flat) + ")"}});
    NodeEntry logits = Dense(Dense(h, p[4], p[5], true, "fc1", layers), p[6], p[7], false, "fc2", layers);
    NodeEntry xent = Op("softmax_cross_entropy_with_logits", "xent", {logits, batch[1]});
    return Op("mean", "loss", {xent});
  }
  /*!
   * \brief The most roundings any gradient of one example accumulates, counting every sum on its
   * way (Higham's gamma_k adds up along nested sums): each layer's forward and backward
   * contractions, the softmax's sum of 10, and the longest final reduction (a conv's positions).
   */
  int64_t Roundings(int64_t image) const {
    int64_t k = 10, positions = 0, side = image;
    for (const Shape& w : ParamShapes()) {
      if (w.ndim() < 2) continue;
      bool conv = w.ndim() == 4;
      k += w.Size() / w[w.ndim() - 1] + (conv ? w[0] * w[1] * w[3] : w[1]);  // forward + backward contractions
      if (conv) {
        int64_t out = padding == "SAME" ? side : side - w[0] + 1;
        positions = std::max(positions, out * out);
        side = (out + 1) / 2;  // the 2x2 pool
      }
    }
    return k + positions;
  }
};

std::unordered_map<std::string, NDArray> Feeds(const LeNet& net, int64_t n, std::mt19937* rng) {
  std::unordered_map<std::string, NDArray> feeds;
  std::vector<Shape> shapes = net.ParamShapes();
  for (size_t k = 0; k < shapes.size(); ++k) {
    feeds[net.params[k].node->attrs.name] = RandomArray(shapes[k], DType::kFloat32, -0.3, 0.3, rng);
  }
  feeds["images"] = RandomArray(Shape{n, 28, 28, 1}, DType::kFloat32, 0, 1, rng);
  NDArray labels(Shape{n, 10}, DType::kFloat32);
  for (int64_t i = 0; i < labels.Size(); ++i) labels.data<float>()[i] = (i % 10 == (i / 10) % 10) ? 1.f : 0.f;
  feeds["labels"] = labels;
  return feeds;
}

/*! \brief Runs `outs` looped (no Vectorize) or vectorized; `fallbacks` gets the vectorized run's list. */
std::vector<NDArray> RunGraph(const std::vector<NodeEntry>& outs, const std::unordered_map<std::string, NDArray>& feeds,
                              bool vectorize, std::vector<std::string>* fallbacks = nullptr) {
  SessionOptions options;
  if (!vectorize) options.passes = {"InferShape", "InferType", "PlanMemory"};
  Session sess(options);
  std::vector<NDArray> result = sess.Run(outs, feeds);
  if (fallbacks) *fallbacks = sess.last_stats().pfor_fallbacks;
  return result;
}

void ExpectClose(const std::vector<NDArray>& a, const std::vector<NDArray>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t j = 0; j < a.size(); ++j) {
    ASSERT_EQ(a[j].shape(), b[j].shape()) << "output " << j;
    std::vector<double> x = AsDoubles(a[j]), y = AsDoubles(b[j]);
    double scale = 0;
    for (double v : x) scale = std::max(scale, std::fabs(v));
    for (size_t e = 0; e < x.size(); ++e) {
      ASSERT_NEAR(x[e], y[e], tol * (1 + scale)) << "output " << j << " element " << e;
    }
  }
}

std::string Joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& n : names) text += n + "; ";
  return text;
}

NodeEntry Fixed(const NodeEntry& x, const std::string& name) { return Op("stop_gradient", name, {x}); }

/*!
 * \brief The magnitude of each parameter gradient's last reduction, for one example's graph: a
 * weight's gradient is sum_t a_t d_t over the layer's input a and the gradient d of its output, so
 * the magnitude is sum_t |a_t| |d_t|, the same reduction of |a| and |d| (computed here as the
 * gradient of <op(|a|, w), |d|> with a and d held fixed); a bias's is sum_t |d_t|.
 */
std::vector<NodeEntry> GradientMagnitudes(const NodeEntry& loss, const std::vector<Layer>& layers) {
  std::vector<NodeEntry> ys;
  for (const Layer& l : layers) ys.push_back(l.y);
  std::vector<NodeEntry> d = Gradients({loss}, ys);
  std::vector<NodeEntry> out;
  for (size_t k = 0; k < layers.size(); ++k) {
    const Layer& l = layers[k];
    std::string at = "magnitude" + std::to_string(k);
    NodeEntry abs_a = Op("abs", at + "/a", {Fixed(l.a, at + "/fixed_a")});
    NodeEntry abs_d = Op("abs", at + "/d", {Fixed(d[k], at + "/fixed_d")});
    NodeEntry wy = Op(l.op, at + "/wy", {abs_a, l.w}, l.attrs);
    NodeEntry by = Op("bias_add", at + "/by", {Fixed(l.y, at + "/fixed_y"), l.b});
    out.push_back(Gradients({Op("sum", at + "/w", {Op("multiply", at + "/wd", {wy, abs_d})})}, {l.w})[0]);
    out.push_back(Gradients({Op("sum", at + "/b", {Op("multiply", at + "/bd", {by, abs_d})})}, {l.b})[0]);
  }
  return out;
}

/*!
 * \brief |x - y| <= 2 gamma max(magnitude) elementwise. Two float32 evaluations of one gradient
 * that sum in other orders (the loop's and the vectorized graph's oneDNN kernels, which also
 * differ by instruction set) each lie within gamma_K of the exact value, relative to the
 * magnitude of the computation (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1),
 * K the roundings on the way. The bound is normwise (the tensor's largest final-reduction
 * magnitude), not per element: an element's upstream factors (the gradient d of the layer's
 * output, itself a sum over the next layer) carry errors relative to their own magnitudes,
 * which a sum that cancels to a tiny d does not show; the tensor's largest magnitude does.
 */
void ExpectWithinBound(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& magnitude,
                       double gamma, const std::string& what) {
  ASSERT_EQ(x.size(), magnitude.size()) << what;
  ASSERT_EQ(y.size(), magnitude.size()) << what;
  double bound = 2 * gamma * *std::max_element(magnitude.begin(), magnitude.end());
  for (size_t e = 0; e < x.size(); ++e) {
    ASSERT_LE(std::fabs(double(x[e]) - y[e]), bound) << what << " element " << e << ": " << x[e] << " vs " << y[e];
  }
}

void CheckPerExampleGradients(const LeNet& net) {
  const int64_t n = 4;
  std::mt19937 rng(7);
  auto feeds = Feeds(net, n, &rng);
  std::vector<NodeEntry> grads =
      PerExampleGradients([&](const std::vector<NodeEntry>& batch) { return net.Loss(batch); },
                          {Var("images"), Var("labels")}, net.params, n);
  std::vector<std::string> fallbacks;
  std::vector<NDArray> vec = RunGraph(grads, feeds, true, &fallbacks);
  EXPECT_TRUE(fallbacks.empty()) << Joined(fallbacks);
  std::vector<NDArray> loop = RunGraph(grads, feeds, false);
  const double u = std::ldexp(1.0, -24), k = static_cast<double>(net.Roundings(28)), gamma = k * u / (1 - k * u);
  // Row i of each is the gradient of example i alone, computed also by a graph over a batch of one.
  for (int64_t i = 0; i < n; ++i) {
    std::string begin = "(" + std::to_string(i);
    NodeEntry row_images =
        Op("slice", "one_image", {Var("images")}, {{"begin", begin + ",0,0,0)"}, {"size", "(1,28,28,1)"}});
    NodeEntry row_labels = Op("slice", "one_label", {Var("labels")}, {{"begin", begin + ",0)"}, {"size", "(1,10)"}});
    std::vector<Layer> layers;
    NodeEntry loss = net.Loss({row_images, row_labels}, &layers);
    std::vector<NodeEntry> outs = Gradients({loss}, net.params), magnitudes = GradientMagnitudes(loss, layers);
    outs.insert(outs.end(), magnitudes.begin(), magnitudes.end());
    std::vector<NDArray> single = RunGraph(outs, feeds, true);
    for (size_t p = 0; p < net.params.size(); ++p) {
      int64_t row = single[p].Size();
      std::vector<float> all = vec[p].ToVector<float>(), looped = loop[p].ToVector<float>();
      std::vector<float> v(all.begin() + i * row, all.begin() + (i + 1) * row);
      std::vector<float> l(looped.begin() + i * row, looped.begin() + (i + 1) * row);
      std::vector<float> magnitude = single[net.params.size() + p].ToVector<float>();
      std::string what = "example " + std::to_string(i) + " param " + net.params[p].node->attrs.name;
      ExpectWithinBound(v, l, magnitude, gamma, what + " (vectorized vs loop)");
      ExpectWithinBound(v, single[p].ToVector<float>(), magnitude, gamma, what + " (vectorized vs batch of one)");
    }
  }
}

TEST(VectorizeModelsTest, LeNetSmallPerExampleGradientsEqualTheLoopWithoutFallbacks) {
  CheckPerExampleGradients(LeNet{6, 16, 120, 256, "VALID"});
}

TEST(VectorizeModelsTest, DemoLeNetPerExampleGradientsEqualTheLoopWithoutFallbacks) {
  CheckPerExampleGradients(LeNet{16, 32, 256, 7 * 7 * 32, "SAME"});
}

/*! \brief y = tanh(tanh(x W1 + b1) W2 + b2) for x [rows, 6]. */
NodeEntry TanhMlp(NodeEntry x) {
  NodeEntry h = Op("tanh", "h", {Dense(x, Var("w1"), Var("b1"), false, "l1", nullptr)});
  return Op("tanh", "y", {Dense(h, Var("w2"), Var("b2"), false, "l2", nullptr)});
}

std::unordered_map<std::string, NDArray> MlpFeeds(int64_t rows, std::mt19937* rng) {
  return {{"x", RandomArray(Shape{rows, 6}, DType::kFloat32, -1, 1, rng)},
          {"w1", RandomArray(Shape{6, 5}, DType::kFloat32, -1, 1, rng)},
          {"b1", RandomArray(Shape{5}, DType::kFloat32, -1, 1, rng)},
          {"w2", RandomArray(Shape{5, 4}, DType::kFloat32, -1, 1, rng)},
          {"b2", RandomArray(Shape{4}, DType::kFloat32, -1, 1, rng)}};
}

TEST(VectorizeModelsTest, JacobianEqualsTheLoopAndFiniteDifferences) {
  std::mt19937 rng(3);
  auto feeds = MlpFeeds(1, &rng);
  NodeEntry x = Var("x");
  NodeEntry y = TanhMlp(x);
  std::vector<NodeEntry> jac = Jacobian(y, {x}, 4);
  std::vector<std::string> fallbacks;
  std::vector<NDArray> vec = RunGraph(jac, feeds, true, &fallbacks);
  EXPECT_TRUE(fallbacks.empty()) << Joined(fallbacks);
  ASSERT_EQ(vec[0].shape(), (Shape{4, 1, 6}));
  ExpectClose(RunGraph(jac, feeds, false), vec, 1e-5);
  // Central differences of y in float64 would need a float64 graph; float32 at h = 1e-2 is enough here.
  std::vector<float> j = vec[0].ToVector<float>();
  for (int k = 0; k < 6; ++k) {
    std::vector<std::vector<float>> ys;
    for (float h : {1e-2f, -1e-2f}) {
      auto shifted = feeds;
      shifted["x"] = feeds["x"].CopyTo(Device::CPU());
      shifted["x"].data<float>()[k] += h;
      ys.push_back(RunGraph({y}, shifted, true)[0].ToVector<float>());
    }
    for (int o = 0; o < 4; ++o) EXPECT_NEAR(j[o * 6 + k], (ys[0][o] - ys[1][o]) / 2e-2f, 2e-3) << o << "," << k;
  }
}

TEST(VectorizeModelsTest, BatchJacobianEqualsTheJacobiansOfEachRow) {
  std::mt19937 rng(5);
  auto feeds = MlpFeeds(3, &rng);
  NodeEntry x = Var("x");
  NodeEntry y = TanhMlp(x);
  NodeEntry bj = BatchJacobian(y, x, 4, 2);
  std::vector<NodeEntry> full = Jacobian(y, {x}, 12, "full");
  std::vector<std::string> fallbacks;
  std::vector<NDArray> vec = RunGraph({bj, full[0]}, feeds, true, &fallbacks);
  EXPECT_TRUE(fallbacks.empty()) << Joined(fallbacks);
  ASSERT_EQ(vec[0].shape(), (Shape{3, 4, 6}));
  ExpectClose(RunGraph({bj}, feeds, false), {vec[0]}, 1e-5);
  // full[(r*4+o), r', k] is zero unless r == r'; then it is bj[r, o, k].
  std::vector<float> b = vec[0].ToVector<float>(), f = vec[1].ToVector<float>();
  for (int r = 0; r < 3; ++r) {
    for (int o = 0; o < 4; ++o) {
      for (int k = 0; k < 6; ++k) EXPECT_NEAR(b[(r * 4 + o) * 6 + k], f[((r * 4 + o) * 3 + r) * 6 + k], 1e-6);
    }
  }
}

}  // namespace
}  // namespace ir
