/*!
 * \file array_test_util.h
 * \brief Helpers of the array and random op tests: shape/type inference on partial shapes,
 * index-valued arrays and multi-index arithmetic for reference loops.
 */
#ifndef IR_TESTS_OPS_ARRAY_TEST_UTIL_H_
#define IR_TESTS_OPS_ARRAY_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ops/op_harness.h"

namespace ir {
namespace test {

/*! \brief Shapes after one FInferShape call, and its return value. */
struct Inferred {
  std::vector<Shape> in;
  std::vector<Shape> out;
  bool complete = false;
};

/*! \brief A node of `op` named after it, with variable inputs (one per input shape). */
inline NodePtr MakeOpNode(const std::string& op, const Attrs& attrs, size_t num_inputs) {
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < num_inputs; ++i)
    inputs.push_back(NodeEntry{Node::CreateVariable("in" + std::to_string(i)), 0});
  return Node::Create(Op::Get(op), op, attrs, inputs);
}

/*! \brief Runs op's FInferShape once on (partial) input and output shapes (outputs default to unknown). */
inline Inferred InferShapes(const std::string& op, const Attrs& attrs, std::vector<Shape> in,
                            std::vector<Shape> out = {}) {
  NodePtr node = MakeOpNode(op, attrs, in.size());
  if (out.empty()) out.resize(node->num_outputs());
  Inferred r;
  r.complete = Op::GetAttr<FInferShape>("FInferShape")[node->op()](node->attrs, &in, &out);
  r.in = std::move(in);
  r.out = std::move(out);
  return r;
}

/*! \brief Output dtypes from op's FInferType for the given input dtypes. */
inline std::vector<DType> InferTypes(const std::string& op, const Attrs& attrs, std::vector<DType> in) {
  NodePtr node = MakeOpNode(op, attrs, in.size());
  std::vector<DType> out(node->num_outputs(), DType::kUnknown);
  Op::GetAttr<FInferType>("FInferType")[node->op()](node->attrs, &in, &out);
  return out;
}

/*! \brief An array whose element i holds i (converted to dtype). */
inline NDArray Iota(const Shape& shape, DType dtype = DType::kFloat32) {
  NDArray a(shape, dtype);
  for (int64_t i = 0; i < a.Size(); ++i) {
    switch (dtype) {
      case DType::kFloat32:
        a.data<float>()[i] = static_cast<float>(i);
        break;
      case DType::kFloat64:
        a.data<double>()[i] = static_cast<double>(i);
        break;
      case DType::kInt32:
        a.data<int32_t>()[i] = static_cast<int32_t>(i);
        break;
      case DType::kInt64:
        a.data<int64_t>()[i] = i;
        break;
      default:
        a.data<bool>()[i] = i % 3 == 0;
        break;
    }
  }
  return a;
}

/*! \brief The multi-index of flat position `flat` in `shape` (row-major). */
inline std::vector<int64_t> Unravel(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.ndim());
  for (int d = shape.ndim() - 1; d >= 0; --d) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

/*! \brief The flat position of `index` in `shape` (row-major). */
inline int64_t Ravel(const std::vector<int64_t>& index, const Shape& shape) {
  int64_t flat = 0;
  for (int d = 0; d < shape.ndim(); ++d) flat = flat * shape[d] + index[d];
  return flat;
}

}  // namespace test
}  // namespace ir

#endif  // IR_TESTS_OPS_ARRAY_TEST_UTIL_H_
