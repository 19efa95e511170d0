/*!
 * \file fold_constants.cc
 * \brief FoldConstants: evaluates what is known before the graph runs (values computed from
 * constants, or from shapes that are already known) and binds it into the graph as constants.
 *
 * Frontends produce such subgraphs all the time: TensorFlow computes reshape targets, tile
 * multiples and gradient reduction axes from Shape at run time. Once shapes are inferred they
 * are constants; folding them lets later passes treat the ops that consume them like any other.
 * The pass copies the nodes it keeps: the caller's nodes may be shared with other graphs.
 * Ops that simplify once inputs are known (FInlineConstantInputs: a cond with a constant
 * predicate) are replaced by what they return; the pass then infers the new nodes and folds again.
 */
#include "ir/fold_constants.h"

#include <cstring>
#include <map>
#include <unordered_map>

#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/op_kernel.h"
#include "ir/pass.h"

namespace ir {
namespace {

constexpr int kDefaultMaxBytes = 1 << 20;
/*!
 * \brief A shape-only op gets stand-in arrays for inputs it never reads (allocated, never
 * touched); inputs larger than this are not worth the address space, and the node stays.
 */
constexpr double kMaxStandInBytes = 256.0 * (1 << 20);

/*! \brief Bytes of a known shape, in floating point (products of huge extents must not overflow). */
double Bytes(const Shape& shape, DType dtype) {
  double bytes = static_cast<double>(DTypeSize(dtype));
  for (int64_t d : shape.dims()) bytes *= static_cast<double>(d);
  return bytes;
}

/*! \brief The graph's facts the folder reads, and what it learns per entry. */
class Folder {
 public:
  explicit Folder(const Graph& graph)
      : graph_(graph),
        idx_(graph.indexed_graph()),
        shapes_(graph.GetAttr<ShapeVector>("shape")),
        dtypes_(graph.GetAttr<DTypeVector>("dtype")),
        max_bytes_(GetPassOption<int>(graph, "fold_constants.max_bytes", kDefaultMaxBytes)),
        values_(idx_.num_node_entries()),
        folded_(idx_.num_nodes(), false),
        is_output_(idx_.num_nodes(), false),
        effect_free_(idx_.num_nodes(), false) {
    for (const IndexedGraph::Entry& out : idx_.outputs()) is_output_[out.node_id] = true;
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) effect_free_[nid] = ComputeEffectFree(nid);
  }

  /*! \brief Evaluates every foldable node in topological order; returns how many. */
  int Evaluate() {
    int count = 0;
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      if (!CanFold(nid)) continue;
      EvaluateNode(nid);
      folded_[nid] = true;
      ++count;
    }
    return count;
  }

  /*!
   * \brief A copy of the graph where folded nodes that have inputs became constants and nodes
   * that simplify given their known inputs (FInlineConstantInputs) were replaced; counts those.
   */
  Graph Rewrite(int* num_inlined) const;
  /*! \brief Whether some node's op may simplify given known inputs (then Rewrite is worth a try). */
  bool MayInline() const;

 private:
  bool IsConstantOp(uint32_t nid) const {
    const Node* node = idx_[nid].source;
    return !node->is_variable() && node->op()->name == "constant" && DepsEffectFree(nid);
  }
  /*!
   * \brief Running the node and everything it needs changes no state: no stateful or mutating
   * op among it, its inputs and its control dependencies, transitively (variables are read only).
   */
  bool ComputeEffectFree(uint32_t nid) const;
  /*!
   * \brief Every control dependency of the node is effect-free, so replacing the node by its value
   * loses nothing (TensorFlow puts no-op asserts such as static_scalar_check_success there).
   */
  bool DepsEffectFree(uint32_t nid) const {
    for (uint32_t dep : idx_[nid].control_deps) {
      if (!effect_free_[dep]) return false;
    }
    return true;
  }
  /*! \brief Known before running: a constant, or a node this pass evaluated. */
  bool IsKnown(uint32_t nid) const { return folded_[nid] || IsConstantOp(nid); }
  /*!
   * \brief A folded node with inputs is replaced. One without inputs (fill, range) is as cheap as
   * a constant and keeps its codegen, unless it is a graph output: then its value is what the
   * caller asked for.
   */
  bool IsReplaced(uint32_t nid) const { return folded_[nid] && (!idx_[nid].inputs.empty() || is_output_[nid]); }

