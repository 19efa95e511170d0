#!/usr/bin/env bash
# The ThreadSanitizer job (scripts/test.sh; README "Tests"): in the Release tree BUILD_DIR, builds
# libir_tsan.so and ir_threads_tests_tsan (cmake/ir_lean_sanitize.cmake: the threading layers instrumented,
# ~30 files), then runs under ThreadSanitizer
#   1. tests/threads: lazy arrays on threads (own arrays, one Context, a shared variable, pending
#      arrays and handles crossing threads, tapes) and one Session shared by 8 threads,
#   2. tests/python/threads_stress.py: TF programs on Python threads (eager: 4 threads on their own
#      constants, a shared variable, training with tapes; graph: a Session shared by 8 threads),
#      python3 with libtsan preloaded and TINYFLOW_LIB=libir_tsan.so.
# Any report fails the job. IR_TSAN_STRESS_SECONDS (default 1) is the stress time per case.
# Usage: scripts/tsan_test.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir="${1:-build}"
seconds="${IR_TSAN_STRESS_SECONDS:-1}"
jobs="$(nproc 2>/dev/null || echo 2)"

cmake --build "$build_dir" -j "$jobs" --target ir_tsan ir_threads_tests_tsan tinyflow_C_tsan

compiler="$(sed -n 's/^CMAKE_CXX_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")"
libtsan="$("${compiler:-c++}" -print-file-name=libtsan.so)"
# halt_on_error: the first report fails the run. libgomp and OpenBLAS are not instrumented: their
# threads' synchronization is invisible to TSan (false reports), so every parallel region runs on
# the calling thread (the tests' threads are what is checked).
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_WAIT_POLICY=passive

# TSan maps its shadow memory at fixed addresses: with the high ASLR entropy of recent kernels
# (vm.mmap_rnd_bits = 32) a randomized mapping may land there. Without randomization it never does.
no_aslr=()
if setarch "$(uname -m)" -R true 2>/dev/null; then
  no_aslr=(setarch "$(uname -m)" -R)
fi

echo "-- tests/threads under ThreadSanitizer (${seconds} s per case)"
IR_STRESS_SECONDS="$seconds" "${no_aslr[@]}" "$build_dir/bin/ir_threads_tests_tsan"
for mode in eager graph; do
  echo "-- tests/python/threads_stress.py $mode under ThreadSanitizer"
  LD_PRELOAD="$libtsan" TINYFLOW_LIB="$build_dir/lib/libir_tsan.so" PYTHONPATH="$PWD/tinyflow_demo" \
    PYTHONDONTWRITEBYTECODE=1 "${no_aslr[@]}" /usr/bin/python3 tests/python/threads_stress.py "$mode" --seconds "$seconds"
done
echo "ThreadSanitizer: no report."
