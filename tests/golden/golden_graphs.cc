/*!
 * \file golden_graphs.cc
 * \brief The graphs of the golden kernel corpus. Shapes are small except where a code path
 * needs a long axis (group reductions); node names are numbered per graph, so every build of a
 * graph is the same.
 */
#include "golden/golden_graphs.h"

#include <algorithm>
#include <utility>

#include "ir/ast.h"
#include "ir/autodiff.h"
#include "ir/op.h"
#include "ir/pass.h"

namespace ir {
namespace golden {
namespace {

using Attrs = std::map<std::string, std::string>;

/*! \brief Builds one graph: inputs with their specs, nodes named "<op>_<n>". */
class Builder {
 public:
  explicit Builder(std::string name) { graph_.name = std::move(name); }

  NodeEntry Input(const std::string& name, Shape shape, DType dtype = DType::kFloat32) {
    graph_.inputs[name] = InputSpec{std::move(shape), dtype};
    return NodeEntry{Node::CreateVariable(name), 0};
  }
  NodeEntry Op(const std::string& op, std::vector<NodeEntry> inputs, const Attrs& attrs = {}) {
    return MakeNode(op, StrCat(op, "_", counter_++), std::move(inputs), attrs);
  }
  NodeEntry Scalar(const std::string& op, NodeEntry x, const std::string& scalar) {
    return Op(op, {std::move(x)}, {{"scalar", scalar}});
  }
  GoldenGraph Finish(std::vector<NodeEntry> outputs) {
    graph_.outputs = std::move(outputs);
    return std::move(graph_);
  }

