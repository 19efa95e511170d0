"""Threads running TF 1.x programs through tinyflow, checked against NumPy; exits non-zero on a wrong
result. test_eager_threads.py runs it briefly; the ThreadSanitizer job of scripts/test.sh runs it for
a few seconds per case over a -fsanitize=thread libir (python3 with libtsan preloaded).

    python3 threads_stress.py eager|graph [--seconds S] [case ...]

eager: own (each thread its own constants), variable (one variable updated and read by all threads),
training (each thread trains its own model with a GradientTape). graph: session (one tf.Session run
by 8 threads, with their own feeds, and assign_adds of one variable).
"""
import argparse
import sys
import threading
import time

import numpy as np

import tinyflow as tf


def run_threads(count, seconds, min_iterations, body):
    """body(thread, iteration) on `count` threads, each for min_iterations and until `seconds` passed;
    returns the number of iterations each did. The first failure (an exception) fails the program."""
    deadline = time.time() + seconds
    done, failures = [0] * count, []

    def loop(t):
        try:
            i = 0
            while i < min_iterations or time.time() < deadline:
                body(t, i)
                i += 1
                done[t] = i
        except BaseException as err:  # (reported by the main thread)
            failures.append("thread %d: %s: %s" % (t, type(err).__name__, err))

    threads = [threading.Thread(target=loop, args=(t,)) for t in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise AssertionError("\n".join(failures))
    return done


def check(ok, what):
    if not ok:
        raise AssertionError(what)


def eager_own(seconds):
    """The issue's program: four threads, each on its own constants."""
    def body(k, i):
        n = 8 + i % 3
        got = float(tf.reduce_sum(tf.constant(np.full((n,), float(k), np.float32)) * 2.0 + 1.0))
        check(got == n * (2 * k + 1), "sum %r, expected %r" % (got, n * (2 * k + 1)))
        check(tf.maximum(tf.constant([float(k)]), 1.5).numpy()[0] == max(k, 1.5), "maximum")
    run_threads(4, seconds, 50, body)


def eager_variable(seconds):
    """One variable: assign_add is atomic (with or without a Python lock), reads see whole values."""
    v = tf.Variable(np.zeros([64], np.float32))
    lock = threading.Lock()

    def body(t, i):
        if t % 2:
            with lock:
                v.assign_add(np.ones([64], np.float32))
        else:
            v.assign_sub(-np.ones([64], np.float32))
        seen = v.numpy()
        check((seen == seen[0]).all() and seen[0] >= 1, "a torn read: %s" % seen[:4])
        doubled = (v * 2.0).numpy()
        check((doubled == doubled[0]).all(), "a torn read by an op: %s" % doubled[:4])
    done = run_threads(4, seconds, 100, body)
    total = v.numpy()
    check((total == sum(done)).all(), "%s after %d updates: updates were lost" % (total[:4], sum(done)))


def eager_training(seconds):
    """Each thread fits its own y = 3x + t with a GradientTape: tapes record their own thread's ops."""
    def body(t, i):
        w, b = tf.Variable(0.0), tf.Variable(0.0)
        opt = tf.train.GradientDescentOptimizer(0.5)
        x = np.linspace(-1, 1, 16).astype(np.float32)
        for _ in range(40):
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(w * x + b - (3 * x + t)))
            check(set(id(v) for v in tape.watched_variables()) == {id(w), id(b)}, "another thread's variable")
            opt.apply_gradients(zip(tape.gradient(loss, [w, b]), [w, b]))
        check(abs(float(w) - 3) < 1e-2 and abs(float(b) - t) < 1e-2, "w %s b %s" % (float(w), float(b)))
    run_threads(4, seconds, 2, body)


def graph_session(seconds):
    """One Session shared by 8 threads: each run gets its own results; assign_adds are atomic."""
    x = tf.placeholder(tf.float32, [None, 16])
    h = tf.nn.relu(x * x - 1.0)
    total = tf.reduce_sum(h)
    counter = tf.Variable(tf.zeros([256]))
    bump = tf.assign_add(counter, tf.ones([256]))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())

    def body(t, i):
        feed = np.full((4 + i % 3, 16), float(t % 4 + i % 5), np.float32)
        got_h, got_total = sess.run([h, total], {x: feed})
        expected = np.maximum(feed * feed - 1, 0)
        check(np.array_equal(got_h, expected), "thread %d run %d: h" % (t, i))
        check(got_total == expected.sum(), "thread %d run %d: total %r" % (t, i, got_total))
        after = sess.run(bump)
        check((after == after[0]).all(), "a torn assign_add result")
    done = run_threads(8, seconds, 10, body)
    check((sess.run(counter) == sum(done)).all(), "assign_adds were lost")


CASES = {"eager": {"own": eager_own, "variable": eager_variable, "training": eager_training},
         "graph": {"session": graph_session}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=sorted(CASES))
    parser.add_argument("cases", nargs="*")
    parser.add_argument("--seconds", type=float, default=0.2)
    args = parser.parse_args()
    if args.mode == "eager":
        tf.enable_eager_execution()
    for name in args.cases or sorted(CASES[args.mode]):
        start = time.time()
        CASES[args.mode][name](args.seconds)
        print("%s %s: ok (%.1f s)" % (args.mode, name, time.time() - start))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
