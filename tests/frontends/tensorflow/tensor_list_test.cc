/*!
 * \file tensor_list_test.cc
 * \brief TF2 TensorLists, in the layout TF 2.x writes them: keras' LSTM and GRU layers
 * (backend.rnn's while_loop over TensorListFromTensor / Reserve / GetItem / SetItem / Stack, the
 * body a library function) against step-by-step references of the cells, fused and unfused; a
 * tf.TensorArray of unknown element shape written in a loop; lists growing with PushBack and
 * shrinking with PopBack; Length, ElementShape, Gather, Scatter, Concat and Split; and the errors.
 */
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>

#include "ir/autodiff.h"
#include "ir/runtime.h"
#include "ir_tf/import.h"
#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace {

using namespace test::pbtxt;  // NOLINT
using test::ExpectClose;
using test::RunText;

constexpr int64_t kSteps = 4, kBatch = 2, kIn = 3, kUnits = 2;

std::string Int(const std::string& key, int64_t v) { return Attr(key, "i: " + std::to_string(v)); }
std::string ElementType() { return Type("DT_FLOAT", "element_dtype"); }
std::string ShapeType() { return Type("DT_INT32", "shape_type"); }
std::string Slice(const std::string& name, const std::string& input, int64_t b, int64_t e, const std::string& dtype) {
  return Ints(name + "/stack", {b}) + Ints(name + "/stack_1", {e}) + Ints(name + "/stack_2", {1}) +
         Node(name, "StridedSlice", {input, name + "/stack", name + "/stack_1", name + "/stack_2"},
              Type(dtype) + Type("DT_INT32", "Index") + Int("begin_mask", 0) + Int("end_mask", 0) +
                  Int("ellipsis_mask", 0) + Int("new_axis_mask", 0) + Int("shrink_axis_mask", 1));
}
std::string TypeList(const std::string& key, const std::vector<std::string>& types) {
  std::string list = "list { ";
  for (const std::string& t : types) list += "type: " + t + " ";
  return Attr(key, list + "}");
}
std::string ShapeList(const std::vector<std::vector<int64_t>>& shapes) {
  std::string list = "list { ";
  for (const auto& s : shapes) list += ShapeProto(s) + " ";
  return Attr("output_shapes", list + "}");
}
std::vector<double> Seq(int64_t n, double scale, double offset) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(scale * static_cast<double>((i * 7) % 11) + offset);
  return v;
}
double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ---------------------------------------------------------------- keras recurrent layers

/*! \brief A keras cell: its weights (Consts), its body nodes (x: the step's input, h, c: states) and its reference. */
struct Cell {
  std::string name;
  int64_t gates;             // kernel columns per unit
  bool has_c;                // LSTM: two states
  std::string body;          // nodes computing h (and c) from x, h, c and the weights KERNEL, RECURRENT, BIAS
  std::string h_out, c_out;  // their outputs "node:out:i"
  std::vector<int64_t> bias_dims;
  /*! \brief One step: x [B, I], h, c [B, U] -> new h, c. */
  std::function<void(const std::vector<double>&, std::vector<double>*, std::vector<double>*)> step;
};

/*! \brief row-major a [n, k] times b [k, m]. */
std::vector<double> MatMul(const std::vector<double>& a, const std::vector<double>& b, int64_t n, int64_t k,
                           int64_t m) {
  std::vector<double> out(static_cast<size_t>(n * m), 0.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t t = 0; t < k; ++t) out[i * m + j] += a[i * k + t] * b[t * m + j];
  return out;
}

const std::vector<double>& Kernel(int64_t gates) {
  static std::map<int64_t, std::vector<double>> k;
  if (!k.count(gates)) k[gates] = Seq(kIn * gates * kUnits, 0.1, -0.45);
  return k[gates];
}
const std::vector<double>& Recurrent(int64_t gates) {
  static std::map<int64_t, std::vector<double>> r;
  if (!r.count(gates)) r[gates] = Seq(kUnits * gates * kUnits, -0.08, 0.35);
  return r[gates];
}
const std::vector<double>& Bias(int64_t size) {
  static std::map<int64_t, std::vector<double>> b;
  if (!b.count(size)) b[size] = Seq(size, 0.05, -0.2);
  return b[size];
}

