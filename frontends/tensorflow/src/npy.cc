/*!
 * \file npy.cc
 * \brief NumPy `.npy` files: a magic string, a version, a Python-dict header (descr,
 * fortran_order, shape), then the elements. Every size the header claims is checked against
 * the bytes that follow before anything is allocated for them.
 */
#include "ir_tf/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <limits>
#include <map>

#include "file_util.h"
#include "ir_tf_tensor.pb.h"
#include "tensor_decode.h"
#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/*! \brief Largest .npy file read: bounded so that a sparse or endless file fails clearly. */
constexpr uint64_t kMaxNpyBytes = uint64_t{1} << 40;

/*! \brief The three fields of a .npy header dict. */
struct NpyHeader {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

/*!
 * \brief Parses the header dict, a Python literal such as
 * `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, strictly: exactly the three
 * keys, each once; string, bool and tuple-of-integer values.
 */
class HeaderParser {
 public:
  HeaderParser(const std::string& text, const std::string& origin) : text_(text), origin_(origin) {}

  NpyHeader Parse() {
    NpyHeader header;
    std::map<std::string, int> seen;
    Expect('{');
    while (!Accept('}')) {
      std::string key = String();
      Expect(':');
      IR_CHECK(++seen[key] == 1) << Where() << "the header repeats the key '" << key << "'";
      if (key == "descr") {
        header.descr = String();
      } else if (key == "fortran_order") {
        header.fortran_order = Bool();
      } else if (key == "shape") {
        header.shape = Tuple();
      } else {
        throw Error(StrCat(Where(), "the header has an unknown key '", key, "'"));
      }
      if (!Accept(',')) {
        Expect('}');
        break;
      }
    }
    for (const char* key : {"descr", "fortran_order", "shape"}) {
      IR_CHECK(seen.count(key)) << Where() << "the header has no '" << key << "'";
    }
    SkipSpace();
    IR_CHECK(pos_ == text_.size()) << Where() << "unexpected text after the header dict";
    return header;
  }

 private:
  std::string Where() const { return StrCat("'", origin_, "': malformed .npy header at byte ", pos_, ": "); }

  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  void Expect(char c) { IR_CHECK(Accept(c)) << Where() << "expected '" << c << "'"; }

  std::string String() {
    SkipSpace();
    IR_CHECK(pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) << Where() << "expected a string";
    char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    IR_CHECK(end != std::string::npos) << Where() << "unterminated string";
    std::string value = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return value;
  }

  bool Bool() {
    SkipSpace();
    for (bool value : {false, true}) {
      std::string word = value ? "True" : "False";
      if (text_.compare(pos_, word.size(), word) == 0) {
        pos_ += word.size();
        return value;
      }
    }
    throw Error(StrCat(Where(), "expected True or False"));
  }

  /*! \brief A dimension: decimal digits (a Python 2 `L` suffix allowed), at most 18 so it fits int64. */
  int64_t Dimension() {
    SkipSpace();
    size_t begin = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    IR_CHECK(pos_ > begin) << Where() << "expected a non-negative integer dimension";
    IR_CHECK(pos_ - begin <= 18) << Where() << "dimension " << text_.substr(begin, pos_ - begin) << " is too large";
    int64_t value = 0;
    for (size_t i = begin; i < pos_; ++i) value = value * 10 + (text_[i] - '0');
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;
    return value;
  }

  std::vector<int64_t> Tuple() {
    Expect('(');
    std::vector<int64_t> dims;
    while (!Accept(')')) {
      dims.push_back(Dimension());
      if (!Accept(',')) {
        Expect(')');
        break;
      }
    }
    return dims;
  }

  const std::string& text_;
  const std::string& origin_;
  size_t pos_ = 0;
};

/*! \brief The TF DataType with the same element layout as a NumPy type code ("f4"). */
int DescrType(const std::string& code, const std::string& origin) {
  static const std::map<std::string, int> types = {
      {"f4", tfproto::DT_FLOAT},  {"f8", tfproto::DT_DOUBLE}, {"f2", tfproto::DT_HALF},  {"i1", tfproto::DT_INT8},
      {"i2", tfproto::DT_INT16},  {"i4", tfproto::DT_INT32},  {"i8", tfproto::DT_INT64}, {"u1", tfproto::DT_UINT8},
      {"u2", tfproto::DT_UINT16}, {"u4", tfproto::DT_UINT32}, {"b1", tfproto::DT_BOOL},
  };
  auto it = types.find(code);
  IR_CHECK(it != types.end()) << "'" << origin << "': .npy dtype '" << code
                              << "' is not supported (use float16/32/64, int8-64, uint8-32 or bool)";
  return it->second;
}

std::string Descr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "<f4";
    case DType::kFloat64:
      return "<f8";
    case DType::kInt32:
      return "<i4";
    case DType::kInt64:
      return "<i8";
    case DType::kBool:
      return "|b1";
    default:
      throw Error(StrCat("cannot write dtype ", DTypeName(dtype), " to .npy"));
  }
}

