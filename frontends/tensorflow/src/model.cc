/*!
 * \file model.cc
 * \brief Reading TensorFlow models from disk: GraphDef (binary or text), MetaGraphDef and
 * SavedModel, with the signature and checkpoint that come with them.
 */
#include "ir_tf/model.h"

#include <deque>

#include "file_util.h"
#include "ir/base.h"
#include "ir_tf_graph.pb.h"
#include "ir_tf_meta_graph.pb.h"
#include "ir_tf_saved_model.pb.h"
#include "proto_parse.h"
#include "tf_types.h"

namespace ir {
namespace tf {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/*! \brief The signature's inputs and outputs (tensor names) from a MetaGraphDef. */
void ReadSignature(const tfproto::MetaGraphDef& meta, const std::string& wanted, TFModel* model) {
  if (meta.signature_def().empty() && wanted.empty()) return;
  std::string name = wanted.empty() ? "serving_default" : wanted;
  auto it = meta.signature_def().find(name);
  if (it == meta.signature_def().end()) {
    if (wanted.empty()) return;
    std::vector<std::string> names;
    for (const auto& kv : meta.signature_def()) names.push_back(kv.first);
    throw Error(StrCat("'", model->path, "' has no signature '", name,
                       "' (it has: ", names.empty() ? std::string("none") : Join(names, ", "), ")"));
  }
  model->signature = name;
  for (const auto& kv : it->second.inputs()) model->signature_inputs[kv.first] = kv.second.name();
  for (const auto& kv : it->second.outputs()) model->signature_outputs[kv.first] = kv.second.name();
}

/*! \brief Saved object id -> checkpoint key of each variable: "<path of child names>/.ATTRIBUTES/VARIABLE_VALUE". */
std::map<int, std::string> VariableKeys(const tfproto::SavedObjectGraph& objects) {
  std::map<int, std::string> paths{{0, ""}}, keys;
  std::deque<int> queue{0};
  while (!queue.empty()) {
    int id = queue.front();
    queue.pop_front();
    if (id < 0 || id >= objects.nodes_size()) continue;
    const auto& node = objects.nodes(id);
    if (node.has_variable()) keys[id] = paths[id] + "/.ATTRIBUTES/VARIABLE_VALUE";
    for (const auto& child : node.children()) {
      if (paths.count(child.node_id())) continue;
      paths[child.node_id()] = paths[id].empty() ? child.local_name() : paths[id] + "/" + child.local_name();
      queue.push_back(child.node_id());
    }
  }
  return keys;
}

/*!
 * \brief Which graph node is which checkpointed variable: the inputs a function call captures
 * are its concrete function's bound inputs (saved object ids); a VarHandleOp whose shared_name
 * is a saved variable's name is that variable.
 */
void MapCheckpointKeys(const tfproto::MetaGraphDef& meta, TFModel* model) {
  const auto& objects = meta.object_graph_def();
  std::map<int, std::string> keys = VariableKeys(objects);
  std::map<std::string, std::string> by_name;
  for (const auto& kv : keys) by_name[objects.nodes(kv.first).variable().name()] = kv.second;
  for (const tfproto::NodeDef& node : meta.graph_def().node()) {
    auto shared = node.attr().find("shared_name");
    if (node.op() == "VarHandleOp" && shared != node.attr().end() && by_name.count(shared->second.s())) {
      model->checkpoint_keys[node.name()] = by_name[shared->second.s()];
    }
    auto f = node.attr().find("f");
    if (f == node.attr().end() || !objects.concrete_functions().count(f->second.func().name())) continue;
    const auto& bound = objects.concrete_functions().at(f->second.func().name()).bound_inputs();
    std::vector<std::string> data;
    for (const std::string& in : node.input()) {
      if (in.rfind('^', 0) != 0) data.push_back(in.substr(0, in.find(':')));
    }
    // The captured (bound) inputs are the call's last data inputs.
    IR_CHECK(data.size() >= static_cast<size_t>(bound.size()))
        << "'" << model->path << "': node '" << node.name() << "' (op " << node.op() << ") calls function '"
        << f->second.func().name() << "' with " << data.size() << " data inputs, fewer than its " << bound.size()
        << " bound inputs";
    size_t first_bound = data.size() - static_cast<size_t>(bound.size());
    for (int j = 0; j < bound.size(); ++j) {
      auto key = keys.find(bound[j]);
      if (key != keys.end()) model->checkpoint_keys[data[first_bound + static_cast<size_t>(j)]] = key->second;
    }
  }
}

TFModel FromMetaGraph(const tfproto::MetaGraphDef& meta, const std::string& path, const std::string& format,
                      const std::string& signature) {
  TFModel model;
  model.path = path;
  model.format = format;
  IR_CHECK(meta.graph_def().SerializeToString(&model.graph_def)) << "'" << path << "': cannot serialize its GraphDef";
  ReadSignature(meta, signature, &model);
  MapCheckpointKeys(meta, &model);
  return model;
}

TFModel LoadSavedModel(const std::string& dir, const std::string& signature) {
  tfproto::SavedModel saved;
  std::string pb = dir + "/saved_model.pb", pbtxt = dir + "/saved_model.pbtxt";
  if (FileExists(pb)) {
    IR_CHECK(ParseBinary(ReadFile(pb), &saved))
        << "'" << pb << "' is not a valid SavedModel (truncated or not protobuf)";
  } else {
    IR_CHECK(FileExists(pbtxt)) << "'" << dir << "' is a directory without saved_model.pb: not a SavedModel";
    std::string error = ParseText(ReadFile(pbtxt), &saved);
    IR_CHECK(error.empty()) << "'" << pbtxt << "' is not a valid SavedModel: " << error;
  }
  IR_CHECK(saved.meta_graphs_size() > 0) << "'" << dir << "' holds no MetaGraphDef";
  const tfproto::MetaGraphDef* chosen = &saved.meta_graphs(0);
  for (const auto& meta : saved.meta_graphs()) {
    for (const std::string& tag : meta.meta_info_def().tags()) {
      if (tag == "serve") chosen = &meta;
    }
  }
  TFModel model = FromMetaGraph(*chosen, dir, "saved_model", signature.empty() ? "serving_default" : signature);
  std::string prefix = dir + "/variables/variables";
  if (FileExists(prefix + ".index")) model.checkpoint_prefix = prefix;
  return model;
}

TFModel LoadMetaGraph(const std::string& path, const std::string& signature) {
  tfproto::MetaGraphDef meta;
  IR_CHECK(ParseBinary(ReadFile(path), &meta))
      << "'" << path << "' is not a valid MetaGraphDef (truncated or not protobuf)";
  TFModel model = FromMetaGraph(meta, path, "meta", signature);
  std::string prefix = path.substr(0, path.size() - 5);
  if (FileExists(prefix + ".index")) model.checkpoint_prefix = prefix;
  return model;
}

}  // namespace

bool IsSavedModelFile(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return base == "saved_model.pb" || base == "saved_model.pbtxt";
}

std::string TFModel::ResolveName(const std::string& name) const {
  auto in = signature_inputs.find(name);
  if (in != signature_inputs.end()) return in->second;
  auto out = signature_outputs.find(name);
  return out != signature_outputs.end() ? out->second : name;
}

InputSpec FindInputSpec(const TFModel& model, const std::string& name) {
  std::string node = model.ResolveName(name);
  node = node.substr(0, node.find(':'));
  tfproto::GraphDef graph;
  IR_CHECK(ParseBinary(model.graph_def, &graph)) << "the model's GraphDef does not parse";
  for (const tfproto::NodeDef& def : graph.node()) {
    if (def.name() != node) continue;
    InputSpec spec;
    auto shape = def.attr().find("shape");
    if (shape != def.attr().end() && shape->second.has_shape()) spec.shape = ToShape(shape->second.shape());
    for (const char* key : {"dtype", "T"}) {
      auto type = def.attr().find(key);
      if (type != def.attr().end() && spec.dtype == DType::kUnknown) spec.dtype = ToDType(type->second.type());
    }
    return spec;
  }
  throw Error(StrCat("the graph has no node '", node, "'"));
}

std::vector<std::string> NodeNames(const TFModel& model) {
  tfproto::GraphDef graph;
  IR_CHECK(ParseBinary(model.graph_def, &graph)) << "the model's GraphDef does not parse";
  std::vector<std::string> names;
  for (const tfproto::NodeDef& node : graph.node()) names.push_back(node.name());
  return names;
}

TFModel ModelFromBinary(const std::string& bytes, const std::string& origin) {
  tfproto::GraphDef graph;
  IR_CHECK(ParseBinary(bytes, &graph)) << "'" << origin
                                       << "' is not a valid binary GraphDef (truncated or not protobuf)";
  TFModel model;
  model.path = origin;
  model.format = "pb";
  model.graph_def = bytes;
  return model;
}

TFModel ModelFromText(const std::string& text, const std::string& origin) {
  tfproto::GraphDef graph;
  std::string error = ParseText(text, &graph);
  IR_CHECK(error.empty()) << "'" << origin << "' is not a valid text GraphDef: " << error;
  TFModel model;
  model.path = origin;
  model.format = "pbtxt";
  IR_CHECK(graph.SerializeToString(&model.graph_def)) << "'" << origin << "': cannot serialize its GraphDef";
  return model;
}

TFModel LoadModel(const std::string& path, const std::string& signature) {
  if (IsDirectory(path)) return LoadSavedModel(path, signature);
  IR_CHECK(PathExists(path)) << "'" << path << "' does not exist";  // ReadFile rejects FIFOs, devices...
  if (IsSavedModelFile(path)) {  // the SavedModel's own file: load the SavedModel it belongs to
    size_t slash = path.rfind('/');
    return LoadSavedModel(slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash), signature);
  }
  if (EndsWith(path, ".meta")) return LoadMetaGraph(path, signature);
  IR_CHECK(signature.empty()) << "'" << path << "' is a GraphDef: it has no signatures (a SavedModel or .meta has)";
  std::string bytes = ReadFile(path);
  bool text = EndsWith(path, ".pbtxt") || EndsWith(path, ".txt") || EndsWith(path, ".prototxt");
  if (text) return ModelFromText(bytes, path);
  tfproto::GraphDef probe;
  if (ParseBinary(bytes, &probe)) return ModelFromBinary(bytes, path);
  std::string error = ParseText(bytes, &probe);
  IR_CHECK(error.empty()) << "'" << path
                          << "' is neither a binary GraphDef (truncated or not protobuf) nor a text one (" << error
                          << ")";
  return ModelFromText(bytes, path);
}

}  // namespace tf
}  // namespace ir
