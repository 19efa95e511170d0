/*!
 * \file op_common.h
 * \brief What op families share: error messages, shape/type inference helpers, dtype
 * dispatch, parallel loops, broadcasting iteration and gradient-building shorthands.
 */
#ifndef IR_OPS_OP_COMMON_H_
#define IR_OPS_OP_COMMON_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <istream>
#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "ir/ast.h"
#include "ir/ndarray.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/op_kernel.h"

namespace ir {

/*!
 * \brief Reads a DType by name ("float32", "int64", "bool"...; not "unknown"), so a DType can be
 * a dmlc::Parameter field (`DType dtype;` with `.set_default(DType::kFloat32)`); a bad name sets
 * failbit, which the parameter parser reports naming the field and the value.
 */
std::istream& operator>>(std::istream& is, DType& dtype);

namespace op {

// ---------------------------------------------------------------- errors

using ir::NodeDesc;  // "node 'x' (op add)", declared in ir/node.h
/*! \brief "[2,3], [3]". */
std::string ShapesDesc(const std::vector<Shape>& shapes);

/*!
 * \brief Refines `*slot` with `value`; throws naming the node, `what` ("input 1", "output 0")
 * and both shapes when they contradict.
 */
void AssignShape(const NodeAttrs& attrs, const std::string& what, Shape* slot, const Shape& value);
/*! \brief Same for dtypes (kUnknown refines to anything). */
void AssignType(const NodeAttrs& attrs, const std::string& what, DType* slot, DType value);

/*! \brief A set of dtypes, for checking what an op accepts. */
using DTypeSet = std::vector<DType>;
/*! \brief float32, float64. (Functions, not globals: static registrations use them.) */
const DTypeSet& FloatTypes();
/*! \brief float32, float64, int32, int64. */
const DTypeSet& NumericTypes();
/*! \brief Numeric types and bool. */
const DTypeSet& AllTypes();
/*! \brief Throws "node ... : input dtype int32 is not supported (expected float32, float64)". */
void CheckDType(const NodeAttrs& attrs, const std::string& what, DType dtype, const DTypeSet& allowed);

// ---------------------------------------------------------------- parameters

/*!
 * \brief A list of integers as a dmlc::Parameter field (axes, strides, shapes): parsed from
 * "(1,2)", "[1, 2]", "1,2", "3" or "()"; printed as "(1,2)".
 */
struct IntList {
  std::vector<int64_t> values;
  IntList() = default;
  IntList(std::initializer_list<int64_t> v) : values(v) {}
  explicit IntList(std::vector<int64_t> v) : values(std::move(v)) {}
  size_t size() const { return values.size(); }
  bool empty() const { return values.empty(); }
  int64_t operator[](size_t i) const { return values[i]; }
  bool operator==(const IntList& o) const { return values == o.values; }
};
std::istream& operator>>(std::istream& is, IntList& list);
std::ostream& operator<<(std::ostream& os, const IntList& list);

// ---------------------------------------------------------------- inference

/*! \brief Every input and output has one shape. */
bool ElemwiseShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);
/*! \brief Every input and output has one dtype. */
bool ElemwiseType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out);
/*! \brief NumPy broadcasting of two shapes; throws naming the node and shapes when incompatible. */
Shape BroadcastShapes(const NodeAttrs& attrs, const Shape& a, const Shape& b);
/*! \brief Output is the broadcast of all inputs. */
bool BroadcastShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out);
/*! \brief All outputs get `dtype`; inputs are left as they are. */
bool OutputsAre(DType dtype, std::vector<DType>* in, std::vector<DType>* out);
/*! \brief True when every shape in both lists is fully known. */
bool AllKnown(const std::vector<Shape>& in, const std::vector<Shape>& out);
bool AllKnown(const std::vector<DType>& in, const std::vector<DType>& out);
/*! \brief Normalizes a possibly negative axis for rank `ndim`; throws naming the node when out of range. */
int NormalizeAxis(const NodeAttrs& attrs, int axis, int ndim);
/*!
 * \brief True when `value` converts to `dtype` without changing (floats: always, rounding
 * allowed; integers: integral and in range; bool: 0 or 1), for checking scalar parameters.
 */
bool ValueFitsDType(double value, DType dtype);

// ---------------------------------------------------------------- kernels

/*! \brief Runs `body` with a C++ type alias `DT` for `dtype` over the listed dtype cases. */
#define IR_TYPE_CASE_(ENUM, CTYPE, DT, ...) \
  case ::ir::DType::ENUM: {                 \
    using DT = CTYPE;                       \
    __VA_ARGS__;                            \
    break;                                  \
  }
#define IR_FLOAT_SWITCH(dtype, DT, ...)                        \
  switch (dtype) {                                             \
    IR_TYPE_CASE_(kFloat32, float, DT, __VA_ARGS__)            \
    IR_TYPE_CASE_(kFloat64, double, DT, __VA_ARGS__)           \
    default:                                                   \
      ::ir::op::UnsupportedDType(dtype, "float32 or float64"); \
  }
#define IR_NUMERIC_SWITCH(dtype, DT, ...)                   \
  switch (dtype) {                                          \
    IR_TYPE_CASE_(kFloat32, float, DT, __VA_ARGS__)         \
    IR_TYPE_CASE_(kFloat64, double, DT, __VA_ARGS__)        \
    IR_TYPE_CASE_(kInt32, int32_t, DT, __VA_ARGS__)         \
    IR_TYPE_CASE_(kInt64, int64_t, DT, __VA_ARGS__)         \
    default:                                                \
      ::ir::op::UnsupportedDType(dtype, "a numeric dtype"); \
  }
