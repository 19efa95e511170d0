/*!
 * \file module.cc
 * \brief tinyflow._C: the Handle type, argument helpers, the error class, the module's method table.
 */
#include <dlfcn.h>

#include <cstring>

#include "binding.h"

namespace tinyflow {
namespace {

const char* const kKindNames[kNumKinds] = {"Op",      "Symbol", "Graph",       "NDArray",
                                           "Session", "Lazy",   "LazyContext", "Tape"};

void FreeHandle(void* ptr, int kind) {
  switch (kind) {
    case kSymbol:
      IRSymbolFree(ptr);
      break;
    case kGraph:
      IRGraphFree(ptr);
      break;
    case kNDArray:
      IRNDArrayFree(ptr);
      break;
    case kSession:
      IRSessionFree(ptr);
      break;
    case kLazy:
      IRLazyFree(ptr);
      break;
    case kLazyContext:
      IRLazyContextFree(ptr);
      break;
    case kTape:
      IRLazyTapeFree(ptr);
      break;
    default:
      break;  // ops live in the registry
  }
}

void HandleDealloc(PyObject* self) {
  Handle* h = reinterpret_cast<Handle*>(self);
  if (h->ptr != nullptr) FreeHandle(h->ptr, h->kind);
  Py_TYPE(self)->tp_free(self);
}

PyObject* HandleRepr(PyObject* self) {
  Handle* h = reinterpret_cast<Handle*>(self);
  return PyUnicode_FromFormat("<tinyflow._C.%s handle %p>", kKindNames[h->kind], h->ptr);
}

PyObject* HandleKindName(PyObject* self, void*) {
  return PyUnicode_FromString(kKindNames[reinterpret_cast<Handle*>(self)->kind]);
}

PyGetSetDef kHandleGetSet[] = {{"kind", HandleKindName, nullptr, "what the handle holds", nullptr},
                               {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* g_error_class = nullptr;  // a callable: message -> exception instance (tf.errors.OpError)

PyObject* SetErrorClass(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("_set_error_class", nargs, 1, 1)) return nullptr;
  if (!PyCallable_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "_set_error_class: want a callable taking the message");
    return nullptr;
  }
  Py_INCREF(args[0]);
  Py_XSETREF(g_error_class, args[0]);
  Py_RETURN_NONE;
}

/*! \brief free(handle): frees what an owned handle holds now (later uses raise TypeError); None is ignored. */
PyObject* Free(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("free", nargs, 1, 1)) return nullptr;
  if (args[0] == Py_None) Py_RETURN_NONE;
  if (Py_TYPE(args[0]) != &HandleType) {
    PyErr_Format(PyExc_TypeError, "free: expected a handle, got %s", Py_TYPE(args[0])->tp_name);
    return nullptr;
  }
  Handle* h = reinterpret_cast<Handle*>(args[0]);
  void* ptr = h->ptr;
  h->ptr = nullptr;
  if (ptr != nullptr) FreeHandle(ptr, h->kind);
  Py_RETURN_NONE;
}

/*! \brief library_path(): the file of the libir this module was linked to and the loader found. */
PyObject* LibraryPath(PyObject*, PyObject* const*, Py_ssize_t) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&IRGetLastError), &info) == 0 || info.dli_fname == nullptr) Py_RETURN_NONE;
  return PyUnicode_DecodeFSDefault(info.dli_fname);
}

PyObject* LastError(PyObject*, PyObject* const*, Py_ssize_t) { return PyUnicode_FromString(IRGetLastError()); }

PyMethodDef kModuleMethods[] = {
    {"_set_error_class", TF_FASTCALL(SetErrorClass), METH_FASTCALL,
     "_set_error_class(factory): failed library calls raise factory(message)"},
    {"free", TF_FASTCALL(Free), METH_FASTCALL, "free(handle): frees it now instead of when the object dies"},
    {"library_path", TF_FASTCALL(LibraryPath), METH_FASTCALL, "library_path() -> the loaded libir's file"},
    {"last_error", TF_FASTCALL(LastError), METH_FASTCALL, "IRGetLastError() of this thread"},
    {nullptr, nullptr, 0, nullptr}};

