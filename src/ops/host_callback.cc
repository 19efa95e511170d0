/*!
 * \file host_callback.cc
 * \brief host_callback: outputs computed by a function of the embedding program (tf.py_func,
 * tf.numpy_function, tf.Print, tf.print), registered through RegisterHostCallback (the
 * registry is core's: src/core/host_callback.cc).
 *
 * The function's outputs are only known when it runs: each output's dtype is an attribute,
 * its shape one when the caller knows it (else unknown, and the executor plans the graph
 * dynamically). The node is stateful (never folded, merged or vectorized) and opaque.
 */
#include <dmlc/parameter.h>

#include <sstream>

#include "ir/host_callback.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

struct HostCallbackParam : public dmlc::Parameter<HostCallbackParam> {
  int64_t callback;
  std::string dtypes;
  std::string shapes;
  std::vector<DType> out_dtypes;
  std::vector<Shape> out_shapes;
  DMLC_DECLARE_PARAMETER(HostCallbackParam) {
    DMLC_DECLARE_FIELD(callback).describe("The id RegisterHostCallback returned.");
    DMLC_DECLARE_FIELD(dtypes).set_default("").describe("The outputs' dtypes, comma-separated (\"float32,int64\").");
    DMLC_DECLARE_FIELD(shapes).set_default("").describe(
        "The outputs' shapes, ';'-separated (\"[2,?];?\"; \"?\": unknown rank); empty: all unknown.");
  }
};
DMLC_REGISTER_PARAMETER(HostCallbackParam);

std::vector<std::string> SplitText(const std::string& text, char sep) {
  std::vector<std::string> items;
  if (text.empty()) return items;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, sep);) items.push_back(item);
  if (text.back() == sep) items.emplace_back();
  return items;
}

void ParseHostCallback(NodeAttrs* attrs) {
  ParamParser<HostCallbackParam>(attrs);
  auto& p = dmlc::get<HostCallbackParam>(attrs->parsed);
  for (const std::string& name : SplitText(p.dtypes, ',')) p.out_dtypes.push_back(DTypeFromName(name));
  std::vector<std::string> shapes = SplitText(p.shapes, ';');
  IR_CHECK(shapes.empty() || shapes.size() == p.out_dtypes.size())
      << NodeDesc(*attrs) << ": " << shapes.size() << " shapes for " << p.out_dtypes.size() << " outputs";
  for (const std::string& text : shapes) p.out_shapes.push_back(Shape::Parse(text));
  p.out_shapes.resize(p.out_dtypes.size());
}

const HostCallbackParam& Param(const NodeAttrs& attrs) { return dmlc::get<HostCallbackParam>(attrs.parsed); }

bool HostCallbackShape(const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
  for (size_t i = 0; i < out->size(); ++i) {
    AssignShape(attrs, "output " + std::to_string(i), &(*out)[i], Param(attrs).out_shapes[i]);
  }
  return AllKnown(*in, *out);
}

bool HostCallbackType(const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
  for (size_t i = 0; i < out->size(); ++i) {
    AssignType(attrs, "output " + std::to_string(i), &(*out)[i], Param(attrs).out_dtypes[i]);
  }
  return AllKnown(*in, *out);
}

std::vector<NDArray> HostCallbackCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& in) {
  const HostCallbackParam& p = Param(attrs);
  std::vector<NDArray> host;
  for (const NDArray& x : in) host.push_back(x.CopyTo(Device::CPU()));
  std::vector<NDArray> out;
  try {
    out = FindHostCallback(p.callback)(host, static_cast<uint32_t>(p.out_dtypes.size()));
  } catch (const Error& err) {
    throw Error(StrCat(NodeDesc(attrs), ": ", err.what()));
  }
  IR_CHECK(out.size() == p.out_dtypes.size()) << NodeDesc(attrs) << ": the host function returned " << out.size()
                                              << " values, expected " << p.out_dtypes.size();
  for (size_t i = 0; i < out.size(); ++i) {
    Shape merged;
    IR_CHECK(out[i].dtype() == p.out_dtypes[i])
        << NodeDesc(attrs) << ": value " << i << " returned by the host function is " << DTypeName(out[i].dtype())
        << ", but expects " << DTypeName(p.out_dtypes[i]);
    IR_CHECK(Shape::Merge(out[i].shape(), p.out_shapes[i], &merged))
        << NodeDesc(attrs) << ": value " << i << " returned by the host function has shape " << out[i].shape()
        << ", but expects " << p.out_shapes[i];
    if (ctx.device.type != DeviceType::kCPU) out[i] = out[i].CopyTo(ctx.device);
  }
  return out;
}

}  // namespace

IR_REGISTER_OP(host_callback)
    .describe(
        "Outputs computed by a host function (RegisterHostCallback) from the inputs when the node "
        "runs: tf.py_func, tf.print. Stateful, never fused; carries no gradient.")
    .set_num_inputs(kVariadic)
    .set_num_outputs([](const NodeAttrs& attrs) { return static_cast<uint32_t>(Param(attrs).out_dtypes.size()); })
    .add_argument("inputs", "NDArray[]", "The function's arguments.")
    .set_param<HostCallbackParam>()
    .set_attr_parser(ParseHostCallback)
    .set_attr<TIsStateful>("TIsStateful", true)
    .set_attr<TMayRaise>("TMayRaise", true)
    .set_attr<FInferShape>("FInferShape", HostCallbackShape)
    .set_attr<FInferType>("FInferType", HostCallbackType)
    .set_attr<FComputeShaped>("FComputeShaped", HostCallbackCompute)
    .set_attr<FGradient>("FGradient",
                         [](const NodePtr& node, const std::vector<NodeEntry>&) {
                           return std::vector<NodeEntry>(node->inputs.size());
                         })
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
