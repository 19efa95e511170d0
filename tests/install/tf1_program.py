"""A TF1 program run against an installed tinyflow (tests/install/test_python_package.cmake).

Usage: python3 tf1_program.py PACKAGE_ROOT LIBRARY_ROOT
Fails unless tinyflow is imported from under PACKAGE_ROOT and its libir from under LIBRARY_ROOT (the
installed copies, not the source or build tree's); fits y = 3x + 2 with placeholders, Variables and
GradientDescentOptimizer.minimize, saves a checkpoint, overwrites the variables and restores them.
Prints "tf1_program: OK ..." on success.
"""
import os
import sys
import tempfile

import numpy as np


def inside(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([path, root]) == root


def main(package_root, library_root):
    import tinyflow as tf
    from tinyflow import _lib

    if not inside(tf.__file__, package_root):
        sys.exit("tf1_program: tinyflow imported from %s, not from under %s" % (tf.__file__, package_root))
    if not inside(_lib.LIB_PATH, library_root):
        sys.exit("tf1_program: libir loaded from %s, not from under %s" % (_lib.LIB_PATH, library_root))

    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, size=(64, 1)).astype(np.float32)
    ys = 3 * xs + 2
    x = tf.placeholder(tf.float32, [None, 1], name="x")
    y = tf.placeholder(tf.float32, [None, 1], name="y")
    w = tf.Variable(tf.zeros([1, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    saver = tf.train.Saver()
    with tf.Session() as sess, tempfile.TemporaryDirectory() as tmp:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xs, y: ys})
        for _ in range(200):
            sess.run(train, {x: xs, y: ys})
        last, w_fit, b_fit = sess.run([loss, w, b], {x: xs, y: ys})
        if not (last < 1e-6 < first and abs(w_fit[0, 0] - 3) < 1e-3 and abs(b_fit[0] - 2) < 1e-3):
            sys.exit("tf1_program: training failed: loss %g -> %g, w %s, b %s" % (first, last, w_fit, b_fit))
        path = saver.save(sess, os.path.join(tmp, "model.ckpt"))
        sess.run([tf.assign(w, [[-1.0]]), tf.assign(b, [7.0])])
        saver.restore(sess, path)
        w_back, b_back = sess.run([w, b])
        if not (np.array_equal(w_back, w_fit) and np.array_equal(b_back, b_fit)):
            sys.exit("tf1_program: restore gave w %s b %s, saved w %s b %s" % (w_back, b_back, w_fit, b_fit))
        if not os.path.exists(path + ".index"):
            sys.exit("tf1_program: no checkpoint index at %s.index" % path)
    print("tf1_program: OK w=%.4f b=%.4f loss %.3g -> %.3g, checkpoint restored; tinyflow %s, libir %s"
          % (w_fit[0, 0], b_fit[0], first, last, os.path.dirname(tf.__file__), _lib.LIB_PATH))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
