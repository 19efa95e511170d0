/*!
 * \file symbol.cc
 * \brief tinyflow._C: ops and symbols (graph building), gradients, pfor and control-flow nodes.
 */
#include "binding.h"

namespace tinyflow {
namespace {

/*! \brief The handle a call wrote to *out (read after the call: argument order is unspecified). */
PyObject* SymbolOut(int rc, const IRSymbolHandle* out) {
  if (rc != 0) return RaiseLastError();
  return NewHandle(*out, kSymbol);
}

PyObject* GetOpHandle(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* name;
  if (!CheckArgs("op_handle", nargs, 1, 1) || !GetStr(args[0], &name, "op_handle: name")) return nullptr;
  IROpHandle op = nullptr;
  if (IRGetOpHandle(name, &op) != 0) return RaiseLastError();
  return NewHandle(const_cast<void*>(op), kOp);
}

PyObject* ListOps(PyObject*, PyObject* const*, Py_ssize_t nargs) {
  if (!CheckArgs("list_ops", nargs, 0, 0)) return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  if (IRListAllOpNames(&n, &names) != 0) return RaiseLastError();
  return StrListToPy(n, names);
}

PyObject* OpInfo(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* op;
  if (!CheckArgs("op_info", nargs, 1, 1) || !GetHandle(args[0], kOp, &op, "op_info: op")) return nullptr;
  const char *name = nullptr, *desc = nullptr;
  uint32_t n = 0;
  const char **an = nullptr, **at = nullptr, **ad = nullptr;
  if (IRGetOpInfo(op, &name, &desc, &n, &an, &at, &ad) != 0) return RaiseLastError();
  PyObject* arguments = PyList_New(n);
  for (uint32_t i = 0; arguments != nullptr && i < n; ++i) {
    PyObject* item = Py_BuildValue("(sss)", an[i], at[i], ad[i]);
    if (item == nullptr) Py_CLEAR(arguments);
    if (arguments != nullptr) PyList_SET_ITEM(arguments, i, item);
  }
  if (arguments == nullptr) return nullptr;
  return Py_BuildValue("{s:s,s:s,s:N}", "name", name, "description", desc, "arguments", arguments);
}

PyObject* CreateVariable(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* name;
  if (!CheckArgs("symbol_variable", nargs, 1, 2) || !GetStr(args[0], &name, "symbol_variable: name")) return nullptr;
  Attrs attrs;
  if (nargs > 1 && !attrs.Parse(args[1], "symbol_variable: attrs")) return nullptr;
  IRSymbolHandle out = nullptr;
  if (IRSymbolCreateVariable(name, &out) != 0) return RaiseLastError();
  if (attrs.keys.size() > 0 && IRSymbolSetAttrs(out, attrs.keys.size(), attrs.keys.data(), attrs.vals.data()) != 0) {
    IRSymbolFree(out);
    return RaiseLastError();
  }
  return NewHandle(out, kSymbol);
}

/*! \brief symbol_op(op, attrs, name, inputs, control_deps=None): an op node composed on `inputs`. */
PyObject* CreateOpNode(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("symbol_op", nargs, 4, 5)) return nullptr;
  void *op, *deps = nullptr;
  const char* name;
  Attrs attrs;
  std::vector<void*> inputs;
  if (!GetHandle(args[0], kOp, &op, "symbol_op: op") || !attrs.Parse(args[1], "symbol_op: attrs") ||
      !GetStr(args[2], &name, "symbol_op: name", true) || !GetHandles(args[3], kSymbol, &inputs, "symbol_op: inputs") ||
      (nargs > 4 && !GetHandle(args[4], kSymbol, &deps, "symbol_op: control_deps", true)))
    return nullptr;
  IRSymbolHandle out = nullptr;
  if (IRSymbolCreateAtomicSymbol(op, attrs.keys.size(), attrs.keys.data(), attrs.vals.data(), &out) != 0)
    return RaiseLastError();
  PyObject* result = NewHandle(out, kSymbol);  // (frees `out` on the failures below)
  if (result == nullptr) return nullptr;
  if (IRSymbolCompose(out, name, static_cast<uint32_t>(inputs.size()), nullptr, inputs.data()) != 0 ||
      (deps != nullptr && IRSymbolAddControlDeps(out, deps) != 0)) {
    Py_DECREF(result);
    return RaiseLastError();
  }
  return result;
}

PyObject* CreateGroup(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  std::vector<void*> symbols;
  if (!CheckArgs("symbol_group", nargs, 1, 1) || !GetHandles(args[0], kSymbol, &symbols, "symbol_group: symbols"))
    return nullptr;
  IRSymbolHandle out = nullptr;
  return SymbolOut(IRSymbolCreateGroup(static_cast<uint32_t>(symbols.size()), symbols.data(), &out), &out);
}

PyObject* GetOutput(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* sym;
  long long index;
  if (!CheckArgs("symbol_output", nargs, 2, 2) || !GetHandle(args[0], kSymbol, &sym, "symbol_output: symbol") ||
      !GetInt(args[1], &index, "symbol_output: index"))
    return nullptr;
  if (index < 0) {
    PyErr_Format(PyExc_ValueError, "symbol_output: negative index %lld", index);
    return nullptr;
  }
  IRSymbolHandle out = nullptr;
  return SymbolOut(IRSymbolGetOutput(sym, static_cast<uint32_t>(index), &out), &out);
}

PyObject* NumOutputs(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* sym;
  if (!CheckArgs("symbol_num_outputs", nargs, 1, 1) || !GetHandle(args[0], kSymbol, &sym, "symbol_num_outputs"))
    return nullptr;
  uint32_t n = 0;
  if (IRSymbolGetNumOutputs(sym, &n) != 0) return RaiseLastError();
  return PyLong_FromUnsignedLong(n);
}

PyObject* Internals(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* sym;
  if (!CheckArgs("symbol_internals", nargs, 1, 1) || !GetHandle(args[0], kSymbol, &sym, "symbol_internals"))
    return nullptr;
  IRSymbolHandle out = nullptr;
  return SymbolOut(IRSymbolGetInternals(sym, &out), &out);
}

PyObject* OutputNames(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* sym;
  if (!CheckArgs("symbol_output_names", nargs, 1, 1) || !GetHandle(args[0], kSymbol, &sym, "symbol_output_names"))
    return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  if (IRSymbolListOutputNames(sym, &n, &names) != 0) return RaiseLastError();
  return StrListToPy(n, names);
}

PyObject* SetAttrs(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* sym;
  Attrs attrs;
  if (!CheckArgs("symbol_set_attrs", nargs, 2, 2) || !GetHandle(args[0], kSymbol, &sym, "symbol_set_attrs") ||
      !attrs.Parse(args[1], "symbol_set_attrs: attrs"))
    return nullptr;
  if (IRSymbolSetAttrs(sym, attrs.keys.size(), attrs.keys.data(), attrs.vals.data()) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* AddControlDeps(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void *sym, *deps;
  if (!CheckArgs("symbol_add_control_deps", nargs, 2, 2) ||
      !GetHandle(args[0], kSymbol, &sym, "symbol_add_control_deps: symbol") ||
      !GetHandle(args[1], kSymbol, &deps, "symbol_add_control_deps: deps"))
    return nullptr;
  if (IRSymbolAddControlDeps(sym, deps) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

/*! \brief symbol_gradient(ys, xs, grad_ys or None, options_json or None) -> grouped gradients. */
PyObject* Gradient(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void *ys, *xs, *heads;
  const char* options;
  if (!CheckArgs("symbol_gradient", nargs, 4, 4) || !GetHandle(args[0], kSymbol, &ys, "symbol_gradient: ys") ||
      !GetHandle(args[1], kSymbol, &xs, "symbol_gradient: xs") ||
      !GetHandle(args[2], kSymbol, &heads, "symbol_gradient: grad_ys", true) ||
      !GetStr(args[3], &options, "symbol_gradient: options", true))
    return nullptr;
  IRSymbolHandle out = nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRSymbolGradientEx(ys, xs, heads, options, &out);
  }
  return SymbolOut(rc, &out);
}

/*! \brief symbol_pfor(name, index, outputs, inside or None, n_from or None, attrs). */
PyObject* Pfor(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* name;
  void *index, *outputs, *inside, *n_from;
  Attrs attrs;
  if (!CheckArgs("symbol_pfor", nargs, 6, 6) || !GetStr(args[0], &name, "symbol_pfor: name") ||
      !GetHandle(args[1], kSymbol, &index, "symbol_pfor: index") ||
      !GetHandle(args[2], kSymbol, &outputs, "symbol_pfor: outputs") ||
      !GetHandle(args[3], kSymbol, &inside, "symbol_pfor: inside", true) ||
      !GetHandle(args[4], kSymbol, &n_from, "symbol_pfor: n_from", true) || !attrs.Parse(args[5], "symbol_pfor: attrs"))
    return nullptr;
  IRSymbolHandle out = nullptr;
  return SymbolOut(IRSymbolCreatePfor(name, index, outputs, inside, n_from, attrs.keys.size(), attrs.keys.data(),
                                      attrs.vals.data(), &out),
                   &out);
}

/*! \brief symbol_control_flow(op_name, name, attrs, inputs, num_params, params, body_outputs). */
PyObject* ControlFlow(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char *op_name, *name;
  Attrs attrs;
  std::vector<void*> inputs, params, bodies;
  if (!CheckArgs("symbol_control_flow", nargs, 7, 7) || !GetStr(args[0], &op_name, "symbol_control_flow: op") ||
      !GetStr(args[1], &name, "symbol_control_flow: name") || !attrs.Parse(args[2], "symbol_control_flow: attrs") ||
      !GetHandles(args[3], kSymbol, &inputs, "symbol_control_flow: inputs") ||
      !GetHandles(args[5], kSymbol, &params, "symbol_control_flow: params") ||
      !GetHandles(args[6], kSymbol, &bodies, "symbol_control_flow: body outputs"))
    return nullptr;
  PyObject* counts = PySequence_Fast(args[4], "symbol_control_flow: num_params must be a sequence of int");
  if (counts == nullptr) return nullptr;
  std::vector<uint32_t> num_params(PySequence_Fast_GET_SIZE(counts));
  for (size_t i = 0; i < num_params.size(); ++i) {
    long long v;
    if (!GetInt(PySequence_Fast_GET_ITEM(counts, i), &v, "symbol_control_flow: num_params")) {
      Py_DECREF(counts);
      return nullptr;
    }
    num_params[i] = static_cast<uint32_t>(v);
  }
  Py_DECREF(counts);
  if (num_params.size() != bodies.size()) {
    PyErr_SetString(PyExc_ValueError, "symbol_control_flow: one num_params entry per body");
    return nullptr;
  }
  IRSymbolHandle out = nullptr;
  return SymbolOut(IRSymbolCreateControlFlow(op_name, name, attrs.keys.size(), attrs.keys.data(), attrs.vals.data(),
                                             static_cast<uint32_t>(inputs.size()), inputs.data(),
                                             static_cast<uint32_t>(bodies.size()), num_params.data(), params.data(),
                                             bodies.data(), &out),
                   &out);
}

}  // namespace

PyMethodDef kSymbolMethods[] = {
    {"op_handle", TF_FASTCALL(GetOpHandle), METH_FASTCALL, "op_handle(name) -> Op handle"},
    {"list_ops", TF_FASTCALL(ListOps), METH_FASTCALL, "list_ops() -> names of every registered op"},
    {"op_info", TF_FASTCALL(OpInfo), METH_FASTCALL, "op_info(op) -> {name, description, arguments}"},
    {"symbol_variable", TF_FASTCALL(CreateVariable), METH_FASTCALL, "symbol_variable(name, attrs=None) -> Symbol"},
    {"symbol_op", TF_FASTCALL(CreateOpNode), METH_FASTCALL,
     "symbol_op(op, attrs, name, inputs, control_deps=None) -> Symbol"},
    {"symbol_group", TF_FASTCALL(CreateGroup), METH_FASTCALL, "symbol_group(symbols) -> Symbol"},
    {"symbol_output", TF_FASTCALL(GetOutput), METH_FASTCALL, "symbol_output(symbol, index) -> Symbol"},
    {"symbol_num_outputs", TF_FASTCALL(NumOutputs), METH_FASTCALL, "symbol_num_outputs(symbol) -> int"},
    {"symbol_internals", TF_FASTCALL(Internals), METH_FASTCALL, "symbol_internals(symbol) -> Symbol"},
    {"symbol_output_names", TF_FASTCALL(OutputNames), METH_FASTCALL, "symbol_output_names(symbol) -> [str]"},
    {"symbol_set_attrs", TF_FASTCALL(SetAttrs), METH_FASTCALL, "symbol_set_attrs(symbol, attrs)"},
    {"symbol_add_control_deps", TF_FASTCALL(AddControlDeps), METH_FASTCALL, "symbol_add_control_deps(symbol, deps)"},
    {"symbol_gradient", TF_FASTCALL(Gradient), METH_FASTCALL,
     "symbol_gradient(ys, xs, grad_ys, options_json) -> Symbol"},
    {"symbol_pfor", TF_FASTCALL(Pfor), METH_FASTCALL, "symbol_pfor(name, index, outputs, inside, n_from, attrs)"},
    {"symbol_control_flow", TF_FASTCALL(ControlFlow), METH_FASTCALL,
     "symbol_control_flow(op, name, attrs, inputs, num_params, params, body_outputs) -> Symbol"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tinyflow
