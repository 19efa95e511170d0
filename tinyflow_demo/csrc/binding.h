/*!
 * \file binding.h
 * \brief tinyflow._C, the one native module of the Python package: shared pieces of its parts.
 *
 * The module is a client of the C API only (ir/c_api.h, ir_tf/c_api_tf.h), never of C++ internals.
 * Every library handle reaches Python as a Handle object of one kind (symbol, graph, session...);
 * an owned one is freed when the object dies. A wrong-typed argument raises TypeError; a failed C
 * API call raises the error class set by _set_error_class with IRGetLastError's message.
 * Plain CPython C API with METH_FASTCALL, not pybind11: a trivial call measured 44 ns here against
 * pybind11's 283 ns (add(1, 2); noop: 28 vs 125 ns), and eager mode makes one call per op.
 */
#ifndef TINYFLOW_CSRC_BINDING_H_
#define TINYFLOW_CSRC_BINDING_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ir/c_api.h"

namespace tinyflow {

/*! \brief What a Handle holds; the kinds with a free function own their pointer. */
enum HandleKind { kOp, kSymbol, kGraph, kNDArray, kSession, kLazy, kLazyContext, kTape, kNumKinds };

struct Handle {
  PyObject_HEAD void* ptr;
  int kind;
};

extern PyTypeObject HandleType;

/*! \brief A new Handle owning `ptr` (freed with its kind's free function); NULL ptr gives None. */
PyObject* NewHandle(void* ptr, int kind);
/*! \brief The pointer of `obj`, a Handle of `kind` (None gives NULL when `allow_none`); else TypeError. */
bool GetHandle(PyObject* obj, int kind, void** out, const char* what, bool allow_none = false);

/*! \brief Raises the error class with IRGetLastError()'s message; returns NULL. */
PyObject* RaiseLastError();
/*! \brief Checks the count of a fastcall's arguments (TypeError naming `fn`). */
bool CheckArgs(const char* fn, Py_ssize_t nargs, Py_ssize_t min, Py_ssize_t max);

/*! \brief A str argument as UTF-8 (valid while `obj` lives); None gives NULL when `allow_none`. */
bool GetStr(PyObject* obj, const char** out, const char* what, bool allow_none = false);
bool GetInt(PyObject* obj, long long* out, const char* what);
bool GetDouble(PyObject* obj, double* out, const char* what);

/*! \brief A sequence of str as C strings (kept alive by `keep`, the sequence's items). */
struct StrList {
  std::vector<const char*> ptrs;
  PyObject* keep = nullptr;
  ~StrList() { Py_XDECREF(keep); }
  bool Parse(PyObject* seq, const char* what);
  const char** data() { return ptrs.empty() ? nullptr : ptrs.data(); }
  uint32_t size() const { return static_cast<uint32_t>(ptrs.size()); }
};

/*! \brief A sequence of Handles of one kind (None entries as NULL when `allow_none`). */
bool GetHandles(PyObject* seq, int kind, std::vector<void*>* out, const char* what, bool allow_none = false);

/*! \brief A dict {str: str} (or a sequence of (str, str) pairs) as parallel key and value arrays. */
struct Attrs {
  StrList keys, vals;
  bool Parse(PyObject* obj, const char* what);
};

PyObject* StrOrNone(const char* s);
PyObject* StrListToPy(uint32_t n, const char** names);

/*!
 * \brief A NumPy array of the NDArray's values: with `take` and `zero_copy`, a view on its host buffer
 * that owns the handle (no copy), else a copy (the handle freed when `take`). 0-d: a NumPy scalar.
 */
PyObject* NDArrayToNumPy(IRNDArrayHandle array, bool take, bool zero_copy);
/*! \brief A C-contiguous NumPy array of `dtype` (an IR code; -1: its own) from any array-like. */
PyObject* AsContiguous(PyObject* value, int dtype);
/*! \brief The IR dtype code of a NumPy array's dtype, or -1 (TypeError set) when it has none. */
int DTypeOfNumPy(PyObject* array, const char* what);

/*! \brief A new NDArray Handle holding a copy of an array-like (converted to IR dtype `dtype`; -1: its own). */
PyObject* NumPyToNDArray(PyObject* value, int dtype);

/*! \brief Module set-up of the parts: NumPy's import_array (ndarray.cc), interned names (eager.cc). */
bool InitNumPy();
bool InitEager();
/*! \brief Adds eager.cc's types to the module (LazyTensor, EagerTensor's storage). */
bool AddEagerTypes(PyObject* module);

extern PyMethodDef kGraphMethods[];
extern PyMethodDef kSymbolMethods[];
extern PyMethodDef kSessionMethods[];
extern PyMethodDef kEagerMethods[];
extern PyMethodDef kTFMethods[];
extern PyMethodDef kRuntimeMethods[];

/*! \brief Releases the GIL for its scope: around long library calls (runs, passes, materialization). */
class WithoutGIL {
 public:
  WithoutGIL() : state_(PyEval_SaveThread()) {}
  ~WithoutGIL() { PyEval_RestoreThread(state_); }
  WithoutGIL(const WithoutGIL&) = delete;
  WithoutGIL& operator=(const WithoutGIL&) = delete;

 private:
  PyThreadState* state_;
};

/*! \brief Casts a fastcall function to the PyCFunction a PyMethodDef holds. */
#define TF_FASTCALL(fn) reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(fn))

}  // namespace tinyflow

#endif  // TINYFLOW_CSRC_BINDING_H_
