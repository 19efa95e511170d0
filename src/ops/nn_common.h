/*!
 * \file nn_common.h
 * \brief What the nn op families share: activation layouts (NHWC/NCHW), TensorFlow's
 * window arithmetic (SAME, VALID, explicit pads) for convolution and pooling, and the
 * [outer, channels, inner] view of an activation used by per-channel kernels.
 */
#ifndef IR_OPS_NN_COMMON_H_
#define IR_OPS_NN_COMMON_H_

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "ops/op_common.h"

namespace ir {
namespace op {
namespace nn {

/*! \brief Where the channels of an activation are: last (NHWC) or after the batch (NCHW). */
enum class Layout { kNHWC, kNCHW };

/*! \brief Parses a data_format; throws naming the node for anything but NHWC and NCHW. */
inline Layout ParseLayout(const NodeAttrs& attrs, const std::string& text) {
  if (text == "NHWC") return Layout::kNHWC;
  IR_CHECK(text == "NCHW") << NodeDesc(attrs) << ": data_format must be \"NHWC\" or \"NCHW\", got \"" << text << "\"";
  return Layout::kNCHW;
}

/*! \brief Axes of (batch, channel, height, width) in a 4-D activation of `layout`. */
inline std::array<int, 4> ActivationAxes(Layout layout) {
  return layout == Layout::kNHWC ? std::array<int, 4>{0, 3, 1, 2} : std::array<int, 4>{0, 1, 2, 3};
}

/*! \brief The 4-D shape of an activation from its (batch, channel, height, width). */
inline Shape ActivationShape(Layout layout, int64_t n, int64_t c, int64_t h, int64_t w) {
  return layout == Layout::kNHWC ? Shape{n, h, w, c} : Shape{n, c, h, w};
}

/*! \brief Extent of (batch, channel, height, width) `which` (0..3) of a 4-D shape. */
inline int64_t ActivationDim(const Shape& shape, Layout layout, int which) {
  return shape[ActivationAxes(layout)[which]];
}

/*! \brief How a window op pads its input. */
enum class Padding { kSame, kValid, kExplicit };

/*! \brief A sliding window's attributes normalized to (height, width) pairs. */
struct Window {
  Layout layout = Layout::kNHWC;
  Padding padding = Padding::kValid;
  std::array<int64_t, 2> kernel{{1, 1}};
  std::array<int64_t, 2> stride{{1, 1}};
  std::array<int64_t, 2> dilation{{1, 1}};
  /*! \brief Explicit padding: top, bottom, left, right. */
  std::array<int64_t, 4> pads{{0, 0, 0, 0}};
};

/*!
 * \brief A (height, width) pair from a list of 1 (both), 2 (h, w) or 4 values (TensorFlow's
 * per-dimension form in the order of `layout`, batch and channel entries 1); empty gives
 * `fallback`. Every value must be at least 1.
 */
inline std::array<int64_t, 2> SpatialPair(const NodeAttrs& attrs, const char* name, const IntList& list, Layout layout,
                                          std::array<int64_t, 2> fallback) {
  std::array<int64_t, 2> pair = fallback;
  if (list.size() == 1) {
    pair = {list[0], list[0]};
  } else if (list.size() == 2) {
    pair = {list[0], list[1]};
  } else if (list.size() == 4) {
    std::array<int, 4> axes = ActivationAxes(layout);
    IR_CHECK(list[axes[0]] == 1 && list[axes[1]] == 1)
        << NodeDesc(attrs) << ": " << name << " " << list << " must be 1 along the batch and channel dimensions";
    pair = {list[axes[2]], list[axes[3]]};
  } else {
    IR_CHECK(list.empty()) << NodeDesc(attrs) << ": " << name << " " << list << " must have 1, 2 or 4 values";
  }
  IR_CHECK(pair[0] >= 1 && pair[1] >= 1) << NodeDesc(attrs) << ": " << name << " " << list << " must be positive";
  return pair;
}

/*!
 * \brief Normalizes the window attributes every window op has. Non-empty `pads` (top, bottom,
 * left, right) mean explicit padding, which "SAME" contradicts.
 */
inline Window MakeWindow(const NodeAttrs& attrs, const std::string& data_format, const std::string& padding,
                         const IntList& pads, const IntList& strides) {
  Window w;
  w.layout = ParseLayout(attrs, data_format);
  w.stride = SpatialPair(attrs, "strides", strides, w.layout, {1, 1});
  IR_CHECK(padding == "SAME" || padding == "VALID" || padding == "EXPLICIT")
      << NodeDesc(attrs) << ": padding must be \"SAME\", \"VALID\" or \"EXPLICIT\", got \"" << padding << "\"";
  if (padding == "SAME") {
    IR_CHECK(pads.empty()) << NodeDesc(attrs) << ": padding \"SAME\" contradicts explicit pads " << pads;
    w.padding = Padding::kSame;
    return w;
  }
  if (pads.empty()) {
    IR_CHECK(padding != "EXPLICIT") << NodeDesc(attrs)
                                    << ": padding \"EXPLICIT\" needs pads (top, bottom, left, right)";
    return w;
  }
  IR_CHECK(pads.size() == 4) << NodeDesc(attrs) << ": pads " << pads << " must be (top, bottom, left, right)";
  for (size_t i = 0; i < 4; ++i) {
    IR_CHECK(pads[i] >= 0) << NodeDesc(attrs) << ": pads " << pads << " must not be negative";
    w.pads[i] = pads[i];
  }
  w.padding = Padding::kExplicit;
  return w;
}

/*! \brief Attribute parser of a window op whose parameter P has `Window ToWindow(attrs)`: checks it. */
template <typename P>
void ParseWindowParam(NodeAttrs* attrs) {
  ParamParser<P>(attrs);
  dmlc::get<P>(attrs->parsed).ToWindow(*attrs);
}

/*! \brief Output extent and padding of one spatial dimension. */
struct WindowExtent {
  int64_t out = kUnknownDim;
  int64_t pad_before = 0;
  int64_t pad_after = 0;
};

/*!
 * \brief TensorFlow's window arithmetic along spatial dim `d` (0 height, 1 width) for input
 * extent `in` and kernel extent `k` (either may be unknown: out is then unknown). SAME: out =
 * ceil(in / stride), the total padding split with the extra cell after.
 */
inline WindowExtent ComputeExtent(const NodeAttrs& attrs, const Window& w, int d, int64_t in, int64_t k) {
  WindowExtent e;
  if (in < 0 || k < 0) return e;
  int64_t stride = w.stride[d], span = (k - 1) * w.dilation[d] + 1;
  if (w.padding == Padding::kSame) {
    e.out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>((e.out - 1) * stride + span - in, 0);
    e.pad_before = total / 2;
    e.pad_after = total - e.pad_before;
    return e;
  }
  if (w.padding == Padding::kExplicit) {
    e.pad_before = w.pads[2 * d];
    e.pad_after = w.pads[2 * d + 1];
  }
  int64_t padded = in + e.pad_before + e.pad_after;
  IR_CHECK(padded >= span) << NodeDesc(attrs) << ": window of extent " << span << " (kernel " << k << ", dilation "
                           << w.dilation[d] << ") does not fit the " << (d == 0 ? "height" : "width") << " " << in
                           << " padded by (" << e.pad_before << ", " << e.pad_after << ")";
  e.out = (padded - span) / stride + 1;
  return e;
}

/*! \brief Everything a window kernel needs, for fully known shapes. */
struct Geometry {
  Layout layout = Layout::kNHWC;
  int64_t n = 0, c = 0, h = 0, w = 0;  // input
  int64_t oc = 0, oh = 0, ow = 0;      // output channels and extents
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, dh = 1, dw = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;

