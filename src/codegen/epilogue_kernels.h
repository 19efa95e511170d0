/*!
 * \file epilogue_kernels.h
 * \brief The generated kernels of a fused graph's epilogue groups (what the "_fused" op compiles
 * when it first runs each one), for the golden corpus and compile checks.
 */
#ifndef IR_CODEGEN_EPILOGUE_KERNELS_H_
#define IR_CODEGEN_EPILOGUE_KERNELS_H_

#include <vector>

#include "ir/codegen.h"
#include "ir/graph.h"

namespace ir {
namespace codegen {

/*!
 * \brief One kernel per "epilogue" fused node of `graph` (with "shape" and "dtype"), in node
 * order, duplicates dropped: in0 is the anchor's value, then the epilogue's other inputs.
 * Throws ir::Error when an epilogue cannot be generated.
 */
std::vector<Kernel> EpilogueKernels(const Graph& graph);

}  // namespace codegen
}  // namespace ir

#endif  // IR_CODEGEN_EPILOGUE_KERNELS_H_