std::vector<PyMethodDef> g_methods;

PyModuleDef kModule = {PyModuleDef_HEAD_INIT,
                       "tinyflow._C",
                       "The native binding of tinyflow: every call into libir (ir/c_api.h) and libir_tensorflow.",
                       -1,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr,
                       nullptr};

}  // namespace

PyTypeObject HandleType;  // filled in by PyInit__C (a static one, zero-initialized)

PyObject* NewHandle(void* ptr, int kind) {
  if (ptr == nullptr) Py_RETURN_NONE;
  Handle* h = PyObject_New(Handle, &HandleType);
  if (h == nullptr) {
    FreeHandle(ptr, kind);
    return nullptr;
  }
  h->ptr = ptr;
  h->kind = kind;
  return reinterpret_cast<PyObject*>(h);
}

bool GetHandle(PyObject* obj, int kind, void** out, const char* what, bool allow_none) {
  if (Py_TYPE(obj) == &HandleType && reinterpret_cast<Handle*>(obj)->kind == kind) {
    *out = reinterpret_cast<Handle*>(obj)->ptr;
    if (*out != nullptr) return true;
    PyErr_Format(PyExc_ValueError, "%s: the %s handle was freed", what, kKindNames[kind]);
    return false;
  }
  if (allow_none && obj == Py_None) {
    *out = nullptr;
    return true;
  }
  PyErr_Format(PyExc_TypeError, "%s: expected a %s handle%s, got %R", what, kKindNames[kind],
               allow_none ? " or None" : "", obj);
  return false;
}

PyObject* RaiseLastError() {
  PyObject* message = PyUnicode_DecodeUTF8(IRGetLastError(), std::strlen(IRGetLastError()), "replace");
  if (message == nullptr) return nullptr;
  if (g_error_class == nullptr) {
    PyErr_SetObject(PyExc_RuntimeError, message);
  } else {
    PyObject* exc = PyObject_CallOneArg(g_error_class, message);
    if (exc != nullptr) {
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc)), exc);
      Py_DECREF(exc);
    }
  }
  Py_DECREF(message);
  return nullptr;
}

bool CheckArgs(const char* fn, Py_ssize_t nargs, Py_ssize_t min, Py_ssize_t max) {
  if (nargs >= min && nargs <= max) return true;
  if (min == max) {
    PyErr_Format(PyExc_TypeError, "%s() takes %zd argument%s (%zd given)", fn, min, min == 1 ? "" : "s", nargs);
  } else {
    PyErr_Format(PyExc_TypeError, "%s() takes %zd to %zd arguments (%zd given)", fn, min, max, nargs);
  }
  return false;
}

bool GetStr(PyObject* obj, const char** out, const char* what, bool allow_none) {
  if (allow_none && obj == Py_None) {
    *out = nullptr;
    return true;
  }
  if (!PyUnicode_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: expected str%s, got %s", what, allow_none ? " or None" : "",
                 Py_TYPE(obj)->tp_name);
    return false;
  }
  *out = PyUnicode_AsUTF8(obj);
  return *out != nullptr;
}

bool GetInt(PyObject* obj, long long* out, const char* what) {
  if (!PyLong_Check(obj) && !PyIndex_Check(obj)) {
    PyErr_Format(PyExc_TypeError, "%s: expected int, got %s", what, Py_TYPE(obj)->tp_name);
    return false;
  }
  *out = PyLong_AsLongLong(obj);
  return !(*out == -1 && PyErr_Occurred());
}

bool GetDouble(PyObject* obj, double* out, const char* what) {
  *out = PyFloat_AsDouble(obj);
  if (*out == -1.0 && PyErr_Occurred()) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s: expected a number, got %s", what, Py_TYPE(obj)->tp_name);
    return false;
  }
  return true;
}

