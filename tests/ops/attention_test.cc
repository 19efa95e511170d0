/*!
 * \file attention_test.cc
 * \brief fused_attention, fused_attention_grad and _fused_attention_dv (src/ops/attention/):
 * shape and type inference, the forward pass against softmax(q k^T * scale + mask) v computed
 * here in double by the unfused graph's formulas (tiled and dense paths, tile edges, every mask
 * form), gradients against central finite differences, special values and empty tensors.
 */
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ops/nn_test_util.h"
#include "ops/op_harness.h"
#include "test_util.h"

namespace ir {
namespace test {
namespace {

/*! \brief The attributes of one case; mask_form as the op spells it. */
struct Case {
  double scale = 0.5;
  bool causal = false;
  double mask_value = -1e9;
  std::string mask_form = "select";

  Attrs ToAttrs() const {
    return {{"scale", Exact(scale)},
            {"causal", causal ? "true" : "false"},
            {"mask_value", Exact(mask_value)},
            {"mask_form", mask_form}};
  }
  /*! \brief x with every digit (StrCat keeps 6). */
  static std::string Exact(double x) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.17g", x);
    return buf;
  }
};

/*!
 * \brief The unfused graph in double: for each slice of q [..., T, D], k [..., S, D],
 * v [..., S, E], scores s = (q k^T) * scale, masked keys (j > i + S - T when causal) scored by
 * mask_form, softmax over all S keys (max subtracted), o = p v over all keys; lse per row.
 */
void Reference(const Case& c, const NDArray& qa, const NDArray& ka, const NDArray& va, std::vector<double>* o,
               std::vector<double>* lse) {
  const Shape& qs = qa.shape();
  const int nd = qs.ndim();
  const int64_t batch = qs.ProdDims(0, nd - 2), t = qs[nd - 2], d = qs[nd - 1];
  const int64_t s = va.shape()[nd - 2], e = va.shape()[nd - 1];
  const std::vector<double> q = Values(qa), k = Values(ka), v = Values(va);
  o->assign(batch * t * e, 0.0);
  lse->assign(batch * t, 0.0);
  std::vector<double> sc(s);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t i = 0; i < t; ++i) {
      const int64_t row = b * t + i;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < s; ++j) {
        double raw = 0;
        for (int64_t x = 0; x < d; ++x) raw += q[row * d + x] * k[(b * s + j) * d + x];
        raw *= c.scale;
        if (c.causal && j > i + s - t) {
          raw = c.mask_form == "add"        ? raw + c.mask_value
                : c.mask_form == "multiply" ? raw * 0 + c.mask_value
                                            : c.mask_value;
        }
        sc[j] = raw;
        if (std::isnan(raw) || raw > m) m = std::isnan(m) ? m : raw;
      }
      double sum = 0;
      for (int64_t j = 0; j < s; ++j) sum += std::exp(sc[j] - m);
      for (int64_t j = 0; j < s; ++j) {
        const double p = std::exp(sc[j] - m) / sum;
        for (int64_t x = 0; x < e; ++x) (*o)[row * e + x] += p * v[(b * s + j) * e + x];
      }
      (*lse)[row] = m + std::log(sum);
    }
  }
}

/*! \brief Runs fused_attention and expects o and lse equal to Reference within tol. */
void ExpectForward(const Case& c, const NDArray& q, const NDArray& k, const NDArray& v, double tol) {
  std::vector<double> o, lse;
  Reference(c, q, k, v, &o, &lse);
  std::vector<NDArray> out = RunOp("fused_attention", c.ToAttrs(), {q, k, v});
  ASSERT_EQ(out.size(), 2u);
  ExpectNear(out[0], o, tol, tol);
  ExpectNear(out[1], lse, tol, tol);
}

Shape WithRows(const Shape& batch, int64_t rows, int64_t cols) {
  std::vector<int64_t> dims(batch.dims().begin(), batch.dims().end());
  dims.push_back(rows);
  dims.push_back(cols);
  return Shape(dims);
}

