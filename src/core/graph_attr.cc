/*!
 * \file graph_attr.cc
 * \brief Registries of graph attribute keys and JSON types; typed JSON conversion.
 */
#include "ir/graph_attr.h"

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "core/json_util.h"
#include "core/json_value.h"
#include "ir/graph.h"

namespace ir {

namespace detail {

std::string CleanDmlcMessage(const std::string& what) {
  std::string msg = what;
  size_t trace = msg.find("Stack trace");
  if (trace != std::string::npos) msg = msg.substr(0, trace);
  while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' ')) msg.pop_back();
  // dmlc prefixes "[HH:MM:SS] /path/file.h:123: " and "Check failed: <expr>: ".
  bool stamped = msg.size() > 11 && msg[0] == '[' && msg[3] == ':' && msg[6] == ':' && msg[9] == ']';
  if (!stamped) return msg;
  msg = msg.substr(11);
  size_t colon = msg.find(": ");
  if (colon != std::string::npos && msg.substr(0, colon).find(':') != std::string::npos) {
    msg = msg.substr(colon + 2);
  }
  if (msg.rfind("Check failed:", 0) == 0) {
    size_t detail_start = msg.find(": ", 13);
    if (detail_start != std::string::npos) msg = msg.substr(detail_start + 2);
  }
  return msg;
}
}  // namespace detail

namespace {

struct AttrRegistries {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<GraphAttrType>> types_by_name;
  std::map<std::string, std::unique_ptr<GraphAttrInfo>> keys;
  static AttrRegistries* Global() {
    static AttrRegistries* registries = new AttrRegistries();
    return registries;
  }
};

const GraphAttrType* FindCodec(std::type_index type) {
  AttrRegistries* reg = AttrRegistries::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  for (const auto& kv : reg->types_by_name) {
    if (kv.second->type == type) return kv.second.get();
  }
  return nullptr;
}

}  // namespace

const char* AttrIndexName(AttrIndex kind) {
  switch (kind) {
    case AttrIndex::kGraph:
      return "graph";
    case AttrIndex::kNode:
      return "node";
    case AttrIndex::kEntry:
      return "entry";
  }
  return "?";
}

GraphAttrType& GraphAttrType::Register(const std::string& name) {
  AttrRegistries* reg = AttrRegistries::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto& slot = reg->types_by_name[name];
  if (!slot) {
    slot.reset(new GraphAttrType());
    slot->name = name;
  }
  return *slot;
}

const GraphAttrType* GraphAttrType::Find(const std::type_info& type) { return FindCodec(type); }

const GraphAttrType* GraphAttrType::Find(const std::string& name) {
  AttrRegistries* reg = AttrRegistries::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto it = reg->types_by_name.find(name);
  return it == reg->types_by_name.end() ? nullptr : it->second.get();
}

GraphAttrInfo& GraphAttrInfo::Register(const std::string& name) {
  AttrRegistries* reg = AttrRegistries::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto& slot = reg->keys[name];
  if (!slot) {
    slot.reset(new GraphAttrInfo());
    slot->name = name;
  }
  return *slot;
}

const GraphAttrInfo* GraphAttrInfo::Find(const std::string& name) {
  AttrRegistries* reg = AttrRegistries::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  auto it = reg->keys.find(name);
  return it == reg->keys.end() ? nullptr : it->second.get();
}

std::vector<const GraphAttrInfo*> GraphAttrInfo::List() {
  AttrRegistries* reg = AttrRegistries::Global();
  std::lock_guard<std::mutex> lock(reg->mutex);
  std::vector<const GraphAttrInfo*> infos;
  for (const auto& kv : reg->keys) infos.push_back(kv.second.get());
  return infos;
}

namespace {

const GraphAttrType& CodecOf(const std::string& key, const dmlc::any& value) {
  const GraphAttrType* codec = FindCodec(value.type());
  IR_CHECK(codec != nullptr) << "graph attribute '" << key << "' has type " << detail::TypeName(value.type())
                             << ", which has no JSON codec (IR_REGISTER_GRAPH_ATTR_TYPE)";
  return *codec;
}

const GraphAttrType& CodecNamed(const std::string& key, const std::string& type_name) {
  const GraphAttrType* codec = GraphAttrType::Find(type_name);
  IR_CHECK(codec != nullptr) << "graph attribute '" << key << "': unknown attribute type '" << type_name << "'";
  return *codec;
}

}  // namespace

void WriteTypedAttrJSON(dmlc::JSONWriter* writer, const std::string& key, const dmlc::any& value) {
  const GraphAttrType& codec = CodecOf(key, value);
  writer->BeginArray(false);
  writer->WriteArrayItem(codec.name);
  writer->WriteArraySeperator();
  codec.write(writer, value);
  writer->EndArray();
}

std::string AttrToJSON(const std::string& key, const dmlc::any& value) {
  std::ostringstream os;
  dmlc::JSONWriter writer(&os);
  CodecOf(key, value).write(&writer, value);
  return os.str();
}

