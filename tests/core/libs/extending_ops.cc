// What a library may do to a built-in op: repeat its description, add attributes and an alias.
#include <ir/op.h>

IR_REGISTER_OP(exp)
    .describe("e^x, elementwise.")
    .set_num_inputs(1)
    .set_attr<int>("extending_attr", 7)
    .add_alias("extending_exp");
