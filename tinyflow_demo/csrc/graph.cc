/*!
 * \file graph.cc
 * \brief tinyflow._C: IR graphs, their attributes and printing, passes and pipelines.
 */
#include "binding.h"

namespace tinyflow {
namespace {

/*! \brief The handle a call wrote to *out (read after the call: argument order is unspecified). */
PyObject* GraphOut(int rc, const IRGraphHandle* out) {
  if (rc != 0) return RaiseLastError();
  return NewHandle(*out, kGraph);
}

bool OneGraph(const char* fn, PyObject* const* args, Py_ssize_t nargs, Py_ssize_t want, void** graph) {
  return CheckArgs(fn, nargs, want, want) && GetHandle(args[0], kGraph, graph, fn);
}

PyObject* GraphCreate(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* sym;
  if (!CheckArgs("graph_create", nargs, 1, 1) || !GetHandle(args[0], kSymbol, &sym, "graph_create: symbol"))
    return nullptr;
  IRGraphHandle out = nullptr;
  return GraphOut(IRGraphCreate(sym, &out), &out);
}

PyObject* GraphLoadJSON(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* json;
  if (!CheckArgs("graph_load_json", nargs, 1, 1) || !GetStr(args[0], &json, "graph_load_json: json")) return nullptr;
  IRGraphHandle out = nullptr;
  return GraphOut(IRGraphLoadJSON(json, &out), &out);
}

PyObject* GraphSaveJSON(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  if (!OneGraph("graph_save_json", args, nargs, 1, &graph)) return nullptr;
  const char* out = nullptr;
  if (IRGraphSaveJSON(graph, &out) != 0) return RaiseLastError();
  return StrOrNone(out);
}

PyObject* GraphListAttrs(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  if (!OneGraph("graph_list_attrs", args, nargs, 1, &graph)) return nullptr;
  uint32_t n = 0;
  const char** keys = nullptr;
  if (IRGraphListAttrs(graph, &n, &keys) != 0) return RaiseLastError();
  return StrListToPy(n, keys);
}

/*! \brief graph_get_attr_json(graph, key) -> JSON text, or None when absent. */
PyObject* GraphGetAttr(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  const char* key;
  if (!OneGraph("graph_get_attr_json", args, nargs, 2, &graph) || !GetStr(args[1], &key, "graph_get_attr_json: key"))
    return nullptr;
  const char* out = nullptr;
  int ok = 0;
  if (IRGraphGetAttrJSON(graph, key, &out, &ok) != 0) return RaiseLastError();
  if (!ok) Py_RETURN_NONE;
  return StrOrNone(out);
}

PyObject* GraphSetAttr(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  const char *key, *json;
  if (!OneGraph("graph_set_attr_json", args, nargs, 3, &graph) || !GetStr(args[1], &key, "graph_set_attr_json: key") ||
      !GetStr(args[2], &json, "graph_set_attr_json: json"))
    return nullptr;
  if (IRGraphSetAttrJSON(graph, key, json) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* GraphSetBytes(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  const char* key;
  if (!OneGraph("graph_set_attr_bytes", args, nargs, 3, &graph) || !GetStr(args[1], &key, "graph_set_attr_bytes: key"))
    return nullptr;
  Py_buffer view;
  if (PyObject_GetBuffer(args[2], &view, PyBUF_SIMPLE) != 0) return nullptr;
  int rc = IRGraphSetAttrBytes(graph, key, static_cast<const char*>(view.buf), static_cast<size_t>(view.len));
  PyBuffer_Release(&view);
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* GraphPrint(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  long long format;
  if (!OneGraph("graph_print", args, nargs, 2, &graph) || !GetInt(args[1], &format, "graph_print: format"))
    return nullptr;
  const char* out = nullptr;
  if (IRGraphPrint(graph, static_cast<int>(format), &out) != 0) return RaiseLastError();
  return StrOrNone(out);
}

/*! \brief graph_apply_passes(graph, names) -> a new graph (the GIL is released while the passes run). */
PyObject* GraphApplyPasses(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  StrList names;
  if (!OneGraph("graph_apply_passes", args, nargs, 2, &graph) || !names.Parse(args[1], "graph_apply_passes: passes"))
    return nullptr;
  IRGraphHandle out = nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRGraphApplyPasses(graph, names.size(), names.data(), &out);
  }
  return GraphOut(rc, &out);
}

PyObject* ListPasses(PyObject*, PyObject* const*, Py_ssize_t nargs) {
  if (!CheckArgs("list_passes", nargs, 0, 0)) return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  if (IRListPasses(&n, &names) != 0) return RaiseLastError();
  return StrListToPy(n, names);
}

PyObject* ListPipelines(PyObject*, PyObject* const*, Py_ssize_t nargs) {
  if (!CheckArgs("list_pipelines", nargs, 0, 0)) return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  if (IRPipelineList(&n, &names) != 0) return RaiseLastError();
  return StrListToPy(n, names);
}

PyObject* PipelineGet(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* name;
  if (!CheckArgs("pipeline", nargs, 1, 1) || !GetStr(args[0], &name, "pipeline: name")) return nullptr;
  const char* out = nullptr;
  if (IRPipelineGet(name, &out) != 0) return RaiseLastError();
  return StrOrNone(out);
}

PyObject* PipelinePasses(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* name;
  StrList on;
  if (!CheckArgs("pipeline_passes", nargs, 2, 2) || !GetStr(args[0], &name, "pipeline_passes: name") ||
      !on.Parse(args[1], "pipeline_passes: options"))
    return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  if (IRPipelinePasses(name, on.size(), on.data(), &n, &names) != 0) return RaiseLastError();
  return StrListToPy(n, names);
}

}  // namespace

PyMethodDef kGraphMethods[] = {
    {"graph_create", TF_FASTCALL(GraphCreate), METH_FASTCALL, "graph_create(symbol) -> Graph"},
    {"graph_load_json", TF_FASTCALL(GraphLoadJSON), METH_FASTCALL, "graph_load_json(text) -> Graph"},
    {"graph_save_json", TF_FASTCALL(GraphSaveJSON), METH_FASTCALL, "graph_save_json(graph) -> str"},
    {"graph_list_attrs", TF_FASTCALL(GraphListAttrs), METH_FASTCALL, "graph_list_attrs(graph) -> [str]"},
    {"graph_get_attr_json", TF_FASTCALL(GraphGetAttr), METH_FASTCALL, "graph_get_attr_json(graph, key) -> str|None"},
    {"graph_set_attr_json", TF_FASTCALL(GraphSetAttr), METH_FASTCALL, "graph_set_attr_json(graph, key, json)"},
    {"graph_set_attr_bytes", TF_FASTCALL(GraphSetBytes), METH_FASTCALL, "graph_set_attr_bytes(graph, key, bytes)"},
    {"graph_print", TF_FASTCALL(GraphPrint), METH_FASTCALL, "graph_print(graph, format) -> str (0 text, 1 dot)"},
    {"graph_apply_passes", TF_FASTCALL(GraphApplyPasses), METH_FASTCALL, "graph_apply_passes(graph, names) -> Graph"},
    {"list_passes", TF_FASTCALL(ListPasses), METH_FASTCALL, "list_passes() -> [str]"},
    {"list_pipelines", TF_FASTCALL(ListPipelines), METH_FASTCALL, "list_pipelines() -> [str]"},
    {"pipeline", TF_FASTCALL(PipelineGet), METH_FASTCALL, "pipeline(name) -> its printed form"},
    {"pipeline_passes", TF_FASTCALL(PipelinePasses), METH_FASTCALL, "pipeline_passes(name, on) -> [pass]"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tinyflow
