/*!
 * \file simplify.cc
 * \brief Simplify: merges equal subexpressions and applies the rewrite rules (the files in rules/,
 * user files, op libraries' rules) to a fixed point.
 *
 * Each round infers shapes and types, then walks the graph in topological order building the
 * new graph bottom up: a node whose inputs changed is copied, equal nodes are merged (hash
 * consing), and the rules whose root op is the node's are tried on it until none fires, so a
 * pattern always sees simplified inputs. Rounds repeat until one fires nothing. Rules lower a
 * cost order (CheckRules), so this terminates; a rule that may grow the graph (`why:`) never
 * fires on what such a rule built. The order of rules and nodes is fixed: the result is
 * deterministic. The options (simplify.* graph attributes) are read in simplify_options.cc.
 */
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/fold_constants.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"
#include "ir/pass.h"
#include "ir/rewrite.h"
#include "passes/merge_subsumed.h"

namespace ir {
namespace rewrite {

bool OpActs(const Node& n) {
  static const auto* stateful = Op::FindAttr<TIsStateful>("TIsStateful");
  static const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  static const auto* raises = Op::FindAttr<TMayRaise>("TMayRaise");
  return (stateful != nullptr && stateful->get(n.op(), false)) || (mutate != nullptr && mutate->count(n.op())) ||
         (raises != nullptr && raises->get(n.op(), false));
}

namespace {

constexpr int kMaxRounds = 16;
/*! \brief Rewrites at one value before giving up: only a rule set with a cycle gets there. */
constexpr int kMaxLocalRewrites = 64;

/*! \brief A rule ready to apply. */
struct ActiveRule {
  Rule rule;
  std::set<std::string> commutative;
  bool grows = false;
  bool explain = false;
};

/*! \brief Attribute text normalized for comparison: "True" and "1", "(1,)" and "[1]" compare equal. */
std::string NormalizeAttr(std::string v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](char c) { return c == ' ' || c == '\'' || c == '"'; }), v.end());
  if (v == "true" || v == "True") return "1";
  if (v == "false" || v == "False") return "0";
  while (v.size() >= 2 && (v.front() == '(' || v.front() == '[')) v = v.substr(1, v.size() - 2);
  if (!v.empty() && v.back() == ',') v.pop_back();
  return v;
}

bool AttrEqual(const std::string& a, const std::string& b) {
  std::string x = NormalizeAttr(a), y = NormalizeAttr(b);
  if (x == y) return true;
  char *ex = nullptr, *ey = nullptr;
  double dx = std::strtod(x.c_str(), &ex), dy = std::strtod(y.c_str(), &ey);
  return !x.empty() && !y.empty() && *ex == '\0' && *ey == '\0' && dx == dy;
}

/*! \brief The attribute as the node has it, else the op's documented default ("" when none). */
std::string AttrOf(const Node& node, const std::string& key) {
  auto it = node.attrs.dict.find(key);
  if (it != node.attrs.dict.end()) return it->second;
  for (const ArgumentInfo& arg : node.op()->arguments) {
    size_t at = arg.name == key ? arg.type.find("default=") : std::string::npos;
    if (at == std::string::npos) continue;
    std::string value = arg.type.substr(at + 8);
    if (value.size() >= 2 && value.front() == '\'' && value.back() == '\'') value = value.substr(1, value.size() - 2);
    return value;
  }
  return "";
}

bool SameValue(double a, double b) { return a == b && std::signbit(a) == std::signbit(b); }

/*! \brief Whether `e` is a constant every element of which is `v` (+0 and -0 differ). */
bool IsSplat(const NodeEntry& e, double v) {
  const Node& n = *e.node;
  if (n.is_variable()) return false;
  const std::string& op = n.op()->name;
  if (op == "zeros" || op == "zeros_like") return SameValue(v, 0.0);
  if (op == "ones" || op == "ones_like") return SameValue(v, 1.0);
  if (op == "fill") return SameValue(v, std::strtod(AttrOf(n, "value").c_str(), nullptr));
  if (op != "constant") return false;
  NDArray value = ConstantNodeValue(n);
  if (!value.defined() || !value.shape().is_known() || value.Size() == 0 || value.Size() > (1 << 20)) return false;
  auto all = [&](auto values) {
    return std::all_of(values.begin(), values.end(), [&](auto x) { return SameValue(static_cast<double>(x), v); });
  };
  switch (value.dtype()) {
    case DType::kFloat32:
      return all(value.ToVector<float>());
    case DType::kFloat64:
      return all(value.ToVector<double>());
    case DType::kInt32:
      return all(value.ToVector<int32_t>());
    case DType::kInt64:
      return all(value.ToVector<int64_t>());
    default:
      return false;
  }
}

