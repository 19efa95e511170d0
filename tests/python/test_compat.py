"""TF1 compatibility: flags, logging, configs, dtypes, py_func / Print / print, local variables, the orthogonal
initializer and the error for TF names tinyflow does not have."""
import logging
import sys

import numpy as np
import pytest

import tinyflow as tf
from tinyflow import flags as tf_flags


# --- tf.app.flags / tf.app.run ---
def _flag_values():
    fv = tf_flags.FlagValues()
    tf.app.flags.DEFINE_string("data_dir", "/tmp/data", "where", flag_values=fv)
    tf.app.flags.DEFINE_integer("steps", 10, "how many", lower_bound=0, flag_values=fv)
    tf.app.flags.DEFINE_float("lr", 0.1, "rate", flag_values=fv)
    tf.app.flags.DEFINE_boolean("fake", False, "fake data", flag_values=fv)
    tf.flags.DEFINE_bool("verbose", True, "chatty", flag_values=fv)
    tf.flags.DEFINE_list("layers", "64,32", "sizes", flag_values=fv)
    tf.flags.DEFINE_enum("mode", "train", ["train", "eval"], "what", flag_values=fv)
    return fv


def test_flags_parse_every_form_and_pass_unknown_arguments_through():
    fv = _flag_values()
    assert (fv["steps"].value, fv["layers"].value) == (10, ["64", "32"])
    rest = fv(["prog", "--data_dir=/x", "--steps", "5", "-lr=1e-3", "--fake", "--noverbose", "--layers=1,2",
               "--mode", "eval", "pos", "--unknown=3", "--", "--steps=7"], known_only=True)
    assert rest == ["prog", "pos", "--unknown=3", "--steps=7"]
    assert (fv.data_dir, fv.steps, fv.lr, fv.fake, fv.verbose, fv.layers, fv.mode) == \
        ("/x", 5, 1e-3, True, False, ["1", "2"], "eval")
    fv(["prog", "--fake=false", "--verbose=1"])
    assert (fv.fake, fv.verbose) == (False, True)
    fv.steps = 3
    assert fv.flag_values_dict()["steps"] == 3


def test_flag_errors():
    fv = _flag_values()
    with pytest.raises(tf_flags.IllegalFlagValueError, match="steps"):
        fv(["prog", "--steps=abc"])
    with pytest.raises(tf_flags.IllegalFlagValueError, match="outside"):
        fv(["prog", "--steps=-1"])
    with pytest.raises(tf_flags.IllegalFlagValueError, match="train|eval"):
        fv(["prog", "--mode=test"])
    with pytest.raises(tf_flags.IllegalFlagValueError, match="needs a value"):
        fv(["prog", "--steps"])
    with pytest.raises(tf_flags.UnrecognizedFlagError, match="Unknown command line flag 'bogus'"):
        fv(["prog", "--bogus=1"])
    with pytest.raises(tf_flags.DuplicateFlagError):
        tf.app.flags.DEFINE_string("steps", "1", "again", flag_values=fv)
    with pytest.raises(AttributeError):
        fv.undefined_flag


def test_flags_parse_sys_argv_on_first_read(monkeypatch):
    fv = _flag_values()
    monkeypatch.setattr(sys, "argv", ["prog", "--steps=42", "--other"])
    assert not fv.is_parsed() and fv.steps == 42 and fv.is_parsed()


def test_app_run_parses_calls_main_and_exits(monkeypatch):
    fv = _flag_values()
    monkeypatch.setattr(tf_flags, "FLAGS", fv)
    seen = []
    with pytest.raises(SystemExit) as exit_info:
        tf.app.run(main=lambda argv: seen.append((argv, fv.steps)) or 3, argv=["prog", "--steps=8", "file"])
    assert exit_info.value.code == 3 and seen == [(["prog", "file"], 8)]


# --- tf.logging ---
def test_logging_levels_format_and_counted_helpers(caplog):
    logger = tf.logging.get_logger()
    old = logger.level
    try:
        tf.logging.set_verbosity(tf.logging.INFO)
        assert tf.logging.get_verbosity() == tf.logging.INFO == logging.INFO
        with caplog.at_level(tf.logging.INFO, logger="tensorflow"):
            tf.logging.info("step %d", 3)
            tf.logging.debug("hidden")
            tf.logging.warn("careful")
            tf.logging.vlog(tf.logging.ERROR, "bad %s", "thing")
            for i in range(5):
                tf.logging.log_every_n(tf.logging.INFO, "every %d", 2, i)
                tf.logging.log_first_n(tf.logging.INFO, "first %d", 2, i)
        assert [r.getMessage() for r in caplog.records] == [
            "step 3", "careful", "bad thing", "every 0", "first 0", "first 1", "every 2", "every 4"]
        record = caplog.records[0]
        assert record.name == "tensorflow"
        assert logging.Formatter(logging.BASIC_FORMAT).format(record) == "INFO:tensorflow:step 3"
        assert (tf.logging.WARN, tf.logging.WARNING, tf.logging.FATAL) == (30, 30, 50)
    finally:
        logger.setLevel(old)


