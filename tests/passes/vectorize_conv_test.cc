// Converters of convolution, pooling and image patches: every stacked/unstacked mix of their
// inputs equals the loop, per-iteration filters included.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "passes/vectorize_harness.h"

namespace ir {
namespace {

using pfor_test::Arg;
using pfor_test::ExpectLikeLoop;
using pfor_test::Op;
using Attrs = std::map<std::string, std::string>;

/*! \brief A window: attributes, data_format and the output extents for a 6x6 input. */
struct WindowCase {
  std::string format;
  Attrs attrs;
  int64_t oh, ow;
  std::string name() const {
    std::string text = format;
    for (const auto& kv : attrs) text += " " + kv.first + "=" + kv.second;
    return text;
  }
};

/*! \brief A batch-2 activation of `c` channels in `format`. */
Shape Activation(const std::string& format, int64_t c, int64_t h, int64_t w) {
  return format == "NHWC" ? Shape{2, h, w, c} : Shape{2, c, h, w};
}

const std::vector<WindowCase>& ConvCases() {
  static const std::vector<WindowCase> cases = {
      {"NHWC", {{"padding", "VALID"}}, 4, 4},
      {"NHWC", {{"padding", "SAME"}, {"strides", "2"}}, 3, 3},
      {"NCHW", {{"padding", "SAME"}, {"dilations", "2"}}, 6, 6},
      {"NCHW", {{"padding", "VALID"}, {"strides", "(1,1,2,1)"}, {"dilations", "(1,2)"}}, 2, 2},
      {"NHWC", {{"pads", "(1,0,2,1)"}, {"strides", "2"}}, 3, 4}};
  return cases;
}

Attrs WithFormat(const WindowCase& c) {
  Attrs attrs = c.attrs;
  attrs["data_format"] = c.format;
  return attrs;
}

pfor_test::Body OneOp(const std::string& op, const Attrs& attrs) {
  return [=](const std::vector<NodeEntry>& x) { return std::vector<NodeEntry>{Op(op, "op", x, attrs)}; };
}

TEST(VectorizeConvTest, Conv2DWithSharedAndPerIterationFilters) {
  for (const WindowCase& c : ConvCases()) {
    ExpectLikeLoop("conv2d " + c.name(), {Arg{Activation(c.format, 3, 6, 6)}, Arg{Shape{3, 3, 3, 2}}},
                   OneOp("conv2d", WithFormat(c)));
  }
}

TEST(VectorizeConvTest, BackpropFilterOfEveryMix) {
  for (const WindowCase& c : ConvCases()) {
    ExpectLikeLoop(
        "conv2d_backprop_filter " + c.name(),
        {Arg{Activation(c.format, 3, 6, 6)}, Arg{Activation(c.format, 2, c.oh, c.ow)}, Arg{Shape{3, 3, 3, 2}}},
        OneOp("conv2d_backprop_filter", WithFormat(c)));
  }
}

TEST(VectorizeConvTest, BackpropInputOfEveryMix) {
  for (const WindowCase& c : ConvCases()) {
    ExpectLikeLoop(
        "conv2d_backprop_input " + c.name(),
        {Arg{Activation(c.format, 2, c.oh, c.ow)}, Arg{Shape{3, 3, 3, 2}}, Arg{Activation(c.format, 3, 6, 6)}},
        OneOp("conv2d_backprop_input", WithFormat(c)));
  }
}

TEST(VectorizeConvTest, PoolingAndItsGradients) {
  const std::vector<WindowCase> cases = {{"NHWC", {{"ksize", "3"}, {"strides", "2"}, {"padding", "SAME"}}, 3, 3},
                                         {"NCHW", {{"ksize", "(2,3)"}, {"strides", "2"}}, 3, 2}};
  for (const WindowCase& c : cases) {
    Attrs attrs = WithFormat(c);
    Shape x = Activation(c.format, 2, 6, 6), y = Activation(c.format, 2, c.oh, c.ow);
    for (const char* op : {"max_pool2d", "avg_pool2d"})
      ExpectLikeLoop(op + (" " + c.name()), {Arg{x}}, OneOp(op, attrs));
    ExpectLikeLoop("max_pool2d_grad " + c.name(), {Arg{x}, Arg{y}}, [&](const std::vector<NodeEntry>& in) {
      NodeEntry pooled = Op("max_pool2d", "y", {in[0]}, attrs);
      return std::vector<NodeEntry>{Op("max_pool2d_grad", "dx", {in[0], pooled, in[1]}, attrs)};
    });
    ExpectLikeLoop("avg_pool2d_grad " + c.name(), {Arg{y}, Arg{x}}, OneOp("avg_pool2d_grad", attrs));
  }
}

TEST(VectorizeConvTest, ImagePatchesAndTheirGradient) {
  Attrs attrs = {{"ksizes", "(2,3)"}, {"strides", "2"}, {"rates", "(1,2)"}, {"padding", "SAME"}};
  ExpectLikeLoop("extract_image_patches", {Arg{Shape{2, 6, 6, 2}}}, OneOp("extract_image_patches", attrs));
  ExpectLikeLoop("extract_image_patches_grad", {Arg{Shape{2, 3, 3, 12}}, Arg{Shape{2, 6, 6, 2}}},
                 OneOp("extract_image_patches_grad", attrs));
}

}  // namespace
}  // namespace ir
