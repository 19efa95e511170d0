/*!
 * \file function_inline.cc
 * \brief Inlining TF2 function calls into the calling graph.
 */
#include "function_inline.h"

#include <algorithm>
#include <map>
#include <string>

#include "function_library.h"
#include "ir/base.h"

namespace ir {
namespace tf {
namespace {

using tfproto::FunctionDef;
using tfproto::NodeDef;

constexpr int kMaxDepth = 32;
constexpr size_t kMaxNodes = 1 << 18;

/*!
 * \brief Output argument names of TF ops with several output arguments, in order; every other
 * op has one output argument (possibly a list), where out_arg:i is output i.
 */
const std::map<std::string, std::vector<std::string>>& MultiOutputArgs() {
  static const std::map<std::string, std::vector<std::string>> table = {
      {"SoftmaxCrossEntropyWithLogits", {"loss", "backprop"}},
      {"SparseSoftmaxCrossEntropyWithLogits", {"loss", "backprop"}},
      {"BroadcastGradientArgs", {"r0", "r1"}},
      {"FusedBatchNorm", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV2", {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2"}},
      {"FusedBatchNormV3",
       {"y", "batch_mean", "batch_variance", "reserve_space_1", "reserve_space_2", "reserve_space_3"}},
      {"TopKV2", {"values", "indices"}},
      {"Unique", {"y", "idx"}},
      {"TensorListPopBack", {"output_handle", "tensor"}},
      {"TensorListConcat", {"tensor", "lengths"}},
      {"TensorListConcatV2", {"tensor", "lengths"}},
  };
  return table;
}

bool IsCallOp(const std::string& op) { return op == "PartitionedCall" || op == "StatefulPartitionedCall"; }

class Inliner {
 public:
  explicit Inliner(const tfproto::FunctionDefLibrary& library) : functions_(LibraryFunctions(library)) {}

  template <typename Nodes>
  std::vector<NodeDef> Run(const Nodes& nodes) {
    for (const NodeDef& node : nodes) Emit(node, 0);
    return std::move(out_);
  }

 private:
  /*! \brief The function a node calls, or nullptr when it is an ordinary op. */
  const FunctionDef* Callee(const NodeDef& node) const {
    std::string name = node.op();
    if (IsCallOp(node.op())) {
      auto it = node.attr().find("f");
      IR_CHECK(it != node.attr().end() && it->second.has_func())
          << "node '" << node.name() << "' (op " << node.op() << ") has no function attribute 'f'";
      name = it->second.func().name();
    }
    auto fn = functions_.find(name);
    IR_CHECK(fn != functions_.end() || !IsCallOp(node.op()))
        << "node '" << node.name() << "' (op " << node.op() << ") calls function '" << name
        << "', which the graph's library does not define";
    return fn == functions_.end() ? nullptr : fn->second;
  }

  void Emit(const NodeDef& node, int depth) {
    IR_CHECK(out_.size() < kMaxNodes) << "the graph has more than " << kMaxNodes << " nodes after inlining functions";
    const FunctionDef* fn = Callee(node);
    if (fn == nullptr) {
      out_.push_back(node);
      return;
    }
    IR_CHECK(depth < kMaxDepth) << "node '" << node.name() << "' calls function '" << fn->signature().name()
                                << "' more than " << kMaxDepth << " calls deep (recursive functions are not supported)";
    Inline(node, *fn, depth);
  }

  void Inline(const NodeDef& call, const FunctionDef& fn, int depth);
  std::string Rename(const std::string& ref, const std::string& prefix, const FunctionDef& fn,
                     const std::map<std::string, std::string>& body_ops) const;

