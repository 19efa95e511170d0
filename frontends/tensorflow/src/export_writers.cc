/*!
 * \file export_writers.cc
 * \brief The writers of the GraphDef exporter (export_graph.h): per op, the TensorFlow node(s)
 * it is, the inverse of its converter. Attribute values TensorFlow takes as inputs (axes,
 * shapes, scalars) become Const nodes "<node>/<role>".
 */
#include <cctype>
#include <cmath>

#include "export_graph.h"

namespace ir {
namespace tf {
namespace {

/*! \brief An op of inputs (all of them) and attribute T (the type of input `typed`, -1: none). */
Writer Plain(const std::string& op, int typed = 0) {
  return [op, typed](Exporter& ex) {
    std::vector<std::string> inputs;
    for (size_t i = 0; i < ex.num_inputs(); ++i) inputs.push_back(ex.In(i));
    tfproto::NodeDef* def = ex.Emit(op, inputs);
    if (typed >= 0) SetType(def, "T", ex.InType(static_cast<size_t>(typed)));
  };
}

/*! \brief x op scalar (or scalar op x when `reversed`): the scalar a Const of x's dtype. */
Writer WithScalar(const std::string& op, bool reversed, bool typed = true) {
  return [op, reversed, typed](Exporter& ex) {
    std::string c = ex.ScalarConst("scalar", std::stod(ex.Attr("scalar")), ex.InType(0));
    tfproto::NodeDef* def =
        ex.Emit(op, reversed ? std::vector<std::string>{c, ex.In(0)} : std::vector<std::string>{ex.In(0), c});
    if (typed) SetType(def, "T", ex.InType(0));
  };
}

/*! \brief divide: RealDiv of floats, TruncateDiv of integers (ours truncates, as TF's Div). */
Writer Divide(bool scalar, bool reversed) {
  return [scalar, reversed](Exporter& ex) {
    const char* op = DTypeIsFloat(ex.InType(0)) ? "RealDiv" : "TruncateDiv";
    (scalar ? WithScalar(op, reversed) : Plain(op))(ex);
  };
}

/*! \brief A reduction: op(input, reduction_indices) with keep_dims. */
Writer Reduce(const std::string& op) {
  return [op](Exporter& ex) {
    std::string axes = ex.IntsConst("reduction_indices", ex.Axes());
    tfproto::NodeDef* def = ex.Emit(op, {ex.In(0), axes});
    SetType(def, "T", ex.InType(0));
    SetType(def, "Tidx", DType::kInt32);
    SetBool(def, "keep_dims", Truthy(ex.AttrOr("keepdims", "0")));
  };
}

/*! \brief An op of the input and one attribute given as an int32 Const input (`role`), typed `index_key`. */
Writer WithIntsInput(const std::string& op, const std::string& attr, const std::string& role,
                     const std::string& index_key, bool scalar = false) {
  return [=](Exporter& ex) {
    std::string c = ex.IntsConst(role, Ints(ex.Attr(attr)), scalar);
    tfproto::NodeDef* def = ex.Emit(op, {ex.In(0), c});
    SetType(def, "T", ex.InType(0));
    SetType(def, index_key, DType::kInt32);
  };
}

/*! \brief A static fill (zeros, ones, fill): Fill(dims, value). */
Writer Filled(double value) {
  return [value](Exporter& ex) {
    DType dtype = ex.OutType();
    std::string dims = ex.IntsConst("dims", Ints(ex.Attr("shape")));
    std::string v = ex.ScalarConst("value", std::isnan(value) ? std::stod(ex.Attr("value")) : value, dtype);
    tfproto::NodeDef* def = ex.Emit("Fill", {dims, v});
    SetType(def, "T", dtype);
    SetType(def, "index_type", DType::kInt32);
  };
}

/*! \brief A random draw: TF's standard draw of the shape, then scaled by `scale` and shifted by `shift`. */
Writer Random(const std::string& op, const std::string& scale_key, const std::string& shift_key) {
  return [=](Exporter& ex) {
    DType dtype = ex.OutType();
    std::string dims = ex.IntsConst("shape", Ints(ex.Attr("shape")));
    tfproto::NodeDef* draw = ex.Emit(op, {dims}, "standard");
    SetType(draw, "dtype", dtype);
    SetType(draw, "T", DType::kInt32);
    SetInt(draw, "seed", 0);
    SetInt(draw, "seed2", std::stoll(ex.AttrOr("seed", "0")));
    double shift = std::stod(ex.AttrOr(shift_key, "0"));
    double scale = std::stod(ex.AttrOr(scale_key, "1"));
    if (op == "RandomUniform") scale -= shift;  // scale_key is maxval: [min, max) = min + (max - min) u
    tfproto::NodeDef* scaled = ex.Emit("Mul", {draw->name(), ex.ScalarConst("scale", scale, dtype)}, "scaled");
    SetType(scaled, "T", dtype);
    tfproto::NodeDef* out = ex.Emit("Add", {scaled->name(), ex.ScalarConst("shift", shift, dtype)});
    SetType(out, "T", dtype);
  };
}

void WriteConstant(Exporter& ex) {
  NDArray value = ConstantNodeValue(ex.node());
  IR_CHECK(value.defined()) << NodeDesc(ex.node().attrs) << ": its value cannot be read";
  ex.Const("", value);
}

void WriteMatmul(Exporter& ex) {
  bool a = Truthy(ex.AttrOr("transpose_a", "0")), b = Truthy(ex.AttrOr("transpose_b", "0"));
  bool plain = ex.InShape(0).rank_known() && ex.InShape(0).ndim() == 2 && ex.InShape(1).rank_known() &&
               ex.InShape(1).ndim() == 2;
  tfproto::NodeDef* def = ex.Emit(plain ? "MatMul" : "BatchMatMulV2", {ex.In(0), ex.In(1)});
  SetType(def, "T", ex.InType(0));
  SetBool(def, plain ? "transpose_a" : "adj_x", a);
  SetBool(def, plain ? "transpose_b" : "adj_y", b);
}

void WriteSoftmax(Exporter& ex, const std::string& op) {
  int64_t axis = std::stoll(ex.AttrOr("axis", "-1"));
  Shape shape = ex.InShape(0);
  IR_CHECK(axis == -1 || (shape.rank_known() && axis == shape.ndim() - 1))
      << NodeDesc(ex.node().attrs) << ": TensorFlow's " << op << " is over the last axis, not axis " << axis;
  Plain(op)(ex);
}

void WriteCast(Exporter& ex) {
  tfproto::NodeDef* def = ex.Emit("Cast", {ex.In(0)});
  SetType(def, "SrcT", ex.InType(0));
  SetType(def, "DstT", ex.OutType());
  SetBool(def, "Truncate", false);
}

void WriteConcat(Exporter& ex) {
  std::vector<std::string> inputs;
  for (size_t i = 0; i < ex.num_inputs(); ++i) inputs.push_back(ex.In(i));
  inputs.push_back(ex.IntsConst("axis", {std::stoll(ex.Attr("axis"))}, true));
  tfproto::NodeDef* def = ex.Emit("ConcatV2", inputs);
  SetInt(def, "N", static_cast<int64_t>(ex.num_inputs()));
  SetType(def, "T", ex.InType(0));
  SetType(def, "Tidx", DType::kInt32);
}

void WriteArgReduce(Exporter& ex, const std::string& op) {
  IR_CHECK(!Truthy(ex.AttrOr("keepdims", "0"))) << NodeDesc(ex.node().attrs) << ": " << op << " keeps no dimension";
  tfproto::NodeDef* def = ex.Emit(op, {ex.In(0), ex.IntsConst("dimension", {std::stoll(ex.Attr("axis"))}, true)});
  SetType(def, "T", ex.InType(0));
  SetType(def, "Tidx", DType::kInt32);
  SetType(def, "output_type", DType::kInt64);
}

/*! \brief assign / assign_add / assign_sub: the TF1 ref ops on the variable (input 0). */
Writer Update(const std::string& op) {
  return [op](Exporter& ex) {
    tfproto::NodeDef* def = ex.Emit(op, {ex.In(0), ex.In(1)});
    SetType(def, "T", ex.InType(1));
    SetBool(def, "use_locking", false);
    if (op == "Assign") SetBool(def, "validate_shape", true);
  };
}

/*! \brief group / no_op: a NoOp run after its inputs (control inputs). */
void WriteNoOp(Exporter& ex) {
  std::vector<std::string> inputs;
  for (size_t i = 0; i < ex.num_inputs(); ++i) inputs.push_back("^" + ex.In(i).substr(0, ex.In(i).find(':')));
  ex.Emit("NoOp", inputs);
}

/*! \brief conv2d, max_pool2d, avg_pool2d: strides (and ksize) in data_format order, SAME/VALID padding. */
Writer Windowed(const std::string& op) {
  return [op](Exporter& ex) {
    std::string format = ex.AttrOr("data_format", "NHWC");
    auto four = [&](const std::vector<int64_t>& hw) {
      int64_t h = hw.empty() ? 1 : hw[0], w = hw.size() > 1 ? hw[1] : h;
      if (hw.size() == 4) return hw;
      return format == "NCHW" ? std::vector<int64_t>{1, 1, h, w} : std::vector<int64_t>{1, h, w, 1};
    };
    std::string padding = ex.AttrOr("padding", "VALID");
    IR_CHECK((padding == "SAME" || padding == "VALID") && Ints(ex.AttrOr("pads", "()")).empty())
        << NodeDesc(ex.node().attrs) << ": only SAME and VALID padding are written";
    tfproto::NodeDef* def = op == "Conv2D" ? ex.Emit(op, {ex.In(0), ex.In(1)}) : ex.Emit(op, {ex.In(0)});
    SetType(def, "T", ex.InType(0));
    SetInts(def, "strides", four(Ints(ex.AttrOr("strides", "(1,1)"))));
    if (op != "Conv2D") SetInts(def, "ksize", four(Ints(ex.Attr("ksize"))));
    if (op == "Conv2D") SetInts(def, "dilations", four(Ints(ex.AttrOr("dilations", "(1,1)"))));
    SetString(def, "padding", padding);
    SetString(def, "data_format", format);
  };
}

/*! \brief strided_slice: StridedSlice(begin, end, strides) with the five masks. */
void WriteStridedSlice(Exporter& ex) {
  std::vector<int64_t> begin = Ints(ex.AttrOr("begin", "()")), strides = Ints(ex.AttrOr("strides", "()"));
  if (strides.empty()) strides.assign(begin.size(), 1);
  tfproto::NodeDef* def =
      ex.Emit("StridedSlice", {ex.In(0), ex.IntsConst("begin", begin),
                               ex.IntsConst("end", Ints(ex.AttrOr("end", "()"))), ex.IntsConst("strides", strides)});
  SetType(def, "T", ex.InType(0));
  SetType(def, "Index", DType::kInt32);
  for (const char* mask : {"begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask"}) {
    SetInt(def, mask, std::stoll(ex.AttrOr(mask, "0")));
  }
}

void WriteSlice(Exporter& ex) {
  tfproto::NodeDef* def = ex.Emit(
      "Slice", {ex.In(0), ex.IntsConst("begin", Ints(ex.Attr("begin"))), ex.IntsConst("size", Ints(ex.Attr("size")))});
  SetType(def, "T", ex.InType(0));
  SetType(def, "Index", DType::kInt32);
}

void WriteGather(Exporter& ex) {
  std::string axis = ex.IntsConst("axis", {std::stoll(ex.AttrOr("axis", "0"))}, true);
  tfproto::NodeDef* def = ex.Emit("GatherV2", {ex.In(0), ex.In(1), axis});
  SetType(def, "Tparams", ex.InType(0));
  SetType(def, "Tindices", ex.InType(1));
  SetType(def, "Taxis", DType::kInt32);
  SetInt(def, "batch_dims", 0);
}

void WriteOneHot(Exporter& ex) {
  DType dtype = ex.OutType();
  std::string depth = ex.IntsConst("depth", {std::stoll(ex.Attr("depth"))}, true);
  std::string on = ex.ScalarConst("on_value", std::stod(ex.AttrOr("on_value", "1")), dtype);
  std::string off = ex.ScalarConst("off_value", std::stod(ex.AttrOr("off_value", "0")), dtype);
  tfproto::NodeDef* def = ex.Emit("OneHot", {ex.In(0), depth, on, off});
  SetType(def, "T", dtype);
  SetType(def, "TI", ex.InType(0));
  SetInt(def, "axis", std::stoll(ex.AttrOr("axis", "-1")));
}

/*! \brief pad: PadV2 with paddings [rank, 2] and the constant. */
void WritePad(Exporter& ex) {
  std::vector<int64_t> pads = Ints(ex.Attr("paddings"));
  std::vector<int32_t> narrow(pads.begin(), pads.end());
  std::string paddings =
      ex.Const("paddings", NDArray::FromVector<int32_t>(Shape{static_cast<int64_t>(pads.size() / 2), 2}, narrow));
  std::string value = ex.ScalarConst("constant_values", std::stod(ex.AttrOr("constant_value", "0")), ex.InType(0));
  tfproto::NodeDef* def = ex.Emit("PadV2", {ex.In(0), paddings, value});
  SetType(def, "T", ex.InType(0));
  SetType(def, "Tpaddings", DType::kInt32);
}

/*! \brief split: Split(axis, x) into equal pieces, SplitV(x, sizes, axis) for given sizes. */
void WriteSplit(Exporter& ex) {
  std::vector<int64_t> sizes = Ints(ex.AttrOr("sizes", "()"));
  std::string axis = ex.IntsConst("axis", {std::stoll(ex.AttrOr("axis", "0"))}, true);
  int64_t pieces = sizes.empty() ? std::stoll(ex.AttrOr("num_outputs", "1")) : static_cast<int64_t>(sizes.size());
  tfproto::NodeDef* def = sizes.empty() ? ex.Emit("Split", {axis, ex.In(0)})
                                        : ex.Emit("SplitV", {ex.In(0), ex.IntsConst("size_splits", sizes), axis});
  SetType(def, "T", ex.InType(0));
  SetInt(def, "num_split", pieces);
  if (!sizes.empty()) SetType(def, "Tlen", DType::kInt32);
}

}  // namespace

const std::map<std::string, Writer>& Writers() {
  static const std::map<std::string, Writer> writers = [] {
    std::map<std::string, Writer> w;
    const std::map<std::string, std::string> unary = {{"negative", "Neg"},
                                                      {"abs", "Abs"},
                                                      {"square", "Square"},
                                                      {"exp", "Exp"},
                                                      {"log", "Log"},
                                                      {"sqrt", "Sqrt"},
                                                      {"rsqrt", "Rsqrt"},
                                                      {"tanh", "Tanh"},
                                                      {"erf", "Erf"},
                                                      {"sigmoid", "Sigmoid"},
                                                      {"relu", "Relu"},
                                                      {"softplus", "Softplus"},
                                                      {"floor", "Floor"},
                                                      {"ceil", "Ceil"},
                                                      {"sin", "Sin"},
                                                      {"cos", "Cos"},
                                                      {"identity", "Identity"},
                                                      {"reciprocal", "Reciprocal"},
                                                      {"sign", "Sign"},
                                                      {"elu", "Elu"},
                                                      {"stop_gradient", "StopGradient"},
                                                      {"log1p", "Log1p"},
                                                      {"expm1", "Expm1"},
                                                      {"round", "Round"},
                                                      {"zeros_like", "ZerosLike"},
                                                      {"ones_like", "OnesLike"}};
    for (const auto& kv : unary) w[kv.first] = Plain(kv.second);
    const std::map<std::string, std::string> binary = {{"add", "Add"},
                                                       {"subtract", "Sub"},
                                                       {"multiply", "Mul"},
                                                       {"maximum", "Maximum"},
                                                       {"minimum", "Minimum"},
                                                       {"power", "Pow"},
                                                       {"floor_divide", "FloorDiv"},
                                                       {"floor_mod", "FloorMod"},
                                                       {"equal", "Equal"},
                                                       {"not_equal", "NotEqual"},
                                                       {"greater", "Greater"},
                                                       {"greater_equal", "GreaterEqual"},
                                                       {"less", "Less"},
                                                       {"less_equal", "LessEqual"},
                                                       {"bias_add", "BiasAdd"},
                                                       {"where", "Select"}};
    for (const auto& kv : binary) w[kv.first] = Plain(kv.second, kv.first == "where" ? 1 : 0);
    for (const auto& kv : binary) {
      if (kv.first == "bias_add" || kv.first == "where") continue;
      w[kv.first + "_scalar"] = WithScalar(kv.second, false);
    }
    w["rsubtract_scalar"] = WithScalar("Sub", true);
    w["rpower_scalar"] = WithScalar("Pow", true);
    w["rfloor_divide_scalar"] = WithScalar("FloorDiv", true);
    w["rfloor_mod_scalar"] = WithScalar("FloorMod", true);
    w["divide"] = Divide(false, false);
    w["divide_scalar"] = Divide(true, false);
    w["rdivide_scalar"] = Divide(true, true);
    w["logical_not"] = Plain("LogicalNot", -1);
    w["logical_and"] = Plain("LogicalAnd", -1);
    w["logical_or"] = Plain("LogicalOr", -1);
    w["logical_and_scalar"] = WithScalar("LogicalAnd", false, false);
    w["logical_or_scalar"] = WithScalar("LogicalOr", false, false);
    w["add_n"] = [](Exporter& ex) {
      std::vector<std::string> inputs;
      for (size_t i = 0; i < ex.num_inputs(); ++i) inputs.push_back(ex.In(i));
      tfproto::NodeDef* def = ex.Emit("AddN", inputs);
      SetInt(def, "N", static_cast<int64_t>(inputs.size()));
      SetType(def, "T", ex.InType(0));
    };
    for (const char* op : {"sum", "mean", "max", "min", "prod"}) {
      std::string name = op;
      name[0] = static_cast<char>(std::toupper(name[0]));
      w[op] = Reduce(name);
    }
    w["reshape"] = WithIntsInput("Reshape", "shape", "shape", "Tshape");
    w["transpose"] = WithIntsInput("Transpose", "axes", "perm", "Tperm");
    w["tile"] = WithIntsInput("Tile", "reps", "multiples", "Tmultiples");
    w["expand_dims"] = WithIntsInput("ExpandDims", "axis", "dim", "Tdim", true);
    w["squeeze"] = [](Exporter& ex) {
      tfproto::NodeDef* def = ex.Emit("Squeeze", {ex.In(0)});
      SetType(def, "T", ex.InType(0));
      SetInts(def, "squeeze_dims", Ints(ex.AttrOr("axis", "()")));
    };
    for (const char* op : {"shape", "size"}) {
      w[op] = [op](Exporter& ex) {
        tfproto::NodeDef* def = ex.Emit(std::string(op) == "shape" ? "Shape" : "Size", {ex.In(0)});
        SetType(def, "T", ex.InType(0));
        SetType(def, "out_type", ex.OutType());
      };
    }
    w["rank"] = Plain("Rank");
    w["constant"] = WriteConstant;
    w["zeros"] = Filled(0);
    w["ones"] = Filled(1);
    w["fill"] = Filled(std::nan(""));
    w["matmul"] = WriteMatmul;
    w["softmax"] = [](Exporter& ex) { WriteSoftmax(ex, "Softmax"); };
    w["log_softmax"] = [](Exporter& ex) { WriteSoftmax(ex, "LogSoftmax"); };
    w["softmax_cross_entropy_with_logits"] = Plain("SoftmaxCrossEntropyWithLogits");
    w["sparse_softmax_cross_entropy_with_logits"] = [](Exporter& ex) {
      Plain("SparseSoftmaxCrossEntropyWithLogits")(ex);
      SetType(ex.Last(), "Tlabels", ex.InType(1));
    };
    w["cast"] = WriteCast;
    w["strided_slice"] = WriteStridedSlice;
    w["slice"] = WriteSlice;
    w["gather"] = WriteGather;
    w["one_hot"] = WriteOneHot;
    w["pad"] = WritePad;
    w["split"] = WriteSplit;
    w["concat"] = WriteConcat;
    w["argmax"] = [](Exporter& ex) { WriteArgReduce(ex, "ArgMax"); };
    w["argmin"] = [](Exporter& ex) { WriteArgReduce(ex, "ArgMin"); };
    w["assign"] = Update("Assign");
    w["assign_add"] = Update("AssignAdd");
    w["assign_sub"] = Update("AssignSub");
    w["group"] = WriteNoOp;
    w["no_op"] = WriteNoOp;
    w["conv2d"] = Windowed("Conv2D");
    w["max_pool2d"] = Windowed("MaxPool");
    w["avg_pool2d"] = Windowed("AvgPool");
    w["random_normal"] = Random("RandomStandardNormal", "stddev", "mean");
    w["truncated_normal"] = Random("TruncatedNormal", "stddev", "mean");
    w["random_uniform"] = Random("RandomUniform", "maxval", "minval");
    return w;
  }();
  return writers;
}

}  // namespace tf
}  // namespace ir
