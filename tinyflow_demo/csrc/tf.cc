/*!
 * \file tf.cc
 * \brief tinyflow._C: TensorFlow's file formats through libir_tensorflow (ir_tf/c_api_tf.h): checkpoint
 * bundles, summaries and event files, GraphDef export.
 */
#include "binding.h"
#include "ir_tf/c_api_tf.h"

namespace tinyflow {
#ifndef TINYFLOW_NO_TF
namespace {

/*! \brief The bytes a call wrote to *data and *size (read after the call: argument order is unspecified). */
PyObject* BytesOut(int rc, const char* const* data, const size_t* size) {
  if (rc != 0) return RaiseLastError();
  return PyBytes_FromStringAndSize(*data, static_cast<Py_ssize_t>(*size));
}

/*! \brief Optional bytes-like argument: (NULL, 0) for None. */
struct Bytes {
  Py_buffer view{};
  bool held = false;
  ~Bytes() {
    if (held) PyBuffer_Release(&view);
  }
  bool Parse(PyObject* obj, bool allow_none) {
    if (allow_none && obj == Py_None) return true;
    held = PyObject_GetBuffer(obj, &view, PyBUF_SIMPLE) == 0;
    return held;
  }
  const char* data() const { return held ? static_cast<const char*>(view.buf) : nullptr; }
  size_t size() const { return held ? static_cast<size_t>(view.len) : 0; }
};

/*! \brief tf_checkpoint_write(prefix, names, values, tf_dtypes or None): values are array-likes. */
PyObject* CheckpointWrite(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* prefix;
  StrList names;
  if (!CheckArgs("tf_checkpoint_write", nargs, 4, 4) || !GetStr(args[0], &prefix, "tf_checkpoint_write: prefix") ||
      !names.Parse(args[1], "tf_checkpoint_write: names"))
    return nullptr;
  PyObject* values = PySequence_Fast(args[2], "tf_checkpoint_write: values must be a sequence");
  if (values == nullptr) return nullptr;
  std::vector<PyObject*> owners;  // NDArray handles, freed with the list
  std::vector<void*> arrays;
  std::vector<int> tf_dtypes;
  bool ok = PySequence_Fast_GET_SIZE(values) == static_cast<Py_ssize_t>(names.size());
  if (!ok) PyErr_SetString(PyExc_ValueError, "tf_checkpoint_write: one value per name");
  for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(values); ++i) {
    PyObject* h = NumPyToNDArray(PySequence_Fast_GET_ITEM(values, i), -1);
    ok = h != nullptr;
    if (ok) {
      owners.push_back(h);
      arrays.push_back(reinterpret_cast<Handle*>(h)->ptr);
    }
  }
  if (ok && args[3] != Py_None) {
    PyObject* codes = PySequence_Fast(args[3], "tf_checkpoint_write: tf_dtypes must be a sequence");
    ok = codes != nullptr && PySequence_Fast_GET_SIZE(codes) == static_cast<Py_ssize_t>(names.size());
    for (Py_ssize_t i = 0; ok && i < PySequence_Fast_GET_SIZE(codes); ++i) {
      long long c;
      ok = GetInt(PySequence_Fast_GET_ITEM(codes, i), &c, "tf_checkpoint_write: tf_dtype");
      tf_dtypes.push_back(static_cast<int>(c));
    }
    if (codes != nullptr && !ok && !PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "one tf_dtype per name");
    Py_XDECREF(codes);
  }
  int rc = 0;
  if (ok) {
    WithoutGIL unlocked;
    rc = IRTFCheckpointWrite(prefix, names.size(), names.data(), arrays.data(),
                             tf_dtypes.empty() ? nullptr : tf_dtypes.data());
  }
  for (PyObject* h : owners) Py_DECREF(h);
  Py_DECREF(values);
  if (!ok) return nullptr;
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

/*! \brief tf_checkpoint_list(prefix) -> [(name, tf_dtype, [dims])], sorted by name. */
PyObject* CheckpointList(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* prefix;
  if (!CheckArgs("tf_checkpoint_list", nargs, 1, 1) || !GetStr(args[0], &prefix, "tf_checkpoint_list: prefix"))
    return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  const int *dtypes = nullptr, *ndims = nullptr;
  const int64_t* dims = nullptr;
  if (IRTFCheckpointList(prefix, &n, &names, &dtypes, &ndims, &dims) != 0) return RaiseLastError();
  PyObject* out = PyList_New(n);
  for (uint32_t i = 0; out != nullptr && i < n; ++i) {
    PyObject* shape = PyList_New(ndims[i]);
    for (int d = 0; shape != nullptr && d < ndims[i]; ++d) PyList_SET_ITEM(shape, d, PyLong_FromLongLong(*dims++));
    PyObject* item = shape != nullptr ? Py_BuildValue("(siN)", names[i], dtypes[i], shape) : nullptr;
    if (item == nullptr) {
      Py_CLEAR(out);
      break;
    }
    PyList_SET_ITEM(out, i, item);
  }
  return out;
}

PyObject* CheckpointRead(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char *prefix, *name;
  if (!CheckArgs("tf_checkpoint_read", nargs, 2, 2) || !GetStr(args[0], &prefix, "tf_checkpoint_read: prefix") ||
      !GetStr(args[1], &name, "tf_checkpoint_read: name"))
    return nullptr;
  IRNDArrayHandle out = nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRTFCheckpointRead(prefix, name, &out);
  }
  if (rc != 0) return RaiseLastError();
  return NDArrayToNumPy(out, true, true);
}

PyObject* SummaryScalar(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* tag;
  double value;
  if (!CheckArgs("tf_summary_scalar", nargs, 2, 2) || !GetStr(args[0], &tag, "tf_summary_scalar: tag") ||
      !GetDouble(args[1], &value, "tf_summary_scalar: value"))
    return nullptr;
  const char* out = nullptr;
  size_t size = 0;
  return BytesOut(IRTFSummaryScalar(tag, value, &out, &size), &out, &size);
}

PyObject* SummaryHistogram(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* tag;
  if (!CheckArgs("tf_summary_histogram", nargs, 2, 2) || !GetStr(args[0], &tag, "tf_summary_histogram: tag"))
    return nullptr;
  PyObject* h = NumPyToNDArray(args[1], -1);
  if (h == nullptr) return nullptr;
  const char* out = nullptr;
  size_t size = 0;
  int rc = IRTFSummaryHistogram(tag, reinterpret_cast<Handle*>(h)->ptr, &out, &size);
  PyObject* result = BytesOut(rc, &out, &size);
  Py_DECREF(h);
  return result;
}

PyObject* SummaryImage(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* tag;
  long long height, width, colors;
  Bytes png;
  if (!CheckArgs("tf_summary_image", nargs, 5, 5) || !GetStr(args[0], &tag, "tf_summary_image: tag") ||
      !GetInt(args[1], &height, "tf_summary_image: height") || !GetInt(args[2], &width, "tf_summary_image: width") ||
      !GetInt(args[3], &colors, "tf_summary_image: colorspace") || !png.Parse(args[4], false))
    return nullptr;
  const char* out = nullptr;
  size_t size = 0;
  return BytesOut(IRTFSummaryImage(tag, static_cast<int>(height), static_cast<int>(width), static_cast<int>(colors),
                                   png.data(), png.size(), &out, &size),
                  &out, &size);
}

/*! \brief tf_summary_text(tag, dims, strings). */
PyObject* SummaryText(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* tag;
  StrList strings;
  if (!CheckArgs("tf_summary_text", nargs, 3, 3) || !GetStr(args[0], &tag, "tf_summary_text: tag") ||
      !strings.Parse(args[2], "tf_summary_text: strings"))
    return nullptr;
  PyObject* fast = PySequence_Fast(args[1], "tf_summary_text: dims must be a sequence of int");
  if (fast == nullptr) return nullptr;
  std::vector<int64_t> dims;
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(fast); ++i) {
    long long d;
    if (!GetInt(PySequence_Fast_GET_ITEM(fast, i), &d, "tf_summary_text: dim")) {
      Py_DECREF(fast);
      return nullptr;
    }
    dims.push_back(d);
  }
  Py_DECREF(fast);
  const char* out = nullptr;
  size_t size = 0;
  return BytesOut(
      IRTFSummaryText(tag, static_cast<int>(dims.size()), dims.data(), strings.size(), strings.data(), &out, &size),
      &out, &size);
}

