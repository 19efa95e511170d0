/*!
 * \file composed_converters_test.cc
 * \brief Converters that compose our ops (activations, inverse/hyperbolic functions, gradient
 * ops, ClipByValue, L2Loss, LinSpace, BroadcastArgs, RMSProp/Adagrad) against references computed
 * here with <cmath> and finite differences.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "test_util.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;

using Fn = std::function<double(double)>;

const double kScale = 1.0507009873554804934193349852946, kAlpha = 1.6732632423543772848170429916717;

/*! \brief Runs `op` on a float placeholder fed `xs`, unfused or fused into generated kernels. */
NDArray RunUnary(const std::string& op, const std::vector<double>& xs, const std::string& dtype = "DT_FLOAT",
                 bool fusion = false) {
  int64_t n = static_cast<int64_t>(xs.size());
  std::string graph = Placeholder("x", {n}, dtype) + Node("y", op, {"x"}, Type(dtype));
  DType t = dtype == "DT_DOUBLE" ? DType::kFloat64 : DType::kFloat32;
  return test::RunText(graph, {{"x", test::MakeArray(Shape{n}, t, xs)}}, {"y"}, fusion)[0];
}

std::vector<double> Map(const std::vector<double>& xs, const Fn& f) {
  std::vector<double> out;
  for (double x : xs) out.push_back(f(x));
  return out;
}

TEST(TFComposedConvertersTest, UnaryCompositionsMatchCMath) {
  std::vector<double> xs{-2.5, -1.2, -0.3, 0.0, 0.4, 1.5, 2.5, 3.0};
  std::vector<double> unit{-0.9, -0.5, 0.0, 0.3, 0.7, 0.95}, above_one{1.0, 1.2, 2.0, 5.0, 40.0};
  struct Case {
    const char* op;
    const std::vector<double>& in;
    Fn f;
  };
  std::vector<Case> cases{
      {"Selu", xs, [](double x) { return kScale * (x > 0 ? x : kAlpha * (std::exp(x) - 1)); }},
      {"Sinh", xs, [](double x) { return std::sinh(x); }},
      {"Cosh", xs, [](double x) { return std::cosh(x); }},
      {"Tan", xs, [](double x) { return std::tan(x); }},
      {"Asinh", xs, [](double x) { return std::asinh(x); }},
      {"Acosh", above_one, [](double x) { return std::acosh(x); }},
      {"Atanh", unit, [](double x) { return std::atanh(x); }},
      {"Rint", xs, [](double x) { return std::nearbyint(x); }},  // half to even: -2.5 -> -2, 2.5 -> 2
      {"Erf", xs, [](double x) { return std::erf(x); }},
  };
  for (const Case& c : cases) {
    ExpectClose(RunUnary(c.op, c.in), Map(c.in, c.f), c.op, 1e-5, 1e-5);
    ExpectClose(RunUnary(c.op, c.in, "DT_FLOAT", true), Map(c.in, c.f), std::string(c.op) + " fused", 1e-5, 1e-5);
    ExpectClose(RunUnary(c.op, c.in, "DT_DOUBLE"), Map(c.in, c.f), c.op, 1e-12, 1e-12);
  }
  EXPECT_ERROR(test::RunText(Placeholder("i", {2}, "DT_INT32") + Node("y", "Sinh", {"i"}, Type("DT_INT32")),
                             {{"i", test::MakeArray(Shape{2}, DType::kInt32, {1, 2})}}, {"y"}),
               "TensorFlow node 'y' (op Sinh): input 0 has dtype int32, but the op takes float tensors");
}

/*! \brief The central difference of `f` at x. */
double Derivative(const Fn& f, double x) {
  const double h = 1e-6;
  return (f(x + h) - f(x - h)) / (2 * h);
}

/*! \brief Runs the gradient op `op`(a, b) on float64 vectors. */
NDArray RunGrad(const std::string& op, const std::vector<double>& a, const std::vector<double>& b,
                const std::string& attrs = "") {
  int64_t n = static_cast<int64_t>(a.size());
  std::string graph = Placeholder("a", {n}, "DT_DOUBLE") + Placeholder("b", {n}, "DT_DOUBLE") +
                      Node("g", op, {"a", "b"}, Type("DT_DOUBLE") + attrs);
  return test::RunText(
      graph,
      {{"a", test::MakeArray(Shape{n}, DType::kFloat64, a)}, {"b", test::MakeArray(Shape{n}, DType::kFloat64, b)}},
      {"g"})[0];
}