  /*! \brief Element strides of (batch, channel, row, column) in the input. */
  std::array<int64_t, 4> InputStrides() const { return Strides(c, h, w); }
  /*! \brief Element strides of (batch, channel, row, column) in the output. */
  std::array<int64_t, 4> OutputStrides() const { return Strides(oc, oh, ow); }
  /*! \brief (batch, channel, row, column) extents of the input or the output (oneDNN's order). */
  std::vector<int64_t> LogicalDims(bool output) const {
    return output ? std::vector<int64_t>{n, oc, oh, ow} : std::vector<int64_t>{n, c, h, w};
  }
  /*! \brief The matching element strides. */
  std::vector<int64_t> LogicalStrides(bool output) const {
    std::array<int64_t, 4> st = output ? OutputStrides() : InputStrides();
    return {st[0], st[1], st[2], st[3]};
  }
  /*! \brief The input's shape. */
  Shape InputShape() const { return ActivationShape(layout, n, c, h, w); }
  /*! \brief The output's shape. */
  Shape OutputShape() const { return ActivationShape(layout, n, oc, oh, ow); }
  /*! \brief Every number above, e.g. as a cache key. */
  std::vector<int64_t> Numbers() const {
    return {static_cast<int64_t>(layout),
            n,
            c,
            h,
            w,
            oc,
            oh,
            ow,
            kh,
            kw,
            sh,
            sw,
            dh,
            dw,
            pad_top,
            pad_bottom,
            pad_left,
            pad_right};
  }