/*! \brief keras' standard_lstm step: z = x K + h R + b; i, f, c~, o = split(z); c = f c + i tanh(c~); h = o tanh(c). */
Cell Lstm() {
  Cell cell{"lstm", 4, true, "", "mul_2:z:0", "add_1:z:0", {4 * kUnits}, nullptr};
  cell.body =
      Node("MatMul", "MatMul", {"x", "KERNEL"}, Type()) + Node("MatMul_1", "MatMul", {"h", "RECURRENT"}, Type()) +
      Node("add", "AddV2", {"MatMul:product:0", "MatMul_1:product:0"}, Type()) +
      Node("BiasAdd", "BiasAdd", {"add:z:0", "BIAS"}, Type()) + Ints("split/split_dim", {1}, true) +
      Node("split", "Split", {"split/split_dim:output:0", "BiasAdd:output:0"}, Type() + Int("num_split", 4)) +
      Node("Sigmoid", "Sigmoid", {"split:output:0"}, Type()) +
      Node("Sigmoid_1", "Sigmoid", {"split:output:1"}, Type()) + Node("mul", "Mul", {"Sigmoid_1:y:0", "c"}, Type()) +
      Node("Tanh", "Tanh", {"split:output:2"}, Type()) + Node("mul_1", "Mul", {"Sigmoid:y:0", "Tanh:y:0"}, Type()) +
      Node("add_1", "AddV2", {"mul:z:0", "mul_1:z:0"}, Type()) +
      Node("Sigmoid_2", "Sigmoid", {"split:output:3"}, Type()) + Node("Tanh_1", "Tanh", {"add_1:z:0"}, Type()) +
      Node("mul_2", "Mul", {"Sigmoid_2:y:0", "Tanh_1:y:0"}, Type());
  cell.step = [](const std::vector<double>& x, std::vector<double>* h, std::vector<double>* c) {
    std::vector<double> z = MatMul(x, Kernel(4), kBatch, kIn, 4 * kUnits);
    std::vector<double> zr = MatMul(*h, Recurrent(4), kBatch, kUnits, 4 * kUnits);
    for (int64_t b = 0; b < kBatch; ++b) {
      for (int64_t u = 0; u < kUnits; ++u) {
        auto gate = [&](int g) {
          size_t at = static_cast<size_t>(b * 4 * kUnits + g * kUnits + u);
          return z[at] + zr[at] + Bias(4 * kUnits)[g * kUnits + u];
        };
        size_t at = static_cast<size_t>(b * kUnits + u);
        (*c)[at] = Sigmoid(gate(1)) * (*c)[at] + Sigmoid(gate(0)) * std::tanh(gate(2));
        (*h)[at] = Sigmoid(gate(3)) * std::tanh((*c)[at]);
      }
    }
  };
  return cell;
}

/*!
 * \brief keras' standard_gru step (reset_after): x K + b0 and h R + b1 split into z, r, h~;
 * z = sig(xz + rz), r = sig(xr + rr), hh = tanh(xh + r * rh), h = z h + (1 - z) hh.
 */
Cell Gru() {
  Cell cell{"gru", 3, false, "", "add_3:z:0", "", {2, 3 * kUnits}, nullptr};
  cell.body =
      Node("unstack", "Unpack", {"BIAS"}, Type() + Int("num", 2) + Int("axis", 0)) +
      Node("MatMul", "MatMul", {"x", "KERNEL"}, Type()) +
      Node("BiasAdd", "BiasAdd", {"MatMul:product:0", "unstack:output:0"}, Type()) +
      Ints("split/split_dim", {1}, true) +
      Node("split", "Split", {"split/split_dim:output:0", "BiasAdd:output:0"}, Type() + Int("num_split", 3)) +
      Node("MatMul_1", "MatMul", {"h", "RECURRENT"}, Type()) +
      Node("BiasAdd_1", "BiasAdd", {"MatMul_1:product:0", "unstack:output:1"}, Type()) +
      Ints("split_1/split_dim", {1}, true) +
      Node("split_1", "Split", {"split_1/split_dim:output:0", "BiasAdd_1:output:0"}, Type() + Int("num_split", 3)) +
      Node("add", "AddV2", {"split:output:0", "split_1:output:0"}, Type()) +
      Node("Sigmoid", "Sigmoid", {"add:z:0"}, Type()) +
      Node("add_1", "AddV2", {"split:output:1", "split_1:output:1"}, Type()) +
      Node("Sigmoid_1", "Sigmoid", {"add_1:z:0"}, Type()) +
      Node("mul", "Mul", {"Sigmoid_1:y:0", "split_1:output:2"}, Type()) +
      Node("add_2", "AddV2", {"split:output:2", "mul:z:0"}, Type()) + Node("Tanh", "Tanh", {"add_2:z:0"}, Type()) +
      Node("mul_1", "Mul", {"Sigmoid:y:0", "h"}, Type()) + Const("sub/x", {}, {1}) +
      Node("sub", "Sub", {"sub/x:output:0", "Sigmoid:y:0"}, Type()) +
      Node("mul_2", "Mul", {"sub:z:0", "Tanh:y:0"}, Type()) +
      Node("add_3", "AddV2", {"mul_1:z:0", "mul_2:z:0"}, Type());
  cell.step = [](const std::vector<double>& x, std::vector<double>* h, std::vector<double>*) {
    std::vector<double> zx = MatMul(x, Kernel(3), kBatch, kIn, 3 * kUnits);
    std::vector<double> zh = MatMul(*h, Recurrent(3), kBatch, kUnits, 3 * kUnits);
    const std::vector<double>& bias = Bias(6 * kUnits);
    std::vector<double> next(h->size());
    for (int64_t b = 0; b < kBatch; ++b) {
      for (int64_t u = 0; u < kUnits; ++u) {
        auto xg = [&](int g) { return zx[b * 3 * kUnits + g * kUnits + u] + bias[g * kUnits + u]; };
        auto hg = [&](int g) { return zh[b * 3 * kUnits + g * kUnits + u] + bias[3 * kUnits + g * kUnits + u]; };
        double z = Sigmoid(xg(0) + hg(0)), r = Sigmoid(xg(1) + hg(1));
        double hh = std::tanh(xg(2) + r * hg(2));
        size_t at = static_cast<size_t>(b * kUnits + u);
        next[at] = z * (*h)[at] + (1 - z) * hh;
      }
    }
    *h = next;
  };
  return cell;
}