TEST(FusedAttentionTest, InfersShapes) {
  std::vector<Shape> in{Shape{2, 3, 5, 8}, Shape{2, 3, 7, 8}, Shape{2, 3, 7, 4}}, out;
  EXPECT_TRUE(InferShapes("fused_attention", {}, &in, &out));
  EXPECT_EQ(out[0], (Shape{2, 3, 5, 4}));
  EXPECT_EQ(out[1], (Shape{2, 3, 5}));
  // Unknown dims are filled from the other operands.
  in = {Shape{-1, 5, 8}, Shape{2, -1, -1}, Shape{-1, 7, 4}};
  EXPECT_TRUE(InferShapes("fused_attention", {}, &in, &out));
  EXPECT_EQ(in[1], (Shape{2, 7, 8}));
  EXPECT_EQ(out[0], (Shape{2, 5, 4}));
  std::vector<Shape> grad_in{Shape(), Shape{2, 5, 8}, Shape{2, 7, 8}, Shape{2, 7, 4}, Shape(), Shape()}, grad_out;
  EXPECT_TRUE(InferShapes("fused_attention_grad", {}, &grad_in, &grad_out));
  EXPECT_EQ(grad_in[0], (Shape{2, 5, 4}));
  EXPECT_EQ(grad_in[5], (Shape{2, 5}));
  EXPECT_EQ(grad_out[0], (Shape{2, 5, 8}));
  EXPECT_EQ(grad_out[1], (Shape{2, 7, 8}));
  EXPECT_EQ(grad_out[2], (Shape{2, 7, 4}));
  std::vector<Shape> dv_in{Shape{2, 5, 4}, Shape{2, 5, 8}, Shape{2, 7, 8}}, dv_out;
  EXPECT_TRUE(InferShapes("_fused_attention_dv", {}, &dv_in, &dv_out));
  EXPECT_EQ(dv_out[0], (Shape{2, 7, 4}));
}

TEST(FusedAttentionTest, ShapeErrorsNameNodeAndShapes) {
  std::vector<Shape> in, out;
  in = {Shape{8}, Shape{7, 8}, Shape{7, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out),
               "node 'fused_attention' (op fused_attention): q, k and v must have rank >= 2");
  in = {Shape{8}, Shape{7, 8}, Shape{7, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out), "got q [8], k [7,8], v [7,4]");
  in = {Shape{1, 5, 8}, Shape{7, 8}, Shape{7, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out), "must have the same rank; got q [1,5,8]");
  in = {Shape{2, 5, 8}, Shape{3, 7, 8}, Shape{2, 7, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out), "batch dims differ (2 vs 3); got q [2,5,8], k [3,7,8]");
  in = {Shape{2, 3, 5, 8}, Shape{2, 3, 7, 8}, Shape{2, 4, 7, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out), "batch dims differ (3 vs 4)");
  in = {Shape{2, 5, 8}, Shape{2, 7, 6}, Shape{2, 7, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out), "the depths of q and k (last dims) differ (8 vs 6)");
  in = {Shape{2, 5, 8}, Shape{2, 7, 8}, Shape{2, 6, 4}};
  EXPECT_ERROR(InferShapes("fused_attention", {}, &in, &out), "the key counts of k and v (dims -2) differ (7 vs 6)");
  std::vector<Shape> grad_in{Shape{2, 5, 3}, Shape{2, 5, 8}, Shape{2, 7, 8}, Shape{2, 7, 4}, Shape(), Shape()};
  EXPECT_ERROR(InferShapes("fused_attention_grad", {}, &grad_in, &out),
               "node 'fused_attention_grad' (op fused_attention_grad)");
  std::vector<Shape> dv_in{Shape{2, 5, 4}, Shape{5, 8}, Shape{2, 7, 8}};
  EXPECT_ERROR(InferShapes("_fused_attention_dv", {}, &dv_in, &out), "do, q and k must have one rank >= 2; got do");
  NDArray q = RandomArray(Shape{2, 5, 8}, DType::kFloat32, 1);
  EXPECT_ERROR(RunOp("fused_attention", {{"scale", "inf"}}, {q, q, q}), "scale inf must be finite");
  EXPECT_ERROR(RunOp("fused_attention", {{"mask_form", "gather"}}, {q, q, q}), "mask_form");
}

