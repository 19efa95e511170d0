/*!
 * \file gradient.cc
 * \brief Gradient: reverse-mode differentiation through the ops' FGradient (Gradients(), in
 * src/core/autodiff.cc, runs it by name).
 *
 * Only nodes on a path from some x to some y are differentiated, in reverse topological
 * order; an entry that receives several gradient contributions gets them summed by the
 * aggregate op once, and that sum is what flows on (and what an x that is also an inner
 * entry returns). The forward graph is differentiated as written: no rewrite rule runs here
 * (they run when a session binds the graph, so SessionOptions::simplify decides them all).
 */
#include "ir/autodiff.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/json_util.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"

namespace ir {

namespace {

constexpr const char* kYsKey = "grad_ys";
constexpr const char* kXsKey = "grad_xs";
constexpr const char* kHeadsKey = "grad_ys_out_grad";
constexpr const char* kAggregateKey = "grad.aggregate_op";
constexpr const char* kZeroKey = "grad.zero_op";
constexpr const char* kOnesKey = "grad.ones_op";
constexpr const char* kStopKey = "grad.stop_nodes";

GradientOptions ReadOptions(const Graph& graph) {
  GradientOptions options;
  options.aggregate_op = GetPassOption<std::string>(graph, kAggregateKey, options.aggregate_op);
  options.zero_op = GetPassOption<std::string>(graph, kZeroKey, options.zero_op);
  options.ones_op = GetPassOption<std::string>(graph, kOnesKey, options.ones_op);
  return options;
}

/*! \brief "name" for a single-output node, else "name_output<i>" (as Symbol names outputs). */
std::string EntryName(const NodeEntry& e) {
  if (e.node->num_outputs() == 1) return e.node->attrs.name;
  return StrCat(e.node->attrs.name, "_output", e.index);
}

/*! \brief A node of the op an option names; the error names the option when it is unknown. */
NodeEntry OptionNode(const char* key, const std::string& op_name, const std::string& node_name,
                     std::vector<NodeEntry> inputs) {
  const Op* op = Op::Find(op_name);
  IR_CHECK(op != nullptr) << "option '" << key << "' names op '" << op_name << "', which is not registered";
  return NodeEntry{Node::Create(op, node_name, {}, std::move(inputs)), 0};
}

void CheckEntries(const std::vector<NodeEntry>& entries, const char* key) {
  for (size_t i = 0; i < entries.size(); ++i) {
    IR_CHECK(entries[i].node != nullptr) << "graph attribute '" << key << "' has a null entry at position " << i;
    IR_CHECK(entries[i].index < entries[i].node->num_outputs())
        << "graph attribute '" << key << "': entry " << i << " is output " << entries[i].index << " of "
        << NodeDesc(entries[i].node->attrs) << ", which has " << entries[i].node->num_outputs() << " outputs";
  }
}

/*!
 * \brief Collects gradient contributions per entry of the graph the ys depend on while
 * walking it backwards, and sums them on first use.
 */
class ReverseAccumulator {
 public:
  ReverseAccumulator(const std::vector<NodeEntry>& ys, const std::vector<NodeEntry>& xs, GradientOptions options,
                     const std::vector<NodeEntry>& stops = {})
      : forward_(ys),
        idx_(forward_.indexed_graph()),
        options_(std::move(options)),
        depends_(idx_.num_node_entries(), false),
        grads_(idx_.num_node_entries()) {
    MarkEntriesDependingOn(xs, stops);
  }

  /*! \brief Gives each y that depends on some x its head gradient (ones like y when `heads` is empty). */
  void SeedHeads(const std::vector<NodeEntry>& ys, const std::vector<NodeEntry>& heads) {
    for (size_t i = 0; i < ys.size(); ++i) {
      uint32_t eid = idx_.entry_id(ys[i]);
      if (!depends_[eid]) continue;
      grads_[eid].push_back(
          heads.empty() ? OptionNode(kOnesKey, options_.ones_op, EntryName(ys[i]) + "_head_grad", {ys[i]}) : heads[i]);
    }
  }

