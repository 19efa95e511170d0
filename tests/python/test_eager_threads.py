"""Eager mode (and one graph-mode Session) under Python threads, as TF runs them: each thread on its
own tensors, one variable shared (atomic assign_add, whole reads), tapes per thread, the enabling
call's config in every thread. The programs are tests/python/threads_stress.py's (the ThreadSanitizer
job of scripts/test.sh runs them longer, over a -fsanitize=thread libir)."""
import os
import sys

from eager_util import last_json, needs_tape, run_program

STRESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "threads_stress.py")


def test_threads_on_their_own_constants_and_one_shared_variable():
    out = run_program(path=STRESS, args=["eager", "own", "variable"])
    assert "eager own: ok" in out and "eager variable: ok" in out


@needs_tape
def test_threads_training_with_their_own_tapes():
    assert "eager training: ok" in run_program(path=STRESS, args=["eager", "training"])


def test_one_session_shared_by_eight_threads():
    assert "graph session: ok" in run_program(path=STRESS, args=["graph"])


def test_every_thread_computes_with_the_enabling_calls_config():
    # config applies process-wide (as TF's): a worker thread's Context is made with it too.
    out = last_json(run_program("""
        import json, threading
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution(config={"fusion": False})
        def kernels():
            before = tf.eager_stats()["kernels_launched"]
            float(tf.reduce_sum(tf.exp(tf.constant(np.ones(4, np.float32))) * 2.0))
            return tf.eager_stats()["kernels_launched"] - before
        seen = {"main": kernels()}
        worker = threading.Thread(target=lambda: seen.update(worker=kernels()))
        worker.start(); worker.join()
        print(json.dumps(seen))
        """))
    assert out["main"] == out["worker"] == 3  # unfused: exp, multiply, sum in both threads


def test_a_py_func_body_computes_and_assigns_eagerly_inside_a_running_trace():
    # The host callback runs inside the trace that reads v: the nested traces (on the same thread,
    # in the same Context) read v and assign w without waiting for the outer trace's locks.
    run_program("""
        import numpy as np
        import tinyflow as tf
        tf.enable_eager_execution()
        v, w = tf.Variable(np.ones(3, np.float32)), tf.Variable(np.zeros(3, np.float32))
        def body(a):
            w.assign_add(tf.constant(a) + v)
            return (float(tf.reduce_sum(tf.constant(a) * 3.0)) * np.ones(3)).astype(np.float32)
        z = tf.py_func(body, [v * 2.0], tf.float32)
        np.testing.assert_array_equal(z.numpy(), [18.0, 18.0, 18.0])
        np.testing.assert_array_equal(w.numpy(), [3.0, 3.0, 3.0])
        holder = []
        own = tf.py_func(lambda a: holder[0].numpy(), [v], tf.float32)  # reads its own result
        holder.append(own)
        try:
            own.numpy()
        except tf.errors.OpError as err:
            assert "its own result" in str(err), str(err)
        else:
            raise AssertionError("a callback reading its own result returned")
        np.testing.assert_array_equal((v + 1.0).numpy(), [2.0, 2.0, 2.0])  # and nothing is left locked
        """, timeout=60)
