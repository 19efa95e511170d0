/*!
 * \file import_pass.cc
 * \brief The TFImport pass (GraphDef -> Graph) and the import API around it.
 *
 * The pass starts from an empty graph carrying the GraphDef and the import options as
 * attributes (see ir_tf/import.h), so it is applied, checked, timed and dumped like any pass.
 */
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "convert_functional.h"
#include "converter.h"
#include "function_inline.h"
#include "function_library.h"
#include "graph_importer.h"
#include "ir/graph_attr.h"
#include "ir/pass.h"
#include "ir_tf/import.h"
#include "ir_tf_graph.pb.h"
#include "proto_parse.h"

namespace ir {
namespace tf {
namespace {

tfproto::GraphDef ParseGraphDef(const std::string& bytes) {
  tfproto::GraphDef graph;
  IR_CHECK(ParseBinary(bytes, &graph)) << "tf.graph_def does not hold a valid binary GraphDef";
  return graph;
}

/*! \brief A feed name without the ":0" a tensor name may carry. */
std::string FeedNode(const std::string& name) {
  return name.size() > 2 && name.compare(name.size() - 2, 2, ":0") == 0 ? name.substr(0, name.size() - 2) : name;
}

ImportSpec SpecOf(const Graph& graph) {
  ImportSpec spec;
  spec.outputs = graph.GetAttrOr<std::vector<std::string>>("tf.outputs", {});
  auto names = graph.GetAttrOr<std::vector<std::string>>("tf.feed_names", {});
  auto shapes = graph.GetAttrOr<ShapeVector>("tf.feed_shapes", {});
  IR_CHECK(names.size() == shapes.size())
      << "tf.feed_names has " << names.size() << " names but tf.feed_shapes " << shapes.size() << " shapes";
  for (size_t i = 0; i < names.size(); ++i) spec.feed_shapes[FeedNode(names[i])] = shapes[i];
  spec.max_const_bytes = GetPassOption<int>(graph, "tf.max_const_bytes", 1 << 30);
  return spec;
}

Graph TFImport(Graph src) {
  tfproto::GraphDef graph_def = ParseGraphDef(src.GetAttr<std::string>("tf.graph_def"));
  ImportSpec spec = SpecOf(src);
  spec.producer = graph_def.versions().producer();
  spec.functions = std::make_shared<FunctionScope>(graph_def.library());
  GraphImporter importer(InlineFunctions(graph_def), spec);
  std::vector<std::string> names;
  Graph result = importer.Import(&names);
  result.attrs = src.attrs;
  result.attrs.erase("tf.graph_def");
  result.SetAttr("tf.output_names", std::move(names));
  return result;
}

}  // namespace

IR_REGISTER_GRAPH_ATTR("tf.graph_def")
    .describe("TFImport input: the TensorFlow GraphDef to import, as binary protobuf.")
    .set_type<std::string>()
    .set_in_dump(false);
IR_REGISTER_GRAPH_ATTR("tf.outputs")
    .describe("TFImport input: TF tensors (\"n\", \"n:1\") and nodes (\"^n\") to import; empty = all.")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("tf.feed_names")
    .describe("TFImport input: TF tensors that will be fed (aligned with tf.feed_shapes).")
    .set_type<std::vector<std::string>>();
IR_REGISTER_GRAPH_ATTR("tf.feed_shapes").describe("TFImport input: shapes of the fed tensors.").set_type<ShapeVector>();
IR_REGISTER_GRAPH_ATTR("tf.output_names")
    .describe("TFImport output: the TF name of each graph output.")
    .set_type<std::vector<std::string>>();

IR_REGISTER_PASS(TFImport)
    .describe(
        "Imports the TensorFlow GraphDef in graph attribute tf.graph_def: converts the nodes "
        "tf.outputs need through the converter table (functions inlined, shape-computed "
        "values folded) and returns a graph whose outputs are those tensors.")
    .set_change_graph(true)
    .set_body(TFImport)
    .depend_graph_attr("tf.graph_def")
    .provide_graph_attr("tf.output_names");

Graph ImportGraphDef(const std::string& graph_def, const ImportOptions& options) {
  Graph start;
  start.SetAttr("tf.graph_def", graph_def);
  start.SetAttr("tf.outputs", options.outputs);
  std::vector<std::string> names;
  ShapeVector shapes;
  for (const auto& kv : options.feed_shapes) {
    names.push_back(kv.first);
    shapes.push_back(kv.second);
  }
  start.SetAttr("tf.feed_names", std::move(names));
  start.SetAttr("tf.feed_shapes", std::move(shapes));
  start.SetAttr("tf.max_const_bytes", options.max_const_bytes);
  if (!options.dump_dir.empty()) start.SetAttr("dump_dir", options.dump_dir);
  return ApplyPass(std::move(start), "TFImport");
}

std::vector<std::pair<std::string, std::string>> ListUnsupported(const std::string& graph_def) {
  tfproto::GraphDef graph = ParseGraphDef(graph_def);
  std::map<std::string, const tfproto::FunctionDef*> library = LibraryFunctions(graph.library());
  std::vector<std::pair<std::string, std::string>> missing;
  std::set<std::string> visited;
  // Top-level nodes, then the bodies of the functional ops (If, While, Case) they reach, each once.
  std::function<void(const std::vector<tfproto::NodeDef>&, const std::string&)> walk =
      [&](const std::vector<tfproto::NodeDef>& nodes, const std::string& prefix) {
        for (const tfproto::NodeDef& node : nodes) {
          if (FindConverter(node.op()) == nullptr) missing.emplace_back(prefix + node.name(), node.op());
          for (const auto& attr : node.attr()) {
            std::vector<std::string> functions;
            if (attr.second.has_func()) functions.push_back(attr.second.func().name());
            for (const auto& f : attr.second.list().func()) functions.push_back(f.name());
            for (const std::string& name : functions) {
              auto fn = library.find(name);
              if (!visited.insert(name).second || fn == library.end()) continue;
              std::vector<tfproto::NodeDef> body(fn->second->node_def().begin(), fn->second->node_def().end());
              walk(InlineFunctions(body, graph.library()), name + "/");
            }
          }
        }
      };
  walk(InlineFunctions(graph), "");
  return missing;
}

std::vector<std::string> SupportedOps() {
  std::vector<std::string> names = ConverterNames();
  names.erase(std::remove_if(names.begin(), names.end(), [](const std::string& n) { return n.rfind("__", 0) == 0; }),
              names.end());
  return names;
}

}  // namespace tf
}  // namespace ir
