/*!
 * \file vectorize.cc
 * \brief Vectorize: replaces pfor nodes by batched graphs built by the ops' FVectorize converters.
 *
 * Each pfor body is first expanded (nested pfor nodes vectorized inside it), then its shapes and
 * dtypes are inferred from the pfor's inputs, then its nodes are converted in topological order
 * (see ir/vectorize.h for the stacked / unstacked rules). A node that cannot be converted becomes
 * a pfor loop of that node alone (vectorize=false) and is listed in "vectorize.fallbacks". A pfor
 * whose gradient node reads what it saves (FForwardInput: a _pfor_grad) stays a loop, listed too.
 */
#include "ir/vectorize.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/op_kernel.h"
#include "ir/pass.h"

namespace ir {

namespace {

constexpr const char* kFallbacksKey = "vectorize.fallbacks";

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string text = "(";
  for (size_t i = 0; i < dims.size(); ++i) text += (i ? "," : "") + std::to_string(dims[i]);
  return text + ")";
}

std::vector<int64_t> WithLeading(int64_t n, const Shape& shape) {
  std::vector<int64_t> dims{n};
  dims.insert(dims.end(), shape.dims().begin(), shape.dims().end());
  return dims;
}

bool IsPforToVectorize(const Node& node) {
  if (node.is_variable() || node.op()->name != "pfor") return false;
  auto it = node.attrs.dict.find("vectorize");
  return it == node.attrs.dict.end() || it->second == "1" || it->second == "true" || it->second == "True";
}

/*!
 * \brief The nodes of `idx` a gradient node reads the record of (FForwardInput): they must run as
 * the nodes they are, so a pfor among them is not vectorized.
 */
std::unordered_set<const Node*> RecordingNodes(const IndexedGraph& idx) {
  std::unordered_set<const Node*> recording;
  const auto* forward_input = Op::FindAttr<FForwardInput>("FForwardInput");
  for (uint32_t nid = 0; nid < idx.num_nodes() && forward_input != nullptr; ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable() || !forward_input->count(node->op())) continue;
    int k = (*forward_input)[node->op()](node->attrs, static_cast<uint32_t>(node->inputs.size()));
    if (k >= 0 && static_cast<size_t>(k) < node->inputs.size()) recording.insert(node->inputs[k].node.get());
  }
  return recording;
}

int64_t ResolveN(const Node& node, const std::vector<Shape>& in_shapes) {
  int64_t n = std::stoll(node.attrs.dict.count("n") ? node.attrs.dict.at("n") : "-1");
  if (n >= 0) return n;
  int from = std::stoi(node.attrs.dict.at("n_from"));
  return in_shapes.at(from)[0];
}

/*! \brief Shapes and dtypes of every entry of Graph(outputs), inferred from the params' values. */
struct Inferred {
  Graph graph;
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
};

Inferred Infer(const std::vector<NodeEntry>& outputs, const std::vector<NodePtr>& params,
               const std::vector<Shape>& shapes, const std::vector<DType>& dtypes, const std::string& where) {
  Inferred r;
  r.graph.outputs = outputs;
  const IndexedGraph& idx = r.graph.indexed_graph();
  std::vector<Shape> shape_seeds;
  std::vector<DType> dtype_seeds;
  for (uint32_t nid : idx.input_nodes()) {
    Shape s;
    DType t = DType::kUnknown;
    for (size_t i = 0; i < params.size(); ++i) {
      if (params[i].get() == idx[nid].source) s = shapes.at(i), t = dtypes.at(i);
    }
    shape_seeds.push_back(s);
    dtype_seeds.push_back(t);
  }
  r.graph.SetAttr("shape_inputs", std::move(shape_seeds));
  r.graph.SetAttr("dtype_inputs", std::move(dtype_seeds));
  try {
    r.graph = ApplyPasses(std::move(r.graph), {"InferShape", "InferType"});
  } catch (const Error& err) {
    throw Error(where + ": " + err.what());
  }
  r.shapes = r.graph.GetAttr<std::vector<Shape>>("shape");
  r.dtypes = r.graph.GetAttr<std::vector<DType>>("dtype");
  return r;
}