/*! \brief A weight: a Const, or a resource variable (VarHandleOp) assigned it by `name`/Assign. */
std::string Weight(const std::string& name, const std::vector<int64_t>& dims, const std::vector<double>& values,
                   bool resource) {
  if (!resource) return Const(name, dims, values);
  return Node(name, "VarHandleOp", {}, Type("DT_FLOAT", "dtype") + Attr("shape", ShapeProto(dims))) +
         Const(name + "/Initializer", dims, values) +
         Node(name + "/Assign", "AssignVariableOp", {name, name + "/Initializer"}, Type("DT_FLOAT", "dtype"));
}

/*! \brief The cell's body nodes reading its weights: the arguments, or ReadVariableOps of them. */
std::string CellBody(const Cell& cell, bool resources) {
  std::string body = cell.body, reads;
  for (const char* w : {"kernel", "recurrent", "bias"}) {
    std::string token = w;
    std::transform(token.begin(), token.end(), token.begin(), ::toupper);
    std::string ref = resources ? std::string(w) + "/ReadVariableOp:value:0" : std::string(w);
    if (resources) reads += Node(std::string(w) + "/ReadVariableOp", "ReadVariableOp", {w}, Type("DT_FLOAT", "dtype"));
    for (size_t at = body.find("'" + token + "'"); at != std::string::npos; at = body.find("'" + token + "'", at)) {
      body.replace(at + 1, token.size(), ref);
    }
  }
  return reads + body;
}

/*!
 * \brief The graph keras' layer writes (backend.rnn, time-major inside, unroll=False): zero states
 * from the batch size, a list of the transposed inputs, a reserved list of outputs, a While whose
 * body reads step `time`, runs the cell and writes its output; then the outputs stacked, the last one
 * and the sequence transposed back. With `resources`, the weights are resource variables captured
 * into the body (keras' generic cell path: ReadVariableOp in the body), else tensors (standard_lstm).
 */
