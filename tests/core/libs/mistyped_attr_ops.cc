// Sets exp's FInferShape with an int: the error must name the op, the key and the library.
#include <ir/op.h>

IR_REGISTER_OP(exp).set_attr<int>("FInferShape", 1, 20);