TEST(FusedAttentionTest, TypeErrorsNameNodeAndTypes) {
  NDArray f32 = RandomArray(Shape{2, 5, 8}, DType::kFloat32, 1);
  NDArray f64 = RandomArray(Shape{2, 5, 8}, DType::kFloat64, 1);
  NDArray i32 = RandomArray(Shape{2, 5, 8}, DType::kInt32, 1, -3, 3);
  EXPECT_ERROR(RunOp("fused_attention", {}, {f32, f64, f32}), "node 'fused_attention' (op fused_attention)");
  EXPECT_ERROR(RunOp("fused_attention", {}, {f32, f64, f32}),
               "every input must have one dtype; got input 0 float32, input 1 float64, input 2 float32");
  EXPECT_ERROR(RunOp("fused_attention", {}, {i32, i32, i32}), "int32");
  std::vector<NDArray> out = RunOp("fused_attention", {}, {f64, f64, f64});
  EXPECT_EQ(out[0].dtype(), DType::kFloat64);
  EXPECT_EQ(out[1].dtype(), DType::kFloat64);
}

// Sizes around the tiles (32 queries x 64 keys), depths 1 to 80, causal and not, against the
// double reference: float32 within 1e-5, float64 within 1e-12.
TEST(FusedAttentionTest, ForwardMatchesDenseReference) {
  for (int64_t t : {1, 31, 33, 65, 130}) {
    for (int64_t d : {1, 8, 64, 80}) {
      for (bool causal : {false, true}) {
        Case c;
        c.causal = causal;
        c.scale = 1 / std::sqrt(static_cast<double>(d));
        const Shape batch = t > 64 ? Shape{1} : Shape{2, 2};
        const int64_t e = d == 80 ? 24 : d;
        for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
          SCOPED_TRACE(StrCat("T ", t, " D ", d, " causal ", causal, " ", DTypeName(dtype)));
          NDArray q = RandomArray(WithRows(batch, t, d), dtype, 1, -2, 2);
          NDArray k = RandomArray(WithRows(batch, t, d), dtype, 2, -2, 2);
          NDArray v = RandomArray(WithRows(batch, t, e), dtype, 3);
          ExpectForward(c, q, k, v, dtype == DType::kFloat32 ? 1e-5 : 1e-12);
        }
      }
    }
  }
}

// T != S: causal rows attend keys j <= i + S - T; with T > S the first rows attend no key and
// the unfused graph spreads them evenly over the masked ones (a fully masked row).
TEST(FusedAttentionTest, ForwardWithFewerOrMoreQueriesThanKeys) {
  for (auto ts : std::vector<std::pair<int64_t, int64_t>>{{33, 100}, {1, 70}, {70, 1}, {5, 3}, {40, 20}}) {
    for (bool causal : {false, true}) {
      SCOPED_TRACE(StrCat("T ", ts.first, " S ", ts.second, " causal ", causal));
      Case c;
      c.causal = causal;
      NDArray q = RandomArray(Shape{2, ts.first, 16}, DType::kFloat32, 4, -2, 2);
      NDArray k = RandomArray(Shape{2, ts.second, 16}, DType::kFloat32, 5, -2, 2);
      NDArray v = RandomArray(Shape{2, ts.second, 8}, DType::kFloat32, 6);
      ExpectForward(c, q, k, v, 1e-5);
    }
  }
  // Rows 0 and 1 of T = 5, S = 3 see no key: o is the mean of v's rows.
  Case c;
  c.causal = true;
  NDArray q = RandomArray(Shape{1, 5, 4}, DType::kFloat64, 7);
  NDArray k = RandomArray(Shape{1, 3, 4}, DType::kFloat64, 8);
  NDArray v = RandomArray(Shape{1, 3, 2}, DType::kFloat64, 9);
  std::vector<double> o = Values(RunOp("fused_attention", c.ToAttrs(), {q, k, v})[0]), vv = Values(v);
  for (int64_t x = 0; x < 2; ++x) {
    const double mean = (vv[x] + vv[2 + x] + vv[4 + x]) / 3;
    EXPECT_NEAR(o[x], mean, 1e-12);
    EXPECT_NEAR(o[2 + x], mean, 1e-12);
  }
}