  bool CanFold(uint32_t nid) const;
  bool OutputsFit(uint32_t nid) const;
  void EvaluateNode(uint32_t nid);
  NDArray Value(uint32_t nid, uint32_t index);
  /*! \brief The value of an entry known before running, else an undefined array. */
  NDArray KnownValue(const IndexedGraph::Entry& e) const;

  const Graph& graph_;
  const IndexedGraph& idx_;
  const ShapeVector& shapes_;
  const DTypeVector& dtypes_;
  int max_bytes_;
  std::vector<NDArray> values_;
  std::vector<bool> folded_;
  std::vector<bool> is_output_;
  std::vector<bool> effect_free_;
};

/*! \brief True when `op` has effects beyond its outputs (TIsStateful, or it mutates inputs). */
bool HasEffects(const Op* op) {
  const auto* stateful = Op::FindAttr<TIsStateful>("TIsStateful");
  const auto* mutates = Op::FindAttr<FMutateInputs>("FMutateInputs");
  return (stateful != nullptr && stateful->get(op, false)) || (mutates != nullptr && mutates->count(op));
}

bool Folder::ComputeEffectFree(uint32_t nid) const {
  const Node* node = idx_[nid].source;
  if (node->is_variable()) return true;
  if (HasEffects(node->op())) return false;
  const auto* may_raise = Op::FindAttr<TMayRaise>("TMayRaise");
  bool raises = may_raise != nullptr && may_raise->get(node->op(), false);
  for (const IndexedGraph::Entry& in : idx_[nid].inputs) {
    // A check of values known only at run time is an effect: what waits for it must wait.
    if (!effect_free_[in.node_id] || (raises && !IsConstantOp(in.node_id))) return false;
  }
  return DepsEffectFree(nid);
}

bool Folder::OutputsFit(uint32_t nid) const {
  for (uint32_t j = 0; j < idx_.num_outputs(nid); ++j) {
    uint32_t eid = idx_.entry_id(nid, j);
    if (!shapes_[eid].is_known() || dtypes_[eid] == DType::kUnknown) return false;
    if (Bytes(shapes_[eid], dtypes_[eid]) > max_bytes_) return false;
  }
  return true;
}

bool Folder::CanFold(uint32_t nid) const {
  const Node* node = idx_[nid].source;
  if (node->is_variable() || node->op()->name == "constant" || !DepsEffectFree(nid)) return false;
  const Op* op = node->op();
  const auto* kernels = Op::FindAttr<FCompute>(FComputeKey(DeviceType::kCPU));
  const auto* shape_only = Op::FindAttr<TShapeOnly>("TShapeOnly");
  if (kernels == nullptr || !kernels->count(op) || HasEffects(op)) return false;
  if (!OutputsFit(nid)) return false;
  bool reads_shapes_only = shape_only != nullptr && shape_only->get(op, false);
  for (const IndexedGraph::Entry& in : idx_[nid].inputs) {
    uint32_t eid = idx_.entry_id(in);
    bool shape_known = shapes_[eid].is_known() && dtypes_[eid] != DType::kUnknown &&
                       Bytes(shapes_[eid], dtypes_[eid]) <= kMaxStandInBytes;
    if (!(IsKnown(in.node_id) || (reads_shapes_only && shape_known))) return false;
  }
  return true;
}

NDArray Folder::Value(uint32_t nid, uint32_t index) {
  uint32_t eid = idx_.entry_id(nid, index);
  if (!values_[eid].defined() && IsConstantOp(nid)) values_[eid] = ConstantNodeValue(*idx_[nid].source);
  return values_[eid];
}

