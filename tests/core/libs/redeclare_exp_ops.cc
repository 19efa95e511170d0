// Only redeclares the built-in exp with two inputs: a changed signature, which must be refused.
#include <ir/op.h>

IR_REGISTER_OP(exp).set_num_inputs(2);