  std::map<std::string, const FunctionDef*> functions_;
  std::vector<NodeDef> out_;
};

/*! \brief A body reference in the flattened graph: "x" (argument), "n:out:i" -> "<p>n:k", "^n" -> "^<p>n". */
std::string Inliner::Rename(const std::string& ref, const std::string& prefix, const FunctionDef& fn,
                            const std::map<std::string, std::string>& body_ops) const {
  if (!ref.empty() && ref[0] == '^') return "^" + prefix + ref.substr(1);
  size_t first = ref.find(':');
  if (first == std::string::npos) return prefix + ref;
  std::string node = ref.substr(0, first);
  size_t second = ref.find(':', first + 1);
  IR_CHECK(second != std::string::npos) << "function '" << fn.signature().name() << "': input '" << ref
                                        << "' is not of the form node:out_arg:index";
  std::string arg = ref.substr(first + 1, second - first - 1);
  std::string index_text = ref.substr(second + 1);
  IR_CHECK(!index_text.empty() && index_text.size() < 10 &&
           index_text.find_first_not_of("0123456789") == std::string::npos)
      << "function '" << fn.signature().name() << "': input '" << ref << "' has a bad output index";
  int index = std::stoi(index_text);
  auto op = body_ops.find(node);
  IR_CHECK(op != body_ops.end()) << "function '" << fn.signature().name() << "': input '" << ref
                                 << "' names no node of the function";
  auto callee = functions_.find(op->second);
  const auto& multi = MultiOutputArgs();
  auto args = multi.find(op->second);
  int offset = 0;
  if (callee != functions_.end()) {
    const auto& outs = callee->second->signature().output_arg();
    int k = 0;
    while (k < outs.size() && outs[k].name() != arg) ++k;
    IR_CHECK(k < outs.size()) << "function '" << fn.signature().name() << "': input '" << ref << "': function '"
                              << op->second << "' has no output '" << arg << "'";
    offset = k;
  } else if (args != multi.end()) {
    const std::vector<std::string>& names = args->second;
    auto pos = std::find(names.begin(), names.end(), arg);
    IR_CHECK(pos != names.end()) << "function '" << fn.signature().name() << "': input '" << ref << "': op "
                                 << op->second << " has no output '" << arg << "'";
    offset = static_cast<int>(pos - names.begin());
  }
  return StrCat(prefix, node, ":", offset + index);
}

void Inliner::Inline(const NodeDef& call, const FunctionDef& fn, int depth) {
  const std::string prefix = call.name() + "/";
  const auto& sig = fn.signature();
  std::vector<std::string> data, control;
  for (const std::string& in : call.input()) (in.rfind('^', 0) == 0 ? control : data).push_back(in);
  IR_CHECK(static_cast<int>(data.size()) == sig.input_arg_size())
      << "node '" << call.name() << "' passes " << data.size() << " inputs to function '" << sig.name()
      << "', which takes " << sig.input_arg_size();
  for (int i = 0; i < sig.input_arg_size(); ++i) {
    NodeDef arg;
    arg.set_name(prefix + sig.input_arg(i).name());
    arg.set_op("Identity");
    arg.add_input(data[i]);
    Emit(arg, depth + 1);
  }
  std::map<std::string, std::string> body_ops;
  for (const NodeDef& node : fn.node_def()) body_ops[node.name()] = node.op();
  const auto* bound = IsCallOp(call.op()) ? &call.attr().at("f").func().attr() : &call.attr();
  for (const NodeDef& body : fn.node_def()) {
    NodeDef node = body;
    node.set_name(prefix + body.name());
    node.clear_input();
    for (const std::string& in : body.input()) node.add_input(Rename(in, prefix, fn, body_ops));
    if (body.input().empty()) {
      for (const std::string& c : control) node.add_input(c);
    }
    for (auto& kv : *node.mutable_attr()) {
      if (!kv.second.placeholder().empty() && bound->count(kv.second.placeholder())) {
        kv.second = bound->at(kv.second.placeholder());
      }
    }
    Emit(node, depth + 1);
  }
  NodeDef results;
  results.set_name(call.name());
  results.set_op("IdentityN");
  for (const auto& out : sig.output_arg()) {
    auto ret = fn.ret().find(out.name());
    IR_CHECK(ret != fn.ret().end()) << "function '" << sig.name() << "' does not say which tensor its output '"
                                    << out.name() << "' is";
    results.add_input(Rename(ret->second, prefix, fn, body_ops));
  }
  for (const auto& kv : fn.control_ret()) results.add_input("^" + prefix + kv.second);
  out_.push_back(results);
}

}  // namespace

std::vector<NodeDef> InlineFunctions(const tfproto::GraphDef& graph) {
  return Inliner(graph.library()).Run(graph.node());
}

std::vector<NodeDef> InlineFunctions(const std::vector<NodeDef>& nodes, const tfproto::FunctionDefLibrary& library) {
  return Inliner(library).Run(nodes);
}

}  // namespace tf
}  // namespace ir
