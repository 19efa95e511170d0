/*!
 * \file init.cc
 * \brief Ops that create tensors: fill, zeros, ones (shape and dtype as parameters),
 * zeros_like, ones_like (shape and dtype of an input), and constant (a bound tensor, given as
 * text or as base64 bytes, that survives JSON save/load with the graph). The sources are
 * kElemWise with a literal as FCodeGen, so a fused kernel needs no buffer for them.
 */
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <type_traits>

#include "ir/device_kernel.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

using ast::Expr;

/*! \brief Writes `value` (converted to the array's dtype) to every element. */
void FillArray(const NDArray& out, double value) {
  IR_ALL_TYPES_SWITCH(out.dtype(), T, {
    T v = static_cast<T>(value);
    T* dst = out.data<T>();
    ParallelFor(out.Size(), [&](int64_t begin, int64_t end) { std::fill(dst + begin, dst + end, v); });
  });
}

Shape ToShape(const NodeAttrs& attrs, const IntList& dims) {
  for (int64_t d : dims.values) {
    IR_CHECK(d >= 0) << NodeDesc(attrs) << ": shape " << dims << " has a negative dimension";
  }
  Shape shape(dims.values);
  IR_CHECK(shape.FitsInt64()) << NodeDesc(attrs) << ": shape " << dims
                              << " has more elements than a 64-bit integer can count";
  return shape;
}

// ---------------------------------------------------------------- fill, zeros, ones

struct FillParam : public dmlc::Parameter<FillParam> {
  IntList shape;
  double value;
  DType dtype;
  DMLC_DECLARE_PARAMETER(FillParam) {
    DMLC_DECLARE_FIELD(shape).describe("The result's shape, e.g. (2, 3); () is a scalar.");
    DMLC_DECLARE_FIELD(value).describe("The value of every element (exactly representable in dtype).");
    DMLC_DECLARE_FIELD(dtype).set_default(DType::kFloat32).describe("The result's dtype.");
  }
};
DMLC_REGISTER_PARAMETER(FillParam);

struct ShapeDTypeParam : public dmlc::Parameter<ShapeDTypeParam> {
  IntList shape;
  DType dtype;
  DMLC_DECLARE_PARAMETER(ShapeDTypeParam) {
    DMLC_DECLARE_FIELD(shape).describe("The result's shape, e.g. (2, 3); () is a scalar.");
    DMLC_DECLARE_FIELD(dtype).set_default(DType::kFloat32).describe("The result's dtype.");
  }
};
DMLC_REGISTER_PARAMETER(ShapeDTypeParam);

double FillValue(const FillParam& p) { return p.value; }
double ZeroValue(const ShapeDTypeParam&) { return 0; }
double OneValue(const ShapeDTypeParam&) { return 1; }

/*! \brief Registers a source op whose parameters P give its shape, dtype and `value_of` its value. */
template <typename P>
auto FillOp(double (*value_of)(const P&)) {
  return [value_of](Op& op) {
    op.set_num_inputs(0).set_param<P>();
    op.set_attr_parser([value_of](NodeAttrs* attrs) {
      ParamParser<P>(attrs);
      const P& p = dmlc::get<P>(attrs->parsed);
      ToShape(*attrs, p.shape);
      IR_CHECK(ValueFitsDType(value_of(p), p.dtype)) << NodeDesc(*attrs) << ": value " << NumberToString(value_of(p))
                                                     << " is not representable in dtype " << DTypeName(p.dtype);
    });
    op.set_attr<FInferShape>("FInferShape", [](const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
      AssignShape(attrs, "output 0", &(*out)[0], ToShape(attrs, dmlc::get<P>(attrs.parsed).shape));
      return true;
    });
    op.set_attr<FInferType>("FInferType", [](const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
      AssignType(attrs, "output 0", &(*out)[0], dmlc::get<P>(attrs.parsed).dtype);
      return true;
    });
    op.set_attr<FCompute>("FCompute", [value_of](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>&,
                                                 const std::vector<NDArray>& out) {
      FillArray(out[0], value_of(dmlc::get<P>(attrs.parsed)));
    });
    op.set_attr<FDeviceKernel>(
        "FDeviceKernel",
        [value_of](DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>&,
                   const std::vector<NDArray>& out) { dev.Fill(out[0], value_of(dmlc::get<P>(attrs.parsed))); });
    op.set_attr<FCodeGen>("FCodeGen", [value_of](const NodeAttrs& attrs, const std::vector<Expr>&) {
      const P& p = dmlc::get<P>(attrs.parsed);
      return std::vector<Expr>{ast::Const(value_of(p), p.dtype)};
    });
    op.set_attr<TOpPattern>("TOpPattern", kElemWise);
  };
}

