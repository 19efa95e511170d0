/*!
 * \file node.cc
 * \brief Node creation (attribute parsing, signature checks) and iterative destruction.
 */
#include "ir/node.h"

#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {

namespace {

bool IsHiddenKey(const std::string& key) {
  return key.size() > 4 && key.compare(0, 2, "__") == 0 && key.compare(key.size() - 2, 2, "__") == 0;
}

// Runs the op's parser with errors that name the op and the node.
void ParseAttrs(NodeAttrs* attrs) {
  const Op* op = attrs->op;
  if (!op->attr_parser) {
    for (const auto& kv : attrs->dict) {
      IR_CHECK(IsHiddenKey(kv.first)) << "op '" << op->name << "' (node '" << attrs->name
                                      << "') takes no parameters, got '" << kv.first << "'";
    }
    return;
  }
  try {
    op->attr_parser(attrs);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& err) {
    detail::ThrowParamError(*attrs, err);
  }
}

}  // namespace

Node::~Node() {
  // Destroying a long chain recursively would overflow the stack; unlink it instead.
  std::vector<NodePtr> orphans;
  auto unlink = [&orphans](Node* node) {
    for (NodeEntry& entry : node->inputs) {
      if (entry.node && entry.node.use_count() == 1) orphans.push_back(std::move(entry.node));
    }
    for (NodePtr& dep : node->control_deps) {
      if (dep && dep.use_count() == 1) orphans.push_back(std::move(dep));
    }
    node->inputs.clear();
    node->control_deps.clear();
  };
  unlink(this);
  while (!orphans.empty()) {
    NodePtr node = std::move(orphans.back());
    orphans.pop_back();
    unlink(node.get());
  }
}

void Node::ReparseAttrs() {
  if (!is_variable()) ParseAttrs(&attrs);
}

std::string NodeDesc(const NodeAttrs& attrs) {
  return StrCat("node '", attrs.name, "' (op ", attrs.op ? attrs.op->name : std::string("variable"), ")");
}

std::map<std::string, std::string> SavedAttrs(const NodeAttrs& attrs) {
  std::map<std::string, std::string> dict = attrs.dict;
  const auto* save = Op::FindAttr<FSaveAttrs>("FSaveAttrs");
  if (attrs.op != nullptr && save != nullptr && save->count(attrs.op)) (*save)[attrs.op](attrs, &dict);
  return dict;
}

uint32_t Node::num_outputs() const { return is_variable() ? 1 : attrs.op->OutputCount(attrs); }

NodePtr Node::Create() { return std::make_shared<Node>(); }

NodePtr Node::Create(const Op* op, const std::string& name, const std::map<std::string, std::string>& dict,
                     std::vector<NodeEntry> inputs, std::vector<std::shared_ptr<const Subgraph>> subgraphs) {
  IR_CHECK(op != nullptr) << "Node::Create: null op for node '" << name << "'";
  NodePtr node = Create();
  node->attrs.op = op;
  node->attrs.name = name;
  node->attrs.dict = dict;
  node->attrs.subgraphs = std::move(subgraphs);
  for (size_t i = 0; i < node->attrs.subgraphs.size(); ++i) {
    IR_CHECK(node->attrs.subgraphs[i] != nullptr) << NodeDesc(node->attrs) << ": body " << i << " is null";
  }
  ParseAttrs(&node->attrs);
  uint32_t expected = op->InputCount(node->attrs);
  IR_CHECK(expected == kVariadic || expected == inputs.size())
      << "op '" << op->name << "' (node '" << name << "') takes " << expected << " input" << (expected == 1 ? "" : "s")
      << ", got " << inputs.size();
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodeEntry& in = inputs[i];
    IR_CHECK(in.node != nullptr) << "op '" << op->name << "' (node '" << name << "'): input " << i << " is null";
    IR_CHECK(in.index < in.node->num_outputs())
        << "op '" << op->name << "' (node '" << name << "'): input " << i << " refers to output " << in.index
        << " of node '" << in.node->attrs.name << "', which has " << in.node->num_outputs() << " output(s)";
  }
  node->inputs = std::move(inputs);
  return node;
}

NodePtr Node::CreateVariable(const std::string& name, const std::map<std::string, std::string>& dict) {
  NodePtr node = Create();
  node->attrs.name = name;
  node->attrs.dict = dict;
  return node;
}

NodeEntry MakeNode(const std::string& op_name, const std::string& node_name, std::vector<NodeEntry> inputs,
                   const std::map<std::string, std::string>& dict, uint32_t index) {
  return NodeEntry{Node::Create(Op::Get(op_name), node_name, dict, std::move(inputs)), index};
}

}  // namespace ir