std::string RecurrentGraph(const Cell& cell, bool resources) {
  const std::string p = cell.name + "/";
  int64_t columns = cell.gates * kUnits;
  auto zeros = [&](const std::string& name) {
    return Ints(p + name + "/packed/1", {kUnits}, true) +
           Node(p + name + "/packed", "Pack", {p + "strided_slice", p + name + "/packed/1"},
                Type("DT_INT32") + Int("N", 2) + Int("axis", 0)) +
           Const(p + name + "/Const", {}, {0}) +
           Node(p + name, "Fill", {p + name + "/packed", p + name + "/Const"}, Type() + Type("DT_INT32", "index_type"));
  };
  std::string top =
      Placeholder("inputs", {-1, kSteps, kIn}) + Weight(p + "kernel", {kIn, columns}, Kernel(cell.gates), resources) +
      Weight(p + "recurrent_kernel", {kUnits, columns}, Recurrent(cell.gates), resources) +
      Weight(p + "bias", cell.bias_dims, Bias(cell.bias_dims.size() == 2 ? 6 * kUnits : 4 * kUnits), resources) +
      (resources ? Node("init", "NoOp",
                        {"^" + p + "kernel/Assign", "^" + p + "recurrent_kernel/Assign", "^" + p + "bias/Assign"})
                 : "") +
      Node(p + "Shape", "Shape", {"inputs"}, Type() + Type("DT_INT32", "out_type")) +
      Slice(p + "strided_slice", p + "Shape", 0, 1, "DT_INT32") + zeros("zeros") +
      (cell.has_c ? zeros("zeros_1") : "") + Ints(p + "transpose/perm", {1, 0, 2}) +
      Node(p + "transpose", "Transpose", {"inputs", p + "transpose/perm"}, Type() + Type("DT_INT32", "Tperm")) +
      Node(p + "Shape_1", "Shape", {p + "transpose"}, Type() + Type("DT_INT32", "out_type")) +
      Slice(p + "strided_slice_1", p + "Shape_1", 0, 1, "DT_INT32") +
      Ints(p + "TensorArrayV2/element_shape", {-1, kUnits}) +
      Node(p + "TensorArrayV2", "TensorListReserve", {p + "TensorArrayV2/element_shape", p + "strided_slice_1"},
           ElementType() + ShapeType()) +
      Ints(p + "TensorArrayUnstack/TensorListFromTensor/element_shape", {-1, kIn}) +
      Node(p + "TensorArrayUnstack/TensorListFromTensor", "TensorListFromTensor",
           {p + "transpose", p + "TensorArrayUnstack/TensorListFromTensor/element_shape"},
           ElementType() + ShapeType()) +
      Ints(p + "time", {0}, true) + Ints(p + "while/maximum_iterations", {-1}, true) +
      Ints(p + "while/loop_counter", {0}, true);
  std::vector<std::string> loop_inputs{p + "while/loop_counter", p + "while/maximum_iterations", p + "time",
                                       p + "TensorArrayV2", p + "zeros"};
  std::vector<std::string> types{"DT_INT32", "DT_INT32", "DT_INT32", "DT_VARIANT", "DT_FLOAT"};
  std::vector<std::vector<int64_t>> shapes{{}, {}, {}, {}, {-1, kUnits}};
  if (cell.has_c) {
    loop_inputs.push_back(p + "zeros_1");
    types.push_back("DT_FLOAT");
    shapes.push_back({-1, kUnits});
  }
  for (const char* in :
       {"strided_slice_1", "TensorArrayUnstack/TensorListFromTensor", "kernel", "recurrent_kernel", "bias"}) {
    loop_inputs.push_back(p + in);
  }
  std::string weight = resources ? "DT_RESOURCE" : "DT_FLOAT";
  types.insert(types.end(), {"DT_INT32", "DT_VARIANT", weight, weight, weight});
  if (resources) {
    shapes.insert(shapes.end(), {{}, {}, {}, {}, {}});
  } else {
    shapes.insert(shapes.end(), {{}, {}, {kIn, columns}, {kUnits, columns}, cell.bias_dims});
  }
  top += Node(p + "while", "While", loop_inputs,
              FuncAttr("cond", cell.name + "_while_cond") + FuncAttr("body", cell.name + "_while_body") +
                  TypeList("T", types) + ShapeList(shapes) + Int("parallel_iterations", 32) +
                  Int("_num_original_outputs", static_cast<int64_t>(types.size())) +
                  Attr("_lower_using_switch_merge", "b: true"));
  size_t n = types.size();
  top += Ints(p + "TensorArrayV2Stack/TensorListStack/element_shape", {-1, kUnits}) +
         Node(p + "TensorArrayV2Stack/TensorListStack", "TensorListStack",
              {p + "while:3", p + "TensorArrayV2Stack/TensorListStack/element_shape"},
              ElementType() + Int("num_elements", kSteps)) +
         Slice(p + "strided_slice_2", p + "TensorArrayV2Stack/TensorListStack", -1, 0, "DT_FLOAT") +
         Ints(p + "transpose_1/perm", {1, 0, 2}) +
         Node(p + "transpose_1", "Transpose", {p + "TensorArrayV2Stack/TensorListStack", p + "transpose_1/perm"},
              Type() + Type("DT_INT32", "Tperm"));
  // The functions: args named as while_v2 names them.
  std::vector<std::string> args{"while_loop_counter:DT_INT32", "while_maximum_iterations:DT_INT32",
                                "placeholder:DT_INT32", "placeholder_1:DT_VARIANT", "h:DT_FLOAT"};
  if (cell.has_c) args.push_back("c:DT_FLOAT");
  args.insert(args.end(), {"strided_slice_1_0:DT_INT32", "list_0:DT_VARIANT", "kernel:" + weight, "recurrent:" + weight,
                           "bias:" + weight});
  std::vector<std::string> results;
  std::vector<std::pair<std::string, std::string>> body_rets, cond_rets{{"identity", "Identity:output:0"}};
  std::vector<std::string> passed{"strided_slice_1_0", "list_0", "kernel", "recurrent", "bias"};
  std::vector<std::string> computed{"Identity:output:0", "Identity_1:output:0", "Identity_2:output:0",
                                    "Identity_3:output:0", "Identity_4:output:0"};
  if (cell.has_c) computed.push_back("Identity_5:output:0");
  for (size_t i = 0; i < n; ++i) {
    std::string type = args[i].substr(args[i].find(':') + 1);
    results.push_back("out_" + std::to_string(i) + ":" + type);
    body_rets.push_back({"out_" + std::to_string(i), i < computed.size() ? computed[i] : passed[i - computed.size()]});
  }
  std::string body =
      Ints("TensorArrayV2Read/Const", {-1, kIn}) +
      Node("TensorArrayV2Read/TensorListGetItem", "TensorListGetItem",
           {"list_0", "placeholder", "TensorArrayV2Read/Const:output:0"}, ElementType()) +
      Node("x", "Identity", {"TensorArrayV2Read/TensorListGetItem:item:0"}, Type()) + CellBody(cell, resources) +
      Node("TensorArrayV2Write/TensorListSetItem", "TensorListSetItem", {"placeholder_1", "placeholder", cell.h_out},
           ElementType()) +
      Ints("add_2/y", {1}, true) + Node("add_2x", "AddV2", {"placeholder", "add_2/y:output:0"}, Type("DT_INT32")) +
      Ints("add_3/y", {1}, true) +
      Node("add_3x", "AddV2", {"while_loop_counter", "add_3/y:output:0"}, Type("DT_INT32")) +
      Node("Identity", "Identity", {"add_3x:z:0"}, Type("DT_INT32")) +
      Node("Identity_1", "Identity", {"while_maximum_iterations"}, Type("DT_INT32")) +
      Node("Identity_2", "Identity", {"add_2x:z:0"}, Type("DT_INT32")) +
      Node("Identity_3", "Identity", {"TensorArrayV2Write/TensorListSetItem:output_handle:0"}, Type("DT_VARIANT")) +
      Node("Identity_4", "Identity", {cell.h_out}, Type()) +
      (cell.has_c ? Node("Identity_5", "Identity", {cell.c_out}, Type()) : "");
  std::string cond = Node("Less", "Less", {"placeholder", "strided_slice_1_0"}, Type("DT_INT32")) +
                     Node("Identity", "Identity", {"Less:z:0"}, Type("DT_BOOL"));
  return top + Library({Function(cell.name + "_while_body", args, results, body, body_rets),
                        Function(cell.name + "_while_cond", args, {"identity:DT_BOOL"}, cond, cond_rets)});
}

