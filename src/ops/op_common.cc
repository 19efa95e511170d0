/*!
 * \file op_common.cc
 * \brief Shared inference helpers, error messages and gradient shorthands of the op families.
 */
#include "ops/op_common.h"

#include <omp.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace ir {

std::istream& operator>>(std::istream& is, DType& dtype) {
  std::string name;
  if (!(is >> name)) return is;
  try {
    DType parsed = DTypeFromName(name);
    if (parsed == DType::kUnknown) {
      is.setstate(std::ios::failbit);
    } else {
      dtype = parsed;
    }
  } catch (const Error&) {
    is.setstate(std::ios::failbit);
  }
  return is;
}

namespace op {

const DTypeSet& FloatTypes() {
  static const DTypeSet types = {DType::kFloat32, DType::kFloat64};
  return types;
}

const DTypeSet& NumericTypes() {
  static const DTypeSet types = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64};
  return types;
}

const DTypeSet& AllTypes() {
  static const DTypeSet types = {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64, DType::kBool};
  return types;
}

std::istream& operator>>(std::istream& is, IntList& list) {
  std::string text, token;
  std::getline(is, text, '\0');
  list.values.clear();
  for (char& c : text) {
    if (c == '(' || c == ')' || c == '[' || c == ']' || c == ',') c = ' ';
  }
  std::istringstream items(text);
  while (items >> token) {
    char* end = nullptr;
    long long value = std::strtoll(token.c_str(), &end, 10);
    if (end == token.c_str() || *end != '\0') {
      is.setstate(std::ios::failbit);
      return is;
    }
    list.values.push_back(value);
  }
  // dmlc checks that the whole string was consumed; clear eof-only state for it.
  is.clear(std::ios::eofbit);
  return is;
}

std::ostream& operator<<(std::ostream& os, const IntList& list) {
  os << "(";
  for (size_t i = 0; i < list.values.size(); ++i) os << (i ? "," : "") << list.values[i];
  return os << ")";
}

std::string ShapesDesc(const std::vector<Shape>& shapes) { return Join(shapes, ", "); }

void AssignShape(const NodeAttrs& attrs, const std::string& what, Shape* slot, const Shape& value) {
  Shape merged;
  IR_CHECK(Shape::Merge(*slot, value, &merged))
      << NodeDesc(attrs) << ": " << what << " has shape " << *slot << " but must be " << value;
  *slot = merged;
}

void AssignType(const NodeAttrs& attrs, const std::string& what, DType* slot, DType value) {
  if (value == DType::kUnknown) return;
  IR_CHECK(*slot == DType::kUnknown || *slot == value)
      << NodeDesc(attrs) << ": " << what << " has dtype " << DTypeName(*slot) << " but must be " << DTypeName(value);
  *slot = value;
}

void CheckDType(const NodeAttrs& attrs, const std::string& what, DType dtype, const DTypeSet& allowed) {
  if (dtype == DType::kUnknown) return;
  for (DType ok : allowed) {
    if (ok == dtype) return;
  }
  std::vector<std::string> names;
  for (DType ok : allowed) names.push_back(DTypeName(ok));
  throw Error(StrCat(NodeDesc(attrs), ": ", what, " dtype ", DTypeName(dtype), " is not supported (expected ",
                     Join(names, ", "), ")"));
}

bool ElemwiseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape merged;
  auto merge = [&](const Shape& s) {
    IR_CHECK(Shape::Merge(merged, s, &merged))
        << NodeDesc(attrs) << ": inputs and outputs must have one shape, got inputs " << ShapesDesc(*in)
        << " and outputs " << ShapesDesc(*out);
  };
  for (const Shape& s : *in) merge(s);
  for (const Shape& s : *out) merge(s);
  for (Shape& s : *in) s = merged;
  for (Shape& s : *out) s = merged;
  return merged.is_known();
}

bool ElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = DType::kUnknown;
  for (size_t i = 0; i < in->size(); ++i) AssignType(attrs, StrCat("input ", i), &dtype, (*in)[i]);
  for (size_t i = 0; i < out->size(); ++i) AssignType(attrs, StrCat("output ", i), &dtype, (*out)[i]);
  for (DType& t : *in) t = dtype;
  for (DType& t : *out) t = dtype;
  return dtype != DType::kUnknown;
}