TEST(TFComposedConvertersTest, GradientOpsMatchFiniteDifferencesOfTheirForwardOps) {
  std::vector<double> xs{-2.0, -0.7, 0.3, 1.1, 5.5, 7.0}, dy{0.5, -1.5, 2.0, 1.0, -0.25, 3.0};
  // Ops taking (gradients, features): dy * f'(x).
  Fn relu6 = [](double x) { return std::min(std::max(x, 0.0), 6.0); };
  Fn softplus = [](double x) { return std::log1p(std::exp(x)); };
  Fn softsign = [](double x) { return x / (1 + std::fabs(x)); };
  Fn leaky = [](double x) { return x > 0 ? x : 0.3 * x; };
  for (auto& c : std::vector<std::pair<std::string, Fn>>{
           {"Relu6Grad", relu6}, {"SoftplusGrad", softplus}, {"SoftsignGrad", softsign}}) {
    std::vector<double> want;
    for (size_t i = 0; i < xs.size(); ++i) want.push_back(dy[i] * Derivative(c.second, xs[i]));
    ExpectClose(RunGrad(c.first, dy, xs), want, c.first, 1e-6, 1e-6);
  }
  std::vector<double> leaky_want;
  for (size_t i = 0; i < xs.size(); ++i) leaky_want.push_back(dy[i] * Derivative(leaky, xs[i]));
  ExpectClose(RunGrad("LeakyReluGrad", dy, xs, Attr("alpha", "f: 0.3")), leaky_want, "LeakyReluGrad", 1e-6, 1e-6);
  // Ops taking (gradients, outputs): dy * f'(x) written with y = f(x).
  Fn elu = [](double x) { return x > 0 ? x : std::expm1(x); };
  Fn selu = [](double x) { return kScale * (x > 0 ? x : kAlpha * std::expm1(x)); };
  for (auto& c : std::vector<std::pair<std::string, Fn>>{{"EluGrad", elu}, {"SeluGrad", selu}}) {
    std::vector<double> ys = Map(xs, c.second), want;
    for (size_t i = 0; i < xs.size(); ++i) want.push_back(dy[i] * Derivative(c.second, xs[i]));
    ExpectClose(RunGrad(c.first, dy, ys), want, c.first, 1e-6, 1e-6);
  }
  // Ops taking (y, dy).
  std::vector<double> pos{0.2, 0.7, 1.1, 2.0, 5.5, 7.0};
  for (auto& c : std::vector<std::pair<std::string, Fn>>{{"SqrtGrad", [](double x) { return std::sqrt(x); }},
                                                         {"RsqrtGrad", [](double x) { return 1 / std::sqrt(x); }},
                                                         {"ReciprocalGrad", [](double x) { return 1 / x; }},
                                                         {"InvGrad", [](double x) { return 1 / x; }}}) {
    std::vector<double> ys = Map(pos, c.second), want;
    for (size_t i = 0; i < pos.size(); ++i) want.push_back(dy[i] * Derivative(c.second, pos[i]));
    ExpectClose(RunGrad(c.first, ys, dy), want, c.first, 1e-6, 1e-6);
  }
}

TEST(TFComposedConvertersTest, ClipL2LossEuclideanNormLinSpaceAndBroadcastArgs) {
  std::string m = Const("m", {2, 3}, {-3, 1, 4, -1, 5, -9});
  std::string graph =
      m + Const("lo", {}, {-2}) + Const("hi", {3}, {0, 2, 3}) + Node("clip", "ClipByValue", {"m", "lo", "hi"}, Type()) +
      Node("l2", "L2Loss", {"m"}, Type()) + Ints("ax", {1}) + Node("norm", "EuclideanNorm", {"m", "ax"}, Type()) +
      Const("start", {}, {1}) + Const("stop", {}, {2}) + Ints("num", {5}, true) +
      Node("lin", "LinSpace", {"start", "stop", "num"}, Type() + Type("DT_INT32", "Tidx")) + Ints("s0", {2, 1, 3}) +
      Ints("s1", {4, 1}) + Node("bargs", "BroadcastArgs", {"s0", "s1"}, Type("DT_INT32"));
  std::vector<NDArray> r = test::RunText(graph, {}, {"clip", "l2", "norm", "lin", "bargs"});
  ExpectClose(r[0], {-2, 1, 3, -1, 2, -2}, "ClipByValue", 0, 0);
  EXPECT_EQ(r[1].shape(), Shape::Scalar());
  ExpectClose(r[1], {(9 + 1 + 16 + 1 + 25 + 81) / 2.0}, "L2Loss");
  ExpectClose(r[2], {std::sqrt(26.0), std::sqrt(107.0)}, "EuclideanNorm");
  ExpectClose(r[3], {1, 1.25, 1.5, 1.75, 2}, "LinSpace");
  ExpectClose(r[4], {2, 4, 3}, "BroadcastArgs", 0, 0);
  EXPECT_ERROR(test::RunText(Ints("a", {2, 3}) + Ints("b", {4}) + Node("x", "BroadcastArgs", {"a", "b"}), {}, {"x"}),
               "shapes [2,3] and [4] do not broadcast");
  EXPECT_ERROR(
      test::RunText(Const("a", {}, {0}) + Ints("n", {0}, true) + Node("x", "LinSpace", {"a", "a", "n"}), {}, {"x"}),
      "Requires num > 0");
}

