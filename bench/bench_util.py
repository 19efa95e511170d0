"""What the Python benchmarks share: the repository root and a median timer.

Importing it sets OPENBLAS_NUM_THREADS=1 (unless set): PyTorch's OpenBLAS threads would
otherwise oversubscribe the cores PyTorch itself uses.
"""
import os
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def median_ms(fn, reps):
    """Calls fn once to warm up, then `reps` times; the median wall time in milliseconds."""
    fn()
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    times.sort()
    return times[len(times) // 2]