/*! \brief The header dict's text, after checking the magic, version and length; `data_at` is where the data starts. */
std::string HeaderText(const std::string& bytes, const std::string& origin, size_t* data_at) {
  IR_CHECK(bytes.size() >= 10 && bytes.compare(0, kMagicSize, kMagic, kMagicSize) == 0)
      << "'" << origin << "' is not a .npy file (no \\x93NUMPY magic)";
  int major = static_cast<uint8_t>(bytes[6]), minor = static_cast<uint8_t>(bytes[7]);
  IR_CHECK(major >= 1 && major <= 3 && minor == 0)
      << "'" << origin << "': unsupported .npy version " << major << "." << minor << " (1.0, 2.0 and 3.0 are)";
  size_t length_bytes = major == 1 ? 2 : 4, header_len = 0;
  IR_CHECK(bytes.size() >= 8 + length_bytes) << "'" << origin << "': truncated .npy header";
  for (size_t i = 0; i < length_bytes; ++i)
    header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  IR_CHECK(header_len <= bytes.size() - 8 - length_bytes)
      << "'" << origin << "': truncated .npy header (it claims " << header_len << " bytes but "
      << bytes.size() - 8 - length_bytes << " follow)";
  *data_at = 8 + length_bytes + header_len;
  return bytes.substr(8 + length_bytes, header_len);
}

/*! \brief The element count of `dims`; throws when the product overflows. */
uint64_t ElementCount(const std::vector<int64_t>& dims, const std::string& origin) {
  uint64_t count = 1;
  for (int64_t d : dims) {
    IR_CHECK(!__builtin_mul_overflow(count, static_cast<uint64_t>(d), &count) && count < (uint64_t{1} << 62))
        << "'" << origin << "': the .npy shape " << Shape(dims) << " has too many elements";
  }
  return count;
}

/*! \brief `data` (Fortran order: the first index varies fastest) rearranged into C order. */
std::string FortranToC(const std::string& data, const std::vector<int64_t>& dims, size_t element) {
  size_t rank = dims.size(), count = data.size() / element;
  if (count == 0) return data;
  std::vector<size_t> stride(rank, 1), index(rank, 0);  // Fortran strides, C-order position
  for (size_t k = 1; k < rank; ++k) stride[k] = stride[k - 1] * static_cast<size_t>(dims[k - 1]);
  std::string out(data.size(), '\0');
  size_t from = 0;
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(&out[i * element], &data[from * element], element);
    for (size_t k = rank; k-- > 0;) {  // advance the C-order index, last dimension fastest
      from += stride[k];
      if (++index[k] < static_cast<size_t>(dims[k])) break;
      from -= stride[k] * index[k];
      index[k] = 0;
    }
  }
  return out;
}

}  // namespace

NDArray ParseNpy(const std::string& bytes, const std::string& origin) {
  size_t data_at = 0;
  std::string text = HeaderText(bytes, origin, &data_at);
  NpyHeader header = HeaderParser(text, origin).Parse();
  const std::string& descr = header.descr;
  IR_CHECK(descr.size() >= 3 && std::strchr("<>|=", descr[0]) != nullptr)
      << "'" << origin << "': bad descr '" << descr << "' in the .npy header (expected e.g. '<f4')";
  int tf_dtype = DescrType(descr.substr(1), origin);
  size_t element = TFTypeSize(tf_dtype);
  uint64_t need = 0, have = bytes.size() - data_at;
  IR_CHECK(!__builtin_mul_overflow(ElementCount(header.shape, origin), element, &need))
      << "'" << origin << "': the .npy shape " << Shape(header.shape) << " has too many bytes";
  IR_CHECK(have == need) << "'" << origin
                         << "': " << (have < need ? "truncated .npy data" : "trailing bytes after the .npy data")
                         << ": shape " << Shape(header.shape) << " of '" << descr << "' needs " << need << " bytes but "
                         << have << " follow the header";
  std::string data = bytes.substr(data_at);
  if (header.fortran_order) data = FortranToC(data, header.shape, element);
  if (descr[0] == '>' && element > 1) {
    for (size_t i = 0; i + element <= data.size(); i += element)
      std::reverse(data.begin() + i, data.begin() + i + element);
  }
  tfproto::TensorProto proto;
  proto.set_dtype(static_cast<tfproto::DataType>(tf_dtype));
  for (int64_t d : header.shape) proto.mutable_tensor_shape()->add_dim()->set_size(d);
  proto.set_tensor_content(std::move(data));
  try {
    return DecodeTensor(proto, std::numeric_limits<int64_t>::max());
  } catch (const Error& err) {
    throw Error(StrCat("'", origin, "': ", err.what()));
  }
}

NDArray ReadNpy(const std::string& path) { return ParseNpy(ReadFile(path, kMaxNpyBytes), path); }

std::string FormatNpy(const NDArray& array) {
  NDArray host = array.device() == Device::CPU() ? array : array.CopyTo(Device::CPU());
  std::vector<std::string> dims;
  for (int64_t d : host.shape().dims()) dims.push_back(std::to_string(d));
  std::string shape = dims.size() == 1 ? "(" + dims[0] + ",)" : "(" + Join(dims, ", ") + ")";
  std::string header = "{'descr': '" + Descr(host.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char*>(host.data()), host.nbytes());
  return out;
}

void WriteNpy(const std::string& path, const NDArray& array) { WriteFile(path, FormatNpy(array)); }

}  // namespace tf
}  // namespace ir