/*! \brief Registers zeros_like / ones_like: `value` in the shape and dtype of the input. */
auto FillLikeOp(double value) {
  return [value](Op& op) {
    op.set_num_inputs(1).set_input_names({"data"});
    op.set_attr<FInferShape>("FInferShape", ElemwiseShape);
    op.set_attr<FInferType>("FInferType", ElemwiseType);
    op.set_attr<FCompute>("FCompute", [value](const OpContext&, const NodeAttrs&, const std::vector<NDArray>&,
                                              const std::vector<NDArray>& out) { FillArray(out[0], value); });
    op.set_attr<FDeviceKernel>("FDeviceKernel",
                               [value](DeviceKernelContext& dev, const NodeAttrs&, const std::vector<NDArray>&,
                                       const std::vector<NDArray>& out) { dev.Fill(out[0], value); });
    op.set_attr<FCodeGen>("FCodeGen", [value](const NodeAttrs&, const std::vector<Expr>& in) {
      return std::vector<Expr>{ast::ConstLike(value, in[0])};
    });
    op.set_attr<FGradient>("FGradient", ZeroGradient);
    // The input's values are never read, so its buffer may hold the result, and FoldConstants
    // evaluates the op as soon as the input's shape and dtype are inferred.
    op.set_attr<FInplaceOption>("FInplaceOption", [](const NodeAttrs&) {
      return std::vector<std::pair<int, int>>{{0, 0}};
    });
    op.set_attr<TShapeOnly>("TShapeOnly", true);
    op.set_attr<TOpPattern>("TOpPattern", kElemWise);
  };
}

// ---------------------------------------------------------------- constant

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "data_base64 is read as the host's little-endian bytes");

struct ConstantParam : public dmlc::Parameter<ConstantParam> {
  DType dtype;
  std::string shape;  // an IntList, or empty (a string: "unset" differs from "()")
  std::string value;
  std::string data_base64;
  DMLC_DECLARE_PARAMETER(ConstantParam) {
    DMLC_DECLARE_FIELD(dtype).set_default(DType::kFloat32).describe("The tensor's dtype.");
    DMLC_DECLARE_FIELD(shape).set_default("").describe(
        "The tensor's shape, e.g. (2, 3). Default: a scalar for one value without brackets, else a vector.");
    DMLC_DECLARE_FIELD(value).set_default("").describe(
        "The elements as text in row-major order, e.g. \"[1, 2.5]\" (brackets may nest); one value fills "
        "the shape. Bools are true/false or 0/1.");
    DMLC_DECLARE_FIELD(data_base64)
        .set_default("")
        .describe("Instead of value: the elements' raw little-endian bytes in row-major order, base64-encoded.");
  }
};
DMLC_REGISTER_PARAMETER(ConstantParam);

/*!
 * \brief What a constant node's parser leaves in NodeAttrs::parsed: the tensor, ready to copy.
 * The elements of a larger-than-one-element constant live only here (shared by copies of the
 * attrs, never written): `data_base64` is dropped from the dict once decoded and produced again
 * only by FSaveAttrs. A one-element constant keeps its text, which kernel caches key on.
 */
struct ConstantValue {
  ConstantParam param;
  NDArray array;
};

const NDArray& ConstantArray(const NodeAttrs& attrs) { return dmlc::get<ConstantValue>(attrs.parsed).array; }

/*! \brief The elements parsed before (a reparse after a dict edit), or seeded by MakeConstantNode. */
NDArray HeldArray(const dmlc::any& parsed) {
  if (parsed.type() == typeid(ConstantValue)) return dmlc::get<ConstantValue>(parsed).array;
  if (parsed.type() == typeid(NDArray)) return dmlc::get<NDArray>(parsed);
  return NDArray();
}

/*! \brief Standard base64 with '=' padding (what DecodeBase64 reads). */
std::string EncodeBase64(const unsigned char* data, size_t n) {
  static const char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((n + 2) / 3 * 4);
  for (size_t i = 0; i < n; i += 3) {
    uint32_t chunk = static_cast<uint32_t>(data[i]) << 16;
    if (i + 1 < n) chunk |= static_cast<uint32_t>(data[i + 1]) << 8;
    if (i + 2 < n) chunk |= data[i + 2];
    out.push_back(kAlphabet[(chunk >> 18) & 63]);
    out.push_back(kAlphabet[(chunk >> 12) & 63]);
    out.push_back(i + 1 < n ? kAlphabet[(chunk >> 6) & 63] : '=');
    out.push_back(i + 2 < n ? kAlphabet[chunk & 63] : '=');
  }
  return out;
}

