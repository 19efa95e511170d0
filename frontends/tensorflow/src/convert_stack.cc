/*!
 * \file convert_stack.cc
 * \brief Converters of the nodes LowerStacks (functionalize_stacks.cc) makes of a TF1 gradient
 * loop's stacks: the array (holding nothing: [0, 0], an element shape of unknown rank that the
 * first push adopts), a push (the value written at row `count`, the array growing by doubling;
 * count + 1) and a pop (count - 1; that row). A pop of an empty stack reads row -1: an error
 * naming the pop.
 */
#include "converter.h"
#include "functionalize.h"

namespace ir {
namespace tf {
namespace {

using Outputs = std::vector<NodeEntry>;

Outputs ConvertStackArray(ImportContext& ctx) {
  return {ctx.Op("fill", {}, {{"shape", "(0, 0)"}, {"value", "0"}, {"dtype", DTypeName(ctx.Type("elem_type"))}})};
}

Outputs ConvertStackPush(ImportContext& ctx) {
  ctx.ExpectInputs(3);
  NodeEntry array = ctx.Op("tensor_array_write_grow", {ctx.input(0), ctx.input(1), ctx.input(2)},
                           {{"double_capacity", "true"}}, "array");
  NodeEntry count = ctx.Op("add_scalar", {ctx.input(1)}, {{"scalar", "1"}}, "count");
  return {ctx.input(2), array, count};
}

Outputs ConvertStackPop(ImportContext& ctx) {
  ctx.ExpectInputs(2);
  NodeEntry count = ctx.Op("subtract_scalar", {ctx.input(1)}, {{"scalar", "1"}}, "count");
  return {ctx.Op("tensor_array_read", {ctx.input(0), count}), count};
}

}  // namespace

IR_TF_CONVERTER({kStackArrayOp}, ConvertStackArray);
IR_TF_CONVERTER({kStackPushOp}, ConvertStackPush);
IR_TF_CONVERTER({kStackPopOp}, ConvertStackPop);

}  // namespace tf
}  // namespace ir
