/*!
 * \file eager.cc
 * \brief tinyflow._C: eager mode's lazy arrays and gradient tapes (IRLazy*), with the per-op fast path.
 *
 * lazy_apply is the call eager recording makes once per op: it takes the op handle, the attributes
 * as tuples of str, and the input tensors themselves (their `_h` handles are read here), and makes
 * the output EagerTensors without running Python code. Only materialization (values read, assigned,
 * differentiated) releases the GIL: recording an op is too short for it.
 */
#include <cstring>

#include "binding.h"

namespace tinyflow {
namespace {

PyTypeObject* g_tensor_type = nullptr;  // eager.EagerTensor (lazy_setup)
PyObject* g_float_dtypes = nullptr;     // the dtypes an elementwise op's output keeps (float32, float64)
PyObject* g_str_h = nullptr;            // interned "_h", "_dtype"
PyObject* g_str_dtype = nullptr;
PyObject* g_empty = nullptr;
extern PyTypeObject LazyTensorType;  // (below: the storage of EagerTensor)

PyObject* LazySetup(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("lazy_setup", nargs, 2, 2)) return nullptr;
  if (!PyType_Check(args[0]) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(args[0]), &LazyTensorType) ||
      !PyTuple_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "lazy_setup(tensor_class: a subclass of _C.LazyTensor, tuple of float dtypes)");
    return nullptr;
  }
  Py_INCREF(args[0]);
  Py_XSETREF(g_tensor_type, reinterpret_cast<PyTypeObject*>(args[0]));
  Py_INCREF(args[1]);
  Py_XSETREF(g_float_dtypes, args[1]);
  Py_RETURN_NONE;
}

/*!
 * The storage of an eager tensor (_C.LazyTensor, EagerTensor's first base): its lazy handle and dtype as C
 * fields, so that an op's output is made without an instance dict or a Handle object. `_h` reads as a Handle
 * (made on first read, which then owns the array: _detach hands it on) and may be set like an attribute.
 */
struct LazyTensor {
  PyObject_HEAD void* raw;  // the array while no Handle was asked for (owned)
  PyObject* handle;         // the Handle `_h` returned (owns the array), or what `_h` was set to
  PyObject* dtype;          // `_dtype`: NULL reads as None
};

PyTypeObject LazyTensorType;

void LazyTensorDealloc(PyObject* self) {
  LazyTensor* t = reinterpret_cast<LazyTensor*>(self);
  if (t->raw != nullptr) IRLazyFree(t->raw);
  Py_XDECREF(t->handle);
  Py_XDECREF(t->dtype);
  Py_TYPE(self)->tp_free(self);
}

PyObject* LazyTensorGetH(PyObject* self, void*) {
  LazyTensor* t = reinterpret_cast<LazyTensor*>(self);
  if (t->raw != nullptr) {
    t->handle = NewHandle(t->raw, kLazy);  // (frees the array when it fails)
    t->raw = nullptr;
    if (t->handle == nullptr) return nullptr;
  }
  return Py_NewRef(t->handle != nullptr ? t->handle : Py_None);
}

int LazyTensorSetH(PyObject* self, PyObject* value, void*) {
  LazyTensor* t = reinterpret_cast<LazyTensor*>(self);
  if (t->raw != nullptr) IRLazyFree(t->raw);
  t->raw = nullptr;
  Py_XSETREF(t->handle, value == nullptr || value == Py_None ? nullptr : Py_NewRef(value));
  return 0;
}

PyObject* LazyTensorGetDType(PyObject* self, void*) {
  PyObject* d = reinterpret_cast<LazyTensor*>(self)->dtype;
  return Py_NewRef(d != nullptr ? d : Py_None);
}

int LazyTensorSetDType(PyObject* self, PyObject* value, void*) {
  Py_XSETREF(reinterpret_cast<LazyTensor*>(self)->dtype,
             value == nullptr || value == Py_None ? nullptr : Py_NewRef(value));
  return 0;
}

