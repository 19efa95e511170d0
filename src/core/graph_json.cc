/*!
 * \file graph_json.cc
 * \brief SaveJSON / LoadJSON: graphs with node attributes and typed graph attributes.
 *
 * Format:
 *   {"nodes": [{"op": "null"|name, "name": ..., "attrs": {...}, "inputs": [[nid, index]...],
 *               "control_deps": [nid...], "subgraphs": [body...]}...],
 *    "arg_nodes": [nid...], "heads": [[nid, index]...],
 *    "attrs": {"key": ["type", value]...}, "skipped_attrs": ["key"...]}
 * Nodes appear in IndexedGraph order, so every reference points backwards. A control-flow
 * node's bodies are nested: {"nodes": [...], "heads": [...], "params": [nid...]}.
 */
#include <dmlc/json.h>

#include <algorithm>
#include <sstream>

#include "core/json_util.h"
#include "core/json_value.h"
#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "ir/op.h"

namespace ir {

namespace {

using EntryJSON = std::vector<uint32_t>;

// dmlc's writer puts object keys between quotes as they are: a key holding '"' or a newline
// (any string is a valid attribute key) would make JSON that does not load again.
std::string EscapeKey(const std::string& key) {
  std::ostringstream os;
  dmlc::JSONWriter(&os).WriteString(key);
  std::string quoted = os.str();
  return quoted.substr(1, quoted.size() - 2);
}

std::map<std::string, std::string> EscapeKeys(const std::map<std::string, std::string>& dict) {
  std::map<std::string, std::string> escaped;
  for (const auto& kv : dict) escaped[EscapeKey(kv.first)] = kv.second;
  return escaped;
}

struct BodyJSON;

struct NodeJSON {
  std::string op;
  std::string name;
  std::map<std::string, std::string> attrs;
  std::vector<EntryJSON> inputs;
  std::vector<uint32_t> control_deps;
  std::vector<BodyJSON> subgraphs;

  void Save(dmlc::JSONWriter* writer) const;
};

/*! \brief The nodes of a graph in IndexedGraph order, as NodeJSON. */
std::vector<NodeJSON> NodesJSON(const IndexedGraph& idx);

/*! \brief A body: its nodes (params included even when unused), heads and params. */
struct BodyJSON {
  const Subgraph* body = nullptr;

  void Save(dmlc::JSONWriter* writer) const {
    Graph all = body->graph;  // params as extra heads, so an unused one is still written
    for (const NodePtr& p : body->params) all.outputs.push_back(NodeEntry{p, 0});
    const IndexedGraph& idx = all.indexed_graph();
    std::vector<EntryJSON> heads;
    std::vector<uint32_t> params;
    for (size_t i = 0; i < idx.outputs().size(); ++i) {
      const auto& e = idx.outputs()[i];
      if (i < body->graph.outputs.size()) {
        heads.push_back({e.node_id, e.index});
      } else {
        params.push_back(e.node_id);
      }
    }
    writer->BeginObject(true);
    writer->WriteObjectKeyValue("nodes", NodesJSON(idx));
    writer->WriteObjectKeyValue("heads", heads);
    writer->WriteObjectKeyValue("params", params);
    writer->EndObject();
  }
};

void NodeJSON::Save(dmlc::JSONWriter* writer) const {
  writer->BeginObject(false);
  writer->WriteObjectKeyValue("op", op);
  writer->WriteObjectKeyValue("name", name);
  if (!attrs.empty()) writer->WriteObjectKeyValue("attrs", EscapeKeys(attrs));
  writer->WriteObjectKeyValue("inputs", inputs);
  if (!control_deps.empty()) writer->WriteObjectKeyValue("control_deps", control_deps);
  if (!subgraphs.empty()) writer->WriteObjectKeyValue("subgraphs", subgraphs);
  writer->EndObject();
}

std::vector<NodeJSON> NodesJSON(const IndexedGraph& idx) {
  std::vector<NodeJSON> nodes;
  for (uint32_t nid = 0; nid < idx.num_nodes(); ++nid) {
    const Node* node = idx[nid].source;
    NodeJSON spec{
        node->is_variable() ? "null" : node->op()->name, node->attrs.name, SavedAttrs(node->attrs), {}, {}, {}};
    for (const auto& e : idx[nid].inputs) spec.inputs.push_back({e.node_id, e.index});
    spec.control_deps = idx[nid].control_deps;
    for (const auto& body : node->attrs.subgraphs) spec.subgraphs.push_back(BodyJSON{body.get()});
    nodes.push_back(std::move(spec));
  }
  return nodes;
}

/*! \brief The graph attributes with a JSON codec, written as {"key": ["type", value]}. */
struct AttrsJSON {
  const Graph* graph = nullptr;

