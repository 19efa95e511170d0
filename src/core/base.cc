/*!
 * \file base.cc
 * \brief DType names and sizes; Shape printing, parsing and merging.
 */
#include "ir/base.h"

#include <dmlc/json.h>

#include <cctype>
#include <cstdlib>

namespace ir {

const char* DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kFloat64:
      return "float64";
    case DType::kInt32:
      return "int32";
    case DType::kInt64:
      return "int64";
    case DType::kBool:
      return "bool";
    case DType::kUnknown:
      return "unknown";
  }
  return "invalid";
}

DType DTypeFromName(const std::string& name) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (name == DTypeName(static_cast<DType>(i))) return static_cast<DType>(i);
  }
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "int") return DType::kInt32;
  if (name == "long") return DType::kInt64;
  if (name == "unknown") return DType::kUnknown;
  throw Error(StrCat("unknown dtype '", name, "' (known: float32, float64, int32, int64, bool)"));
}

size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kFloat64:
      return 8;
    case DType::kInt32:
      return 4;
    case DType::kInt64:
      return 8;
    case DType::kBool:
      return 1;
    default:
      break;
  }
  throw Error(StrCat("size of dtype '", DTypeName(dtype), "' is not defined"));
}

bool DTypeIsFloat(DType dtype) { return dtype == DType::kFloat32 || dtype == DType::kFloat64; }

std::ostream& operator<<(std::ostream& os, DType dtype) { return os << DTypeName(dtype); }

bool Shape::is_known() const {
  if (!rank_known_) return false;
  for (int64_t d : dims_) {
    if (d < 0) return false;
  }
  return true;
}

bool CheckedMul(int64_t a, int64_t b, int64_t* out) {
  int64_t product = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &product)) return false;
  *out = product;
  return true;
}

int64_t Shape::Size() const {
  IR_CHECK(is_known()) << "size of partially known shape " << ToString() << " is undefined";
  return ProdDims(0, ndim());
}

int64_t Shape::ProdDims(int begin, int end) const {
  int64_t size = 1;
  for (int i = begin; i < end; ++i) {
    IR_CHECK(dims_.at(i) >= 0) << "dimension " << i << " of " << ToString() << " is unknown";
    IR_CHECK(CheckedMul(size, dims_[i], &size))
        << "shape " << ToString() << " has more elements than a 64-bit integer can count";
  }
  return size;
}

bool Shape::FitsInt64() const {
  int64_t product = 1;
  for (int64_t d : dims_) {
    if (d > 0 && !CheckedMul(product, d, &product)) return false;
  }
  return true;
}

int64_t Shape::Bytes(DType dtype) const {
  int64_t bytes = 0;
  IR_CHECK(CheckedMul(Size(), static_cast<int64_t>(DTypeSize(dtype)), &bytes))
      << "an array of shape " << ToString() << " and dtype " << DTypeName(dtype)
      << " has more bytes than a 64-bit integer can count";
  return bytes;
}

std::string Shape::ToString() const {
  if (!rank_known_) return "?";
  std::string out = "[";
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (i) out += ",";
    out += dims_[i] < 0 ? std::string("?") : std::to_string(dims_[i]);
  }
  return out + "]";
}

Shape Shape::Parse(const std::string& text) {
  std::string body;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) body += c;
  }
  if (body == "?") return Shape();
  if (!body.empty() && (body.front() == '[' || body.front() == '(')) {
    char close = body.front() == '[' ? ']' : ')';
    IR_CHECK(body.size() >= 2 && body.back() == close) << "malformed shape '" << text << "'";
    body = body.substr(1, body.size() - 2);
  }
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t comma = body.find(',', pos);
    std::string item = body.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    pos = comma == std::string::npos ? body.size() : comma + 1;
    if (item.empty() && comma == std::string::npos) break;  // trailing comma: "(3,)"
    if (item == "?" || item == "-1") {
      dims.push_back(kUnknownDim);
      continue;
    }
    char* end = nullptr;
    long long value = std::strtoll(item.c_str(), &end, 10);
    IR_CHECK(!item.empty() && end && *end == '\0' && value >= 0)
        << "malformed shape '" << text << "': bad dimension '" << item << "'";
    dims.push_back(value);
  }
  return Shape(dims);
}

bool Shape::Merge(const Shape& a, const Shape& b, Shape* out) {
  if (!a.rank_known()) {
    *out = b;
    return true;
  }
  if (!b.rank_known()) {
    *out = a;
    return true;
  }
  if (a.ndim() != b.ndim()) return false;
  std::vector<int64_t> dims(a.dims_.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (a[i] >= 0 && b[i] >= 0 && a[i] != b[i]) return false;
    dims[i] = a[i] >= 0 ? a[i] : b[i];
  }
  *out = Shape(dims);
  return true;
}

// JSON form is the printed form ("[2,?,3]", "?" for unknown rank): readable and exact.
void Shape::Save(dmlc::JSONWriter* writer) const { writer->Write(ToString()); }

void Shape::Load(dmlc::JSONReader* reader) {
  std::string text;
  reader->Read(&text);
  *this = Parse(text);
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) { return os << shape.ToString(); }

}  // namespace ir