// A small mask_value gives masked keys a weight: the kernel must take the dense path and form
// each masked score by mask_form as the unfused graph does (add: s + value; multiply and
// select: the value).
TEST(FusedAttentionTest, EveryMaskFormWithAWeightedMask) {
  for (const char* form : {"select", "add", "multiply"}) {
    for (DType dtype : {DType::kFloat32, DType::kFloat64}) {
      SCOPED_TRACE(StrCat(form, " ", DTypeName(dtype)));
      Case c;
      c.causal = true;
      c.mask_value = -2;
      c.mask_form = form;
      NDArray q = RandomArray(Shape{2, 33, 8}, dtype, 10, -2, 2);
      NDArray k = RandomArray(Shape{2, 70, 8}, dtype, 11, -2, 2);
      NDArray v = RandomArray(Shape{2, 70, 5}, dtype, 12);
      ExpectForward(c, q, k, v, dtype == DType::kFloat32 ? 1e-5 : 1e-12);
    }
  }
}

/*! \brief sum(w * o) of fused_attention(q, k, v) in double. */
double Loss(const Attrs& attrs, const NDArray& q, const NDArray& k, const NDArray& v, const std::vector<double>& w) {
  const std::vector<double> o = Values(RunOp("fused_attention", attrs, {q, k, v})[0]);
  double total = 0;
  for (size_t i = 0; i < o.size(); ++i) total += o[i] * w[i];
  return total;
}

/*!
 * \brief fused_attention_grad's dq, dk, dv (and _fused_attention_dv's dv) of L = sum(w * o)
 * against central differences of L, float64, on `samples` elements of each input.
 */
void ExpectGradients(const Case& c, const Shape& qs, const Shape& ks, const Shape& vs, int samples) {
  const Attrs attrs = c.ToAttrs();
  NDArray q = RandomArray(qs, DType::kFloat64, 20, -1.5, 1.5);
  NDArray k = RandomArray(ks, DType::kFloat64, 21, -1.5, 1.5);
  NDArray v = RandomArray(vs, DType::kFloat64, 22);
  std::vector<NDArray> fwd = RunOp("fused_attention", attrs, {q, k, v});
  NDArray w = RandomArray(fwd[0].shape(), DType::kFloat64, 23);
  const std::vector<double> wv = Values(w);
  std::vector<NDArray> grads = RunOp("fused_attention_grad", attrs, {w, q, k, v, fwd[0], fwd[1]});
  ASSERT_EQ(grads.size(), 3u);
  ExpectNear(RunOp("_fused_attention_dv", attrs, {w, q, k})[0], grads[2], 1e-12, 1e-12);
  NDArray* inputs[] = {&q, &k, &v};
  const double eps = 1e-5;
  for (int i = 0; i < 3; ++i) {
    NDArray& x = *inputs[i];
    double* data = x.data<double>();
    const std::vector<double> analytic = Values(grads[i]);
    const int64_t n = x.Size();
    const int64_t step = std::max<int64_t>(1, n / samples);
    for (int64_t j = (i * 7) % step; j < n; j += step) {
      const double saved = data[j];
      data[j] = saved + eps;
      const double up = Loss(attrs, q, k, v, wv);
      data[j] = saved - eps;
      const double down = Loss(attrs, q, k, v, wv);
      data[j] = saved;
      const double numeric = (up - down) / (2 * eps);
      EXPECT_NEAR(analytic[j], numeric, 1e-7 + 1e-5 * std::fabs(numeric)) << "d/d(input " << i << ")[" << j << "]";
    }
  }
}

