"""tf.keras.datasets.mnist.load_data: MNIST as uint8 arrays ((x_train, y_train), (x_test, y_test)) with
images [N, 28, 28], read from the project's local MNIST copy (nothing is downloaded: `path` names a
directory holding the four IDX files, else scripts/fetch_mnist.py's cache or $TINYFLOW_MNIST_DIR)."""
import os

from .datasets import mnist as _mnist


def load_data(path="mnist.npz"):
    directory = path if os.path.isdir(path) else (os.environ.get("TINYFLOW_MNIST_DIR") or _mnist.default_data_dir())
    out = []
    for split in ("train", "test"):
        images_stem, labels_stem = _mnist._FILES[split]
        with _mnist._open(directory, images_stem) as f:
            images = _mnist.read_idx(f)
        with _mnist._open(directory, labels_stem) as f:
            labels = _mnist.read_idx(f)
        out.append((images.reshape(-1, 28, 28), labels))
    return tuple(out)