Shape BroadcastShapes(const NodeAttrs& attrs, const Shape& a, const Shape& b) {
  if (!a.rank_known() || !b.rank_known()) return Shape();
  int nd = std::max(a.ndim(), b.ndim());
  std::vector<int64_t> dims(nd);
  for (int i = 0; i < nd; ++i) {
    int ia = a.ndim() - nd + i, ib = b.ndim() - nd + i;
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da == 1) {
      dims[i] = db;
    } else if (db == 1) {
      dims[i] = da;
    } else if (da < 0 || db < 0) {
      dims[i] = da < 0 ? db : da;  // the known extent, if any (the other must match it)
    } else {
      IR_CHECK(da == db) << NodeDesc(attrs) << ": shapes " << a << " and " << b
                         << " cannot be broadcast together (dimension " << i << ": " << da << " vs " << db << ")";
      dims[i] = da;
    }
  }
  return Shape(dims);
}

bool BroadcastShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape result = (*in)[0];
  for (size_t i = 1; i < in->size(); ++i) result = BroadcastShapes(attrs, result, (*in)[i]);
  AssignShape(attrs, "output 0", &(*out)[0], result);
  return AllKnown(*in, *out);
}

bool OutputsAre(DType dtype, std::vector<DType>* in, std::vector<DType>* out) {
  for (DType& t : *out) t = dtype;
  return AllKnown(*in, *out);
}

bool AllKnown(const std::vector<Shape>& in, const std::vector<Shape>& out) {
  for (const Shape& s : in) {
    if (!s.is_known()) return false;
  }
  for (const Shape& s : out) {
    if (!s.is_known()) return false;
  }
  return true;
}

bool AllKnown(const std::vector<DType>& in, const std::vector<DType>& out) {
  for (DType t : in) {
    if (t == DType::kUnknown) return false;
  }
  for (DType t : out) {
    if (t == DType::kUnknown) return false;
  }
  return true;
}

int NormalizeAxis(const NodeAttrs& attrs, int axis, int ndim) {
  IR_CHECK(-ndim <= axis && axis < std::max(ndim, 1))
      << NodeDesc(attrs) << ": axis " << axis << " is out of range for rank " << ndim;
  return axis < 0 ? axis + ndim : axis;
}

bool ValueFitsDType(double value, DType dtype) {
  // 2^31 and 2^63 are exact doubles: the ranges are [-2^31, 2^31) and [-2^63, 2^63).
  switch (dtype) {
    case DType::kBool:
      return value == 0 || value == 1;
    case DType::kInt32:
      return value == std::trunc(value) && value >= -2147483648.0 && value < 2147483648.0;
    case DType::kInt64:
      return value == std::trunc(value) && value >= -9223372036854775808.0 && value < 9223372036854775808.0;
    default:
      return true;
  }
}

void UnsupportedDType(DType dtype, const char* expected) {
  throw Error(StrCat("kernel does not support dtype ", DTypeName(dtype), " (expected ", expected, ")"));
}

int NumThreads() {
  static const int threads = [] {
    for (const char* var : {"IR_NUM_THREADS", "OMP_NUM_THREADS"}) {
      const char* value = std::getenv(var);
      if (value != nullptr && std::atoi(value) > 0) return std::atoi(value);
    }
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }();
  return threads;
}

std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out) {
  int nd = out.ndim(), offset = nd - shape.ndim();
  std::vector<int64_t> strides(nd, 0);
  int64_t stride = 1;
  for (int i = shape.ndim() - 1; i >= 0; --i) {
    strides[i + offset] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

BroadcastSpans::BroadcastSpans(const Shape& a, const Shape& b, const Shape& out)
    : dims_{1}, sa_{0}, sb_{0} {  // a placeholder dimension for rank 0, replaced by the first real one
  std::vector<int64_t> sa = BroadcastStrides(a, out), sb = BroadcastStrides(b, out);
  for (int d = 0; d < out.ndim(); ++d) {
    if (out[d] == 1) continue;
    // Merge with the previous dimension when each operand's stride continues it.
    bool continues = sa_.back() == sa[d] * out[d] && sb_.back() == sb[d] * out[d];
    if (dims_.back() != 1 && !continues) {
      dims_.push_back(1);
      sa_.push_back(0);
      sb_.push_back(0);
    }
    dims_.back() *= out[d];
    sa_.back() = sa[d];
    sb_.back() = sb[d];
  }
}

NodeEntry GradNode(const std::string& op, const NodePtr& node, const std::string& suffix, std::vector<NodeEntry> inputs,
                   const std::map<std::string, std::string>& attrs) {
  return MakeNode(op, StrCat(node->attrs.name, "_grad_", suffix), std::move(inputs), attrs);
}

std::string NumberToString(double value) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.17g", value);
  return buf;
}

std::vector<NodeEntry> ZeroGradient(const NodePtr& node, const std::vector<NodeEntry>&) {
  return std::vector<NodeEntry>(node->inputs.size());
}

}  // namespace op
}  // namespace ir
