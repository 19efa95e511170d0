/*!
 * \file rnn_while_vs_unrolled.cc
 * \brief An RNN cell h = tanh(x_t W + h U + b) over T steps, as a while_loop (x a [T, B, I]
 * tensor read with tensor_array_read, outputs written with tensor_array_write) and as the
 * statically unrolled graph (the same reads with constant indices, outputs concatenated).
 * Reports, for each, fused and unfused, forward and forward+gradient: the bind time (the first
 * run, which binds the graph and, for the loop, its bodies) and the step time (median of the
 * steady-state runs). CPU target.
 *
 * Usage: ir-rnn-while-bench [--steps T] [--batch B] [--input I] [--hidden H] [--reps R] [--json FILE]
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/autodiff.h"
#include "ir/fold_constants.h"
#include "ir/graph.h"
#include "ir/node.h"
#include "ir/op.h"
#include "ir/runtime.h"

namespace {

using ir::NDArray;
using ir::NodeEntry;
using ir::NodePtr;
using ir::Shape;
using Feeds = std::unordered_map<std::string, NDArray>;

struct Sizes {
  int64_t steps = 100, batch = 32, input = 64, hidden = 128;
};

NodeEntry Var(const std::string& name) { return NodeEntry{ir::Node::CreateVariable(name), 0}; }
NodeEntry N(const std::string& op, const std::string& name, std::vector<NodeEntry> in,
            const std::map<std::string, std::string>& attrs = {}) {
  return ir::MakeNode(op, name, std::move(in), attrs);
}

NDArray Random(const Shape& shape, unsigned seed, float scale) {
  NDArray a(shape, ir::DType::kFloat32);
  float* p = a.data<float>();
  unsigned state = seed * 2654435761u + 1;
  for (int64_t i = 0; i < a.Size(); ++i) {
    state = state * 1664525u + 1013904223u;
    p[i] = scale * (-1.f + 2.f * static_cast<float>(state >> 8) / 16777216.0f);
  }
  return a;
}

/*! \brief One cell step named `prefix`: tanh(x W + h U + b). */
NodeEntry Cell(const std::string& prefix, NodeEntry x, NodeEntry h, NodeEntry w, NodeEntry u, NodeEntry b) {
  NodeEntry pre = N("add", prefix + "/pre", {N("matmul", prefix + "/xw", {x, w}), N("matmul", prefix + "/hu", {h, u})});
  return N("tanh", prefix + "/h", {N("add", prefix + "/bias", {pre, b})});
}

/*! \brief The forward outputs (final h, all outputs [T, B, H]) of the loop over vars (t, n, h, xs, outs, W, U, b). */
std::vector<NodeEntry> WhileRnn() {
  auto body = std::make_shared<ir::Subgraph>(), cond = std::make_shared<ir::Subgraph>();
  std::vector<NodeEntry> p, q;
  for (int i = 0; i < 8; ++i) {
    p.push_back(Var("body/p" + std::to_string(i)));
    q.push_back(Var("cond/p" + std::to_string(i)));
    body->params.push_back(p.back().node);
    cond->params.push_back(q.back().node);
  }
  cond->graph.outputs = {N("less", "cond/less", {q[0], q[1]})};
  NodeEntry h = Cell("body", N("tensor_array_read", "body/x_t", {p[3], p[0]}), p[2], p[5], p[6], p[7]);
  NodeEntry outs = N("tensor_array_write", "body/write", {p[4], p[0], h});
  body->graph.outputs = {N("add_scalar", "body/inc", {p[0]}, {{"scalar", "1"}}), p[1], h, p[3], outs, p[5], p[6], p[7]};
  NodePtr loop = ir::Node::Create(
      ir::Op::Get("while_loop"), "rnn", {},
      {Var("t0"), Var("n"), Var("h0"), Var("xs"), Var("outs0"), Var("W"), Var("U"), Var("b")}, {cond, body});
  return {NodeEntry{loop, 2}, NodeEntry{loop, 4}};
}

/*! \brief The same computation unrolled: T reads with constant indices, T cells, the outputs concatenated. */
std::vector<NodeEntry> UnrolledRnn(int64_t steps) {
  NodeEntry xs = Var("xs"), h = Var("h0"), w = Var("W"), u = Var("U"), b = Var("b");
  std::vector<NodeEntry> rows;
  for (int64_t t = 0; t < steps; ++t) {
    std::string s = "t" + std::to_string(t);
    NodeEntry index = ir::MakeConstantNode(s + "/index", NDArray::Scalar<int32_t>(static_cast<int32_t>(t)));
    h = Cell(s, N("tensor_array_read", s + "/x_t", {xs, index}), h, w, u, b);
    rows.push_back(N("expand_dims", s + "/row", {h}, {{"axis", "0"}}));
  }
  return {h, N("concat", "outs", rows, {{"axis", "0"}})};
}

/*! \brief The loss sum(h) + sum(outs) and its gradients with respect to h0, W, U and b. */
std::vector<NodeEntry> WithGradients(const std::vector<NodeEntry>& forward, const std::vector<NodeEntry>& wrt) {
  NodeEntry loss = N("add", "loss", {N("sum", "sum_h", {forward[0]}), N("sum", "sum_outs", {forward[1]})});
  std::vector<NodeEntry> fetches = {loss};
  for (const NodeEntry& g : ir::Gradients({loss}, wrt)) fetches.push_back(g);
  return fetches;
}