TEST(FusedAttentionTest, GradientsMatchFiniteDifferences) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(StrCat("causal ", causal));
    Case c;
    c.causal = causal;
    c.scale = 0.4;
    // Two query tiles and two key tiles (32 x 64), the last ones partial.
    ExpectGradients(c, Shape{2, 70, 8}, Shape{2, 70, 8}, Shape{2, 70, 5}, 40);
    ExpectGradients(c, Shape{1, 33, 3}, Shape{1, 65, 3}, Shape{1, 65, 2}, 30);
    // The backward kernel takes one pass per slice when there are as many slices as threads
    // (here on up to 16 threads), else a pass over key tiles and one over query tiles (the
    // batch of 1 above, on more than one thread).
    ExpectGradients(c, Shape{4, 4, 40, 4}, Shape{4, 4, 70, 4}, Shape{4, 4, 70, 3}, 12);
  }
}

// The dense path: a weighted mask (mask_value -2), and rows without keys (T > S).
TEST(FusedAttentionTest, GradientsOfTheDensePathMatchFiniteDifferences) {
  for (const char* form : {"select", "add", "multiply"}) {
    SCOPED_TRACE(form);
    Case c;
    c.causal = true;
    c.mask_value = -2;
    c.mask_form = form;
    ExpectGradients(c, Shape{2, 9, 4}, Shape{2, 12, 4}, Shape{2, 12, 3}, 30);
    // Rows 0 to 2 attend no key. -1e4: the add form's raw + mask_value in double keeps the
    // differences' digits (with -1e9 its ulp, 1.2e-7, would swamp a step of 1e-5).
    c.mask_value = -1e4;
    ExpectGradients(c, Shape{1, 6, 4}, Shape{1, 3, 4}, Shape{1, 3, 3}, 20);
  }
}

// float32 gradients (the tiled kernel) against float64 ones of the same inputs.
TEST(FusedAttentionTest, Float32GradientsMatchFloat64) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(StrCat("causal ", causal));
    Case c;
    c.causal = causal;
    c.scale = 0.125;
    const Attrs attrs = c.ToAttrs();
    std::vector<NDArray> in64, in32;
    const Shape shapes[] = {Shape{2, 2, 97, 64}, Shape{2, 2, 97, 64}, Shape{2, 2, 97, 64}, Shape{2, 2, 97, 64}};
    for (int i = 0; i < 4; ++i) {
      in32.push_back(RandomArray(shapes[i], DType::kFloat32, 30 + i, -2, 2));
      std::vector<double> x = Values(in32.back());
      in64.push_back(NDArray::FromVector<double>(shapes[i], x));
    }
    std::vector<NDArray> f64 = RunOp("fused_attention", attrs, {in64[0], in64[1], in64[2]});
    std::vector<NDArray> f32 = RunOp("fused_attention", attrs, {in32[0], in32[1], in32[2]});
    std::vector<NDArray> g64 =
        RunOp("fused_attention_grad", attrs, {in64[3], in64[0], in64[1], in64[2], f64[0], f64[1]});
    std::vector<NDArray> g32 =
        RunOp("fused_attention_grad", attrs, {in32[3], in32[0], in32[1], in32[2], f32[0], f32[1]});
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(StrCat("gradient ", i));
      ExpectNear(g32[i], g64[i], 1e-4, 1e-4);
    }
    ExpectNear(RunOp("_fused_attention_dv", attrs, {in32[3], in32[0], in32[1]})[0], g64[2], 1e-4, 1e-4);
  }
}