std::string InitializedVariable(const std::string& name, const std::vector<double>& values) {
  int64_t n = static_cast<int64_t>(values.size());
  return Variable(name, {n}) + Const(name + "/value", {n}, values) +
         Node(name + "/init", "Assign", {name, name + "/value"}, Type());
}

TEST(TFComposedConvertersTest, RMSPropAndAdagradUpdatesFollowTheirFormulas) {
  std::string graph = InitializedVariable("w", {1, -2}) + InitializedVariable("ms", {0.5, 1}) +
                      InitializedVariable("mom", {0.1, -0.1}) + InitializedVariable("acc", {0.1, 0.2}) +
                      InitializedVariable("v", {3, 4}) + Const("lr", {}, {0.1}) + Const("rho", {}, {0.9}) +
                      Const("mu", {}, {0.5}) + Const("eps", {}, {0.01}) + Const("g", {2}, {2, -3}) +
                      Node("rms", "ApplyRMSProp", {"w", "ms", "mom", "lr", "rho", "mu", "eps", "g"}, Type()) +
                      Node("ada", "ApplyAdagradV2", {"v", "acc", "lr", "eps", "g"}, Type());
  TFSession s(test::TextModel(graph), SessionOptions());
  s.Run({}, {}, {"w/init", "ms/init", "mom/init", "acc/init", "v/init"});
  s.Run({}, {}, {"rms", "ada"});
  std::vector<NDArray> out = s.Run({}, {"w", "ms", "mom", "v", "acc"});
  std::vector<double> w{1, -2}, ms{0.5, 1}, mom{0.1, -0.1}, v{3, 4}, acc{0.1, 0.2}, g{2, -3};
  for (int i = 0; i < 2; ++i) {
    ms[i] = 0.9 * ms[i] + 0.1 * g[i] * g[i];
    mom[i] = 0.5 * mom[i] + 0.1 * g[i] / std::sqrt(ms[i] + 0.01);
    w[i] -= mom[i];
    acc[i] += g[i] * g[i];
    v[i] -= 0.1 * g[i] / (std::sqrt(acc[i]) + 0.01);
  }
  ExpectClose(out[0], w, "RMSProp var");
  ExpectClose(out[1], ms, "RMSProp ms");
  ExpectClose(out[2], mom, "RMSProp mom");
  ExpectClose(out[3], v, "AdagradV2 var");
  ExpectClose(out[4], acc, "AdagradV2 accum");
}