/*! \brief tf_event_write(path, wall_time, step, summary bytes, file_version bytes or None). */
PyObject* EventWrite(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* path;
  double wall;
  long long step;
  Bytes summary, version;
  if (!CheckArgs("tf_event_write", nargs, 5, 5) || !GetStr(args[0], &path, "tf_event_write: path") ||
      !GetDouble(args[1], &wall, "tf_event_write: wall_time") || !GetInt(args[2], &step, "tf_event_write: step") ||
      !summary.Parse(args[3], false) || !version.Parse(args[4], true))
    return nullptr;
  std::string file_version(version.data() != nullptr ? version.data() : "", version.size());
  int rc;
  {
    WithoutGIL unlocked;
    rc =
        IRTFEventWrite(path, wall, step, summary.data(), summary.size(), version.held ? file_version.c_str() : nullptr);
  }
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* GraphDefExport(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* graph;
  if (!CheckArgs("tf_graphdef_export", nargs, 2, 2) || !GetHandle(args[0], kGraph, &graph, "tf_graphdef_export"))
    return nullptr;
  const char* out = nullptr;
  size_t size = 0;
  return BytesOut(IRTFGraphDefExport(graph, PyObject_IsTrue(args[1]) == 1, &out, &size), &out, &size);
}

}  // namespace

