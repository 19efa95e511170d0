/*!
 * \file shape_only.cc
 * \brief Marks the ops whose results depend only on their inputs' shapes and dtypes
 * (TShapeOnly), so FoldConstants can evaluate them as soon as those shapes are inferred.
 */
#include "ops/op_common.h"

namespace ir {
namespace op {

IR_REGISTER_OP(shape).set_attr<TShapeOnly>("TShapeOnly", true);
IR_REGISTER_OP(size).set_attr<TShapeOnly>("TShapeOnly", true);
IR_REGISTER_OP(rank).set_attr<TShapeOnly>("TShapeOnly", true);
IR_REGISTER_OP(zeros_like).set_attr<TShapeOnly>("TShapeOnly", true);
IR_REGISTER_OP(ones_like).set_attr<TShapeOnly>("TShapeOnly", true);

}  // namespace op
}  // namespace ir
