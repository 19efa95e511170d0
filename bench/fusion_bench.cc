/*!
 * \file fusion_bench.cc
 * \brief Fused vs unfused execution of memory-bound workloads, against the machine's
 * bandwidth measured in the same run (STREAM-style loops built with the same flags), an
 * F_max sweep, and cold/warm kernel compilation.
 *
 * Usage: ir-fusion-bench [--n ELEMENTS] [--reps R] [--json FILE] [--only NAME]
 * (NAME: stream, ops, rows (the row computations: softmax, layer norm, ...), fmax, compile)
 * Every figure is the median of R repetitions; compare ratios, not absolute times, across runs.
 */
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench_common.h"
#include "ir/codegen.h"
#include "ir/fusion.h"
#include "ir/node.h"
#include "ir/runtime.h"

namespace {

using ir::NDArray;
using ir::NodeEntry;
using ir::Shape;

using ir::bench::Median;
using ir::bench::NowMs;
using ir::bench::TimeMs;

/*! \brief Deterministic float32 data in [lo, hi). */
NDArray Random(const Shape& shape, unsigned seed, float lo = -1, float hi = 1) {
  return ir::bench::Random(shape, seed, lo, hi);
}

NodeEntry Var(const std::string& name) { return NodeEntry{ir::Node::CreateVariable(name), 0}; }
NodeEntry Op(const std::string& op, std::vector<NodeEntry> in, const std::map<std::string, std::string>& attrs = {}) {
  static int counter = 0;
  return ir::MakeNode(op, op + "_" + std::to_string(counter++), std::move(in), attrs);
}
NodeEntry Scalar(const std::string& op, NodeEntry x, double s) { return Op(op, {x}, {{"scalar", std::to_string(s)}}); }

/*! \brief STREAM-style loops, compiled with the flags the generated kernels use. */
double TriadGBs(int64_t n, int reps) {
  std::vector<float> a(n), b(n, 1.f), c(n, 2.f);
  double ms = TimeMs(reps, [&] {
#pragma omp parallel for simd
    for (int64_t i = 0; i < n; ++i) a[i] = b[i] + 3.f * c[i];
  });
  return 3.0 * 4 * n / ms / 1e6;
}

double UpdateGBs(int64_t n, int reps) {
  std::vector<float> a(n, 1.f), b(n, 2.f);
  double ms = TimeMs(reps, [&] {
#pragma omp parallel for simd
    for (int64_t i = 0; i < n; ++i) a[i] += 1e-3f * b[i];
  });
  return 3.0 * 4 * n / ms / 1e6;
}

struct Result {
  std::string name;
  double fused_ms, unfused_ms, bytes;
  size_t fused_kernels, unfused_kernels;
  bool in_place = false;  // measured against the in-place STREAM loop
};

ir::SessionOptions Options(bool fusion, int fmax = -1) {
  ir::SessionOptions options;
  options.fusion = fusion;
  options.fmax = fmax;
  return options;
}

/*! \brief Times running `fetches`/`targets` with and without fusion. */
Result Compare(const std::string& name, const std::vector<NodeEntry>& fetches, const std::vector<ir::NodePtr>& targets,
               const std::unordered_map<std::string, NDArray>& feeds, const std::map<std::string, NDArray>& variables,
               double bytes, int reps) {
  Result r{name, 0, 0, bytes, 0, 0};
  for (bool fusion : {true, false}) {
    ir::Session sess(Options(fusion));
    for (const auto& kv : variables) sess.variables().Set(kv.first, kv.second.CopyTo(ir::Device::CPU()));
    double ms = TimeMs(reps, [&] { sess.Run(fetches, feeds, targets); });
    (fusion ? r.fused_ms : r.unfused_ms) = ms;
    (fusion ? r.fused_kernels : r.unfused_kernels) = sess.last_stats().kernels_launched;
  }
  return r;
}

Result Sigmoid(int64_t n, int reps) {
  NodeEntry x = Var("x");
  NodeEntry y = Scalar("rdivide_scalar", Scalar("add_scalar", Op("exp", {Op("negative", {x})}), 1), 1);
  return Compare("sigmoid as 4 ops", {y}, {}, {{"x", Random(Shape{n}, 1)}}, {}, 2.0 * 4 * n, reps);
}

Result Adam(int64_t n, int reps) {
  NodeEntry w = Var("w"), m = Var("m"), v = Var("v"), g = Var("g");
  NodeEntry m_new =
      Op("assign", {m, Op("add", {Scalar("multiply_scalar", m, 0.9), Scalar("multiply_scalar", g, 0.1)})});
  NodeEntry v_new =
      Op("assign",
         {v, Op("add", {Scalar("multiply_scalar", v, 0.999), Scalar("multiply_scalar", Op("square", {g}), 0.001)})});
  NodeEntry delta =
      Scalar("multiply_scalar", Op("divide", {m_new, Scalar("add_scalar", Op("sqrt", {v_new}), 1e-8)}), 1e-3);
  NodeEntry step = Op("group", {Op("assign_sub", {w, delta})});
  std::map<std::string, NDArray> vars = {
      {"w", Random(Shape{n}, 2)}, {"m", Random(Shape{n}, 3)}, {"v", Random(Shape{n}, 4, 0.1f, 1.f)}};
  // Reads w, m, v, g; writes w, m, v.
  Result r = Compare("Adam update (w, m, v)", {}, {step.node}, {{"g", Random(Shape{n}, 5)}}, vars, 7.0 * 4 * n, reps);
  r.in_place = true;
  return r;
}

Result Softmax(int64_t rows, int64_t cols, int reps) {
  NodeEntry x = Var("x");
  NodeEntry mx = Op("max", {x}, {{"axis", "1"}, {"keepdims", "true"}});
  NodeEntry e = Op("exp", {Op("subtract", {x, mx})});
  NodeEntry y = Op("divide", {e, Op("sum", {e}, {{"axis", "1"}, {"keepdims", "true"}})});
  int64_t n = rows * cols;
  return Compare("softmax as 5 ops", {y}, {}, {{"x", Random(Shape{rows, cols}, 6)}}, {}, 2.0 * 4 * n, reps);
}

Result LayerNorm(int64_t rows, int64_t cols, int reps) {
  NodeEntry x = Var("x"), gamma = Var("gamma"), beta = Var("beta");
  NodeEntry centered = Op("subtract", {x, Op("mean", {x}, {{"axis", "1"}, {"keepdims", "true"}})});
  NodeEntry var = Op("mean", {Op("square", {centered})}, {{"axis", "1"}, {"keepdims", "true"}});
  NodeEntry y =
      Op("add",
         {Op("multiply", {Op("multiply", {centered, Op("rsqrt", {Scalar("add_scalar", var, 1e-5)})}), gamma}), beta});
  int64_t n = rows * cols;
  return Compare(
      "layer norm as 9 ops", {y}, {},
      {{"x", Random(Shape{rows, cols}, 7)}, {"gamma", Random(Shape{cols}, 8)}, {"beta", Random(Shape{cols}, 9)}}, {},
      2.0 * 4 * n, reps);
}

NodeEntry RowReduce(const std::string& op, NodeEntry x) { return Op(op, {x}, {{"axis", "1"}, {"keepdims", "true"}}); }

Result LogSoftmax(int64_t rows, int64_t cols, int reps) {
  NodeEntry x = Var("x");
  NodeEntry shifted = Op("subtract", {x, RowReduce("max", x)});
  NodeEntry y = Op("subtract", {shifted, Op("log", {RowReduce("sum", Op("exp", {shifted}))})});
  int64_t n = rows * cols;
  return Compare("log-softmax as 6 ops", {y}, {}, {{"x", Random(Shape{rows, cols}, 10)}}, {}, 2.0 * 4 * n, reps);
}

/*! \brief dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma, x normalized again. */
Result LayerNormGrad(int64_t rows, int64_t cols, int reps) {
  NodeEntry x = Var("x"), dy = Var("dy"), gamma = Var("gamma");
  NodeEntry centered = Op("subtract", {x, RowReduce("mean", x)});
  NodeEntry rstd = Op("rsqrt", {Scalar("add_scalar", RowReduce("mean", Op("square", {centered})), 1e-5)});
  NodeEntry xhat = Op("multiply", {centered, rstd});
  NodeEntry g = Op("multiply", {dy, gamma});
  NodeEntry proj = Op("multiply", {xhat, RowReduce("mean", Op("multiply", {g, xhat}))});
  NodeEntry dx = Op("multiply", {Op("subtract", {Op("subtract", {g, RowReduce("mean", g)}), proj}), rstd});
  int64_t n = rows * cols;
  return Compare(
      "layer norm dx as 16 ops", {dx}, {},
      {{"x", Random(Shape{rows, cols}, 11)}, {"dy", Random(Shape{rows, cols}, 12)}, {"gamma", Random(Shape{cols}, 13)}},
      {}, 3.0 * 4 * n, reps);
}

/*! \brief Per-row loss -sum(y * log_softmax(x)) and its gradient softmax(x) - y, one graph. */
Result SoftmaxXent(int64_t rows, int64_t cols, int reps) {
  NodeEntry x = Var("x"), labels = Var("y");
  NodeEntry shifted = Op("subtract", {x, RowReduce("max", x)});
  NodeEntry logp = Op("subtract", {shifted, Op("log", {RowReduce("sum", Op("exp", {shifted}))})});
  NodeEntry loss = Op("negative", {Op("sum", {Op("multiply", {labels, logp})}, {{"axis", "1"}})});
  NodeEntry grad = Op("subtract", {Op("exp", {logp}), labels});
  int64_t n = rows * cols;
  return Compare("softmax-xent fwd+bwd", {loss, grad}, {},
                 {{"x", Random(Shape{rows, cols}, 14)}, {"y", Random(Shape{rows, cols}, 15, 0, 1)}}, {},
                 3.0 * 4 * n + 4.0 * rows, reps);
}

/*! \brief A wide elementwise graph over `k` inputs: out = sum_i tanh(x_i) * x_{i+1}. */
std::vector<std::pair<int, double>> FmaxSweep(int64_t n, int k, int reps,
                                              std::unordered_map<std::string, NDArray>* feeds) {
  std::vector<NodeEntry> xs;
  for (int i = 0; i < k; ++i) {
    std::string name = "x" + std::to_string(i);
    xs.push_back(Var(name));
    (*feeds)[name] = Random(Shape{n}, 20 + i);
  }
  NodeEntry acc = Op("multiply", {Op("tanh", {xs[0]}), xs[1]});
  for (int i = 1; i + 1 < k; ++i) acc = Op("add", {acc, Op("multiply", {Op("tanh", {xs[i]}), xs[i + 1]})});
  std::vector<std::pair<int, double>> times;
  for (int fmax : {1, 2, 3, 4, 6, 8, 12, 16}) {
    ir::Session sess(Options(true, fmax));
    times.emplace_back(fmax, TimeMs(reps, [&] { sess.Run({acc}, *feeds); }));
  }
  ir::Session unfused(Options(false));
  times.emplace_back(0, TimeMs(reps, [&] { unfused.Run({acc}, *feeds); }));
  return times;
}

}  // namespace

