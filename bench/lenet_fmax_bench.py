#!/usr/bin/env python3
"""F_max sweep on the LeNet training step and on the Adam update of a 16M-float variable, and
cold / warm / cached optimization of the LeNet training graph: bench/fmax_sweep.py's measurements
(see its docstring) for --model lenet and --model adam.

Usage: /usr/bin/python3 bench/lenet_fmax_bench.py [--steps N] [--batch B] [--adam-n N] [--json FILE]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fmax_sweep as fs  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--adam-n", type=int, default=16 << 20)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    lenet = fs.parse_args(["--model", "lenet", "--batch", str(args.batch), "--steps", str(args.steps)])
    adam = fs.parse_args(["--model", "adam", "--batch", str(args.adam_n), "--steps", str(max(5, args.steps // 4))])
    results = {}
    for name, model_args in (("lenet_sweep", lenet), ("adam_sweep", adam)):
        title = fs.builder(model_args)().describe
        print(title, flush=True)
        results[name] = fs.sweep(model_args)
        fs.print_sweep(title, results[name])
    results["compile"] = fs.compile_report(lenet)
    results["compile_summary"] = fs.summarize_compile(results["compile"])
    fs.print_compile("LeNet training graph, optimized in a new process (default F_max)", results["compile_summary"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
