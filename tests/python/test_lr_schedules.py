"""tf.train's learning-rate schedules against TF 1.x's formulas (written here in NumPy) at several steps."""
import math

import numpy as np
import pytest

import tinyflow as tf

STEPS = [0, 1, 3, 7, 10, 12, 25, 40]


def exponential(t, staircase):
    return 0.1 * 0.5 ** (math.floor(t / 4) if staircase else t / 4)


def polynomial(t, cycle, power):
    if cycle:
        steps = 10 * max(math.ceil(t / 10), 1)
    else:
        steps, t = 10, min(t, 10)
    return (0.1 - 0.01) * (1 - t / steps) ** power + 0.01


def cosine(t, alpha):
    t = min(t, 20)
    return 0.1 * ((1 - alpha) * 0.5 * (1 + math.cos(math.pi * t / 20)) + alpha)


def cosine_restarts(t, t_mul, m_mul, alpha):
    fraction = t / 5
    if t_mul == 1.0:
        i = math.floor(fraction)
        fraction -= i
    else:
        i = math.floor(math.log(1 - fraction * (1 - t_mul)) / math.log(t_mul))
        fraction = (fraction - (1 - t_mul ** i) / (1 - t_mul)) / t_mul ** i
    return 0.1 * ((1 - alpha) * 0.5 * m_mul ** i * (1 + math.cos(math.pi * fraction)) + alpha)


def linear_cosine(t):
    t = min(t, 20)
    linear = (20 - t) / 20
    return 0.1 * ((0.1 + linear) * 0.5 * (1 + math.cos(math.pi * 2 * 0.5 * t / 20)) + 0.001)


def piecewise(t):
    return 1.0 if t <= 3 else 0.5 if t <= 10 else 0.1


SCHEDULES = {
    "exponential": (lambda s: tf.train.exponential_decay(0.1, s, 4, 0.5), lambda t: exponential(t, False)),
    "exponential_staircase": (lambda s: tf.train.exponential_decay(0.1, s, 4, 0.5, staircase=True),
                              lambda t: exponential(t, True)),
    "natural_exp": (lambda s: tf.train.natural_exp_decay(0.1, s, 4, 0.3), lambda t: 0.1 * math.exp(-0.3 * t / 4)),
    "natural_exp_staircase": (lambda s: tf.train.natural_exp_decay(0.1, s, 4, 0.3, staircase=True),
                              lambda t: 0.1 * math.exp(-0.3 * math.floor(t / 4))),
    "inverse_time": (lambda s: tf.train.inverse_time_decay(0.1, s, 4, 0.5), lambda t: 0.1 / (1 + 0.5 * t / 4)),
    "inverse_time_staircase": (lambda s: tf.train.inverse_time_decay(0.1, s, 4, 0.5, staircase=True),
                               lambda t: 0.1 / (1 + 0.5 * math.floor(t / 4))),
    "polynomial": (lambda s: tf.train.polynomial_decay(0.1, s, 10, 0.01, power=2.0),
                   lambda t: polynomial(t, False, 2.0)),
    "polynomial_cycle": (lambda s: tf.train.polynomial_decay(0.1, s, 10, 0.01, cycle=True),
                         lambda t: polynomial(t, True, 1.0)),
    "cosine": (lambda s: tf.train.cosine_decay(0.1, s, 20, alpha=0.2), lambda t: cosine(t, 0.2)),
    "cosine_restarts": (lambda s: tf.train.cosine_decay_restarts(0.1, s, 5, alpha=0.1),
                        lambda t: cosine_restarts(t, 2.0, 1.0, 0.1)),
    "cosine_restarts_constant_period": (lambda s: tf.train.cosine_decay_restarts(0.1, s, 5, t_mul=1.0, m_mul=0.5),
                                        lambda t: cosine_restarts(t, 1.0, 0.5, 0.0)),
    "linear_cosine": (lambda s: tf.train.linear_cosine_decay(0.1, s, 20, alpha=0.1), linear_cosine),
    "piecewise_constant": (lambda s: tf.train.piecewise_constant(s, [3, 10], [1.0, 0.5, 0.1]), piecewise),
}


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_schedule_matches_tf_formula(name):
    make, formula = SCHEDULES[name]
    step = tf.placeholder(tf.int64, [])
    rate = make(step)
    with tf.Session() as sess:
        got = [sess.run(rate, {step: t}) for t in STEPS]
    np.testing.assert_allclose(got, [formula(t) for t in STEPS], rtol=1e-5, atol=1e-7)


def test_schedule_over_the_global_step_drives_training():
    step = tf.train.get_or_create_global_step()
    rate = tf.train.piecewise_constant(step, [1], [0.5, 0.25])
    w = tf.Variable([4.0])
    train = tf.train.GradientDescentOptimizer(rate).minimize(tf.reduce_sum(w), global_step=step)  # w -= rate
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = []
        for _ in range(4):
            sess.run(train)
            values.append(float(sess.run(w)[0]))
    # each update reads the rate of the step before the increment: 0.5 at steps 0 and 1, then 0.25
    np.testing.assert_allclose(values, [3.5, 3.0, 2.75, 2.5])


def test_schedule_errors():
    with pytest.raises(ValueError, match="global_step is required"):
        tf.train.exponential_decay(0.1, None, 10, 0.5)
    with pytest.raises(ValueError, match="1 less than the length of values"):
        tf.train.piecewise_constant(tf.constant(1), [1, 2], [0.1, 0.2])


def test_learning_rate_may_be_a_tensor():
    lr = tf.placeholder(tf.float32, [])
    rate = tf.train.exponential_decay(lr, tf.constant(2, tf.int64), 2, 0.5)
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(rate, {lr: 0.8}), 0.4, rtol=1e-6)