# --- configs, devices, versions ---
def test_config_protos_are_accepted_by_sessions():
    config = tf.ConfigProto(log_device_placement=True, allow_soft_placement=True, intra_op_parallelism_threads=2,
                            inter_op_parallelism_threads=1, device_count={"GPU": 0},
                            gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.5))
    config.gpu_options.allow_growth = True
    config.graph_options.optimizer_options.global_jit_level = tf.OptimizerOptions.ON_1
    assert (config.gpu_options.allow_growth, config.gpu_options.per_process_gpu_memory_fraction) == (True, 0.5)
    assert config.gpu_options.visible_device_list == "" and config.device_count == {"GPU": 0}
    assert tf.ConfigProto().gpu_options.allow_growth is False
    with pytest.raises(ValueError, match='no "bogus" field'):
        tf.ConfigProto(bogus=1)
    with pytest.raises(AttributeError):
        config.bogus = 1
    with tf.device("/gpu:0"):
        y = tf.constant([1.0, 2.0]) * 3.0
    options, metadata = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), tf.RunMetadata()
    with tf.Session(config=config) as sess:
        np.testing.assert_allclose(sess.run(y, options=options, run_metadata=metadata), [3.0, 6.0])
    assert tf.test.is_gpu_available() is False and issubclass(tf.test.TestCase, __import__("unittest").TestCase)
    assert tf.VERSION.startswith("1.") and tf.__version__ == "0.1" and tf.compat.v1 is tf
    assert tf.compat.as_bytes("a") == b"a" and tf.compat.as_text(b"b") == "b"
    tf.disable_v2_behavior()
    tf.compat.v1.disable_eager_execution()


# --- missing names ---
@pytest.mark.parametrize("path", ["foo_bar", "nn.foo_bar", "train.foo_bar", "contrib.foo_bar", "contrib.layers.foo_bar",
                                  "contrib.rnn.Foo", "nn.rnn_cell.Foo",
                                  "test.foo_bar", "logging.foo_bar", "app.foo_bar"])
def test_missing_names_raise_not_supported_yet(path):
    module = tf
    *parents, name = path.split(".")
    for parent in parents:
        module = getattr(module, parent)
    with pytest.raises(AttributeError, match=r"^tf\.%s is not part of tinyflow \(TensorFlow 1\.x API subset\); "
                                             r"see tinyflow_demo/README\.md" % path.replace(".", r"\.")):
        getattr(module, name)
    assert not hasattr(module, name)
    assert issubclass(tf.NotSupportedYetError, AttributeError)


# --- dtypes ---
def test_dtype_properties_match_numpy():
    for dtype, np_type in [(tf.float32, np.float32), (tf.float64, np.float64), (tf.int32, np.int32),
                           (tf.int64, np.int64), (tf.uint8, np.uint8), (tf.int8, np.int8), (tf.int16, np.int16),
                           (tf.uint16, np.uint16)]:
        info = np.finfo(np_type) if np.issubdtype(np_type, np.floating) else np.iinfo(np_type)
        assert (dtype.min, dtype.max, dtype.size) == (info.min, info.max, np.dtype(np_type).itemsize)
        assert dtype.as_numpy_dtype is np_type and dtype.base_dtype is dtype and dtype.name == np.dtype(np_type).name
        assert dtype.is_floating == np.issubdtype(np_type, np.floating)
        assert dtype.is_integer == np.issubdtype(np_type, np.integer)
        assert tf.as_dtype(np_type) is dtype and tf.as_dtype(np.dtype(np_type)) is dtype
        assert tf.as_dtype(dtype.name) is dtype
    assert tf.bool.is_bool and not tf.bool.is_integer and tf.uint8.is_unsigned and not tf.int8.is_unsigned
    assert tf.as_dtype(bool) is tf.bool and tf.as_dtype(float) is tf.float32 and tf.as_dtype(str) is tf.string
    assert tf.as_dtype("double") is tf.float64 and tf.float16 is tf.float32 and tf.half is tf.float32
    assert tf.complex64.is_complex and tf.complex64.real_dtype is tf.float32
    for dtype, what in [(tf.bool, "minimum"), (tf.string, "minimum"), (tf.complex64, "minimum")]:
        with pytest.raises(TypeError, match="Cannot find %s value of tf.%s" % (what, dtype.name)):
            dtype.min
    with pytest.raises(TypeError, match="Cannot convert value 'float8'"):
        tf.as_dtype("float8")
    with pytest.raises(TypeError):
        tf.as_dtype(object())


