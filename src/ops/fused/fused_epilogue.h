/*!
 * \file fused_epilogue.h
 * \brief Running an "epilogue" fused group: its anchor (matmul, conv2d) and the elementwise
 * epilogue, folded into the anchor's kernel where the op can (FComputeEpilogue), else as one
 * generated map kernel over the anchor's output, in place.
 */
#ifndef IR_OPS_FUSED_FUSED_EPILOGUE_H_
#define IR_OPS_FUSED_FUSED_EPILOGUE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "ir/cpu_kernel.h"
#include "ir/device_kernel.h"
#include "ir/fusion.h"
#include "ir/op_attr_types.h"

namespace ir {

/*! \brief The signatures a FusedEpilogue ran with, newest last (runs of one plan may be concurrent). */
struct EpilogueRunCache {
  /*! \brief What running the group with inputs of these dtypes and shapes needs. */
  struct Entry {
    std::vector<DType> types;
    std::vector<Shape> shapes;
    DType anchor_type = DType::kUnknown;
    FCompute anchor;
    /*! \brief The anchor's FComputeEpilogue and the epilogue for it; empty / null when there are no post-ops. */
    FComputeEpilogue post;
    ast::Expr expr;
    /*! \brief Set once the op refused the epilogue for this signature (it then always does). */
    mutable std::atomic<bool> refused{false};
    /*! \brief The generated epilogue kernel once found (null before, or when there is none). */
    mutable std::atomic<const GeneratedKernel*> generated{nullptr};
  };
  static constexpr size_t kCapacity = 8;
  std::mutex mutex;
  std::vector<std::shared_ptr<const Entry>> entries;
};

namespace op {

/*! \brief Splits the subgraph of an "epilogue" group into its anchor and epilogue (throws when malformed). */
std::shared_ptr<const FusedEpilogue> DeriveEpilogue(const NodeAttrs& attrs, const FusedGroup& group);

/*!
 * \brief Runs the epilogue group of `attrs` on the CPU (`dev` null) or on `dev`'s device.
 * Returns false, running nothing, when the anchor's value cannot be computed into an output
 * (its dtype differs from the output the epilogue overwrites, or that output shares memory
 * with an anchor input): the caller then runs the members one by one.
 */
bool RunEpilogueGroup(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                      const std::vector<NDArray>& outputs, DeviceKernelContext* dev);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_FUSED_FUSED_EPILOGUE_H_
