/*!
 * \file nn_test_util.h
 * \brief Reference arithmetic the nn op tests share: 4-D activation indexing in NHWC/NCHW
 * and TensorFlow's output-size and padding rules, written out independently of the ops.
 */
#ifndef IR_TESTS_OPS_NN_TEST_UTIL_H_
#define IR_TESTS_OPS_NN_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/base.h"
#include "ir/node.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace test {

/*! \brief A 4-D activation of logical extents (n, c, h, w) stored as NHWC or NCHW. */
struct Activation {
  std::string format;
  int64_t n, c, h, w;

  Shape shape() const { return format == "NHWC" ? Shape{n, h, w, c} : Shape{n, c, h, w}; }
  int64_t Index(int64_t in, int64_t ic, int64_t ih, int64_t iw) const {
    return format == "NHWC" ? ((in * h + ih) * w + iw) * c + ic : ((in * c + ic) * h + ih) * w + iw;
  }
};

/*! \brief Output extent and padding before, along one spatial dimension, by TensorFlow's rules. */
struct Extent {
  int64_t out, pad_before;
};

/*! \brief padding "SAME", "VALID" or "EXPLICIT" (with `before`/`after`); `span` = (k - 1) * dilation + 1. */
inline Extent TfExtent(const std::string& padding, int64_t in, int64_t span, int64_t stride, int64_t before = 0,
                       int64_t after = 0) {
  if (padding == "SAME") {
    int64_t out = (in + stride - 1) / stride;
    int64_t total = std::max<int64_t>((out - 1) * stride + span - in, 0);
    return {out, total / 2};
  }
  if (padding == "VALID") return {(in - span) / stride + 1, 0};
  return {(in + before + after - span) / stride + 1, before};
}

/*!
 * \brief Runs an op's FInferShape on a node with `attrs`, starting from unknown outputs, and
 * returns whether it reported every shape known.
 */
inline bool InferShapes(const std::string& op, const std::map<std::string, std::string>& attrs, std::vector<Shape>* in,
                        std::vector<Shape>* out) {
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < in->size(); ++i) inputs.push_back({Node::CreateVariable("v" + std::to_string(i)), 0});
  NodePtr node = Node::Create(Op::Get(op), op, attrs, inputs);
  out->assign(node->num_outputs(), Shape());
  return Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, in, out);
}

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_OPS_NN_TEST_UTIL_H_