/*! \brief The context the pass gives a converter: the node's converted inputs and its builder. */
class VectorizeContext final : public PforContext {
 public:
  /*! \brief New nodes are named "<prefix>/<node name>/v<k>". */
  VectorizeContext(const NodePtr& node, std::vector<PforValue> inputs, std::vector<Shape> in_shapes,
                   std::vector<DType> in_dtypes, std::vector<Shape> out_shapes, std::vector<DType> out_dtypes,
                   int64_t n, std::string prefix)
      : node_(node),
        inputs_(std::move(inputs)),
        in_shapes_(std::move(in_shapes)),
        out_shapes_(std::move(out_shapes)),
        in_dtypes_(std::move(in_dtypes)),
        out_dtypes_(std::move(out_dtypes)),
        n_(n),
        prefix_(std::move(prefix)) {}

  const NodePtr& node() const override { return node_; }
  const std::vector<PforValue>& inputs() const override { return inputs_; }
  const Shape& in_shape(size_t i) const override { return in_shapes_.at(i); }
  DType in_dtype(size_t i) const override { return in_dtypes_.at(i); }
  const Shape& out_shape(size_t i) const override { return out_shapes_.at(i); }
  DType out_dtype(size_t i) const override { return out_dtypes_.at(i); }
  size_t num_outputs() const override { return out_shapes_.size(); }
  int64_t n() const override { return n_; }
  const std::string& prefix() const override { return prefix_; }

  NodePtr MakeNode(const std::string& op_name, std::vector<NodeEntry> inputs,
                   const std::map<std::string, std::string>& dict) override {
    const Op* op = Op::Find(op_name);
    IR_CHECK(op != nullptr) << "the FVectorize converter of " << NodeDesc(attrs()) << " builds op '" << op_name
                            << "', which is not registered";
    return Node::Create(op, StrCat(prefix_, "/", attrs().name, "/v", made_++), dict, std::move(inputs));
  }

  NodeEntry Stack(const NodeEntry& entry, const Shape& shape) override {
    return Make("broadcast_to", {entry}, {{"shape", ShapeText(WithLeading(n_, shape))}});
  }

  NodeEntry MergeLeading(const NodeEntry& entry, const Shape& shape) override {
    IR_CHECK(shape.ndim() >= 1) << NodeDesc(attrs())
                                << ": cannot merge the iterations into the leading axis of a scalar";
    std::vector<int64_t> dims = shape.dims();
    dims[0] *= n_;
    return Make("reshape", {entry}, {{"shape", ShapeText(dims)}});
  }

  NodeEntry SplitLeading(const NodeEntry& entry, const Shape& shape) override {
    return Make("reshape", {entry}, {{"shape", ShapeText(WithLeading(n_, shape))}});
  }

  NodeEntry CopyNode(std::vector<NodeEntry> inputs, const std::map<std::string, std::string>& dict,
                     uint32_t index) override {
    NodePtr copy = Node::Create(node_->op(), StrCat(prefix_, "/", attrs().name, "/v", made_++), dict, std::move(inputs),
                                node_->attrs.subgraphs);
    return NodeEntry{copy, index};
  }

 private:
  NodePtr node_;
  std::vector<PforValue> inputs_;
  std::vector<Shape> in_shapes_, out_shapes_;
  std::vector<DType> in_dtypes_, out_dtypes_;
  int64_t n_;
  std::string prefix_;
  int made_ = 0;
};

class Vectorizer {
 public:
  std::vector<std::string> fallbacks;