  /*! \brief Differentiates, in reverse topological order, every node on a path that gradient reaches. */
  void Backward() {
    const OpMap<FGradient>* fgradient = Op::FindAttr<FGradient>("FGradient");
    for (uint32_t nid = static_cast<uint32_t>(idx_.num_nodes()); nid-- > 0;) {
      const NodeAttrs& attrs = idx_[nid].source->attrs;
      if (attrs.op == nullptr || !InputsDepend(nid) || !ReceivesGradient(nid)) continue;
      if (idx_.num_outputs(nid) > 0 && stopped_[idx_.entry_id(nid, 0)]) continue;  // a stop: no gradient through
      IR_CHECK(fgradient != nullptr && fgradient->count(attrs.op))
          << "cannot differentiate through " << NodeDesc(attrs) << ": the op registers no gradient (FGradient)";
      NodePtr node = idx_[nid].weak_ref.lock();
      std::vector<NodeEntry> input_grads = CallGradient((*fgradient)[attrs.op], node, OutputGradients(nid, node));
      IR_CHECK(input_grads.size() == node->inputs.size())
          << NodeDesc(attrs) << ": FGradient returned " << input_grads.size() << " gradients for "
          << node->inputs.size() << " inputs";
      for (size_t i = 0; i < input_grads.size(); ++i) {
        uint32_t eid = idx_.entry_id(idx_[nid].inputs[i]);
        // A null node means a zero gradient; inputs no x flows into need none.
        if (input_grads[i].node == nullptr || !depends_[eid]) continue;
        grads_[eid].push_back(input_grads[i]);
      }
    }
  }

  /*! \brief The total gradient of `x`, or zeros like x when no gradient reached it. */
  NodeEntry GradientOf(const NodeEntry& x) {
    if (!idx_.has_node(x.node.get()) || grads_[idx_.entry_id(x)].empty()) {
      return OptionNode(kZeroKey, options_.zero_op, EntryName(x) + "_zero_grad", {x});
    }
    return Total(x);
  }

 private:
  /*! \brief Marks the xs and what is computed from them, except through `stops` (constants to the gradient). */
  void MarkEntriesDependingOn(const std::vector<NodeEntry>& xs, const std::vector<NodeEntry>& stops) {
    std::vector<bool>& stopped = stopped_;
    stopped.assign(idx_.num_node_entries(), false);
    for (const NodeEntry& s : stops) {
      if (idx_.has_node(s.node.get())) stopped[idx_.entry_id(s)] = true;
    }
    for (const NodeEntry& x : xs) {
      if (idx_.has_node(x.node.get())) depends_[idx_.entry_id(x)] = true;
    }
    for (uint32_t nid = 0; nid < idx_.num_nodes(); ++nid) {
      if (idx_[nid].source->is_variable() || !InputsDepend(nid)) continue;
      for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
        uint32_t eid = idx_.entry_id(nid, i);
        depends_[eid] = depends_[eid] || !stopped[eid];
      }
    }
  }

  bool InputsDepend(uint32_t nid) const {
    for (const IndexedGraph::Entry& e : idx_[nid].inputs) {
      if (depends_[idx_.entry_id(e)]) return true;
    }
    return false;
  }

  bool ReceivesGradient(uint32_t nid) const {
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
      if (!grads_[idx_.entry_id(nid, i)].empty()) return true;
    }
    return false;
  }

  /*! \brief The sum of the contributions to `e` (built once, then reused). */
  NodeEntry Total(const NodeEntry& e) {
    std::vector<NodeEntry>& contributions = grads_[idx_.entry_id(e)];
    if (contributions.size() > 1) {
      NodeEntry sum =
          OptionNode(kAggregateKey, options_.aggregate_op, EntryName(e) + "_grad_sum", std::move(contributions));
      contributions = {sum};
    }
    return contributions[0];
  }

  // Outputs that received no gradient (other outputs of a multi-output node) get zeros.
  std::vector<NodeEntry> OutputGradients(uint32_t nid, const NodePtr& node) {
    std::vector<NodeEntry> ograds;
    for (uint32_t i = 0; i < idx_.num_outputs(nid); ++i) {
      NodeEntry out{node, i};
      bool none = grads_[idx_.entry_id(nid, i)].empty();
      ograds.push_back(none ? OptionNode(kZeroKey, options_.zero_op, EntryName(out) + "_zero_grad", {out})
                            : Total(out));
    }
    return ograds;
  }

  // Errors of the op already name the node; anything else gets the node added.
  static std::vector<NodeEntry> CallGradient(const FGradient& fgradient, const NodePtr& node,
                                             const std::vector<NodeEntry>& ograds) {
    try {
      return fgradient(node, ograds);
    } catch (const Error&) {
      throw;
    } catch (const std::exception& err) {
      throw Error(
          StrCat(NodeDesc(node->attrs), ": building the gradient failed: ", detail::CleanDmlcMessage(err.what())));
    }
  }

