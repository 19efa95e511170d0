#!/usr/bin/env bash
# Runs every benchmark once, writing JSON results (rules_bench: its text tables) into DIR (default .cache/bench/<timestamp>).
# Usage: bench/run_all.sh [DIR [BUILD]]   (BUILD: the build directory, default build/; after scripts/build.sh;
#        PyTorch comparisons need python3-torch). The PyTorch comparisons refuse ratios against an unfair
#        peer (reference BLAS, page-faulting allocator): the run goes on and exits non-zero at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.cache/bench/$(date +%Y%m%d-%H%M%S)}"
build="${2:-build}"
mkdir -p "$out"
py=/usr/bin/python3
status=0
echo "== fused vs unfused vs STREAM, F_max sweep (synthetic), compile cache =="
"$build/bin/ir-fusion-bench" --json "$out/fusion.json"
echo "== RNN: while_loop vs unrolled, bind and step time =="
"$build/bin/ir-rnn-while-bench" --json "$out/rnn_while_vs_unrolled.json"
echo "== lazy arrays: recording cost, training steps (cold, cache hit, 1,000 steps), 4M-element sigmoid and Adam =="
"$build/bin/ir-lazy-bench" --json "$out/lazy.json" | tee "$out/lazy.txt"
echo "== F_max sweep on LeNet training and the Adam update; cold/warm bind =="
TINYFLOW_LIB="$build/lib/libir.so" $py bench/lenet_fmax_bench.py --json "$out/lenet_fmax.json"
echo "== F_max sweep on the Transformer (small preset) training step; cold/warm/cached optimization =="
TINYFLOW_LIB="$build/lib/libir.so" $py bench/fmax_sweep.py --model transformer --preset small --json "$out/fmax_transformer.json"
echo "== rewrite rules: op nodes and step times, rules off vs on =="
$py bench/rules_bench.py --build "$build" | tee "$out/rules_bench.txt"
if $py -c "import torch" 2>/dev/null; then
  echo "== fused workloads vs PyTorch =="
  $py bench/fusion_vs_pytorch.py --build "$build" --json "$out/fusion_vs_pytorch.json" || status=$?
  echo "== single ops vs PyTorch =="
  $py bench/ops_vs_pytorch.py --build "$build" --json "$out/ops_vs_pytorch.json" || status=$?
  echo "== exp/tanh/erf-bound kernels (softmax, cross-entropy, rows) as % of STREAM and vs PyTorch =="
  $py bench/vector_math_vs_pytorch.py --build "$build" --json "$out/vector_math_vs_pytorch.json" || status=$?
  echo "== training steps vs PyTorch =="
  $py bench/train_vs_pytorch.py --build "$build" --json "$out/train_vs_pytorch.json" || status=$?
  echo "== lazy sigmoid and Adam on 4M floats vs PyTorch eager op by op =="
  $py bench/eager_torch_peer.py --build "$build" --json "$out/eager_torch_peer.json" || status=$?
  echo "== tinyflow eager training steps vs graph mode and PyTorch eager; recording cost from Python =="
  $py bench/eager_bench.py --build "$build" --json "$out/eager_bench.json" || status=$?
  echo "== vectorization: per-example gradients, jacobians (pfor) vs batch gradient, loops, functorch =="
  $py bench/pfor_bench.py --build "$build" --json "$out/pfor_bench.json" || status=$?
else
  echo "(PyTorch not installed: skipping the comparisons with it)"
fi
echo "results in $out"
exit $status