TEST(TFComposedConvertersTest, KerasMomentumAdadeltaAndAdaMaxFollowTheirFormulas) {
  for (bool nesterov : {false, true}) {
    std::string graph = InitializedVariable("w", {1, -2}) + InitializedVariable("acc", {0.5, 0}) +
                        InitializedVariable("ad", {1, 2}) + InitializedVariable("au", {0.2, 0.1}) +
                        InitializedVariable("ad_w", {3, 4}) + InitializedVariable("m", {0.1, 0.2}) +
                        InitializedVariable("v", {0.5, 0.1}) + InitializedVariable("mx_w", {-1, 1}) +
                        Const("lr", {}, {0.1}) + Const("mu", {}, {0.9}) + Const("rho", {}, {0.95}) +
                        Const("eps", {}, {1e-3}) + Const("b1p", {}, {0.81}) + Const("b1", {}, {0.9}) +
                        Const("b2", {}, {0.999}) + Const("g", {2}, {2, -3}) +
                        Node("sgd", "ResourceApplyKerasMomentum", {"w", "acc", "lr", "g", "mu"},
                             Type() + Attr("use_nesterov", nesterov ? "b: true" : "b: false")) +
                        Node("adadelta", "ApplyAdadelta", {"ad_w", "ad", "au", "lr", "rho", "eps", "g"}, Type()) +
                        Node("adamax", "ApplyAdaMax", {"mx_w", "m", "v", "b1p", "lr", "b1", "b2", "eps", "g"}, Type());
    TFSession s(test::TextModel(graph), SessionOptions());
    s.Run({}, {}, {"w/init", "acc/init", "ad/init", "au/init", "ad_w/init", "m/init", "v/init", "mx_w/init"});
    s.Run({}, {}, {"sgd", "adadelta", "adamax"});
    std::vector<NDArray> out = s.Run({}, {"w", "acc", "ad_w", "ad", "au", "mx_w", "m", "v"});
    std::vector<double> w{1, -2}, acc{0.5, 0}, ad{1, 2}, au{0.2, 0.1}, ad_w{3, 4}, m{0.1, 0.2}, v{0.5, 0.1};
    std::vector<double> mx_w{-1, 1}, g{2, -3};
    for (int i = 0; i < 2; ++i) {
      acc[i] = acc[i] * 0.9 - 0.1 * g[i];
      w[i] += nesterov ? acc[i] * 0.9 - 0.1 * g[i] : acc[i];
      ad[i] = 0.95 * ad[i] + 0.05 * g[i] * g[i];
      double update = std::sqrt(au[i] + 1e-3) / std::sqrt(ad[i] + 1e-3) * g[i];
      au[i] = 0.95 * au[i] + 0.05 * update * update;
      ad_w[i] -= 0.1 * update;
      m[i] = 0.9 * m[i] + 0.1 * g[i];
      v[i] = std::max(0.999 * v[i], std::fabs(g[i]));
      mx_w[i] -= 0.1 / (1 - 0.81) * m[i] / (v[i] + 1e-3);
    }
    ExpectClose(out[0], w, nesterov ? "Keras Nesterov var" : "Keras momentum var");
    ExpectClose(out[1], acc, "Keras momentum accum");
    ExpectClose(out[2], ad_w, "Adadelta var");
    ExpectClose(out[3], ad, "Adadelta accum");
    ExpectClose(out[4], au, "Adadelta accum_update");
    ExpectClose(out[5], mx_w, "AdaMax var");
    ExpectClose(out[6], m, "AdaMax m");
    ExpectClose(out[7], v, "AdaMax v");
  }
}

TEST(TFComposedConvertersTest, ResourceGatherAndResourceAdagradOnAVarHandle) {
  std::string graph = Node("h", "VarHandleOp", {}, Type("DT_FLOAT", "dtype") + Attr("shape", ShapeProto({3, 2}))) +
                      Const("h/value", {3, 2}, {1, 2, 3, 4, 5, 6}) +
                      Node("h/init", "AssignVariableOp", {"h", "h/value"}, Type("DT_FLOAT", "dtype")) +
                      Node("a", "VarHandleOp", {}, Type("DT_FLOAT", "dtype") + Attr("shape", ShapeProto({3, 2}))) +
                      Const("a/value", {3, 2}, {1, 1, 1, 1, 1, 1}) +
                      Node("a/init", "AssignVariableOp", {"a", "a/value"}, Type("DT_FLOAT", "dtype")) +
                      Ints("idx", {2, 0}) + Const("lr", {}, {0.5}) + Const("g", {3, 2}, {1, 1, 2, 2, 3, 3}) +
                      Node("rows", "ResourceGather", {"h", "idx"}, Type("DT_FLOAT", "dtype")) +
                      Node("step", "ResourceApplyAdagrad", {"h", "a", "lr", "g"}, Type()) +
                      Node("read", "ReadVariableOp", {"h"}, Type("DT_FLOAT", "dtype"));
  TFSession s(test::TextModel(graph), SessionOptions());
  s.Run({}, {}, {"h/init", "a/init"});
  ExpectClose(s.Run({}, {"rows"})[0], {5, 6, 1, 2}, "ResourceGather", 0, 0);
  s.Run({}, {}, {"step"});
  std::vector<double> want{1, 2, 3, 4, 5, 6}, grad{1, 1, 2, 2, 3, 3};
  for (size_t i = 0; i < 6; ++i) want[i] -= 0.5 * grad[i] / std::sqrt(1 + grad[i] * grad[i]);
  ExpectClose(s.Run({}, {"read"})[0], want, "ResourceApplyAdagrad");
}