// with_dv=false (the rules' replacement, whose dv _fused_attention_dv gives): the same dq and dk, dv 0,
// on the tiled path (slice 0) and the dense one (slice 1 holds a NaN).
TEST(FusedAttentionTest, GradWithoutDvGivesTheSameDqAndDk) {
  for (bool causal : {false, true}) {
    SCOPED_TRACE(StrCat("causal ", causal));
    Case c;
    c.causal = causal;
    std::vector<NDArray> in{RandomArray(Shape{2, 70, 8}, DType::kFloat32, 50, -2, 2),
                            RandomArray(Shape{2, 70, 8}, DType::kFloat32, 51, -2, 2),
                            RandomArray(Shape{2, 70, 4}, DType::kFloat32, 52)};
    in[0].data<float>()[70 * 8 + 9] = std::numeric_limits<float>::quiet_NaN();
    std::vector<NDArray> fwd = RunOp("fused_attention", c.ToAttrs(), in);
    NDArray w = RandomArray(fwd[0].shape(), DType::kFloat32, 53);
    Attrs without = c.ToAttrs();
    without["with_dv"] = "false";
    std::vector<NDArray> all = RunOp("fused_attention_grad", c.ToAttrs(), {w, in[0], in[1], in[2], fwd[0], fwd[1]});
    std::vector<NDArray> some = RunOp("fused_attention_grad", without, {w, in[0], in[1], in[2], fwd[0], fwd[1]});
    ExpectNear(some[0], all[0], 0, 0);
    ExpectNear(some[1], all[1], 0, 0);
    for (double x : Values(some[2])) ASSERT_EQ(x, 0.0);
  }
}

// FGradient builds fused_attention_grad over o's gradient; lse's must be zero.
TEST(FusedAttentionTest, FGradientBuildsTheGradOp) {
  NodeEntry q = Var("q"), k = Var("k"), v = Var("v"), w = Var("w");
  NodePtr node = Node::Create(Op::Get("fused_attention"), "att", {{"causal", "true"}}, {q, k, v});
  NodeEntry zero = Apply("zeros_like", "zero", {NodeEntry{node, 1}});
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[node->op()](node, {w, zero});
  ASSERT_EQ(grads.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(grads[i].node->op()->name, "fused_attention_grad");
    EXPECT_EQ(grads[i].index, static_cast<uint32_t>(i));
  }
  EXPECT_EQ(grads[0].node->attrs.dict.at("causal"), "true");
  EXPECT_ERROR(Op::GetAttr<FGradient>("FGradient")[node->op()](node, {w, w}), "gradient through output 1 (lse)");
}

/*! \brief The nodes of `g` whose op is `op`. */
std::vector<const Node*> NodesOf(const Graph& g, const std::string& op) {
  std::vector<const Node*> found;
  const IndexedGraph& idx = g.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    if (!idx[nid].source->is_variable() && idx[nid].source->op()->name == op) found.push_back(idx[nid].source);
  }
  return found;
}

