/*!
 * \file graph_json.cc
 * \brief SaveJSON / LoadJSON: graphs with node attributes and typed graph attributes.
 *
 * Format:
 *   {"nodes": [{"op": "null"|name, "name": ..., "attrs": {...}, "inputs": [[nid, index]...],
 *               "control_deps": [nid...]}...],
 *    "arg_nodes": [nid...], "heads": [[nid, index]...],
 *    "attrs": {"key": ["type", value]...}, "skipped_attrs": ["key"...]}
 * Nodes appear in IndexedGraph order, so every reference points backwards.
 */
#include <dmlc/json.h>

#include <sstream>

#include "core/json_util.h"
#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "ir/op.h"

namespace ir {

namespace {

using EntryJSON = std::vector<uint32_t>;

struct NodeJSON {
  std::string op;
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<EntryJSON> inputs;
  std::vector<uint32_t> control_deps;

  void Save(dmlc::JSONWriter* writer) const {
    writer->BeginObject(false);
    writer->WriteObjectKeyValue("op", op);
    writer->WriteObjectKeyValue("name", name);
    if (!attrs.empty()) writer->WriteObjectKeyValue("attrs", attrs);
    writer->WriteObjectKeyValue("inputs", inputs);
    if (!control_deps.empty()) writer->WriteObjectKeyValue("control_deps", control_deps);
    writer->EndObject();
  }
  void Load(dmlc::JSONReader* reader) {
    dmlc::JSONObjectReadHelper helper;
    helper.DeclareField("op", &op);
    helper.DeclareField("name", &name);
    helper.DeclareOptionalField("attrs", &attrs);
    helper.DeclareField("inputs", &inputs);
    helper.DeclareOptionalField("control_deps", &control_deps);
    helper.ReadAllFields(reader);
  }
};

/*! \brief The graph attributes with a JSON codec, written as {"key": ["type", value]}. */
struct AttrsJSON {
  const Graph* graph = nullptr;
  std::map<std::string, dmlc::any> loaded;

  void Save(dmlc::JSONWriter* writer) const {
    writer->BeginObject(true);
    for (const auto& kv : graph->attrs) {
      if (GraphAttrType::Find(kv.second->type()) == nullptr) continue;
      writer->WriteObjectKeyValue(kv.first, Typed{kv.first, kv.second.get()});
    }
    writer->EndObject();
  }
  void Load(dmlc::JSONReader* reader) {
    reader->BeginObject();
    std::string key;
    while (reader->NextObjectItem(&key)) loaded[key] = ReadTypedAttrJSON(reader, key);
  }

 private:
  struct Typed {
    std::string key;
    const dmlc::any* value;
    void Save(dmlc::JSONWriter* writer) const { WriteTypedAttrJSON(writer, key, *value); }
  };
};

// dmlc's reader ends arrays and objects quietly at end of input; reject truncated text first.
void CheckBalanced(const std::string& json) {
  int depth = 0;
  bool in_string = false;
  size_t last = json.find_last_not_of(" \t\r\n");
  IR_CHECK(last != std::string::npos) << "empty input";
  for (size_t i = 0; i <= last; ++i) {
    char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') --depth;
    IR_CHECK(depth >= 0) << "unbalanced '" << c << "' at offset " << i;
    IR_CHECK(depth > 0 || i == last || i < json.find_first_not_of(" \t\r\n"))
        << "unexpected text after the graph at offset " << i + 1;
  }
  IR_CHECK(!in_string && depth == 0) << "input ends inside a " << (in_string ? "string" : "value")
                                     << " (truncated?)";
}

NodeEntry EntryAt(const std::vector<NodePtr>& nodes, const EntryJSON& e, const std::string& where) {
  IR_CHECK(e.size() == 2) << where << ": an entry must be [node_id, output_index]";
  IR_CHECK(e[0] < nodes.size()) << where << ": refers to node " << e[0]
                                << ", which is not defined before it";
  IR_CHECK(e[1] < nodes[e[0]]->num_outputs())
      << where << ": refers to output " << e[1] << " of node '" << nodes[e[0]]->attrs.name
      << "', which has " << nodes[e[0]]->num_outputs() << " output(s)";
  return NodeEntry{nodes[e[0]], e[1]};
}

NodePtr BuildNode(const NodeJSON& spec, const std::vector<NodePtr>& nodes) {
  std::string where = StrCat("node ", nodes.size(), " ('", spec.name, "')");
  std::vector<NodeEntry> inputs;
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    inputs.push_back(EntryAt(nodes, spec.inputs[i], StrCat(where, " input ", i)));
  }
  NodePtr node;
  if (spec.op == "null") {
    IR_CHECK(inputs.empty()) << where << ": a variable cannot have inputs";
    node = Node::CreateVariable(spec.name, spec.attrs);
  } else {
    try {
      node = Node::Create(Op::Get(spec.op), spec.name, spec.attrs, std::move(inputs));
    } catch (const Error& err) {
      throw Error(StrCat(where, ": ", err.what()));
    }
  }
  for (uint32_t dep : spec.control_deps) {
    IR_CHECK(dep < nodes.size()) << where << ": control dependency on node " << dep
                                 << ", which is not defined before it";
    node->control_deps.push_back(nodes[dep]);
  }
  return node;
}

}  // namespace

