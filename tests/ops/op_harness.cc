#include "ops/op_harness.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "ir/ast.h"
#include "ir/graph.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/op_kernel.h"
#include "ir/pass.h"

namespace ir {
namespace test {

namespace {

template <typename Fn>
void ForEachElement(const NDArray& array, const Fn& fn) {
  int64_t n = array.Size();
  switch (array.dtype()) {
    case DType::kFloat32:
      for (int64_t i = 0; i < n; ++i) fn(i, array.data<float>()[i]);
      break;
    case DType::kFloat64:
      for (int64_t i = 0; i < n; ++i) fn(i, array.data<double>()[i]);
      break;
    case DType::kInt32:
      for (int64_t i = 0; i < n; ++i) fn(i, array.data<int32_t>()[i]);
      break;
    case DType::kInt64:
      for (int64_t i = 0; i < n; ++i) fn(i, array.data<int64_t>()[i]);
      break;
    case DType::kBool:
      for (int64_t i = 0; i < n; ++i) fn(i, array.data<bool>()[i]);
      break;
    default:
      throw Error("unknown dtype");
  }
}

void SetValue(const NDArray& array, int64_t i, double value) {
  switch (array.dtype()) {
    case DType::kFloat32:
      array.data<float>()[i] = static_cast<float>(value);
      break;
    case DType::kFloat64:
      array.data<double>()[i] = value;
      break;
    case DType::kInt32:
      array.data<int32_t>()[i] = static_cast<int32_t>(value);
      break;
    case DType::kInt64:
      array.data<int64_t>()[i] = static_cast<int64_t>(value);
      break;
    case DType::kBool:
      array.data<bool>()[i] = value != 0;
      break;
    default:
      throw Error("unknown dtype");
  }
}

NDArray Copy(const NDArray& a) { return a.CopyTo(Device::CPU()); }

// Flat index into `in` (broadcast to `out`) of output element `flat`.
int64_t BroadcastIndex(const Shape& in, const Shape& out, int64_t flat) {
  int nd = out.ndim(), offset = nd - in.ndim();
  int64_t index = 0, stride = 1;
  for (int d = nd - 1; d >= 0; --d) {
    int64_t coord = flat % out[d];
    flat /= out[d];
    int di = d - offset;
    if (di >= 0) {
      if (in[di] != 1) index += coord * stride;
      stride *= in[di];
    }
  }
  return index;
}

}  // namespace

NDArray RandomArray(const Shape& shape, DType dtype, uint64_t seed, double lo, double hi) {
  NDArray array(shape, dtype);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < array.Size(); ++i) {
    double v = dist(rng);
    SetValue(array, i, dtype == DType::kBool ? (v > 0.5 * (lo + hi)) : (DTypeIsFloat(dtype) ? v : std::round(v)));
  }
  return array;
}

double ValueAt(const NDArray& array, int64_t i) {
  switch (array.dtype()) {
    case DType::kFloat32:
      return array.data<float>()[i];
    case DType::kFloat64:
      return array.data<double>()[i];
    case DType::kInt32:
      return array.data<int32_t>()[i];
    case DType::kInt64:
      return static_cast<double>(array.data<int64_t>()[i]);
    case DType::kBool:
      return array.data<bool>()[i];
    default:
      throw Error("unknown dtype");
  }
}

std::vector<double> Values(const NDArray& array) {
  std::vector<double> out(array.Size());
  ForEachElement(array, [&](int64_t k, auto v) { out[k] = static_cast<double>(v); });
  return out;
}

namespace {

// Runs every node of `idx` in order; `kernel_of(nid)` may supply a kernel replacing FCompute.
std::vector<NDArray> Evaluate(const IndexedGraph& idx, const std::function<NDArray(const Node*)>& feed,
                              const std::function<FCompute(uint32_t)>& kernel_of, uint64_t seed) {
  std::vector<std::vector<NDArray>> values(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      values[nid] = {feed(node)};
      continue;
    }
    std::vector<NDArray> in;
    std::vector<Shape> in_shapes;
    std::vector<DType> in_types;
    for (const auto& e : idx[nid].inputs) {
      in.push_back(values[e.node_id][e.index]);
      in_shapes.push_back(in.back().shape());
      in_types.push_back(in.back().dtype());
    }
    OpContext ctx;
    ctx.seed = seed * 1000003 + nid;
    const auto* shaped = Op::FindAttr<FComputeShaped>("FComputeShaped");
    if (shaped != nullptr && shaped->count(node->op())) {  // it allocates its outputs as it runs
      values[nid] = (*shaped)[node->op()](ctx, node->attrs, in);
      continue;
    }
    uint32_t nout = node->num_outputs();
    std::vector<Shape> out_shapes(nout);
    std::vector<DType> out_types(nout, DType::kUnknown);
    Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in_shapes, &out_shapes);
    Op::GetAttr<FInferType>("FInferType")[node->op()](node->attrs, &in_types, &out_types);
    std::vector<NDArray> out;
    for (uint32_t i = 0; i < nout; ++i) {
      IR_CHECK(out_shapes[i].is_known() && out_types[i] != DType::kUnknown)
          << "EvalGraph: node '" << node->attrs.name << "' output " << i << " has shape " << out_shapes[i] << " dtype "
          << DTypeName(out_types[i]);
      out.emplace_back(out_shapes[i], out_types[i]);
    }
    FCompute kernel = kernel_of(nid);
    if (!kernel) kernel = Op::GetAttr<FCompute>("FCompute")[node->op()];
    kernel(ctx, node->attrs, in, out);
    values[nid] = out;
  }
  std::vector<NDArray> result;
  for (const auto& e : idx.outputs()) result.push_back(values[e.node_id][e.index]);
  return result;
}

}  // namespace

