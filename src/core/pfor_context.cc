/*!
 * \file pfor_context.cc
 * \brief The helpers of PforContext built on its interface, and VectorizeElementwise (ir/vectorize.h).
 *
 * The Vectorize pass (src/passes/vectorize.cc) implements the context; what an op's converter
 * calls beyond that interface is here, in core.
 */
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/vectorize.h"

namespace ir {

namespace {

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + ")";
}

}  // namespace

bool PforContext::AnyStacked() const {
  for (const PforValue& v : inputs()) {
    if (v.stacked) return true;
  }
  return false;
}

NodeEntry PforContext::Make(const std::string& op_name, std::vector<NodeEntry> inputs,
                            const std::map<std::string, std::string>& dict, uint32_t index) {
  return NodeEntry{MakeNode(op_name, std::move(inputs), dict), index};
}

NodeEntry PforContext::Stacked(size_t i) { return stacked(i) ? input(i).entry : Stack(input(i).entry, in_shape(i)); }

std::map<std::string, std::string> PforContext::DictWith(const std::string& key, const std::string& value) const {
  std::map<std::string, std::string> dict = attrs().dict;
  dict[key] = value;
  return dict;
}

std::vector<PforValue> VectorizeElementwise(PforContext& ctx) {
  static const auto& patterns = Op::GetAttr<TOpPattern>("TOpPattern");
  const bool broadcasts = patterns.get(ctx.node()->op(), kOpaque) == kBroadcast;
  int rank = 0;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) rank = std::max(rank, ctx.in_shape(i).ndim());
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& shape = ctx.in_shape(i);
    if (!ctx.stacked(i)) {
      inputs.push_back(broadcasts ? ctx.input(i).entry : ctx.Stack(ctx.input(i).entry, shape));
    } else if (shape.ndim() < rank) {
      std::vector<int64_t> dims{ctx.n()};
      dims.resize(1 + rank - shape.ndim(), 1);
      dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
      inputs.push_back(ctx.Make("reshape", {ctx.input(i).entry}, {{"shape", ShapeText(dims)}}));
    } else {
      inputs.push_back(ctx.input(i).entry);
    }
  }
  NodeEntry first = ctx.CopyNode(std::move(inputs), ctx.attrs().dict);
  std::vector<PforValue> outs;
  for (uint32_t i = 0; i < ctx.node()->num_outputs(); ++i) outs.push_back(PforValue{NodeEntry{first.node, i}, true});
  return outs;
}

}  // namespace ir
