/*!
 * \file pass.cc
 * \brief The pass registry and ApplyPasses: contract checks, verification, timing, dumps.
 */
#include "ir/pass.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include "core/ir_dump.h"
#include "core/json_util.h"
#include "ir/graph_attr.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {

namespace {

struct PassRegistry {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<PassReg>> passes;
  static PassRegistry* Global() {
    static PassRegistry* registry = new PassRegistry();
    return registry;
  }
};

std::string NodeLabel(const Node* node) {
  return StrCat("'", node->attrs.name, "' (", node->is_variable() ? "variable" : node->op()->name, ")");
}

/*! \brief Throws unless every use of `var` in `body` (a non-param variable) is an input the op mutates. */
void CheckFreeVariable(const IndexedGraph& body, uint32_t var) {
  const auto* mutate = Op::FindAttr<FMutateInputs>("FMutateInputs");
  for (uint32_t nid = 0; nid < body.num_nodes(); ++nid) {
    for (uint32_t k = 0; k < body[nid].inputs.size(); ++k) {
      if (body[nid].inputs[k].node_id != var) continue;
      const Node* user = body[nid].source;
      std::vector<uint32_t> mutated;
      if (mutate != nullptr && mutate->count(user->op())) mutated = (*mutate)[user->op()](user->attrs);
      IR_CHECK(std::find(mutated.begin(), mutated.end(), k) != mutated.end())
          << "variable " << NodeLabel(body[var].source) << " is read by node " << NodeLabel(user)
          << " but is not a param: a body reads outside values only through its params (only the target of an "
             "assign may be a free variable)";
    }
  }
}

/*! \brief A body: params are distinct variables with distinct names, free variables are only written. */
void VerifySubgraph(const Subgraph& body) {
  std::set<std::string> names;
  for (size_t i = 0; i < body.params.size(); ++i) {
    const NodePtr& param = body.params[i];
    IR_CHECK(param != nullptr && param->is_variable()) << "param " << i << " is not a variable node";
    IR_CHECK(names.insert(param->attrs.name).second)
        << "param " << i << " ('" << param->attrs.name << "') has the name of an earlier param";
  }
  VerifyGraph(body.graph);
  const IndexedGraph& idx = body.graph.indexed_graph();
  for (uint32_t nid : idx.input_nodes()) {
    const Node* var = idx[nid].source;
    bool is_param =
        std::any_of(body.params.begin(), body.params.end(), [var](const NodePtr& p) { return p.get() == var; });
    if (!is_param) CheckFreeVariable(idx, nid);
  }
}

void CheckDependencies(const PassReg& pass, const Graph& graph) {
  for (const std::string& key : pass.graph_attr_dependency) {
    if (graph.HasAttr(key)) continue;
    std::vector<std::string> providers = PassReg::ProvidersOf(key);
    if (providers.empty()) {
      throw Error(StrCat("pass '", pass.name, "' needs graph attribute '", key,
                         "', which no registered pass provides: set it on the graph first"));
    }
    throw Error(StrCat("pass '", pass.name, "' needs graph attribute '", key, "', provided by pass ",
                       Join(providers, " or "), ": apply it before '", pass.name, "'"));
  }
  if (pass.op_attr_dependency.empty()) return;
  const IndexedGraph& idx = graph.indexed_graph();
  for (const std::string& key : pass.op_attr_dependency) {
    for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
      const Node* node = idx[nid].source;
      if (node->is_variable() || Op::HasAttr(key, node->op())) continue;
      throw Error(StrCat("pass '", pass.name, "' needs op attribute '", key, "' of every op, but op '",
                         node->op()->name, "' (node '", node->attrs.name, "') does not register it"));
    }
  }
}

void CheckProvided(const PassReg& pass, const Graph& graph) {
  for (const std::string& key : pass.provided_graph_attr) {
    IR_CHECK(graph.HasAttr(key)) << "pass '" << pass.name << "' declares it provides graph attribute '" << key
                                 << "' but did not set it";
  }
}

// After a pass changed nodes or edges, node/entry-indexed vectors it did not recompute are stale.
void DropStaleAttrs(const PassReg& pass, Graph* graph) {
  std::set<std::string> provided(pass.provided_graph_attr.begin(), pass.provided_graph_attr.end());
  for (auto it = graph->attrs.begin(); it != graph->attrs.end();) {
    const GraphAttrInfo* info = GraphAttrInfo::Find(it->first);
    bool indexed = info != nullptr && info->index != AttrIndex::kGraph;
    it = indexed && !provided.count(it->first) ? graph->attrs.erase(it) : std::next(it);
  }
}

void AppendTiming(Graph* graph, const std::string& pass, double ms) {
  std::vector<PassTiming> timings = graph->GetAttrOr<std::vector<PassTiming>>("pass_timings", {});
  timings.push_back(PassTiming{pass, ms});
  graph->SetAttr("pass_timings", std::move(timings));
}

