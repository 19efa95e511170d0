/*!
 * \file npy.cc
 * \brief NumPy `.npy` files: a magic string, a version, a Python-dict header (descr,
 * fortran_order, shape), then the elements in C order.
 */
#include "ir_tf/npy.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>

#include "file_util.h"
#include "tensor.pb.h"
#include "tensor_decode.h"

namespace ir {
namespace tf {
namespace {

const char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

/*! \brief The text after `key`'s colon in the header dict, up to the next top-level comma or brace. */
std::string HeaderValue(const std::string& header, const std::string& key, const std::string& origin) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) at = header.find("\"" + key + "\"");
  IR_CHECK(at != std::string::npos) << "'" << origin << "': the .npy header has no '" << key << "'";
  size_t colon = header.find(':', at);
  IR_CHECK(colon != std::string::npos) << "'" << origin << "': malformed .npy header";
  size_t begin = header.find_first_not_of(' ', colon + 1);
  IR_CHECK(begin != std::string::npos) << "'" << origin << "': malformed .npy header";
  size_t end = header[begin] == '(' ? header.find(')', begin) + 1 : header.find_first_of(",}", begin);
  IR_CHECK(end != std::string::npos && end > begin) << "'" << origin << "': malformed .npy header";
  return header.substr(begin, end - begin);
}

std::vector<int64_t> ParseShape(const std::string& text, const std::string& origin) {
  IR_CHECK(text.size() >= 2 && text.front() == '(' && text.back() == ')')
      << "'" << origin << "': bad shape " << text << " in the .npy header";
  std::vector<int64_t> dims;
  std::string item;
  for (char c : text.substr(1, text.size() - 2) + ",") {
    if (c == ',') {
      size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
      if (b != std::string::npos) {
        std::string digits = item.substr(b, e - b + 1);
        IR_CHECK(digits.size() <= 15 && digits.find_first_not_of("0123456789L") == std::string::npos)
            << "'" << origin << "': bad dimension '" << digits << "' in the .npy header";
        dims.push_back(std::stoll(digits));
      }
      item.clear();
    } else {
      item += c;
    }
  }
  return dims;
}

/*! \brief The TF DataType with the same element layout as a NumPy descr ("<f4"). */
int DescrType(const std::string& code, const std::string& origin) {
  static const std::map<std::string, int> types = {
      {"f4", tensorflow::DT_FLOAT}, {"f8", tensorflow::DT_DOUBLE}, {"f2", tensorflow::DT_HALF},
      {"i1", tensorflow::DT_INT8},  {"i2", tensorflow::DT_INT16},  {"i4", tensorflow::DT_INT32},
      {"i8", tensorflow::DT_INT64}, {"u1", tensorflow::DT_UINT8},  {"u2", tensorflow::DT_UINT16},
      {"u4", tensorflow::DT_UINT32}, {"b1", tensorflow::DT_BOOL},
  };
  auto it = types.find(code);
  IR_CHECK(it != types.end()) << "'" << origin << "': .npy dtype '" << code
                              << "' is not supported (use float32/64, int8-64, uint8-32 or bool)";
  return it->second;
}

std::string Descr(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "<f4";
    case DType::kFloat64: return "<f8";
    case DType::kInt32: return "<i4";
    case DType::kInt64: return "<i8";
    case DType::kBool: return "|b1";
    default: throw Error(StrCat("cannot write dtype ", DTypeName(dtype), " to .npy"));
  }
}

}  // namespace

NDArray ParseNpy(const std::string& bytes, const std::string& origin) {
  IR_CHECK(bytes.size() >= 10 && bytes.compare(0, kMagicSize, kMagic, kMagicSize) == 0)
      << "'" << origin << "' is not a .npy file (no \\x93NUMPY magic)";
  int major = static_cast<uint8_t>(bytes[6]);
  IR_CHECK(major >= 1 && major <= 3) << "'" << origin << "': unsupported .npy version " << major;
  size_t length_bytes = major == 1 ? 2 : 4, header_len = 0;
  IR_CHECK(bytes.size() >= 8 + length_bytes) << "'" << origin << "': truncated .npy header";
  for (size_t i = 0; i < length_bytes; ++i) header_len |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i])) << (8 * i);
  size_t data_at = 8 + length_bytes + header_len;
  IR_CHECK(data_at <= bytes.size()) << "'" << origin << "': truncated .npy header";
  std::string header = bytes.substr(8 + length_bytes, header_len);
  std::string descr = HeaderValue(header, "descr", origin);
  IR_CHECK(descr.size() >= 4 && (descr.front() == '\'' || descr.front() == '"')) << "'" << origin << "': bad descr " << descr;
  descr = descr.substr(1, descr.size() - 2);
  IR_CHECK(HeaderValue(header, "fortran_order", origin) == "False")
      << "'" << origin << "': Fortran-order .npy files are not supported (save with np.ascontiguousarray)";
  char order = descr[0];
  int tf_dtype = DescrType(descr.substr(1), origin);
  tensorflow::TensorProto proto;
  proto.set_dtype(static_cast<tensorflow::DataType>(tf_dtype));
  for (int64_t d : ParseShape(HeaderValue(header, "shape", origin), origin)) proto.mutable_tensor_shape()->add_dim()->set_size(d);
  std::string data = bytes.substr(data_at);
  size_t element = std::stoul(descr.substr(2));
  if (order == '>' && element > 1) {
    for (size_t i = 0; i + element <= data.size(); i += element) std::reverse(data.begin() + i, data.begin() + i + element);
  }
  proto.set_tensor_content(std::move(data));
  try {
    return DecodeTensor(proto, std::numeric_limits<int64_t>::max());
  } catch (const Error& err) {
    throw Error(StrCat("'", origin, "': ", err.what()));
  }
}

NDArray ReadNpy(const std::string& path) { return ParseNpy(ReadFile(path), path); }

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