/*! \brief Deterministic test values of `n` elements (exact in float32). */
std::vector<double> Values(int64_t n, double scale = 0.37) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(std::sin(static_cast<double>(i) * scale + 0.2) * 2));
  return v;
}

/*!
 * \brief A direct einsum: every assignment of the operands' labels, summing products into the
 * output (terms without ellipses).
 */
std::vector<double> EinsumReference(const std::vector<std::string>& terms, const std::string& out,
                                    const std::map<char, int64_t>& dims, const std::vector<std::vector<double>>& xs) {
  std::vector<char> labels;
  for (const std::string& term : terms) {
    for (char c : term) {
      if (std::find(labels.begin(), labels.end(), c) == labels.end()) labels.push_back(c);
    }
  }
  auto offset = [&](const std::string& term, const std::map<char, int64_t>& at) {
    int64_t o = 0;
    for (char c : term) o = o * dims.at(c) + at.at(c);
    return o;
  };
  int64_t out_size = 1, total = 1;
  for (char c : out) out_size *= dims.at(c);
  for (char c : labels) total *= dims.at(c);
  std::vector<double> result(static_cast<size_t>(out_size), 0.0);
  for (int64_t flat = 0; flat < total; ++flat) {
    std::map<char, int64_t> at;
    int64_t rest = flat;
    for (auto it = labels.rbegin(); it != labels.rend(); ++it) {
      at[*it] = rest % dims.at(*it);
      rest /= dims.at(*it);
    }
    double p = 1;
    for (size_t i = 0; i < terms.size(); ++i) p *= xs[i][static_cast<size_t>(offset(terms[i], at))];
    result[static_cast<size_t>(offset(out, at))] += p;
  }
  return result;
}

TEST(TFComposedConvertersTest, EinsumMatchesADirectSum) {
  struct Case {
    std::vector<std::string> terms;
    std::string out;
  };
  std::map<char, int64_t> dims{{'a', 2}, {'b', 3}, {'c', 4}, {'d', 2}, {'h', 2},
                               {'i', 3}, {'j', 4}, {'k', 2}, {'q', 3}};
  std::vector<Case> cases{{{"ij", "jk"}, "ik"}, {{"abc", "cd"}, "abd"}, {{"bqhd", "bkhd"}, "bhqk"},
                          {{"ij"}, "ji"},       {{"ij"}, "i"},          {{"i", "j"}, "ij"},
                          {{"ij", "ij"}, "i"},  {{"abc", "ca"}, "b"},   {{"bij", "bjk"}, "bik"}};
  for (const Case& c : cases) {
    std::string graph, equation;
    std::map<std::string, NDArray> feeds;
    std::vector<std::vector<double>> xs;
    std::vector<std::string> inputs;
    for (size_t i = 0; i < c.terms.size(); ++i) {
      std::vector<int64_t> shape;
      int64_t n = 1;
      for (char l : c.terms[i]) shape.push_back(dims[l]), n *= dims[l];
      std::string name = "x" + std::to_string(i);
      graph += Placeholder(name, shape);
      xs.push_back(Values(n, 0.3 + 0.1 * static_cast<double>(i)));
      feeds[name] = test::MakeArray(Shape(shape), DType::kFloat32, xs.back());
      inputs.push_back(name);
      equation += (i ? "," : "") + c.terms[i];
    }
    equation += "->" + c.out;
    graph += Node("e", "Einsum", inputs, Type() + Attr("equation", "s: '" + equation + "'") + Attr("N", "i: 1"));
    ExpectClose(test::RunText(graph, feeds, {"e"})[0], EinsumReference(c.terms, c.out, dims, xs), equation, 1e-5, 1e-5);
  }
  // An ellipsis, and a batch dimension unknown until the feed (EinsumDense).
  std::string graph = Placeholder("x", {-1, 3, 4}) + Placeholder("w", {4, 2}) +
                      Node("e", "Einsum", {"x", "w"}, Type() + Attr("equation", "s: '...c,cd->...d'"));
  std::vector<double> x = Values(24), w = Values(8, 0.5);
  NDArray y = test::RunText(graph,
                            {{"x", test::MakeArray(Shape{2, 3, 4}, DType::kFloat32, x)},
                             {"w", test::MakeArray(Shape{4, 2}, DType::kFloat32, w)}},
                            {"e"})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3, 2}));
  ExpectClose(y, EinsumReference({"abc", "cd"}, "abd", dims, {x, w}), "...c,cd->...d");
  EXPECT_ERROR(
      test::RunText(Placeholder("m", {3, 3}) + Node("e", "Einsum", {"m"}, Type() + Attr("equation", "s: 'ii->i'")),
                    {{"m", test::MakeArray(Shape{3, 3}, DType::kFloat32, Values(9))}}, {"e"}),
      "repeated within operand 0 (a diagonal) is not supported");
}

