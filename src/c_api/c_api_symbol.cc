/*!
 * \file c_api_symbol.cc
 * \brief C API: ops, symbols and op libraries.
 */
#include <sstream>

#include "c_api/c_api_common.h"
#include "ir/op.h"
#include "ir/pass.h"
#include "ir/symbol.h"

namespace ir {
namespace capi {

ReturnBuffer* ThreadReturnBuffer() {
  static thread_local ReturnBuffer buffer;
  return &buffer;
}

void ExposeStrings(const std::vector<std::string>& items, std::vector<std::string>* store,
                   std::vector<const char*>* pointers, uint32_t* out_size, const char*** out) {
  *store = items;
  pointers->clear();
  for (const std::string& s : *store) pointers->push_back(s.c_str());
  if (out_size != nullptr) *out_size = static_cast<uint32_t>(store->size());
  *out = pointers->data();
}

}  // namespace capi
}  // namespace ir

using ir::Op;
using ir::Symbol;
using ir::capi::ExposeStrings;
using ir::capi::ThreadReturnBuffer;

namespace {
Symbol* AsSymbol(IRSymbolHandle handle) {
  IR_CHECK(handle != nullptr) << "null symbol handle";
  return static_cast<Symbol*>(handle);
}
const Op* AsOp(IROpHandle handle) {
  IR_CHECK(handle != nullptr) << "null op handle";
  return static_cast<const Op*>(handle);
}
}  // namespace

int IRListAllOpNames(uint32_t* out_size, const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(Op::ListNames(), &buf->strings, &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRGetOpHandle(const char* name, IROpHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(out);
  *out = Op::Get(name);
  IR_API_END();
}

int IRGetOpInfo(IROpHandle op, const char** name, const char** description, uint32_t* num_args, const char*** arg_names,
                const char*** arg_types, const char*** arg_descriptions) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(op);
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(description);
  IR_API_CHECK_NOT_NULL(num_args);
  IR_API_CHECK_NOT_NULL(arg_names);
  IR_API_CHECK_NOT_NULL(arg_types);
  IR_API_CHECK_NOT_NULL(arg_descriptions);
  const Op* o = AsOp(op);
  *name = o->name.c_str();
  *description = o->description.c_str();
  std::vector<std::string> names, types, descriptions;
  for (const auto& arg : o->arguments) {
    names.push_back(arg.name);
    types.push_back(arg.type);
    descriptions.push_back(arg.description);
  }
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(names, &buf->strings, &buf->pointers, num_args, arg_names);
  ExposeStrings(types, &buf->strings2, &buf->pointers2, nullptr, arg_types);
  ExposeStrings(descriptions, &buf->strings3, &buf->pointers3, nullptr, arg_descriptions);
  IR_API_END();
}

int IRGetOpAttrKeys(IROpHandle op, uint32_t* out_size, const char*** out_keys) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(op);
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_keys);
  const Op* o = AsOp(op);
  std::vector<std::string> keys;
  for (const std::string& key : Op::ListAttrKeys()) {
    if (Op::HasAttr(key, o)) keys.push_back(key);
  }
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(keys, &buf->strings, &buf->pointers, out_size, out_keys);
  IR_API_END();
}

int IRSymbolCreateVariable(const char* name, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Symbol(Symbol::CreateVariable(name));
  IR_API_END();
}

int IRSymbolCreateAtomicSymbol(IROpHandle op, uint32_t num_param, const char** keys, const char** vals,
                               IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(op);
  IR_API_CHECK_ARRAY(keys, num_param);
  IR_API_CHECK_ARRAY(vals, num_param);
  IR_API_CHECK_NOT_NULL(out);
  std::map<std::string, std::string> attrs;
  for (uint32_t i = 0; i < num_param; ++i) attrs[keys[i]] = vals[i];
  *out = new Symbol(Symbol::CreateFunctor(AsOp(op), attrs));
  IR_API_END();
}

int IRSymbolCompose(IRSymbolHandle sym, const char* name, uint32_t num_args, const char** keys, IRSymbolHandle* args) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_ARRAY(args, num_args);
  std::vector<Symbol> positional;
  std::unordered_map<std::string, Symbol> named;
  for (uint32_t i = 0; i < num_args; ++i) {
    const Symbol& arg = *AsSymbol(args[i]);
    if (keys == nullptr || keys[i] == nullptr) {
      positional.push_back(arg);
    } else {
      named[keys[i]] = arg;
    }
  }
  AsSymbol(sym)->Compose(positional, named, name ? name : "");
  IR_API_END();
}

int IRSymbolCreateGroup(uint32_t num_symbols, IRSymbolHandle* symbols, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_ARRAY(symbols, num_symbols);
  IR_API_CHECK_NOT_NULL(out);
  std::vector<Symbol> parts;
  for (uint32_t i = 0; i < num_symbols; ++i) parts.push_back(*AsSymbol(symbols[i]));
  *out = new Symbol(Symbol::CreateGroup(parts));
  IR_API_END();
}

namespace {

/*! \brief The single entry of `symbol`; `what` names it in the error. */
ir::NodeEntry SingleEntry(const Symbol& symbol, const std::string& what) {
  IR_CHECK(symbol.outputs.size() == 1) << what << " has " << symbol.outputs.size() << " outputs, expected 1";
  return symbol.outputs[0];
}

}  // namespace

