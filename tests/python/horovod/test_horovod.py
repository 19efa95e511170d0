"""tinyflow.horovod: data-parallel training over MPI (Open MPI and MPICH) with Horovod's TF1 API.

Multi-process cases launch hvd_worker.py under mpirun with a hard timeout and compare what the ranks
wrote; they skip (with the reason) when a launcher or the library's MPI plugin is missing.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from horovod_launch import LAUNCHERS, REPO, launcher_or_skip, run_job

HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "hvd_worker.py")
sys.path.insert(0, os.path.join(REPO, "tinyflow_demo"))
import tinyflow as tf  # noqa: E402
import tinyflow.horovod as hvd  # noqa: E402


def worker(impl, np_, out, *args, timeout=120):
    return run_job(impl, np_, [WORKER] + list(args), out, timeout=timeout)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """One process, no launcher (hvd.size() == 1), the whole global batch: what the ranks must reproduce."""
    runs = {}

    def get(global_batch, steps):
        key = (global_batch, steps)
        if key not in runs:
            out = str(tmp_path_factory.mktemp("reference"))
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OMPI_", "PMI_", "PMIX_"))}
            subprocess.run([sys.executable, WORKER, "train", out, "--steps", str(steps), "--global-batch",
                            str(global_batch)], check=True, timeout=120, env=env)
            runs[key] = dict(np.load(os.path.join(out, "train-rank0.npz")))
        return runs[key]
    return get


def check_training(out, ranks, ref):
    """Every rank's parameters are bit-identical to the others' after every step (hashes), and match the
    one-process run with the whole batch to 1e-6 relative (float64 parameters) after every step."""
    runs = [dict(np.load(os.path.join(out, "train-rank%d.npz" % r))) for r in range(ranks)]
    assert all(int(run["size"]) == ranks for run in runs)
    for name in ("sgd", "adam"):
        digests = [list(run[name + "_digests"]) for run in runs]
        for r in range(1, ranks):
            diverged = [s for s, (a, b) in enumerate(zip(digests[0], digests[r])) if a != b]
            assert not diverged, "%s: rank %d's parameters differ from rank 0's after steps %s" % (name, r,
                                                                                                diverged[:5])
        got, want = runs[0][name + "_params"], ref[name + "_params"]
        assert got.shape == want.shape
        scale = np.max(np.abs(want), axis=1)
        error = np.max(np.abs(got - want), axis=1) / scale
        assert np.all(error <= 1e-6), "%s: step %d differs by %g relative" % (name, int(np.argmax(error)),
                                                                           float(np.max(error)))
        first, last = ref[name + "_losses"][0], ref[name + "_losses"][-1]
        assert last < 0.5 * first, (name, first, last)  # the model does learn: the comparison is not vacuous


@pytest.mark.parametrize("impl", LAUNCHERS)
def test_two_ranks_reproduce_one_rank_with_the_whole_batch(impl, reference, tmp_path):
    launcher_or_skip(impl)
    worker(impl, 2, str(tmp_path), "train", str(tmp_path), "--steps", "100", "--global-batch", "128")
    check_training(str(tmp_path), 2, reference(128, 100))


@pytest.mark.parametrize("impl", LAUNCHERS)
def test_three_ranks_uneven_ring(impl, reference, tmp_path):
    launcher_or_skip(impl)
    worker(impl, 3, str(tmp_path), "train", str(tmp_path), "--steps", "30", "--global-batch", "96")
    check_training(str(tmp_path), 3, reference(96, 30))


@pytest.mark.parametrize("impl", LAUNCHERS)
def test_collectives_and_broadcast_hook(impl, tmp_path):
    launcher_or_skip(impl)
    worker(impl, 2, str(tmp_path), "collectives", str(tmp_path))
    results = [json.load(open(os.path.join(str(tmp_path), "collectives-rank%d.json" % r))) for r in range(2)]
    rows = [np.arange((r + 1) * 3, dtype=np.float32).reshape(r + 1, 3) + 100 * r for r in range(2)]
    for r, res in enumerate(results):
        assert (res["rank"], res["size"], res["local_size"], res["transport"]) == (r, 2, 2, impl)
        assert res["local_rank"] == r
        np.testing.assert_array_equal(res["gathered"], np.concatenate(rows))  # first dims 1 and 2
        np.testing.assert_array_equal(res["broadcast"], np.full([2, 2], 2))  # rank 1's
        np.testing.assert_array_equal(res["sum"], [3.0] * 3)
        np.testing.assert_array_equal(res["average"], [1.5] * 3)
        np.testing.assert_array_equal(res["variable"][1], results[0]["variable"][0])  # rank 0's initial value
        assert res["hook"]["first"] == results[0]["hook"]["first"]
        assert res["hook"]["last"] == results[0]["hook"]["last"] and res["hook"]["steps"] == 3
    assert results[0]["variable"][0] != results[1]["variable"][0]  # the broadcast had something to do
    w0 = np.array(results[0]["hook"]["first"])
    np.testing.assert_allclose(results[0]["hook"]["last"], w0 * 0.8 ** 3, rtol=1e-6)  # w -= 0.1 * 2w, 3 times


@pytest.mark.parametrize("kind", ["names", "order"])
@pytest.mark.parametrize("impl", LAUNCHERS)
def test_mismatched_collectives_fail_naming_the_tensors(impl, kind, tmp_path):
    launcher_or_skip(impl)
    proc = run_job(impl, 2, [WORKER, "mismatch", str(tmp_path), "--kind", kind], str(tmp_path), timeout=60,
                   env={"IR_COLLECTIVE_TIMEOUT": "5"}, check=False)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    assert not os.path.exists(os.path.join(str(tmp_path), "mismatch-rank0.json")), output[-3000:]
    names = ["grad_on_rank0", "grad_on_rank1"] if kind == "names" else ["sum_of_a", "sum_of_b"]
    assert all(n in output for n in names), output[-3000:]


def test_single_process_is_rank_0_of_1_and_trains_like_the_plain_optimizer():
    if not hvd.is_initialized():  # (unless an earlier test of this process started it)
        with pytest.raises(ValueError, match="Horovod has not been initialized; use hvd.init()"):
            hvd.rank()
    hvd.init()
    hvd.init()  # a second call is a no-op
    assert (hvd.rank(), hvd.size(), hvd.local_rank(), hvd.local_size()) == (0, 1, 0, 1)
    assert hvd.mpi_threads_supported() and hvd.transport() == "local"

    def run(distributed):
        tf.reset_default_graph()
        rng = np.random.RandomState(0)
        features = rng.randn(32, 5)
        x, y = tf.constant(features), tf.constant(features.dot(rng.randn(5, 1)))
        w = tf.Variable(np.zeros([5, 1]), name="w")
        unused = tf.Variable(np.zeros([2]), name="unused")
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
        opt = tf.train.AdamOptimizer(0.05)
        if distributed:
            opt = hvd.DistributedOptimizer(opt)
            pairs = opt.compute_gradients(loss, var_list=[w, unused])
            assert pairs[1][0] is None and pairs[1][1] is unused  # None gradients pass through
            assert pairs[0][0].op.type == "allreduce"
        train_op = opt.minimize(loss, var_list=[w])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train_op, loss])[1] for _ in range(20)]
            slot = opt.get_slot(w, "m")
            return losses, sess.run(w), slot is not None
    plain, distributed = run(False), run(True)
    np.testing.assert_array_equal(distributed[0], plain[0])
    np.testing.assert_array_equal(distributed[1], plain[1])
    assert distributed[2] and distributed[0][-1] < 0.5 * distributed[0][0]


def test_api_errors():
    x = tf.constant(np.ones([3]))
    with pytest.raises(ValueError, match="supersedes average"):
        hvd.allreduce(x, average=True, op=hvd.Sum)
    with pytest.raises(AttributeError, match="float16"):
        hvd.allreduce(x, compression=hvd.Compression.fp16)
    with pytest.raises(AttributeError, match="Adasum"):
        hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1), op=hvd.Adasum)
    a, b = hvd.allreduce(x), hvd.allreduce(x)  # the same tensor twice: two distinct collective names
    assert a.op.name.startswith("HorovodAllreduce_Const") and b.op.name.startswith("HorovodAllreduce_Const")
    assert a.op.name != b.op.name


def test_horovod_tensorflow_import_under_tinyflow_run(tmp_path):
    program = tmp_path / "prog.py"
    program.write_text("import tensorflow as tf\nimport horovod.tensorflow as hvd\nhvd.init()\n"
                       "print('size', hvd.size(), hvd.DistributedOptimizer.__module__)\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "tinyflow_demo"))
    env = {k: v for k, v in env.items() if not k.startswith(("OMPI_", "PMI_", "PMIX_"))}
    out = subprocess.run([sys.executable, "-m", "tinyflow.run", str(program)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, env=env, timeout=60).stdout.decode()
    assert "size 1 tinyflow.horovod.optimizer" in out, out


def _bound_ops(sess):
    return [n["op"] for n in sess.last_graph().to_dict()["nodes"]]


def test_bucket_options_reach_the_session(monkeypatch):
    hvd.init()

    def step(**options):
        tf.reset_default_graph()
        w = tf.Variable(np.ones([4], np.float32), name="w")
        v = tf.Variable(np.ones([3], np.float32), name="v")
        loss = tf.reduce_sum(tf.square(w)) + tf.reduce_sum(tf.square(v))
        train_op = hvd.DistributedOptimizer(tf.train.GradientDescentOptimizer(0.1)).minimize(loss)
        with tf.Session(**options) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train_op)
            return _bound_ops(sess), sess.run(w)

    ops, w = step()
    assert ops.count("_allreduce_start") == 2 and "allreduce" not in ops
    ops, w0 = step(collective_bucket_bytes=0)
    assert ops.count("allreduce") == 2 and "_allreduce_start" not in ops
    np.testing.assert_array_equal(w, w0)
    monkeypatch.setenv("HOROVOD_FUSION_THRESHOLD", "0")
    assert step()[0].count("allreduce") == 2
    monkeypatch.setenv("HOROVOD_FUSION_THRESHOLD", "lots")
    with pytest.raises(ValueError, match="HOROVOD_FUSION_THRESHOLD"):
        step()
    monkeypatch.delenv("HOROVOD_FUSION_THRESHOLD")
    with pytest.raises(ValueError, match="collective_bucket_bytes must be >= 0"):
        step(collective_bucket_bytes=-1)