PyGetSetDef kLazyTensorGetSet[] = {
    {"_h", LazyTensorGetH, LazyTensorSetH, "the Lazy handle (None once detached)", nullptr},
    {"_dtype", LazyTensorGetDType, LazyTensorSetDType, "the dtype when known, else None", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

/*! \brief The lazy handle of an op input: a Handle, or an object whose `_h` is one (AttributeError else). */
bool InputHandle(PyObject* x, void** out) {
  if (PyObject_TypeCheck(x, &LazyTensorType)) {
    LazyTensor* t = reinterpret_cast<LazyTensor*>(x);
    if (t->raw != nullptr) {
      *out = t->raw;
      return true;
    }
    return GetHandle(t->handle != nullptr ? t->handle : Py_None, kLazy, out, "lazy_apply: input");
  }
  if (Py_TYPE(x) == &HandleType) return GetHandle(x, kLazy, out, "lazy_apply: input");
  PyObject* h = PyObject_GetAttr(x, g_str_h);
  if (h == nullptr) return false;
  bool ok = GetHandle(h, kLazy, out, "lazy_apply: input");
  Py_DECREF(h);
  return ok;
}

/*! \brief A new EagerTensor owning `handle` (with `_dtype` when not NULL); its fields set directly. */
PyObject* NewTensor(IRLazyHandle handle, PyObject* dtype) {
  PyObject* t = g_tensor_type->tp_new(g_tensor_type, g_empty, nullptr);
  if (t == nullptr) {
    IRLazyFree(handle);
    return nullptr;
  }
  LazyTensor* lt = reinterpret_cast<LazyTensor*>(t);
  lt->raw = handle;
  lt->dtype = dtype != nullptr ? Py_NewRef(dtype) : nullptr;
  return t;
}

/*! \brief The dtype every input knows it has when it is one of the float dtypes, else NULL (borrowed). */
PyObject* CommonFloatDType(PyObject* const* inputs, Py_ssize_t n) {
  PyObject* common = nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* d;
    if (PyObject_TypeCheck(inputs[i], &LazyTensorType)) {
      d = reinterpret_cast<LazyTensor*>(inputs[i])->dtype;  // (borrowed)
      if (d == nullptr) return nullptr;
    } else {
      d = PyObject_GetAttr(inputs[i], g_str_dtype);
      if (d == nullptr) {
        PyErr_Clear();
        return nullptr;
      }
      Py_DECREF(d);  // (the dtype objects are module constants: borrowing them is safe)
    }
    if (common == nullptr) {
      common = d;
      bool is_float = false;
      for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(g_float_dtypes); ++k)
        is_float |= PyTuple_GET_ITEM(g_float_dtypes, k) == d;
      if (!is_float) return nullptr;
    } else if (d != common) {
      return nullptr;
    }
  }
  return common;
}

/*! \brief Records `op` on the inputs (`items`, their handles `in`): one EagerTensor, or a list for several outputs. */
PyObject* Record(void* op, Py_ssize_t nattr, const char** k, const char** v, PyObject* const* items, void** in,
                 Py_ssize_t n, bool keeps_dtype) {
  uint32_t nout = 0;
  IRLazyHandle* outs = nullptr;
  if (IRLazyApply(op, static_cast<uint32_t>(nattr), k, v, static_cast<uint32_t>(n), in, &nout, &outs) != 0)
    return RaiseLastError();
  if (nout == 1) return NewTensor(outs[0], n > 0 && keeps_dtype ? CommonFloatDType(items, n) : nullptr);
  PyObject* result = PyList_New(nout);
  for (uint32_t i = 0; i < nout; ++i) {
    PyObject* t = result != nullptr ? NewTensor(outs[i], nullptr) : nullptr;
    if (t == nullptr) {
      for (uint32_t j = i + 1; j < nout; ++j) IRLazyFree(outs[j]);
      Py_CLEAR(result);
      break;
    }
    PyList_SET_ITEM(result, i, t);
  }
  return result;
}

/*!
 * lazy_apply(op, keys, vals, inputs, keeps_dtype) -> EagerTensor, or a list of them when the op has
 * several outputs; keeps_dtype: the output has its floating inputs' common dtype (set without asking
 * the library, whose answer infers the pending DAG).
 */