namespace {

// Reads an already checked JSON value with a dmlc-based codec; nothing may be left unread.
dmlc::any ReadWithCodec(const GraphAttrType& codec, const json::Value& value) {
  std::string text = json::Write(value);
  std::istringstream is(text);
  dmlc::JSONReader reader(&is);
  dmlc::any result;
  // dmlc's own message ("Error at Line 0, around ^``, Expect number") says nothing useful.
  std::string shown = text.size() > 80 ? text.substr(0, 77) + "..." : text;
  try {
    result = codec.read(&reader);
  } catch (const dmlc::Error&) {
    throw Error(StrCat("the value is not of type '", codec.name, "': ", shown));
  }
  std::string rest;
  std::getline(is, rest, '\0');
  IR_CHECK(rest.find_first_not_of(" \t\r\n") == std::string::npos)
      << "the value is not of type '" << codec.name << "': " << shown;
  return result;
}

// The codec of a typed value ["type_name", value]; nullptr when `value` has another form.
const GraphAttrType* TypedForm(const json::Value& value) {
  if (value.kind != json::Value::Kind::kArray || value.items.size() != 2 ||
      value.items[0].kind != json::Value::Kind::kString) {
    return nullptr;
  }
  return GraphAttrType::Find(value.items[0].text);
}

}  // namespace

namespace detail {

dmlc::any ReadTypedAttr(const std::string& key, const json::Value& value) {
  return WithJSONContext(StrCat("graph attribute '", key, "'"), [&]() {
    IR_CHECK(value.kind == json::Value::Kind::kArray && value.items.size() == 2 &&
             value.items[0].kind == json::Value::Kind::kString)
        << "expected [\"type\", value]";
    return ReadWithCodec(CodecNamed(key, value.items[0].text), value.items[1]);
  });
}

}  // namespace detail

dmlc::any AttrFromJSON(const std::string& key, const std::string& text) {
  json::Value value =
      detail::WithJSONContext(StrCat("graph attribute '", key, "'"), [&]() { return json::Parse(text); });
  if (TypedForm(value) != nullptr) return detail::ReadTypedAttr(key, value);
  const GraphAttrInfo* info = GraphAttrInfo::Find(key);
  const GraphAttrType* codec =
      info != nullptr && info->type != std::type_index(typeid(void)) ? FindCodec(info->type) : nullptr;
  if (codec == nullptr) return detail::ReadTypedAttr(key, value);
  return detail::WithJSONContext(StrCat("graph attribute '", key, "'"), [&]() { return ReadWithCodec(*codec, value); });
}

void CheckGraphAttrSize(const std::string& key, const dmlc::any& value, const IndexedGraph& idx) {
  const GraphAttrInfo* info = GraphAttrInfo::Find(key);
  const GraphAttrType* codec = GraphAttrType::Find(value.type());
  if (info == nullptr || info->index == AttrIndex::kGraph || codec == nullptr) return;
  const char* unit = AttrIndexName(info->index);
  long actual = codec->size(value);
  IR_CHECK(actual >= 0) << "graph attribute '" << key << "' is indexed by " << unit
                        << " and must be a list, got a value of type '" << codec->name << "'";
  size_t expected = info->index == AttrIndex::kNode ? idx.num_nodes() : idx.num_node_entries();
  IR_CHECK(static_cast<size_t>(actual) == expected)
      << "graph attribute '" << key << "' is indexed by " << unit << " and has " << actual
      << " elements, but the graph has " << expected << (info->index == AttrIndex::kNode ? " nodes" : " entries");
}

}  // namespace ir

namespace dmlc {
namespace json {
void Handler<ir::DType>::Write(JSONWriter* writer, const ir::DType& value) {
  writer->WriteString(ir::DTypeName(value));
}
void Handler<ir::DType>::Read(JSONReader* reader, ir::DType* value) {
  std::string name;
  reader->ReadString(&name);
  *value = ir::DTypeFromName(name);
}
}  // namespace json
}  // namespace dmlc

namespace ir {
IR_REGISTER_GRAPH_ATTR_TYPE(int, "int");
IR_REGISTER_GRAPH_ATTR_TYPE(int64_t, "long");
IR_REGISTER_GRAPH_ATTR_TYPE(double, "double");
IR_REGISTER_GRAPH_ATTR_TYPE(bool, "bool");
IR_REGISTER_GRAPH_ATTR_TYPE(std::string, "str");
IR_REGISTER_GRAPH_ATTR_TYPE(std::vector<int>, "list_int");
IR_REGISTER_GRAPH_ATTR_TYPE(std::vector<int64_t>, "list_long");
IR_REGISTER_GRAPH_ATTR_TYPE(std::vector<double>, "list_double");
IR_REGISTER_GRAPH_ATTR_TYPE(std::vector<std::string>, "list_str");
IR_REGISTER_GRAPH_ATTR_TYPE(Shape, "shape");
IR_REGISTER_GRAPH_ATTR_TYPE(ShapeVector, "list_shape");
IR_REGISTER_GRAPH_ATTR_TYPE(DType, "dtype");
IR_REGISTER_GRAPH_ATTR_TYPE(DTypeVector, "list_dtype");
}  // namespace ir