std::vector<NDArray> EvalGraph(const std::vector<NodeEntry>& outputs, const std::map<const Node*, NDArray>& feeds,
                               uint64_t seed) {
  Graph graph(outputs);
  return Evaluate(
      graph.indexed_graph(),
      [&](const Node* node) {
        auto it = feeds.find(node);
        IR_CHECK(it != feeds.end()) << "EvalGraph: variable '" << node->attrs.name << "' is not fed";
        return it->second;
      },
      [](uint32_t) { return FCompute(); }, seed);
}

std::vector<NDArray> EvalGraphWithKernels(const Graph& graph, const std::map<std::string, NDArray>& feeds) {
  const std::vector<FCompute>* kernels =
      graph.HasAttr("kernels") ? &graph.GetAttr<std::vector<FCompute>>("kernels") : nullptr;
  return Evaluate(
      graph.indexed_graph(),
      [&](const Node* node) {
        auto it = feeds.find(node->attrs.name);
        IR_CHECK(it != feeds.end()) << "EvalGraph: variable '" << node->attrs.name << "' is not fed";
        return it->second;
      },
      [&](uint32_t nid) { return kernels != nullptr ? (*kernels)[nid] : FCompute(); }, 1);
}

std::vector<NDArray> RunOp(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs) {
  std::vector<NodeEntry> entries;
  std::map<const Node*, NDArray> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    entries.push_back(NodeEntry{Node::CreateVariable("in" + std::to_string(i)), 0});
    feeds[entries.back().node.get()] = inputs[i];
  }
  NodePtr node = Node::Create(Op::Get(op), op, attrs, entries);
  std::vector<NodeEntry> outs;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) outs.push_back(NodeEntry{node, i});
  return EvalGraph(outs, feeds);
}

void ExpectNear(const NDArray& actual, const std::vector<double>& expected, double atol, double rtol) {
  ASSERT_EQ(actual.Size(), static_cast<int64_t>(expected.size())) << "shape " << actual.shape();
  std::vector<double> got = Values(actual);
  int reported = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    bool both_nan = std::isnan(got[i]) && std::isnan(expected[i]);
    bool close =
        both_nan || got[i] == expected[i] || std::fabs(got[i] - expected[i]) <= atol + rtol * std::fabs(expected[i]);
    if (!close && reported++ < 5)
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", expected " << expected[i];
  }
}

