/*!
 * \file conv_shapes.h
 * \brief The shape inference the convolution ops share (conv2d.cc, depthwise_conv2d.cc): each
 * has one function refining its data, weight and output shapes from one another,
 * `kShapes(attrs, data, weight, out)`; the forward op and its two backward ops apply it to their
 * inputs and outputs.
 */
#ifndef IR_OPS_CONV_CONV_SHAPES_H_
#define IR_OPS_CONV_CONV_SHAPES_H_

#include <vector>

#include "ops/nn_common.h"

namespace ir {
namespace op {
namespace nn {

/*! \brief FInferShape of the forward op: (data, weight) -> output. */
template <auto kShapes>
bool ConvForwardShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  kShapes(attrs, Slot{"input 0 (data)", &(*in)[0]}, Slot{"input 1 (weight)", &(*in)[1]}, Slot{"output 0", &(*out)[0]});
  return AllKnown(*in, *out);
}

/*!
 * \brief FInferShape of a backward op, whose result has the shape of its `like` input (input 2):
 * (dy, weight, like) -> dx, or with kFilter (x, dy, like) -> dw.
 */
template <auto kShapes, bool kFilter>
bool ConvBackpropShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  Shape& like = (*in)[2];
  AssignShape(attrs, "input 2 (like)", &like, (*out)[0]);
  if (kFilter) {
    kShapes(attrs, Slot{"input 0 (x)", &(*in)[0]}, Slot{"input 2 (like)", &like}, Slot{"input 1 (dy)", &(*in)[1]});
  } else {
    kShapes(attrs, Slot{"input 2 (like)", &like}, Slot{"input 1 (weight)", &(*in)[1]}, Slot{"input 0 (dy)", &(*in)[0]});
  }
  (*out)[0] = like;
  return AllKnown(*in, *out);
}

}  // namespace nn
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_CONV_CONV_SHAPES_H_