Graph RunOne(const PassReg& pass, Graph graph) {
  CheckDependencies(pass, graph);
  std::vector<NodeEntry> outputs_before = graph.outputs;
  auto start = std::chrono::steady_clock::now();
  Graph result;
  try {
    result = pass.body(std::move(graph));
  } catch (const dmlc::Error& err) {
    throw Error(StrCat("pass '", pass.name, "': ", detail::CleanDmlcMessage(err.what())));
  } catch (const Error& err) {
    throw Error(StrCat("pass '", pass.name, "': ", err.what()));
  }
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  CheckProvided(pass, result);
  if (pass.change_graph) {
    DropStaleAttrs(pass, &result);
  } else {
    IR_CHECK(result.outputs == outputs_before)
        << "pass '" << pass.name << "' is registered as not changing the graph, but its outputs changed";
  }
  try {
    VerifyGraph(result);
  } catch (const Error& err) {
    throw Error(StrCat("graph verification failed after pass '", pass.name, "': ", err.what()));
  }
  AppendTiming(&result, pass.name, ms);
  return result;
}

}  // namespace

PassReg& PassReg::Register(const std::string& name) {
  PassRegistry* reg = PassRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto& slot = reg->passes[name];
  if (!slot) {
    slot.reset(new PassReg());
    slot->name = name;
  }
  return *slot;
}

const PassReg& PassReg::Get(const std::string& name) {
  PassRegistry* reg = PassRegistry::Global();
  {
    std::lock_guard<std::mutex> lock(reg->mutex);
    auto it = reg->passes.find(name);
    if (it != reg->passes.end() && it->second->body) return *it->second;
  }
  throw Error(StrCat("unknown pass '", name, "' (registered: ", Join(ListNames(), ", "), ")"));
}

std::vector<std::string> PassReg::ListNames() {
  PassRegistry* reg = PassRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  std::vector<std::string> names;
  for (const auto& kv : reg->passes) {
    if (kv.second->body) names.push_back(kv.first);
  }
  return names;
}

std::vector<std::string> PassReg::ProvidersOf(const std::string& key) {
  PassRegistry* reg = PassRegistry::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  std::vector<std::string> providers;
  for (const auto& kv : reg->passes) {
    for (const std::string& provided : kv.second->provided_graph_attr) {
      if (provided == key) providers.push_back(StrCat("'", kv.first, "'"));
    }
  }
  return providers;
}

Graph ApplyPasses(Graph graph, const std::vector<std::string>& passes) {
  for (const std::string& name : passes) {
    const PassReg& pass = PassReg::Get(name);
    graph = RunOne(pass, std::move(graph));
    detail::DumpAfterPass(graph, name);
  }
  return graph;
}

void VerifyGraph(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    if (node->is_variable()) continue;
    uint32_t expected = node->op()->InputCount(node->attrs);
    IR_CHECK(expected == kVariadic || expected == node->inputs.size())
        << "node " << NodeLabel(node) << " has " << node->inputs.size() << " inputs, its op takes " << expected;
    for (size_t k = 0; k < node->attrs.subgraphs.size(); ++k) {
      try {
        VerifySubgraph(*node->attrs.subgraphs[k]);
      } catch (const Error& err) {
        throw Error(StrCat("body ", k, " of node ", NodeLabel(node), ": ", err.what()));
      }
    }
  }
  for (const auto& kv : graph.attrs) CheckGraphAttrSize(kv.first, *kv.second, idx);
}

template <>
int GetPassOption<int>(const Graph& graph, const std::string& key, const int& def) {
  auto it = graph.attrs.find(key);
  if (it == graph.attrs.end()) return def;
  if (it->second->type() == typeid(int64_t)) return static_cast<int>(dmlc::get<int64_t>(*it->second));
  return graph.GetAttr<int>(key);
}

void PassTiming::Save(dmlc::JSONWriter* writer) const {
  writer->BeginObject(false);
  writer->WriteObjectKeyValue("pass", pass);
  writer->WriteObjectKeyValue("ms", milliseconds);
  writer->EndObject();
}

void PassTiming::Load(dmlc::JSONReader* reader) {
  dmlc::JSONObjectReadHelper helper;
  helper.DeclareField("pass", &pass);
  helper.DeclareField("ms", &milliseconds);
  helper.ReadAllFields(reader);
}

IR_REGISTER_GRAPH_ATTR_TYPE(std::vector<PassTiming>, "list_pass_timing");
IR_REGISTER_GRAPH_ATTR("pass_timings")
    .describe("Wall time of each pass applied so far, in order (ApplyPasses appends).")
    .set_index(AttrIndex::kGraph)
    .set_type<std::vector<PassTiming>>()
    .set_in_dump(false);

}  // namespace ir
