/*!
 * \file coexistence_main.cc
 * \brief ir-tf-proto-coexistence: the TensorFlow frontend's protos beside TensorFlow's own in one
 * process. Another library may register TensorFlow's tensor_shape.proto (package tensorflow) with
 * the same protobuf runtime: OpenCV's dnn module does, and Debian's PyTorch loads it, so
 * `import torch` next to tinyflow aborted in protobuf ("File already exists in database:
 * tensor_shape.proto") when the frontend's files had TensorFlow's names. They are ir_tf_*.proto
 * in package ir.tfproto now. Whether protobuf's generated pool notices a clash depends on the
 * order of registrations and lookups, so the check builds every file of both into one fresh
 * DescriptorPool, which rejects a second file of a name and a second definition of a symbol
 * alike; then it uses both libraries' messages in this process. Exits 0 when all holds.
 */
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>

#include <cstdio>
#include <set>
#include <string>

#include "ir/graph.h"
#include "ir_tf/import.h"
#include "ir_tf_event.pb.h"
#include "ir_tf_graph.pb.h"
#include "ir_tf_saved_model.pb.h"
#include "ir_tf_tensor_bundle.pb.h"
#include "tensor_shape.pb.h"

namespace {

namespace pb = google::protobuf;

/*! \brief Builds `file` and its dependencies (once each, by identity) into `pool`; false on a clash. */
bool Add(const pb::FileDescriptor* file, pb::DescriptorPool* pool, std::set<const pb::FileDescriptor*>* added) {
  if (!added->insert(file).second) return true;
  for (int i = 0; i < file->dependency_count(); ++i) {
    if (!Add(file->dependency(i), pool, added)) return false;
  }
  pb::FileDescriptorProto proto;
  file->CopyTo(&proto);
  if (pool->BuildFile(proto) == nullptr) {
    std::fprintf(stderr, "%s (package %s) clashes with a file already in the process\n", file->name().c_str(),
                 file->package().c_str());
    return false;
  }
  return true;
}

}  // namespace

int main() {
  pb::DescriptorPool pool;
  std::set<const pb::FileDescriptor*> added;
  // TensorFlow's file first, as the other library registers it, then every file of the frontend.
  const pb::FileDescriptor* roots[] = {
      tensorflow::TensorShapeProto::descriptor()->file(), ir::tfproto::SavedModel::descriptor()->file(),
      ir::tfproto::Event::descriptor()->file(), ir::tfproto::BundleHeaderProto::descriptor()->file()};
  for (const pb::FileDescriptor* root : roots) {
    if (!Add(root, &pool, &added)) return 1;
  }
  // Both libraries' messages in use in this process: theirs round-trips, a GraphDef of ours imports.
  tensorflow::TensorShapeProto theirs, parsed;
  theirs.add_dim()->set_size(3);
  if (!parsed.ParseFromString(theirs.SerializeAsString()) || parsed.dim_size() != 1 || parsed.dim(0).size() != 3) {
    std::fprintf(stderr, "the other library's TensorShapeProto did not round-trip\n");
    return 1;
  }
  ir::tfproto::GraphDef graph_def;
  ir::tfproto::NodeDef* node = graph_def.add_node();
  node->set_name("x");
  node->set_op("Placeholder");
  (*node->mutable_attr())["dtype"].set_type(ir::tfproto::DT_FLOAT);
  ir::Graph graph = ir::tf::ImportGraphDef(graph_def.SerializeAsString());
  std::printf("%zu files built into one pool beside %s; imported %zu node(s)\n", added.size(),
              tensorflow::TensorShapeProto::descriptor()->file()->name().c_str(), graph.indexed_graph().num_nodes());
  return graph.indexed_graph().num_nodes() == 1 ? 0 : 1;
}
