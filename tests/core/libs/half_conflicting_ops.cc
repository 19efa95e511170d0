// Registers a new op, rewrites tanh's description and input count and adds it an attribute,
// then clashes with exp's FGradient: the loader must reject all of it, not just the clash.
#include <ir/op.h>
#include <ir/op_attr_types.h>

IR_REGISTER_OP(half_registered_op).describe("Must never be listed: its library is rejected.");

IR_REGISTER_OP(tanh).describe("Hijacked.").set_num_inputs(3).set_attr<int>("half_conflicting_attr", 1);

IR_REGISTER_OP(exp).set_attr<ir::FGradient>("FGradient", [](const ir::NodePtr&, const std::vector<ir::NodeEntry>&) {
  return std::vector<ir::NodeEntry>{};
});