/*! \brief The graph's variables named `names` (each entry of the graph's inputs, found by name). */
std::vector<NodeEntry> Inputs(const std::vector<NodeEntry>& outputs, const std::vector<std::string>& names) {
  std::map<std::string, NodeEntry> found;
  ir::PostOrderDFSVisit(outputs, [&](const NodePtr& n) {
    if (n->is_variable()) found[n->attrs.name] = NodeEntry{n, 0};
  });
  std::vector<NodeEntry> result;
  for (const std::string& name : names) result.push_back(found.at(name));
  return result;
}

struct Timing {
  double bind_ms = 0, step_ms = 0;
};

double Ms(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since).count();
}

Timing Measure(const std::vector<NodeEntry>& fetches, const Feeds& all_feeds, bool fusion, int reps) {
  Feeds feeds;  // only the graph's own variables
  ir::PostOrderDFSVisit(fetches, [&](const NodePtr& n) {
    if (n->is_variable() && all_feeds.count(n->attrs.name)) feeds[n->attrs.name] = all_feeds.at(n->attrs.name);
  });
  ir::SessionOptions options;
  options.fusion = fusion;
  ir::Session session(options);
  Timing timing;
  auto start = std::chrono::steady_clock::now();
  session.Run(fetches, feeds);
  timing.bind_ms = Ms(start);
  std::vector<double> steps;
  for (int r = 0; r < reps; ++r) {
    start = std::chrono::steady_clock::now();
    session.Run(fetches, feeds);
    steps.push_back(Ms(start));
  }
  std::sort(steps.begin(), steps.end());
  timing.step_ms = steps[steps.size() / 2];
  return timing;
}

}  // namespace

int main(int argc, char** argv) {
  Sizes z;
  int reps = 7;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + arg);
      return argv[++i];
    };
    if (arg == "--steps") {
      z.steps = std::stoll(value());
    } else if (arg == "--batch") {
      z.batch = std::stoll(value());
    } else if (arg == "--input") {
      z.input = std::stoll(value());
    } else if (arg == "--hidden") {
      z.hidden = std::stoll(value());
    } else if (arg == "--reps") {
      reps = std::max(5, std::stoi(value()));
    } else if (arg == "--json") {
      json_path = value();
    } else {
      std::cerr << "usage: ir-rnn-while-bench [--steps T] [--batch B] [--input I] [--hidden H] [--reps R>=5] "
                   "[--json FILE]\n";
      return 2;
    }
  }
  Feeds feeds{{"t0", NDArray::Scalar<int32_t>(0)},
              {"n", NDArray::Scalar<int32_t>(static_cast<int32_t>(z.steps))},
              {"h0", Random(Shape{z.batch, z.hidden}, 1, 0.5f)},
              {"xs", Random(Shape{z.steps, z.batch, z.input}, 2, 1.f)},
              {"outs0", Random(Shape{z.steps, z.batch, z.hidden}, 3, 0.f)},
              {"W", Random(Shape{z.input, z.hidden}, 4, 0.2f)},
              {"U", Random(Shape{z.hidden, z.hidden}, 5, 0.1f)},
              {"b", Random(Shape{z.hidden}, 6, 0.1f)}};
  const std::vector<std::string> wrt = {"h0", "W", "U", "b"};
  std::vector<NodeEntry> loop = WhileRnn(), unrolled = UnrolledRnn(z.steps);
  struct Row {
    std::string graph, pass;
    bool fusion;
    Timing timing;
  };
  std::vector<Row> rows;
  for (const std::string pass : {"forward", "forward+gradient"}) {
    for (const std::string graph : {"while_loop", "unrolled"}) {
      const std::vector<NodeEntry>& forward = graph == "while_loop" ? loop : unrolled;
      std::vector<NodeEntry> fetches = pass == "forward" ? forward : WithGradients(forward, Inputs(forward, wrt));
      for (bool fusion : {false, true}) rows.push_back({graph, pass, fusion, Measure(fetches, feeds, fusion, reps)});
    }
  }
  std::printf("RNN h = tanh(x_t W + h U + b): T=%lld B=%lld I=%lld H=%lld, CPU, median of %d steady runs\n",
              static_cast<long long>(z.steps), static_cast<long long>(z.batch), static_cast<long long>(z.input),
              static_cast<long long>(z.hidden), reps);
  std::printf("%-18s %-11s %-8s %12s %12s\n", "pass", "graph", "fusion", "bind_ms", "step_ms");
  std::string json = "{\"steps\":" + std::to_string(z.steps) + ",\"batch\":" + std::to_string(z.batch) +
                     ",\"input\":" + std::to_string(z.input) + ",\"hidden\":" + std::to_string(z.hidden) +
                     ",\"results\":[";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::printf("%-18s %-11s %-8s %12.1f %12.2f\n", r.pass.c_str(), r.graph.c_str(), r.fusion ? "fused" : "unfused",
                r.timing.bind_ms, r.timing.step_ms);
    json += std::string(i ? "," : "") + "{\"pass\":\"" + r.pass + "\",\"graph\":\"" + r.graph +
            "\",\"fusion\":" + (r.fusion ? "true" : "false") + ",\"bind_ms\":" + std::to_string(r.timing.bind_ms) +
            ",\"step_ms\":" + std::to_string(r.timing.step_ms) + "}";
  }
  json += "]}";
  if (!json_path.empty()) std::ofstream(json_path) << json << "\n";
  return 0;
}