TEST(TFComposedConvertersTest, DepthToSpaceSpaceToDepthAndMatrixBandPart) {
  const int64_t b = 2, h = 2, w = 3, c = 8;  // DepthToSpace: [1, 2, 3, 8] -> [1, 4, 6, 2]
  std::vector<double> x = Values(h * w * c);
  std::string graph = Placeholder("x", {-1, h, w, c}) +
                      Node("d2s", "DepthToSpace", {"x"}, Type() + Attr("block_size", "i: 2")) +
                      Node("s2d", "SpaceToDepth", {"d2s"}, Type() + Attr("block_size", "i: 2"));
  std::vector<NDArray> r =
      test::RunText(graph, {{"x", test::MakeArray(Shape{1, h, w, c}, DType::kFloat32, x)}}, {"d2s", "s2d"});
  const int64_t oc = c / (b * b);
  std::vector<double> want(x.size());
  for (int64_t i = 0; i < h; ++i)
    for (int64_t j = 0; j < w; ++j)
      for (int64_t dh = 0; dh < b; ++dh)
        for (int64_t dw = 0; dw < b; ++dw)
          for (int64_t k = 0; k < oc; ++k)
            want[static_cast<size_t>(((i * b + dh) * w * b + j * b + dw) * oc + k)] =
                x[static_cast<size_t>((i * w + j) * c + (dh * b + dw) * oc + k)];
  EXPECT_EQ(r[0].shape(), (Shape{1, 4, 6, 2}));
  ExpectClose(r[0], want, "DepthToSpace", 0, 0);
  ExpectClose(r[1], x, "SpaceToDepth undoes DepthToSpace", 0, 0);

  std::vector<double> m = Values(24);
  for (auto band : std::vector<std::pair<int64_t, int64_t>>{{1, 0}, {-1, 1}, {0, -1}}) {
    std::string g = Placeholder("m", {2, 3, 4}) + Ints("lo", {band.first}, true) + Ints("up", {band.second}, true) +
                    Node("band", "MatrixBandPart", {"m", "lo", "up"}, Type());
    std::vector<double> expect;
    for (int64_t k = 0; k < 24; ++k) {
      int64_t i = (k / 4) % 3, j = k % 4;
      bool in = (band.first < 0 || i - j <= band.first) && (band.second < 0 || j - i <= band.second);
      expect.push_back(in ? m[static_cast<size_t>(k)] : 0);
    }
    ExpectClose(test::RunText(g, {{"m", test::MakeArray(Shape{2, 3, 4}, DType::kFloat32, m)}}, {"band"})[0], expect,
                "MatrixBandPart", 0, 0);
  }
}

/*! \brief y = gamma * (x - mean) / sqrt(var + eps) per channel of a [n, c] batch (training: batch statistics). */
std::vector<double> BatchNorm(const std::vector<double>& x, const std::vector<double>& gamma, int64_t c, double eps) {
  int64_t n = static_cast<int64_t>(x.size()) / c;
  std::vector<double> y(x.size());
  for (int64_t k = 0; k < c; ++k) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i) mean += x[static_cast<size_t>(i * c + k)] / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      var += std::pow(x[static_cast<size_t>(i * c + k)] - mean, 2) / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      y[static_cast<size_t>(i * c + k)] =
          gamma[static_cast<size_t>(k)] * (x[static_cast<size_t>(i * c + k)] - mean) / std::sqrt(var + eps);
  }
  return y;
}

