/*!
 * \file graph_print.cc
 * \brief Readable text and Graphviz dot renderings of a graph and its attributes.
 */
#include <sstream>

#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "ir/op.h"

namespace ir {

namespace {

struct IndexedAttr {
  std::string key;
  AttrIndex index;
  const dmlc::any* value;
  const GraphAttrType* codec;
};

// Node- and entry-indexed attributes that can be printed element by element. One whose size
// does not match the graph (possible for attributes set from C++) is listed in `mismatched`
// and never indexed.
std::vector<IndexedAttr> PrintableIndexedAttrs(const Graph& graph, std::vector<std::string>* mismatched) {
  const IndexedGraph& idx = graph.indexed_graph();
  std::vector<IndexedAttr> result;
  for (const auto& kv : graph.attrs) {
    const GraphAttrInfo* info = GraphAttrInfo::Find(kv.first);
    if (info == nullptr || info->index == AttrIndex::kGraph || !info->in_dump) continue;
    const GraphAttrType* codec = GraphAttrType::Find(kv.second->type());
    if (codec == nullptr) continue;
    try {
      CheckGraphAttrSize(kv.first, *kv.second, idx);
    } catch (const Error& err) {
      mismatched->push_back(err.what());
      continue;
    }
    result.push_back(IndexedAttr{kv.first, info->index, kv.second.get(), codec});
  }
  return result;
}

// A JSON string element without its quotes when that loses nothing ("[2,3]" -> [2,3]).
std::string Unquote(const std::string& json) {
  if (json.size() >= 2 && json.front() == '"' && json.back() == '"' && json.find('\\') == std::string::npos &&
      json.find(' ') == std::string::npos) {
    return json.substr(1, json.size() - 2);
  }
  return json;
}

std::string EntryRef(const IndexedGraph& idx, const IndexedGraph::Entry& e) {
  return idx.num_outputs(e.node_id) == 1 ? StrCat("%", e.node_id) : StrCat("%", e.node_id, ":", e.index);
}

std::string Escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string Quote(const std::string& text) { return "\"" + Escape(text) + "\""; }

std::string NodeLine(const Graph& graph, const std::vector<IndexedAttr>& attrs, uint32_t nid) {
  const IndexedGraph& idx = graph.indexed_graph();
  const Node* node = idx[nid].source;
  std::ostringstream os;
  os << "  %" << nid << " = ";
  if (node->is_variable()) {
    os << "variable " << Quote(node->attrs.name);
  } else {
    std::vector<std::string> inputs;
    for (const auto& e : idx[nid].inputs) inputs.push_back(EntryRef(idx, e));
    os << node->op()->name << "(" << Join(inputs, ", ") << ") name=" << Quote(node->attrs.name);
  }
  for (const auto& kv : node->attrs.dict) os << " " << kv.first << "=" << Quote(kv.second);
  if (!idx[nid].control_deps.empty()) {
    std::vector<std::string> deps;
    for (uint32_t dep : idx[nid].control_deps) deps.push_back(StrCat("%", dep));
    os << " after(" << Join(deps, ", ") << ")";
  }
  std::vector<std::string> notes;
  for (const IndexedAttr& attr : attrs) {
    if (attr.index == AttrIndex::kNode) {
      notes.push_back(StrCat(attr.key, "=", Unquote(attr.codec->element(*attr.value, nid))));
      continue;
    }
    std::vector<std::string> values;
    for (uint32_t i = 0; i < idx.num_outputs(nid); ++i) {
      values.push_back(Unquote(attr.codec->element(*attr.value, idx.entry_id(nid, i))));
    }
    notes.push_back(StrCat(attr.key, "=", values.size() == 1 ? values[0] : "(" + Join(values, ", ") + ")"));
  }
  if (!notes.empty()) os << "  ; " << Join(notes, " ");
  return os.str();
}

void PrintGraphLevelAttrs(const Graph& graph, std::ostream& os) {
  for (const auto& kv : graph.attrs) {
    const GraphAttrInfo* info = GraphAttrInfo::Find(kv.first);
    if (info != nullptr && (info->index != AttrIndex::kGraph || !info->in_dump)) continue;
    const dmlc::any& value = *kv.second;
    if (value.type() == typeid(std::string) && dmlc::get<std::string>(value).find('\n') != std::string::npos) {
      os << "attr " << kv.first << ":\n";
      std::istringstream lines(dmlc::get<std::string>(value));
      std::string line;
      while (std::getline(lines, line)) os << "  | " << line << "\n";
      continue;
    }
    const GraphAttrType* codec = GraphAttrType::Find(value.type());
    if (codec == nullptr) {
      os << "attr " << kv.first << " = <value without JSON form>\n";
    } else {
      os << "attr " << kv.first << " = " << AttrToJSON(kv.first, value) << "\n";
    }
  }
}

/*! \brief "%3" for each param of `body` (its node id there), "unused" for a param no output reads. */
std::string ParamList(const Subgraph& body) {
  const IndexedGraph& idx = body.graph.indexed_graph();
  std::vector<std::string> params;
  for (const NodePtr& p : body.params) {
    params.push_back(idx.has_node(p.get()) ? StrCat("%", idx.node_id(p.get())) : Quote(p->attrs.name) + " unused");
  }
  return Join(params, ", ");
}

/*! \brief The nodes and return line of `graph`, each line after `indent`; bodies nested below their node. */
void PrintNodes(const Graph& graph, const std::vector<IndexedAttr>& attrs, const std::string& indent,
                std::ostream& os) {
  const IndexedGraph& idx = graph.indexed_graph();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    os << indent.substr(2) << NodeLine(graph, attrs, nid) << "\n";
    const auto& bodies = idx[nid].source->attrs.subgraphs;
    for (size_t k = 0; k < bodies.size(); ++k) {
      os << indent << "  body " << k << " (" << ParamList(*bodies[k]) << ") {\n";
      PrintNodes(bodies[k]->graph, {}, indent + "    ", os);
      os << indent << "  }\n";
    }
  }
  std::vector<std::string> heads;
  for (const auto& e : idx.outputs()) heads.push_back(EntryRef(idx, e));
  os << indent << "return " << Join(heads, ", ") << "\n";
}

}  // namespace

