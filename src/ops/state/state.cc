/*!
 * \file state.cc
 * \brief Ops on state: assign, assign_add, assign_sub write into a variable; no_op and
 * group produce an int32 token and exist to be run for their control dependencies.
 *
 * Variables are variable nodes (no op). The assign family mutates input 0 (FMutateInputs)
 * and output 0 aliases it (FInplaceOption), so the memory planner gives the output the
 * variable's own storage. Gradients never flow through state updates: the assign family
 * registers no FGradient, so differentiating through one is an error naming the op.
 */
#include "ir/device_kernel.h"
#include "ir/vectorize.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

std::vector<uint32_t> MutatesRef(const NodeAttrs&) { return {0}; }
std::vector<std::pair<int, int>> OutputIsRef(const NodeAttrs&) { return {{0, 0}}; }

/*!
 * \brief The element expression of an update: the new value of `ref`. The Fusion pass
 * fuses updates with the elementwise math that computes their value (a whole optimizer
 * step of one variable becomes one kernel); code generation stores the expression into the
 * mutated input, so the variable is written in place.
 */
FCodeGen UpdateCodeGen(ast::Expr (*combine)(ast::Expr ref, ast::Expr value)) {
  return [combine](const NodeAttrs&, const std::vector<ast::Expr>& in) -> std::vector<ast::Expr> {
    if (in[0]->dtype != in[1]->dtype || in[0]->dtype == DType::kBool) return {};
    return {combine(in[0], in[1])};
  };
}

/*! \brief Registers what the assign family shares: signature, aliasing, inference. */
struct StateUpdateOp {
  DTypeSet allowed;
  void operator()(Op& op) const {
    DTypeSet types = allowed;
    op.set_num_inputs(2)
        .set_input_names({"ref", "value"})
        .set_attr<FMutateInputs>("FMutateInputs", MutatesRef)
        .set_attr<FInplaceOption>("FInplaceOption", OutputIsRef)
        .set_attr<FInferShape>("FInferShape", ElemwiseShape)
        .set_attr<FInferType>("FInferType",
                              [types](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                                bool known = ElemwiseType(attrs, in, out);
                                CheckDType(attrs, "input", (*in)[0], types);
                                return known;
                              })
        .set_attr<TOpPattern>("TOpPattern", kElemWise);
  }
};

/*! \brief Writes ref op= value elementwise, then makes output 0 hold the result. */
template <typename F>
FCompute ReadModifyWrite(F f) {
  return [f](const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
    const NDArray& ref = in[0];
    IR_NUMERIC_SWITCH(ref.dtype(), DT, {
      DT* dst = ref.data<DT>();
      const DT* src = in[1].data<DT>();
      ParallelFor(ref.Size(), [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) dst[i] = f(dst[i], src[i]);
      });
    });
    if (!out[0].Overlaps(ref)) out[0].CopyFrom(ref);
  };
}

void AssignCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out) {
  in[0].CopyFrom(in[1]);
  if (!out[0].Overlaps(in[0])) out[0].CopyFrom(in[0]);
}

/*! \brief Shape and type of a token: an int32 scalar, whatever the inputs are. */
bool TokenShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  AssignShape(attrs, "output 0", &(*out)[0], Shape::Scalar());
  return AllKnown(*in, *out);
}
bool TokenType(const NodeAttrs&, std::vector<DType>* in, std::vector<DType>* out) {
  return OutputsAre(DType::kInt32, in, out);
}
void TokenCompute(const OpContext&, const NodeAttrs&, const std::vector<NDArray>&, const std::vector<NDArray>& out) {
  *out[0].data<int32_t>() = 0;
}

/*! \brief Registers a token op (no_op, group): an int32 scalar that orders work. */
void TokenOp(Op& op) {
  op.set_num_outputs(1)
      .set_attr<FInferShape>("FInferShape", TokenShape)
      .set_attr<FInferType>("FInferType", TokenType)
      .set_attr<FCompute>("FCompute", TokenCompute)
      .set_attr<FDeviceKernel>("FDeviceKernel",
                               [](DeviceKernelContext& dev, const NodeAttrs&, const std::vector<NDArray>&,
                                  const std::vector<NDArray>& out) { dev.Fill(out[0], 0); })
      .set_attr<FGradient>("FGradient", ZeroGradient)
      .set_attr<TOpPattern>("TOpPattern", kOpaque);
}

/*!
 * \brief A write of per-iteration values into one variable has no batched form (the last
 * iteration's write wins in the loop): the assign family declines and runs as a counted loop.
 * (Without a converter, their elementwise pattern would get the generic converter, which would
 * write into a broadcast copy of the variable.)
 */
std::vector<PforValue> DeclineStateUpdate(PforContext&) { return {}; }

/*! \brief group's token does not depend on the values it waits for: one token after all of them. */
std::vector<PforValue> GroupVectorize(PforContext& ctx) {
  std::vector<NodeEntry> inputs;
  for (const PforValue& v : ctx.inputs()) inputs.push_back(v.entry);
  return {PforValue{ctx.CopyNode(std::move(inputs), ctx.attrs().dict), false}};
}

}  // namespace

IR_REGISTER_OP(assign)
    .describe(
        "Writes `value` into the variable `ref`; the output is the variable's new value "
        "(it shares ref's storage). On an uninitialized variable, allocates it.")
    .apply(StateUpdateOp{AllTypes()})
    .set_attr<TOverwritesMutatedInputs>("TOverwritesMutatedInputs", true)
    .set_attr<FCodeGen>("FCodeGen", UpdateCodeGen([](ast::Expr, ast::Expr value) { return value; }))
    .set_attr<FCompute>("FCompute", AssignCompute)
    .set_attr<FVectorize>("FVectorize", DeclineStateUpdate);

IR_REGISTER_OP(assign_add)
    .describe("ref += value; the output is the variable's new value (it shares ref's storage).")
    .apply(StateUpdateOp{NumericTypes()})
    .set_attr<FCodeGen>("FCodeGen", UpdateCodeGen([](ast::Expr ref, ast::Expr value) { return ref + value; }))
    .set_attr<FCompute>("FCompute", ReadModifyWrite([](auto a, auto b) { return a + b; }))
    .set_attr<FVectorize>("FVectorize", DeclineStateUpdate);

IR_REGISTER_OP(assign_sub)
    .describe("ref -= value; the output is the variable's new value (it shares ref's storage).")
    .apply(StateUpdateOp{NumericTypes()})
    .set_attr<FCodeGen>("FCodeGen", UpdateCodeGen([](ast::Expr ref, ast::Expr value) { return ref - value; }))
    .set_attr<FCompute>("FCompute", ReadModifyWrite([](auto a, auto b) { return a - b; }))
    .set_attr<FVectorize>("FVectorize", DeclineStateUpdate);

IR_REGISTER_OP(no_op)
    .describe("Does nothing; outputs an int32 scalar 0. Run it for its control dependencies.")
    .set_num_inputs(0)
    .apply(TokenOp);

IR_REGISTER_OP(group)
    .describe("Runs after all its inputs (like tf.group); outputs an int32 scalar 0.")
    .set_num_inputs(kVariadic)
    .apply(TokenOp)
    .set_attr<FVectorize>("FVectorize", GroupVectorize);

}  // namespace op
}  // namespace ir
