/*!
 * \file check_operand.cc
 * \brief check_int_operand: passes an integer divisor or exponent through, raising an error
 * when one of its elements is invalid (zero divisor, negative exponent).
 *
 * Our own integer divide, floor_divide, floor_mod and power are total (binary_functors.h: a
 * zero divisor gives 0, a negative exponent truncates), so no input is undefined behaviour.
 * Frontends whose source framework raises instead (TensorFlow: "Integer division by zero")
 * put this op on the operand, so the error surfaces from Session::Run naming the source node.
 */
#include <dmlc/parameter.h>

#include <cstring>

#include "ir/vectorize.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

struct CheckIntOperandParam : public dmlc::Parameter<CheckIntOperandParam> {
  std::string require;
  std::string message;
  std::string context;
  DMLC_DECLARE_PARAMETER(CheckIntOperandParam) {
    DMLC_DECLARE_FIELD(require).describe("What every element must be: \"nonzero\" or \"nonnegative\".");
    DMLC_DECLARE_FIELD(message).describe(
        "The error raised when an element is not (e.g. \"Integer division by zero\").");
    DMLC_DECLARE_FIELD(context).set_default("").describe(
        "Who raises it, prefixed to the message (e.g. the TensorFlow node); empty: this node.");
  }
};
DMLC_REGISTER_PARAMETER(CheckIntOperandParam);

void ParseCheck(NodeAttrs* attrs) {
  ParamParser<CheckIntOperandParam>(attrs);
  const std::string& require = dmlc::get<CheckIntOperandParam>(attrs->parsed).require;
  IR_CHECK(require == "nonzero" || require == "nonnegative")
      << NodeDesc(*attrs) << ": require must be \"nonzero\" or \"nonnegative\", got \"" << require << "\"";
}

/*! \brief The index of the first element failing the requirement, or -1. */
template <typename T>
int64_t FirstInvalid(const NDArray& data, bool nonzero) {
  const T* p = data.data<T>();
  for (int64_t i = 0, n = data.Size(); i < n; ++i) {
    if (nonzero ? p[i] == 0 : p[i] < 0) return i;
  }
  return -1;
}

void CheckCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out) {
  const auto& p = dmlc::get<CheckIntOperandParam>(attrs.parsed);
  int64_t bad = -1;
  switch (in[0].dtype()) {
    case DType::kInt32:
      bad = FirstInvalid<int32_t>(in[0], p.require == "nonzero");
      break;
    case DType::kInt64:
      bad = FirstInvalid<int64_t>(in[0], p.require == "nonzero");
      break;
    default:
      UnsupportedDType(in[0].dtype(), "int32 or int64");
  }
  if (bad >= 0) {
    throw Error(StrCat(p.context.empty() ? NodeDesc(attrs) : p.context, ": ", p.message, " (element ", bad,
                       " of an operand of shape ", in[0].shape(), ")"));
  }
  if (out[0].data() != in[0].data()) std::memcpy(out[0].data(), in[0].data(), in[0].nbytes());
}

}  // namespace

IR_REGISTER_OP(check_int_operand)
    .describe(
        "data (int32 or int64), unchanged, after checking that every element is nonzero or "
        "nonnegative (`require`); otherwise raises `message`. Integer ops of frontends that "
        "raise on a zero divisor or a negative exponent put it on that operand.")
    .set_num_inputs(1)
    .set_input_names({"data"})
    .set_param<CheckIntOperandParam>()
    .set_attr_parser(ParseCheck)
    .set_attr<TMayRaise>("TMayRaise", true)
    .set_attr<FInferShape>("FInferShape", ElemwiseShape)
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            bool known = ElemwiseType(attrs, in, out);
                            if (known) CheckDType(attrs, "input", (*in)[0], {DType::kInt32, DType::kInt64});
                            return known;
                          })
    .set_attr<FCompute>("FCompute", CheckCompute)
    // No FCodeGen and an opaque pattern: fusion never folds the check into the division's kernel.
    .set_attr<FInplaceOption>("FInplaceOption",
                              [](const NodeAttrs&) {
                                return std::vector<std::pair<int, int>>{{0, 0}};
                              })
    // Integer operands carry no gradient.
    .set_attr<FGradient>("FGradient", ZeroGradient)
    // In a pfor: one check of every iteration's operand.
    .set_attr<FVectorize>("FVectorize", VectorizeElementwise)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
