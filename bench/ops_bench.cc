/*!
 * \file ops_bench.cc
 * \brief Single-op CPU kernels (fusion off): elementwise, reductions, matmul, conv, pooling,
 * softmax. Prints one JSON object {name: median ms} so bench/ops_vs_pytorch.py can put the
 * same ops in PyTorch beside them.
 *
 * Usage: ir-ops-bench [--reps R] [--only SUBSTRING] [--min]
 * (--min reports the fastest rep instead of the median: steadier on a shared, busy machine)
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "ir/node.h"
#include "ir/runtime.h"

namespace {

using ir::NDArray;
using ir::NodeEntry;
using ir::Shape;

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

NDArray Random(const Shape& shape, unsigned seed) {
  NDArray a(shape, ir::DType::kFloat32);
  float* p = a.data<float>();
  unsigned state = seed * 2654435761u + 1;
  for (int64_t i = 0; i < a.Size(); ++i) {
    state = state * 1664525u + 1013904223u;
    p[i] = -1.f + 2.f * static_cast<float>(state >> 8) / 16777216.0f;
  }
  return a;
}

/*! \brief int32 class indices in [0, classes). */
NDArray Labels(const Shape& shape, int64_t classes) {
  NDArray a(shape, ir::DType::kInt32);
  for (int64_t i = 0; i < a.Size(); ++i) a.data<int32_t>()[i] = static_cast<int32_t>((i * 7919) % classes);
  return a;
}

NodeEntry Var(const std::string& name) { return NodeEntry{ir::Node::CreateVariable(name), 0}; }

struct Case {
  std::string name;
  std::string op;
  std::vector<Shape> shapes;
  std::map<std::string, std::string> attrs;
  int labels = -1;  ///< an input of int32 class indices in [0, shapes[0][1]) instead of floats
};

}  // namespace

