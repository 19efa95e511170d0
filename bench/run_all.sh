#!/usr/bin/env bash
# Runs every benchmark once, writing JSON results into DIR (default .cache/bench/<timestamp>).
# Usage: bench/run_all.sh [DIR]     (after scripts/build.sh; PyTorch comparisons need python3-torch)
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.cache/bench/$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$out"
py=/usr/bin/python3
echo "== fused vs unfused vs STREAM, F_max sweep (synthetic), compile cache =="
build/bin/ir-fusion-bench --json "$out/fusion.json"
echo "== F_max sweep on LeNet training and the Adam update; cold/warm bind =="
$py bench/lenet_fmax_bench.py --json "$out/lenet_fmax.json"
if $py -c "import torch" 2>/dev/null; then
  echo "== fused workloads vs PyTorch =="
  $py bench/fusion_vs_pytorch.py --json "$out/fusion_vs_pytorch.json"
  echo "== single ops vs PyTorch =="
  $py bench/ops_vs_pytorch.py --json "$out/ops_vs_pytorch.json"
  echo "== training steps vs PyTorch =="
  $py bench/train_vs_pytorch.py --json "$out/train_vs_pytorch.json"
else
  echo "(PyTorch not installed: skipping the comparisons with it)"
fi
echo "results in $out"
