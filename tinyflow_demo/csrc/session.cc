/*!
 * \file session.cc
 * \brief tinyflow._C: sessions (zero-copy feeds and fetches) and the collectives of tinyflow.horovod.
 */
#include <cstring>

#include "binding.h"

namespace tinyflow {
namespace {

/*! \brief Element sizes and buffer-protocol format letters by IR dtype code. */
const size_t kItemSizes[] = {4, 8, 4, 8, 1};
const char* const kDTypeNames[] = {"float32", "float64", "int32", "int64", "bool"};

/*! \brief The IR dtype code a buffer's format and item size describe, or -1. */
int DTypeOfBuffer(const Py_buffer& view) {
  const char* f = view.format != nullptr ? view.format : "B";
  if (*f == '@' || *f == '=' || *f == '<') ++f;
  if (f[0] == '\0' || f[1] != '\0') return -1;
  switch (f[0]) {
    case 'f':
      return view.itemsize == 4 ? 0 : -1;
    case 'd':
      return view.itemsize == 8 ? 1 : -1;
    case 'i':
    case 'l':
    case 'q':
      return view.itemsize == 4 ? 2 : view.itemsize == 8 ? 3 : -1;
    case '?':
      return view.itemsize == 1 ? 4 : -1;
    default:
      return -1;
  }
}

/*! \brief The buffers of one run's feeds (and the arrays converted for it), released when it ends. */
struct Feeds {
  std::vector<Py_buffer> views;
  std::vector<PyObject*> converted;
  ~Feeds() {
    for (Py_buffer& v : views) PyBuffer_Release(&v);
    for (PyObject* c : converted) Py_DECREF(c);
  }
};

/*!
 * \brief Why feed `value` cannot be read in place as IR dtype `code` (nullptr: it can; `view` then holds its
 * buffer, released by the caller).
 */
const char* FeedProblem(PyObject* value, int code, Py_buffer* view) {
  if (PyObject_GetBuffer(value, view, PyBUF_RECORDS_RO) != 0) {
    PyErr_Clear();
    return "has no buffer";
  }
  const char* why = nullptr;
  if (DTypeOfBuffer(*view) != code) {
    why = "has another dtype";
  } else if (!PyBuffer_IsContiguous(view, 'C')) {
    why = "is not C-contiguous";
  } else if (reinterpret_cast<uintptr_t>(view->buf) % kItemSizes[code] != 0) {
    why = "is not aligned to its element size";
  }
  if (why != nullptr) PyBuffer_Release(view);
  return why;
}

PyObject* SessionCreate(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* options;
  if (!CheckArgs("session_create", nargs, 1, 1) || !GetStr(args[0], &options, "session_create: options", true))
    return nullptr;
  IRSessionHandle out = nullptr;
  if (IRSessionCreate(options, &out) != 0) return RaiseLastError();
  return NewHandle(out, kSession);
}

/*!
 * session_run(session, fetches, targets, names, dtypes, values, convert=False): values are read in place (the
 * buffer protocol: C-contiguous, of the feed's dtype; with `convert` a value that is not is copied so first,
 * as np.asarray(value, dtype) would); the fetched values come back as NumPy arrays owning
 * the library's result buffers (no copy; a 0-d value is a NumPy scalar). The GIL is released while
 * the graph runs.
 */
PyObject* SessionRun(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (!CheckArgs("session_run", nargs, 6, 7)) return nullptr;
  bool convert = nargs > 6 && PyObject_IsTrue(args[6]) == 1;
  void *session, *fetches, *targets;
  if (!GetHandle(args[0], kSession, &session, "session_run: session") ||
      !GetHandle(args[1], kSymbol, &fetches, "session_run: fetches", true) ||
      !GetHandle(args[2], kSymbol, &targets, "session_run: targets", true))
    return nullptr;
  StrList names;
  if (!names.Parse(args[3], "session_run: feed names")) return nullptr;
  PyObject* dtypes = PySequence_Fast(args[4], "session_run: feed dtypes");
  if (dtypes == nullptr) return nullptr;
  PyObject* values = PySequence_Fast(args[5], "session_run: feed values");
  if (values == nullptr) {
    Py_DECREF(dtypes);
    return nullptr;
  }
  Py_ssize_t n = names.size();
  bool ok = PySequence_Fast_GET_SIZE(dtypes) == n && PySequence_Fast_GET_SIZE(values) == n;
  if (!ok) PyErr_SetString(PyExc_ValueError, "session_run: feed names, dtypes and values differ in length");
  Feeds feeds;
  feeds.views.reserve(n);
  std::vector<int> codes(n), ndims(n);
  std::vector<int64_t> dims;
  std::vector<void*> data(n);
  for (Py_ssize_t i = 0; ok && i < n; ++i) {
    long long code;
    ok = GetInt(PySequence_Fast_GET_ITEM(dtypes, i), &code, "session_run: feed dtype");
    if (!ok) break;
    if (code < 0 || code > 4) {
      PyErr_Format(PyExc_ValueError, "feed '%s': unknown library dtype %lld", names.ptrs[i], code);
      ok = false;
      break;
    }
    PyObject* value = PySequence_Fast_GET_ITEM(values, i);
    Py_buffer view;
    const char* why = FeedProblem(value, static_cast<int>(code), &view);
    if (why != nullptr && convert) {  // a copy of the feed's dtype and layout (as np.asarray(value, dtype))
      PyObject* copy = AsContiguous(value, static_cast<int>(code));
      if (copy == nullptr) {
        PyObject *type, *exc, *trace;
        PyErr_Fetch(&type, &exc, &trace);
        PyErr_Format(type != nullptr ? type : PyExc_TypeError, "feed '%s': cannot convert a %s to %s: %S",
                     names.ptrs[i], Py_TYPE(value)->tp_name, kDTypeNames[code], exc != nullptr ? exc : Py_None);
        Py_XDECREF(type);
        Py_XDECREF(exc);
        Py_XDECREF(trace);
        ok = false;
        break;
      }
      feeds.converted.push_back(copy);
      why = FeedProblem(copy, static_cast<int>(code), &view);
    }
    if (why != nullptr) {
      PyErr_Format(std::strcmp(why, "has another dtype") == 0 || std::strcmp(why, "has no buffer") == 0
                       ? PyExc_TypeError
                       : PyExc_ValueError,
                   "feed '%s': the value (a %s) %s; the feed is a C-contiguous %s buffer", names.ptrs[i],
                   Py_TYPE(value)->tp_name, why, kDTypeNames[code]);
      ok = false;
      break;
    }
    feeds.views.push_back(view);
    codes[i] = static_cast<int>(code);
    ndims[i] = view.ndim;
    for (int d = 0; d < view.ndim; ++d) dims.push_back(view.shape[d]);
    data[i] = view.buf;
  }
  Py_DECREF(dtypes);
  Py_DECREF(values);
  if (!ok) return nullptr;
  uint32_t num_out = 0;
  IRNDArrayHandle* outs = nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRSessionRunBorrowed(session, fetches, targets, static_cast<uint32_t>(n), names.data(), codes.data(),
                              ndims.data(), dims.data(), data.data(), &num_out, &outs);
  }
  if (rc != 0) return RaiseLastError();
  PyObject* list = PyList_New(num_out);
  for (uint32_t i = 0; i < num_out; ++i) {
    PyObject* value = list != nullptr ? NDArrayToNumPy(outs[i], true, true) : nullptr;
    if (value == nullptr) {
      for (uint32_t j = i + (list != nullptr ? 1 : 0); j < num_out; ++j) IRNDArrayFree(outs[j]);
      Py_XDECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, value);
  }
  return list;
}

PyObject* SessionGetVariable(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* session;
  const char* name;
  if (!CheckArgs("session_get_variable", nargs, 2, 2) ||
      !GetHandle(args[0], kSession, &session, "session_get_variable: session") ||
      !GetStr(args[1], &name, "session_get_variable: name"))
    return nullptr;
  IRNDArrayHandle out = nullptr;
  int found = 0;
  if (IRSessionGetVariable(session, name, &out, &found) != 0) return RaiseLastError();
  if (!found) Py_RETURN_NONE;
  return NDArrayToNumPy(out, true, true);
}

PyObject* SessionSetVariable(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void *session, *value;
  const char* name;
  if (!CheckArgs("session_set_variable", nargs, 3, 3) ||
      !GetHandle(args[0], kSession, &session, "session_set_variable: session") ||
      !GetStr(args[1], &name, "session_set_variable: name") ||
      !GetHandle(args[2], kNDArray, &value, "session_set_variable: value"))
    return nullptr;
  if (IRSessionSetVariable(session, name, value) != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* SessionListVariables(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* session;
  if (!CheckArgs("session_list_variables", nargs, 1, 1) ||
      !GetHandle(args[0], kSession, &session, "session_list_variables: session"))
    return nullptr;
  uint32_t n = 0;
  const char** names = nullptr;
  if (IRSessionListVariables(session, &n, &names) != 0) return RaiseLastError();
  return StrListToPy(n, names);
}

PyObject* SessionStats(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* session;
  if (!CheckArgs("session_stats_json", nargs, 1, 1) ||
      !GetHandle(args[0], kSession, &session, "session_stats_json: session"))
    return nullptr;
  const char* json = nullptr;
  if (IRSessionGetStatsJSON(session, &json) != 0) return RaiseLastError();
  return StrOrNone(json);
}

PyObject* SessionLastGraph(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  void* session;
  if (!CheckArgs("session_last_graph", nargs, 1, 1) ||
      !GetHandle(args[0], kSession, &session, "session_last_graph: session"))
    return nullptr;
  IRGraphHandle out = nullptr;
  if (IRSessionGetLastGraph(session, &out) != 0) return RaiseLastError();
  return NewHandle(out, kGraph);
}

// ---- collectives ----

PyObject* CollectiveInit(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  const char* options;
  if (!CheckArgs("collective_init", nargs, 1, 1) || !GetStr(args[0], &options, "collective_init: options", true))
    return nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRCollectiveInit(options);
  }
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* CollectiveShutdown(PyObject*, PyObject* const*, Py_ssize_t nargs) {
  if (!CheckArgs("collective_shutdown", nargs, 0, 0)) return nullptr;
  int rc;
  {
    WithoutGIL unlocked;
    rc = IRCollectiveShutdown();
  }
  if (rc != 0) return RaiseLastError();
  Py_RETURN_NONE;
}

PyObject* CollectiveIsInitialized(PyObject*, PyObject* const*, Py_ssize_t nargs) {
  if (!CheckArgs("collective_is_initialized", nargs, 0, 0)) return nullptr;
  int out = 0;
  if (IRCollectiveIsInitialized(&out) != 0) return RaiseLastError();
  return PyBool_FromLong(out);
}

PyObject* CollectiveInfo(PyObject*, PyObject* const*, Py_ssize_t nargs) {
  if (!CheckArgs("collective_info", nargs, 0, 0)) return nullptr;
  int rank = 0, size = 0, local_rank = 0, local_size = 0;
  const char* transport = nullptr;
  if (IRCollectiveGetInfo(&rank, &size, &local_rank, &local_size, &transport) != 0) return RaiseLastError();
  return Py_BuildValue("(iiiiz)", rank, size, local_rank, local_size, transport);
}

PyObject* CollectiveStats(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  long long reset = 0;
  if (!CheckArgs("collective_stats_json", nargs, 1, 1) || !GetInt(args[0], &reset, "collective_stats_json: reset"))
    return nullptr;
  const char* json = nullptr;
  if (IRCollectiveGetStatsJSON(static_cast<int>(reset), &json) != 0) return RaiseLastError();
  return StrOrNone(json);
}

}  // namespace

PyMethodDef kSessionMethods[] = {
    {"session_create", TF_FASTCALL(SessionCreate), METH_FASTCALL, "session_create(options_json) -> Session handle"},
    {"session_run", TF_FASTCALL(SessionRun), METH_FASTCALL,
     "session_run(session, fetches, targets, names, dtypes, values, convert=False) -> list of NumPy arrays"},
    {"session_get_variable", TF_FASTCALL(SessionGetVariable), METH_FASTCALL,
     "session_get_variable(session, name) -> NumPy array or None"},
    {"session_set_variable", TF_FASTCALL(SessionSetVariable), METH_FASTCALL,
     "session_set_variable(session, name, ndarray)"},
    {"session_list_variables", TF_FASTCALL(SessionListVariables), METH_FASTCALL, "session_list_variables(session)"},
    {"session_stats_json", TF_FASTCALL(SessionStats), METH_FASTCALL, "session_stats_json(session) -> str"},
    {"session_last_graph", TF_FASTCALL(SessionLastGraph), METH_FASTCALL, "session_last_graph(session) -> Graph"},
    {"collective_init", TF_FASTCALL(CollectiveInit), METH_FASTCALL, "collective_init(options_json or None)"},
    {"collective_shutdown", TF_FASTCALL(CollectiveShutdown), METH_FASTCALL, "collective_shutdown()"},
    {"collective_is_initialized", TF_FASTCALL(CollectiveIsInitialized), METH_FASTCALL, "-> bool"},
    {"collective_info", TF_FASTCALL(CollectiveInfo), METH_FASTCALL,
     "-> (rank, size, local_rank, local_size, transport)"},
    {"collective_stats_json", TF_FASTCALL(CollectiveStats), METH_FASTCALL, "collective_stats_json(reset) -> str"},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace tinyflow
