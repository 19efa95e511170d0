/*!
 * \file fused.cc
 * \brief The "_fused" op: a group of nodes made one node by the Fusion pass.
 *
 * Shape and type inference run the members' own inference; the CPU kernel runs the members'
 * own kernels one by one (the unfused reference; CodeGen/RTCGen replace it by one generated
 * kernel per node through the graph attribute "kernels"). The group's accessors, which every
 * layer shares, are core's (src/core/fused_group.cc).
 */
#include <algorithm>
#include <charconv>
#include <functional>
#include <sstream>

#include "ir/cpu_kernel.h"
#include "ir/device_kernel.h"
#include "ir/fusion.h"
#include "ir/graph_io.h"
#include "ops/fused/fused_epilogue.h"
#include "ops/op_common.h"

namespace ir {
namespace op {
namespace {

// Group input k is the variable named "in<k>" (checked by ParseFused).
int InputIndex(const Node* var) {
  int k = 0;
  const std::string& name = var->attrs.name;
  std::from_chars(name.data() + 2, name.data() + name.size(), k);
  return k;
}

// A decimal index in [0, limit); the parameters come from graph JSON, so anything else is an
// error naming the node and the parameter (std::stoi would throw a bare "stoi").
int ParseIndex(const NodeAttrs& attrs, const std::string& what, const std::string& text, size_t limit) {
  int value = -1;
  const char* end = text.data() + text.size();
  auto result = std::from_chars(text.data(), end, value);
  IR_CHECK(result.ec == std::errc() && result.ptr == end && value >= 0 && static_cast<size_t>(value) < limit)
      << NodeDesc(attrs) << ": " << what << " '" << text << "' is not an index below " << limit;
  return value;
}

void ParseFused(NodeAttrs* attrs) {
  auto group = std::make_shared<FusedGroup>();
  for (const auto& kv : attrs->dict) {
    IR_CHECK(kv.first == "kind" || kv.first == "subgraph" || kv.first == "aliases" || kv.first == "mutated_inputs" ||
             kv.first == "overwritten_inputs" || (kv.first.size() > 4 && kv.first.rfind("__", 0) == 0))
        << NodeDesc(*attrs) << ": unknown parameter '" << kv.first << "'";
  }
  auto get = [&](const std::string& key) {
    auto it = attrs->dict.find(key);
    IR_CHECK(it != attrs->dict.end()) << NodeDesc(*attrs) << ": missing parameter '" << key << "'";
    return it->second;
  };
  group->kind = get("kind");
  IR_CHECK(group->kind == "map" || group->kind == "reduce" || group->kind == "row" || group->kind == "epilogue")
      << NodeDesc(*attrs) << ": unknown kind '" << group->kind << "'";
  group->subgraph = LoadJSON(get("subgraph"));
  const IndexedGraph& idx = group->subgraph.indexed_graph();
  size_t num_inputs = idx.input_nodes().size(), num_outputs = group->subgraph.outputs.size();
  std::vector<bool> seen(num_inputs, false);
  for (uint32_t nid : idx.input_nodes()) {
    const std::string& name = idx[nid].source->attrs.name;
    IR_CHECK(name.rfind("in", 0) == 0) << NodeDesc(*attrs) << ": subgraph variable '" << name << "' is not named in<k>";
    int k = ParseIndex(*attrs, StrCat("subgraph variable '", name, "' number"), name.substr(2), num_inputs);
    IR_CHECK(!seen[k]) << NodeDesc(*attrs) << ": subgraph variable '" << name << "' appears twice";
    seen[k] = true;
  }
  std::istringstream aliases(attrs->dict.count("aliases") ? attrs->dict.at("aliases") : "");
  for (std::string item; std::getline(aliases, item, ',');) {
    size_t colon = item.find(':');
    IR_CHECK(colon != std::string::npos) << NodeDesc(*attrs) << ": malformed alias '" << item << "'";
    group->aliases.emplace_back(ParseIndex(*attrs, "alias input", item.substr(0, colon), num_inputs),
                                ParseIndex(*attrs, "alias output", item.substr(colon + 1), num_outputs));
  }
  std::istringstream mutated(attrs->dict.count("mutated_inputs") ? attrs->dict.at("mutated_inputs") : "");
  for (std::string item; std::getline(mutated, item, ',');) {
    group->mutated_inputs.push_back(ParseIndex(*attrs, "mutated input", item, num_inputs));
  }
  std::istringstream overwritten(attrs->dict.count("overwritten_inputs") ? attrs->dict.at("overwritten_inputs") : "");
  for (std::string item; std::getline(overwritten, item, ',');) {
    int k = ParseIndex(*attrs, "overwritten input", item, num_inputs);
    IR_CHECK(std::find(group->mutated_inputs.begin(), group->mutated_inputs.end(), k) != group->mutated_inputs.end())
        << NodeDesc(*attrs) << ": overwritten input " << k << " is not a mutated input";
    group->overwritten_inputs.push_back(k);
  }
  if (group->kind == "epilogue") group->epilogue = DeriveEpilogue(*attrs, *group);
  attrs->parsed = std::shared_ptr<const FusedGroup>(group);
}

/*!
 * \brief Walks the members in order, filling each one's input values from the group inputs
 * or earlier members, and calling visit(node, inputs, outputs) to compute its outputs.
 */
template <typename Value, typename Visit>
std::vector<Value> WalkMembers(const FusedGroup& group, const std::vector<Value>& inputs, const Visit& visit) {
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  std::vector<std::vector<Value>> values(idx.num_nodes());
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) {
      values[nid] = {inputs.at(InputIndex(node))};
      continue;
    }
    std::vector<Value> in;
    for (const auto& e : idx[nid].inputs) in.push_back(values[e.node_id][e.index]);
    values[nid].resize(node->num_outputs());
    visit(node, in, &values[nid]);
  }
  std::vector<Value> out;
  for (const auto& e : idx.outputs()) out.push_back(values[e.node_id][e.index]);
  return out;
}

// What a member's outputs start from before its own inference (DType() is float32, not unknown).
template <typename Value>
Value Unknown() {
  return Value();
}
template <>
DType Unknown<DType>() {
  return DType::kUnknown;
}

template <typename Value, typename FInfer>
bool InferThrough(const std::string& key, const NodeAttrs& attrs, std::vector<Value>* in, std::vector<Value>* out) {
  const FusedGroup& group = GetFusedGroup(attrs);
  const auto& infer = Op::GetAttr<FInfer>(key);
  std::vector<Value> results =
      WalkMembers<Value>(group, *in, [&](const Node* node, std::vector<Value> values, std::vector<Value>* outs) {
        outs->assign(outs->size(), Unknown<Value>());
        infer[node->op()](node->attrs, &values, outs);
      });
  for (size_t i = 0; i < results.size(); ++i) (*out)[i] = results[i];
  return AllKnown(*in, *out);
}

using MemberRunner =
    std::function<void(const Node* node, const std::vector<NDArray>& in, const std::vector<NDArray>& out)>;

/*!
 * \brief Runs the members one by one with `run`, their outputs allocated on `device`, and
 * writes the group's outputs (aliased ones are the mutated inputs, already written).
 */
void RunMembers(const NodeAttrs& attrs, Device device, const std::vector<NDArray>& inputs,
                const std::vector<NDArray>& outputs, const MemberRunner& run) {
  const FusedGroup& group = GetFusedGroup(attrs);
  const auto& shape_fn = Op::GetAttr<FInferShape>("FInferShape");
  const auto& type_fn = Op::GetAttr<FInferType>("FInferType");
  std::vector<NDArray> results = WalkMembers<NDArray>(
      group, inputs, [&](const Node* node, const std::vector<NDArray>& in, std::vector<NDArray>* outs) {
        std::vector<Shape> in_shapes, out_shapes(outs->size());
        std::vector<DType> in_types, out_types(outs->size(), DType::kUnknown);
        for (const NDArray& a : in) {
          in_shapes.push_back(a.shape());
          in_types.push_back(a.dtype());
        }
        shape_fn[node->op()](node->attrs, &in_shapes, &out_shapes);
        type_fn[node->op()](node->attrs, &in_types, &out_types);
        for (size_t i = 0; i < outs->size(); ++i) (*outs)[i] = NDArray(out_shapes[i], out_types[i], device);
        run(node, in, *outs);
      });
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!group.IsAliasedOutput(static_cast<int>(i))) outputs[i].CopyFrom(results[i]);
  }
}

