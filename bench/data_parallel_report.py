#!/usr/bin/env python3
"""Report of bench/data_parallel_scaling.sh: weak-scaling efficiency per model and bucket size from
the RESULT lines of the np=1 and np=N logs (each configuration's best round), the allreduce time hidden under compute, and one
Chrome trace per bucket size merged from the ranks' timelines (open it in chrome://tracing or ui.perfetto.dev).

Usage: bench/data_parallel_report.py --np N --out DIR
(DIR holds np1_round<k>.log, np<N>_round<k>.log, timeline_<bucket>_rank<r>.json)
"""
import argparse
import glob
import json
import os


def results(out, np):
    """Each configuration's RESULT of its best round (highest median steps/s), with every round's median."""
    best = {}
    for path in sorted(glob.glob(os.path.join(out, "np%d_round*.log" % np))):
        with open(path) as f:
            for line in f:
                if not line.startswith("RESULT "):
                    continue
                r = dict(kv.split("=", 1) for kv in line.split()[1:])
                key = (r["model"], float(r["bucket_mib"]))
                rounds = best[key]["rounds"] if key in best else []
                rounds.append(float(r["steps_per_s"]))
                if key not in best or float(r["steps_per_s"]) > float(best[key]["steps_per_s"]):
                    best[key] = r
                best[key]["rounds"] = rounds
    return best


def bucket_name(mib):
    return {-2: "auto", -1: "no allreduce", 0: "none (sync)"}.get(mib, "%g MiB" % mib)


def spread(r):
    return "%.0f-%.0f" % (min(r["rounds"]), max(r["rounds"]))


def print_scaling(one, many, np):
    print("\nweak scaling, batch 64 per rank, thr = images/s of all ranks; steps/s = median of the repetitions")
    print("of the best round (the range: every round's median):")
    print("  efficiency = thr(%d) / (%d x thr(1)) with the same bucket size at np=1;" % (np, np))
    print("  strict     = the same against np=1 without allreduce nodes (plain one-process training);")
    print("  'no allreduce' at np=%d: ranks that never communicate: the ceiling the shared hardware leaves;" % np)
    print("  comm       = step/s @%d / step/s @%d of 'no allreduce': what the communication itself costs" % (np, np))
    print("  %-6s %-12s %10s %9s %10s %9s %10s %8s %6s" % ("model", "bucket", "step/s @1", "range",
                                                          "step/s @%d" % np, "range", "efficiency", "strict", "comm"))
    summary = {}
    for key in sorted(many):
        if key not in one:
            continue
        r1, rn = float(one[key]["steps_per_s"]), float(many[key]["steps_per_s"])
        plain = one.get((key[0], -1.0))
        strict = rn / float(plain["steps_per_s"]) if plain else float("nan")
        alone = many.get((key[0], -1.0))
        comm = rn / float(alone["steps_per_s"]) if alone else float("nan")
        summary["%s/%s" % (key[0], bucket_name(key[1]))] = {
            "steps_per_s_1": r1, "steps_per_s_n": rn, "efficiency": rn / r1, "strict_efficiency": strict,
            "comm_efficiency": comm, "rounds_1": one[key]["rounds"], "rounds_n": many[key]["rounds"]}
        print("  %-6s %-12s %10.2f %9s %10.2f %9s %9.1f%% %7.1f%% %5.0f%%" % (
            key[0], bucket_name(key[1]), r1, spread(one[key]), rn, spread(many[key]), 100 * rn / r1, 100 * strict,
            100 * comm))
    return summary


def print_hidden(many, np):
    print("\nallreduce time hidden under compute at np=%d (profiled steps of the best round, ms per step):" % np)
    print("  blocked   = time the executor spent in the nodes that wait for collectives (_allreduce_wait,")
    print("              or allreduce when unbucketed); start = in the nodes that submit them (copies)")
    print("  transport = time the engine's thread spent in the MPI allreduces (EngineStats::transport_ms;")
    print("              not counting its agreement check, packing and unpacking)")
    print("  hidden    = 1 - blocked / transport: the share of the allreduce time the training thread did")
    print("              not wait for (it computed meanwhile); negative when it also waited for a slower rank")
    print("  %-6s %-12s %9s %10s %9s %12s %8s" % ("model", "bucket", "grads MiB", "blocked", "start", "transport",
                                                  "hidden"))
    for key in sorted(many):
        r = many[key]
        if key[1] == -1:  # no allreduce nodes: nothing to hide
            continue
        print("  %-6s %-12s %9.2f %10.3f %9.3f %12.3f %7.0f%%" % (
            key[0], bucket_name(key[1]), float(r["param_mib"]), float(r["blocked_ms"]), float(r["start_ms"]),
            float(r["transport_ms"]), 100 * float(r["hidden"])))


ENGINE_PHASES = {"queue", "agreement", "pack", "transport", "unpack"}
NOT_COMPUTE = ENGINE_PHASES | {"bench", "_allreduce_wait", "_allreduce_start", "allreduce", "allgather", "broadcast"}


def union(spans):
    merged = []
    for b, e in sorted(spans):
        if merged and b <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([b, e])
    return merged


def overlap_from_trace(events):
    """Per rank: the share of the transport spans' time during which the executor ran a compute node."""
    shares = {}
    for pid in sorted({e["pid"] for e in events if e.get("ph") == "X"}):
        spans = [e for e in events if e.get("ph") == "X" and e["pid"] == pid]
        transport = union([(e["ts"], e["ts"] + e["dur"]) for e in spans if e.get("cat") == "transport"])
        compute = union([(e["ts"], e["ts"] + e["dur"]) for e in spans if e.get("cat") not in NOT_COMPUTE])
        total = sum(e - b for b, e in transport)
        covered = 0.0
        for b, e in transport:
            for cb, ce in compute:
                covered += max(0.0, min(e, ce) - max(b, cb))
        shares[pid] = (covered / total if total else float("nan"), total / 1000.0)
    return shares


def merge_timelines(out, tag):
    """Concatenates the ranks' traces (pid = rank), keeping what overlaps the benchmark's timed steps."""
    events = []
    for path in sorted(glob.glob(os.path.join(out, "timeline_%s_rank*.json" % tag))):
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
        print("\nno timeline was written for %s (IR_TIMELINE / --timeline)" % tag)
        return
    path = os.path.join(out, "timeline_%s.json" % tag)
    with open(path, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ms"}, f)
    print("\nChrome trace of a few wide-LeNet steps, %s buckets (all ranks; each rank's clock starts at its" % tag)
    print("own Init): %s (%d events)" % (path, len(events)))
    print("  share of the MPI transport time during which the same rank's executor ran compute nodes:")
    for pid, (share, ms) in overlap_from_trace(events).items():
        print("    rank %d: %.0f%% of %.1f ms of transport overlapped compute" % (pid, 100 * share, ms))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    one = results(args.out, 1)
    many = results(args.out, args.np)
    if not one or not many:
        raise SystemExit("no RESULT lines in %s/np*_round*.log" % args.out)
    summary = print_scaling(one, many, args.np)
    print_hidden(many, args.np)
    for tag in ("1MiB", "25MiB", "autoMiB"):
        merge_timelines(args.out, tag)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump({"np": args.np, "scaling": summary, "np1": list(one.values()), "npN": list(many.values())}, f,
                  indent=1)


if __name__ == "__main__":
    main()
