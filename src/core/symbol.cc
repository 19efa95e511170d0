/*!
 * \file symbol.cc
 * \brief Symbol composition, listing and copying.
 */
#include "ir/symbol.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"
#include "ir/graph_io.h"
#include "ir/op.h"
#include "ir/op_attr_types.h"

namespace ir {

namespace {

std::vector<std::string> InputNamesOf(const NodeAttrs& attrs, uint32_t count) {
  const auto* fnames = Op::FindAttr<FListInputNames>("FListInputNames");
  std::vector<std::string> names;
  if (fnames != nullptr && fnames->count(attrs.op)) {
    names = (*fnames)[attrs.op](attrs);
  } else {
    names = attrs.op->input_names;
  }
  for (size_t i = names.size(); i < count && count != kVariadic; ++i) names.push_back(StrCat("arg", i));
  return names;
}

// The single node all outputs come from, or nullptr.
Node* HeadNode(const Symbol& sym) {
  if (sym.outputs.empty()) return nullptr;
  Node* head = sym.outputs[0].node.get();
  for (const NodeEntry& e : sym.outputs) {
    if (e.node.get() != head) return nullptr;
  }
  return head;
}

bool IsAtomic(const Symbol& sym) {
  Node* head = HeadNode(sym);
  return head != nullptr && !head->is_variable() && head->inputs.empty() && head->op()->InputCount(head->attrs) != 0;
}

const NodeEntry& SingleOutput(const Symbol& arg, const std::string& what) {
  IR_CHECK(arg.outputs.size() == 1) << what << " must be a symbol with one output, got " << arg.outputs.size()
                                    << " outputs";
  return arg.outputs[0];
}

void ComposeAtomic(Node* node, const std::vector<Symbol>& args, const std::unordered_map<std::string, Symbol>& kwargs) {
  const Op* op = node->op();
  uint32_t expected = op->InputCount(node->attrs);
  std::string where = StrCat("op '", op->name, "' (node '", node->attrs.name, "')");
  if (expected == kVariadic) {
    IR_CHECK(kwargs.empty()) << where << " takes a variable number of inputs: pass them by position";
    expected = static_cast<uint32_t>(args.size());
  }
  IR_CHECK(args.size() <= expected) << where << " takes " << expected << " inputs, got " << args.size()
                                    << " positional arguments";
  std::vector<std::string> names = InputNamesOf(node->attrs, expected);
  std::unordered_set<std::string> used;
  std::vector<NodeEntry> inputs(expected);
  for (size_t i = 0; i < expected; ++i) {
    std::string arg_name = i < names.size() ? names[i] : StrCat("arg", i);
    if (i < args.size()) {
      IR_CHECK(!kwargs.count(arg_name)) << where << ": input '" << arg_name << "' given both by position and by name";
      inputs[i] = SingleOutput(args[i], StrCat(where, " input '", arg_name, "'"));
      continue;
    }
    auto it = kwargs.find(arg_name);
    if (it != kwargs.end()) {
      inputs[i] = SingleOutput(it->second, StrCat(where, " input '", arg_name, "'"));
      used.insert(arg_name);
    } else {
      // A missing input becomes a fresh variable, as in NNVM (e.g. a layer's weight).
      inputs[i] = NodeEntry{Node::CreateVariable(StrCat(node->attrs.name, "_", arg_name)), 0};
    }
  }
  for (const auto& kv : kwargs) {
    IR_CHECK(used.count(kv.first)) << where << " has no input named '" << kv.first << "' (inputs: " << Join(names, ", ")
                                   << ")";
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NodeEntry& in = inputs[i];
    IR_CHECK(in.index < in.node->num_outputs())
        << where << ": input " << i << " refers to a missing output of '" << in.node->attrs.name << "'";
  }
  node->inputs = std::move(inputs);
}

// Replaces free variables of `sym` (already a private copy) by the given entries.
void SubstituteVariables(Symbol* sym, const std::vector<Symbol>& args,
                         const std::unordered_map<std::string, Symbol>& kwargs) {
  std::vector<NodePtr> vars = sym->ListInputs(Symbol::kAll);
  IR_CHECK(args.size() <= vars.size()) << "compose: " << args.size() << " positional arguments for " << vars.size()
                                       << " free variables";
  std::unordered_map<const Node*, NodeEntry> replace;
  for (size_t i = 0; i < args.size(); ++i) {
    replace[vars[i].get()] = SingleOutput(args[i], StrCat("argument ", i));
  }
  std::unordered_set<std::string> used;
  for (size_t i = args.size(); i < vars.size(); ++i) {
    auto it = kwargs.find(vars[i]->attrs.name);
    if (it == kwargs.end()) continue;
    replace[vars[i].get()] = SingleOutput(it->second, StrCat("argument '", it->first, "'"));
    used.insert(it->first);
  }
  for (const auto& kv : kwargs) {
    IR_CHECK(used.count(kv.first)) << "compose: no free variable named '" << kv.first << "'";
  }
  auto remap = [&replace](NodeEntry* e) {
    auto it = replace.find(e->node.get());
    if (it != replace.end()) *e = it->second;
  };
  PostOrderDFSVisit(sym->outputs, [&](const NodePtr& node) {
    for (NodeEntry& in : node->inputs) remap(&in);
    for (NodePtr& dep : node->control_deps) {
      auto it = replace.find(dep.get());
      if (it != replace.end()) dep = it->second.node;
    }
  });
  for (NodeEntry& out : sym->outputs) remap(&out);
}

}  // namespace

Symbol Symbol::Copy() const {
  std::unordered_map<const Node*, NodePtr> copies;
  PostOrderDFSVisit(outputs, [&copies](const NodePtr& node) {
    NodePtr copy = Node::Create();
    copy->attrs = node->attrs;
    for (const NodeEntry& in : node->inputs) copy->inputs.push_back(NodeEntry{copies.at(in.node.get()), in.index});
    for (const NodePtr& dep : node->control_deps) copy->control_deps.push_back(copies.at(dep.get()));
    copies[node.get()] = copy;
  });
  Symbol result;
  for (const NodeEntry& out : outputs) result.outputs.push_back(NodeEntry{copies.at(out.node.get()), out.index});
  return result;
}

Symbol Symbol::operator[](size_t index) const {
  IR_CHECK(index < outputs.size()) << "symbol has " << outputs.size() << " outputs, index " << index
                                   << " is out of range";
  Symbol result;
  result.outputs.push_back(outputs[index]);
  return result;
}

std::vector<NodePtr> Symbol::ListInputs(ListInputOption option) const {
  Graph graph(outputs);
  const IndexedGraph& idx = graph.indexed_graph();
  const std::vector<uint32_t>& mut = idx.mutable_input_nodes();
  std::unordered_set<uint32_t> mutable_set(mut.begin(), mut.end());
  std::vector<NodePtr> result;
  for (uint32_t nid : idx.input_nodes()) {
    bool is_mutable = mutable_set.count(nid) != 0;
    if (option == kAll || (option == kMutable) == is_mutable) result.push_back(idx[nid].weak_ref.lock());
  }
  return result;
}

std::vector<std::string> Symbol::ListInputNames(ListInputOption option) const {
  std::vector<std::string> names;
  for (const NodePtr& node : ListInputs(option)) names.push_back(node->attrs.name);
  return names;
}

std::vector<std::string> Symbol::ListOutputNames() const {
  const auto* fnames = Op::FindAttr<FListOutputNames>("FListOutputNames");
  std::vector<std::string> names;
  for (const NodeEntry& out : outputs) {
    const Node* node = out.node.get();
    if (node->is_variable() || node->num_outputs() == 1) {
      names.push_back(node->attrs.name);
    } else if (fnames != nullptr && fnames->count(node->op())) {
      names.push_back(StrCat(node->attrs.name, "_", (*fnames)[node->op()](node->attrs).at(out.index)));
    } else {
      names.push_back(StrCat(node->attrs.name, "_output", out.index));
    }
  }
  return names;
}

Symbol Symbol::GetInternals() const {
  Symbol result;
  PostOrderDFSVisit(outputs, [&result](const NodePtr& node) {
    for (uint32_t i = 0; i < node->num_outputs(); ++i) result.outputs.push_back(NodeEntry{node, i});
  });
  return result;
}

Symbol Symbol::GetChildren() const {
  Node* head = HeadNode(*this);
  IR_CHECK(head != nullptr) << "GetChildren needs a symbol whose outputs come from one node";
  Symbol result;
  result.outputs = head->inputs;
  return result;
}

void Symbol::Compose(const std::vector<Symbol>& args, const std::unordered_map<std::string, Symbol>& kwargs,
                     const std::string& name) {
  if (IsAtomic(*this)) {
    Node* head = HeadNode(*this);
    if (!name.empty()) head->attrs.name = name;
    ComposeAtomic(head, args, kwargs);
    return;
  }
  Node* head = HeadNode(*this);
  if (head != nullptr && !head->is_variable() && head->inputs.empty() && head->op()->InputCount(head->attrs) == 0) {
    // An op without inputs (constant, zeros, random_*): composing only names it.
    IR_CHECK(args.empty() && kwargs.empty()) << "op '" << head->op()->name << "' (node '" << head->attrs.name
                                             << "') takes no inputs, got " << args.size() + kwargs.size();
    if (!name.empty()) head->attrs.name = name;
    return;
  }
  *this = Copy();
  SubstituteVariables(this, args, kwargs);
}

Symbol Symbol::operator()(const std::vector<Symbol>& args, const std::unordered_map<std::string, Symbol>& kwargs,
                          const std::string& name) const {
  Symbol result = Copy();
  result.Compose(args, kwargs, name);
  return result;
}

void Symbol::AddControlDeps(const Symbol& deps) {
  for (const NodeEntry& out : outputs) {
    std::vector<NodePtr>& existing = out.node->control_deps;
    for (const NodeEntry& dep : deps.outputs) {
      IR_CHECK(dep.node != out.node) << "node '" << out.node->attrs.name << "' cannot depend on itself";
      if (std::find(existing.begin(), existing.end(), dep.node) == existing.end()) {
        existing.push_back(dep.node);
      }
    }
  }
}

void Symbol::SetAttrs(const std::map<std::string, std::string>& attrs) {
  Node* head = HeadNode(*this);
  IR_CHECK(head != nullptr) << "SetAttrs needs a symbol whose outputs come from one node";
  std::map<std::string, std::string> saved = head->attrs.dict;
  dmlc::any saved_parsed = head->attrs.parsed;  // a parser may have replaced it before failing
  for (const auto& kv : attrs) head->attrs.dict[kv.first] = kv.second;
  try {
    head->ReparseAttrs();
  } catch (...) {
    head->attrs.dict = saved;
    head->attrs.parsed = std::move(saved_parsed);
    throw;
  }
}

bool Symbol::GetAttr(const std::string& key, std::string* out) const {
  Node* head = HeadNode(*this);
  if (head == nullptr) return false;
  auto it = head->attrs.dict.find(key);
  if (it != head->attrs.dict.end()) {
    *out = it->second;
    return true;
  }
  // State the op holds only in parsed form (a constant's elements) is encoded on demand.
  std::map<std::string, std::string> saved = SavedAttrs(head->attrs);
  it = saved.find(key);
  if (it == saved.end()) return false;
  *out = std::move(it->second);
  return true;
}

void Symbol::Print(std::ostream& os) const { os << PrintGraphText(Graph(outputs)); }

Symbol Symbol::CreateFunctor(const Op* op, const std::map<std::string, std::string>& attrs, const std::string& name) {
  // Inputs are bound later by Compose; parse and check the parameters now.
  NodePtr node = Node::Create();
  node->attrs.op = op;
  node->attrs.name = name.empty() ? op->name : name;
  node->attrs.dict = attrs;
  node->ReparseAttrs();
  Symbol result;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) result.outputs.push_back(NodeEntry{node, i});
  return result;
}

Symbol Symbol::CreateVariable(const std::string& name, const std::map<std::string, std::string>& attrs) {
  Symbol result;
  result.outputs.push_back(NodeEntry{Node::CreateVariable(name, attrs), 0});
  return result;
}

Symbol Symbol::CreateGroup(const std::vector<Symbol>& symbols) {
  Symbol result;
  for (const Symbol& sym : symbols) {
    result.outputs.insert(result.outputs.end(), sym.outputs.begin(), sym.outputs.end());
  }
  return result;
}

}  // namespace ir
