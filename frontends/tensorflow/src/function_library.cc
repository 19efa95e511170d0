/*!
 * \file function_library.cc
 * \brief Admitting a function library as TensorFlow does: duplicates must be equal.
 */
#include "function_library.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <algorithm>

#include "converter.h"
#include "ir/base.h"

namespace ir {
namespace tf {
namespace {

/*! \brief `message`'s bytes with map entries in key order, so equal messages give equal bytes. */
std::string DeterministicBytes(const google::protobuf::Message& message) {
  std::string bytes;
  {
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return bytes;
}

/*!
 * \brief `fn` in the form TensorFlow's FunctionDefsEqual compares: signature attrs by name,
 * unset function attrs dropped, body nodes by name with their control inputs sorted and their
 * internal attributes dropped; argument attributes are not compared.
 */
std::string CanonicalBytes(tfproto::FunctionDef fn) {
  auto* sig_attrs = fn.mutable_signature()->mutable_attr();
  std::sort(sig_attrs->begin(), sig_attrs->end(),
            [](const tfproto::OpDef::AttrDef& a, const tfproto::OpDef::AttrDef& b) { return a.name() < b.name(); });
  for (auto it = fn.mutable_attr()->begin(); it != fn.mutable_attr()->end();) {
    it = it->second.value_case() == tfproto::AttrValue::VALUE_NOT_SET ? fn.mutable_attr()->erase(it) : ++it;
  }
  fn.clear_arg_attr();
  fn.clear_resource_arg_unique_id();
  auto* nodes = fn.mutable_node_def();
  std::sort(nodes->begin(), nodes->end(),
            [](const tfproto::NodeDef& a, const tfproto::NodeDef& b) { return a.name() < b.name(); });
  for (tfproto::NodeDef& node : *nodes) {
    auto* inputs = node.mutable_input();
    auto control = std::stable_partition(inputs->begin(), inputs->end(),
                                         [](const std::string& in) { return in.empty() || in[0] != '^'; });
    std::sort(control, inputs->end());
    for (auto it = node.mutable_attr()->begin(); it != node.mutable_attr()->end();) {
      it = !it->first.empty() && it->first[0] == '_' ? node.mutable_attr()->erase(it) : ++it;
    }
  }
  return DeterministicBytes(fn);
}

/*! \brief Gradient functions must not conflict either (TensorFlow's AddGradientDef). */
void CheckGradients(const tfproto::FunctionDefLibrary& library) {
  std::map<std::string, std::string> gradients;
  for (const tfproto::GradientDef& grad : library.gradient()) {
    auto added = gradients.emplace(grad.function_name(), grad.gradient_func());
    IR_CHECK(added.second || added.first->second == grad.gradient_func())
        << "Cannot assign gradient function '" << grad.gradient_func() << "' to '" << grad.function_name()
        << "' because it already has gradient function '" << added.first->second << "'";
  }
}

}  // namespace

std::map<std::string, const tfproto::FunctionDef*> LibraryFunctions(const tfproto::FunctionDefLibrary& library) {
  std::map<std::string, const tfproto::FunctionDef*> functions;
  for (const tfproto::FunctionDef& fn : library.function()) {
    const std::string& name = fn.signature().name();
    auto added = functions.emplace(name, &fn);
    if (added.second) {
      IR_CHECK(FindConverter(name) == nullptr)
          << "Cannot add function '" << name << "' because an op with the same name already exists.";
      continue;
    }
    IR_CHECK(CanonicalBytes(*added.first->second) == CanonicalBytes(fn))
        << "Cannot add function '" << name << "' because a different function with the same name already exists.";
  }
  CheckGradients(library);
  return functions;
}

}  // namespace tf
}  // namespace ir
