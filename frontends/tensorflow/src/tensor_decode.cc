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

using tfproto::TensorProto;

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
    case tfproto::DT_HALF:
      return static_cast<T>(HalfToFloat(load(uint16_t())));
    case tfproto::DT_BFLOAT16:
      return static_cast<T>(BFloat16ToFloat(load(uint16_t())));
    case tfproto::DT_INT8:
      return static_cast<T>(load(int8_t()));
    case tfproto::DT_UINT8:
      return static_cast<T>(load(uint8_t()));
    case tfproto::DT_INT16:
      return static_cast<T>(load(int16_t()));
    case tfproto::DT_UINT16:
      return static_cast<T>(load(uint16_t()));
    case tfproto::DT_UINT32:
      return static_cast<T>(load(uint32_t()));
    case tfproto::DT_BOOL:
      return static_cast<T>(load(uint8_t()) != 0);
    default:
      throw Error(StrCat("cannot convert ", TFTypeName(tf_dtype)));
  }
}

void DecodeContent(const TensorProto& proto, const NDArray& out) {
  const std::string& content = proto.tensor_content();
  size_t element = TFTypeSize(proto.dtype());
  if (element == DTypeSize(out.dtype()) && out.dtype() != DType::kBool) {
    if (!content.empty()) std::memcpy(out.data(), content.data(), content.size());
    return;
  }
  switch (out.dtype()) {
    case DType::kFloat32:
      for (int64_t i = 0; i < out.Size(); ++i)
        out.data<float>()[i] = RawElement<float>(content.data(), i, proto.dtype());
      break;
    case DType::kInt32:
      for (int64_t i = 0; i < out.Size(); ++i)
        out.data<int32_t>()[i] = RawElement<int32_t>(content.data(), i, proto.dtype());
      break;
    case DType::kInt64:
      for (int64_t i = 0; i < out.Size(); ++i)
        out.data<int64_t>()[i] = RawElement<int64_t>(content.data(), i, proto.dtype());
      break;
    case DType::kBool:
      for (int64_t i = 0; i < out.Size(); ++i) out.data<bool>()[i] = RawElement<bool>(content.data(), i, proto.dtype());
      break;
    default:
      throw Error(StrCat("cannot decode tensor_content of ", TFTypeName(proto.dtype())));
  }
}

/*! \brief Copies `values` (converted by `convert`) into `out`, repeating the last one (CheckEncoding bounded their
 * count). */
template <typename T, typename Values, typename Convert>
void Fill(const Values& values, const NDArray& out, const Convert& convert) {
  int64_t n = values.size(), size = out.Size();
  T* dst = out.data<T>();
  for (int64_t i = 0; i < n; ++i) dst[i] = convert(values.Get(static_cast<int>(i)));
  T last = n == 0 ? T() : dst[n - 1];
  for (int64_t i = n; i < size; ++i) dst[i] = last;
}

void DecodeValues(const TensorProto& proto, const NDArray& out) {
  auto same = [](auto v) { return v; };
  switch (BaseType(proto.dtype())) {
    case tfproto::DT_FLOAT:
      return Fill<float>(proto.float_val(), out, same);
    case tfproto::DT_DOUBLE:
      return Fill<double>(proto.double_val(), out, same);
    case tfproto::DT_INT32:
    case tfproto::DT_INT16:
    case tfproto::DT_INT8:
    case tfproto::DT_UINT8:
    case tfproto::DT_UINT16:
      return Fill<int32_t>(proto.int_val(), out, same);
    case tfproto::DT_INT64:
      return Fill<int64_t>(proto.int64_val(), out, same);
    case tfproto::DT_UINT32:
      return Fill<int64_t>(proto.uint32_val(), out, [](uint32_t v) { return int64_t{v}; });
    case tfproto::DT_BOOL:
      return Fill<bool>(proto.bool_val(), out, same);
    case tfproto::DT_HALF:
      return Fill<float>(proto.half_val(), out, [](int32_t v) { return HalfToFloat(static_cast<uint16_t>(v)); });
    case tfproto::DT_BFLOAT16:
      return Fill<float>(proto.half_val(), out, [](int32_t v) { return BFloat16ToFloat(static_cast<uint16_t>(v)); });
    default:
      throw Error(StrCat("cannot decode values of ", TFTypeName(proto.dtype())));
  }
}