void ExpectNear(const NDArray& actual, const NDArray& expected, double atol, double rtol) {
  EXPECT_EQ(actual.shape(), expected.shape());
  ExpectNear(actual, Values(expected), atol, rtol);
}

double Gamma(int64_t k, DType dtype) {
  double u = dtype == DType::kFloat32 ? std::ldexp(1.0, -24) : dtype == DType::kFloat64 ? std::ldexp(1.0, -53) : 0;
  return static_cast<double>(k) * u / (1 - static_cast<double>(k) * u);
}

void ExpectWithinSumBound(const NDArray& actual, const std::vector<double>& expected,
                          const std::vector<double>& magnitude, int64_t k) {
  ASSERT_EQ(actual.Size(), static_cast<int64_t>(expected.size())) << "shape " << actual.shape();
  ASSERT_EQ(magnitude.size(), expected.size());
  const double gamma = Gamma(k, actual.dtype()) + Gamma(k, DType::kFloat64);
  std::vector<double> got = Values(actual);
  int reported = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    bool close = (std::isnan(got[i]) && std::isnan(expected[i])) || got[i] == expected[i] ||
                 std::fabs(got[i] - expected[i]) <= gamma * magnitude[i];
    if (!close && reported++ < 5) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", expected " << expected[i] << " within "
                    << gamma * magnitude[i] << " (" << k << " terms of magnitude " << magnitude[i] << ")";
    }
  }
}

void CheckGradient(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs,
                   const GradCheckOptions& options) {
  std::vector<NodeEntry> xs;
  std::map<const Node*, NDArray> feeds;
  std::vector<NDArray> x_values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    xs.push_back(NodeEntry{Node::CreateVariable("x" + std::to_string(i)), 0});
    x_values.push_back(Copy(inputs[i]));
    feeds[xs.back().node.get()] = x_values.back();
  }
  NodePtr node = Node::Create(Op::Get(op), op, attrs, xs);
  std::vector<NodeEntry> outs;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) outs.push_back(NodeEntry{node, i});
  std::vector<NDArray> forward = EvalGraph(outs, feeds);
  // Random weights make L = sum_j <w_j, y_j> sensitive to every output element.
  std::vector<NodeEntry> ograds;
  std::vector<NDArray> weights;
  for (size_t j = 0; j < forward.size(); ++j) {
    bool differentiable = DTypeIsFloat(forward[j].dtype());
    weights.push_back(differentiable ? RandomArray(forward[j].shape(), forward[j].dtype(), 100 + j)
                                     : RandomArray(forward[j].shape(), forward[j].dtype(), 0, 0, 0));
    ograds.push_back(NodeEntry{Node::CreateVariable("ograd" + std::to_string(j)), 0});
    feeds[ograds.back().node.get()] = weights.back();
  }
  auto loss = [&]() {
    std::vector<NDArray> y = EvalGraph(outs, feeds);
    double total = 0;
    for (size_t j = 0; j < y.size(); ++j) {
      if (!DTypeIsFloat(y[j].dtype())) continue;
      std::vector<double> yv = Values(y[j]), wv = Values(weights[j]);
      for (size_t k = 0; k < yv.size(); ++k) total += yv[k] * wv[k];
    }
    return total;
  };
  std::vector<NodeEntry> grads = Op::GetAttr<FGradient>("FGradient")[node->op()](node, ograds);
  ASSERT_EQ(grads.size(), inputs.size()) << "FGradient of " << op << " must return one entry per input";
  std::vector<int> check = options.inputs;
  if (check.empty()) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (DTypeIsFloat(inputs[i].dtype())) check.push_back(static_cast<int>(i));
    }
  }
  for (int i : check) {
    NDArray analytic = grads[i].node ? EvalGraph({grads[i]}, feeds)[0] : NDArray();
    NDArray x = x_values[i];
    int64_t n = x.Size();
    int64_t step = std::max<int64_t>(1, n / options.max_elements);
    for (int64_t k = 0; k < n; k += step) {
      double saved = ValueAt(x, k);
      SetValue(x, k, saved + options.eps);
      double up = loss();
      SetValue(x, k, saved - options.eps);
      double down = loss();
      SetValue(x, k, saved);
      double numeric = (up - down) / (2 * options.eps);
      double got = analytic.defined() ? ValueAt(analytic, k) : 0.0;
      EXPECT_NEAR(got, numeric, options.atol + options.rtol * std::fabs(numeric))
          << op << ": d/d(input " << i << ")[" << k << "]";
    }
  }
}