// Simplify's FSubsumedBy step: _fused_attention_dv(do, q, k) beside the rules' fused_attention_grad
// (with_dv=false) over the same do, q, k and attributes becomes its dv (with_dv=true), values unchanged;
// other attributes, other inputs, or a grad that depends on the dv node stay apart.
TEST(FusedAttentionTest, SimplifyMergesDvIntoTheGrad) {
  Case c;
  c.causal = true;
  std::map<std::string, NDArray> feeds{{"q", RandomArray(Shape{2, 40, 8}, DType::kFloat32, 60, -2, 2)},
                                       {"k", RandomArray(Shape{2, 40, 8}, DType::kFloat32, 61, -2, 2)},
                                       {"v", RandomArray(Shape{2, 40, 4}, DType::kFloat32, 62)},
                                       {"g", RandomArray(Shape{2, 40, 4}, DType::kFloat32, 63)}};
  NodeEntry q = Var("q"), k = Var("k"), v = Var("v"), g = Var("g");
  Attrs without = c.ToAttrs();
  without["with_dv"] = "false";
  auto build = [&](const Attrs& dv_attrs, NodeEntry dv_q, bool grad_reads_dv) {
    NodeEntry o = Apply("fused_attention", "att", {q, k, v}, c.ToAttrs());
    NodeEntry lse{o.node, 1};
    NodeEntry dv = Apply("_fused_attention_dv", "dv", {g, dv_q, k}, dv_attrs);
    // A grad that reads dv (through v) must not take dv's place: that would be a cycle.
    NodeEntry v_in = grad_reads_dv ? Apply("add", "v_plus_dv", {v, dv}) : v;
    NodePtr grad = Node::Create(Op::Get("fused_attention_grad"), "grad", without, {g, q, k, v_in, o, lse});
    return std::vector<NodeEntry>{NodeEntry{grad, 0}, NodeEntry{grad, 1}, dv};
  };
  // Merged: two attention kernels (forward, backward with dv), the same values as unmerged.
  std::vector<NodeEntry> outs = build(c.ToAttrs(), q, false);
  Graph plain = InferFromFeeds(outs, feeds);
  Graph merged = ApplyPass(plain, "Simplify");
  EXPECT_TRUE(NodesOf(merged, "_fused_attention_dv").empty());
  std::vector<const Node*> grads = NodesOf(merged, "fused_attention_grad");
  ASSERT_EQ(grads.size(), 1u);
  EXPECT_EQ(grads[0]->attrs.dict.at("with_dv"), "true");
  EXPECT_EQ(merged.GetAttr<std::vector<std::string>>("simplify.merged"), std::vector<std::string>{"dv into grad"});
  std::vector<NDArray> want = EvalGraphWithKernels(plain, feeds), got = EvalGraphWithKernels(merged, feeds);
  ASSERT_EQ(got.size(), 3u);
  for (int i = 0; i < 3; ++i) ExpectNear(got[i], Values(want[i]), 1e-6, 1e-5);
  // Not merged: another scale, another q, a grad reading dv.
  Attrs other_scale = c.ToAttrs();
  other_scale["scale"] = "0.25";
  NodeEntry q2 = Apply("negative", "q2", {q});
  for (const auto& outputs :
       {build(other_scale, q, false), build(c.ToAttrs(), q2, false), build(c.ToAttrs(), q, true)}) {
    Graph kept = ApplyPass(InferFromFeeds(outputs, feeds), "Simplify");
    EXPECT_EQ(NodesOf(kept, "_fused_attention_dv").size(), 1u);
    EXPECT_TRUE(kept.GetAttr<std::vector<std::string>>("simplify.merged").empty());
  }
}

/*! \brief Elementwise: both NaN, or equal (infinities), or within tol. */
void ExpectSameValues(const NDArray& got, const std::vector<double>& want, double tol) {
  std::vector<double> g = Values(got);
  ASSERT_EQ(g.size(), want.size());
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(g[i])) << "element " << i << ": got " << g[i] << ", expected NaN";
    } else {
      EXPECT_TRUE(g[i] == want[i] || std::fabs(g[i] - want[i]) <= tol)
          << "element " << i << ": got " << g[i] << ", expected " << want[i];
    }
  }
}