  void Save(dmlc::JSONWriter* writer) const {
    writer->BeginObject(true);
    for (const auto& kv : graph->attrs) {
      if (GraphAttrType::Find(kv.second->type()) == nullptr) continue;
      writer->WriteObjectKeyValue(EscapeKey(kv.first), Typed{kv.first, kv.second.get()});
    }
    writer->EndObject();
  }

 private:
  struct Typed {
    std::string key;
    const dmlc::any* value;
    void Save(dmlc::JSONWriter* writer) const { WriteTypedAttrJSON(writer, key, *value); }
  };
};

using json::Value;

/*! \brief `value` when it has `kind`, else an error naming `where`. */
const Value& Expect(const Value& value, Value::Kind kind, const std::string& where) {
  IR_CHECK(value.kind == kind) << where << ": expected " << json::KindName(kind) << ", got "
                               << json::KindName(value.kind);
  return value;
}

/*! \brief Rejects members of `object` not in `allowed` (typos would otherwise be ignored). */
void CheckFields(const Value& object, const std::vector<std::string>& allowed, const std::string& where) {
  for (const auto& kv : object.members) {
    IR_CHECK(std::find(allowed.begin(), allowed.end(), kv.first) != allowed.end())
        << where << ": unknown field '" << kv.first << "' (expected one of " << Join(allowed, ", ") << ")";
  }
}

/*! \brief Member `key` of `object` with `kind`; nullptr when it is absent and optional. */
const Value* Field(const Value& object, const std::string& key, Value::Kind kind, bool required,
                   const std::string& where) {
  const Value* value = object.Find(key);
  IR_CHECK(value != nullptr || !required) << where << ": missing field '" << key << "'";
  return value == nullptr ? nullptr : &Expect(*value, kind, StrCat(where, " field '", key, "'"));
}

/*! \brief Builds nodes in order from their JSON; every reference must point backwards. */
class GraphReader {
 public:
  void AddNode(const Value& spec) {
    std::string where = StrCat("node ", nodes_.size());
    Expect(spec, Value::Kind::kObject, where);
    const Value* name = spec.Find("name");
    if (name != nullptr && name->kind == Value::Kind::kString) where += StrCat(" ('", name->text, "')");
    CheckFields(spec, {"op", "name", "attrs", "inputs", "control_deps", "subgraphs"}, where);
    const std::string& op = Field(spec, "op", Value::Kind::kString, true, where)->text;
    Field(spec, "name", Value::Kind::kString, true, where);
    std::map<std::string, std::string> attrs = NodeAttrs(spec, where);
    const Value& input_list = *Field(spec, "inputs", Value::Kind::kArray, true, where);
    std::vector<NodeEntry> inputs;
    for (size_t i = 0; i < input_list.items.size(); ++i) {
      inputs.push_back(Entry(input_list.items[i], StrCat(where, " input ", i)));
    }
    std::vector<std::shared_ptr<const Subgraph>> bodies;
    if (const Value* list = Field(spec, "subgraphs", Value::Kind::kArray, false, where)) {
      for (size_t i = 0; i < list->items.size(); ++i)
        bodies.push_back(ReadBody(list->items[i], StrCat(where, " body ", i)));
    }
    NodePtr node = detail::WithJSONContext(where, [&]() {
      if (op == "null") {
        IR_CHECK(inputs.empty() && bodies.empty()) << "a variable cannot have inputs or bodies";
        return Node::CreateVariable(name->text, attrs);
      }
      return Node::Create(Op::Get(op), name->text, attrs, std::move(inputs), std::move(bodies));
    });
    if (const Value* deps = Field(spec, "control_deps", Value::Kind::kArray, false, where)) {
      for (size_t i = 0; i < deps->items.size(); ++i) {
        node->control_deps.push_back(nodes_[NodeId(deps->items[i], StrCat(where, " control dependency ", i))]);
      }
    }
    nodes_.push_back(std::move(node));
  }

  /*! \brief An entry [node_id, output_index] of an already defined node. */
  NodeEntry Entry(const Value& value, const std::string& where) const {
    IR_CHECK(value.kind == Value::Kind::kArray && value.items.size() == 2)
        << where << ": an entry must be [node_id, output_index]";
    uint32_t nid = NodeId(value.items[0], where);
    uint64_t index = json::ToUnsigned(value.items[1], UINT32_MAX, where, "an output index");
    IR_CHECK(index < nodes_[nid]->num_outputs())
        << where << ": refers to output " << index << " of node " << nid << " ('" << nodes_[nid]->attrs.name
        << "'), which has " << nodes_[nid]->num_outputs() << " output(s)";
    return NodeEntry{nodes_[nid], static_cast<uint32_t>(index)};
  }