void Folder::EvaluateNode(uint32_t nid) {
  const Node* node = idx_[nid].source;
  std::vector<NDArray> in, out;
  for (const IndexedGraph::Entry& e : idx_[nid].inputs) {
    uint32_t eid = idx_.entry_id(e);
    // A shape-only op never reads the elements: an unfilled array of the right shape will do.
    in.push_back(IsKnown(e.node_id) ? Value(e.node_id, e.index) : NDArray(shapes_[eid], dtypes_[eid]));
  }
  for (uint32_t j = 0; j < idx_.num_outputs(nid); ++j) {
    uint32_t eid = idx_.entry_id(nid, j);
    out.emplace_back(shapes_[eid], dtypes_[eid]);
  }
  Op::GetAttr<FCompute>(FComputeKey(DeviceType::kCPU))[node->op()](OpContext(), node->attrs, in, out);
  for (uint32_t j = 0; j < out.size(); ++j) values_[idx_.entry_id(nid, j)] = out[j];
}

const OpMap<FInlineConstantInputs>* Inliners() { return Op::FindAttr<FInlineConstantInputs>("FInlineConstantInputs"); }

bool Folder::MayInline() const {
  const auto* inliners = Inliners();
  if (inliners == nullptr) return false;
  for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
    if (!idx_[nid].source->is_variable() && inliners->count(idx_[nid].source->op())) return true;
  }
  return false;
}

NDArray Folder::KnownValue(const IndexedGraph::Entry& e) const {
  if (folded_[e.node_id]) return values_[idx_.entry_id(e)];
  return IsConstantOp(e.node_id) ? ConstantNodeValue(*idx_[e.node_id].source) : NDArray();
}

/*! \brief Where each node of the rewritten graph came from, for its shapes and dtypes. */
struct Origin {
  uint32_t old_nid = 0;
  /*! \brief Set for a constant that replaced an entry. */
  NDArray value;
};

/*! \brief Entry-indexed shapes and dtypes of the rewritten graph. */
void ProvideShapes(const Graph& old_graph, const std::unordered_map<const Node*, Origin>& origin, Graph* result) {
  const IndexedGraph& old_idx = old_graph.indexed_graph();
  const ShapeVector& old_shapes = old_graph.GetAttr<ShapeVector>("shape");
  const DTypeVector& old_dtypes = old_graph.GetAttr<DTypeVector>("dtype");
  const IndexedGraph& idx = result->indexed_graph();
  ShapeVector shapes(idx.num_node_entries());
  DTypeVector dtypes(idx.num_node_entries(), DType::kUnknown);  // DType() is float32, not unknown
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    auto it = origin.find(idx[nid].source);
    if (it == origin.end()) continue;  // made by an inliner: inferred afterwards
    const Origin& from = it->second;
    for (uint32_t j = 0; j < idx.num_outputs(nid); ++j) {
      uint32_t eid = idx.entry_id(nid, j);
      if (from.value.defined()) {
        shapes[eid] = from.value.shape();
        dtypes[eid] = from.value.dtype();
      } else {
        shapes[eid] = old_shapes[old_idx.entry_id(from.old_nid, j)];
        dtypes[eid] = old_dtypes[old_idx.entry_id(from.old_nid, j)];
      }
    }
  }
  result->SetAttr("shape", std::move(shapes));
  result->SetAttr("dtype", std::move(dtypes));
}

/*!
 * \brief Keeps an input-aligned vector attribute ("shape_inputs") aligned after inputs vanish;
 * an input new to the graph gets `unknown` (DType() would be float32).
 */
template <typename T>
void RealignInputs(const Graph& old_graph, const std::vector<NodePtr>& copies, const std::string& key, const T& unknown,
                   Graph* result) {
  if (!old_graph.HasAttr(key)) return;
  const std::vector<T>& old_values = old_graph.GetAttr<std::vector<T>>(key);
  const IndexedGraph& old_idx = old_graph.indexed_graph();
  if (old_values.size() != old_idx.input_nodes().size()) return;
  std::unordered_map<const Node*, T> by_node;
  for (size_t k = 0; k < old_values.size(); ++k) by_node[copies[old_idx.input_nodes()[k]].get()] = old_values[k];
  std::vector<T> values;
  for (uint32_t nid : result->indexed_graph().input_nodes()) {
    auto it = by_node.find(result->indexed_graph()[nid].source);  // absent: a variable an inlined body mutates
    values.push_back(it == by_node.end() ? unknown : it->second);
  }
  result->SetAttr(key, std::move(values));
}