void ExpectLayerMatchesReference(const Cell& cell, bool resources) {
  std::string graph = RecurrentGraph(cell, resources);
  std::vector<double> x = Seq(kBatch * kSteps * kIn, 0.2, -1.0);  // [B, T, I]
  std::vector<double> h(kBatch * kUnits, 0.0), c(kBatch * kUnits, 0.0), sequence(kBatch * kSteps * kUnits);
  for (int64_t t = 0; t < kSteps; ++t) {
    std::vector<double> xt;
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t i = 0; i < kIn; ++i) xt.push_back(x[(b * kSteps + t) * kIn + i]);
    cell.step(xt, &h, &c);
    for (int64_t b = 0; b < kBatch; ++b)
      for (int64_t u = 0; u < kUnits; ++u) sequence[(b * kSteps + t) * kUnits + u] = h[b * kUnits + u];
  }
  const std::string p = cell.name + "/";
  std::vector<std::string> fetches{p + "strided_slice_2", p + "transpose_1", p + "while:4"};
  if (cell.has_c) fetches.push_back(p + "while:5");
  NDArray inputs = NDArray::FromVector<float>(Shape{kBatch, kSteps, kIn}, std::vector<float>(x.begin(), x.end()));
  for (bool fusion : {false, true}) {
    SCOPED_TRACE(cell.name + (fusion ? " fused" : " unfused"));
    SessionOptions options;
    options.fusion = fusion;
    TFSession session(test::TextModel(graph), options);
    if (resources) session.Run({}, {}, {"init"});
    std::vector<NDArray> out = session.Run({{"inputs", inputs}}, fetches);
    EXPECT_EQ(out[1].shape(), (Shape{kBatch, kSteps, kUnits}));
    ExpectClose(out[0], h, "last output");
    ExpectClose(out[1], sequence, "sequence");
    ExpectClose(out[2], h, "final h");
    if (cell.has_c) ExpectClose(out[3], c, "final c");
  }
}

TEST(TFTensorListTest, KerasLstmWhileMatchesTheReference) {
  ExpectLayerMatchesReference(Lstm(), false);
  ExpectLayerMatchesReference(Lstm(), true);  // weights captured into the body as resource loop variables
}

TEST(TFTensorListTest, KerasGruWhileMatchesTheReference) {
  ExpectLayerMatchesReference(Gru(), false);
  ExpectLayerMatchesReference(Gru(), true);
}

TEST(TFTensorListTest, GradientThroughAnImportedKerasLstm) {
  // d sum(outputs * outputs) / d inputs by the IR's Gradient pass on the imported While, against
  // central differences of the same imported graph.
  ImportOptions options;
  options.outputs = {"lstm/transpose_1"};
  options.feed_shapes = {{"inputs", Shape{kBatch, kSteps, kIn}}};
  Graph graph = ImportGraphDef(test::TextModel(RecurrentGraph(Lstm(), false)).graph_def, options);
  NodeEntry inputs;
  PostOrderDFSVisit(graph.outputs, [&](const NodePtr& node) {
    if (node->is_variable() && node->attrs.name == "inputs") inputs = NodeEntry{node, 0};
  });
  ASSERT_NE(inputs.node, nullptr);
  NodeEntry loss = MakeNode("sum", "loss", {MakeNode("multiply", "sq", {graph.outputs[0], graph.outputs[0]})});
  NodeEntry grad = Gradients({loss}, {inputs})[0];
  Session session;
  std::vector<double> x = Seq(kBatch * kSteps * kIn, 0.2, -1.0);
  auto feed = [](const std::vector<double>& v) {
    return std::unordered_map<std::string, NDArray>{
        {"inputs", NDArray::FromVector<float>(Shape{kBatch, kSteps, kIn}, std::vector<float>(v.begin(), v.end()))}};
  };
  std::vector<double> analytic = test::ToDoubles(session.Run({grad}, feed(x))[0]);
  const double eps = 1e-2;
  for (size_t k = 0; k < x.size(); k += 5) {
    std::vector<double> up = x, down = x;
    up[k] += eps;
    down[k] -= eps;
    double numeric = (test::ToDoubles(session.Run({loss}, feed(up))[0])[0] -
                      test::ToDoubles(session.Run({loss}, feed(down))[0])[0]) /
                     (2 * eps);
    EXPECT_NEAR(analytic[k], numeric, 2e-3 + 1e-2 * std::fabs(numeric)) << "element " << k;
  }
}

