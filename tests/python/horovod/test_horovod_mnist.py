"""Horovod's TF1 MNIST program (tests/python/tf1_programs/horovod_mnist.py, `import tensorflow` and
`import horovod.tensorflow` as written) run by `python3 -m tinyflow.run` on 2 ranks, with fewer steps."""
import json
import os
import re
import shutil

import pytest

from horovod_launch import LAUNCHERS, REPO, launcher_or_skip, run_job

PROGRAM = os.path.join(REPO, "tests", "python", "tf1_programs", "horovod_mnist.py")


def available_launcher():
    """The first launcher whose tools and plugin are there (the MNIST run is too slow to repeat per MPI)."""
    reasons = []
    for impl in LAUNCHERS:
        try:
            launcher_or_skip(impl)
            return impl
        except pytest.skip.Exception as skip:
            reasons.append(str(skip))
    pytest.skip("; ".join(reasons))


def test_horovod_mnist_on_two_ranks_learns(tmp_path):
    impl = available_launcher()
    proc = run_job(impl, 2, ["-m", "tinyflow.run", PROGRAM, "--steps", "60", "--batch-size", "32"], str(tmp_path),
                   timeout=240, env={"IR_COLLECTIVE_TIMEOUT": "30"})  # a stalled bucket fails in 30 s
    output = proc.stdout + proc.stderr
    losses = [float(x) for x in re.findall(r"loss = ([0-9.eE+-]+)", output)]
    steps = [int(x) for x in re.findall(r"step = (\d+)", output)]
    assert len(losses) >= 6 and len(steps) == len(losses), output[-3000:]  # every 10th of each rank's 30 steps
    assert sorted(set(steps)) == [1, 11, 21] and all(steps.count(s) == 2 for s in set(steps)), output[-3000:]
    first, last = losses[:2], losses[-2:]
    assert max(last) < 0.75 * min(first), output[-3000:]
    checkpoints = tmp_path / "checkpoints"
    assert (checkpoints / "checkpoint").exists(), os.listdir(str(tmp_path))  # rank 0 only writes them
    assert [p for p in os.listdir(str(tmp_path)) if p != "checkpoints"] == [], os.listdir(str(tmp_path))
    shutil.rmtree(str(checkpoints))


def test_demo_trainer_shards_by_rank_and_reports_on_rank_0(tmp_path):
    impl = available_launcher()
    out_dir = tmp_path / "run"
    proc = run_job(impl, 2, [os.path.join(REPO, "tinyflow_demo", "train.py"), "--model", "softmax", "--epochs", "2",
                             "--limit-train", "2000", "--out", str(out_dir)], str(tmp_path), timeout=240)
    assert "data-parallel over %s: 2 ranks, 1000 training digits each, global batch 128" % impl in proc.stdout
    assert proc.stdout.count("final test accuracy") == 1, proc.stdout[-3000:]  # rank 0 alone reports
    metrics = json.load(open(str(out_dir / "metrics.json")))
    assert metrics["ranks"] == 2 and metrics["test_accuracy"] >= 0.75, metrics["epochs"]
    assert len(metrics["step_loss"]) == 2 * (1000 // 64)  # each rank's steps over its shard
