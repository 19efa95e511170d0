#include "core/test_ops.h"

#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace test {

Symbol Apply(const std::string& op, const std::vector<Symbol>& inputs, const std::map<std::string, std::string>& attrs,
             const std::string& name) {
  Symbol sym = Symbol::CreateFunctor(Op::Get(op), attrs, name.empty() ? op : name);
  sym.Compose(inputs, {}, name);
  return sym;
}

namespace {

struct SplitParam : public dmlc::Parameter<SplitParam> {
  int num_outputs;
  DMLC_DECLARE_PARAMETER(SplitParam) {
    DMLC_DECLARE_FIELD(num_outputs).set_lower_bound(1).describe("Number of outputs.");
  }
};
DMLC_REGISTER_PARAMETER(SplitParam);

struct SumParam : public dmlc::Parameter<SumParam> {
  int num_args;
  DMLC_DECLARE_PARAMETER(SumParam) { DMLC_DECLARE_FIELD(num_args).set_lower_bound(1).describe("Number of inputs."); }
};
DMLC_REGISTER_PARAMETER(SumParam);

struct TestParam : public dmlc::Parameter<TestParam> {
  int axis;
  float scale;
  int mode;
  DMLC_DECLARE_PARAMETER(TestParam) {
    DMLC_DECLARE_FIELD(axis).describe("An axis.");
    DMLC_DECLARE_FIELD(scale).set_default(1.0f).describe("A scale.");
    DMLC_DECLARE_FIELD(mode).add_enum("fast", 0).add_enum("exact", 1).set_default(0).describe("A mode.");
  }
};
DMLC_REGISTER_PARAMETER(TestParam);

bool SameShape(const NodeAttrs&, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape merged;
  for (const Shape& s : *in) IR_CHECK(Shape::Merge(merged, s, &merged)) << "shape mismatch";
  for (Shape& s : *in) s = merged;
  for (Shape& s : *out) s = merged;
  return merged.is_known();
}

bool SameType(const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out) {
  DType t = DType::kUnknown;
  for (DType d : *in) {
    if (d != DType::kUnknown) t = d;
  }
  for (DType& d : *in) d = t;
  for (DType& d : *out) d = t;
  return t != DType::kUnknown;
}

IR_REGISTER_OP(core_test_add)
    .describe("Adds two tensors of the same shape.")
    .set_num_inputs(2)
    .set_input_names({"lhs", "rhs"})
    .set_attr<FInferShape>("FInferShape", SameShape)
    .set_attr<FInferType>("FInferType", SameType)
    .set_attr<TOpPattern>("TOpPattern", kElemWise);

IR_REGISTER_OP(core_test_split)
    .describe("Splits into num_outputs parts.")
    .set_num_inputs(1)
    .set_num_outputs([](const NodeAttrs& attrs) {
      return static_cast<uint32_t>(dmlc::get<SplitParam>(attrs.parsed).num_outputs);
    })
    .set_param<SplitParam>()
    .set_attr<FListOutputNames>("FListOutputNames",
                                [](const NodeAttrs& attrs) {
                                  std::vector<std::string> names;
                                  for (int i = 0; i < dmlc::get<SplitParam>(attrs.parsed).num_outputs; ++i) {
                                    names.push_back("part" + std::to_string(i));
                                  }
                                  return names;
                                })
    .set_attr<FInferShape>("FInferShape", SameShape);

IR_REGISTER_OP(core_test_concat)
    .describe("Concatenates any number of inputs.")
    .set_num_inputs(kVariadic)
    .set_attr<FInferShape>("FInferShape", SameShape);

IR_REGISTER_OP(core_test_sum)
    .describe("Sums num_args inputs.")
    .set_num_inputs([](const NodeAttrs& attrs) {
      return static_cast<uint32_t>(dmlc::get<SumParam>(attrs.parsed).num_args);
    })
    .set_param<SumParam>()
    .set_attr<FInferShape>("FInferShape", SameShape);

IR_REGISTER_OP(core_test_assign)
    .describe("Writes value into ref.")
    .set_num_inputs(2)
    .set_input_names({"ref", "value"})
    .set_attr<FMutateInputs>("FMutateInputs", [](const NodeAttrs&) { return std::vector<uint32_t>{0}; })
    .set_attr<FInferShape>("FInferShape", SameShape);

IR_REGISTER_OP(core_test_param)
    .describe("Has typed parameters.")
    .set_num_inputs(1)
    .set_param<TestParam>()
    .set_attr<FInferShape>("FInferShape", SameShape);

IR_REGISTER_OP(core_test_opaque)
    .describe("Registers no shape inference.")
    .set_num_inputs(1)
    .add_alias("core_test_opaque_alias");

}  // namespace
}  // namespace test
}  // namespace ir