/*! \brief Decodes standard base64 ('=' padding, whitespace ignored); false on malformed text. */
bool DecodeBase64(const std::string& text, std::string* bytes) {
  static const std::string kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint32_t acc = 0;
  int bits = 0, padding = 0;
  size_t symbols = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    ++symbols;
    if (c == '=') {
      ++padding;
      continue;
    }
    size_t v = kAlphabet.find(c);
    if (v == std::string::npos || padding > 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes->push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return symbols % 4 == 0 && padding <= 2;
}

/*! \brief Parses one element; integers and bools must be exact ("2.0" is an int, "2.5" is not). */
template <typename T>
bool ParseElement(const std::string& token, T* out) {
  if constexpr (std::is_same_v<T, bool>) {
    if (token == "true" || token == "false") {
      *out = token == "true";
      return true;
    }
  } else if constexpr (std::is_integral_v<T>) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(token.c_str(), &end, 10);
    if (end != token.c_str() && *end == '\0') {
      *out = static_cast<T>(v);
      return errno == 0 && v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max();
    }
  }
  char* end = nullptr;
  double v = std::strtod(token.c_str(), &end);
  if (end == token.c_str() || *end != '\0' || !ValueFitsDType(v, DTypeOf<T>::value)) return false;
  *out = static_cast<T>(v);
  return true;
}

/*! \brief The `shape` parameter, or `fallback` when it is not given. */
Shape ShapeOr(const NodeAttrs& attrs, const ConstantParam& p, const Shape& fallback) {
  if (p.shape.empty()) return fallback;
  std::istringstream is(p.shape);
  IntList dims;
  IR_CHECK(is >> dims) << NodeDesc(attrs) << ": shape '" << p.shape << "' is not a list of integers";
  return ToShape(attrs, dims);
}

NDArray FromText(const NodeAttrs& attrs, const ConstantParam& p) {
  std::string text = p.value;
  for (char& c : text) {
    if (c == '[' || c == ']' || c == '(' || c == ')' || c == ',') c = ' ';
  }
  std::vector<std::string> tokens;
  std::istringstream items(text);
  for (std::string token; items >> token;) tokens.push_back(token);
  bool scalar = tokens.size() == 1 && p.value.find('[') == std::string::npos;
  Shape shape = ShapeOr(attrs, p, scalar ? Shape::Scalar() : Shape{static_cast<int64_t>(tokens.size())});
  NDArray array(shape, p.dtype);
  int64_t n = array.Size();
  IR_CHECK(static_cast<int64_t>(tokens.size()) == n || tokens.size() == 1)
      << NodeDesc(attrs) << ": value has " << tokens.size() << " elements but shape " << shape << " needs " << n
      << " (or 1 to fill it)";
  IR_ALL_TYPES_SWITCH(p.dtype, T, {
    T* dst = array.data<T>();
    for (size_t i = 0; i < tokens.size(); ++i) {
      T v{};
      IR_CHECK(ParseElement(tokens[i], &v))
          << NodeDesc(attrs) << ": value element '" << tokens[i] << "' is not a " << DTypeName(p.dtype);
      if (tokens.size() == 1) {
        std::fill(dst, dst + n, v);
      } else {
        dst[i] = v;
      }
    }
  });
  return array;
}

/*! \brief The tensor of `p`'s dtype and shape (default `fallback`) holding `n` raw bytes from `what`. */
NDArray FromBytes(const NodeAttrs& attrs, const ConstantParam& p, const std::string& what, const void* data, size_t n,
                  const Shape& fallback) {
  Shape shape = ShapeOr(attrs, p, fallback);
  NDArray array(shape, p.dtype);
  IR_CHECK(n == array.nbytes()) << NodeDesc(attrs) << ": " << what << " holds " << n << " bytes but shape " << shape
                                << " of " << DTypeName(p.dtype) << " needs " << array.nbytes();
  if (n == 0) return array;
  std::memcpy(array.data(), data, n);
  if (p.dtype == DType::kBool) {  // any nonzero byte is true; a bool must hold 0 or 1
    auto* raw = static_cast<unsigned char*>(array.data());
    for (size_t i = 0; i < n; ++i) raw[i] = raw[i] != 0;
  }
  return array;
}

NDArray FromBase64(const NodeAttrs& attrs, const ConstantParam& p) {
  std::string bytes;
  IR_CHECK(DecodeBase64(p.data_base64, &bytes)) << NodeDesc(attrs) << ": data_base64 is not valid base64";
  Shape flat{static_cast<int64_t>(bytes.size() / DTypeSize(p.dtype))};
  return FromBytes(attrs, p, "data_base64", bytes.data(), bytes.size(), flat);
}

