/*!
 * \file attention.h
 * \brief What the files of the fused attention ops share: their parameters, the Problem (the sizes
 * of one call) and the kernels' entry points. attention.cc has the ops (inference, gradient,
 * registration; its file comment tells the semantics), attention_cpu.cc the CPU kernels (tiled,
 * with attention_cpu.h's building blocks), attention_device.cc the device kernels.
 */
#ifndef IR_OPS_ATTENTION_ATTENTION_H_
#define IR_OPS_ATTENTION_ATTENTION_H_

#include <algorithm>
#include <cstdint>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace attention {

/*! \brief How the unfused graph gave masked keys their score (see the file comment). */
enum MaskForm { kSelect = 0, kAdd = 1, kMultiply = 2 };

struct AttentionParam : public dmlc::Parameter<AttentionParam> {
  double scale;
  bool causal;
  double mask_value;
  int mask_form;
  bool with_dv;
  DMLC_DECLARE_PARAMETER(AttentionParam) {
    DMLC_DECLARE_FIELD(scale).set_default(1.0).describe("Factor of the scores q k^T.");
    DMLC_DECLARE_FIELD(causal).set_default(false).describe(
        "Query row i attends only keys j <= i + (S - T) (the lower triangle when T == S).");
    DMLC_DECLARE_FIELD(mask_value).set_default(-1e9).describe("The score of a masked key (causal only).");
    DMLC_DECLARE_FIELD(mask_form)
        .set_default(kSelect)
        .add_enum("select", kSelect)
        .add_enum("add", kAdd)
        .add_enum("multiply", kMultiply)
        .describe(
            "How a masked score is formed from the raw score s (special values only): select: mask_value; "
            "add: s + mask_value; multiply: s * 0 + mask_value.");
    DMLC_DECLARE_FIELD(with_dv).set_default(true).describe(
        "fused_attention_grad: compute dv (false: dv is 0; the attention rules' replacement, whose v gradient "
        "_fused_attention_dv computes).");
  }
};

// ---------------------------------------------------------------- the problem

/*! \brief The sizes of one call: `batch` slices of q [T, D], k [S, D], v [S, E]. */
struct Problem {
  int64_t batch, t, s, d, e;
  double scale;
  bool causal;
  double mask_value;
  int mask_form;
  /*! \brief fused_attention_grad: whether dv is wanted (else its product is skipped and dv is 0). */
  bool with_dv;
  /*! \brief Causal: row i attends keys j < i + 1 + offset (offset = S - T). */
  int64_t offset;
  /*! \brief The keys row i attends: [0, Limit(i)). */
  int64_t Limit(int64_t i) const { return causal ? std::min(s, std::max<int64_t>(0, i + 1 + offset)) : s; }
};

/*! \brief The Problem of a node: q's and v's shapes (attention.cc). */
Problem MakeProblem(const NodeAttrs& attrs, const Shape& q, const Shape& v);

/*! \brief The CPU kernels (attention_cpu.cc): fused_attention, fused_attention_grad, _fused_attention_dv. */
void ForwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out);
void BackwardCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                     const std::vector<NDArray>& out);
void DvCompute(const OpContext&, const NodeAttrs& attrs, const std::vector<NDArray>& in,
               const std::vector<NDArray>& out);

/*! \brief The device kernels (attention_device.cc), portable C for OpenCL and CUDA. */
void ForwardDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out);
void BackwardDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                    const std::vector<NDArray>& out);
void DvDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
              const std::vector<NDArray>& out);

}  // namespace attention
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_ATTENTION_ATTENTION_H_
