/*!
 * \file lazy_bench.cc
 * \brief Lazy arrays (include/ir/lazy.h, issue 15): recording cost per op; training steps of
 * softmax regression, an MLP and LeNet-small written imperatively (forward, loss, hand-written
 * backward, SGD by AssignAll) against the same graph run by an Executor; cold compile vs cache
 * hit; 1,000 steps with fresh data and a changing learning rate; an imperative sigmoid and Adam
 * update on 4M floats (bench/eager_torch_peer.py puts them against PyTorch eager).
 *
 * Usage: ir-lazy-bench [--reps R] [--steps N] [--only record|models|elementwise] [--json FILE]
 * Figures are medians of R repetitions, ratios within this run. The disk kernel cache is off
 * (IR_KERNEL_CACHE_DIR=off unless set) so that "cold" compiles every kernel.
 */
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench_common.h"
#include "ir/codegen.h"
#include "ir/lazy.h"
#include "ir/node.h"
#include "ir/op.h"
#include "ir/runtime.h"

namespace {

using ir::NDArray;
using ir::NodeEntry;
using ir::Shape;
using ir::lazy::Array;
using Attrs = std::map<std::string, std::string>;

using ir::bench::Median;
using ir::bench::NowMs;
using ir::bench::TimeMs;

/*! \brief Deterministic float32 data in [lo, hi). */
NDArray Random(const Shape& shape, unsigned seed, float lo = -0.1f, float hi = 0.1f) {
  return ir::bench::Random(shape, seed, lo, hi);
}

NDArray OneHot(int64_t rows, int64_t classes, unsigned seed) {
  std::vector<float> values(static_cast<size_t>(rows * classes), 0.0f);
  for (int64_t r = 0; r < rows; ++r) values[static_cast<size_t>(r * classes + (r * 7 + seed) % classes)] = 1.0f;
  return NDArray::FromVector(Shape({rows, classes}), values);
}

NDArray Scalar(float v) { return NDArray::Scalar(v); }

// ---- the models, written once over a builder: lazy arrays, or graph nodes for an Executor ----

/*! \brief Records ops on lazy arrays. */
struct LazyBuilder {
  using T = Array;
  std::vector<T> Op(const std::string& op, const std::vector<T>& in, const Attrs& attrs = {}, uint32_t n = 1) {
    return ir::lazy::ApplyN(op, in, attrs, n);
  }
};

/*! \brief Builds graph nodes (the same ops, names and attributes) for an Executor. */
struct GraphBuilder {
  using T = NodeEntry;
  int count = 0;
  std::vector<T> Op(const std::string& op, const std::vector<T>& in, const Attrs& attrs = {}, uint32_t n = 1) {
    ir::NodePtr node = ir::Node::Create(ir::Op::Get(op), op + "_" + std::to_string(count++), attrs, in);
    std::vector<T> out;
    for (uint32_t i = 0; i < n; ++i) out.push_back(NodeEntry{node, i});
    return out;
  }
};

/*! \brief Layers and their hand-written gradients over builder B. */
template <class B>
struct Layers {
  using T = typename B::T;
  B& b;
  T A(const std::string& op, const std::vector<T>& in, const Attrs& attrs = {}) { return b.Op(op, in, attrs)[0]; }
  T Dense(T x, T w, T bias) { return A("bias_add", {A("matmul", {x, w}), bias}); }
  /*! \brief Appends dW, db to grads (in parameter order after the caller reverses) and returns dx. */
  T DenseBack(T dy, T x, T w, std::vector<T>* grads) {
    grads->push_back(A("bias_add_grad", {dy}));
    grads->push_back(A("matmul", {x, dy}, {{"transpose_a", "true"}}));
    return A("matmul", {dy, w}, {{"transpose_b", "true"}});
  }
  Attrs Conv() { return {{"strides", "[1,1]"}, {"padding", "SAME"}}; }
  Attrs Pool() { return {{"ksize", "[2,2]"}, {"strides", "[2,2]"}, {"padding", "SAME"}}; }
  /*! \brief conv 5x5 SAME + bias + relu + 2x2 max pool; keeps what the backward needs. */
  struct ConvOut {
    T relu, pool;
  };
  ConvOut ConvBlock(T x, T w, T bias) {
    T h = A("relu", {A("bias_add", {A("conv2d", {x, w}, Conv()), bias})});
    return {h, A("max_pool2d", {h}, Pool())};
  }
  T ConvBack(T dpool, T x, T w, const ConvOut& out, std::vector<T>* grads) {
    T dh = A("relu_grad", {A("max_pool2d_grad", {out.relu, out.pool, dpool}, Pool()), out.relu});
    grads->push_back(A("bias_add_grad", {dh}));
    grads->push_back(A("conv2d_backprop_filter", {x, dh, w}, Conv()));
    return A("conv2d_backprop_input", {dh, w, x}, Conv());
  }
  /*! \brief Mean softmax cross-entropy and its gradient wrt the logits (scaled by inv_n = 1/batch). */
  std::pair<T, T> Loss(T logits, T labels, T inv_n) {
    std::vector<T> xent = b.Op("softmax_cross_entropy_with_logits", {logits, labels}, {}, 2);
    return {A("mean", {xent[0]}), A("multiply", {xent[1], inv_n})};
  }
};

/*! \brief One model: parameter shapes, input shape, and its loss + gradients over a builder. */
struct Model {
  std::string name;
  std::vector<Shape> params;
  Shape x;
};

const int64_t kBatch = 64;

std::vector<Model> Models() {
  return {
      {"softmax", {{784, 10}, {10}}, {kBatch, 784}},
      {"mlp", {{784, 256}, {256}, {256, 10}, {10}}, {kBatch, 784}},
      {"lenet", {{5, 5, 1, 16}, {16}, {5, 5, 16, 32}, {32}, {1568, 256}, {256}, {256, 10}, {10}}, {kBatch, 28, 28, 1}}};
}

/*! \brief loss, then the SGD-updated parameters p - lr * grad (the step's outputs). */
template <class B>
std::vector<typename B::T> SgdStep(B& b, const std::string& model, const std::vector<typename B::T>& p, typename B::T x,
                                   typename B::T labels, typename B::T inv_n, typename B::T lr) {
  using T = typename B::T;
  Layers<B> l{b};
  std::vector<T> grads;  // filled from the last layer back, reversed below
  T loss;
  if (model == "softmax") {
    auto [value, dlogits] = l.Loss(l.Dense(x, p[0], p[1]), labels, inv_n);
    loss = value;
    l.DenseBack(dlogits, x, p[0], &grads);
  } else if (model == "mlp") {
    T h = l.A("relu", {l.Dense(x, p[0], p[1])});
    auto [value, dlogits] = l.Loss(l.Dense(h, p[2], p[3]), labels, inv_n);
    loss = value;
    T dh = l.A("relu_grad", {l.DenseBack(dlogits, h, p[2], &grads), h});
    l.DenseBack(dh, x, p[0], &grads);
  } else {
    auto c1 = l.ConvBlock(x, p[0], p[1]);
    auto c2 = l.ConvBlock(c1.pool, p[2], p[3]);
    T flat = l.A("reshape", {c2.pool}, {{"shape", "[-1,1568]"}});
    T h = l.A("relu", {l.Dense(flat, p[4], p[5])});
    auto [value, dlogits] = l.Loss(l.Dense(h, p[6], p[7]), labels, inv_n);
    loss = value;
    T dh = l.A("relu_grad", {l.DenseBack(dlogits, h, p[6], &grads), h});
    T dflat = l.DenseBack(dh, flat, p[4], &grads);
    T dpool1 = l.ConvBack(l.A("reshape_like", {dflat, c2.pool}), c1.pool, p[2], c2, &grads);
    l.ConvBack(dpool1, x, p[0], c1, &grads);
  }
  // grads holds (db, dW) pairs from the last layer back: reversed, they follow p's order.
  std::reverse(grads.begin(), grads.end());
  std::vector<T> out{loss};
  for (size_t i = 0; i < p.size(); ++i) out.push_back(l.A("subtract", {p[i], l.A("multiply", {lr, grads[i]})}));
  return out;
}

/*! \brief The model's data and parameters (NDArrays shared by the lazy and graph runs). */
struct Data {
  std::vector<NDArray> params;
  std::vector<NDArray> xs, labels;  // a few batches, cycled (fresh data each step)
};

Data MakeData(const Model& m) {
  Data d;
  unsigned seed = 1;
  for (const Shape& s : m.params) d.params.push_back(Random(s, seed++));
  for (unsigned i = 0; i < 4; ++i) {
    d.xs.push_back(Random(m.x, 100 + i, 0.0f, 1.0f));
    d.labels.push_back(OneHot(kBatch, 10, i));
  }
  return d;
}

float LearningRate(int step) { return 0.1f / (1.0f + 0.001f * static_cast<float>(step)); }

/*! \brief One lazy training step: records it, then AssignAll (one trace). Returns the loss array. */
Array LazyStep(const Model& m, std::vector<Array>* params, const Data& d, int step) {
  LazyBuilder b;
  size_t i = static_cast<size_t>(step) % d.xs.size();
  std::vector<Array> out = SgdStep(b, m.name, *params, Array(d.xs[i]), Array(d.labels[i]),
                                   Array(1.0f / static_cast<float>(kBatch)), Array(LearningRate(step)));
  std::vector<Array> values(out.begin() + 1, out.end());
  values.push_back(out[0]);
  std::vector<Array> targets = *params;
  Array loss;
  targets.push_back(loss);
  ir::lazy::AssignAll(targets, values);
  return targets.back();
}

struct ModelFigures {
  double cold_ms = 0, cold_kernels_warm_ms = 0, lazy_step_ms = 0, record_ms = 0, materialize_ms = 0;
  double graph_run_ms = 0, hit_ms = 0, first_loss = 0, last_loss = 0;
  size_t ops_per_step = 0, kernels_per_step = 0, traces_compiled = 0, cache_misses = 0, steps = 0;
};

/*! \brief The same step as a graph, run by an Executor: the run time without lazy overhead. */
class GraphRunner {
 public:
  GraphRunner(const Model& m, const Data& d) : data_(d) {
    GraphBuilder b;
    std::vector<NodeEntry> p;
    for (size_t i = 0; i < m.params.size(); ++i) p.push_back({ir::Node::CreateVariable("p" + std::to_string(i)), 0});
    auto in = [](const char* name) { return NodeEntry{ir::Node::CreateVariable(name), 0}; };
    exec_ =
        std::make_unique<ir::Executor>(ir::Graph(SgdStep(b, m.name, p, in("x"), in("labels"), in("inv_n"), in("lr"))),
                                       ir::SessionOptions(), std::make_shared<ir::VariableStore>());
    for (const NDArray& a : d.params) params_.push_back(a.CopyTo(ir::Device::CPU()));
  }
  /*! \brief Runs step `step` (same data and learning rate as the lazy step); returns its ms. */
  double Step(int step) {
    size_t i = static_cast<size_t>(step) % data_.xs.size();
    double start = NowMs();
    std::unordered_map<std::string, NDArray> feeds{{"x", data_.xs[i]},
                                                   {"labels", data_.labels[i]},
                                                   {"inv_n", Scalar(1.0f / kBatch)},
                                                   {"lr", Scalar(LearningRate(step))}};
    for (size_t k = 0; k < params_.size(); ++k) feeds["p" + std::to_string(k)] = params_[k];
    std::vector<NDArray> out = exec_->Run(feeds);
    for (size_t k = 0; k < params_.size(); ++k) params_[k] = out[k + 1];
    return NowMs() - start;
  }

