"""What the Python benchmarks share: the repository root, a median timer and the fair PyTorch peer.

A ratio against PyTorch means something only when PyTorch runs fairly (MACHINE_NOTES.md):
 - BLAS: Debian's torch calls libblas.so.3, which is the reference BLAS (~50x slower sgemm)
   unless an optimized one is installed;
 - allocator: glibc hands blocks over 32 MiB to mmap, and a page fault per 4 KiB made `x + x`
   on 16M floats take 165 ms instead of 2 ms on one VM;
 - threads: torch defaults to 1 thread here.
`fair_allocator_or_reexec()` re-executes the script once with glibc's malloc tuned (unless
jemalloc/tcmalloc is preloaded), `describe_peer()` measures BLAS and allocator in this process
and says whether the peer is fair; the scripts print no ratio against an unfair peer.

Importing this module sets OPENBLAS_NUM_THREADS=1 (unless set): a pthread OpenBLAS would
otherwise oversubscribe the cores PyTorch itself uses (the OpenMP OpenBLAS shares torch's pool).
"""
import os
import re
import resource
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: glibc malloc settings that keep large blocks in the heap (no mmap, no trim): no page faults.
FAIR_MALLOC_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "68719476736",
                   "MALLOC_TOP_PAD_": "1073741824"}
#: Set in the re-executed process so that it cannot re-execute again.
REEXEC_MARKER = "IR_BENCH_FAIR_MALLOC_REEXEC"
#: One thread's sgemm 512^3 below this (GFLOP/s, the fastest of 7) is reference-BLAS speed
#: (Debian's reference BLAS: 6-8; OpenBLAS: ~50).
MIN_SGEMM_GFLOPS = 20.0
#: `x + x` slower than this many numpy copies of the same bytes: the allocator page-faults.
MAX_ADD_OVER_COPY = 10.0


def median_ms(fn, reps, warmup_s=0.05, rep_s=0.002):
    """Milliseconds per call of fn in steady state: calls it for >= 10 calls and `warmup_s`
    (allocators and caches settle), then times `reps` repetitions, each the mean of as many calls
    as last about `rep_s` (a lone call of a tiny op is below the clock's resolution); the median.
    ir-ops-bench measures the same way."""
    start, calls = time.perf_counter(), 0
    while calls < 10 or time.perf_counter() - start < warmup_s:
        fn()
        calls += 1
    batch = max(1, int(rep_s * calls / (time.perf_counter() - start)))
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) * 1e3 / batch)
    times.sort()
    return times[len(times) // 2]


# ---- detection (pure functions of text and numbers: unit-tested in tests/python/test_bench_util.py) ----

def mapped_libraries(maps_text):
    """The file paths mapped in a /proc/<pid>/maps text, each once, in order of appearance."""
    seen = []
    for line in maps_text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/") and fields[5] not in seen:
            seen.append(fields[5].strip())
    return seen


_BLAS_KINDS = [("mkl", re.compile(r"libmkl_|/mkl/")), ("openblas", re.compile(r"openblas")),
               ("blis", re.compile(r"blis")), ("atlas", re.compile(r"atlas"))]


def _blas_kind(path):
    for kind, pattern in _BLAS_KINDS:
        if pattern.search(path):
            return kind
    return None


def blas_from_maps(maps_text):
    """(kind, path) of the BLAS a process calls: kind is mkl, openblas, blis, atlas, reference or
    unknown. Debian's torch calls sgemm_ through libblas.so.3, which comes first in its lookup
    scope even when libopenblas.so.0 is mapped too: so the library that libblas.so.3 resolved to
    decides (Debian's alternatives put OpenBLAS's libblas.so.3 in its openblas-* directory, the
    reference one in blas/); without a libblas.so, an optimized BLAS mapped by name."""
    libs = mapped_libraries(maps_text)
    for path in libs:
        if re.search(r"/libc?blas\.so", path):
            return _blas_kind(path) or "reference", path
    for path in libs:
        if re.search(r"/lib(mkl_|openblas|blis|atlas)", path):
            return _blas_kind(path), path
    return "unknown", ""


def allocator_from(environ, maps_text):
    """How large blocks are allocated: 'jemalloc'/'tcmalloc' (preloaded and mapped), 'glibc tuned'
    (the FAIR_MALLOC_ENV settings) or 'glibc default' (large blocks via mmap: page faults)."""
    libs = mapped_libraries(maps_text)
    for name in ("jemalloc", "tcmalloc"):
        if name in environ.get("LD_PRELOAD", "") and any(name in path for path in libs):
            return name
    if all(environ.get(k) == v for k, v in FAIR_MALLOC_ENV.items()):
        return "glibc tuned"
    return "glibc default"


def unfair_reasons(blas_kind, sgemm_gflops, allocator, add_ms, copy_ms):
    """Why the peer's figures are meaningless (empty: it is fair)."""
    reasons = []
    if blas_kind == "reference":
        reasons.append("torch calls the reference BLAS (install libopenblas0-openmp)")
    if sgemm_gflops < MIN_SGEMM_GFLOPS:
        reasons.append("sgemm 512^3 runs at %.1f GFLOP/s on 1 thread (< %g: reference-BLAS speed)" % (sgemm_gflops,
                                                                                        MIN_SGEMM_GFLOPS))
    if allocator == "glibc default":
        reasons.append("glibc's default malloc mmaps large blocks (run with %s or LD_PRELOAD jemalloc)"
                       % " ".join("%s=%s" % kv for kv in FAIR_MALLOC_ENV.items()))
    if add_ms > MAX_ADD_OVER_COPY * copy_ms:
        reasons.append("x + x on 16M floats takes %.1f ms, %.0fx a numpy copy of the same bytes (%.1f ms): "
                       "the allocator page-faults" % (add_ms, add_ms / copy_ms, copy_ms))
    return reasons


def fair_malloc_env(environ, maps_text):
    """The environment to re-execute with, or None when no re-execution is needed or allowed."""
    if environ.get(REEXEC_MARKER) or allocator_from(environ, maps_text) != "glibc default":
        return None
    env = dict(environ)
    env.update(FAIR_MALLOC_ENV)
    env[REEXEC_MARKER] = "1"
    return env


def _read_maps():
    try:
        with open("/proc/self/maps") as f:
            return f.read()
    except OSError:
        return ""


# ---- the peer in this process ----

def fair_allocator_or_reexec():
    """Re-executes this script once with FAIR_MALLOC_ENV unless the allocator is fair already.
    Call it first in main(), before any large allocation."""
    env = fair_malloc_env(os.environ, _read_maps())
    if env is not None:
        sys.stderr.write("re-executing with %s (glibc's default malloc page-faults on large blocks)\n"
                         % " ".join("%s=%s" % kv for kv in FAIR_MALLOC_ENV.items()))
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable] + sys.argv, env)