int main(int argc, char** argv) {
  int64_t n = 16 << 20;
  int reps = 7;
  std::string json_path, only;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--n") {
      n = std::stoll(next());
    } else if (arg == "--reps") {
      reps = std::stoi(next());
    } else if (arg == "--json") {
      json_path = next();
    } else if (arg == "--only") {
      only = next();
    } else {
      std::cerr
          << "usage: ir-fusion-bench [--n ELEMENTS] [--reps R] [--json FILE] [--only stream|ops|rows|fmax|compile]\n";
      return 2;
    }
  }
  try {
    std::printf("ir-fusion-bench: %lld float32 elements, median of %d, %d OpenMP threads\n", static_cast<long long>(n),
                reps, omp_get_max_threads());
    std::ofstream json;
    if (!json_path.empty()) json.open(json_path);
    std::string json_text = "{";
    double triad = 0, update = 0;
    if (only.empty() || only == "stream" || only == "ops" || only == "rows") {
      triad = TriadGBs(n, reps);
      update = UpdateGBs(n, reps);
      std::printf("STREAM triad a=b+s*c: %.1f GB/s; in-place update a+=s*b: %.1f GB/s\n", triad, update);
      json_text += "\"stream_triad_gbs\":" + std::to_string(triad) + ",\"stream_update_gbs\":" + std::to_string(update);
    }
    if (only.empty() || only == "ops" || only == "rows") {
      int64_t cols = 1024, rows = n / cols;
      std::vector<Result> results;
      if (only != "rows") results = {Sigmoid(n, reps), Adam(n, reps)};
      // Row computations written op by op: one kernel each, [n / 1024, 1024].
      for (const Result& r : {Softmax(rows, cols, reps), LayerNorm(rows, cols, reps), LogSoftmax(rows, cols, reps),
                              LayerNormGrad(rows, cols, reps), SoftmaxXent(rows, cols, reps)}) {
        results.push_back(r);
      }
      std::printf("\n%-24s %10s %10s %8s %8s %12s %9s\n", "workload", "fused ms", "unfused ms", "speedup", "kernels",
                  "fused GB/s", "vs STREAM");
      json_text += ",\"workloads\":[";
      for (size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        double gbs = r.bytes / r.fused_ms / 1e6;
        std::printf("%-24s %10.2f %10.2f %7.2fx %3zu/%-4zu %12.1f %8.0f%%\n", r.name.c_str(), r.fused_ms, r.unfused_ms,
                    r.unfused_ms / r.fused_ms, r.fused_kernels, r.unfused_kernels, gbs,
                    100 * gbs / (r.in_place ? update : triad));
        json_text += (i ? "," : "") + std::string("{\"name\":\"") + r.name +
                     "\",\"fused_ms\":" + std::to_string(r.fused_ms) +
                     ",\"unfused_ms\":" + std::to_string(r.unfused_ms) + ",\"min_bytes\":" + std::to_string(r.bytes) +
                     ",\"fused_kernels\":" + std::to_string(r.fused_kernels) +
                     ",\"unfused_kernels\":" + std::to_string(r.unfused_kernels) + "}";
      }
      json_text += "]";
      std::printf(
          "(GB/s counts the bytes a perfect kernel must move: inputs read once, outputs written once;\n"
          " in-place updates are compared with the in-place STREAM loop, the rest with triad.)\n");
    }
    if (only.empty() || only == "fmax") {
      std::unordered_map<std::string, NDArray> feeds;
      int64_t sweep_n = n / 4;
      auto times = FmaxSweep(sweep_n, 16, reps, &feeds);
      std::printf("\nF_max sweep: sum_i tanh(x_i) * x_(i+1) over 16 inputs of %lld floats\n",
                  static_cast<long long>(sweep_n));
      json_text += std::string(json_text.size() > 1 ? "," : "") + "\"fmax_sweep\":{";
      for (size_t i = 0; i < times.size(); ++i) {
        std::printf("  %-10s %8.2f ms\n",
                    times[i].first == 0 ? "unfused" : ("F_max " + std::to_string(times[i].first)).c_str(),
                    times[i].second);
        json_text += (i ? "," : "") + std::string("\"") + std::to_string(times[i].first) +
                     "\":" + std::to_string(times[i].second);
      }
      json_text += "}";
    }
    if (only.empty() || only == "compile") {
      // Cold: a kernel no cache has; warm: same source again in memory, then from disk.
      NodeEntry x = Var("x");
      double salt = std::fmod(NowMs(), 1000.0) + 1.5;
      NodeEntry y = Op("tanh", {Scalar("multiply_scalar", Op("exp", {x}), salt)});
      std::unordered_map<std::string, NDArray> feeds = {{"x", Random(Shape{1024}, 30)}};
      auto bind_ms = [&]() {
        ir::Session sess(Options(true));
        sess.Run({y}, feeds);
        return sess.last_stats().bind_ms;
      };
      ir::KernelCacheStats s0 = ir::KernelCache::Global().stats();
      double cold = bind_ms();
      double memory = bind_ms();
      ir::KernelCache::Global().ClearMemory();
      double disk = bind_ms();
      ir::KernelCacheStats s1 = ir::KernelCache::Global().stats();
      std::printf(
          "\nbind (passes + kernel) of a new graph: cold compile %.1f ms, memory hit %.1f ms, disk hit %.1f ms "
          "(compilations %lld, memory hits %lld, disk hits %lld; disk cache: %s)\n",
          cold, memory, disk, static_cast<long long>(s1.compilations - s0.compilations),
          static_cast<long long>(s1.memory_hits - s0.memory_hits), static_cast<long long>(s1.disk_hits - s0.disk_hits),
          ir::KernelCache::Global().directory().empty() ? "off" : ir::KernelCache::Global().directory().c_str());
      json_text += std::string(json_text.size() > 1 ? "," : "") + "\"bind_ms\":{\"cold\":" + std::to_string(cold) +
                   ",\"memory\":" + std::to_string(memory) + ",\"disk\":" + std::to_string(disk) + "}";
    }
    json_text += "}";
    if (json.is_open()) json << json_text << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