int main(int argc, char** argv) {
  int reps = 9;
  std::string only;
  bool fastest = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::stoi(argv[++i]);
    } else if (arg == "--min") {
      fastest = true;
    } else if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      std::cerr << "usage: ir-ops-bench [--reps R] [--only SUBSTRING] [--min]\n";
      return 2;
    }
  }
  const int64_t n = 4 << 20;
  const std::vector<Case> cases = {
      {"add 4M", "add", {Shape{n}, Shape{n}}, {}},
      {"add broadcast 4096x1024 + 1024", "add", {Shape{4096, 1024}, Shape{1024}}, {}},
      {"multiply 4M", "multiply", {Shape{n}, Shape{n}}, {}},
      {"multiply broadcast 4096x1024 * 4096x1", "multiply", {Shape{4096, 1024}, Shape{4096, 1}}, {}},
      {"multiply_scalar 4M", "multiply_scalar", {Shape{n}}, {{"scalar", "0.5"}}},
      {"exp 4M", "exp", {Shape{n}}, {}},
      {"tanh 4M", "tanh", {Shape{n}}, {}},
      {"erf 4M", "erf", {Shape{n}}, {}},
      {"sigmoid 4M", "sigmoid", {Shape{n}}, {}},
      {"relu 4M", "relu", {Shape{n}}, {}},
      {"relu 64K", "relu", {Shape{64 << 10}}, {}},
      {"sigmoid 64K", "sigmoid", {Shape{64 << 10}}, {}},
      {"add broadcast 64x1024 + 1024", "add", {Shape{64, 1024}, Shape{1024}}, {}},
      {"relu_grad 4M", "relu_grad", {Shape{n}, Shape{n}}, {}},
      {"sigmoid_grad 4M", "sigmoid_grad", {Shape{n}, Shape{n}}, {}},
      {"tanh_grad 4M", "tanh_grad", {Shape{n}, Shape{n}}, {}},
      {"sum rows 4096x1024", "sum", {Shape{4096, 1024}}, {{"axis", "1"}}},
      {"sum cols 4096x1024", "sum", {Shape{4096, 1024}}, {{"axis", "0"}}},
      {"max rows 4096x1024", "max", {Shape{4096, 1024}}, {{"axis", "1"}}},
      {"argmax rows 4096x1024", "argmax", {Shape{4096, 1024}}, {{"axis", "1"}}},
      {"softmax 4096x1024", "softmax", {Shape{4096, 1024}}, {}},
      {"log_softmax 4096x1024", "log_softmax", {Shape{4096, 1024}}, {}},
      {"sparse softmax xent 4096x1024",
       "sparse_softmax_cross_entropy_with_logits",
       {Shape{4096, 1024}, Shape{4096}},
       {},
       1},
      {"transpose 2048x2048", "transpose", {Shape{2048, 2048}}, {}},
      {"matmul 1024^3", "matmul", {Shape{1024, 1024}, Shape{1024, 1024}}, {}},
      {"matmul 64x1024x1024", "matmul", {Shape{64, 1024}, Shape{1024, 1024}}, {}},
      {"conv2d LeNet-1 b64 28x28x1 5x5x6 SAME",
       "conv2d",
       {Shape{64, 28, 28, 1}, Shape{5, 5, 1, 6}},
       {{"strides", "(1, 1)"}, {"padding", "SAME"}}},
      {"conv2d LeNet-2 b64 14x14x6 5x5x16 VALID",
       "conv2d",
       {Shape{64, 14, 14, 6}, Shape{5, 5, 6, 16}},
       {{"strides", "(1, 1)"}, {"padding", "VALID"}}},
      {"conv2d b32 56x56x64 3x3x64 SAME",
       "conv2d",
       {Shape{32, 56, 56, 64}, Shape{3, 3, 64, 64}},
       {{"strides", "(1, 1)"}, {"padding", "SAME"}}},
      {"max_pool2d b64 28x28x32 2x2/2",
       "max_pool2d",
       {Shape{64, 28, 28, 32}},
       {{"ksize", "(2, 2)"}, {"strides", "(2, 2)"}}},
      {"avg_pool2d b64 28x28x32 3x3/1 SAME",
       "avg_pool2d",
       {Shape{64, 28, 28, 32}},
       {{"ksize", "(3, 3)"}, {"strides", "(1, 1)"}, {"padding", "SAME"}}},
  };
  ir::SessionOptions options;
  options.fusion = false;
  std::string json = "{";
  try {
    for (size_t c = 0; c < cases.size(); ++c) {
      const Case& k = cases[c];
      if (k.name.find(only) == std::string::npos) continue;
      std::vector<NodeEntry> inputs;
      std::unordered_map<std::string, NDArray> feeds;
      for (size_t i = 0; i < k.shapes.size(); ++i) {
        std::string name = "in" + std::to_string(i);
        inputs.push_back(Var(name));
        feeds[name] = static_cast<int>(i) == k.labels ? Labels(k.shapes[i], k.shapes[0][1])
                                                      : Random(k.shapes[i], static_cast<unsigned>(c * 10 + i));
      }
      NodeEntry out = ir::MakeNode(k.op, "out", inputs, k.attrs);
      ir::Session sess(options);
      sess.Run({out}, feeds);  // binds
      // Steady state, as bench_util.median_ms measures PyTorch: >= 10 runs and 50 ms of warm-up
      // (the allocator settles), then each repetition the mean of enough runs to last ~2 ms.
      using Clock = std::chrono::steady_clock;
      auto warm = Clock::now();
      int calls = 0;
      while (calls < 10 || Clock::now() - warm < std::chrono::milliseconds(50)) {
        sess.Run({out}, feeds);
        ++calls;
      }
      double warm_ms = std::chrono::duration<double, std::milli>(Clock::now() - warm).count();
      int batch = std::max(1, static_cast<int>(2.0 * calls / warm_ms));
      std::vector<double> times;
      for (int r = 0; r < reps; ++r) {
        auto start = Clock::now();
        for (int b = 0; b < batch; ++b) sess.Run({out}, feeds);
        times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count() / batch);
      }
      double ms = fastest ? *std::min_element(times.begin(), times.end()) : Median(times);
      std::fprintf(stderr, "%-44s %9.3f ms\n", k.name.c_str(), ms);
      json += (json.size() > 1 ? "," : "") + std::string("\"") + k.name + "\":" + std::to_string(ms);
    }
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  std::cout << json << "}\n";
  return 0;
}