 private:
  const Data& data_;
  std::unique_ptr<ir::Executor> exec_;
  std::vector<NDArray> params_;
};

ModelFigures RunModel(const Model& m, int steps) {
  ModelFigures f;
  Data d = MakeData(m);
  auto fresh_params = [&] {
    std::vector<Array> p;
    for (const NDArray& a : d.params) p.push_back(Array(a.CopyTo(ir::Device::CPU())));
    return p;
  };
  // Cold: a fresh Context and no compiled kernel anywhere; then a fresh Context with the kernels
  // in memory (the passes run again, the kernels are found).
  auto first_step_ms = [&](bool clear_kernels) {
    if (clear_kernels) ir::KernelCache::Global().ClearMemory();
    ir::lazy::Context context;
    ir::lazy::Context::Scope scope(&context);
    std::vector<Array> p = fresh_params();
    double start = NowMs();
    LazyStep(m, &p, d, 0);
    return NowMs() - start;
  };
  f.cold_ms = first_step_ms(true);
  f.cold_kernels_warm_ms = first_step_ms(false);
  // Warm: `steps` steps in one Context, fresh data and learning rate each; split record / materialize.
  ir::lazy::Context context;
  ir::lazy::Context::Scope scope(&context);
  std::vector<Array> p = fresh_params();
  GraphRunner graph(m, d);
  graph.Step(0);  // binds
  std::vector<double> step_ms, record_ms, materialize_ms, graph_ms, hit_ms;
  for (int s = 0; s < steps; ++s) {
    ir::lazy::Stats before = context.stats();
    double start = NowMs();
    Array loss = LazyStep(m, &p, d, s);
    double total = NowMs() - start;
    const ir::lazy::Stats& after = context.stats();
    if (s == 0) f.ops_per_step = after.ops_recorded - before.ops_recorded;
    if (s == 1) f.kernels_per_step = after.kernels_launched - before.kernels_launched;
    if (s > 0) {
      step_ms.push_back(total);
      record_ms.push_back(static_cast<double>(after.record_ns - before.record_ns) * 1e-6);
      materialize_ms.push_back(static_cast<double>(after.execute_ns - before.execute_ns) * 1e-6);
      graph_ms.push_back(graph.Step(s));  // interleaved: both see the same machine state
      hit_ms.push_back(materialize_ms.back() - graph_ms.back());
    }
    if (s == 0 || s == steps - 1) (s == 0 ? f.first_loss : f.last_loss) = loss.Eval().ToVector<float>()[0];
    if (s % 200 == 0) std::fprintf(stderr, "  %s step %d/%d\r", m.name.c_str(), s, steps);
  }
  f.lazy_step_ms = Median(step_ms);
  f.record_ms = Median(record_ms);
  f.materialize_ms = Median(materialize_ms);
  f.traces_compiled = context.stats().traces_compiled;
  f.cache_misses = context.stats().cache_misses;
  f.steps = static_cast<size_t>(steps);
  f.graph_run_ms = Median(graph_ms);
  f.hit_ms = Median(hit_ms);
  return f;
}

// ---- recording cost ----

/*! \brief ns per recorded op over `ops` elementwise ops (chains of 1,000, never materialized). */
std::pair<double, double> RecordNs(int64_t ops) {
  ir::lazy::Context context;
  ir::lazy::Context::Scope scope(&context);
  Array x(Random({16}, 1)), y(Random({16}, 2));
  double start = NowMs();
  for (int64_t chain = 0; chain < ops / 1000; ++chain) {
    Array z = x;
    for (int j = 0; j < 500; ++j) z = z * y + x;  // 2 ops per iteration
  }
  double wall_ns = (NowMs() - start) * 1e6 / static_cast<double>(ops);
  const ir::lazy::Stats& s = context.stats();
  return {wall_ns, static_cast<double>(s.record_ns) / static_cast<double>(s.ops_recorded)};
}

// ---- imperative elementwise code on 4M floats ----

struct ElementwiseFigures {
  double ms = 0;
  size_t kernels = 0;
};

/*! \brief Median time of `f` materialized in a Context, and its kernels per materialization. */
ElementwiseFigures TimeLazy(int reps, const std::function<void()>& f) {
  ir::lazy::Context context;
  ir::lazy::Context::Scope scope(&context);
  ElementwiseFigures out;
  out.ms = TimeMs(reps, f);
  out.kernels = context.stats().kernels_launched / static_cast<size_t>(reps + 1);
  return out;
}

std::map<std::string, ElementwiseFigures> Elementwise(int64_t n, int reps) {
  std::map<std::string, ElementwiseFigures> out;
  Array x(Random({n}, 3, -4.0f, 4.0f));
  out["sigmoid"] = TimeLazy(reps, [&] { (1.0f / (1.0f + ir::lazy::exp(-x))).Eval(); });
  Array p(Random({n}, 4)), g(Random({n}, 5)), m(Random({n}, 6)), v(Random({n}, 7, 0.0f, 0.01f));
  const float b1 = 0.9f, b2 = 0.999f, eps = 1e-8f;
  int t = 0;
  out["adam"] = TimeLazy(reps, [&] {
    ++t;
    Array lr_t(0.001f * std::sqrt(1.0f - std::pow(b2, t)) / (1.0f - std::pow(b1, t)));
    Array m_new = b1 * m + (1.0f - b1) * g;
    Array v_new = b2 * v + (1.0f - b2) * g * g;
    Array p_new = p - lr_t * m_new / (ir::lazy::Apply("sqrt", {v_new}) + eps);
    ir::lazy::AssignAll({m, v, p}, {m_new, v_new, p_new});
  });
  return out;
}

std::string Json(const std::map<std::string, double>& values) {
  std::string text = "{";
  for (const auto& [key, value] : values) {
    text += (text.size() > 1 ? "," : "") + std::string("\"") + key + "\":" + std::to_string(value);
  }
  return text + "}";
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 5, steps = 1000;
  std::string only, json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--reps")
      reps = std::atoi(argv[i + 1]);
    else if (flag == "--steps")
      steps = std::atoi(argv[i + 1]);
    else if (flag == "--only")
      only = argv[i + 1];
    else if (flag == "--json")
      json_path = argv[i + 1];
    else {
      std::cerr << "usage: ir-lazy-bench [--reps R] [--steps N] [--only record|models|elementwise] [--json FILE]\n";
      return 2;
    }
  }
  setenv("IR_KERNEL_CACHE_DIR", "off", 0);
  std::map<std::string, double> json;
  try {
    if (only.empty() || only == "record") {
      std::vector<double> wall, stat;
      for (int r = 0; r < reps; ++r) {
        auto [w, s] = RecordNs(1000000);
        wall.push_back(w);
        stat.push_back(s);
      }
      json["record_wall_ns_per_op"] = Median(wall);
      json["record_stats_ns_per_op"] = Median(stat);
      std::printf(
          "recording, 1e6 elementwise ops (median of %d): %.0f ns/op wall, %.0f ns/op record_ns (goal <= 500)\n", reps,
          Median(wall), Median(stat));
    }
    if (only.empty() || only == "models") {
      std::printf("\n%-8s %5s %4s %9s %9s %9s %8s %8s %8s %7s %8s %9s %10s %s\n", "model", "ops", "krn", "cold ms",
                  "cold-krn", "step ms", "record", "mater.", "graph", "lazy/gr", "hit ovh", "hit %step", "cold/hit",
                  "compiled/misses over steps");
      for (const Model& m : Models()) {
        ModelFigures f = RunModel(m, steps);
        double hit_ms = f.hit_ms;  // lookup + feeds + Assign copies, paired per step
        double hit_floor = std::max(hit_ms, 1e-3);
        std::printf(
            "%-8s %5zu %4zu %9.1f %9.1f %9.3f %8.3f %8.3f %8.3f %7.2f %8.3f %8.1f%% %10.0f %zu/%zu over %zu"
            " (loss %.3f -> %.3f)\n",
            m.name.c_str(), f.ops_per_step, f.kernels_per_step, f.cold_ms - f.lazy_step_ms,
            f.cold_kernels_warm_ms - f.lazy_step_ms, f.lazy_step_ms, f.record_ms, f.materialize_ms, f.graph_run_ms,
            f.lazy_step_ms / f.graph_run_ms, hit_ms, 100.0 * hit_ms / f.lazy_step_ms,
            (f.cold_ms - f.lazy_step_ms) / hit_floor, f.traces_compiled, f.cache_misses, f.steps, f.first_loss,
            f.last_loss);
        for (auto [key, value] :
             std::map<std::string, double>{{"cold_ms", f.cold_ms - f.lazy_step_ms},
                                           {"cold_kernels_warm_ms", f.cold_kernels_warm_ms - f.lazy_step_ms},
                                           {"step_ms", f.lazy_step_ms},
                                           {"record_ms", f.record_ms},
                                           {"materialize_ms", f.materialize_ms},
                                           {"graph_run_ms", f.graph_run_ms},
                                           {"hit_ms", hit_ms},
                                           {"traces_compiled", static_cast<double>(f.traces_compiled)},
                                           {"cache_misses", static_cast<double>(f.cache_misses)}}) {
          json[m.name + "." + key] = value;
        }
      }
      std::printf(
          "cold: first step in a fresh Context without (cold) / with (cold-krn) compiled kernels in memory, "
          "minus a warm step; hit ovh = materialize - graph Executor run (lookup, feeds, Assign copies)\n");
    }
    if (only.empty() || only == "elementwise") {
      const int64_t n = int64_t{1} << 22;
      std::printf("\n4M float32, imperative code materialized (median of %d):\n", std::max(reps, 10));
      for (const auto& [name, e] : Elementwise(n, std::max(reps, 10))) {
        std::printf("  %-8s %8.3f ms  %zu kernel(s)\n", name.c_str(), e.ms, e.kernels);
        json["elementwise." + name + "_ms"] = e.ms;
        json["elementwise." + name + "_kernels"] = static_cast<double>(e.kernels);
      }
    }
  } catch (const std::exception& err) {
    std::cerr << "error: " << err.what() << "\n";
    return 1;
  }
  if (!json_path.empty()) std::ofstream(json_path) << Json(json) << "\n";
  return 0;
}
