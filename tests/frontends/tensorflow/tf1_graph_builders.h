/*!
 * \file tf1_graph_builders.h
 * \brief Builders of TF1 control-flow structures in text GraphDef, as TensorFlow lays them out
 * (loop variables, loop invariants, LoopConds, cond pivots), for the TF1 control-flow tests.
 */
#ifndef IR_TESTS_TF1_GRAPH_BUILDERS_H_
#define IR_TESTS_TF1_GRAPH_BUILDERS_H_

#include <string>
#include <vector>

#include "tf_test_util.h"

namespace ir {
namespace tf {
namespace test {
namespace tf1 {

using pbtxt::Attr;
using pbtxt::Node;
using pbtxt::Type;

inline std::string Frame(const std::string& frame) { return Attr("frame_name", "s: '" + frame + "'"); }

/*!
 * \brief Loop variable `i` of frame `frame` as TF1 writes it: <pre>/Enter_i (reading `init`) ->
 * Merge_i(Enter_i, NextIteration_i) -> Switch_i(Merge_i, <pre>/LoopCond); Switch_i:1 ->
 * Identity_i (the body's value); Switch_i -> Exit_i; NextIteration_i reads `next`.
 */
inline std::string LoopVar(const std::string& pre, const std::string& frame, int i, const std::string& init,
                           const std::string& next, const std::string& dtype = "DT_FLOAT") {
  std::string n = std::to_string(i), t = Type(dtype);
  return Node(pre + "/Enter_" + n, "Enter", {init}, t + Frame(frame)) +
         Node(pre + "/Merge_" + n, "Merge", {pre + "/Enter_" + n, pre + "/NextIteration_" + n}, t + Attr("N", "i: 2")) +
         Node(pre + "/Switch_" + n, "Switch", {pre + "/Merge_" + n, pre + "/LoopCond"}, t) +
         Node(pre + "/Identity_" + n, "Identity", {pre + "/Switch_" + n + ":1"}, t) +
         Node(pre + "/Exit_" + n, "Exit", {pre + "/Switch_" + n}, t) +
         Node(pre + "/NextIteration_" + n, "NextIteration", {next}, t);
}

/*! \brief A loop-invariant Enter (is_constant) named `name` of `input`. */
inline std::string ConstEnter(const std::string& name, const std::string& frame, const std::string& input) {
  return Node(name, "Enter", {input}, Type() + Frame(frame) + Attr("is_constant", "b: true"));
}

/*! \brief <pre>/LoopCond on `a` < a Const `limit` tied to the frame by a control edge from `a`. */
inline std::string LessThan(const std::string& pre, const std::string& a, int limit) {
  return Node(pre + "/limit", "Const", {"^" + a},
              Attr("dtype", "type: DT_INT32") +
                  Attr("value", "tensor { dtype: DT_INT32 tensor_shape {} int_val: " + std::to_string(limit) + " }")) +
         Node(pre + "/Less", "Less", {a, pre + "/limit"}, Type("DT_INT32")) +
         Node(pre + "/LoopCond", "LoopCond", {pre + "/Less"});
}

/*! \brief <name> = `a` + an int32 1 tied by a control edge to `a`. */
inline std::string Increment(const std::string& name, const std::string& a) {
  return Node(
             name + "/one", "Const", {"^" + a},
             Attr("dtype", "type: DT_INT32") + Attr("value", "tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 }")) +
         Node(name, "Add", {a, name + "/one"}, Type("DT_INT32"));
}

inline NDArray Floats(std::vector<float> v) {
  return NDArray::FromVector<float>(Shape{static_cast<int64_t>(v.size())}, v);
}

/*! \brief A TF1 cond's predicate Switch and its pivots <pre>/switch_t, <pre>/switch_f. */
inline std::string Pivots(const std::string& pre, const std::string& pred) {
  return Node(pre + "/Switch", "Switch", {pred, pred}, Type("DT_BOOL")) +
         Node(pre + "/switch_t", "Identity", {pre + "/Switch:1"}, Type("DT_BOOL")) +
         Node(pre + "/switch_f", "Identity", {pre + "/Switch"}, Type("DT_BOOL")) +
         Node(pre + "/pred_id", "Identity", {pred}, Type("DT_BOOL"));
}

/*! \brief A float scalar Const tied by a control edge to `pivot`. */
inline std::string PinnedFloat(const std::string& name, const std::string& pivot, float v) {
  return Node(name, "Const", {"^" + pivot},
              Attr("dtype", "type: DT_FLOAT") +
                  Attr("value", "tensor { dtype: DT_FLOAT tensor_shape {} float_val: " + std::to_string(v) + " }"));
}

/*! \brief A TensorArrayV3 of `size` float elements of shape `element_shape` (a `shape {...}` attribute value). */
inline std::string TensorArray(const std::string& name, const std::string& size, const std::string& element_shape,
                               bool dynamic_size = false) {
  return Node(name, "TensorArrayV3", {size},
              Attr("dtype", "type: DT_FLOAT") + Attr("element_shape", element_shape) +
                  Attr("dynamic_size", dynamic_size ? "b: true" : "b: false"));
}

}  // namespace tf1
}  // namespace test
}  // namespace tf
}  // namespace ir

#endif  // IR_TESTS_TF1_GRAPH_BUILDERS_H_