Graph Folder::Rewrite(int* num_inlined) const {
  std::vector<NodePtr> copies(idx_.num_nodes());
  std::unordered_map<const Node*, Origin> origin;
  std::map<std::pair<uint32_t, uint32_t>, NodeEntry> constants;
  std::unordered_map<uint32_t, std::vector<NodeEntry>> inlined;
  const auto* inliners = Inliners();
  auto entry_for = [&](const IndexedGraph::Entry& e) -> NodeEntry {
    auto in = inlined.find(e.node_id);
    if (in != inlined.end()) return in->second.at(e.index);
    if (!IsReplaced(e.node_id)) return NodeEntry{copies[e.node_id], e.index};
    NodeEntry& c = constants[{e.node_id, e.index}];
    if (c.node == nullptr) {
      const std::string& name = idx_[e.node_id].source->attrs.name;
      NDArray value = values_[idx_.entry_id(e)];
      c = MakeConstantNode(e.index == 0 ? name : StrCat(name, ":", e.index), value);
      origin[c.node.get()] = Origin{0, value};
    }
    return c;
  };
  for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
    if (IsReplaced(nid)) continue;
    NodePtr copy = Node::Create();
    copy->attrs = idx_[nid].source->attrs;
    for (const IndexedGraph::Entry& in : idx_[nid].inputs) copy->inputs.push_back(entry_for(in));
    // A replaced node had no effects and depended on none: ordering after it is moot.
    for (uint32_t dep : idx_[nid].control_deps) {
      if (!IsReplaced(dep)) copy->control_deps.push_back(copies[dep]);
    }
    origin[copy.get()] = Origin{nid, NDArray()};
    copies[nid] = copy;
    if (inliners == nullptr || !inliners->count(copy->op())) continue;
    std::vector<NDArray> known;
    for (const IndexedGraph::Entry& in : idx_[nid].inputs) known.push_back(KnownValue(in));
    std::vector<NodeEntry> outputs = (*inliners)[copy->op()](copy, known);
    if (outputs.empty()) continue;
    IR_CHECK(outputs.size() == idx_.num_outputs(nid))
        << NodeDesc(copy->attrs) << ": FInlineConstantInputs returned " << outputs.size() << " entries for "
        << idx_.num_outputs(nid) << " outputs";
    inlined[nid] = std::move(outputs);
    ++*num_inlined;
  }
  Graph result;
  for (const IndexedGraph::Entry& out : idx_.outputs()) result.outputs.push_back(entry_for(out));
  result.attrs = graph_.attrs;
  ProvideShapes(graph_, origin, &result);
  RealignInputs<Shape>(graph_, copies, "shape_inputs", Shape(), &result);
  RealignInputs<DType>(graph_, copies, "dtype_inputs", DType::kUnknown, &result);
  return result;
}

Graph FoldConstants(Graph graph) {
  Folder folder(graph);
  int count = folder.Evaluate(), num_inlined = 0;
  if (count == 0 && !folder.MayInline()) {
    graph.SetAttr("fold_constants.num_folded", 0);
    return graph;
  }
  Graph result = folder.Rewrite(&num_inlined);
  if (num_inlined > 0) {  // the inlined nodes need shapes, and may fold further
    result = FoldConstants(ApplyPasses(std::move(result), {"InferShape", "InferType"}));
    count += result.GetAttr<int>("fold_constants.num_folded");
  }
  result.SetAttr("fold_constants.num_folded", count);
  return result;
}

}  // namespace

IR_REGISTER_PASS(FoldConstants)
    .describe(
        "Evaluates nodes whose inputs are constants, or whose op reads only known input "
        "shapes (TShapeOnly), with their CPU kernels, and replaces them by constants.")
    .set_change_graph(true)
    .set_body(FoldConstants)
    .depend_graph_attr("shape")
    .depend_graph_attr("dtype")
    .provide_graph_attr("shape")
    .provide_graph_attr("dtype")
    .provide_graph_attr("fold_constants.num_folded");

}  // namespace ir