/*! \brief What the pass knows of each value: per node, its outputs' shapes, dtypes and uses. */
struct Info {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  std::vector<int> uses;
};

/*! \brief `graph`'s attributes less those indexed by node or entry (stale once nodes change). */
std::map<std::string, std::shared_ptr<dmlc::any>> GraphLevelAttrs(const Graph& graph) {
  auto attrs = graph.attrs;
  for (auto it = attrs.begin(); it != attrs.end();) {
    const GraphAttrInfo* info = GraphAttrInfo::Find(it->first);
    it = info != nullptr && info->index != AttrIndex::kGraph ? attrs.erase(it) : std::next(it);
  }
  return attrs;
}

/*! \brief `values` (aligned with `before`'s inputs) realigned with `after`'s inputs. */
template <typename T>
std::vector<T> Realign(const IndexedGraph& before, const IndexedGraph& after, const std::vector<T>& values,
                       const T& unknown) {
  std::unordered_map<const Node*, T> by_node;
  for (size_t i = 0; i < before.input_nodes().size() && i < values.size(); ++i) {
    by_node[before[before.input_nodes()[i]].source] = values[i];
  }
  std::vector<T> out;
  for (uint32_t nid : after.input_nodes()) {
    auto it = by_node.find(after[nid].source);
    out.push_back(it == by_node.end() ? unknown : it->second);
  }
  return out;
}

/*! \brief `to` gets `from`'s shape_inputs and dtype_inputs, realigned with its own inputs. */
void CarryInputAttrs(const Graph& from, Graph* to) {
  const IndexedGraph& before = from.indexed_graph();
  const IndexedGraph& after = to->indexed_graph();
  if (from.HasAttr("shape_inputs")) {
    to->SetAttr("shape_inputs", Realign(before, after, from.GetAttr<ShapeVector>("shape_inputs"), Shape()));
  }
  if (from.HasAttr("dtype_inputs")) {
    to->SetAttr("dtype_inputs", Realign(before, after, from.GetAttr<DTypeVector>("dtype_inputs"), DType::kUnknown));
  }
}

/*! \brief `graph` with shape and dtype inferred (the passes' bodies: no timings or dumps of their own). */
Graph Infer(Graph graph) {
  static const PassReg& shape = PassReg::Get("InferShape");
  static const PassReg& type = PassReg::Get("InferType");
  return type.body(shape.body(std::move(graph)));
}

class Simplifier {
 public:
  Simplifier(const SimplifyOptions& options, const std::vector<NodeEntry>& protect) {
    std::vector<std::string> sets = options.sets.empty() ? ListRuleSets() : options.sets;
    std::set<std::string> disabled(options.disabled.begin(), options.disabled.end());
    std::set<std::string> explain(options.explain.begin(), options.explain.end());
    for (const std::string& set : sets) {
      const RuleFile& file = GetRuleSet(set);
      std::map<std::string, double> weights(file.weights.begin(), file.weights.end());
      for (const Rule& r : file.rules) {
        if (disabled.count(r.name) || !TagEnabled(r.tag, options)) continue;
        ActiveRule a{r, std::set<std::string>(file.commutative.begin(), file.commutative.end()), !r.why.empty(),
                     explain.count(r.name) != 0};
        by_op_[r.pattern.name].push_back(rules_.size());
        rules_.push_back(std::move(a));
        explain.erase(r.name);
      }
    }
    for (const std::string& name : explain) explained_.push_back(StrCat(name, ": no such active rule"));
    for (const NodeEntry& e : protect) protected_.insert(e.node.get());
  }

  SimplifyResult Run(const Graph& graph) {
    Graph current = graph;
    for (int round = 0; round < kMaxRounds; ++round) {
      size_t before = fired_.size();
      current = Round(current);
      if (fired_.size() == before) break;
    }
    return {current.outputs, fired_, explained_};
  }