// NaN and Inf propagate as the unfused graph's: a slice holding one runs the dense formulas
// over all keys, masked ones included (0 * Inf in p v is NaN there too); other slices are exact.
TEST(FusedAttentionTest, SpecialValuesPropagateAsUnfused) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  struct Special {
    int input;
    int64_t index;
    double value;
  };
  // In slice 1 (of 2) of q, k [2, 40, 8], v [2, 40, 4]: q row 3, k row 5 (before row 3 in causal
  // order: every later row sees it), v row 39 (masked for every row but the last when causal).
  const Special specials[] = {{0, 40 * 8 + 3 * 8 + 1, nan}, {0, 40 * 8 + 3 * 8, inf},  {1, 40 * 8 + 5 * 8 + 2, nan},
                              {1, 40 * 8 + 5 * 8, -inf},    {2, 40 * 4 + 39 * 4, inf}, {2, 40 * 4 + 39 * 4 + 1, nan},
                              {1, 40 * 8 + 5 * 8 + 2, inf}};
  for (const char* form : {"select", "add", "multiply"}) {
    for (bool causal : {false, true}) {
      for (const Special& sp : specials) {
        SCOPED_TRACE(StrCat(form, " causal ", causal, " input ", sp.input, "[", sp.index, "] = ", sp.value));
        Case c;
        c.causal = causal;
        c.mask_form = form;
        std::vector<NDArray> in{RandomArray(Shape{2, 40, 8}, DType::kFloat32, 40, -2, 2),
                                RandomArray(Shape{2, 40, 8}, DType::kFloat32, 41, -2, 2),
                                RandomArray(Shape{2, 40, 4}, DType::kFloat32, 42)};
        in[sp.input].data<float>()[sp.index] = static_cast<float>(sp.value);
        std::vector<double> o, lse;
        Reference(c, in[0], in[1], in[2], &o, &lse);
        std::vector<NDArray> out = RunOp("fused_attention", c.ToAttrs(), in);
        ExpectSameValues(out[0], o, 1e-5);
        // The gradient of a slice with a special value has NaN where the unfused graph's has; slice 0 is finite.
        NDArray w = RandomArray(out[0].shape(), DType::kFloat32, 43);
        std::vector<NDArray> grads =
            RunOp("fused_attention_grad", c.ToAttrs(), {w, in[0], in[1], in[2], out[0], out[1]});
        for (int i = 0; i < 3; ++i) {
          std::vector<double> gv = Values(grads[i]);
          for (size_t x = 0; x < gv.size() / 2; ++x)
            ASSERT_TRUE(std::isfinite(gv[x])) << "gradient " << i << "[" << x << "]";
        }
        if (sp.input == 0 && std::isnan(sp.value)) {
          // q row 3 is NaN: its dq row is NaN, as the unfused graph's.
          const std::vector<double> dq = Values(grads[0]);
          for (int64_t x = 0; x < 8; ++x) EXPECT_TRUE(std::isnan(dq[40 * 8 + 3 * 8 + x]));
        }
      }
    }
  }
}

// Empty tensors: B = 0, T = 0 or S = 0 run, with shapes inferred; S = 0 gives o = 0.
TEST(FusedAttentionTest, EmptyTensors) {
  struct Sizes {
    int64_t b, t, s;
  };
  for (const Sizes& z : {Sizes{0, 5, 5}, Sizes{2, 0, 5}, Sizes{2, 5, 0}, Sizes{2, 0, 0}}) {
    for (bool causal : {false, true}) {
      SCOPED_TRACE(StrCat("B ", z.b, " T ", z.t, " S ", z.s, " causal ", causal));
      Case c;
      c.causal = causal;
      NDArray q = RandomArray(Shape{z.b, z.t, 4}, DType::kFloat32, 1);
      NDArray k = RandomArray(Shape{z.b, z.s, 4}, DType::kFloat32, 2);
      NDArray v = RandomArray(Shape{z.b, z.s, 3}, DType::kFloat32, 3);
      std::vector<NDArray> out = RunOp("fused_attention", c.ToAttrs(), {q, k, v});
      EXPECT_EQ(out[0].shape(), (Shape{z.b, z.t, 3}));
      EXPECT_EQ(out[1].shape(), (Shape{z.b, z.t}));
      for (double x : Values(out[0])) EXPECT_EQ(x, 0.0);
      NDArray w = RandomArray(out[0].shape(), DType::kFloat32, 4);
      std::vector<NDArray> grads = RunOp("fused_attention_grad", c.ToAttrs(), {w, q, k, v, out[0], out[1]});
      EXPECT_EQ(grads[0].shape(), q.shape());
      EXPECT_EQ(grads[1].shape(), k.shape());
      EXPECT_EQ(grads[2].shape(), v.shape());
      for (const NDArray& g : grads) {
        for (double x : Values(g)) EXPECT_EQ(x, 0.0);
      }
      EXPECT_EQ(RunOp("_fused_attention_dv", c.ToAttrs(), {w, q, k})[0].shape(), v.shape());
    }
  }
}

}  // namespace
}  // namespace test
}  // namespace ir