def test_dtypes_the_core_lacks_build_but_give_clear_errors_when_used():
    images = tf.placeholder(tf.uint8, [None, 4], name="images")
    names = tf.placeholder(tf.string, [None], name="names")
    x = tf.placeholder(tf.float32, [None])
    assert images.dtype == tf.uint8 and names.dtype == tf.string
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(x * 2.0, {x: [1.0, 2.0]}), [2.0, 4.0])  # unused: no error
        with pytest.raises(TypeError, match="tf.uint8 is not supported by tinyflow"):
            sess.run(tf.cast(images, tf.float32), {images: np.zeros((1, 4), np.uint8)})
        with pytest.raises(tf.errors.OpError, match="unknown dtype 'string'"):
            sess.run(tf.identity(names))
    with pytest.raises(tf.errors.OpError, match=r"op 'zeros' \(node 'zeros'\): invalid parameters: dtype='uint8': "
                                                r"not a valid value"):
        tf.zeros([2], tf.uint8)


# --- tf.Print / tf.print ---
def test_print_passes_input_through_and_prints_like_tf(capsys):
    x = tf.placeholder(tf.float32, [2, 3])
    y = tf.Print(x, [x, tf.reduce_sum(x)], message="x: ", summarize=4) * 2.0
    z = tf.Print(x, [x], first_n=1)
    assert y.shape.as_list() == [2, 3]
    value = np.arange(6, dtype=np.float32).reshape(2, 3) / 2
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(y, {x: value}), value * 2)
        for _ in range(2):
            np.testing.assert_allclose(sess.run(z, {x: value}), value)
    assert capsys.readouterr().err == "x: [[0 0.5 1][1.5]...][7.5]\n[[0 0.5 1]...]\n"


def test_tf_print_runs_when_fetched_or_as_a_control_dependency(capsys, tmp_path):
    x = tf.placeholder(tf.int32, [10])
    m = tf.constant([[1.5, 2.0], [3.0, 4.0]])
    printed = tf.print("x =", x, {"k": 1}, summarize=2)
    with tf.control_dependencies([tf.print(m, output_stream=sys.stdout, sep="|")]):
        y = x + 1
    path = tmp_path / "log.txt"
    to_file = tf.print("to", "file", output_stream="file://%s" % path, end="!\n")
    with tf.Session() as sess:
        sess.run(printed, {x: np.arange(10)})
        np.testing.assert_array_equal(sess.run(y, {x: np.arange(10)}), np.arange(1, 11))
        sess.run(to_file)
    out = capsys.readouterr()
    assert out.err == "x = [0 1 ... 8 9] {'k': 1}\n"
    assert out.out == "[[1.5 2]\n [3 4]]\n"
    assert path.read_text() == "to file!\n"


# --- tf.py_func ---
def test_py_func_values_multiple_outputs_and_state():
    x = tf.placeholder(tf.float32, [None, 3])
    calls = []

    def scaled(a, k):
        calls.append(1)
        return (a * k).astype(np.float32)

    y = tf.py_func(scaled, [x, 2.0], tf.float32) + 1.0
    y2 = tf.py_func(scaled, [x, 2.0], tf.float32)  # the same function and inputs: a second node, not merged
    total, count = tf.numpy_function(lambda a: (a.sum(dtype=np.float64), np.int64(a.shape[0])), [x],
                                     [tf.float64, tf.int64])
    value = np.random.RandomState(0).rand(4, 3).astype(np.float32)
    with tf.Session() as sess:
        got = sess.run([y, y2, total, count], {x: value})
    np.testing.assert_allclose(got[0], value * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], value * 2, rtol=1e-6)
    np.testing.assert_allclose(got[2], value.astype(np.float64).sum(), rtol=1e-12)
    assert got[3] == 4 and len(calls) == 2


