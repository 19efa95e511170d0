"""tinyflow._C, the one native module: no tinyflow module uses ctypes, library errors carry the C++ message as
tinyflow's and tf.errors' classes, wrong-typed arguments raise TypeError, feeds are read in place and
fetches own the library's buffers, and a missing _C fails the import saying where it looked."""
import ast
import os
import subprocess
import sys
import tempfile
import tracemalloc

import numpy as np
import pytest

import tinyflow as tf
from tinyflow import _lib

C = _lib.C
PACKAGE = os.path.dirname(os.path.abspath(tf.__file__))


def _modules_importing(name, root):
    """The .py files under `root` that import module `name` (import x / from x import ...), by walking their AST."""
    found = []
    for dirpath, _, filenames in os.walk(root):
        for filename in filenames:
            if not filename.endswith(".py"):
                continue
            path = os.path.join(dirpath, filename)
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
                if any(n == name or n.startswith(name + ".") for n in names):
                    found.append(os.path.relpath(path, root))
                    break
    return sorted(found)


def test_no_tinyflow_module_imports_ctypes():
    assert _modules_importing("ctypes", PACKAGE) == []


def test_the_ctypes_check_can_fail():
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "mod.py"), "w") as f:
            f.write("def f():\n    from ctypes import c_int\n    return c_int\n")
        assert _modules_importing("ctypes", tmp) == ["mod.py"]


def test_loaded_as_the_package_module():
    assert C.__name__ == "tinyflow._C"
    assert sys.modules["tinyflow._C"] is C
    assert os.path.exists(tf.LIB_PATH) and os.path.basename(tf.LIB_PATH).startswith("libir.so")


def test_library_error_carries_the_cpp_message_as_tf_errors():
    with pytest.raises(tf.errors.OpError) as err:
        C.op_handle("no_such_op_xyz")
    assert "no_such_op_xyz" in str(err.value)
    assert isinstance(err.value, tf.TinyflowError)
    assert str(err.value) == C.last_error()


def test_failed_run_raises_op_error_with_the_message():
    x = tf.placeholder(tf.float32)  # (no static shape: the library finds the mismatch when it runs)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.OpError) as err:
            sess.run(tf.matmul(x, x), {x: np.ones((2, 3), np.float32)})
    assert "inner dimensions 3 and 2" in str(err.value)


@pytest.mark.parametrize("call", [
    lambda: C.op_handle(3),
    lambda: C.symbol_group(["not a handle"]),
    lambda: C.symbol_group(5),
    lambda: C.graph_create(C.op_handle("exp")),  # an Op handle where a Symbol is wanted
    lambda: C.session_run("session", None, None, [], [], []),
    lambda: C.lazy_shape(None),
    lambda: C.graph_print(object(), 0),
    lambda: C.symbol_variable("x", {"k": 1}),
])
def test_wrong_typed_arguments_raise_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_freed_handle_raises_instead_of_crashing():
    sym = C.symbol_variable("x")
    C.free(sym)
    with pytest.raises(ValueError, match="freed"):
        C.symbol_num_outputs(sym)


def _run_parts():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        y = x * 2.0
    sess = tf.Session(graph=g)
    return sess, x, y


def test_feed_is_read_in_place_and_checked():
    sess, x, y = _run_parts()
    fetch = C.symbol_group([y.handle])
    feed = np.arange(6, dtype=np.float32).reshape(2, 3)
    out, = C.session_run(sess.handle, fetch, None, ["x"], [tf.float32.enum], [feed])
    np.testing.assert_allclose(out, feed * 2)
    with pytest.raises(TypeError, match="feed 'x'.*float32"):
        C.session_run(sess.handle, fetch, None, ["x"], [tf.float32.enum], [feed.astype(np.float64)])
    with pytest.raises(ValueError, match="feed 'x'.*C-contiguous"):
        C.session_run(sess.handle, fetch, None, ["x"], [tf.float32.enum], [np.ones((3, 4), np.float32)[:, :3]])
    with pytest.raises(TypeError, match="feed 'x'"):
        C.session_run(sess.handle, fetch, None, ["x"], [tf.float32.enum], [[1.0, 2.0, 3.0]])


def test_feed_is_any_buffer():
    """The run reads a feed through the buffer protocol, in place: a memoryview over a bytearray (no NumPy
    array to convert it) and a read-only array are fed as they are."""
    sess, x, y = _run_parts()
    fetch = C.symbol_group([y.handle])
    raw = bytearray(np.arange(3, dtype=np.float32).tobytes())
    out, = C.session_run(sess.handle, fetch, None, ["x"], [tf.float32.enum], [memoryview(raw).cast("f", (1, 3))])
    np.testing.assert_allclose(out, [[0, 2, 4]])
    frozen = np.arange(6, dtype=np.float32).reshape(2, 3)
    frozen.flags.writeable = False
    np.testing.assert_allclose(sess.run(y, {x: frozen}), frozen * 2)


def test_feed_is_not_copied():
    """A 32 MB feed of the placeholder's dtype reaches the run without a NumPy copy (tracemalloc sees every NumPy
    allocation, none of the library's); a float64 feed to the float32 placeholder is converted, and seen."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        total = tf.reduce_sum(x)
    sess = tf.Session(graph=g)
    feed = np.ones(8 << 20, np.float32)
    sess.run(total, {x: feed[:16]})  # (binds the plan)

    def peak_mb(value):
        tracemalloc.start()
        try:
            sess.run(total, {x: value})
            return tracemalloc.get_traced_memory()[1] / 1e6
        finally:
            tracemalloc.stop()
    assert peak_mb(feed) < 1.0
    assert peak_mb(feed.astype(np.float64)) > 30.0  # (the check sees a copy: 8M float32 values)


def test_fetch_owns_the_library_buffer():
    sess, x, y = _run_parts()
    a = sess.run(y, {x: np.ones((2, 3), np.float32)})
    b = sess.run(y, {x: np.ones((2, 3), np.float32)})
    assert a.base is not None and type(a.base).__name__ == "Handle"  # a view that owns the NDArray, not a copy
    assert a.flags.c_contiguous and a.flags.writeable
    a[0, 0] = 7.0  # each run's result is its own buffer
    assert b[0, 0] == 2.0


def test_missing_module_names_where_it_looked():
    with tempfile.TemporaryDirectory() as empty:
        env = dict(os.environ, TINYFLOW_LIB=empty, PYTHONPATH=os.path.dirname(PACKAGE))
        proc = subprocess.run([sys.executable, "-c", "import tinyflow"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr and "tinyflow._C was not found" in proc.stderr
    assert empty in proc.stderr and "cmake --build build --target tinyflow_C" in proc.stderr


def test_module_of_another_python_is_named():
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "_C.cpython-30-x86_64-linux-gnu.so"), "w").close()
        env = dict(os.environ, TINYFLOW_LIB=tmp, PYTHONPATH=os.path.dirname(PACKAGE))
        proc = subprocess.run([sys.executable, "-c", "import tinyflow"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)
    assert proc.returncode != 0
    assert "_C.cpython-30-x86_64-linux-gnu.so in %s, built for another Python" % tmp in proc.stderr


def test_host_function_error_reaches_the_run():
    x = tf.constant(np.ones(2, np.float32))

    def bad(v):
        raise tf.errors.InvalidArgumentError(None, None, "bad value")
    y = tf.py_func(bad, [x], tf.float32)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad value"):
            sess.run(y)