bool StrList::Parse(PyObject* seq, const char* what) {
  keep = PySequence_Fast(seq, what);
  if (keep == nullptr) {
    PyErr_Format(PyExc_TypeError, "%s: expected a sequence of str, got %s", what, Py_TYPE(seq)->tp_name);
    return false;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(keep);
  PyObject** items = PySequence_Fast_ITEMS(keep);
  ptrs.resize(n);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!GetStr(items[i], &ptrs[i], what)) return false;
  }
  return true;
}

bool GetHandles(PyObject* seq, int kind, std::vector<void*>* out, const char* what, bool allow_none) {
  PyObject* fast = PySequence_Fast(seq, what);
  if (fast == nullptr) {
    PyErr_Format(PyExc_TypeError, "%s: expected a sequence of %s handles, got %s", what, kKindNames[kind],
                 Py_TYPE(seq)->tp_name);
    return false;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  out->resize(n);
  bool ok = true;
  for (Py_ssize_t i = 0; i < n && ok; ++i) {
    ok = GetHandle(PySequence_Fast_GET_ITEM(fast, i), kind, &(*out)[i], what, allow_none);
  }
  Py_DECREF(fast);
  return ok;
}

bool Attrs::Parse(PyObject* obj, const char* what) {
  if (obj == Py_None) return true;
  if (PyDict_Check(obj)) {
    PyObject* k = PyDict_Keys(obj);
    PyObject* v = PyDict_Values(obj);
    bool ok = k != nullptr && v != nullptr && keys.Parse(k, what) && vals.Parse(v, what);
    Py_XDECREF(k);
    Py_XDECREF(v);
    return ok;
  }
  PyErr_Format(PyExc_TypeError, "%s: expected a dict of str to str, got %s", what, Py_TYPE(obj)->tp_name);
  return false;
}

PyObject* StrOrNone(const char* s) {
  if (s == nullptr) Py_RETURN_NONE;
  return PyUnicode_DecodeUTF8(s, std::strlen(s), "replace");
}

PyObject* StrListToPy(uint32_t n, const char** names) {
  PyObject* list = PyList_New(n);
  if (list == nullptr) return nullptr;
  for (uint32_t i = 0; i < n; ++i) {
    PyObject* s = StrOrNone(names[i]);
    if (s == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, s);
  }
  return list;
}

}  // namespace tinyflow

PyMODINIT_FUNC PyInit__C(void) {
  using namespace tinyflow;
  HandleType.ob_base.ob_base.ob_refcnt = 1;
  HandleType.tp_name = "tinyflow._C.Handle";
  HandleType.tp_basicsize = sizeof(Handle);
  HandleType.tp_flags = Py_TPFLAGS_DEFAULT;
  HandleType.tp_doc = "A library handle (symbol, graph, session, array...); an owned one is freed with the object.";
  HandleType.tp_dealloc = HandleDealloc;
  HandleType.tp_repr = HandleRepr;
  HandleType.tp_getset = kHandleGetSet;
  if (PyType_Ready(&HandleType) < 0) return nullptr;
  if (!InitNumPy() || !InitEager()) return nullptr;
  for (PyMethodDef* table :
       {kModuleMethods, kSymbolMethods, kGraphMethods, kSessionMethods, kRuntimeMethods, kEagerMethods, kTFMethods}) {
    for (PyMethodDef* m = table; m->ml_name != nullptr; ++m) g_methods.push_back(*m);
  }
  g_methods.push_back({nullptr, nullptr, 0, nullptr});
  kModule.m_methods = g_methods.data();
  PyObject* module = PyModule_Create(&kModule);
  if (module == nullptr) return nullptr;
  Py_INCREF(&HandleType);
  if (PyModule_AddObject(module, "Handle", reinterpret_cast<PyObject*>(&HandleType)) < 0) return nullptr;
  if (!AddEagerTypes(module)) return nullptr;
  return module;
}
