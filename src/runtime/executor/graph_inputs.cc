/*!
 * \file graph_inputs.cc
 * \brief Classifying a graph's inputs and resolving their values for one run.
 */
#include "runtime/executor/graph_inputs.h"

#include <algorithm>
#include <set>

#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {
namespace runtime {

std::vector<uint32_t> OverwrittenInputsOf(const Node& node) {
  if (node.is_variable()) return {};
  const auto* by_node = Op::FindAttr<FOverwrittenInputs>("FOverwrittenInputs");
  if (by_node != nullptr && by_node->count(node.op())) return (*by_node)[node.op()](node.attrs);
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  const auto* overwrites = Op::FindAttr<TOverwritesMutatedInputs>("TOverwritesMutatedInputs");
  if (mutate == nullptr || overwrites == nullptr || !overwrites->get(node.op(), false) || !mutate->count(node.op())) {
    return {};
  }
  return (*mutate)[node.op()](node.attrs);
}

namespace {

std::string KindName(const GraphInput& input) { return input.is_variable ? "variable" : "placeholder"; }

/*! \brief Variable node ids that some node overwrites without reading. */
std::set<uint32_t> OverwrittenInputs(const IndexedGraph& idx) {
  std::set<uint32_t> result;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    for (uint32_t i : OverwrittenInputsOf(*idx[nid].source)) result.insert(idx[nid].inputs.at(i).node_id);
  }
  return result;
}

/*! \brief Reads the hidden attributes of an input node (errors name the node). */
void ReadHints(const NodeAttrs& attrs, GraphInput* input) {
  auto get = [&attrs](const char* key) {
    auto it = attrs.dict.find(key);
    return it == attrs.dict.end() ? std::string() : it->second;
  };
  std::string kind = get("__kind__");
  IR_CHECK(kind.empty() || kind == "variable" || kind == "placeholder")
      << "input '" << attrs.name << "': __kind__ must be \"variable\" or \"placeholder\", got \"" << kind << "\"";
  if (!kind.empty()) {
    input->explicit_kind = true;
    input->is_variable = kind == "variable";
  }
  try {
    if (!get("__shape__").empty()) input->hint_shape = Shape::Parse(get("__shape__"));
    if (!get("__dtype__").empty()) input->hint_dtype = DTypeFromName(get("__dtype__"));
  } catch (const Error& err) {
    throw Error(StrCat("input '", attrs.name, "': bad hint: ", err.what()));
  }
}

void CheckFeed(const GraphInput& input, const NDArray& value) {
  IR_CHECK(value.defined()) << "feed for " << KindName(input) << " '" << input.name << "' is an undefined array";
  IR_CHECK(input.hint_dtype == DType::kUnknown || value.dtype() == input.hint_dtype)
      << "feed for " << KindName(input) << " '" << input.name << "' has dtype " << DTypeName(value.dtype())
      << " but the " << KindName(input) << " is " << DTypeName(input.hint_dtype);
  Shape merged;
  IR_CHECK(Shape::Merge(input.hint_shape, value.shape(), &merged))
      << "feed for " << KindName(input) << " '" << input.name << "' has shape " << value.shape() << " but the "
      << KindName(input) << " expects " << input.hint_shape;
}

/*! \brief Every feed must name an input; the error lists what can be fed. */
void CheckFeedNames(const std::vector<GraphInput>& inputs, const std::unordered_map<std::string, NDArray>& feeds) {
  for (const auto& kv : feeds) {
    bool known = std::any_of(inputs.begin(), inputs.end(), [&](const GraphInput& in) { return in.name == kv.first; });
    if (known) continue;
    std::set<std::string> placeholders;
    for (const GraphInput& in : inputs) {
      if (!in.is_variable) placeholders.insert(in.name);
    }
    throw Error(StrCat("feed '", kv.first, "' is not an input of this graph (its placeholders: ",
                       placeholders.empty() ? std::string("none") : Join(placeholders, ", "), ")"));
  }
}

}  // namespace

std::vector<GraphInput> ClassifyInputs(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  const std::vector<uint32_t>& mutable_nodes = idx.mutable_input_nodes();
  std::set<uint32_t> overwritten = OverwrittenInputs(idx);
  std::vector<GraphInput> inputs;
  for (uint32_t nid : idx.input_nodes()) {
    GraphInput input;
    input.node_id = nid;
    input.name = idx[nid].source->attrs.name;
    input.mutated = std::find(mutable_nodes.begin(), mutable_nodes.end(), nid) != mutable_nodes.end();
    input.is_variable = input.mutated;
    input.initialized_by_graph = overwritten.count(nid) != 0;
    ReadHints(idx[nid].source->attrs, &input);
    inputs.push_back(std::move(input));
  }
  return inputs;
}

std::vector<NDArray> ResolveInputs(const std::vector<GraphInput>& inputs,
                                   const std::unordered_map<std::string, NDArray>& feeds, VariableStore* store,
                                   Device device) {
  CheckFeedNames(inputs, feeds);
  std::vector<NDArray> values;
  for (const GraphInput& input : inputs) {
    auto fed = feeds.find(input.name);
    if (fed != feeds.end()) {
      CheckFeed(input, fed->second);
      bool copy = input.mutated || fed->second.device() != device;
      values.push_back(copy ? fed->second.CopyTo(device) : fed->second);
    } else if ((input.is_variable || !input.explicit_kind) && store->Has(input.name)) {
      NDArray value = store->Get(input.name);
      if (value.device() != device) {
        value = value.CopyTo(device);
        store->Set(input.name, value);
      }
      values.push_back(value);
    } else if (input.is_variable) {
      IR_CHECK(input.initialized_by_graph)
          << "variable '" << input.name << "' is not initialized (run its initializer first)";
      values.emplace_back();
    } else {
      throw Error(StrCat("placeholder '", input.name, "' must be fed"));
    }
  }
  return values;
}

InputSignature SignatureOf(const std::vector<NDArray>& values) {
  InputSignature key;
  key.reserve(values.size() * 4);
  for (const NDArray& value : values) {
    if (!value.defined()) {
      key.push_back(-1);
      continue;
    }
    key.push_back(static_cast<int64_t>(value.dtype()));
    key.push_back(value.shape().ndim());
    key.insert(key.end(), value.shape().dims().begin(), value.shape().dims().end());
  }
  return key;
}

}  // namespace runtime
}  // namespace ir