int IRSymbolCreateControlFlow(const char* op_name, const char* node_name, uint32_t num_attrs, const char** keys,
                              const char** vals, uint32_t num_inputs, IRSymbolHandle* inputs, uint32_t num_bodies,
                              const uint32_t* num_params, IRSymbolHandle* params, IRSymbolHandle* body_outputs,
                              IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(op_name);
  IR_API_CHECK_NOT_NULL(node_name);
  IR_API_CHECK_ARRAY(keys, num_attrs);
  IR_API_CHECK_ARRAY(vals, num_attrs);
  IR_API_CHECK_ARRAY(inputs, num_inputs);
  IR_CHECK(num_bodies == 0 || num_params != nullptr) << __func__ << ": argument 'num_params' is NULL";
  IR_API_CHECK_ARRAY(body_outputs, num_bodies);
  IR_API_CHECK_NOT_NULL(out);
  std::map<std::string, std::string> attrs;
  for (uint32_t i = 0; i < num_attrs; ++i) attrs[keys[i]] = vals[i];
  std::vector<ir::NodeEntry> entries;
  for (uint32_t i = 0; i < num_inputs; ++i)
    entries.push_back(SingleEntry(*AsSymbol(inputs[i]), ir::StrCat("input ", i)));
  uint64_t total = 0;
  for (uint32_t k = 0; k < num_bodies; ++k) total += num_params[k];
  IR_API_CHECK_ARRAY(params, total);
  std::vector<std::shared_ptr<const ir::Subgraph>> bodies;
  for (uint32_t k = 0, next = 0; k < num_bodies; ++k) {
    auto body = std::make_shared<ir::Subgraph>();
    for (uint32_t i = 0; i < num_params[k]; ++i, ++next) {
      ir::NodeEntry param = SingleEntry(*AsSymbol(params[next]), ir::StrCat("body ", k, " param ", i));
      IR_CHECK(param.node->is_variable())
          << "body " << k << " param " << i << " ('" << param.node->attrs.name << "') is not a variable";
      body->params.push_back(param.node);
    }
    body->graph.outputs = AsSymbol(body_outputs[k])->outputs;
    bodies.push_back(std::move(body));
  }
  ir::NodePtr node = ir::Node::Create(ir::Op::Get(op_name), node_name, attrs, std::move(entries), std::move(bodies));
  ir::Graph check(std::vector<ir::NodeEntry>{ir::NodeEntry{node, 0}});
  ir::VerifyGraph(check);
  Symbol result;
  for (uint32_t i = 0; i < node->num_outputs(); ++i) result.outputs.push_back(ir::NodeEntry{node, i});
  *out = new Symbol(std::move(result));
  IR_API_END();
}

int IRSymbolCopy(IRSymbolHandle sym, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Symbol(AsSymbol(sym)->Copy());
  IR_API_END();
}

int IRSymbolFree(IRSymbolHandle sym) {
  IR_API_BEGIN();
  delete static_cast<Symbol*>(sym);
  IR_API_END();
}

int IRSymbolGetNumOutputs(IRSymbolHandle sym, uint32_t* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out);
  *out = static_cast<uint32_t>(AsSymbol(sym)->outputs.size());
  IR_API_END();
}

int IRSymbolGetOutput(IRSymbolHandle sym, uint32_t index, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Symbol((*AsSymbol(sym))[index]);
  IR_API_END();
}

int IRSymbolGetInternals(IRSymbolHandle sym, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Symbol(AsSymbol(sym)->GetInternals());
  IR_API_END();
}

int IRSymbolListInputNames(IRSymbolHandle sym, int option, uint32_t* out_size, const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  IR_CHECK(option >= 0 && option <= 2) << "IRSymbolListInputNames: option must be 0, 1 or 2, got " << option;
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(AsSymbol(sym)->ListInputNames(static_cast<Symbol::ListInputOption>(option)), &buf->strings,
                &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRSymbolListOutputNames(IRSymbolHandle sym, uint32_t* out_size, const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(AsSymbol(sym)->ListOutputNames(), &buf->strings, &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRSymbolAddControlDeps(IRSymbolHandle sym, IRSymbolHandle deps) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(deps);
  AsSymbol(sym)->AddControlDeps(*AsSymbol(deps));
  IR_API_END();
}

int IRSymbolSetAttrs(IRSymbolHandle sym, uint32_t num, const char** keys, const char** vals) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_ARRAY(keys, num);
  IR_API_CHECK_ARRAY(vals, num);
  std::map<std::string, std::string> attrs;
  for (uint32_t i = 0; i < num; ++i) attrs[keys[i]] = vals[i];
  AsSymbol(sym)->SetAttrs(attrs);
  IR_API_END();
}

int IRSymbolGetAttr(IRSymbolHandle sym, const char* key, const char** out, int* success) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(key);
  IR_API_CHECK_NOT_NULL(out);
  IR_API_CHECK_NOT_NULL(success);
  auto* buf = ThreadReturnBuffer();
  *success = AsSymbol(sym)->GetAttr(key, &buf->str) ? 1 : 0;
  *out = buf->str.c_str();
  IR_API_END();
}

int IRSymbolPrint(IRSymbolHandle sym, const char** out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out);
  std::ostringstream os;
  AsSymbol(sym)->Print(os);
  auto* buf = ThreadReturnBuffer();
  buf->str = os.str();
  *out = buf->str.c_str();
  IR_API_END();
}

int IRLoadOpLibrary(const char* path) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(path);
  ir::LoadOpLibrary(path);
  IR_API_END();
}
