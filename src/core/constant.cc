/*!
 * \file constant.cc
 * \brief `constant` nodes (ir/constant.h): made from an array, read back.
 */
#include "ir/constant.h"

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/op_kernel.h"

namespace ir {
namespace {

/*! \brief The exact text of element 0 (parsed back to the same value by the constant op). */
std::string ElementText(const NDArray& host) {
  char buf[40];
  switch (host.dtype()) {
    case DType::kFloat32:
      std::snprintf(buf, sizeof(buf), "%.9g", host.data<float>()[0]);
      break;
    case DType::kFloat64:
      std::snprintf(buf, sizeof(buf), "%.17g", host.data<double>()[0]);
      break;
    case DType::kInt32:
      return std::to_string(host.data<int32_t>()[0]);
    case DType::kInt64:
      return std::to_string(host.data<int64_t>()[0]);
    case DType::kBool:
      return host.data<bool>()[0] ? "true" : "false";
    default:
      throw Error(StrCat("a constant cannot hold dtype ", DTypeName(host.dtype())));
  }
  return buf;
}

}  // namespace

NodeEntry MakeConstantNode(const std::string& name, const NDArray& value) {
  NDArray host = value.device() == Device::CPU() ? value : value.CopyTo(Device::CPU());
  std::vector<std::string> dims;
  for (int64_t d : host.shape().dims()) dims.push_back(std::to_string(d));
  std::map<std::string, std::string> dict{{"dtype", DTypeName(host.dtype())},
                                          {"shape", StrCat("(", Join(dims, ","), ")")}};
  if (host.Size() <= 1) {  // as text, so fused kernels and printed graphs show the literal
    dict["value"] = host.Size() == 0 ? "[]" : ElementText(host);
    return MakeNode("constant", name, {}, dict);
  }
  // The constant op's parser adopts an NDArray seeded in parsed: no base64 round trip, no copy.
  NodePtr node = Node::Create();
  node->attrs.op = Op::Get("constant");
  node->attrs.name = name;
  node->attrs.dict = std::move(dict);
  node->attrs.parsed = host;
  node->ReparseAttrs();
  return NodeEntry{node, 0};
}

NDArray ConstantNodeValue(const Node& node) {
  if (node.is_variable() || node.op()->name != "constant") return NDArray();
  std::vector<Shape> no_shapes, shape(1);
  std::vector<DType> no_types, dtype(1, DType::kUnknown);
  Op::GetAttr<FInferShape>("FInferShape")[node.op()](node.attrs, &no_shapes, &shape);
  Op::GetAttr<FInferType>("FInferType")[node.op()](node.attrs, &no_types, &dtype);
  NDArray value(shape[0], dtype[0]);
  Op::GetAttr<FCompute>(FComputeKey(DeviceType::kCPU))[node.op()](OpContext(), node.attrs, {}, {value});
  return value;
}

}  // namespace ir