#define IR_ALL_TYPES_SWITCH(dtype, DT, ...)               \
  switch (dtype) {                                        \
    IR_TYPE_CASE_(kFloat32, float, DT, __VA_ARGS__)       \
    IR_TYPE_CASE_(kFloat64, double, DT, __VA_ARGS__)      \
    IR_TYPE_CASE_(kInt32, int32_t, DT, __VA_ARGS__)       \
    IR_TYPE_CASE_(kInt64, int64_t, DT, __VA_ARGS__)       \
    IR_TYPE_CASE_(kBool, bool, DT, __VA_ARGS__)           \
    default:                                              \
      ::ir::op::UnsupportedDType(dtype, "a known dtype"); \
  }
[[noreturn]] void UnsupportedDType(DType dtype, const char* expected);

/*! \brief Threads kernels use (IR_NUM_THREADS, else OMP_NUM_THREADS, else all cores). */
int NumThreads();

/*!
 * \brief Calls body(begin, end) over [0, n) split across threads; small ranges run inline.
 * `grain` is the least work worth a thread (in iterations).
 */
template <typename F>
void ParallelFor(int64_t n, const F& body, int64_t grain = 1 << 15) {
  if (n <= 0) return;
  int threads = NumThreads();
  int64_t chunks = std::min<int64_t>(threads, (n + grain - 1) / grain);
  if (chunks <= 1) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel for num_threads(chunks) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    body(begin, end);
  }
}

/*!
 * \brief Element strides of `shape` broadcast to `out` (0 along broadcast dimensions),
 * aligned to the right as NumPy does.
 */
std::vector<int64_t> BroadcastStrides(const Shape& shape, const Shape& out);

/*!
 * \brief Walks the output of a NumPy broadcast of operands a and b in contiguous spans, along
 * which each operand is either contiguous (step 1) or one repeated value (step 0), so the
 * kernel of a span is a plain vector loop. Adjacent dimensions that both operands walk alike
 * are merged first: same shapes are one span, [N, M] + [M] is N spans of M.
 */
class BroadcastSpans {
 public:
  BroadcastSpans(const Shape& a, const Shape& b, const Shape& out);
  /*!
   * \brief Calls span(out_offset, a_offset, a_step, b_offset, b_step, length) over the output
   * elements [begin, end), in order; one division per call, none per span.
   */
  template <typename F>
  void ForEach(int64_t begin, int64_t end, const F& span) const {
    const int outer = static_cast<int>(dims_.size()) - 1;
    const int64_t inner = dims_[outer], a_step = sa_[outer], b_step = sb_[outer];
    int64_t col = begin % inner, ia = 0, ib = 0;
    std::vector<int64_t> idx(outer);
    for (int64_t d = outer - 1, rem = begin / inner; d >= 0; --d) {
      idx[d] = rem % dims_[d];
      rem /= dims_[d];
      ia += idx[d] * sa_[d];
      ib += idx[d] * sb_[d];
    }
    for (int64_t i = begin; i < end; col = 0) {
      const int64_t len = std::min(inner - col, end - i);
      span(i, ia + col * a_step, a_step, ib + col * b_step, b_step, len);
      i += len;
      for (int d = outer - 1; d >= 0; --d) {  // the next row: an odometer over the outer dimensions
        ia += sa_[d];
        ib += sb_[d];
        if (++idx[d] < dims_[d]) break;
        ia -= sa_[d] * dims_[d];
        ib -= sb_[d] * dims_[d];
        idx[d] = 0;
      }
    }
  }

 private:
  std::vector<int64_t> dims_, sa_, sb_;  // merged output dimensions (at least one), operand strides
};

// ---------------------------------------------------------------- gradients

/*! \brief A new node of `op` named "<node>_grad_<suffix>" for building gradients. */
NodeEntry GradNode(const std::string& op, const NodePtr& node, const std::string& suffix, std::vector<NodeEntry> inputs,
                   const std::map<std::string, std::string>& attrs = {});
/*! \brief Output `index` of `node`. */
inline NodeEntry Out(const NodePtr& node, uint32_t index = 0) { return NodeEntry{node, index}; }
/*! \brief Input `index` of `node`. */
inline NodeEntry In(const NodePtr& node, uint32_t index) { return node->inputs.at(index); }
/*! \brief Full-precision text of a number, for scalar attributes of gradient nodes. */
std::string NumberToString(double value);
/*! \brief An FGradient for ops whose inputs get no gradient (comparisons, argmax, shape ops). */
std::vector<NodeEntry> ZeroGradient(const NodePtr& node, const std::vector<NodeEntry>& ograds);

/*!
 * \brief What two one-input ops that undo each other share (mirror_pad and mirror_pad_grad,
 * space_to_batch_nd and batch_to_space_nd): the parameter struct P and its parser, the one input
 * `input`, the input's element type, kOpaque, and as FGradient the other op, `inverse`, applied to
 * the output gradient with the same attributes. Each adds its own shape, kernels and description:
 * `IR_REGISTER_OP(a).apply(InversePair<P>("data", Parse, "b")).set_attr<FInferShape>(...)`.
 */
template <typename P>
std::function<void(Op&)> InversePair(std::string input, void (*parse)(NodeAttrs*), std::string inverse) {
  return [input, parse, inverse](Op& op) {
    op.set_num_inputs(1).set_input_names({input}).set_param<P>().set_attr_parser(parse);
    op.set_attr<FInferType>("FInferType", ElemwiseType);
    op.set_attr<FGradient>("FGradient", [inverse](const NodePtr& n, const std::vector<NodeEntry>& og) {
      return std::vector<NodeEntry>{GradNode(inverse, n, inverse, {og[0]}, n->attrs.dict)};
    });
    op.set_attr<TOpPattern>("TOpPattern", kOpaque);
  };
}

}  // namespace op
}  // namespace ir

#endif  // IR_OPS_OP_COMMON_H_