  /*!
   * \brief `outputs` (a graph over `params` with those shapes and dtypes) with every pfor node
   * to vectorize replaced; returns the new outputs (the same entries when there is none).
   */
  std::vector<NodeEntry> Expand(const std::vector<NodeEntry>& outputs, const std::vector<NodePtr>& params,
                                const std::vector<Shape>& shapes, const std::vector<DType>& dtypes,
                                const std::string& where) {
    bool any = false;
    PostOrderDFSVisit(outputs, [&](const NodePtr& node) { any = any || IsPforToVectorize(*node); });
    if (!any) return outputs;
    Inferred inf = Infer(outputs, params, shapes, dtypes, where);
    const IndexedGraph& idx = inf.graph.indexed_graph();
    const std::unordered_set<const Node*> recording = RecordingNodes(idx);
    std::unordered_map<const Node*, std::vector<NodeEntry>> replaced;
    auto mapped = [&](const NodeEntry& e) {
      auto it = replaced.find(e.node.get());
      return it == replaced.end() ? e : it->second.at(e.index);
    };
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      const Node* src = idx[nid].source;
      if (src->is_variable()) continue;
      NodePtr node = idx[nid].weak_ref.lock();
      std::vector<NodeEntry> inputs;
      bool changed = false;
      for (const NodeEntry& in : node->inputs) {
        inputs.push_back(mapped(in));
        changed = changed || inputs.back() != in;
      }
      if (IsPforToVectorize(*node) && recording.count(src)) {
        fallbacks.push_back(StrCat(src->attrs.name, " (pfor: its gradient reads the values of nodes with effects)"));
      } else if (IsPforToVectorize(*node)) {
        std::vector<Shape> in_shapes;
        std::vector<DType> in_dtypes;
        for (const NodeEntry& in : node->inputs) {
          in_shapes.push_back(inf.shapes[idx.entry_id(in)]);
          in_dtypes.push_back(inf.dtypes[idx.entry_id(in)]);
        }
        replaced[src] = Convert(node, inputs, in_shapes, in_dtypes);
        continue;
      }
      for (const NodePtr& dep : node->control_deps) changed = changed || replaced.count(dep.get());
      if (!changed) continue;
      NodePtr copy = Node::Create();
      copy->attrs = node->attrs;
      copy->inputs = std::move(inputs);
      for (const NodePtr& dep : node->control_deps) copy->control_deps.push_back(mapped(NodeEntry{dep, 0}).node);
      std::vector<NodeEntry> outs;
      for (uint32_t i = 0; i < node->num_outputs(); ++i) outs.push_back(NodeEntry{copy, i});
      replaced[src] = std::move(outs);
    }
    std::vector<NodeEntry> result;
    for (const NodeEntry& e : outputs) result.push_back(mapped(e));
    return result;
  }

  /*! \brief The entries replacing the outputs of pfor node `pfor` whose inputs are now `inputs`. */
  std::vector<NodeEntry> Convert(const NodePtr& pfor, const std::vector<NodeEntry>& inputs,
                                 const std::vector<Shape>& in_shapes, const std::vector<DType>& in_dtypes) {
    const Subgraph& body = *pfor->attrs.subgraphs.at(0);
    const std::string where = StrCat(NodeDesc(pfor->attrs), ": in the body");
    const int64_t n = ResolveN(*pfor, in_shapes);
    IR_CHECK(n >= 0) << NodeDesc(pfor->attrs) << ": the iteration count is unknown";
    std::vector<Shape> shapes{Shape::Scalar()};
    shapes.insert(shapes.end(), in_shapes.begin(), in_shapes.end());
    std::vector<DType> dtypes{DType::kInt32};
    dtypes.insert(dtypes.end(), in_dtypes.begin(), in_dtypes.end());
    std::vector<NodeEntry> outputs = Expand(body.graph.outputs, body.params, shapes, dtypes, where);
    Inferred inf = Infer(outputs, body.params, shapes, dtypes, where);
    const IndexedGraph& idx = inf.graph.indexed_graph();
    const std::string prefix = pfor->attrs.name;
    std::vector<PforValue> values(idx.num_node_entries());
    std::unordered_map<const Node*, NodePtr> converted;  // for control dependencies
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      NodePtr node = idx[nid].weak_ref.lock();
      if (node->is_variable()) {
        PforValue v{NodeEntry{node, 0}, false};
        for (size_t i = 0; i < body.params.size(); ++i) {
          if (body.params[i] != node) continue;
          if (i == 0) {
            v = PforValue{MakeNode("range", StrCat(prefix, "/index"), {},
                                   {{"start", "0"}, {"limit", std::to_string(n)}, {"dtype", "int32"}}),
                          true};
          } else {
            v = PforValue{inputs.at(i - 1), false};
          }
        }
        values[idx.entry_id(nid, 0)] = v;
        continue;
      }
      std::vector<PforValue> ins;
      std::vector<Shape> ishapes;
      std::vector<DType> itypes;
      for (const NodeEntry& in : node->inputs) {
        uint32_t eid = idx.entry_id(in);
        ins.push_back(values[eid]);
        ishapes.push_back(inf.shapes[eid]);
        itypes.push_back(inf.dtypes[eid]);
      }
      std::vector<Shape> oshapes;
      std::vector<DType> otypes;
      for (uint32_t i = 0; i < node->num_outputs(); ++i) {
        oshapes.push_back(inf.shapes[idx.entry_id(nid, i)]);
        otypes.push_back(inf.dtypes[idx.entry_id(nid, i)]);
      }
      VectorizeContext ctx(node, std::move(ins), std::move(ishapes), std::move(itypes), std::move(oshapes),
                           std::move(otypes), n, prefix);
      std::vector<PforValue> outs = ConvertNode(ctx);
      IR_CHECK(outs.size() == node->num_outputs())
          << "the FVectorize converter of " << NodeDesc(node->attrs) << " returned " << outs.size() << " values for "
          << node->num_outputs() << " outputs";
      for (const NodePtr& dep : node->control_deps) {
        if (dep->is_variable()) continue;  // a param or variable: available before any node runs
        auto it = converted.find(dep.get());
        NodePtr target = it == converted.end() ? dep : it->second;
        if (!outs.empty() && outs[0].entry.node && outs[0].entry.node != target) {
          outs[0].entry.node->control_deps.push_back(target);
        }
      }
      if (!outs.empty()) converted[node.get()] = outs[0].entry.node;
      for (uint32_t i = 0; i < node->num_outputs(); ++i) values[idx.entry_id(nid, i)] = outs[i];
    }
    std::vector<NodeEntry> result;
    for (size_t j = 0; j < outputs.size(); ++j) {
      const uint32_t eid = idx.entry_id(outputs[j]);
      const PforValue& v = values[eid];
      if (v.stacked) {
        result.push_back(v.entry);
      } else {
        result.push_back(MakeNode("broadcast_to", StrCat(prefix, "/output_", j, "_stacked"), {v.entry},
                                  {{"shape", ShapeText(WithLeading(n, inf.shapes[eid]))}}));
      }
    }
    return result;
  }

 private:
  std::vector<PforValue> ConvertNode(PforContext& ctx) {
    const Node& node = *ctx.node();
    static const auto& stateful = Op::GetAttr<TIsStateful>("TIsStateful");
    const bool is_stateful = stateful.get(node.op(), false);
    if (!ctx.AnyStacked() && !is_stateful) {
      std::vector<NodeEntry> inputs;
      for (const PforValue& v : ctx.inputs()) inputs.push_back(v.entry);
      NodePtr copy = Node::Create();
      copy->attrs = node.attrs;
      copy->attrs.name = StrCat(ctx.prefix(), "/", node.attrs.name);
      copy->inputs = std::move(inputs);
      std::vector<PforValue> outs;
      for (uint32_t i = 0; i < node.num_outputs(); ++i) outs.push_back(PforValue{NodeEntry{copy, i}, false});
      return outs;
    }
    static const auto& converters = Op::GetAttr<FVectorize>("FVectorize");
    static const auto& patterns = Op::GetAttr<TOpPattern>("TOpPattern");
    std::vector<PforValue> outs;
    if (converters.count(node.op())) {
      outs = converters[node.op()](ctx);
    } else if (patterns.get(node.op(), kOpaque) == kElemWise) {
      outs = VectorizeElementwise(ctx);
    }
    if (!outs.empty()) return outs;
    return Fallback(ctx);
  }

  /*! \brief The node alone in a pfor loop (vectorize=false): iteration i reads row i of stacked inputs. */
  std::vector<PforValue> Fallback(PforContext& ctx) {
    const Node& node = *ctx.node();
    auto body = std::make_shared<Subgraph>();
    NodePtr index = Node::CreateVariable(StrCat(node.attrs.name, "/index"));
    body->params.push_back(index);
    NodePtr copy = Node::Create();
    copy->attrs = node.attrs;
    std::vector<NodeEntry> outer;
    static const auto& mutates = Op::GetAttr<FMutateInputs>("FMutateInputs");
    std::vector<uint32_t> mutated;
    if (mutates.count(node.op())) mutated = mutates[node.op()](node.attrs);
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const NodeEntry& in_entry = ctx.input(i).entry;
      if (in_entry.node->is_variable() && std::count(mutated.begin(), mutated.end(), i)) {
        copy->inputs.push_back(in_entry);  // the session's variable itself, written every iteration
        continue;
      }
      NodePtr param = Node::CreateVariable(StrCat(node.attrs.name, "/arg_", i));
      body->params.push_back(param);
      outer.push_back(ctx.input(i).entry);
      NodeEntry in{param, 0};
      if (ctx.stacked(i)) in = MakeNode("gather", StrCat(node.attrs.name, "/row_", i), {in, NodeEntry{index, 0}});
      copy->inputs.push_back(in);
    }
    for (uint32_t i = 0; i < node.num_outputs(); ++i) body->graph.outputs.push_back(NodeEntry{copy, i});
    NodePtr loop = Node::Create(Op::Get("pfor"), StrCat(ctx.prefix(), "/", node.attrs.name, "/loop"),
                                {{"n", std::to_string(ctx.n())}, {"vectorize", "0"}, {"fallback_op", node.op()->name}},
                                std::move(outer), {body});
    fallbacks.push_back(StrCat(ctx.prefix(), "/", node.attrs.name, " (", node.op()->name, ")"));
    std::vector<PforValue> outs;
    for (uint32_t i = 0; i < node.num_outputs(); ++i) outs.push_back(PforValue{NodeEntry{loop, i}, true});
    return outs;
  }
};

