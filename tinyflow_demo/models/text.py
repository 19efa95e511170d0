"""Byte-level text for the language models: the nlp-corpus sentences that scripts/fetch_text.py caches
(npm package nlp-corpus@4.4.0, MIT), as uint8 arrays, and random training windows over them."""
import os
import subprocess
import sys

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def default_data_dir():
    """Runs scripts/fetch_text.py (a no-op once its cache exists) and returns the directory it prints."""
    script = os.path.join(REPO, "scripts", "fetch_text.py")
    out = subprocess.run([sys.executable, script], stdout=subprocess.PIPE, check=True)
    return out.stdout.decode("utf-8").strip().splitlines()[-1]


def as_bytes(text):
    """A str (encoded as UTF-8) or bytes as a uint8 array."""
    if isinstance(text, str):
        text = text.encode("utf-8")
    return np.frombuffer(bytes(text), dtype=np.uint8)


def load(data_dir=None):
    """(train, held_out) uint8 arrays of the corpus' train.txt and valid.txt, and the directory."""
    directory = data_dir or default_data_dir()
    with open(os.path.join(directory, "train.txt"), "rb") as f:
        train = as_bytes(f.read())
    with open(os.path.join(directory, "valid.txt"), "rb") as f:
        valid = as_bytes(f.read())
    return train, valid, directory


def random_windows(data, batch_size, length, rng):
    """int32 [batch_size, length] windows of `data` starting at uniformly random offsets."""
    starts = rng.randint(0, len(data) - length + 1, size=batch_size)
    return np.stack([data[s:s + length] for s in starts]).astype(np.int32)


def eval_windows(data, length, count):
    """int32 [count', length]: up to `count` consecutive non-overlapping windows from the start of `data`
    (the same every evaluation, so held-out figures compare across epochs)."""
    count = min(count, len(data) // length)
    return data[:count * length].reshape(count, length).astype(np.int32)