void FusedCompute(const OpContext& ctx, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                  const std::vector<NDArray>& outputs) {
  if (GetFusedGroup(attrs).epilogue && RunEpilogueGroup(ctx, attrs, inputs, outputs, nullptr)) return;
  RunMembers(attrs, Device::CPU(), inputs, outputs,
             [&](const Node* node, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
               FCompute compute = CpuKernelOf(node->op());  // FCompute, or generated from FCodeGen
               IR_CHECK(compute) << "op '" << node->op()->name << "' (node '" << node->attrs.name
                                 << "') has no CPU kernel";
               compute(ctx, node->attrs, in, out);
             });
}

/*! \brief On an accelerator, each member runs as the executor would run it alone on the device. */
void FusedDeviceKernel(DeviceKernelContext& dev, const NodeAttrs& attrs, const std::vector<NDArray>& inputs,
                       const std::vector<NDArray>& outputs) {
  if (GetFusedGroup(attrs).epilogue && RunEpilogueGroup(dev.op_context(), attrs, inputs, outputs, &dev)) return;
  RunMembers(attrs, dev.op_context().device, inputs, outputs,
             [&](const Node* node, const std::vector<NDArray>& in, const std::vector<NDArray>& out) {
               dev.RunNode(node->attrs, in, out);
             });
}

