/*!
 * \file tensor_decode.cc
 * \brief TensorProto to NDArray, for every encoding and element type TensorFlow writes.
 */
#include "tensor_decode.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

using tensorflow::TensorProto;

float HalfToFloat(uint16_t bits) {
  int sign = bits >> 15, exponent = (bits >> 10) & 0x1F, mantissa = bits & 0x3FF;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

float BFloat16ToFloat(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

/*! \brief Element `i` of little-endian raw bytes of TF type `tf_dtype`, as `T`. */
template <typename T>
T RawElement(const char* bytes, int64_t i, int tf_dtype) {
  auto load = [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, bytes + i * sizeof(v), sizeof(v));
    return v;
  };
  switch (BaseType(tf_dtype)) {
    case tensorflow::DT_HALF: return static_cast<T>(HalfToFloat(load(uint16_t())));
    case tensorflow::DT_BFLOAT16: return static_cast<T>(BFloat16ToFloat(load(uint16_t())));
    case tensorflow::DT_INT8: return static_cast<T>(load(int8_t()));
    case tensorflow::DT_UINT8: return static_cast<T>(load(uint8_t()));
    case tensorflow::DT_INT16: return static_cast<T>(load(int16_t()));
    case tensorflow::DT_UINT16: return static_cast<T>(load(uint16_t()));
    case tensorflow::DT_UINT32: return static_cast<T>(load(uint32_t()));
    case tensorflow::DT_BOOL: return static_cast<T>(load(uint8_t()) != 0);
    default: throw Error(StrCat("cannot convert ", TFTypeName(tf_dtype)));
  }
}

void DecodeContent(const TensorProto& proto, const NDArray& out) {
  const std::string& content = proto.tensor_content();
  size_t element = TFTypeSize(proto.dtype());
  IR_CHECK(content.size() == static_cast<size_t>(out.Size()) * element)
      << "tensor_content holds " << content.size() << " bytes but shape " << out.shape() << " of "
      << TFTypeName(proto.dtype()) << " needs " << out.Size() * static_cast<int64_t>(element);
  if (element == DTypeSize(out.dtype()) && out.dtype() != DType::kBool) {
    if (!content.empty()) std::memcpy(out.data(), content.data(), content.size());
    return;
  }
  switch (out.dtype()) {
    case DType::kFloat32:
      for (int64_t i = 0; i < out.Size(); ++i) out.data<float>()[i] = RawElement<float>(content.data(), i, proto.dtype());
      break;
    case DType::kInt32:
      for (int64_t i = 0; i < out.Size(); ++i) out.data<int32_t>()[i] = RawElement<int32_t>(content.data(), i, proto.dtype());
      break;
    case DType::kInt64:
      for (int64_t i = 0; i < out.Size(); ++i) out.data<int64_t>()[i] = RawElement<int64_t>(content.data(), i, proto.dtype());
      break;
    case DType::kBool:
      for (int64_t i = 0; i < out.Size(); ++i) out.data<bool>()[i] = RawElement<bool>(content.data(), i, proto.dtype());
      break;
    default: throw Error(StrCat("cannot decode tensor_content of ", TFTypeName(proto.dtype())));
  }
}

/*! \brief Copies `values` (converted by `convert`) into `out`, repeating the last one. */
template <typename T, typename Values, typename Convert>
void Fill(const Values& values, const NDArray& out, const Convert& convert) {
  int64_t n = values.size(), size = out.Size();
  IR_CHECK(n <= size) << "the tensor has " << n << " values but its shape " << out.shape() << " holds " << size;
  T* dst = out.data<T>();
  for (int64_t i = 0; i < n; ++i) dst[i] = convert(values.Get(static_cast<int>(i)));
  T last = n == 0 ? T() : dst[n - 1];
  for (int64_t i = n; i < size; ++i) dst[i] = last;
}

void DecodeValues(const TensorProto& proto, const NDArray& out) {
  auto same = [](auto v) { return v; };
  switch (BaseType(proto.dtype())) {
    case tensorflow::DT_FLOAT: return Fill<float>(proto.float_val(), out, same);
    case tensorflow::DT_DOUBLE: return Fill<double>(proto.double_val(), out, same);
    case tensorflow::DT_INT32: case tensorflow::DT_INT16: case tensorflow::DT_INT8:
    case tensorflow::DT_UINT8: case tensorflow::DT_UINT16:
      return Fill<int32_t>(proto.int_val(), out, same);
    case tensorflow::DT_INT64: return Fill<int64_t>(proto.int64_val(), out, same);
    case tensorflow::DT_UINT32: return Fill<int64_t>(proto.uint32_val(), out, [](uint32_t v) { return int64_t{v}; });
    case tensorflow::DT_BOOL: return Fill<bool>(proto.bool_val(), out, same);
    case tensorflow::DT_HALF:
      return Fill<float>(proto.half_val(), out, [](int32_t v) { return HalfToFloat(static_cast<uint16_t>(v)); });
    case tensorflow::DT_BFLOAT16:
      return Fill<float>(proto.half_val(), out, [](int32_t v) { return BFloat16ToFloat(static_cast<uint16_t>(v)); });
    default: throw Error(StrCat("cannot decode values of ", TFTypeName(proto.dtype())));
  }
}

}  // namespace

NDArray DecodeTensor(const TensorProto& proto, int64_t max_bytes) {
  DType dtype = ToDType(proto.dtype());
  Shape shape = ToShape(proto.tensor_shape());
  IR_CHECK(shape.is_known()) << "the tensor's shape " << shape << " is not fully known";
  double bytes = static_cast<double>(DTypeSize(dtype)), extent = 1;
  for (int64_t d : shape.dims()) {
    bytes *= static_cast<double>(d);
    extent *= static_cast<double>(std::max<int64_t>(d, 1));
  }
  IR_CHECK(extent < 0x1p62) << "the tensor's shape " << shape << " is too large";
  IR_CHECK(bytes <= static_cast<double>(max_bytes))
      << "the tensor of shape " << shape << " (" << DTypeName(dtype) << ", " << bytes << " bytes) exceeds the limit of "
      << max_bytes << " bytes";
  NDArray out(shape, dtype);
  if (!proto.tensor_content().empty() || out.Size() == 0) {
    DecodeContent(proto, out);
  } else {
    DecodeValues(proto, out);
  }
  return out;
}

}  // namespace tf
}  // namespace ir
