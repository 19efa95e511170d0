/*!
 * \file infer_shape_type.cc
 * \brief InferShape and InferType: one fixed-point driver over the ops' FInferShape/FInferType.
 *
 * Both passes seed entry values (a previous result, a per-input graph attribute, a hidden
 * variable hint), then sweep the nodes forward and backward, letting each op refine its input
 * and output values, until a sweep changes nothing. Unknown values are reported, not fatal.
 */
#include <string>
#include <vector>

#include "core/json_util.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"

namespace ir {

namespace {

/*! \brief How many unknown nodes the "*_unknown_nodes" attributes describe at most. */
constexpr size_t kMaxReportedUnknown = 10;

/*! \brief What InferShape knows about shapes; InferTypeTraits is the same for dtypes. */
struct InferShapeTraits {
  using Value = Shape;
  using FInfer = FInferShape;
  static constexpr const char* kKey = "shape";
  static constexpr const char* kInputsKey = "shape_inputs";
  static constexpr const char* kHintKey = "__shape__";
  static constexpr const char* kOpAttr = "FInferShape";
  static Value Unknown() { return Shape(); }
  static bool IsKnown(const Shape& s) { return s.is_known(); }
  static bool Merge(const Shape& a, const Shape& b, Shape* out) { return Shape::Merge(a, b, out); }
  static Shape Parse(const std::string& text) { return Shape::Parse(text); }
  static std::string Str(const Shape& s) { return s.ToString(); }
};

struct InferTypeTraits {
  using Value = DType;
  using FInfer = FInferType;
  static constexpr const char* kKey = "dtype";
  static constexpr const char* kInputsKey = "dtype_inputs";
  static constexpr const char* kHintKey = "__dtype__";
  static constexpr const char* kOpAttr = "FInferType";
  static Value Unknown() { return DType::kUnknown; }
  static bool IsKnown(DType t) { return t != DType::kUnknown; }
  static bool Merge(DType a, DType b, DType* out) {
    if (IsKnown(a) && IsKnown(b) && a != b) return false;
    *out = IsKnown(a) ? a : b;
    return true;
  }
  static DType Parse(const std::string& text) { return DTypeFromName(text); }
  static std::string Str(DType t) { return DTypeName(t); }
};

/*!
 * \brief Runs one inference (shape or dtype) over a graph to a fixed point.
 *
 * `values_` holds one value per entry and only ever gets refined (Traits::Merge), so the
 * sweeps terminate; a refinement that contradicts what is known is an error naming the node.
 */
template <typename Traits>
class FixedPointInference {
 public:
  using Value = typename Traits::Value;
  using FInfer = typename Traits::FInfer;

  explicit FixedPointInference(const Graph& graph)
      : idx_(graph.indexed_graph()),
        finfer_(Op::FindAttr<FInfer>(Traits::kOpAttr)),
        values_(idx_.num_node_entries(), Traits::Unknown()) {
    SeedFromPreviousResult(graph);
    SeedFromInputsAttr(graph);
    SeedFromVariableHints();
  }

  /*! \brief Alternates forward and backward sweeps until one changes nothing. */
  void Run() {
    std::vector<bool> done(idx_.num_nodes(), false);
    bool changed = true;
    for (bool forward = true; changed; forward = !forward) {
      changed = false;
      for (size_t k = 0; k < idx_.num_nodes(); ++k) {
        uint32_t nid = static_cast<uint32_t>(forward ? k : idx_.num_nodes() - 1 - k);
        if (done[nid] || idx_[nid].source->is_variable()) continue;
        changed = InferNode(nid) || changed;
        done[nid] = NodeKnown(nid);
      }
    }
  }

  /*! \brief Sets the entry values and the report of nodes with unknown outputs. */
  void Publish(Graph* graph) const {
    std::vector<std::string> reported;
    int num_unknown = 0;
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      std::vector<std::string> unknown;
      for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
        const Value& v = values_[idx_.entry_id(nid, i)];
        if (!Traits::IsKnown(v)) unknown.push_back(StrCat("output ", i, " ", Traits::kKey, " ", Traits::Str(v)));
      }
      if (unknown.empty()) continue;
      ++num_unknown;
      if (reported.size() < kMaxReportedUnknown) {
        reported.push_back(StrCat(NodeDesc(idx_[nid].source->attrs), ": ", Join(unknown, ", ")));
      }
    }
    graph->SetAttr(Traits::kKey, values_);
    graph->SetAttr(StrCat(Traits::kKey, "_num_unknown_nodes"), num_unknown);
    graph->SetAttr(StrCat(Traits::kKey, "_unknown_nodes"), std::move(reported));
  }

 private:
  // A previous result (e.g. a partial one set by the user) is a starting point if it still fits.
  void SeedFromPreviousResult(const Graph& graph) {
    if (!graph.HasAttr(Traits::kKey)) return;
    const auto& previous = graph.GetAttr<std::vector<Value>>(Traits::kKey);
    if (previous.size() == values_.size()) values_ = previous;
  }

  void SeedFromInputsAttr(const Graph& graph) {
    if (!graph.HasAttr(Traits::kInputsKey)) return;
    const auto& seeds = graph.GetAttr<std::vector<Value>>(Traits::kInputsKey);
    const std::vector<uint32_t>& inputs = idx_.input_nodes();
    IR_CHECK(seeds.size() == inputs.size()) << "graph attribute '" << Traits::kInputsKey << "' has " << seeds.size()
                                            << " values but the graph has " << inputs.size() << " inputs";
    for (size_t i = 0; i < inputs.size(); ++i) {
      Refine(idx_.entry_id(inputs[i], 0), seeds[i], inputs[i], Traits::kInputsKey);
    }
  }