TEST(TFComposedConvertersTest, FusedBatchNormGradMatchesFiniteDifferences) {
  const int64_t n = 4, c = 2;
  const double eps = 0.001;
  std::vector<double> x = Values(n * c), dy = Values(n * c, 0.9), gamma{1.5, -0.5};
  std::string graph =
      Placeholder("x", {1, 2, 2, c}, "DT_DOUBLE") + Placeholder("dy", {1, 2, 2, c}, "DT_DOUBLE") +
      Const("gamma", {c}, gamma, "DT_DOUBLE", "double_val") + Const("beta", {c}, {0, 0}, "DT_DOUBLE", "double_val") +
      Const("mean", {c}, {0.1, -0.2}, "DT_DOUBLE", "double_val") +
      Const("var", {c}, {0.5, 2.0}, "DT_DOUBLE", "double_val") +
      Node("bn", "FusedBatchNormV3", {"x", "gamma", "beta", "mean", "var"},
           Type("DT_DOUBLE") + Type("DT_DOUBLE", "U") + Attr("epsilon", "f: 0.001")) +
      Node("grad", "FusedBatchNormGradV3", {"dy", "x", "gamma", "bn:3", "bn:4", "bn:5"},
           Type("DT_DOUBLE") + Type("DT_DOUBLE", "U") + Attr("epsilon", "f: 0.001")) +
      Node("infer", "FusedBatchNormGradV3", {"dy", "x", "gamma", "mean", "var", "mean"},
           Type("DT_DOUBLE") + Type("DT_DOUBLE", "U") + Attr("epsilon", "f: 0.001") + Attr("is_training", "b: false"));
  std::vector<NDArray> r = test::RunText(graph,
                                         {{"x", test::MakeArray(Shape{1, 2, 2, c}, DType::kFloat64, x)},
                                          {"dy", test::MakeArray(Shape{1, 2, 2, c}, DType::kFloat64, dy)}},
                                         {"grad:0", "grad:1", "grad:2", "grad:3", "infer:0", "infer:1"});
  // Training: d/dx and d/dgamma of sum(dy * bn(x)) by central differences.
  auto loss = [&](const std::vector<double>& xv, const std::vector<double>& g) {
    std::vector<double> y = BatchNorm(xv, g, c, eps);
    double s = 0;
    for (size_t i = 0; i < y.size(); ++i) s += y[i] * dy[i];
    return s;
  };
  std::vector<double> dx, dgamma, dbeta{0, 0};
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<double> up = x, down = x;
    up[i] += 1e-6, down[i] -= 1e-6;
    dx.push_back((loss(up, gamma) - loss(down, gamma)) / 2e-6);
    dbeta[i % c] += dy[i];
  }
  for (size_t k = 0; k < gamma.size(); ++k) {
    std::vector<double> up = gamma, down = gamma;
    up[k] += 1e-6, down[k] -= 1e-6;
    dgamma.push_back((loss(x, up) - loss(x, down)) / 2e-6);
  }
  ExpectClose(r[0], dx, "dx (training)", 1e-6, 1e-6);
  ExpectClose(r[1], dgamma, "dscale (training)", 1e-6, 1e-6);
  ExpectClose(r[2], dbeta, "doffset (training)", 1e-9, 1e-9);
  EXPECT_EQ(r[3].shape(), (Shape{0}));
  // Inference: the statistics are constants, so dx = dy * gamma / sqrt(var + eps).
  std::vector<double> mean{0.1, -0.2}, var{0.5, 2.0}, infer_dx, infer_dgamma{0, 0};
  for (size_t i = 0; i < x.size(); ++i) {
    size_t k = i % c;
    infer_dx.push_back(dy[i] * gamma[k] / std::sqrt(var[k] + eps));
    infer_dgamma[k] += dy[i] * (x[i] - mean[k]) / std::sqrt(var[k] + eps);
  }
  ExpectClose(r[4], infer_dx, "dx (inference)", 1e-9, 1e-9);
  ExpectClose(r[5], infer_dgamma, "dscale (inference)", 1e-9, 1e-9);
  ExpectClose(test::RunText(Placeholder("p", {2}) + Node("pr", "Print", {"p", "p"}, Type()),
                            {{"p", test::MakeArray(Shape{2}, DType::kFloat32, {3, 4})}}, {"pr"})[0],
              {3, 4}, "Print passes its input through", 0, 0);
}

}  // namespace
}  // namespace tf
}  // namespace ir