std::string SaveJSON(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  std::vector<NodeJSON> nodes;
  std::vector<uint32_t> arg_nodes = idx.input_nodes();
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    NodeJSON spec{node->is_variable() ? "null" : node->op()->name, node->attrs.name, node->attrs.dict, {}, {}};
    for (const auto& e : idx[nid].inputs) spec.inputs.push_back({e.node_id, e.index});
    spec.control_deps = idx[nid].control_deps;
    nodes.push_back(std::move(spec));
  }
  std::vector<EntryJSON> heads;
  for (const auto& e : idx.outputs()) heads.push_back({e.node_id, e.index});
  std::vector<std::string> skipped;
  for (const auto& kv : graph.attrs) {
    if (GraphAttrType::Find(kv.second->type()) == nullptr) skipped.push_back(kv.first);
  }
  std::ostringstream os;
  dmlc::JSONWriter writer(&os);
  writer.BeginObject(true);
  writer.WriteObjectKeyValue("nodes", nodes);
  writer.WriteObjectKeyValue("arg_nodes", arg_nodes);
  writer.WriteObjectKeyValue("heads", heads);
  AttrsJSON attrs;
  attrs.graph = &graph;
  writer.WriteObjectKeyValue("attrs", attrs);
  if (!skipped.empty()) writer.WriteObjectKeyValue("skipped_attrs", skipped);
  writer.EndObject();
  return os.str();
}

Graph LoadJSON(const std::string& json) {
  return detail::WithJSONContext("malformed graph JSON", [&]() {
    CheckBalanced(json);
    std::vector<NodeJSON> specs;
    std::vector<uint32_t> arg_nodes;
    std::vector<EntryJSON> heads;
    std::vector<std::string> skipped;
    AttrsJSON attrs;
    std::istringstream is(json);
    dmlc::JSONReader reader(&is);
    dmlc::JSONObjectReadHelper helper;
    helper.DeclareField("nodes", &specs);
    helper.DeclareOptionalField("arg_nodes", &arg_nodes);
    helper.DeclareField("heads", &heads);
    helper.DeclareOptionalField("attrs", &attrs);
    helper.DeclareOptionalField("skipped_attrs", &skipped);
    helper.ReadAllFields(&reader);

    std::vector<NodePtr> nodes;
    for (const NodeJSON& spec : specs) nodes.push_back(BuildNode(spec, nodes));
    Graph graph;
    for (size_t i = 0; i < heads.size(); ++i) {
      graph.outputs.push_back(EntryAt(nodes, heads[i], StrCat("head ", i)));
    }
    for (auto& kv : attrs.loaded) graph.attrs[kv.first] = std::make_shared<dmlc::any>(std::move(kv.second));
    return graph;
  });
}

}  // namespace ir