// ---------------------------------------------------------------- lists in hand-written loops

/*! \brief A While over (i, list, x) with cond i < n and body `body` (nodes + rets for "i2", "list2", "x2"). */
std::string ListLoop(const std::string& list_in, int64_t n, const std::string& body_nodes,
                     const std::string& list_ret) {
  std::vector<std::string> args{"i:DT_INT32", "list:DT_VARIANT", "x:DT_FLOAT"};
  std::string body = Ints("one", {1}, true) + Node("inc", "AddV2", {"i", "one:output:0"}, Type("DT_INT32")) +
                     Node("fi", "Cast", {"i"}, Type("DT_INT32", "SrcT") + Type("DT_FLOAT", "DstT")) +
                     Node("item", "Mul", {"x", "fi:y:0"}, Type()) + body_nodes;
  std::string cond = Ints("n", {n}, true) + Node("lt", "Less", {"i", "n:output:0"}, Type("DT_INT32"));
  return Ints("i0", {0}, true) +
         Node("loop", "While", {"i0", list_in, "x"},
              FuncAttr("cond", "cond") + FuncAttr("body", "body") +
                  TypeList("T", {"DT_INT32", "DT_VARIANT", "DT_FLOAT"}) + ShapeList({{}, {}, {3}})) +
         Library({Function("body", args, {"i2:DT_INT32", "list2:DT_VARIANT", "x2:DT_FLOAT"}, body,
                           {{"i2", "inc:z:0"}, {"list2", list_ret}, {"x2", "x"}}),
                  Function("cond", args, {"c:DT_BOOL"}, cond, {{"c", "lt:z:0"}})});
}

/*! \brief x * i for i in [from, to) as rows. */
std::vector<double> Rows(const std::vector<float>& x, int from, int to) {
  std::vector<double> out;
  for (int i = from; i < to; ++i)
    for (float v : x) out.push_back(v * i);
  return out;
}

TEST(TFTensorListTest, ATensorArrayOfUnknownElementShapeTakesItsShapeFromTheLoopsWrites) {
  // tf.TensorArray(tf.float32, size=5) (element_shape -1) written in a loop, then stacked.
  std::string graph =
      Placeholder("x", {3}) + Ints("n", {5}, true) + Ints("shape", {-1}, true) +
      Node("ta", "TensorListReserve", {"shape", "n"}, ElementType() + ShapeType()) +
      ListLoop("ta", 5, Node("set", "TensorListSetItem", {"list", "i", "item:z:0"}, ElementType()),
               "set:output_handle:0") +
      Ints("stack/shape", {3}) +
      Node("stack", "TensorListStack", {"loop:1", "stack/shape"}, ElementType() + Int("num_elements", -1));
  std::vector<float> x{1, -2, 0.5f};
  for (bool fusion : {false, true}) {
    NDArray out = RunText(graph, {{"x", NDArray::FromVector<float>(Shape{3}, x)}}, {"stack"}, fusion)[0];
    EXPECT_EQ(out.shape(), (Shape{5, 3}));
    ExpectClose(out, Rows(x, 0, 5), "stacked");
  }
}

TEST(TFTensorListTest, PushBackGrowsAListInALoopAndPopBackTakesItemsOff) {
  // An EmptyTensorList pushed x * i four times (its size changes every iteration), then popped twice.
  std::string graph = Placeholder("x", {3}) + Ints("shape", {3}) + Ints("max", {-1}, true) +
                      Node("empty", "EmptyTensorList", {"shape", "max"}, ElementType() + ShapeType()) +
                      ListLoop("empty", 4, Node("push", "TensorListPushBack", {"list", "item:z:0"}, ElementType()),
                               "push:output_handle:0") +
                      Node("pop", "TensorListPopBack", {"loop:1", "shape"}, ElementType()) +
                      Node("pop_1", "TensorListPopBack", {"pop", "shape"}, ElementType()) +
                      Node("length", "TensorListLength", {"pop_1"}) +
                      Node("stack", "TensorListStack", {"pop_1", "shape"}, ElementType() + Int("num_elements", 2));
  std::vector<float> x{1, -2, 0.5f};
  for (bool fusion : {false, true}) {
    std::vector<NDArray> out = RunText(graph, {{"x", NDArray::FromVector<float>(Shape{3}, x)}},
                                       {"pop:1", "pop_1:1", "length", "stack"}, fusion);
    ExpectClose(out[0], Rows(x, 3, 4), "first pop");
    ExpectClose(out[1], Rows(x, 2, 3), "second pop");
    EXPECT_EQ(out[2].ToVector<int32_t>(), std::vector<int32_t>{2});
    ExpectClose(out[3], Rows(x, 0, 2), "what is left");
  }
}

