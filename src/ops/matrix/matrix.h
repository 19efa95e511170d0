/*!
 * \file matrix.h
 * \brief What the CPU kernels (matrix.cc) and the device kernels (matrix_device.cc) of matmul,
 * bias_add and bias_add_grad share: their parameters and geometry.
 */
#ifndef IR_OPS_MATRIX_MATRIX_H_
#define IR_OPS_MATRIX_MATRIX_H_

#include <string>
#include <vector>

#include "ir/device_kernel.h"
#include "ops/op_common.h"

namespace ir {
namespace op {

struct MatmulParam : public dmlc::Parameter<MatmulParam> {
  bool transpose_a;
  bool transpose_b;
  DMLC_DECLARE_PARAMETER(MatmulParam) {
    DMLC_DECLARE_FIELD(transpose_a).set_default(false).describe("Use the transpose of a's last two dimensions.");
    DMLC_DECLARE_FIELD(transpose_b).set_default(false).describe("Use the transpose of b's last two dimensions.");
  }
};

struct BiasParam : public dmlc::Parameter<BiasParam> {
  std::string data_format;
  DMLC_DECLARE_PARAMETER(BiasParam) {
    DMLC_DECLARE_FIELD(data_format)
        .set_default("NHWC")
        .describe("NHWC: channels are the last axis; NCHW: channels are axis 1.");
  }
};

/*!
 * \brief C[batch] = op(A)[batch] * op(B)[batch], C of [batch_c..., m, n], with batch dims
 * merged where neither or the same operand broadcasts (extent 1 where an operand broadcasts).
 */
struct MatmulProblem {
  int64_t m = 0, n = 0, k = 0;
  bool ta = false, tb = false;
  std::vector<int64_t> batch_a, batch_b, batch_c;
};

/*! \brief The problem of a matmul of a and b (known shapes) with parameters `p`. */
MatmulProblem MakeProblem(const Shape& a, const Shape& b, const MatmulParam& p);

/*! \brief The channel axis of a tensor of rank `ndim` by data_format; throws for a bad format or rank. */
int ChannelAxis(const NodeAttrs& attrs, int ndim);
/*! \brief bias_add_grad's reduced axes: every axis but the channel axis (ascending). */
std::vector<int> BiasGradAxes(const NodeAttrs& attrs, int ndim);

/*! \brief x as [outer, channels, inner] around the channel axis. */
struct ChannelView {
  int64_t outer, channels, inner;
};

/*! \brief The view of `x` (known shape) around the channel axis given by data_format. */
ChannelView ViewAroundChannels(const NodeAttrs& attrs, const Shape& x);

/*! \brief FDeviceKernel of matmul. */
void MatmulDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                  const std::vector<NDArray>& out);
/*! \brief FDeviceKernel of bias_add (both data formats). */
void BiasAddDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                   const std::vector<NDArray>& out);
/*! \brief FDeviceKernel of bias_add_grad: derived for NHWC (one block of axes), strided for NCHW. */
void BiasAddGradDevice(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& in,
                       const std::vector<NDArray>& out);

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_MATRIX_MATRIX_H_
