#!/usr/bin/env python3
"""Report of bench/data_parallel_scaling.sh: weak-scaling efficiency per model and bucket size from
the RESULT lines of the np=1 and np=N logs, the allreduce time hidden under compute, and one
Chrome trace merged from the ranks' timelines (open it in chrome://tracing or ui.perfetto.dev).

Usage: bench/data_parallel_report.py --np N --out DIR   (DIR holds np1.log, npN.log, timeline_rank*.json)
"""
import argparse
import glob
import json
import os


def results(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("RESULT "):
                r = dict(kv.split("=", 1) for kv in line.split()[1:])
                rows[(r["model"], float(r["bucket_mib"]))] = r
    return rows


def bucket_name(mib):
    return "none (sync)" if mib == 0 else "%g MiB" % mib


def print_scaling(one, many, np):
    print("\nweak scaling, batch 64 per rank: efficiency = thr(%d) / (%d x thr(1)), thr = images/s of all ranks" % (np, np))
    print("  %-6s %-12s %10s %10s %11s %11s %10s" % ("model", "bucket", "step/s @1", "step/s @%d" % np, "img/s @1",
                                                      "img/s @%d" % np, "efficiency"))
    summary = {}
    for key in sorted(many):
        if key not in one:
            continue
        r1, rn = float(one[key]["steps_per_s"]), float(many[key]["steps_per_s"])
        batch = int(many[key]["batch"])
        eff = rn / r1
        summary["%s/%g" % key] = {"steps_per_s_1": r1, "steps_per_s_n": rn, "efficiency": eff}
        print("  %-6s %-12s %10.2f %10.2f %11.0f %11.0f %9.1f%%" % (key[0], bucket_name(key[1]), r1, rn, batch * r1,
                                                                   np * batch * rn, 100 * eff))
    return summary


def print_hidden(many, np):
    print("\nallreduce hidden under compute at np=%d (profiled steps, per step):" % np)
    print("  blocked   = ms the executor spent in nodes waiting for collectives (allreduce, _allreduce_wait)")
    print("  transport = ms the engine's thread spent in the transport's allreduces (MPI)")
    print("  hidden    = 1 - blocked / transport: the share of allreduce time the training thread did not")
    print("              wait for (it ran compute meanwhile); below 0 when it also waited for a slower rank")
    print("  %-6s %-12s %8s %10s %10s %12s %8s" % ("model", "bucket", "grads MiB", "blocked ms", "start ms",
                                                    "transport ms", "hidden"))
    for key in sorted(many):
        r = many[key]
        print("  %-6s %-12s %8.2f %10.3f %10.3f %12.3f %7.0f%%" % (
            key[0], bucket_name(key[1]), float(r["param_mib"]), float(r["blocked_ms"]), float(r["start_ms"]),
            float(r["transport_ms"]), 100 * float(r["hidden"])))


def merge_timelines(out):
    """Concatenates the ranks' traces (pid = rank), keeping what overlaps the benchmark's timed steps."""
    events = []
    for path in sorted(glob.glob(os.path.join(out, "timeline_rank*.json"))):
        with open(path) as f:
            trace = json.load(f)
        evs = trace["traceEvents"] if isinstance(trace, dict) else trace
        steps = [e for e in evs if e.get("cat") == "bench"]
        if steps:
            lo = min(e["ts"] for e in steps)
            hi = max(e["ts"] + e.get("dur", 0) for e in steps)
            evs = [e for e in evs if e.get("ph") != "X" or (e["ts"] + e.get("dur", 0) >= lo and e["ts"] <= hi)]
        events.extend(evs)
    if not events:
        print("\nno timeline was written (IR_TIMELINE / --timeline)")
        return
    path = os.path.join(out, "timeline_wide.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    cats = sorted({e.get("cat", "") for e in events})
    print("\nChrome trace of the wide LeNet's timed steps (every rank; each rank's clock starts at its own Init):")
    print("  %s  (%d events; categories: %s)" % (path, len(events), ", ".join(cats)))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    one = results(os.path.join(args.out, "np1.log"))
    many = results(os.path.join(args.out, "np%d.log" % args.np))
    summary = print_scaling(one, many, args.np)
    print_hidden(many, args.np)
    merge_timelines(args.out)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"np": args.np, "scaling": summary, "np1": list(one.values()), "npN": list(many.values())}, f,
                  indent=1)


if __name__ == "__main__":
    main()