  void SeedFromVariableHints() {
    for (uint32_t nid : idx_.input_nodes()) {
      const NodeAttrs& attrs = idx_[nid].source->attrs;
      auto it = attrs.dict.find(Traits::kHintKey);
      if (it == attrs.dict.end()) continue;
      Value hint;
      try {
        hint = Traits::Parse(it->second);
      } catch (const Error& err) {
        throw Error(StrCat(NodeDesc(attrs), ": bad ", Traits::kHintKey, ": ", err.what()));
      }
      Refine(idx_.entry_id(nid, 0), hint, nid, Traits::kHintKey);
    }
  }

  // Calls the op's inference function on the node's current values and merges what it found.
  bool InferNode(uint32_t nid) {
    const IndexedGraph::NodeInfo& info = idx_[nid];
    const NodeAttrs& attrs = info.source->attrs;
    IR_CHECK(finfer_ != nullptr && finfer_->count(attrs.op))
        << NodeDesc(attrs) << ": the op registers no " << Traits::kOpAttr;
    std::vector<Value> in, out;
    for (const IndexedGraph::Entry& e : info.inputs) in.push_back(values_[idx_.entry_id(e)]);
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) out.push_back(values_[idx_.entry_id(nid, i)]);
    CallInfer(attrs, &in, &out);
    IR_CHECK(in.size() == info.inputs.size() && out.size() == idx_.num_outputs(nid))
        << NodeDesc(attrs) << ": " << Traits::kOpAttr << " resized the input or output list";
    bool changed = false;
    for (size_t i = 0; i < in.size(); ++i) {
      changed = Refine(idx_.entry_id(info.inputs[i]), in[i], nid, StrCat("input ", i)) || changed;
    }
    for (uint32_t i = 0; i < out.size(); ++i) {
      changed = Refine(idx_.entry_id(nid, i), out[i], nid, StrCat("output ", i)) || changed;
    }
    return changed;
  }

  // Errors of the op already name the node; anything else gets the node added.
  void CallInfer(const NodeAttrs& attrs, std::vector<Value>* in, std::vector<Value>* out) const {
    try {
      (*finfer_)[attrs.op](attrs, in, out);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& err) {
      throw Error(
          StrCat(NodeDesc(attrs), ": ", Traits::kKey, " inference failed: ", detail::CleanDmlcMessage(err.what())));
    }
  }

  /*! \brief Merges `value` into entry `eid`; `what` says where the value came from. */
  bool Refine(uint32_t eid, const Value& value, uint32_t nid, const std::string& what) {
    Value merged;
    IR_CHECK(Traits::Merge(values_[eid], value, &merged))
        << NodeDesc(idx_[nid].source->attrs) << ": inferred " << Traits::kKey << " " << Traits::Str(value) << " for "
        << what << " contradicts " << Traits::Str(values_[eid]) << " known before";
    if (merged == values_[eid]) return false;
    values_[eid] = merged;
    return true;
  }

  bool NodeKnown(uint32_t nid) const {
    for (const IndexedGraph::Entry& e : idx_[nid].inputs) {
      if (!Traits::IsKnown(values_[idx_.entry_id(e)])) return false;
    }
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
      if (!Traits::IsKnown(values_[idx_.entry_id(nid, i)])) return false;
    }
    return true;
  }

  const IndexedGraph& idx_;
  const OpMap<FInfer>* finfer_;
  std::vector<Value> values_;
};

template <typename Traits>
Graph Infer(Graph graph) {
  FixedPointInference<Traits> inference(graph);
  inference.Run();
  inference.Publish(&graph);
  return graph;
}

}  // namespace

IR_REGISTER_GRAPH_ATTR("shape_inputs")
    .describe(
        "Option of InferShape: known shapes of the graph inputs, aligned with "
        "IndexedGraph::input_nodes() (unknown rank where not known).")
    .set_type<ShapeVector>();
IR_REGISTER_GRAPH_ATTR("shape_num_unknown_nodes")
    .describe("Number of nodes with an output whose shape InferShape left (partly) unknown.")
    .set_type<int>();
IR_REGISTER_GRAPH_ATTR("shape_unknown_nodes")
    .describe("Up to 10 of the nodes counted by shape_num_unknown_nodes, with their unknown outputs.")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("dtype_inputs")
    .describe(
        "Option of InferType: known dtypes of the graph inputs, aligned with "
        "IndexedGraph::input_nodes() (unknown where not known).")
    .set_type<DTypeVector>();
IR_REGISTER_GRAPH_ATTR("dtype_num_unknown_nodes")
    .describe("Number of nodes with an output whose dtype InferType left unknown.")
    .set_type<int>();
IR_REGISTER_GRAPH_ATTR("dtype_unknown_nodes")
    .describe("Up to 10 of the nodes counted by dtype_num_unknown_nodes, with their unknown outputs.")
    .set_type<std::vector<std::string>>();

IR_REGISTER_PASS(InferShape)
    .describe(
        "Infers the shape of every entry from shape_inputs, __shape__ hints and the ops' "
        "FInferShape; partially known shapes are kept and reported.")
    .set_body(Infer<InferShapeTraits>)
    .depend_op_attr("FInferShape")
    .provide_graph_attr("shape")
    .provide_graph_attr("shape_num_unknown_nodes")
    .provide_graph_attr("shape_unknown_nodes");

IR_REGISTER_PASS(InferType)
    .describe(
        "Infers the dtype of every entry from dtype_inputs, __dtype__ hints and the ops' "
        "FInferType; unknown dtypes are kept and reported.")
    .set_body(Infer<InferTypeTraits>)
    .depend_op_attr("FInferType")
    .provide_graph_attr("dtype")
    .provide_graph_attr("dtype_num_unknown_nodes")
    .provide_graph_attr("dtype_unknown_nodes");

}  // namespace ir
