/*!
 * \file import_context.cc
 * \brief A converter's view of one TF node.
 */
#include "import_context.h"

#include <cmath>
#include <cstdio>

#include "graph_importer.h"
#include "ir/constant.h"
#include "ir/op.h"
#include "tf_types.h"

namespace ir {
namespace tf {

std::string IntsAttr(const std::vector<int64_t>& values) { return StrCat("(", Join(values, ","), ")"); }

std::string NumberAttr(double value) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

ImportContext::ImportContext(GraphImporter* importer, const tfproto::NodeDef& def, std::vector<NodeEntry> inputs)
    : importer_(importer), def_(def), inputs_(std::move(inputs)) {}

void ImportContext::Fail(const std::string& message) const { throw Error(message); }

const NodeEntry& ImportContext::input(size_t i) const {
  IR_CHECK(i < inputs_.size()) << "needs at least " << i + 1 << " data input(s), has " << inputs_.size();
  return inputs_[i];
}

void ImportContext::ExpectInputs(size_t n) const {
  IR_CHECK(inputs_.size() == n) << "needs " << n << " data input(s), has " << inputs_.size();
}

void ImportContext::ExpectListLength(const std::string& key, size_t count) const {
  if (!HasAttr(key)) return;
  int64_t n = Int(key);
  IR_CHECK(n >= 0 && static_cast<size_t>(n) == count)
      << "attribute '" << key << "' is " << n << " but the node has " << count << " input(s) in that list";
}

int64_t ImportContext::NormalizeAxis(int64_t axis, int64_t rank, const std::string& what) const {
  IR_CHECK(axis >= -rank && axis < rank) << what << " " << axis << " is out of range [" << -rank << ", " << rank
                                         << ") for rank " << rank;
  return axis < 0 ? axis + rank : axis;
}

NodeEntry ImportContext::VariableInput(size_t i) const {
  NodeEntry e = input(i);
  while (!e.node->is_variable() && e.node->op()->name == "identity") e = e.node->inputs.at(0);
  IR_CHECK(e.node->is_variable()) << "input " << i << " must be a variable (a ref or resource handle), but it is "
                                  << "computed by node '" << e.node->attrs.name << "' (op " << e.node->op()->name
                                  << ")";
  return e;
}

// ---------------------------------------------------------------- attributes

const tfproto::AttrValue* ImportContext::FindAttr(const std::string& key) const {
  auto it = def_.attr().find(key);
  return it == def_.attr().end() ? nullptr : &it->second;
}

bool ImportContext::HasAttr(const std::string& key) const { return FindAttr(key) != nullptr; }

const tfproto::AttrValue& ImportContext::Attr(const std::string& key) const {
  const tfproto::AttrValue* value = FindAttr(key);
  IR_CHECK(value != nullptr) << "missing attribute '" << key << "'";
  return *value;
}

int64_t ImportContext::Int(const std::string& key) const {
  const auto& v = Attr(key);
  IR_CHECK(v.value_case() == tfproto::AttrValue::kI) << "attribute '" << key << "' is not an int";
  return v.i();
}

int64_t ImportContext::Int(const std::string& key, int64_t def) const { return HasAttr(key) ? Int(key) : def; }

bool ImportContext::Bool(const std::string& key, bool def) const {
  if (!HasAttr(key)) return def;
  IR_CHECK(Attr(key).value_case() == tfproto::AttrValue::kB) << "attribute '" << key << "' is not a bool";
  return Attr(key).b();
}

double ImportContext::Float(const std::string& key) const {
  const auto& v = Attr(key);
  IR_CHECK(v.value_case() == tfproto::AttrValue::kF) << "attribute '" << key << "' is not a float";
  return v.f();
}

double ImportContext::Float(const std::string& key, double def) const { return HasAttr(key) ? Float(key) : def; }

std::string ImportContext::Str(const std::string& key) const {
  const auto& v = Attr(key);
  IR_CHECK(v.value_case() == tfproto::AttrValue::kS) << "attribute '" << key << "' is not a string";
  return v.s();
}

std::string ImportContext::Str(const std::string& key, const std::string& def) const {
  return HasAttr(key) ? Str(key) : def;
}

DType ImportContext::Type(const std::string& key) const {
  const auto& v = Attr(key);
  IR_CHECK(v.value_case() == tfproto::AttrValue::kType) << "attribute '" << key << "' is not a type";
  try {
    return ToDType(v.type());
  } catch (const Error& err) {
    throw Error(StrCat("attribute '", key, "': ", err.what()));
  }
}

std::vector<int64_t> ImportContext::Ints(const std::string& key) const {
  const auto& v = Attr(key);
  IR_CHECK(v.value_case() == tfproto::AttrValue::kList) << "attribute '" << key << "' is not a list";
  return std::vector<int64_t>(v.list().i().begin(), v.list().i().end());
}

Shape ImportContext::ShapeAttr(const std::string& key) const {
  const auto& v = Attr(key);
  IR_CHECK(v.value_case() == tfproto::AttrValue::kShape) << "attribute '" << key << "' is not a shape";
  return ToShape(v.shape());
}

// ---------------------------------------------------------------- values known at import

NDArray ImportContext::ConstInput(size_t i) const {
  NDArray value = importer_->Fold(input(i));
  if (value.defined()) return value;
  std::string what = StrCat("input ", i, " ('", def_.input(static_cast<int>(i)), "')");
  std::vector<std::string> unfed = importer_->UnfedPlaceholders(input(i));
  if (!unfed.empty()) {
    std::string which = unfed.size() == 1 ? "that placeholder" : "the unfed placeholders " + Join(unfed, ", ");
    throw UnfedPlaceholderError(unfed[0], StrCat("needs ", what, " before the graph runs, and it depends on ", which));
  }
  throw Error(StrCat(what,
                     " must be known before the graph runs, but its value is computed when the graph runs "
                     "(only constants and the shapes of fed tensors are known at import)"));
}

NDArray ImportContext::TryConstInput(size_t i) const { return importer_->Fold(input(i)); }

std::vector<int64_t> ImportContext::ConstInts(size_t i) const {
  NDArray value = ConstInput(i);
  std::vector<int64_t> out;
  switch (value.dtype()) {
    case DType::kInt32:
      for (int32_t v : value.ToVector<int32_t>()) out.push_back(v);
      break;
    case DType::kInt64:
      out = value.ToVector<int64_t>();
      break;
    case DType::kFloat32:
    case DType::kFloat64:
    case DType::kBool:
    default:
      throw Error(StrCat("input ", i, " must hold integers, but it is ", DTypeName(value.dtype())));
  }
  return out;
}

double ImportContext::ConstScalar(size_t i) const {
  NDArray value = ConstInput(i);
  IR_CHECK(value.Size() == 1) << "input " << i << " must hold one value, but its shape is " << value.shape();
  double out = 0;
  switch (value.dtype()) {
    case DType::kFloat32:
      out = value.data<float>()[0];
      break;
    case DType::kFloat64:
      out = value.data<double>()[0];
      break;
    case DType::kInt32:
      out = value.data<int32_t>()[0];
      break;
    case DType::kInt64:
      out = static_cast<double>(value.data<int64_t>()[0]);
      break;
    case DType::kBool:
      out = value.data<bool>()[0];
      break;
    default:
      break;
  }
  return out;
}

Shape ImportContext::InputShape(size_t i) const { return importer_->ShapeOf(input(i)); }
DType ImportContext::InputType(size_t i) const { return importer_->TypeOf(input(i)); }

bool ImportContext::IsFed() const { return importer_->spec().feed_shapes.count(def_.name()) != 0; }
Shape ImportContext::FedShape() const { return importer_->spec().feed_shapes.at(def_.name()); }
int ImportContext::producer() const { return importer_->spec().producer; }
int64_t ImportContext::max_const_bytes() const { return importer_->spec().max_const_bytes; }
const ImportSpec& ImportContext::spec() const { return importer_->spec(); }

// ---------------------------------------------------------------- building

NodeEntry ImportContext::Op(const std::string& op, std::vector<NodeEntry> inputs,
                            const std::map<std::string, std::string>& attrs, const std::string& suffix) {
  NodeEntry e = MakeNode(op, suffix.empty() ? def_.name() : def_.name() + "/" + suffix, std::move(inputs), attrs);
  created_.push_back(e.node);
  return e;
}

NodePtr ImportContext::OpWithBodies(const std::string& op, std::vector<NodeEntry> inputs,
                                    std::vector<std::shared_ptr<const Subgraph>> bodies,
                                    const std::map<std::string, std::string>& attrs, const std::string& suffix) {
  NodePtr node = Node::Create(Op::Get(op), suffix.empty() ? def_.name() : def_.name() + "/" + suffix, attrs,
                              std::move(inputs), std::move(bodies));
  created_.push_back(node);
  return node;
}

NodeEntry ImportContext::Constant(const NDArray& value, const std::string& suffix) {
  NodeEntry e = MakeConstantNode(suffix.empty() ? def_.name() : def_.name() + "/" + suffix, value);
  created_.push_back(e.node);
  return e;
}

NodeEntry ImportContext::Variable(const std::map<std::string, std::string>& hints) {
  NodePtr node = Node::CreateVariable(def_.name(), hints);
  created_.push_back(node);
  return NodeEntry{node, 0};
}

}  // namespace tf
}  // namespace ir
