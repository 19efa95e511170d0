/*!
 * \file kernel_builder.h
 * \brief Builds the Kernel of a fused group from its members' FCodeGen expressions.
 */
#ifndef IR_CODEGEN_KERNEL_BUILDER_H_
#define IR_CODEGEN_KERNEL_BUILDER_H_

#include <vector>

#include "ir/codegen.h"
#include "ir/fusion.h"

namespace ir {
namespace codegen {

/*!
 * \brief The kernel computing `group` for inputs of the given shapes and dtypes.
 *
 * Params: "in<k>" for every group input (written too when a member mutates it), then
 * "out<j>" for every output that does not alias an input. The iteration domain is collapsed
 * where all buffers agree (contiguous or broadcast alike); broadcast inputs load with
 * stride 0. Every member value is computed once (a let), whatever its number of uses.
 * Throws ir::Error when a member cannot be generated.
 */
Kernel BuildKernel(const FusedGroup& group, const std::vector<Shape>& input_shapes,
                   const std::vector<DType>& input_types);

}  // namespace codegen
}  // namespace ir

#endif  // IR_CODEGEN_KERNEL_BUILDER_H_