 private:
  /*! \brief One bottom-up walk over `graph`; returns the rewritten graph (attributes kept). */
  Graph Round(const Graph& graph) {
    Graph clean(graph.outputs);
    clean.attrs = GraphLevelAttrs(graph);
    Graph inferred = Infer(clean);
    const IndexedGraph& idx = inferred.indexed_graph();
    const auto& shapes = inferred.GetAttr<ShapeVector>("shape");
    const auto& dtypes = inferred.GetAttr<DTypeVector>("dtype");
    const auto& refs = idx.entry_ref_counts();
    std::vector<NodeEntry> mapped(idx.num_node_entries());
    std::vector<NodePtr> node_map(idx.num_nodes());
    MarkEffects(idx);
    std::unordered_set<const Node*> control_targets;
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      for (uint32_t dep : idx[nid].control_deps) {
        if (effects_[dep]) control_targets.insert(idx[dep].source);
      }
    }
    cse_.clear();
    info_.clear();
    normalized_.clear();
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      NodePtr old = idx[nid].weak_ref.lock();
      Info info;
      for (uint32_t i = 0; i < idx.num_outputs(nid); ++i) {
        uint32_t eid = idx.entry_id(nid, i);
        info.shapes.push_back(shapes[eid]);
        info.dtypes.push_back(dtypes[eid]);
        info.uses.push_back(static_cast<int>(refs[eid]));
      }
      NodePtr node = old;
      if (!old->is_variable() && !protected_.count(old.get())) node = Rebuild(old, idx, mapped, node_map);
      node_map[nid] = node;
      info_[node.get()] = info;
      // A node others wait on is rewritten only when it has one output: they then wait on the
      // replacement (which computes, through its inputs, all the node computed).
      bool single = idx.num_outputs(nid) == 1;
      bool fixed = protected_.count(node.get()) || (control_targets.count(old.get()) && !single) || old->is_variable();
      for (uint32_t i = 0; i < idx.num_outputs(nid); ++i) {
        NodeEntry e{node, i};
        mapped[idx.entry_id(nid, i)] = fixed ? e : Normalized(e);
      }
      if (!fixed && single) node_map[nid] = mapped[idx.entry_id(nid, 0)].node;
    }
    Graph out;
    for (const auto& e : idx.outputs()) out.outputs.push_back(mapped[idx.entry_id(e)]);
    out.attrs = GraphLevelAttrs(graph);
    CarryInputAttrs(graph, &out);
    return out;
  }

  /*!
   * \brief effects_[nid]: node nid has a side effect or waits on one: it is stateful, mutates an
   * input, has bodies, or one of its inputs or control dependencies has effects. A node without
   * effects of its own waiting on one without effects (TF's gradient tuples: identities waiting
   * on a no_op grouping pure gradients) orders nothing observable, so Rebuild drops that wait;
   * a write waiting on a read (OrderMutations) keeps it.
   */
  /*! \brief Stateful, mutating, raising for some values (a check, TF's Assert), or with bodies. */
  static bool HasOwnEffect(const Node& n) { return !n.is_variable() && (OpActs(n) || !n.attrs.subgraphs.empty()); }

  void MarkEffects(const IndexedGraph& idx) {
    effects_.assign(idx.num_nodes(), false);
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      bool effects = HasOwnEffect(*idx[nid].source);
      for (const auto& e : idx[nid].inputs) effects = effects || effects_[e.node_id];
      for (uint32_t d : idx[nid].control_deps) effects = effects || effects_[d];
      effects_[nid] = effects;
    }
  }

  /*! \brief `old` with its inputs mapped; merged with an equal node seen before. */
  NodePtr Rebuild(const NodePtr& old, const IndexedGraph& idx, const std::vector<NodeEntry>& mapped,
                  const std::vector<NodePtr>& node_map) {
    std::vector<NodeEntry> inputs;
    bool changed = false;
    for (const auto& e : idx[old.get()].inputs) {
      inputs.push_back(mapped[idx.entry_id(e)]);
      changed = changed || inputs.back().node.get() != old->inputs[inputs.size() - 1].node.get();
    }
    std::vector<NodePtr> deps;
    bool acts = HasOwnEffect(*old);  // an effect (a write) waiting on a read must still wait
    for (uint32_t d : idx[old.get()].control_deps) {
      if (acts || effects_[d]) deps.push_back(node_map[d]);  // a pure node waiting on one: no order
    }
    changed = changed || deps.size() != old->control_deps.size() ||
              !std::equal(deps.begin(), deps.end(), old->control_deps.begin());
    NodePtr node = old;
    if (changed) {
      node = Node::Create();
      node->attrs = old->attrs;
      node->inputs = std::move(inputs);
      node->control_deps = std::move(deps);
    }
    return Merge(node);
  }

  /*! \brief Hash consing: the first node equal to `node` (same op, attributes, inputs, bodies). */
  NodePtr Merge(const NodePtr& node) {
    if (node->is_variable() || OpActs(*node) || protected_.count(node.get())) return node;
    std::string key = node->op()->name;
    for (const auto& kv : node->attrs.dict) key += StrCat("|", kv.first, "=", kv.second);
    for (const auto& s : node->attrs.subgraphs) key += StrCat("|s", reinterpret_cast<uintptr_t>(s.get()));
    for (const NodeEntry& e : node->inputs)
      key += StrCat("|i", reinterpret_cast<uintptr_t>(e.node.get()), ":", e.index);
    for (const NodePtr& d : node->control_deps) key += StrCat("|c", reinterpret_cast<uintptr_t>(d.get()));
    if (node->op()->name == "constant" && node->attrs.dict.count("value") == 0) {
      key += StrCat("|p", reinterpret_cast<uintptr_t>(node.get()));  // an array held in parsed attrs
    }
    auto inserted = cse_.emplace(key, node);
    return inserted.first->second;
  }

  /*! \brief Normalize, once per value and round (a node merged into an earlier one is done). */
  NodeEntry Normalized(const NodeEntry& e) {
    auto key = std::make_pair(e.node.get(), e.index);
    auto it = normalized_.find(key);
    if (it != normalized_.end()) return it->second;
    return normalized_[key] = Normalize(e);
  }

  /*! \brief Applies rules at `e` until none fires. */
  NodeEntry Normalize(NodeEntry e) {
    for (int step = 0; step < kMaxLocalRewrites; ++step) {
      auto it = by_op_.find(e.node->is_variable() ? "" : e.node->op()->name);
      if (it == by_op_.end()) return e;
      bool fired = false;
      for (size_t r : it->second) {
        NodeEntry replaced;
        if (TryRule(rules_[r], e, &replaced)) {
          e = replaced;
          fired = true;
          break;
        }
      }
      if (!fired) return e;
    }
    throw Error(StrCat("Simplify: rules keep rewriting the value at node '", e.node->attrs.name, "' (more than ",
                       kMaxLocalRewrites, " rewrites): the rule sets contain a cycle"));
  }

  Value ValueOf(const NodeEntry& e) const {
    Value v;
    v.entry = e;
    auto it = info_.find(e.node.get());
    if (it != info_.end() && e.index < it->second.shapes.size()) {
      v.shape = it->second.shapes[e.index];
      v.dtype = it->second.dtypes[e.index];
      v.uses = it->second.uses.empty() ? -1 : it->second.uses[e.index];
    }
    return v;
  }

  bool TryRule(const ActiveRule& a, const NodeEntry& root, NodeEntry* out) {
    const Rule& r = a.rule;
    if (a.grows && grown_.count(root.node.get())) return false;
    Bindings b;
    b.root = ValueOf(root);
    std::string why;
    bool ok = Match(a, r.pattern, root, &b, &why);
    for (size_t g = 0; ok && g < r.guards.size(); ++g) {
      const Guard& guard = r.guards[g];
      ok = (*FindGuard(guard.name))(b, guard.args) != guard.negated;
      if (!ok) why = StrCat("guard ", guard.negated ? "not " : "", guard.name, " is false");
    }
    NodeEntry built;
    if (ok) {
      created_.clear();
      built = Build(a, r.replacement, b, root.node->attrs.name, true);
      Value v = ValueOf(built);
      if (b.root.shape.is_known() && !(v.shape == b.root.shape)) {
        ok = false;
        why = StrCat("the replacement's shape ", v.shape, " differs from the root's ", b.root.shape);
      } else if (b.root.dtype != DType::kUnknown && v.dtype != b.root.dtype) {
        ok = false;
        why = StrCat("the replacement's dtype ", DTypeName(v.dtype), " differs from the root's ",
                     DTypeName(b.root.dtype));
      }
    }
    if (!ok) {
      if (a.explain) explained_.push_back(StrCat(r.name, " @ ", root.node->attrs.name, ": ", why));
      return false;
    }
    if (a.grows) grown_.insert(created_.begin(), created_.end());
    fired_.push_back(StrCat(r.name, " @ ", root.node->attrs.name));
    *out = built;
    return true;
  }

  bool Match(const ActiveRule& a, const Term& t, const NodeEntry& e, Bindings* b, std::string* why) {
    switch (t.kind) {
      case Term::Kind::kVar: {
        auto it = b->values.find(t.name);
        if (it == b->values.end()) {
          b->values[t.name] = ValueOf(e);
          return true;
        }
        if (it->second.entry == e) return true;
        *why = StrCat("'", t.name, "' would be two different values");
        return false;
      }
      case Term::Kind::kLiteral:
        // A protected node (an x the gradient is taken with respect to) is a value to vary, not a
        // constant: `0 + y -> y` on x = 0 would drop x's own path (d(x + 2x)/dx would come out 2).
        if (!protected_.count(e.node.get()) && IsSplat(e, t.literal)) return true;
        *why = StrCat("node '", e.node->attrs.name, "' is not the constant ", t.literal);
        return false;
      default:
        break;
    }
    const Node& n = *e.node;
    if (n.is_variable() || n.op()->name != t.name || e.index != static_cast<uint32_t>(t.output)) {
      *why = StrCat("wants ", t.name, " output ", t.output, ", found ", n.is_variable() ? "a variable" : n.op()->name,
                    " '", n.attrs.name, "' output ", e.index);
      return false;
    }
    if (!Matchable(n) || protected_.count(&n)) {
      *why = StrCat("node '", n.attrs.name, "' is stateful, may raise, waits on others or is protected");
      return false;
    }
    for (const auto& kv : t.attrs) {
      std::string have = AttrOf(n, kv.first);
      if (kv.second[0] == '?') {
        auto it = b->attrs.find(kv.second);
        if (it == b->attrs.end()) {
          b->attrs[kv.second] = have;
        } else if (!AttrEqual(it->second, have)) {
          *why = StrCat("attribute ", kv.first, " of '", n.attrs.name, "' is '", have, "', not ", kv.second, " = '",
                        it->second, "'");
          return false;
        }
      } else if (!AttrEqual(kv.second, have)) {
        *why = StrCat("attribute ", kv.first, " of '", n.attrs.name, "' is '", have, "', not '", kv.second, "'");
        return false;
      }
    }
    if (n.inputs.size() != t.args.size()) {
      *why = StrCat("'", n.attrs.name, "' has ", n.inputs.size(), " inputs, the pattern ", t.args.size());
      return false;
    }
    Bindings saved = *b;
    if (MatchArgs(a, t, n.inputs, false, b, why)) return true;
    if (t.args.size() != 2 || !a.commutative.count(t.name)) return false;
    *b = saved;
    return MatchArgs(a, t, n.inputs, true, b, why);
  }

  bool MatchArgs(const ActiveRule& a, const Term& t, const std::vector<NodeEntry>& inputs, bool swapped, Bindings* b,
                 std::string* why) {
    for (size_t i = 0; i < t.args.size(); ++i) {
      if (!Match(a, t.args[i], inputs[swapped ? 1 - i : i], b, why)) return false;
    }
    return true;
  }

  /*! \brief Whether a rule may match node `n` (its op's kernel has no effect beyond its outputs). */
  static bool Matchable(const Node& n) { return !n.is_variable() && !OpActs(n) && n.control_deps.empty(); }

  NodeEntry Build(const ActiveRule& a, const Term& t, const Bindings& b, const std::string& root_name, bool root) {
    if (t.kind == Term::Kind::kVar) return b.values.at(t.name).entry;
    std::vector<NodeEntry> inputs;
    for (const Term& arg : t.args) inputs.push_back(Build(a, arg, b, root_name, false));
    std::map<std::string, std::string> dict;
    for (const auto& kv : t.attrs) dict[kv.first] = AttrText(a, kv.second, b);
    std::string name = root ? root_name : StrCat(root_name, "/", a.rule.name, "/", counter_++);
    NodePtr node;
    try {
      node = Node::Create(Op::Get(t.name), name, dict, std::move(inputs));
    } catch (const Error& err) {
      throw Error(StrCat("rule '", a.rule.name, "' (", a.rule.set, ":", a.rule.line, ") built an invalid ", t.name,
                         " at node '", root_name, "': ", err.what()));
    }
    InferLocal(node);
    NodePtr merged = Merge(node);
    if (merged == node) created_.push_back(node.get());
    return NodeEntry{merged, static_cast<uint32_t>(t.output)};
  }

  std::string AttrText(const ActiveRule& a, const std::string& v, const Bindings& b) const {
    if (v[0] == '?') return b.attrs.at(v);
    if (v[0] != '@') return v;
    size_t open = v.find('(');
    std::string name = v.substr(1, open - 1), inner = v.substr(open + 1, v.size() - open - 2);
    std::vector<std::string> args;
    for (size_t start = 0; start <= inner.size();) {
      size_t comma = inner.find(',', start);
      if (comma == std::string::npos) comma = inner.size();
      std::string arg = inner.substr(start, comma - start);
      arg.erase(std::remove(arg.begin(), arg.end(), ' '), arg.end());
      if (!arg.empty()) args.push_back(arg);
      start = comma + 1;
    }
    try {
      return (*FindAttrFunction(name))(b, args);
    } catch (const Error& err) {
      throw Error(StrCat("rule '", a.rule.name, "': attribute function @", name, " failed: ", err.what()));
    }
  }

  /*! \brief Shapes and dtypes of a node built by a rewrite, from its op's inference alone. */
  void InferLocal(const NodePtr& node) {
    static const auto& fshape = Op::GetAttr<FInferShape>("FInferShape");
    static const auto& ftype = Op::GetAttr<FInferType>("FInferType");
    Info info;
    uint32_t n = node->num_outputs();
    info.shapes.assign(n, Shape());
    info.dtypes.assign(n, DType::kUnknown);
    std::vector<Shape> in_shapes;
    std::vector<DType> in_types;
    for (const NodeEntry& e : node->inputs) {
      Value v = ValueOf(e);
      in_shapes.push_back(v.shape);
      in_types.push_back(v.dtype);
    }
    try {
      if (fshape.count(node->op())) fshape[node->op()](node->attrs, &in_shapes, &info.shapes);
      if (ftype.count(node->op())) ftype[node->op()](node->attrs, &in_types, &info.dtypes);
    } catch (const std::exception&) {
      // Not known here; the next round infers the whole graph (and reports a real error there).
    }
    info_[node.get()] = info;
  }

  std::vector<ActiveRule> rules_;
  std::map<std::string, std::vector<size_t>> by_op_;
  std::unordered_set<const Node*> protected_;
  std::unordered_map<std::string, NodePtr> cse_;
  std::map<std::pair<const Node*, uint32_t>, NodeEntry> normalized_;
  std::unordered_map<const Node*, Info> info_;
  std::unordered_set<const Node*> grown_;
  std::vector<bool> effects_;
  std::vector<const Node*> created_;
  std::vector<std::string> fired_, explained_;
  int counter_ = 0;
};

