/*!
 * \file export_graph.cc
 * \brief A Graph of our ops as a TensorFlow GraphDef (ir_tf/export.h): each node through its op's
 * writer (export_writers.cc), shapes and dtypes from InferShape / InferType on the graph (a
 * placeholder keeps its declared, partial shape).
 */
#include "ir_tf/export.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

#include "export_graph.h"

namespace ir {
namespace tf {

Exporter::Exporter(const Graph& graph)
    : graph_(ApplyPasses(graph, {"InferShape", "InferType"})),
      idx_(graph_.indexed_graph()),
      shapes_(graph_.GetAttr<ShapeVector>("shape")),
      dtypes_(graph_.GetAttr<DTypeVector>("dtype")) {
  for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) names_.insert(idx_[nid].source->attrs.name);
}

tfproto::GraphDef Exporter::Run(const std::map<std::string, Writer>& writers) {
  for (nid_ = 0; nid_ < idx_.num_nodes(); ++nid_) {
    const Node& n = node();
    if (n.is_variable()) {
      WriteVariable();
      continue;
    }
    IR_CHECK(n.attrs.subgraphs.empty() && writers.count(n.op()->name))
        << NodeDesc(n.attrs) << ": op " << n.op()->name << " has no TensorFlow form to write";
    writers.at(n.op()->name)(*this);
    for (const NodePtr& dep : n.control_deps) Last()->add_input("^" + dep->attrs.name);
  }
  def_.mutable_versions()->set_producer(27);  // a TF 1.x GraphDef version
  return def_;
}

const std::string& Exporter::Attr(const std::string& key) const {
  auto it = node().attrs.dict.find(key);
  IR_CHECK(it != node().attrs.dict.end()) << NodeDesc(node().attrs) << ": attribute '" << key << "' is not set";
  return it->second;
}

std::string Exporter::AttrOr(const std::string& key, const std::string& fallback) const {
  auto it = node().attrs.dict.find(key);
  return it == node().attrs.dict.end() ? fallback : it->second;
}

std::string Exporter::In(size_t i) const {
  const IndexedGraph::Entry& e = idx_[nid_].inputs.at(i);
  const std::string& name = idx_[e.node_id].source->attrs.name;
  return e.index == 0 ? name : StrCat(name, ":", e.index);
}

tfproto::NodeDef* Exporter::Emit(const std::string& op, const std::vector<std::string>& inputs,
                                 const std::string& role) {
  tfproto::NodeDef* def = def_.add_node();
  def->set_name(role.empty() ? node().attrs.name : Fresh(node().attrs.name + "/" + role));
  def->set_op(op);
  for (const std::string& in : inputs) def->add_input(in);
  return def;
}

std::string Exporter::Const(const std::string& role, const NDArray& value) {
  NDArray host = value.CopyTo(Device::CPU());
  tfproto::NodeDef* def = Emit("Const", {}, role);
  SetType(def, "dtype", host.dtype());
  tfproto::TensorProto* tensor = (*def->mutable_attr())["value"].mutable_tensor();
  tensor->set_dtype(static_cast<tfproto::DataType>(TFTypeOf(host.dtype())));
  for (int64_t d : host.shape().dims()) tensor->mutable_tensor_shape()->add_dim()->set_size(d);
  tensor->set_tensor_content(std::string(static_cast<const char*>(host.data()), host.nbytes()));
  return def->name();
}

std::string Exporter::IntsConst(const std::string& role, const std::vector<int64_t>& values, bool scalar) {
  std::vector<int32_t> narrow(values.begin(), values.end());
  Shape shape = scalar ? Shape::Scalar() : Shape{static_cast<int64_t>(values.size())};
  return Const(role, NDArray::FromVector<int32_t>(shape, narrow));
}

std::string Exporter::ScalarConst(const std::string& role, double value, DType dtype) {
  NDArray out(Shape::Scalar(), dtype, Device::CPU());
  switch (dtype) {
    case DType::kFloat32:
      *out.data<float>() = static_cast<float>(value);
      break;
    case DType::kFloat64:
      *out.data<double>() = value;
      break;
    case DType::kInt32:
      *out.data<int32_t>() = static_cast<int32_t>(value);
      break;
    case DType::kInt64:
      *out.data<int64_t>() = static_cast<int64_t>(value);
      break;
    default:
      *out.data<bool>() = value != 0;
  }
  return Const(role, out);
}

std::vector<int64_t> Exporter::Axes(size_t input) const {
  std::vector<int64_t> axes = Ints(AttrOr("axis", "()"));
  if (!axes.empty()) return axes;
  Shape shape = InShape(input);
  IR_CHECK(shape.rank_known()) << NodeDesc(node().attrs) << ": reducing every axis needs the input's rank";
  for (int d = 0; d < shape.ndim(); ++d) axes.push_back(d);
  return axes;
}

DType Exporter::Known(DType dtype, const char* what, size_t i) const {
  IR_CHECK(dtype != DType::kUnknown) << NodeDesc(node().attrs) << ": the dtype of " << what << " " << i
                                     << " is not known, so its TensorFlow attributes cannot be written";
  return dtype;
}

std::string Exporter::Fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name); ++k) name = StrCat(base, "_", k);
  names_.insert(name);
  return name;
}

/*! \brief A placeholder (or any free input) as Placeholder, a variable as VariableV2, with its declared shape. */
void Exporter::WriteVariable() {
  const auto& dict = node().attrs.dict;
  auto kind = dict.find("__kind__");
  auto shape = dict.find("__shape__");
  bool variable = kind != dict.end() && kind->second == "variable";
  tfproto::NodeDef* def = Emit(variable ? "VariableV2" : "Placeholder", {});
  SetType(def, "dtype", OutType());
  SetShape(def, "shape", shape != dict.end() ? Shape::Parse(shape->second) : OutShape());
  if (variable) {
    SetString(def, "container", "");
    SetString(def, "shared_name", "");
  }
}

std::string ExportGraphDef(const Graph& graph, bool as_text) {
  tfproto::GraphDef def = Exporter(graph).Run(Writers());
  std::string out;
  if (as_text) {
    IR_CHECK(google::protobuf::TextFormat::PrintToString(def, &out)) << "cannot print the GraphDef as text";
    return out;
  }
  {  // deterministic: attribute maps in key order, so a graph always writes the same bytes
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    IR_CHECK(def.SerializeToCodedStream(&coded)) << "cannot serialize the GraphDef";
  }
  return out;
}

}  // namespace tf
}  // namespace ir
