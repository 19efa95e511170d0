"""Runs each TF1 program of this directory unchanged (`python3 -m tinyflow.run`) and checks what it
prints against the reference result of the program under TensorFlow 1.x (see README.md)."""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def run_program(name, *args, timeout=600):
    env = dict(os.environ)
    if env.get("TINYFLOW_LIB"):  # the programs run in this directory: a relative path would break
        env["TINYFLOW_LIB"] = os.path.abspath(env["TINYFLOW_LIB"])
    env["PYTHONPATH"] = os.path.join(REPO, "tinyflow_demo") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-m", "tinyflow.run", os.path.join(HERE, name)] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=timeout, cwd=HERE)
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, "%s exited with %d\n--- stdout\n%s\n--- stderr\n%s" % (name, proc.returncode,
                                                                                        out[-3000:], err[-6000:])
    return out, err


def value(out, pattern):
    found = re.findall(pattern, out)
    assert found, "no line matching %r in:\n%s" % (pattern, out[-3000:])
    return float(found[-1])


def test_logistic_regression():
    out, _ = run_program("logistic_regression.py", "--steps", "300")
    assert float(out.strip().splitlines()[-1]) >= 0.85


def test_mechanics_101(tmp_path):
    log_dir = str(tmp_path / "logs")
    out, _ = run_program("mechanics_101.py", "--max_steps", "600", "--learning_rate", "0.1", "--log_dir", log_dir)
    assert value(out, r"Precision @ 1: ([0-9.]+)") >= 0.85  # the test split's
    files = os.listdir(log_dir)
    assert "checkpoint" in files and "model.ckpt-599.index" in files, files
    assert any(f.startswith("events.out.tfevents.") for f in files), files


def test_deep_mnist(tmp_path):
    out, _ = run_program("deep_mnist.py", "--steps", "150", "--log_dir", str(tmp_path))
    assert value(out, r"test accuracy ([0-9.]+)") >= 0.80


def test_layers_cnn():
    out, err = run_program("layers_cnn.py", "--train_steps=200", "--batch_size", "50")
    assert value(out, r"accuracy ([0-9.]+)") >= 0.80
    assert value(out, r"global_step (\d+)") == 200
    assert "conv2d/kernel conv2d_1/bias" in out or "conv2d/bias conv2d/kernel conv2d_1/bias" in out
    assert "loss =" in err  # tf.logging.info at INFO level goes to stderr


def test_batch_norm():
    out, _ = run_program("batch_norm.py", "400")
    assert value(out, r"test accuracy ([0-9.]+)") >= 0.80
    assert value(out, r"single-vs-batch max difference ([0-9.]+)") < 1e-4  # inference uses moving averages


def test_autoencoder():
    out, _ = run_program("autoencoder.py", "250")
    assert value(out, r"test loss ([0-9.]+)") <= 0.6 * value(out, r"first loss ([0-9.]+)")


def test_lstm_unrolled():
    out, _ = run_program("lstm_unrolled.py", "600")
    assert value(out, r"final loss ([0-9.]+)") < 0.2 * value(out, r"first loss ([0-9.]+)")
    assert value(out, r"global step (\d+)") == 600


def test_siamese():
    out, _ = run_program("siamese.py", "400")
    assert value(out, r"variables (\d+)") == 6  # the two towers share their weights
    assert "siamese/fc1_W:0" in out
    losses = [float(v) for v in __import__("re").findall(r"loss ([0-9.]+)", out)]
    assert losses[-1] < 0.5 * losses[0]
    # A 2-D embedding after 400 of the program's 5,000 steps: classes separate well beyond chance (0.1).
    assert value(out, r"nearest-center accuracy ([0-9.]+)") >= 0.25


def test_saver_restore(tmp_path):
    out, _ = run_program("saver_restore.py", str(tmp_path / "ckpt"))
    assert "saved model.ckpt-300" in out
    assert "latest model.ckpt-300" in out
    assert "kept model.ckpt-200 model.ckpt-300" in out
    assert value(out, r"index files (\d+)") == 2  # max_to_keep deleted the first
    assert value(out, r"restored step (\d+)") == 300
    assert value(out, r"max difference ([0-9.]+)") == 0.0
    assert "keys global_step linear/bias linear/weights" in out
    assert value(out, r"loss ([0-9.]+)") < 1e-3


def test_nearest_neighbor():
    out, _ = run_program("nearest_neighbor.py", "200")
    # 1-NN over 2,000 random training digits: 0.87-0.93 over runs (the batches are drawn unseeded, as in TF)
    assert value(out, r"Accuracy: ([0-9.]+)") >= 0.8


def test_input_pipeline():
    out, _ = run_program("input_pipeline.py", "--epochs=2")
    examples = int(value(out, r"examples (\d+)"))
    assert value(out, r"steps (\d+)") == 2 * -(-examples // 100)  # two epochs, the last batch of each partial
    assert value(out, r"accuracy ([0-9.]+)") >= 0.85


def test_estimator_mnist(tmp_path):
    model_dir = str(tmp_path / "model")
    out, err = run_program("estimator_mnist.py", "--steps", "400", "--model_dir", model_dir)
    assert value(out, r"eval global_step (\d+)") == 400
    assert value(out, r"eval accuracy ([0-9.]+)") >= 0.85
    assert value(out, r"predicted (\d+) examples") == 20
    assert value(out, r"examples, (\d+) correct") >= 15
    assert abs(value(out, r"probabilities sum ([0-9.]+)") - 1.0) < 1e-4
    assert "checkpoint %s/model.ckpt-400" % model_dir in out
    assert "Saving checkpoints for 200 into" in err and "loss = " in err and "Saving dict for global step 400" in err
    assert "probabilities = [[" in err  # the LoggingTensorHook of a tensor given by name


def test_queue_mnist():
    out, _ = run_program("queue_mnist.py", "--num_epochs", "2")
    examples = int(value(out, r"train examples (\d+)"))
    assert value(out, r"Done training for 2 epochs, (\d+) steps") == 2 * examples // 100  # shuffle_batch: full
    assert value(out, r"test accuracy ([0-9.]+)") >= 0.85
    assert value(out, r"threads alive (\d+)") == 0