PyObject* LazyApply(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs != 5) return CheckArgs("lazy_apply", nargs, 5, 5) ? nullptr : nullptr;
  if (g_tensor_type == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "lazy_apply before lazy_setup");
    return nullptr;
  }
  void* op;
  if (!GetHandle(args[0], kOp, &op, "lazy_apply: op")) return nullptr;
  PyObject *keys = args[1], *vals = args[2];
  if (!PyTuple_Check(keys) || !PyTuple_Check(vals) || PyTuple_GET_SIZE(keys) != PyTuple_GET_SIZE(vals)) {
    PyErr_SetString(PyExc_TypeError, "lazy_apply: attribute keys and values must be tuples of str of one length");
    return nullptr;
  }
  constexpr Py_ssize_t kSmall = 8;
  Py_ssize_t nattr = PyTuple_GET_SIZE(keys);
  const char* small_keys[kSmall];
  const char* small_vals[kSmall];
  std::vector<const char*> big_keys, big_vals;
  const char** k = small_keys;
  const char** v = small_vals;
  if (nattr > kSmall) {
    big_keys.resize(nattr);
    big_vals.resize(nattr);
    k = big_keys.data();
    v = big_vals.data();
  }
  for (Py_ssize_t i = 0; i < nattr; ++i) {
    if (!GetStr(PyTuple_GET_ITEM(keys, i), &k[i], "lazy_apply: attribute key") ||
        !GetStr(PyTuple_GET_ITEM(vals, i), &v[i], "lazy_apply: attribute value"))
      return nullptr;
  }
  PyObject* seq = args[3];
  PyObject* fast = PySequence_Fast(seq, "lazy_apply: inputs must be a sequence");
  if (fast == nullptr) return nullptr;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
  PyObject** items = PySequence_Fast_ITEMS(fast);
  void* small_in[kSmall];
  std::vector<void*> big_in;
  void** in = small_in;
  if (n > kSmall) {
    big_in.resize(n);
    in = big_in.data();
  }
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!InputHandle(items[i], &in[i])) {
      Py_DECREF(fast);
      return nullptr;
    }
  }
  PyObject* result = Record(op, nattr, k, v, items, in, n, PyObject_IsTrue(args[4]) == 1);
  Py_DECREF(fast);
  return result;
}

/*!
 * An EagerTensor operator (lazy_binary_op): x op y of two EagerTensors records the op right here (no
 * Python frame); any other operand goes to the Python `fallback(self, other)`. A method descriptor,
 * so the interpreter calls it unbound with self first.
 */
struct BinaryOp {
  PyObject_HEAD vectorcallfunc vectorcall;
  void* op;
  PyObject* op_handle;
  PyObject* fallback;
  bool keeps_dtype;
  bool reverse;
};

PyTypeObject BinaryOpType;

PyObject* BinaryOpCall(PyObject* callable, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  BinaryOp* b = reinterpret_cast<BinaryOp*>(callable);
  Py_ssize_t n = PyVectorcall_NARGS(nargsf);
  if (n == 2 && kwnames == nullptr && Py_TYPE(args[0]) == g_tensor_type && Py_TYPE(args[1]) == g_tensor_type) {
    PyObject* items[2] = {args[b->reverse ? 1 : 0], args[b->reverse ? 0 : 1]};
    void* in[2];
    if (!InputHandle(items[0], &in[0]) || !InputHandle(items[1], &in[1])) return nullptr;
    return Record(b->op, 0, nullptr, nullptr, items, in, 2, b->keeps_dtype);
  }
  return PyObject_Vectorcall(b->fallback, args, nargsf, kwnames);
}