PyMethodDef kTFMethods[] = {
    {"tf_checkpoint_write", TF_FASTCALL(CheckpointWrite), METH_FASTCALL,
     "tf_checkpoint_write(prefix, names, values, tf_dtypes)"},
    {"tf_checkpoint_list", TF_FASTCALL(CheckpointList), METH_FASTCALL,
     "tf_checkpoint_list(prefix) -> [(name, tf_dtype, dims)]"},
    {"tf_checkpoint_read", TF_FASTCALL(CheckpointRead), METH_FASTCALL, "tf_checkpoint_read(prefix, name) -> array"},
    {"tf_summary_scalar", TF_FASTCALL(SummaryScalar), METH_FASTCALL, "tf_summary_scalar(tag, value) -> bytes"},
    {"tf_summary_histogram", TF_FASTCALL(SummaryHistogram), METH_FASTCALL, "tf_summary_histogram(tag, values)"},
    {"tf_summary_image", TF_FASTCALL(SummaryImage), METH_FASTCALL, "tf_summary_image(tag, h, w, c, png) -> bytes"},
    {"tf_summary_text", TF_FASTCALL(SummaryText), METH_FASTCALL, "tf_summary_text(tag, dims, strings) -> bytes"},
    {"tf_event_write", TF_FASTCALL(EventWrite), METH_FASTCALL,
     "tf_event_write(path, wall_time, step, summary, file_version)"},
    {"tf_graphdef_export", TF_FASTCALL(GraphDefExport), METH_FASTCALL, "tf_graphdef_export(graph, as_text) -> bytes"},
    {nullptr, nullptr, 0, nullptr}};
#else
PyMethodDef kTFMethods[] = {{nullptr, nullptr, 0, nullptr}};  // a module over a sanitized libir variant
#endif

}  // namespace tinyflow
