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
    case AttrIndex::kGraph: return "graph";
    case AttrIndex::kNode: return "node";
    case AttrIndex::kEntry: return "entry";
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
  IR_CHECK(codec != nullptr) << "graph attribute '" << key << "' has type "
                             << detail::TypeName(value.type())
                             << ", which has no JSON codec (IR_REGISTER_GRAPH_ATTR_TYPE)";
  return *codec;
}

const GraphAttrType& CodecNamed(const std::string& key, const std::string& type_name) {
  const GraphAttrType* codec = GraphAttrType::Find(type_name);
  IR_CHECK(codec != nullptr) << "graph attribute '" << key << "': unknown attribute type '"
                             << type_name << "'";
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

dmlc::any ReadTypedAttrJSON(dmlc::JSONReader* reader, const std::string& key) {
  reader->BeginArray();
  IR_CHECK(reader->NextArrayItem()) << "graph attribute '" << key << "': expected [type, value]";
  std::string type_name;
  reader->Read(&type_name);
  const GraphAttrType& codec = CodecNamed(key, type_name);
  IR_CHECK(reader->NextArrayItem()) << "graph attribute '" << key << "': expected [type, value]";
  dmlc::any value = codec.read(reader);
  IR_CHECK(!reader->NextArrayItem()) << "graph attribute '" << key
                                     << "': expected [type, value], found extra items";
  return value;
}

std::string AttrToJSON(const std::string& key, const dmlc::any& value) {
  std::ostringstream os;
  dmlc::JSONWriter writer(&os);
  CodecOf(key, value).write(&writer, value);
  return os.str();
}

namespace {

// Reads one JSON value with `read` and checks nothing but spaces follow it.
dmlc::any ReadWhole(const std::string& json, const std::function<dmlc::any(dmlc::JSONReader*)>& read) {
  std::istringstream is(json);
  dmlc::JSONReader reader(&is);
  dmlc::any value = read(&reader);
  std::string rest;
  std::getline(is, rest, '\0');
  IR_CHECK(rest.find_first_not_of(" \t\r\n") == std::string::npos)
      << "trailing characters after JSON value: '" << rest << "'";
  return value;
}

}  // namespace

dmlc::any AttrFromJSON(const std::string& key, const std::string& json) {
  return detail::WithJSONContext(StrCat("graph attribute '", key, "'"), [&]() {
    auto typed = [&key](dmlc::JSONReader* reader) { return ReadTypedAttrJSON(reader, key); };
    const GraphAttrInfo* info = GraphAttrInfo::Find(key);
    const GraphAttrType* codec =
        info != nullptr && info->type != std::type_index(typeid(void)) ? FindCodec(info->type) : nullptr;
    if (codec == nullptr) return ReadWhole(json, typed);
    // A registered key takes its bare value; the typed form is accepted too.
    try {
      return ReadWhole(json, codec->read);
    } catch (const std::exception&) {
      return ReadWhole(json, typed);
    }
  });
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
