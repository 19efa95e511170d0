/*!
 * \file ndarray.cc
 * \brief tinyflow._C: NumPy arrays to and from IRNDArrayHandles, host callbacks (tf.py_func), op libraries.
 */
#include <cstring>

#include "binding.h"

#define PY_ARRAY_UNIQUE_SYMBOL tinyflow_ARRAY_API
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace tinyflow {
namespace {

/*! \brief NumPy type numbers by IR dtype code (ir/base.h: float32, float64, int32, int64, bool). */
const int kNumPyTypes[] = {NPY_FLOAT32, NPY_FLOAT64, NPY_INT32, NPY_INT64, NPY_BOOL};
constexpr int kNumDTypes = sizeof(kNumPyTypes) / sizeof(kNumPyTypes[0]);

PyObject* FromNDArray(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("ndarray_to_numpy", nargs, 1, 1)) return nullptr;
  void* array;
  if (!GetHandle(args[0], kNDArray, &array, "ndarray_to_numpy")) return nullptr;
  return NDArrayToNumPy(array, false, false);
}

PyObject* ToNDArray(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("ndarray_from_numpy", nargs, 1, 2)) return nullptr;
  long long dtype = -1;
  if (nargs > 1 && args[1] != Py_None && !GetInt(args[1], &dtype, "ndarray_from_numpy: dtype")) return nullptr;
  return NumPyToNDArray(args[0], static_cast<int>(dtype));
}

}  // namespace

PyObject* NumPyToNDArray(PyObject* value, int dtype) {
  PyObject* arr = AsContiguous(value, dtype);
  if (arr == nullptr) return nullptr;
  int code = DTypeOfNumPy(arr, "ndarray_from_numpy");
  IRNDArrayHandle out = nullptr;
  int rc = code < 0 ? 0
                    : IRNDArrayCreate(PyArray_SHAPE(reinterpret_cast<PyArrayObject*>(arr)),
                                      PyArray_NDIM(reinterpret_cast<PyArrayObject*>(arr)), code,
                                      PyArray_DATA(reinterpret_cast<PyArrayObject*>(arr)), &out);
  Py_DECREF(arr);
  if (code < 0) return nullptr;
  if (rc != 0) return RaiseLastError();
  return NewHandle(out, kNDArray);
}

namespace {

/*! \brief The Python function a host_callback node calls: fn(list of arrays) -> list of arrays. */
int CallPython(void* user_data, uint32_t num_inputs, IRNDArrayHandle* inputs, uint32_t num_outputs,
               IRNDArrayHandle* outputs, char* error, size_t error_size) {
  PyGILState_STATE gil = PyGILState_Ensure();
  int rc = 1;
  PyObject* args = PyList_New(num_inputs);
  PyObject* results = nullptr;
  PyObject* fast = nullptr;
  for (uint32_t i = 0; args != nullptr && i < num_inputs; ++i) {
    PyObject* value = NDArrayToNumPy(inputs[i], false, false);
    if (value == nullptr) {
      Py_CLEAR(args);
      break;
    }
    PyObject* arr = PyArray_FROM_O(value);  // (a 0-d input arrives as a 0-d array, not a scalar)
    Py_DECREF(value);
    if (arr == nullptr) {
      Py_CLEAR(args);
      break;
    }
    PyList_SET_ITEM(args, i, arr);
  }
  if (args != nullptr) results = PyObject_CallOneArg(static_cast<PyObject*>(user_data), args);
  if (results != nullptr) fast = PySequence_Fast(results, "a host function returns a list of arrays");
  if (fast != nullptr) {
    if (PySequence_Fast_GET_SIZE(fast) != static_cast<Py_ssize_t>(num_outputs)) {
      PyErr_Format(PyExc_ValueError, "the function returned %zd values, expected %u", PySequence_Fast_GET_SIZE(fast),
                   num_outputs);
    } else {
      rc = 0;
      for (uint32_t i = 0; i < num_outputs && rc == 0; ++i) {
        PyObject* handle = NumPyToNDArray(PySequence_Fast_GET_ITEM(fast, i), -1);
        if (handle == nullptr) {
          rc = 1;
        } else {
          outputs[i] = reinterpret_cast<Handle*>(handle)->ptr;  // the library owns it now
          reinterpret_cast<Handle*>(handle)->ptr = nullptr;
          Py_DECREF(handle);
        }
      }
    }
  }
  if (rc != 0) {  // any failure reaches the run as its message ("Type: text"), never unwinds C++
    PyObject *type, *value, *trace;
    PyErr_Fetch(&type, &value, &trace);
    PyErr_NormalizeException(&type, &value, &trace);
    PyObject* text = value != nullptr ? PyObject_Str(value) : nullptr;
    const char* msg = text != nullptr ? PyUnicode_AsUTF8(text) : nullptr;
    if (msg == nullptr) {
      PyErr_Clear();
      msg = "(no message)";
    }
    std::snprintf(error, error_size, "%s: %s",
                  type != nullptr ? reinterpret_cast<PyTypeObject*>(type)->tp_name : "Error", msg);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(trace);
  }
  Py_XDECREF(fast);
  Py_XDECREF(results);
  Py_XDECREF(args);
  PyGILState_Release(gil);
  return rc;
}

PyObject* HostCallbackRegister(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("host_callback_register", nargs, 1, 1)) return nullptr;
  if (!PyCallable_Check(args[0])) {
    PyErr_SetString(PyExc_TypeError, "host_callback_register: want a callable fn(list of arrays) -> list of arrays");
    return nullptr;
  }
  int64_t id = 0;
  if (IRHostCallbackRegisterEx(CallPython, args[0], &id) != 0) return RaiseLastError();
  Py_INCREF(args[0]);  // the library calls it for the process's lifetime
  return PyLong_FromLongLong(id);
}