PyObject* BinaryOpGet(PyObject* self, PyObject* obj, PyObject*) {
  if (obj == nullptr || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

void BinaryOpDealloc(PyObject* self) {
  BinaryOp* b = reinterpret_cast<BinaryOp*>(self);
  Py_XDECREF(b->op_handle);
  Py_XDECREF(b->fallback);
  Py_TYPE(self)->tp_free(self);
}

/*! \brief lazy_binary_op(op, keeps_dtype, reverse, fallback) -> an operator for EagerTensor (__mul__...). */
PyObject* LazyBinaryOp(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* op;
  if (!CheckArgs("lazy_binary_op", nargs, 4, 4) || !GetHandle(args[0], kOp, &op, "lazy_binary_op: op")) return nullptr;
  if (!PyCallable_Check(args[3])) {
    PyErr_SetString(PyExc_TypeError, "lazy_binary_op: fallback must be callable");
    return nullptr;
  }
  BinaryOp* b = PyObject_New(BinaryOp, &BinaryOpType);
  if (b == nullptr) return nullptr;
  b->vectorcall = BinaryOpCall;
  b->op = op;
  b->op_handle = Py_NewRef(args[0]);
  b->fallback = Py_NewRef(args[3]);
  b->keeps_dtype = PyObject_IsTrue(args[1]) == 1;
  b->reverse = PyObject_IsTrue(args[2]) == 1;
  return reinterpret_cast<PyObject*>(b);
}

PyObject* LazyScalar(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  double value;
  long long dtype;
  if (!CheckArgs("lazy_scalar", nargs, 2, 2) || !GetDouble(args[0], &value, "lazy_scalar: value") ||
      !GetInt(args[1], &dtype, "lazy_scalar: dtype"))
    return nullptr;
  IRLazyHandle out = nullptr;
  if (IRLazyScalar(value, static_cast<int>(dtype), &out) != 0) return RaiseLastError();
  return NewHandle(out, kLazy);
}

/*! \brief lazy_from_numpy(array, dtype): a leaf holding a copy of a C-contiguous array of that IR dtype. */
PyObject* LazyFromNumPy(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  long long dtype;
  if (!CheckArgs("lazy_from_numpy", nargs, 2, 2) || !GetInt(args[1], &dtype, "lazy_from_numpy: dtype")) return nullptr;
  PyObject* arr = AsContiguous(args[0], static_cast<int>(dtype));
  if (arr == nullptr) return nullptr;
  Py_buffer view;
  if (PyObject_GetBuffer(arr, &view, PyBUF_ND | PyBUF_C_CONTIGUOUS) != 0) {
    Py_DECREF(arr);
    return nullptr;
  }
  std::vector<int64_t> shape(view.shape, view.shape + view.ndim);
  IRLazyHandle out = nullptr;
  int rc = IRLazyFromHost(view.buf, view.ndim, shape.data(), static_cast<int>(dtype), &out);
  PyBuffer_Release(&view);
  Py_DECREF(arr);
  if (rc != 0) return RaiseLastError();
  return NewHandle(out, kLazy);
}

/*! \brief lazy_to_numpy(h, snapshot): computes what is pending and copies the value out (snapshot: taken
 * while no assignment writes it, IRLazyReadValue). */
PyObject* LazyToNumPy(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* h;
  if (!CheckArgs("lazy_to_numpy", nargs, 2, 2) || !GetHandle(args[0], kLazy, &h, "lazy_to_numpy")) return nullptr;
  bool snapshot = PyObject_IsTrue(args[1]) == 1;
  IRNDArrayHandle out = nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = snapshot ? IRLazyReadValue(h, &out) : IRLazyToNDArray(h, &out);
  }
  if (rc != 0) return RaiseLastError();
  return NDArrayToNumPy(out, true, snapshot);  // (a snapshot is a fresh copy: the array may own it)
}

PyObject* LazyShape(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* h;
  if (!CheckArgs("lazy_shape", nargs, 1, 1) || !GetHandle(args[0], kLazy, &h, "lazy_shape")) return nullptr;
  int ndim = 0;
  const int64_t* dims = nullptr;
  if (IRLazyGetShape(h, &ndim, &dims) != 0) return RaiseLastError();
  PyObject* out = PyList_New(ndim);
  for (int i = 0; out != nullptr && i < ndim; ++i) PyList_SET_ITEM(out, i, PyLong_FromLongLong(dims[i]));
  return out;
}

PyObject* LazyDType(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* h;
  if (!CheckArgs("lazy_dtype", nargs, 1, 1) || !GetHandle(args[0], kLazy, &h, "lazy_dtype")) return nullptr;
  int code = 0;
  if (IRLazyGetDType(h, &code) != 0) return RaiseLastError();
  return PyLong_FromLong(code);
}

/*! \brief lazy_assign(targets, values, op): IRLazyAssignUpdate (op 0 assign, 1 add, 2 subtract). */
PyObject* LazyAssign(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  std::vector<void*> targets, values;
  long long op;
  if (!CheckArgs("lazy_assign", nargs, 3, 3) || !GetHandles(args[0], kLazy, &targets, "lazy_assign: targets") ||
      !GetHandles(args[1], kLazy, &values, "lazy_assign: values") || !GetInt(args[2], &op, "lazy_assign: op"))
    return nullptr;
  if (targets.size() != values.size()) {
    PyErr_SetString(PyExc_ValueError, "lazy_assign: one value per target");
    return nullptr;
  }
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRLazyAssignUpdate(static_cast<uint32_t>(targets.size()), targets.data(), values.data(), static_cast<int>(op));
  }
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* ContextCreate(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* options;
  if (!CheckArgs("lazy_context_create", nargs, 1, 1) ||
      !GetStr(args[0], &options, "lazy_context_create: options", true))
    return nullptr;
  IRLazyContextHandle out = nullptr;
  if (IRLazyContextCreate(options, &out) != 0) return RaiseLastError();
  return NewHandle(out, kLazyContext);
}

bool OptionalContext(const char* fn, PyObject* const* args, Py_ssize_t nargs, void** ctx) {
  return CheckArgs(fn, nargs, 1, 1) && GetHandle(args[0], kLazyContext, ctx, fn, true);
}

PyObject* ContextSetCurrent(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* ctx;
  if (!OptionalContext("lazy_context_set_current", args, nargs, &ctx)) return nullptr;
  if (IRLazyContextSetCurrent(ctx) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* ContextStats(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* ctx;
  if (!OptionalContext("lazy_stats_json", args, nargs, &ctx)) return nullptr;
  const char* json = nullptr;
  if (IRLazyContextGetStatsJSON(ctx, &json) != 0) return RaiseLastError();
  return StrOrNone(json);
}

PyObject* ContextResetStats(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* ctx;
  if (!OptionalContext("lazy_reset_stats", args, nargs, &ctx)) return nullptr;
  if (IRLazyContextResetStats(ctx) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

// ---- tapes ----

PyObject* TapeCreate(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("tape_create", nargs, 1, 1)) return nullptr;
  IRLazyTapeHandle out = nullptr;
  if (IRLazyTapeCreate(PyObject_IsTrue(args[0]) == 1, &out) != 0) return RaiseLastError();
  return NewHandle(out, kTape);
}

PyObject* TapeWatch(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void *tape, *h;
  if (!CheckArgs("tape_watch", nargs, 2, 2) || !GetHandle(args[0], kTape, &tape, "tape_watch: tape") ||
      !GetHandle(args[1], kLazy, &h, "tape_watch: array"))
    return nullptr;
  if (IRLazyTapeWatch(tape, h) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* TapeStop(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* tape;
  if (!CheckArgs("tape_stop", nargs, 1, 1) || !GetHandle(args[0], kTape, &tape, "tape_stop")) return nullptr;
  if (IRLazyTapeStop(tape) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

/*! \brief tape_gradient(tape, targets, heads or None, sources) -> one Lazy handle (or None) per source. */
PyObject* TapeGradient(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* tape;
  std::vector<void*> targets, heads, sources;
  if (!CheckArgs("tape_gradient", nargs, 4, 4) || !GetHandle(args[0], kTape, &tape, "tape_gradient: tape") ||
      !GetHandles(args[1], kLazy, &targets, "tape_gradient: targets") ||
      (args[2] != Py_None && !GetHandles(args[2], kLazy, &heads, "tape_gradient: heads", true)) ||
      !GetHandles(args[3], kLazy, &sources, "tape_gradient: sources"))
    return nullptr;
  if (args[2] != Py_None && heads.size() != targets.size()) {
    PyErr_SetString(PyExc_ValueError, "tape_gradient: one head per target");
    return nullptr;
  }
  std::vector<void*> grads(sources.size() + 1, nullptr);
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRLazyTapeGradient(tape, static_cast<uint32_t>(targets.size()), targets.data(),
                            args[2] == Py_None ? nullptr : heads.data(), static_cast<uint32_t>(sources.size()),
                            sources.data(), grads.data());
  }
  if (rc != 0) return RaiseLastError();
  PyObject* out = PyList_New(sources.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    PyObject* g = out != nullptr ? NewHandle(grads[i], kLazy) : nullptr;
    if (g == nullptr) {
      for (size_t j = i + 1; j < sources.size(); ++j) IRLazyFree(grads[j]);
      Py_CLEAR(out);
      break;
    }
    PyList_SET_ITEM(out, i, g);
  }
  return out;
}

}  // namespace

PyMethodDef kEagerMethods[] = {
    {"lazy_setup", TF_FASTCALL(LazySetup), METH_FASTCALL, "lazy_setup(EagerTensor, float dtypes)"},
    {"lazy_apply", TF_FASTCALL(LazyApply), METH_FASTCALL,
     "lazy_apply(op, keys, vals, inputs, keeps_dtype) -> EagerTensor or [EagerTensor]"},
    {"lazy_binary_op", TF_FASTCALL(LazyBinaryOp), METH_FASTCALL,
     "lazy_binary_op(op, keeps_dtype, reverse, fallback) -> an EagerTensor operator"},
    {"lazy_scalar", TF_FASTCALL(LazyScalar), METH_FASTCALL, "lazy_scalar(value, dtype) -> Lazy handle"},
    {"lazy_from_numpy", TF_FASTCALL(LazyFromNumPy), METH_FASTCALL, "lazy_from_numpy(array, dtype) -> Lazy handle"},
    {"lazy_to_numpy", TF_FASTCALL(LazyToNumPy), METH_FASTCALL, "lazy_to_numpy(h, snapshot) -> NumPy value"},
    {"lazy_shape", TF_FASTCALL(LazyShape), METH_FASTCALL, "lazy_shape(h) -> [int]"},
    {"lazy_dtype", TF_FASTCALL(LazyDType), METH_FASTCALL, "lazy_dtype(h) -> IR dtype code"},
    {"lazy_assign", TF_FASTCALL(LazyAssign), METH_FASTCALL, "lazy_assign(targets, values, op)"},
    {"lazy_context_create", TF_FASTCALL(ContextCreate), METH_FASTCALL, "lazy_context_create(options_json)"},
    {"lazy_context_set_current", TF_FASTCALL(ContextSetCurrent), METH_FASTCALL, "lazy_context_set_current(ctx)"},
    {"lazy_stats_json", TF_FASTCALL(ContextStats), METH_FASTCALL, "lazy_stats_json(ctx or None) -> str"},
    {"lazy_reset_stats", TF_FASTCALL(ContextResetStats), METH_FASTCALL, "lazy_reset_stats(ctx or None)"},
    {"tape_create", TF_FASTCALL(TapeCreate), METH_FASTCALL, "tape_create(persistent) -> Tape"},
    {"tape_watch", TF_FASTCALL(TapeWatch), METH_FASTCALL, "tape_watch(tape, h)"},
    {"tape_stop", TF_FASTCALL(TapeStop), METH_FASTCALL, "tape_stop(tape)"},
    {"tape_gradient", TF_FASTCALL(TapeGradient), METH_FASTCALL,
     "tape_gradient(tape, targets, heads, sources) -> [Lazy or None]"},
    {nullptr, nullptr, 0, nullptr}};

bool InitEager() {
  BinaryOpType.ob_base.ob_base.ob_refcnt = 1;
  BinaryOpType.tp_name = "tinyflow._C.BinaryOp";
  BinaryOpType.tp_basicsize = sizeof(BinaryOp);
  BinaryOpType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR;
  BinaryOpType.tp_doc = "An EagerTensor operator recording its op for two eager tensors (lazy_binary_op).";
  BinaryOpType.tp_vectorcall_offset = offsetof(BinaryOp, vectorcall);
  BinaryOpType.tp_call = PyVectorcall_Call;
  BinaryOpType.tp_descr_get = BinaryOpGet;
  BinaryOpType.tp_dealloc = BinaryOpDealloc;
  if (PyType_Ready(&BinaryOpType) < 0) return false;
  LazyTensorType.ob_base.ob_base.ob_refcnt = 1;
  LazyTensorType.tp_name = "tinyflow._C.LazyTensor";
  LazyTensorType.tp_basicsize = sizeof(LazyTensor);
  LazyTensorType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  LazyTensorType.tp_doc = "The storage of an eager tensor: its lazy handle (_h) and dtype (_dtype).";
  LazyTensorType.tp_new = PyType_GenericNew;
  LazyTensorType.tp_dealloc = LazyTensorDealloc;
  LazyTensorType.tp_getset = kLazyTensorGetSet;
  if (PyType_Ready(&LazyTensorType) < 0) return false;
  g_str_h = PyUnicode_InternFromString("_h");
  g_str_dtype = PyUnicode_InternFromString("_dtype");
  g_empty = PyTuple_New(0);
  return g_str_h != nullptr && g_str_dtype != nullptr && g_empty != nullptr;
}

bool AddEagerTypes(PyObject* module) {
  Py_INCREF(&LazyTensorType);
  return PyModule_AddObject(module, "LazyTensor", reinterpret_cast<PyObject*>(&LazyTensorType)) == 0;
}

}  // namespace tinyflow