std::string PrintGraphText(const Graph& graph) {
  std::vector<std::string> mismatched;
  std::vector<IndexedAttr> attrs = PrintableIndexedAttrs(graph, &mismatched);
  std::ostringstream os;
  os << "graph {\n";
  PrintNodes(graph, attrs, "  ", os);
  os << "}\n";
  PrintGraphLevelAttrs(graph, os);
  for (const std::string& problem : mismatched) os << "; not shown: " << problem << "\n";
  return os.str();
}

namespace {

/*! \brief The dot nodes and edges of `graph`, ids prefixed by `prefix`; bodies as clusters. */
void DotNodes(const Graph& graph, const std::string& prefix, std::ostream& os) {
  const IndexedGraph& idx = graph.indexed_graph();
  const ShapeVector* shapes = nullptr;
  if (graph.HasAttr("shape") && graph.attrs.at("shape")->type() == typeid(ShapeVector)) {
    shapes = &graph.GetAttr<ShapeVector>("shape");
  }
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    std::string label = node->is_variable() ? Quote(node->attrs.name)
                                            : "\"" + Escape(node->op()->name) + "\\n" + Escape(node->attrs.name) + "\"";
    os << "  " << prefix << nid << " [label=" << label << " shape=" << (node->is_variable() ? "ellipse" : "box")
       << "];\n";
    for (const auto& e : idx[nid].inputs) {
      os << "  " << prefix << e.node_id << " -> " << prefix << nid;
      if (shapes != nullptr && shapes->size() == idx.num_node_entries()) {
        os << " [label=" << Quote((*shapes)[idx.entry_id(e)].ToString()) << "]";
      }
      os << ";\n";
    }
    for (uint32_t dep : idx[nid].control_deps)
      os << "  " << prefix << dep << " -> " << prefix << nid << " [style=dashed];\n";
    const auto& bodies = node->attrs.subgraphs;
    for (size_t k = 0; k < bodies.size(); ++k) {
      std::string inner = StrCat(prefix, nid, "_", k, "_");
      os << "  subgraph cluster_" << inner << " {\n  label=" << Quote(StrCat(node->attrs.name, " body ", k)) << ";\n";
      DotNodes(bodies[k]->graph, inner, os);
      os << "  }\n";
    }
  }
}

}  // namespace

std::string PrintGraphDot(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  std::ostringstream os;
  os << "digraph IR {\n  node [fontname=\"monospace\"];\n";
  DotNodes(graph, "n", os);
  for (size_t i = 0; i < idx.outputs().size(); ++i) {
    os << "  out" << i << " [label=\"output " << i << "\" shape=plaintext];\n";
    os << "  n" << idx.outputs()[i].node_id << " -> out" << i << ";\n";
  }
  os << "}\n";
  return os.str();
}

}  // namespace ir