 private:
  std::array<int64_t, 4> Strides(int64_t channels, int64_t rows, int64_t cols) const {
    if (layout == Layout::kNHWC) return {rows * cols * channels, 1, cols * channels, channels};
    return {channels * rows * cols, rows * cols, cols, 1};
  }
};

/*!
 * \brief The geometry of window `w` over a known 4-D `input` with a kh x kw kernel and `oc`
 * output channels.
 */
inline Geometry MakeGeometry(const NodeAttrs& attrs, const Window& w, const Shape& input, int64_t kh, int64_t kw,
                             int64_t oc) {
  Geometry g;
  g.layout = w.layout;
  g.n = ActivationDim(input, w.layout, 0);
  g.c = ActivationDim(input, w.layout, 1);
  g.h = ActivationDim(input, w.layout, 2);
  g.w = ActivationDim(input, w.layout, 3);
  g.oc = oc;
  g.kh = kh;
  g.kw = kw;
  g.sh = w.stride[0];
  g.sw = w.stride[1];
  g.dh = w.dilation[0];
  g.dw = w.dilation[1];
  WindowExtent rows = ComputeExtent(attrs, w, 0, g.h, kh), cols = ComputeExtent(attrs, w, 1, g.w, kw);
  g.oh = rows.out;
  g.ow = cols.out;
  g.pad_top = rows.pad_before;
  g.pad_bottom = rows.pad_after;
  g.pad_left = cols.pad_before;
  g.pad_right = cols.pad_after;
  return g;
}

/*! \brief A shape an inference helper refines, named for error messages ("input 1 (weight)"). */
struct Slot {
  const char* what;
  Shape* shape;
};

/*! \brief Makes a shape rank 4 (from unknown rank) or throws naming the node and `what`. */
inline void RequireRank4(const NodeAttrs& attrs, const std::string& what, Shape* shape) {
  AssignShape(attrs, what, shape, Shape::UnknownDims(4));
}

/*! \brief FInferType of window ops: the first kTyped inputs and the output share a float dtype (a `like` may differ).
 */
template <int kTyped>
bool WindowType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  DType dtype = (*out)[0];
  for (int i = 0; i < kTyped; ++i) AssignType(attrs, StrCat("input ", i), &dtype, (*in)[i]);
  CheckDType(attrs, "input", dtype, FloatTypes());
  for (int i = 0; i < kTyped; ++i) (*in)[i] = dtype;
  (*out)[0] = dtype;
  return AllKnown(*in, *out);
}

/*! \brief The normalized window of a conv2d-family node (its attributes parsed); defined in conv/conv2d.cc. */
Window ConvWindowOf(const NodeAttrs& attrs);

/*! \brief An activation viewed as [outer, channels, inner] around its channel axis. */
struct ChannelView {
  int64_t outer = 1, channels = 1, inner = 1;
};

/*! \brief The channel view of a known shape: channels last (NHWC) or at axis 1 (NCHW). */
inline ChannelView MakeChannelView(const Shape& shape, Layout layout) {
  int nd = shape.ndim(), axis = layout == Layout::kNHWC ? nd - 1 : 1;
  return ChannelView{shape.ProdDims(0, axis), shape[axis], shape.ProdDims(axis + 1, nd)};
}

/*! \brief True for an entry made by zeros_like: the gradient pass's stand-in for "no gradient". */
inline bool IsZeroGradient(const NodeEntry& entry) {
  return entry.node && entry.node->op() && entry.node->op()->name == "zeros_like";
}

}  // namespace nn
}  // namespace op
}  // namespace ir

#endif  // IR_OPS_NN_COMMON_H_