/*! \brief The held elements as `p` describes them: shared when dtype and shape agree, else reinterpreted. */
NDArray FromHeld(const NodeAttrs& attrs, const ConstantParam& p, const NDArray& held) {
  if (held.dtype() == p.dtype && ShapeOr(attrs, p, held.shape()) == held.shape()) return held;
  return FromBytes(attrs, p, "the held tensor", held.data(), held.nbytes(), held.shape());
}

void ParseConstant(NodeAttrs* attrs) {
  NDArray held = HeldArray(attrs->parsed);
  ParamParser<ConstantParam>(attrs);
  ConstantParam p = std::move(dmlc::get<ConstantParam>(attrs->parsed));
  // Without either, a reparse (after a dict edit) keeps the elements already held.
  int given = !p.value.empty() + !p.data_base64.empty();
  IR_CHECK(given == 1 || (given == 0 && held.defined()))
      << NodeDesc(*attrs) << ": needs exactly one of 'value' and 'data_base64'";
  NDArray array = !p.value.empty()         ? FromText(*attrs, p)
                  : !p.data_base64.empty() ? FromBase64(*attrs, p)
                                           : FromHeld(*attrs, p, held);
  if (array.Size() > 1) {  // the array is the one copy of the elements: base64 text would double them
    attrs->dict.erase("data_base64");
    p.data_base64.clear();
  } else if (given == 0) {  // a literal in generated kernels, cached by the string attributes
    attrs->dict["data_base64"] = EncodeBase64(static_cast<const unsigned char*>(array.data()), array.nbytes());
  }
  attrs->parsed = ConstantValue{std::move(p), std::move(array)};
}

/*! \brief FSaveAttrs: elements held only as an array are written as base64 bytes. */
void SaveConstantAttrs(const NodeAttrs& attrs, std::map<std::string, std::string>* dict) {
  if (dict->count("value")) return;
  const NDArray& array = ConstantArray(attrs);
  (*dict)["data_base64"] = EncodeBase64(static_cast<const unsigned char*>(array.data()), array.nbytes());
}

/*! \brief A one-element constant is a literal in fused kernels (when the literal is exact). */
std::vector<Expr> ConstantCodeGen(const NodeAttrs& attrs, const std::vector<Expr>&) {
  const NDArray& array = ConstantArray(attrs);
  if (array.Size() != 1) return {};
  double value = 0;
  IR_ALL_TYPES_SWITCH(array.dtype(), T, {
    T v = array.data<T>()[0];
    value = static_cast<double>(v);
    if (!std::isnan(value) && static_cast<T>(value) != v) return {};
  });
  return {ast::Const(value, array.dtype())};
}

}  // namespace

IR_REGISTER_OP(fill)
    .describe("A tensor of the given shape and dtype with every element `value`.")
    .apply(FillOp(FillValue));
IR_REGISTER_OP(zeros).describe("A tensor of the given shape and dtype filled with 0.").apply(FillOp(ZeroValue));
IR_REGISTER_OP(ones).describe("A tensor of the given shape and dtype filled with 1.").apply(FillOp(OneValue));
IR_REGISTER_OP(zeros_like).describe("Zeros of the shape and dtype of data.").apply(FillLikeOp(0));
IR_REGISTER_OP(ones_like).describe("Ones of the shape and dtype of data.").apply(FillLikeOp(1));

IR_REGISTER_OP(constant)
    .describe(
        "A tensor bound into the graph, given as text (`value`) or as base64 bytes (`data_base64`); "
        "held in memory as an array, with data_base64 written again only when the graph is saved.")
    .set_num_inputs(0)
    .add_arguments(ConstantParam::__FIELDS__())
    .set_attr_parser(ParseConstant)
    .set_attr<FInferShape>("FInferShape",
                           [](const NodeAttrs& attrs, std::vector<Shape>*, std::vector<Shape>* out) {
                             AssignShape(attrs, "output 0", &(*out)[0], ConstantArray(attrs).shape());
                             return true;
                           })
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>*, std::vector<DType>* out) {
                            AssignType(attrs, "output 0", &(*out)[0], ConstantArray(attrs).dtype());
                            return true;
                          })
    .set_attr<FCompute>("FCompute", [](const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>&,
                                       const std::vector<NDArray>& out) { out[0].CopyFrom(ConstantArray(attrs)); })
    // On devices the held array is uploaded.
    .set_attr<FDeviceKernel>("FDeviceKernel",
                             [](DeviceKernelContext&, const NodeAttrs& attrs, const std::vector<NDArray>&,
                                const std::vector<NDArray>& out) { out[0].CopyFrom(ConstantArray(attrs)); })
    .set_attr<FCodeGen>("FCodeGen", ConstantCodeGen)
    .set_attr<FSaveAttrs>("FSaveAttrs", SaveConstantAttrs)
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

}  // namespace op
}  // namespace ir