  /*! \brief The graph of the ys: its numbering indexes the bookkeeping below. */
  Graph forward_;
  const IndexedGraph& idx_;
  GradientOptions options_;
  /*! \brief Per entry: is it an x or computed from one. */
  std::vector<bool> depends_;
  /*! \brief Per entry: a stop node's output (the gradient does not flow through it). */
  std::vector<bool> stopped_;
  /*! \brief Per entry: the gradient contributions received so far. */
  std::vector<std::vector<NodeEntry>> grads_;
};

Graph GradientPass(Graph src) {
  std::vector<NodeEntry> ys = src.GetAttrOr<std::vector<NodeEntry>>(kYsKey, src.outputs);
  const auto& xs = src.GetAttr<std::vector<NodeEntry>>(kXsKey);
  std::vector<NodeEntry> heads = src.GetAttrOr<std::vector<NodeEntry>>(kHeadsKey, {});
  IR_CHECK(!ys.empty()) << "nothing to differentiate: '" << kYsKey << "' (default: the graph outputs) is empty";
  IR_CHECK(!xs.empty()) << "graph attribute '" << kXsKey << "' is empty: nothing to differentiate with respect to";
  IR_CHECK(!src.HasAttr(kHeadsKey) || heads.size() == ys.size())
      << "graph attribute '" << kHeadsKey << "' has " << heads.size() << " head gradients for " << ys.size() << " ys";
  CheckEntries(ys, kYsKey);
  CheckEntries(xs, kXsKey);
  CheckEntries(heads, kHeadsKey);
  // Stop nodes (tf.gradients' stop_gradients, by name): every output is a constant to the gradient.
  std::vector<NodeEntry> stops;
  std::vector<std::string> stop_names = src.GetAttrOr<std::vector<std::string>>(kStopKey, {});
  if (!stop_names.empty()) {
    std::set<std::string> wanted(stop_names.begin(), stop_names.end());
    PostOrderDFSVisit(ys, [&](const NodePtr& node) {
      if (!wanted.count(node->attrs.name)) return;
      for (uint32_t i = 0; i < node->num_outputs(); ++i) stops.push_back(NodeEntry{node, i});
    });
  }
  ReverseAccumulator accumulator(ys, xs, ReadOptions(src), stops);
  accumulator.SeedHeads(ys, heads);
  accumulator.Backward();
  std::vector<NodeEntry> grads;
  for (const NodeEntry& x : xs) grads.push_back(accumulator.GradientOf(x));

  // The inputs described the forward graph; leaving them would make a second Gradient
  // differentiate that graph again instead of this one.
  Graph result(std::move(grads));
  result.attrs = src.attrs;
  for (const char* key : {kYsKey, kXsKey, kHeadsKey}) result.attrs.erase(key);
  return result;
}

}  // namespace

IR_REGISTER_GRAPH_ATTR("grad_ys")
    .describe("Input of Gradient: the entries to differentiate (default: the graph outputs).")
    .set_type<std::vector<NodeEntry>>();
IR_REGISTER_GRAPH_ATTR("grad_xs")
    .describe("Input of Gradient: the entries to differentiate with respect to, one output each.")
    .set_type<std::vector<NodeEntry>>();
IR_REGISTER_GRAPH_ATTR("grad_ys_out_grad")
    .describe("Input of Gradient: head gradients, one per y (default: ones like each y).")
    .set_type<std::vector<NodeEntry>>();
IR_REGISTER_GRAPH_ATTR("grad.aggregate_op")
    .describe("Option of Gradient: variadic op summing several gradient contributions (default add_n).")
    .set_type<std::string>();
IR_REGISTER_GRAPH_ATTR("grad.zero_op")
    .describe("Option of Gradient: op giving zeros like its input, for absent gradients (default zeros_like).")
    .set_type<std::string>();
IR_REGISTER_GRAPH_ATTR("grad.ones_op")
    .describe("Option of Gradient: op giving ones like its input, the default head gradient (default ones_like).")
    .set_type<std::string>();

IR_REGISTER_GRAPH_ATTR("grad.stop_nodes")
    .describe("Option of Gradient: names of nodes whose outputs the gradient treats as constants (stop_gradients).")
    .set_type<std::vector<std::string>>();

IR_REGISTER_PASS(Gradient)
    .describe(
        "Reverse-mode differentiation: replaces the outputs by the gradients of grad_ys "
        "with respect to grad_xs, built from the ops' FGradient.")
    .set_body(GradientPass)
    .set_change_graph(true)
    .depend_graph_attr("grad_xs");

}  // namespace ir