/*!
 * \brief TF2's gradient of a While (while_v2): the forward loop pushes what the gradient needs onto
 * an accumulator (EmptyTensorList, a loop variable growing every iteration); the gradient loop pops
 * it back in reverse. Here y <- y * w four times, loss = sum(y): dloss/dw = sum_k w^(3-k) y_k.
 */
TEST(TFTensorListTest, WhileGradientAccumulatorsPushForwardAndPopBackward) {
  std::vector<std::string> fwd_args{"i:DT_INT32", "y:DT_FLOAT", "w:DT_FLOAT", "acc:DT_VARIANT"};
  std::vector<std::string> fwd_results{"i2:DT_INT32", "y2:DT_FLOAT", "w2:DT_FLOAT", "acc2:DT_VARIANT"};
  std::string fwd_body = Ints("one", {1}, true) + Node("inc", "AddV2", {"i", "one:output:0"}, Type("DT_INT32")) +
                         Node("push", "TensorListPushBack", {"acc", "y"}, ElementType()) +
                         Node("mul", "Mul", {"y", "w"}, Type());
  std::string fwd_cond = Ints("n", {4}, true) + Node("lt", "Less", {"i", "n:output:0"}, Type("DT_INT32"));
  std::vector<std::string> grad_args{"j:DT_INT32", "g:DT_FLOAT", "w:DT_FLOAT", "acc:DT_VARIANT", "dw:DT_FLOAT"};
  std::vector<std::string> grad_results{"j2:DT_INT32", "g2:DT_FLOAT", "w2:DT_FLOAT", "acc2:DT_VARIANT", "dw2:DT_FLOAT"};
  std::string grad_body = Ints("one", {1}, true) + Node("inc", "AddV2", {"j", "one:output:0"}, Type("DT_INT32")) +
                          Ints("shape", {3}) +
                          Node("pop", "TensorListPopBack", {"acc", "shape:output:0"}, ElementType()) +
                          Node("gy", "Mul", {"g", "pop:tensor:0"}, Type()) +
                          Node("add", "AddV2", {"dw", "gy:z:0"}, Type()) + Node("back", "Mul", {"g", "w"}, Type());
  std::string grad_cond = Ints("n", {4}, true) + Node("lt", "Less", {"j", "n:output:0"}, Type("DT_INT32"));
  std::string graph =
      Placeholder("x", {3}) + Placeholder("w", {3}) + Ints("i0", {0}, true) + Ints("acc/shape", {3}) +
      Ints("acc/max", {-1}, true) +
      Node("gradients/while_grad/y_0/accumulator", "EmptyTensorList", {"acc/shape", "acc/max"},
           ElementType() + ShapeType()) +
      Node("while", "While", {"i0", "x", "w", "gradients/while_grad/y_0/accumulator"},
           FuncAttr("cond", "fwd_cond") + FuncAttr("body", "fwd_body_rewritten") +
               TypeList("T", {"DT_INT32", "DT_FLOAT", "DT_FLOAT", "DT_VARIANT"}) + ShapeList({{}, {3}, {3}, {}})) +
      Const("gradients/ones", {3}, {1, 1, 1}) + Const("gradients/zeros", {3}, {0, 0, 0}) +
      Node("gradients/while_grad", "While", {"i0", "gradients/ones", "w", "while:3", "gradients/zeros"},
           FuncAttr("cond", "grad_cond") + FuncAttr("body", "grad_body") +
               TypeList("T", {"DT_INT32", "DT_FLOAT", "DT_FLOAT", "DT_VARIANT", "DT_FLOAT"}) +
               ShapeList({{}, {3}, {3}, {}, {3}})) +
      Node("left", "TensorListLength", {"gradients/while_grad:3"}) +
      Library({Function("fwd_body_rewritten", fwd_args, fwd_results, fwd_body,
                        {{"i2", "inc:z:0"}, {"y2", "mul:z:0"}, {"w2", "w"}, {"acc2", "push:output_handle:0"}}),
               Function("fwd_cond", fwd_args, {"c:DT_BOOL"}, fwd_cond, {{"c", "lt:z:0"}}),
               Function("grad_body", grad_args, grad_results, grad_body,
                        {{"j2", "inc:z:0"},
                         {"g2", "back:z:0"},
                         {"w2", "w"},
                         {"acc2", "pop:output_handle:0"},
                         {"dw2", "add:z:0"}}),
               Function("grad_cond", grad_args, {"c:DT_BOOL"}, grad_cond, {{"c", "lt:z:0"}})});
  std::vector<float> x{0.5f, -1.0f, 2.0f}, w{1.5f, 0.5f, -0.75f};
  std::vector<double> y_end, dw;
  for (size_t k = 0; k < x.size(); ++k) {
    y_end.push_back(x[k] * std::pow(w[k], 4));
    dw.push_back(4 * x[k] * std::pow(w[k], 3));  // sum over the 4 steps of w^(3-k) * (x w^k)
  }
  for (bool fusion : {false, true}) {
    std::vector<NDArray> out =
        RunText(graph, {{"x", NDArray::FromVector<float>(Shape{3}, x)}, {"w", NDArray::FromVector<float>(Shape{3}, w)}},
                {"while:1", "gradients/while_grad:4", "left"}, fusion);
    ExpectClose(out[0], y_end, "y");
    ExpectClose(out[1], dw, "dloss/dw");
    EXPECT_EQ(out[2].ToVector<int32_t>(), std::vector<int32_t>{0});
  }
}