/*!
 * \brief The (input, output) pairs that may share a buffer: each mutated input with the output
 * aliasing it, and in a map or reduce group whose other members are elementwise/broadcast, every
 * other input with every output a member computes per element (not a reduction's result: the
 * kernel writes it after reading the whole reduced range). The planner takes such a pair only
 * where the input has the output's shape and dtype (TInplaceSameShape): the kernel then reads
 * the input at exactly the element it writes, and reads it before writing it (map and reduce
 * kernels evaluate every value of an element before its stores, each element once, and the C
 * printer marks no parameter of theirs restrict).
 */
std::vector<std::pair<int, int>> FusedInplacePairs(const NodeAttrs& attrs) {
  const FusedGroup& group = GetFusedGroup(attrs);
  std::vector<std::pair<int, int>> pairs(group.aliases.begin(), group.aliases.end());
  if (group.kind != "map" && group.kind != "reduce") return pairs;
  const IndexedGraph& idx = group.subgraph.indexed_graph();
  const auto& pattern = Op::GetAttr<TOpPattern>("TOpPattern");
  std::vector<bool> reduced(idx.num_nodes(), false);
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) continue;
    int p = pattern.get(node->op(), kOpaque);
    reduced[nid] = p == kCommReduce && group.kind == "reduce";
    if (p > kBroadcast && !reduced[nid]) return pairs;
  }
  int num_inputs = static_cast<int>(idx.input_nodes().size());
  int num_outputs = static_cast<int>(group.subgraph.outputs.size());
  for (int k = 0; k < num_inputs; ++k) {
    bool mutated = std::find(group.mutated_inputs.begin(), group.mutated_inputs.end(), k) != group.mutated_inputs.end();
    for (int j = 0; j < num_outputs && !mutated; ++j) {
      if (!group.IsAliasedOutput(j) && !reduced[idx.outputs()[j].node_id]) pairs.emplace_back(k, j);
    }
  }
  return pairs;
}

}  // namespace

IR_REGISTER_OP(_fused)
    .describe("A group of nodes fused into one kernel by the Fusion pass (attribute 'subgraph').")
    .set_num_inputs([](const NodeAttrs& attrs) {
      return static_cast<uint32_t>(GetFusedGroup(attrs).subgraph.indexed_graph().input_nodes().size());
    })
    .set_num_outputs([](const NodeAttrs& attrs) {
      return static_cast<uint32_t>(GetFusedGroup(attrs).subgraph.outputs.size());
    })
    .set_attr_parser(ParseFused)
    .set_attr<FInferShape>("FInferShape",
                           [](const NodeAttrs& attrs, std::vector<Shape>* in, std::vector<Shape>* out) {
                             return InferThrough<Shape, FInferShape>("FInferShape", attrs, in, out);
                           })
    .set_attr<FInferType>("FInferType",
                          [](const NodeAttrs& attrs, std::vector<DType>* in, std::vector<DType>* out) {
                            return InferThrough<DType, FInferType>("FInferType", attrs, in, out);
                          })
    .set_attr<FCompute>("FCompute", FusedCompute)
    .set_attr<FDeviceKernel>("FDeviceKernel", FusedDeviceKernel)
    .set_attr<FMutateInputs>("FMutateInputs",
                             [](const NodeAttrs& attrs) {
                               const auto& inputs = GetFusedGroup(attrs).mutated_inputs;
                               return std::vector<uint32_t>(inputs.begin(), inputs.end());
                             })
    .set_attr<FOverwrittenInputs>("FOverwrittenInputs",
                                  [](const NodeAttrs& attrs) {
                                    const auto& inputs = GetFusedGroup(attrs).overwritten_inputs;
                                    return std::vector<uint32_t>(inputs.begin(), inputs.end());
                                  })
    .set_attr<FInplaceOption>("FInplaceOption", FusedInplacePairs)
    .set_attr<TInplaceSameShape>("TInplaceSameShape", true)
    .set_attr<TOpPattern>("TOpPattern", kOpaque);

}  // namespace op
}  // namespace ir