Graph VectorizePass(Graph src) {
  bool any = false;
  const IndexedGraph& idx = src.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes() && !any; ++nid) any = IsPforToVectorize(*idx[nid].source);
  if (!any) {
    if (!src.HasAttr(kFallbacksKey)) src.SetAttr(kFallbacksKey, std::vector<std::string>{});
    return src;
  }
  const auto& shapes = src.GetAttr<std::vector<Shape>>("shape");
  const auto& dtypes = src.GetAttr<std::vector<DType>>("dtype");
  std::vector<NodePtr> inputs;
  std::vector<Shape> in_shapes;
  std::vector<DType> in_dtypes;
  for (uint32_t nid : idx.input_nodes()) {
    inputs.push_back(idx[nid].weak_ref.lock());
    in_shapes.push_back(shapes[idx.entry_id(nid, 0)]);
    in_dtypes.push_back(dtypes[idx.entry_id(nid, 0)]);
  }
  Vectorizer vectorizer;
  Graph dst;
  dst.outputs = vectorizer.Expand(src.outputs, inputs, in_shapes, in_dtypes, "Vectorize");
  dst.attrs = src.attrs;
  for (const char* key : {"shape", "dtype", "shape_num_unknown_nodes", "dtype_num_unknown_nodes"}) dst.attrs.erase(key);
  // The graph inputs keep their shapes and dtypes; their order may change.
  std::vector<Shape> shape_seeds;
  std::vector<DType> dtype_seeds;
  std::unordered_map<const Node*, size_t> old_input;
  for (size_t i = 0; i < inputs.size(); ++i) old_input[inputs[i].get()] = i;
  const IndexedGraph& dst_idx = dst.indexed_graph();
  for (uint32_t nid : dst_idx.input_nodes()) {
    auto it = old_input.find(dst_idx[nid].source);
    shape_seeds.push_back(it == old_input.end() ? Shape() : in_shapes[it->second]);
    dtype_seeds.push_back(it == old_input.end() ? DType::kUnknown : in_dtypes[it->second]);
  }
  dst.SetAttr("shape_inputs", std::move(shape_seeds));
  dst.SetAttr("dtype_inputs", std::move(dtype_seeds));
  dst.SetAttr(kFallbacksKey, std::move(vectorizer.fallbacks));
  return ApplyPasses(std::move(dst), {"InferShape", "InferType"});
}

}  // namespace

IR_REGISTER_PASS(Vectorize)
    .describe(
        "Replaces pfor nodes by batched graphs built from the ops' FVectorize converters; nodes without one "
        "run as loops and are listed in vectorize.fallbacks.")
    .set_body(VectorizePass)
    .set_change_graph(true)
    .depend_graph_attr("shape")
    .depend_graph_attr("dtype")
    .provide_graph_attr("shape")
    .provide_graph_attr("dtype")
    .provide_graph_attr(kFallbacksKey);

IR_REGISTER_GRAPH_ATTR("vectorize.fallbacks")
    .describe("Nodes of pfor bodies the Vectorize pass left as loops over the iterations: \"name (op)\".")
    .set_type<std::vector<std::string>>();

}  // namespace ir
