/*!
 * \file op_attrs.h
 * \brief Reading op parameters from NodeAttrs::dict for the OpenCL kernels.
 *
 * The ops keep their parameter structs private to their files, so device kernels read the
 * attribute strings with the same parsers (IntList, dmlc's bool and number syntax) and the
 * defaults documented by each op; the tests compare every kernel with the op's CPU kernel
 * for default and explicit attributes.
 */
#ifndef IR_RUNTIME_OPENCL_OP_ATTRS_H_
#define IR_RUNTIME_OPENCL_OP_ATTRS_H_

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>

#include "ops/nn_common.h"
#include "ops/op_common.h"

namespace ir {
namespace opencl {

/*! \brief attrs.dict[key], or `fallback` when absent. */
inline std::string AttrString(const NodeAttrs& attrs, const std::string& key, const std::string& fallback) {
  auto it = attrs.dict.find(key);
  return it == attrs.dict.end() ? fallback : it->second;
}

/*! \brief A number attribute (dmlc syntax: a decimal or floating literal). */
inline double AttrDouble(const NodeAttrs& attrs, const std::string& key, double fallback) {
  auto it = attrs.dict.find(key);
  if (it == attrs.dict.end()) return fallback;
  std::istringstream is(it->second);
  double value = 0;
  IR_CHECK(is >> value) << op::NodeDesc(attrs) << ": attribute " << key << "='" << it->second << "' is not a number";
  return value;
}

/*! \brief A bool attribute: true/false (any case) or an integer, as dmlc parses it. */
inline bool AttrBool(const NodeAttrs& attrs, const std::string& key, bool fallback) {
  auto it = attrs.dict.find(key);
  if (it == attrs.dict.end()) return fallback;
  std::string text = it->second;
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  if (text == "true") return true;
  if (text == "false") return false;
  return AttrDouble(attrs, key, 0) != 0;
}

/*! \brief A list attribute in IntList syntax ("(1,2)", "[1, 2]", "3", "()"). */
inline op::IntList AttrIntList(const NodeAttrs& attrs, const std::string& key, const op::IntList& fallback) {
  auto it = attrs.dict.find(key);
  if (it == attrs.dict.end()) return fallback;
  std::istringstream is(it->second);
  op::IntList list;
  IR_CHECK(is >> list) << op::NodeDesc(attrs) << ": attribute " << key << "='" << it->second << "' is not a list";
  return list;
}

/*! \brief The window of conv2d and its backward ops (defaults of nn_conv.cc's Conv2DParam). */
inline op::nn::Window ConvWindow(const NodeAttrs& attrs) {
  op::nn::Window w =
      op::nn::MakeWindow(attrs, AttrString(attrs, "data_format", "NHWC"), AttrString(attrs, "padding", "VALID"),
                         AttrIntList(attrs, "pads", {}), AttrIntList(attrs, "strides", {1, 1}));
  w.dilation = op::nn::SpatialPair(attrs, "dilations", AttrIntList(attrs, "dilations", {1, 1}), w.layout, {1, 1});
  return w;
}

/*! \brief The window of the pooling ops (defaults of nn_pool.cc's Pool2DParam; ksize is required). */
inline op::nn::Window PoolWindow(const NodeAttrs& attrs) {
  op::nn::Window w =
      op::nn::MakeWindow(attrs, AttrString(attrs, "data_format", "NHWC"), AttrString(attrs, "padding", "VALID"),
                         AttrIntList(attrs, "pads", {}), AttrIntList(attrs, "strides", {1, 1}));
  op::IntList ksize = AttrIntList(attrs, "ksize", {});
  IR_CHECK(!ksize.empty()) << op::NodeDesc(attrs) << ": ksize must not be empty";
  w.kernel = op::nn::SpatialPair(attrs, "ksize", ksize, w.layout, {1, 1});
  return w;
}

}  // namespace opencl
}  // namespace ir

#endif  // IR_RUNTIME_OPENCL_OP_ATTRS_H_