def test_py_func_errors_name_the_node():
    x = tf.placeholder(tf.float32, [2])

    def boom(a):
        raise ValueError("boom at %s" % a.shape[0])

    failing = tf.py_func(boom, [x], tf.float32, name="MyFunc")
    wrong_type = tf.py_func(lambda a: a.astype(np.float64), [x], tf.float32, name="Wide")
    wrong_count = tf.py_func(lambda a: (a, a), [x], [tf.float32], name="Two")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.OpError, match=r"node 'MyFunc' \(op host_callback\).*ValueError: boom at 2"):
            sess.run(failing, {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.OpError, match="0-th value returned by <lambda> is float64, but expects "
                                                    "float32"):
            sess.run(wrong_type, {x: [1.0, 2.0]})
        with pytest.raises(tf.errors.OpError, match=r"node 'Two'.*<lambda> returned 2 values, expected 1"):
            sess.run(wrong_count, {x: [1.0, 2.0]})
        # The session still works after a failed callback.
        np.testing.assert_allclose(sess.run(x * 2.0, {x: [1.0, 2.0]}), [2.0, 4.0])


def test_py_func_has_no_gradient():
    x = tf.constant([1.0, 2.0])
    y = tf.py_func(lambda a: a * a, [x], tf.float32)
    grad = tf.gradients(tf.reduce_sum(y * 1.0) + tf.reduce_sum(x), x)[0]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(grad), [1.0, 1.0])  # only the direct path: py_func contributes nothing


# --- variable scopes and initializers ---
def test_local_variables_and_ignored_partitioner():
    with tf.variable_scope("metrics"):
        total = tf.get_local_variable("total", [2], initializer=tf.zeros_initializer())
    assert total.name == "metrics/total:0"
    assert total in tf.local_variables() and total not in tf.global_variables()
    assert total not in tf.trainable_variables()
    with pytest.warns(UserWarning, match="ignores variable partitioners"):
        w = tf.get_variable("w", [4, 2], partitioner=lambda shape, dtype: [2, 1])
    assert w.shape.as_list() == [4, 2]
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        np.testing.assert_array_equal(sess.run(total), [0.0, 0.0])


def test_orthogonal_initializer():
    tf.set_random_seed(7)
    a = tf.get_variable("a", [6, 4], initializer=tf.orthogonal_initializer(gain=2.0, seed=1))
    b = tf.get_variable("b", [2, 3, 5], initializer=tf.orthogonal_initializer(), dtype=tf.float64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([a, b])
    np.testing.assert_allclose(va.T @ va, 4.0 * np.eye(4), atol=1e-5)
    assert vb.dtype == np.float64
    flat = vb.reshape(6, 5)
    np.testing.assert_allclose(flat.T @ flat, np.eye(5), atol=1e-10)
    tf.reset_default_graph()
    tf.set_random_seed(7)
    again = tf.orthogonal_initializer(gain=2.0, seed=1)([6, 4])
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(again), va)
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.orthogonal_initializer()([3])


def test_py_func_and_print_on_the_opencl_target(capsys):
    x = tf.placeholder(tf.float32, [None, 3])
    y = tf.Print(tf.py_func(lambda a: a * 3, [x * 2.0], tf.float32) + 1.0, [x], "x=")
    try:
        with tf.Session(target="opencl") as sess:
            value = sess.run(y, {x: np.ones((2, 3))})
    except tf.errors.OpError as err:
        if "host_callback" in str(err) or "opencl" not in str(err).lower():
            raise
        pytest.skip("no OpenCL device: %s" % err)
    np.testing.assert_allclose(value, np.full((2, 3), 7.0))
    assert capsys.readouterr().err == "x=[[1 1 1]...]\n"


def test_py_func_and_print_in_eager_mode():
    from eager_util import run_program
    out = run_program("""
        import sys
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        x = tf.constant([1.0, 2.0])
        print(tf.py_func(lambda a: a * 3, [x], tf.float32).numpy().tolist())
        assert tf.print("v", x, output_stream=sys.stdout) is None
        print(tf.Print(x, [x], "m").numpy().tolist())
    """)
    assert out == "[3.0, 6.0]\nv [1 2]\n[1.0, 2.0]\n"


def test_identity_initializer_and_initializer_namespace():
    v = tf.get_variable("eye", [2, 3], initializer=tf.initializers.identity(gain=3.0), dtype=tf.float64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(v)
    assert value.dtype == np.float64
    np.testing.assert_array_equal(value, 3.0 * np.eye(2, 3))
    with pytest.raises(ValueError, match="only be used for 2D"):
        tf.identity_initializer()([2, 2, 2])
    with pytest.raises(AttributeError, match="tf.initializers.lecun_foo is not part of tinyflow"):
        tf.initializers.lecun_foo