 private:
  GoldenGraph graph_;
  int counter_ = 0;
};

/*! \brief Whether an op's argument list names `key` (a parameter the enumeration can default). */
bool HasArgument(const ir::Op* op, const std::string& key) {
  return std::any_of(op->arguments.begin(), op->arguments.end(),
                     [&](const ArgumentInfo& arg) { return arg.name == key; });
}

/*!
 * \brief Op `name` applied to `arity` inputs of `shape`, with the first input dtype its type
 * inference accepts (float32, else bool for logical ops); throws the float32 attempt's error.
 */
GoldenGraph EnumeratedGraph(const std::string& graph_name, const std::string& name, uint32_t arity,
                            const Shape& shape) {
  bool has_scalar = HasArgument(Op::Get(name), "scalar");
  std::string first_error;
  for (DType dtype : {DType::kFloat32, DType::kBool}) {
    Attrs attrs;
    if (has_scalar) attrs["scalar"] = dtype == DType::kBool ? "1" : "2";  // a value of the dtype
    Builder b(graph_name);
    std::vector<NodeEntry> inputs;
    for (uint32_t i = 0; i < arity; ++i) inputs.push_back(b.Input(StrCat("x", i), shape, dtype));
    GoldenGraph graph = b.Finish({b.Op(name, inputs, attrs)});
    try {
      ApplyPasses(WithInputs(graph), {"InferShape", "InferType"});
      graph.enumerated = true;
      return graph;
    } catch (const Error& err) {
      if (first_error.empty()) first_error = err.what();
    }
  }
  throw Error(first_error);
}

/*!
 * \brief (a, b) One graph per registered op with FCodeGen, `arity` inputs of `shape` and one
 * output whose parameters have defaults (or are a "scalar": 2, or 1 for bool), sorted by op name: "<prefix><op>".
 */
void AddEnumerated(uint32_t arity, const std::string& prefix, const Shape& shape, std::vector<GoldenGraph>* graphs,
                   std::vector<std::string>* skipped) {
  const auto* codegen = Op::FindAttr<FCodeGen>("FCodeGen");
  if (codegen == nullptr) return;
  for (const std::string& name : Op::ListNames()) {
    const ir::Op* op = Op::Get(name);
    if (name[0] == '_' || !codegen->count(op) || op->get_num_inputs || op->num_inputs != arity || op->get_num_outputs ||
        op->num_outputs != 1) {
      continue;
    }
    try {
      graphs->push_back(EnumeratedGraph(prefix + name, name, arity, shape));
    } catch (const Error& err) {
      std::string why = err.what();
      skipped->push_back(StrCat(name, ": ", why.substr(0, why.find('\n'))));
    }
  }
}

/*! \brief max(((a + b) * a - b) * 3, a): the arithmetic graph built for several dtypes. */
GoldenGraph Arithmetic(DType dtype) {
  Builder b(StrCat("arith_", DTypeName(dtype)));
  NodeEntry x = b.Input("a", Shape{4, 3}, dtype), y = b.Input("b", Shape{4, 3}, dtype);
  NodeEntry t = b.Op("subtract", {b.Op("multiply", {b.Op("add", {x, y}), x}), y});
  return b.Finish({b.Op("maximum", {b.Scalar("multiply_scalar", t, "3"), x})});
}

/*! \brief (b) Broadcasts, scalar operands, comparisons and select, other dtypes. */
void AddBroadcasts(std::vector<GoldenGraph>* graphs) {
  {
    Builder b("broadcast_add");
    graphs->push_back(b.Finish({b.Op("add", {b.Input("a", Shape{4, 1, 3}), b.Input("b", Shape{5, 3})})}));
  }
  {
    Builder b("broadcast_chain");
    NodeEntry scaled = b.Op("multiply", {b.Input("x", Shape{4, 5, 3}), b.Input("w", Shape{3})});
    graphs->push_back(b.Finish({b.Op("tanh", {b.Op("add", {scaled, b.Input("c", Shape{4, 1, 1})})})}));
  }
  {
    Builder b("scalar_ops");
    NodeEntry x = b.Input("x", Shape{4, 3});
    for (const auto& op_scalar : std::vector<std::pair<std::string, std::string>>{{"add_scalar", "1.5"},
                                                                                  {"multiply_scalar", "2"},
                                                                                  {"rsubtract_scalar", "1"},
                                                                                  {"divide_scalar", "3"},
                                                                                  {"rdivide_scalar", "1"},
                                                                                  {"power_scalar", "2"},
                                                                                  {"maximum_scalar", "0"},
                                                                                  {"minimum_scalar", "6"}}) {
      x = b.Scalar(op_scalar.first, x, op_scalar.second);
    }
    graphs->push_back(b.Finish({x}));
  }
  {
    Builder b("compare_scalar");
    NodeEntry x = b.Input("x", Shape{4, 3});
    graphs->push_back(b.Finish({b.Scalar("greater_scalar", x, "0"), b.Scalar("equal_scalar", x, "1"),
                                b.Scalar("less_equal_scalar", x, "-1")}));
  }
  {
    Builder b("compare_select");
    NodeEntry x = b.Input("a", Shape{4, 3}), y = b.Input("b", Shape{3});
    graphs->push_back(b.Finish({b.Op("where", {b.Op("greater", {x, y}), x, y})}));
  }
  {
    Builder b("clip_cast");
    NodeEntry c = b.Op("clip", {b.Input("x", Shape{4, 3})}, {{"a_min", "-1"}, {"a_max", "1"}});
    graphs->push_back(b.Finish({b.Op("cast", {b.Scalar("multiply_scalar", c, "100")}, {{"dtype", "int32"}})}));
  }
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kInt32}) graphs->push_back(Arithmetic(dtype));
}

/*! \brief One reduction `kind` of [6, 5, 4] over axis 0, the last, the middle, (0, 2) and all. */
GoldenGraph ReduceAxes(const std::string& kind) {
  Builder b("reduce_" + kind);
  NodeEntry x = b.Input("x", Shape{6, 5, 4});
  std::vector<NodeEntry> outputs;
  for (const char* axis : {"0", "2", "1", "(0, 2)"}) outputs.push_back(b.Op(kind, {x}, {{"axis", axis}}));
  outputs.push_back(b.Op(kind, {x}));
  return b.Finish(outputs);
}

/*! \brief `kind` over `axis` ("" for all) of a long input: the group (block) reduction paths. */
GoldenGraph LongReduction(const std::string& name, const Shape& shape, const std::string& axis) {
  Builder b(name);
  NodeEntry x = b.Input("x", shape);
  Attrs attrs;
  if (!axis.empty()) attrs["axis"] = axis;
  return b.Finish({b.Op("sum", {x}, attrs), b.Op("max", {x}, attrs)});
}

/*! \brief (c) Reductions: every kind and axis set, keepdims, prologues, long reduced axes. */
void AddReductions(std::vector<GoldenGraph>* graphs) {
  for (const char* kind : {"max", "mean", "min", "prod", "sum"}) graphs->push_back(ReduceAxes(kind));
  {
    Builder b("reduce_keepdims");
    NodeEntry x = b.Input("x", Shape{6, 5, 4});
    graphs->push_back(b.Finish({b.Op("sum", {x}, {{"axis", "1"}, {"keepdims", "true"}}),
                                b.Op("max", {x}, {{"axis", "(0, 2)"}, {"keepdims", "true"}}),
                                b.Op("mean", {x}, {{"keepdims", "true"}})}));
  }
  {
    Builder b("reduce_prologue");
    NodeEntry x = b.Input("x", Shape{6, 5}), y = b.Input("y", Shape{6, 5});
    graphs->push_back(b.Finish({b.Op("sum", {b.Op("square", {x})}, {{"axis", "1"}}),
                                b.Op("mean", {b.Op("multiply", {x, y})}, {{"axis", "0"}})}));
  }
  graphs->push_back(LongReduction("reduce_long_rows", Shape{4, 65536}, "1"));
  graphs->push_back(LongReduction("reduce_long_cols", Shape{65536, 4}, "0"));
  graphs->push_back(LongReduction("reduce_long_all", Shape{4, 65536}, ""));
}

/*! \brief (d) Softmax as TensorFlow expands it; softmax cross-entropy and its gradient. */
void AddSoftmax(std::vector<GoldenGraph>* graphs) {
  {
    Builder b("softmax_tf");
    NodeEntry x = b.Input("x", Shape{8, 10});
    NodeEntry e = b.Op("exp", {b.Op("subtract", {x, b.Op("max", {x}, {{"axis", "1"}, {"keepdims", "true"}})})});
    graphs->push_back(b.Finish({b.Op("divide", {e, b.Op("sum", {e}, {{"axis", "1"}, {"keepdims", "true"}})})}));
  }
  {
    Builder b("softmax_cross_entropy");
    NodeEntry logits = b.Input("logits", Shape{8, 10});
    NodeEntry ce = b.Op("softmax_cross_entropy_with_logits", {logits, b.Input("labels", Shape{8, 10})});
    NodeEntry loss = b.Op("mean", {ce});
    graphs->push_back(b.Finish({loss, Gradients({loss}, {logits})[0]}));
  }
  {
    // Row groups: layer norm and its dx written op by op, one kernel each.
    Builder b("layer_norm_rows");
    NodeEntry x = b.Input("x", Shape{6, 20}), gamma = b.Input("gamma", Shape{20}), dy = b.Input("dy", Shape{6, 20});
    auto row_mean = [&](NodeEntry v) { return b.Op("mean", {v}, {{"axis", "1"}, {"keepdims", "true"}}); };
    NodeEntry centered = b.Op("subtract", {x, row_mean(x)});
    NodeEntry rstd = b.Op("rsqrt", {b.Scalar("add_scalar", row_mean(b.Op("square", {centered})), "1e-5")});
    NodeEntry xhat = b.Op("multiply", {centered, rstd});
    NodeEntry g = b.Op("multiply", {dy, gamma});
    NodeEntry proj = b.Op("multiply", {xhat, row_mean(b.Op("multiply", {g, xhat}))});
    NodeEntry dx = b.Op("multiply", {b.Op("subtract", {b.Op("subtract", {g, row_mean(g)}), proj}), rstd});
    graphs->push_back(b.Finish({b.Op("multiply", {xhat, gamma}), dx}));
  }
  {
    Builder b("softmax_xent_rows");
    NodeEntry x = b.Input("x", Shape{8, 10}), y = b.Input("y", Shape{8, 10});
    NodeEntry shifted = b.Op("subtract", {x, b.Op("max", {x}, {{"axis", "1"}, {"keepdims", "true"}})});
    NodeEntry lse = b.Op("log", {b.Op("sum", {b.Op("exp", {shifted})}, {{"axis", "1"}, {"keepdims", "true"}})});
    NodeEntry logp = b.Op("subtract", {shifted, lse});
    NodeEntry loss = b.Op("negative", {b.Op("sum", {b.Op("multiply", {y, logp})}, {{"axis", "1"}})});
    graphs->push_back(b.Finish({loss, b.Op("subtract", {b.Op("exp", {logp}), y})}));
  }
}

/*! \brief (e) conv2d NHWC, bias_add, relu, max and average pooling; gradients of w, b and x. */
GoldenGraph ConvNet() {
  Builder b("convnet_train");
  NodeEntry x = b.Input("x", Shape{2, 8, 8, 3}), w = b.Input("w", Shape{3, 3, 3, 4}), bias = b.Input("b", Shape{4});
  NodeEntry h = b.Op("relu", {b.Op("bias_add", {b.Op("conv2d", {x, w}, {{"padding", "SAME"}}), bias})});
  h = b.Op("max_pool2d", {h}, {{"ksize", "2"}, {"strides", "2"}, {"padding", "SAME"}});
  h = b.Op("avg_pool2d", {h}, {{"ksize", "2"}, {"strides", "2"}});
  NodeEntry loss = b.Op("mean", {b.Op("square", {h})});
  std::vector<NodeEntry> outputs{loss};
  for (const NodeEntry& g : Gradients({loss}, {w, bias, x})) outputs.push_back(g);
  return b.Finish(outputs);
}

/*!
 * \brief (e') Epilogues of matmul: bias, relu and a residual add (the anchor's value written in
 * place), and a dense layer's training gradients (relu_grad after the matmul gradient, the
 * forward matmul's value kept for the tanh's gradient).
 */
void AddEpilogues(std::vector<GoldenGraph>* graphs) {
  {
    Builder b("epilogue_dense_residual");
    NodeEntry x = b.Input("x", Shape{8, 16}), w = b.Input("w", Shape{16, 16}), bias = b.Input("b", Shape{16});
    NodeEntry h = b.Op("relu", {b.Op("bias_add", {b.Op("matmul", {x, w}), bias})});
    graphs->push_back(b.Finish({b.Op("add", {b.Op("matmul", {h, w}), x})}));
  }
  {
    Builder b("epilogue_dense_train");
    NodeEntry x = b.Input("x", Shape{8, 12}), w1 = b.Input("w1", Shape{12, 6}), w2 = b.Input("w2", Shape{6, 3});
    NodeEntry h = b.Op("relu", {b.Op("matmul", {x, w1})});
    NodeEntry loss = b.Op("mean", {b.Op("tanh", {b.Op("matmul", {h, w2})})});
    std::vector<NodeEntry> outputs{loss};
    for (const NodeEntry& g : Gradients({loss}, {w1, w2})) outputs.push_back(g);
    graphs->push_back(b.Finish(outputs));
  }
}

/*! \brief A LeNet forward pass and loss: its loss, trained variables (w1, b1, ... w4, b4). */
struct LeNet {
  NodeEntry loss;
  std::vector<NodeEntry> params;
  std::vector<Shape> shapes;
};

/*!
 * \brief Two 5x5 SAME conv + relu + 2x2 max-pool blocks of c1 and c2 channels, dense layers of
 * `hidden` and 10 units, mean sparse softmax cross-entropy, on batch 8 of 28x28 images.
 */
LeNet LeNetLoss(Builder* b, int64_t c1, int64_t c2, int64_t hidden) {
  const int64_t batch = 8, flat = 7 * 7 * c2;
  LeNet net;
  auto param = [&](const std::string& name, Shape shape) {
    net.shapes.push_back(shape);
    net.params.push_back(b->Input(name, std::move(shape)));
    return net.params.back();
  };
  auto conv_block = [&](NodeEntry in, NodeEntry w, NodeEntry bias) {
    NodeEntry act = b->Op("relu", {b->Op("bias_add", {b->Op("conv2d", {in, w}, {{"padding", "SAME"}}), bias})});
    return b->Op("max_pool2d", {act}, {{"ksize", "2"}, {"strides", "2"}, {"padding", "SAME"}});
  };
  NodeEntry h = b->Input("x", Shape{batch, 28, 28, 1});
  h = conv_block(h, param("w1", Shape{5, 5, 1, c1}), param("b1", Shape{c1}));
  h = conv_block(h, param("w2", Shape{5, 5, c1, c2}), param("b2", Shape{c2}));
  h = b->Op("reshape", {h}, {{"shape", StrCat("(-1, ", flat, ")")}});
  h = b->Op("relu",
            {b->Op("bias_add", {b->Op("matmul", {h, param("w3", Shape{flat, hidden})}), param("b3", {hidden})})});
  NodeEntry logits = b->Op("bias_add", {b->Op("matmul", {h, param("w4", Shape{hidden, 10})}), param("b4", Shape{10})});
  NodeEntry labels = b->Input("labels", Shape{batch}, DType::kInt32);
  net.loss = b->Op("mean", {b->Op("sparse_softmax_cross_entropy_with_logits", {logits, labels})});
  return net;
}

/*! \brief (f) The LeNet training step of the tests (tests/cuda/cuda_test_util.cc): SGD by assign_sub. */
GoldenGraph LeNetSGD() {
  Builder b("lenet_train_sgd");
  LeNet net = LeNetLoss(&b, 6, 16, 120);
  std::vector<NodeEntry> grads = Gradients({net.loss}, net.params), updates;
  for (size_t i = 0; i < grads.size(); ++i) {
    updates.push_back(b.Op("assign_sub", {net.params[i], b.Scalar("multiply_scalar", grads[i], "0.01")}));
  }
  return b.Finish({net.loss, b.Op("group", updates)});
}

/*! \brief (f) The demo trainer's step (tinyflow_demo/train.py: LeNet 16/32/256, tinyflow's Adam). */
GoldenGraph LeNetAdam() {
  Builder b("lenet_train_adam");
  LeNet net = LeNetLoss(&b, 16, 32, 256);
  std::vector<NodeEntry> grads = Gradients({net.loss}, net.params), updates;
  NodeEntry step = b.Input("adam_step", Shape::Scalar());
  NodeEntry t = b.Op("assign_add", {step, b.Op("ones_like", {step})});
  NodeEntry c2 = b.Op("sqrt", {b.Scalar("rsubtract_scalar", b.Scalar("rpower_scalar", t, "0.999"), "1")});
  NodeEntry c1 = b.Scalar("rsubtract_scalar", b.Scalar("rpower_scalar", t, "0.9"), "1");
  NodeEntry lr_t = b.Op("divide", {b.Scalar("multiply_scalar", c2, "0.002"), c1});
  for (size_t i = 0; i < grads.size(); ++i) {
    const NodeEntry& w = net.params[i];
    const std::string& name = w.node->attrs.name;
    NodeEntry m = b.Input(name + "_m", net.shapes[i]), v = b.Input(name + "_v", net.shapes[i]);
    NodeEntry new_m =
        b.Op("add", {b.Scalar("multiply_scalar", m, "0.9"), b.Scalar("multiply_scalar", grads[i], "0.1")});
    NodeEntry g2 = b.Scalar("multiply_scalar", b.Op("square", {grads[i]}), "0.001");
    NodeEntry new_v = b.Op("add", {b.Scalar("multiply_scalar", v, "0.999"), g2});
    NodeEntry delta =
        b.Op("divide", {b.Op("multiply", {new_m, lr_t}), b.Scalar("add_scalar", b.Op("sqrt", {new_v}), "1e-08")});
    updates.push_back(b.Op("assign", {m, new_m}));
    updates.push_back(b.Op("assign", {v, new_v}));
    updates.push_back(b.Op("assign", {w, b.Op("subtract", {w, delta})}));
  }
  return b.Finish({net.loss, b.Op("group", updates)});
}

}  // namespace

Graph WithInputs(const GoldenGraph& golden) {
  Graph graph(golden.outputs);
  const IndexedGraph& idx = graph.indexed_graph();
  ShapeVector shapes;
  DTypeVector dtypes;
  for (uint32_t nid : idx.input_nodes()) {
    const InputSpec& spec = golden.inputs.at(idx[nid].source->attrs.name);
    shapes.push_back(spec.shape);
    dtypes.push_back(spec.dtype);
  }
  graph.SetAttr("shape_inputs", shapes);
  graph.SetAttr("dtype_inputs", dtypes);
  return graph;
}

std::vector<GoldenGraph> GoldenGraphs(std::vector<std::string>* skipped) {
  std::vector<GoldenGraph> graphs;
  AddEnumerated(1, "unary_", Shape{4, 8}, &graphs, skipped);
  AddEnumerated(2, "binary_", Shape{4, 8}, &graphs, skipped);
  AddBroadcasts(&graphs);
  AddReductions(&graphs);
  AddSoftmax(&graphs);
  graphs.push_back(ConvNet());
  AddEpilogues(&graphs);
  graphs.push_back(LeNetSGD());
  graphs.push_back(LeNetAdam());
  return graphs;
}

}  // namespace golden
}  // namespace ir