// ---------------------------------------------------------------- lists without loops

TEST(TFTensorListTest, LengthElementShapeGatherScatterConcatAndSplit) {
  std::vector<double> values = Seq(12, 1, 0);  // [6, 2]
  std::string graph = Const("t", {6, 2}, values) + Ints("elem", {-1, 2}) + Ints("lengths", {2, 2, 2}) +
                      Node("split", "TensorListSplit", {"t", "elem", "lengths"}, ElementType() + ShapeType()) +
                      Node("length", "TensorListLength", {"split"}) +
                      Node("shape", "TensorListElementShape", {"split"}, ShapeType()) + Ints("idx", {2, 0}) +
                      Ints("elem2", {2, 2}) +
                      Node("gather", "TensorListGather", {"split", "idx", "elem2"}, ElementType()) +
                      Const("rows", {1, 2, 2}, {-1, -2, -3, -4}) + Ints("at", {1}) +
                      Node("scatter", "TensorListScatterIntoExistingList", {"split", "rows", "at"}, ElementType()) +
                      Ints("leading", {-1}, true) +
                      Node("concat", "TensorListConcatV2", {"scatter", "elem", "leading"},
                           ElementType() + Type("DT_INT32", "shape_type"));
  std::vector<NDArray> out = RunText(graph, {}, {"length", "shape", "gather", "concat", "concat:1"});
  EXPECT_EQ(out[0].ToVector<int32_t>(), std::vector<int32_t>{3});
  EXPECT_EQ(out[1].ToVector<int32_t>(), (std::vector<int32_t>{2, 2}));
  std::vector<double> gathered(values.begin() + 8, values.end());
  gathered.insert(gathered.end(), values.begin(), values.begin() + 4);
  ExpectClose(out[2], gathered, "gather");
  std::vector<double> joined = values;
  for (int k = 0; k < 4; ++k) joined[4 + k] = -1 - k;
  EXPECT_EQ(out[3].shape(), (Shape{6, 2}));
  ExpectClose(out[3], joined, "concat");
  EXPECT_EQ(out[4].ToVector<int64_t>(), (std::vector<int64_t>{2, 2, 2}));
}

TEST(TFTensorListTest, ErrorsNameTheNode) {
  std::string list = Const("t", {3, 2}, Seq(6, 1, 0)) + Ints("elem", {2}) +
                     Node("list", "TensorListFromTensor", {"t", "elem"}, ElementType() + ShapeType());
  auto error = [](const std::string& graph, const std::vector<std::string>& fetches) {
    try {
      RunText(graph, {}, fetches);
    } catch (const Error& err) {
      return std::string(err.what());
    }
    return std::string();
  };
  std::string read =
      list + Ints("five", {5}, true) + Node("read", "TensorListGetItem", {"list", "five", "elem"}, ElementType());
  std::string msg = error(read, {"read"});
  EXPECT_NE(msg.find("node 'read'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("tried to read from index 5 but array size is: 3"), std::string::npos) << msg;
  msg = error(list + Node("stack", "TensorListStack", {"list", "elem"}, ElementType() + Int("num_elements", 4)),
              {"stack"});
  EXPECT_NE(msg.find("expected a list with 4 elements but got a list with 3 elements"), std::string::npos) << msg;
  msg = error(list + Ints("bad", {3}) + Node("stack", "TensorListStack", {"list", "bad"}, ElementType()), {"stack"});
  EXPECT_NE(msg.find("does not fit the op's element_shape [3]"), std::string::npos) << msg;
  msg = error(Ints("n", {2}, true) + Ints("elem", {2}) + Node("e", "TensorListReserve", {"elem", "n"}, ElementType()) +
                  Node("p", "TensorListPopBack", {"e", "elem"}, ElementType()) +
                  Node("p2", "TensorListPopBack", {"p", "elem"}, ElementType()) +
                  Node("p3", "TensorListPopBack", {"p2", "elem"}, ElementType()),
              {"p3:1"});
  EXPECT_NE(msg.find("Trying to pop from an empty list"), std::string::npos) << msg;
  msg = error(Ints("n", {-1}, true) + Ints("elem", {2}) + Node("r", "TensorListReserve", {"elem", "n"}, ElementType()) +
                  Node("s", "TensorListStack", {"r", "elem"}, ElementType()),
              {"s"});
  EXPECT_NE(msg.find("node 'r'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("must be a non-negative number, but got -1"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tf
}  // namespace ir