/*! \brief How many typed values (float_val, int_val...) the proto holds for its dtype. */
int64_t ValueCount(const TensorProto& proto) {
  switch (BaseType(proto.dtype())) {
    case tfproto::DT_FLOAT:
      return proto.float_val_size();
    case tfproto::DT_DOUBLE:
      return proto.double_val_size();
    case tfproto::DT_INT64:
      return proto.int64_val_size();
    case tfproto::DT_UINT32:
      return proto.uint32_val_size();
    case tfproto::DT_BOOL:
      return proto.bool_val_size();
    case tfproto::DT_HALF:
    case tfproto::DT_BFLOAT16:
      return proto.half_val_size();
    default:
      return proto.int_val_size();
  }
}

/*!
 * \brief The tensor's shape, after checking that it is known, that its element and byte counts
 * do not overflow, and that its bytes (as `dtype`) fit `max_bytes`; `count` gets the element count.
 */
Shape CheckedShape(const TensorProto& proto, DType dtype, int64_t max_bytes, uint64_t* count) {
  Shape shape = ToShape(proto.tensor_shape());
  IR_CHECK(shape.is_known()) << "the tensor's shape " << shape << " is not fully known";
  uint64_t extent = 1, bytes = 0;
  *count = 1;
  for (int64_t d : shape.dims()) {
    bool overflow = __builtin_mul_overflow(extent, static_cast<uint64_t>(std::max<int64_t>(d, 1)), &extent);
    IR_CHECK(!overflow && extent < (uint64_t{1} << 62)) << "the tensor's shape " << shape << " is too large";
    *count *= static_cast<uint64_t>(d);
  }
  IR_CHECK(!__builtin_mul_overflow(*count, DTypeSize(dtype), &bytes) && bytes <= static_cast<uint64_t>(max_bytes))
      << "the tensor of shape " << shape << " (" << DTypeName(dtype) << ", " << *count
      << " elements) exceeds the limit of " << max_bytes << " bytes";
  return shape;
}

/*! \brief Checks, before anything is allocated, that the proto's encoding holds `count` elements. */
void CheckEncoding(const TensorProto& proto, const Shape& shape, uint64_t count) {
  if (!proto.tensor_content().empty() || count == 0) {
    uint64_t need = count * TFTypeSize(proto.dtype());  // < 2^62 * 8: CheckedShape bounded count
    IR_CHECK(proto.tensor_content().size() == need)
        << "tensor_content holds " << proto.tensor_content().size() << " bytes but shape " << shape << " of "
        << TFTypeName(proto.dtype()) << " needs " << need;
    return;
  }
  IR_CHECK(static_cast<uint64_t>(ValueCount(proto)) <= count)
      << "the tensor has " << ValueCount(proto) << " values but its shape " << shape << " holds " << count;
}

/*! \brief The element of a one-element array as a double, when the double converts back exactly. */
template <typename T>
bool ExactValue(const NDArray& one, double* value) {
  T v = one.data<T>()[0];
  *value = static_cast<double>(v);
  if (!std::isfinite(*value) || *value < -0x1p63 || *value >= 0x1p63) return false;
  return static_cast<T>(*value) == v;
}

}  // namespace

NDArray DecodeTensor(const TensorProto& proto, int64_t max_bytes) {
  DType dtype = ToDType(proto.dtype());
  uint64_t count = 0;
  Shape shape = CheckedShape(proto, dtype, max_bytes, &count);
  CheckEncoding(proto, shape, count);
  NDArray out(shape, dtype);
  if (!proto.tensor_content().empty() || out.Size() == 0) {
    DecodeContent(proto, out);
  } else {
    DecodeValues(proto, out);
  }
  return out;
}

bool DecodeSplat(const TensorProto& proto, int64_t max_bytes, Splat* splat) {
  if (!proto.tensor_content().empty() || ValueCount(proto) > 1) return false;
  DType dtype = ToDType(proto.dtype());
  uint64_t count = 0;
  Shape shape = CheckedShape(proto, dtype, max_bytes, &count);
  if (count * DTypeSize(dtype) <= static_cast<uint64_t>(kMinSplatBytes)) return false;
  TensorProto scalar = proto;
  scalar.clear_tensor_shape();
  NDArray one = DecodeTensor(scalar, max_bytes);
  double value = 0;
  bool exact = false;
  switch (dtype) {
    case DType::kFloat32:
      exact = ExactValue<float>(one, &value);
      break;
    case DType::kFloat64:
      exact = ExactValue<double>(one, &value);
      break;
    case DType::kInt32:
      exact = ExactValue<int32_t>(one, &value);
      break;
    case DType::kInt64:
      exact = ExactValue<int64_t>(one, &value);
      break;
    case DType::kBool:
      exact = ExactValue<bool>(one, &value);
      break;
    default:
      return false;
  }
  if (!exact) return false;
  *splat = Splat{shape, dtype, value};
  return true;
}

}  // namespace tf
}  // namespace ir