PyObject* LoadOpLibrary(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* path;
  if (!CheckArgs("load_op_library", nargs, 1, 1) || !GetStr(args[0], &path, "load_op_library: path")) return nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRLoadOpLibrary(path);
  }
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* RulesLoadFile(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* path;
  if (!CheckArgs("rules_load_file", nargs, 1, 1) || !GetStr(args[0], &path, "rules_load_file: path")) return nullptr;
  const char* name = nullptr;
  if (IRRulesLoadFile(path, &name) != 0) return RaiseLastError();
  return StrOrNone(name);
}

}  // namespace

bool InitNumPy() {
  import_array1(false);
  return true;
}

int DTypeOfNumPy(PyObject* array, const char* what) {
  int type = PyArray_TYPE(reinterpret_cast<PyArrayObject*>(array));
  for (int code = 0; code < kNumDTypes; ++code) {
    if (PyArray_EquivTypenums(type, kNumPyTypes[code])) return code;
  }
  PyErr_Format(PyExc_TypeError, "%s: NumPy dtype %R has no library dtype (float32, float64, int32, int64, bool)", what,
               reinterpret_cast<PyObject*>(PyArray_DESCR(reinterpret_cast<PyArrayObject*>(array))));
  return -1;
}

PyObject* AsContiguous(PyObject* value, int dtype) {
  if (dtype >= kNumDTypes) {
    PyErr_Format(PyExc_ValueError, "unknown library dtype code %d", dtype);
    return nullptr;
  }
  PyArray_Descr* descr = dtype < 0 ? nullptr : PyArray_DescrFromType(kNumPyTypes[dtype]);
  return PyArray_FromAny(value, descr, 0, 0, NPY_ARRAY_CARRAY_RO | NPY_ARRAY_FORCECAST, nullptr);  // (steals descr)
}

PyObject* NDArrayToNumPy(IRNDArrayHandle array, bool take, bool zero_copy) {
  int ndim = 0, dtype = 0;
  const int64_t* shape = nullptr;
  const void* data = nullptr;
  if (IRNDArrayGetData(array, &ndim, &shape, &dtype, &data) != 0) {
    if (take) IRNDArrayFree(array);
    return RaiseLastError();
  }
  if (dtype < 0 || dtype >= kNumDTypes) {
    if (take) IRNDArrayFree(array);
    PyErr_Format(PyExc_TypeError, "an array of library dtype %d has no NumPy dtype", dtype);
    return nullptr;
  }
  std::vector<npy_intp> dims(shape, shape + ndim);
  PyObject* out;
  if (zero_copy && take && data != nullptr && ndim > 0) {  // a view that owns the handle
    out = PyArray_New(&PyArray_Type, ndim, dims.data(), kNumPyTypes[dtype], nullptr, const_cast<void*>(data), 0,
                      NPY_ARRAY_CARRAY, nullptr);
    PyObject* owner = out != nullptr ? NewHandle(array, kNDArray) : nullptr;
    if (owner == nullptr || PyArray_SetBaseObject(reinterpret_cast<PyArrayObject*>(out), owner) < 0) {
      Py_XDECREF(out);
      if (owner == nullptr) IRNDArrayFree(array);
      return nullptr;
    }
    return out;
  }
  out = PyArray_SimpleNew(ndim, dims.data(), kNumPyTypes[dtype]);
  if (out != nullptr) {
    PyArrayObject* arr = reinterpret_cast<PyArrayObject*>(out);
    size_t bytes = PyArray_NBYTES(arr);
    if (data != nullptr) {
      std::memcpy(PyArray_DATA(arr), data, bytes);
    } else if (IRNDArraySyncCopyToCPU(array, PyArray_DATA(arr), bytes) != 0) {  // device memory
      Py_CLEAR(out);
      RaiseLastError();
    }
  }
  if (take) IRNDArrayFree(array);
  if (out != nullptr && ndim == 0) {  // a 0-d value is a NumPy scalar, as TF returns it
    PyObject* scalar = PyArray_Return(reinterpret_cast<PyArrayObject*>(out));
    return scalar;
  }
  return out;
}

PyMethodDef kRuntimeMethods[] = {
    {"ndarray_from_numpy", TF_FASTCALL(ToNDArray), METH_FASTCALL,
     "ndarray_from_numpy(value, dtype=None) -> NDArray handle holding a copy (dtype: an IR code)"},
    {"ndarray_to_numpy", TF_FASTCALL(FromNDArray), METH_FASTCALL, "ndarray_to_numpy(handle) -> a NumPy copy"},
    {"host_callback_register", TF_FASTCALL(HostCallbackRegister), METH_FASTCALL,
     "host_callback_register(fn) -> id: fn(list of arrays) -> list of arrays, called by host_callback nodes"},
    {"load_op_library", TF_FASTCALL(LoadOpLibrary), METH_FASTCALL, "load_op_library(path): IRLoadOpLibrary"},
    {"rules_load_file", TF_FASTCALL(RulesLoadFile), METH_FASTCALL, "rules_load_file(path) -> rule set name"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tinyflow