  /*! \brief The id of an already defined node. */
  uint32_t NodeId(const Value& value, const std::string& where) const {
    uint64_t nid = json::ToUnsigned(value, UINT32_MAX, where, "a node id");
    IR_CHECK(nid < nodes_.size()) << where << ": refers to node " << nid
                                  << ", which is not defined before it (there are " << nodes_.size()
                                  << " nodes before it; references must point backwards)";
    return static_cast<uint32_t>(nid);
  }

  /*! \brief Checks arg_nodes: distinct variables. The graph's own numbering is what counts. */
  void CheckArgNodes(const Value& list) const {
    std::vector<bool> seen(nodes_.size(), false);
    for (size_t i = 0; i < list.items.size(); ++i) {
      std::string where = StrCat("arg_nodes[", i, "]");
      uint32_t nid = NodeId(list.items[i], where);
      IR_CHECK(nodes_[nid]->is_variable())
          << where << ": node " << nid << " ('" << nodes_[nid]->attrs.name << "') is not a variable";
      IR_CHECK(!seen[nid]) << where << ": node " << nid << " ('" << nodes_[nid]->attrs.name << "') is listed twice";
      seen[nid] = true;
    }
  }

 private:
  /*! \brief A nested body {"nodes", "heads", "params"}, read by a reader of its own. */
  static std::shared_ptr<const Subgraph> ReadBody(const Value& spec, const std::string& where) {
    Expect(spec, Value::Kind::kObject, where);
    CheckFields(spec, {"nodes", "heads", "params"}, where);
    GraphReader reader;
    for (const Value& node : Field(spec, "nodes", Value::Kind::kArray, true, where)->items) reader.AddNode(node);
    auto body = std::make_shared<Subgraph>();
    const Value& heads = *Field(spec, "heads", Value::Kind::kArray, true, where);
    for (size_t i = 0; i < heads.items.size(); ++i) {
      body->graph.outputs.push_back(reader.Entry(heads.items[i], StrCat(where, " head ", i)));
    }
    const Value& params = *Field(spec, "params", Value::Kind::kArray, true, where);
    for (size_t i = 0; i < params.items.size(); ++i) {
      const NodePtr& param = reader.nodes_[reader.NodeId(params.items[i], StrCat(where, " param ", i))];
      IR_CHECK(param->is_variable()) << where << " param " << i << ": node '" << param->attrs.name
                                     << "' is not a variable";
      body->params.push_back(param);
    }
    return body;
  }

  static std::map<std::string, std::string> NodeAttrs(const Value& spec, const std::string& where) {
    std::map<std::string, std::string> attrs;
    const Value* object = Field(spec, "attrs", Value::Kind::kObject, false, where);
    if (object == nullptr) return attrs;
    for (const auto& kv : object->members) {
      attrs[kv.first] = Expect(kv.second, Value::Kind::kString, StrCat(where, " attribute '", kv.first, "'")).text;
    }
    return attrs;
  }

  std::vector<NodePtr> nodes_;
};

}  // namespace

std::string SaveJSON(const Graph& graph) {
  const IndexedGraph& idx = graph.indexed_graph();
  std::vector<NodeJSON> nodes = NodesJSON(idx);
  std::vector<uint32_t> arg_nodes = idx.input_nodes();
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

Graph LoadJSON(const std::string& text) {
  return detail::WithJSONContext("malformed graph JSON", [&]() {
    Value root = json::Parse(text);
    Expect(root, Value::Kind::kObject, "the graph");
    CheckFields(root, {"nodes", "arg_nodes", "heads", "attrs", "skipped_attrs"}, "the graph");
    GraphReader reader;
    for (const Value& spec : Field(root, "nodes", Value::Kind::kArray, true, "the graph")->items) reader.AddNode(spec);
    if (const Value* args = Field(root, "arg_nodes", Value::Kind::kArray, false, "the graph")) {
      reader.CheckArgNodes(*args);
    }
    const Value& heads = *Field(root, "heads", Value::Kind::kArray, true, "the graph");
    Graph graph;
    for (size_t i = 0; i < heads.items.size(); ++i) {
      graph.outputs.push_back(reader.Entry(heads.items[i], StrCat("head ", i)));
    }
    if (const Value* attrs = Field(root, "attrs", Value::Kind::kObject, false, "the graph")) {
      for (const auto& kv : attrs->members) {
        dmlc::any value = detail::ReadTypedAttr(kv.first, kv.second);
        CheckGraphAttrSize(kv.first, value, graph.indexed_graph());
        graph.attrs[kv.first] = std::make_shared<dmlc::any>(std::move(value));
      }
    }
    if (const Value* skipped = Field(root, "skipped_attrs", Value::Kind::kArray, false, "the graph")) {
      for (size_t i = 0; i < skipped->items.size(); ++i) {
        Expect(skipped->items[i], Value::Kind::kString, StrCat("skipped_attrs[", i, "]"));
      }
    }
    return graph;
  });
}

}  // namespace ir
