/*!
 * \file c_api_graph.cc
 * \brief C API: graphs, passes, JSON and graph attributes.
 */
#include "c_api/c_api_common.h"
#include "ir/graph.h"
#include "ir/graph_attr.h"
#include "ir/graph_io.h"
#include "ir/pass.h"
#include "ir/pipeline.h"
#include "ir/symbol.h"

using ir::Graph;
using ir::Symbol;
using ir::capi::ExposeStrings;
using ir::capi::ThreadReturnBuffer;

namespace {
Graph* AsGraph(IRGraphHandle handle) {
  IR_CHECK(handle != nullptr) << "null graph handle";
  return static_cast<Graph*>(handle);
}
}  // namespace

int IRGraphCreate(IRSymbolHandle sym, IRGraphHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(sym);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Graph(static_cast<Symbol*>(sym)->outputs);
  IR_API_END();
}

int IRGraphFree(IRGraphHandle graph) {
  IR_API_BEGIN();
  delete static_cast<Graph*>(graph);
  IR_API_END();
}

int IRGraphGetSymbol(IRGraphHandle graph, IRSymbolHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(out);
  auto* sym = new Symbol();
  sym->outputs = AsGraph(graph)->outputs;
  *out = sym;
  IR_API_END();
}

int IRGraphApplyPasses(IRGraphHandle src, uint32_t num_pass, const char** pass_names, IRGraphHandle* dst) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(src);
  IR_API_CHECK_ARRAY(pass_names, num_pass);
  IR_API_CHECK_NOT_NULL(dst);
  std::vector<std::string> names(pass_names, pass_names + num_pass);
  *dst = new Graph(ir::ApplyPasses(*AsGraph(src), names));
  IR_API_END();
}

int IRListPasses(uint32_t* out_size, const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(ir::PassReg::ListNames(), &buf->strings, &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRPipelineList(uint32_t* out_size, const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(ir::Pipeline::ListNames(), &buf->strings, &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRPipelineGet(const char* name, const char** out_text) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(out_text);
  auto* buf = ThreadReturnBuffer();
  buf->str = ir::Pipeline(name).ToString();
  *out_text = buf->str.c_str();
  IR_API_END();
}

int IRPipelinePasses(const char* name, uint32_t num_options, const char** on_options, uint32_t* out_size,
                     const char*** out_names) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(name);
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_names);
  IR_API_CHECK_NOT_NULL_IF(on_options, num_options);
  std::map<std::string, bool> options;
  for (uint32_t i = 0; i < num_options; ++i) {
    IR_API_CHECK_NOT_NULL(on_options[i]);
    options[on_options[i]] = true;
  }
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(ir::Pipeline(name).Passes(options), &buf->strings, &buf->pointers, out_size, out_names);
  IR_API_END();
}

int IRGraphSaveJSON(IRGraphHandle graph, const char** out_json) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(out_json);
  auto* buf = ThreadReturnBuffer();
  buf->str = ir::SaveJSON(*AsGraph(graph));
  *out_json = buf->str.c_str();
  IR_API_END();
}

int IRGraphLoadJSON(const char* json, IRGraphHandle* out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(json);
  IR_API_CHECK_NOT_NULL(out);
  *out = new Graph(ir::LoadJSON(json));
  IR_API_END();
}

int IRGraphGetAttrJSON(IRGraphHandle graph, const char* key, const char** out_json, int* success) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(key);
  IR_API_CHECK_NOT_NULL(out_json);
  IR_API_CHECK_NOT_NULL(success);
  const Graph* g = AsGraph(graph);
  auto it = g->attrs.find(key);
  auto* buf = ThreadReturnBuffer();
  buf->str.clear();
  *success = it != g->attrs.end() ? 1 : 0;
  if (*success) buf->str = ir::AttrToJSON(key, *it->second);
  *out_json = buf->str.c_str();
  IR_API_END();
}

int IRGraphSetAttrJSON(IRGraphHandle graph, const char* key, const char* json) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(key);
  IR_API_CHECK_NOT_NULL(json);
  Graph* g = AsGraph(graph);
  dmlc::any value = ir::AttrFromJSON(key, json);
  ir::CheckGraphAttrSize(key, value, g->indexed_graph());
  g->attrs[key] = std::make_shared<dmlc::any>(std::move(value));
  IR_API_END();
}

int IRGraphSetAttrBytes(IRGraphHandle graph, const char* key, const char* data, size_t size) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(key);
  IR_API_CHECK_NOT_NULL_IF(data, size);
  AsGraph(graph)->SetAttr(key, size == 0 ? std::string() : std::string(data, size));
  IR_API_END();
}

int IRGraphListAttrs(IRGraphHandle graph, uint32_t* out_size, const char*** out_keys) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(out_size);
  IR_API_CHECK_NOT_NULL(out_keys);
  std::vector<std::string> keys;
  for (const auto& kv : AsGraph(graph)->attrs) keys.push_back(kv.first);
  auto* buf = ThreadReturnBuffer();
  ExposeStrings(keys, &buf->strings, &buf->pointers, out_size, out_keys);
  IR_API_END();
}

int IRGraphPrint(IRGraphHandle graph, int format, const char** out) {
  IR_API_BEGIN();
  IR_API_CHECK_NOT_NULL(graph);
  IR_API_CHECK_NOT_NULL(out);
  IR_CHECK(format == 0 || format == 1) << "IRGraphPrint: format must be 0 (text) or 1 (dot), got " << format;
  auto* buf = ThreadReturnBuffer();
  buf->str = format == 0 ? ir::PrintGraphText(*AsGraph(graph)) : ir::PrintGraphDot(*AsGraph(graph));
  *out = buf->str.c_str();
  IR_API_END();
}