void CheckCodeGen(const std::string& op, const Attrs& attrs, const std::vector<NDArray>& inputs, double tol) {
  std::vector<NDArray> expected = RunOp(op, attrs, inputs);
  std::vector<ast::Expr> vars;
  for (size_t i = 0; i < inputs.size(); ++i) vars.push_back(ast::Var("in" + std::to_string(i), inputs[i].dtype()));
  NodeAttrs node_attrs = Node::Create(Op::Get(op), op, attrs,
                                      std::vector<NodeEntry>(inputs.size(), NodeEntry{Node::CreateVariable("v"), 0}))
                             ->attrs;
  std::vector<ast::Expr> exprs = Op::GetAttr<FCodeGen>("FCodeGen")[Op::Get(op)](node_attrs, vars);
  ASSERT_EQ(exprs.size(), expected.size()) << op << ": FCodeGen gave no expression for these dtypes";
  for (size_t j = 0; j < exprs.size(); ++j) {
    ASSERT_EQ(exprs[j]->dtype, expected[j].dtype()) << op << " output " << j;
    const Shape& out_shape = expected[j].shape();
    std::vector<double> want = Values(expected[j]);
    for (int64_t k = 0; k < expected[j].Size(); ++k) {
      double got = ast::Evaluate(exprs[j], [&](const std::string& name, int64_t) {
        size_t i = std::stoul(name.substr(2));
        return ValueAt(inputs[i], BroadcastIndex(inputs[i].shape(), out_shape, k));
      });
      double limit = DTypeIsFloat(expected[j].dtype()) ? tol * (1 + std::fabs(want[k])) : 0;
      if (std::isnan(want[k])) {
        EXPECT_TRUE(std::isnan(got)) << op << " element " << k;
      } else {
        EXPECT_NEAR(got, want[k], limit) << op << " element " << k << " of output " << j << ": "
                                         << ast::ToString(exprs[j]);
      }
    }
  }
}

NodeEntry Var(const std::string& name) { return NodeEntry{Node::CreateVariable(name), 0}; }

NodeEntry Apply(const std::string& op, const std::string& name, std::vector<NodeEntry> inputs,
                const std::map<std::string, std::string>& attrs, uint32_t index) {
  return MakeNode(op, name, std::move(inputs), attrs, index);
}

Graph InferFromFeeds(std::vector<NodeEntry> outputs, const std::map<std::string, NDArray>& feeds) {
  Graph graph(std::move(outputs));
  const IndexedGraph& idx = graph.indexed_graph();
  ShapeVector shapes;
  DTypeVector dtypes;
  for (uint32_t nid : idx.input_nodes()) {
    const NDArray& value = feeds.at(idx[nid].source->attrs.name);
    shapes.push_back(value.shape());
    dtypes.push_back(value.dtype());
  }
  graph.SetAttr("shape_inputs", shapes);
  graph.SetAttr("dtype_inputs", dtypes);
  return ApplyPasses(graph, {"InferShape", "InferType"});
}

Graph Fuse(Graph graph, int fmax) {
  graph.SetAttr("fusion.fmax", fmax);
  return ApplyPasses(graph, {"Fusion"});
}

}  // namespace test
}  // namespace ir