def _best_ms(fn, reps):
    fn()
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        best = min(best, (time.perf_counter() - start) * 1e3)
    return best


def _sgemm_gflops(torch):
    """One thread's sgemm 512^3: the reference BLAS is single-threaded, and one thread is less
    hurt by other processes than a team of spinning OpenMP threads."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    a, b = torch.rand(512, 512), torch.rand(512, 512)
    ms = _best_ms(lambda: a @ b, 7)
    torch.set_num_threads(threads)
    return 2.0 * 512 ** 3 / ms / 1e6


def _add_and_copy_ms(torch):
    """The fastest of 9 `x + x` on 16M floats (a fresh 64 MiB output each time), a numpy copy of the
    same bytes, and the minor page faults per `x + x`. The fastest, not the median: glibc's tuned
    heap still hands out fresh pages now and then (an aligned block does not fit the hole the
    previous one left until holes coalesce), while a page-faulting allocator faults every time."""
    import numpy as np
    x = torch.rand(16 << 20)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    add_ms = _best_ms(lambda: x + x, 9)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / 10.0
    src = x.numpy()
    dst = np.empty_like(src)
    copy_ms = _best_ms(lambda: np.copyto(dst, src), 9)
    return add_ms, copy_ms, faults


def describe_peer(threads):
    """Sets torch's threads, measures its BLAS and allocator; a dict for the report (fair, reasons)."""
    import torch
    torch.set_num_threads(threads)
    gflops = _sgemm_gflops(torch)
    maps = _read_maps()
    blas_kind, blas_path = blas_from_maps(maps)
    allocator = allocator_from(os.environ, maps)
    add_ms, copy_ms, faults = _add_and_copy_ms(torch)
    reasons = unfair_reasons(blas_kind, gflops, allocator, add_ms, copy_ms)
    return {"torch": torch.__version__, "threads": torch.get_num_threads(),
            "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
            "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", "(default: active)"),
            "blas": blas_kind, "blas_path": blas_path, "sgemm512_gflops": gflops,
            "allocator": allocator, "add16m_ms": add_ms, "copy16m_ms": copy_ms, "add16m_minor_faults": faults,
            "load_average": os.getloadavg()[0], "fair": not reasons, "unfair_reasons": reasons}


def print_peer(peer, out=sys.stdout):
    """Prints the peer's description; for an unfair peer, why no ratio is printed."""
    out.write("PyTorch %s, %d threads (OPENBLAS_NUM_THREADS=%s, OMP_WAIT_POLICY=%s); BLAS: %s %s, sgemm 512^3 %.0f GFLOP/s on 1 thread; "
              "allocator: %s, x+x 16M floats %.2f ms (numpy copy %.2f ms, %.0f minor faults); load average %.2f\n"
              % (peer["torch"], peer["threads"], peer["openblas_num_threads"], peer["omp_wait_policy"], peer["blas"], peer["blas_path"],
                 peer["sgemm512_gflops"], peer["allocator"], peer["add16m_ms"], peer["copy16m_ms"],
                 peer["add16m_minor_faults"], peer["load_average"]))
    if peer["load_average"] > 1.0 and "passive" not in peer["omp_wait_policy"].lower():
        out.write("WARNING: load average %.2f with spinning OpenMP threads: every figure (ours and PyTorch's, one "
                  "libgomp) can be 10-100x low; run idle or with OMP_WAIT_POLICY=passive\n" % peer["load_average"])
    for reason in peer["unfair_reasons"]:
        out.write("UNFAIR PEER: %s\n" % reason)
    if not peer["fair"]:
        out.write("=> no ratio against PyTorch is printed (its figures are shown as measured)\n")


def ratio(ours_rate, theirs_rate, peer):
    """ours/theirs, or None against an unfair peer."""
    return ours_rate / theirs_rate if peer is None or peer["fair"] else None


def fmt_ratio(r, width=6):
    return ("%*.2f" % (width, r)) if r is not None else "%*s" % (width, "-")


def add_peer_args(parser):
    parser.add_argument("--threads", type=int, default=2, help="torch.set_num_threads (default 2)")
    parser.add_argument("--allow-unfair", action="store_true",
                        help="exit 0 even when the PyTorch peer is unfair (ratios are still not printed)")


def exit_status(peer, args):
    """The scripts' exit status: 3 for an unfair peer unless --allow-unfair."""
    return 3 if peer is not None and not peer["fair"] and not args.allow_unfair else 0