std::vector<std::string> StringsAttr(const Graph& g, const std::string& key) {
  return g.GetAttrOr<std::vector<std::string>>(key, {});
}

Graph SimplifyPass(Graph src) {
  SimplifyResult result = SimplifyEntries(src, SimplifyOptionsFromGraph(src));
  // Last, the nodes another node computes too (ir/subsume.h), once rewrites have made them siblings.
  std::vector<std::string> merges;
  result.outputs = MergeSubsumed(result.outputs, &merges);
  for (const std::string& m : merges) result.fired.push_back("subsumed @ " + m);  // the session's rewrites list
  auto merged = StringsAttr(src, "simplify.merged");
  merged.insert(merged.end(), merges.begin(), merges.end());
  auto fired = StringsAttr(src, "simplify.fired");
  fired.insert(fired.end(), result.fired.begin(), result.fired.end());
  auto explained = StringsAttr(src, "simplify.explained");
  explained.insert(explained.end(), result.explained.begin(), result.explained.end());
  Graph out(result.outputs);
  out.attrs = GraphLevelAttrs(src);
  CarryInputAttrs(src, &out);
  out.SetAttr("simplify.fired", fired);
  out.SetAttr("simplify.explained", explained);
  out.SetAttr("simplify.merged", merged);
  return Infer(std::move(out));
}

}  // namespace

SimplifyResult SimplifyEntries(const Graph& graph, const SimplifyOptions& options,
                               const std::vector<NodeEntry>& protect) {
  return Simplifier(options, protect).Run(graph);
}

}  // namespace rewrite

IR_REGISTER_PASS(Simplify)
    .describe(
        "Merges equal subexpressions and applies the rewrite rules (exact, rounding and stabilizing by default, "
        "nsz and fast_math on request) to a fixed point; records each rewrite in simplify.fired. Last, a node "
        "another node computes too (FSubsumedBy, ir/subsume.h) becomes that node's output (simplify.merged).")
    .set_body(rewrite::SimplifyPass)
    .set_change_graph(true)
    .provide_graph_attr("simplify.fired")
    .provide_graph_attr("simplify.merged")
    .provide_graph_attr("shape")
    .provide_graph_attr("dtype");

}  // namespace ir
