#!/usr/bin/env bash
# Runs a program under an MPI launcher for ctest, with what a root user in a container needs,
# and a hard time limit so a hung group fails instead of stalling the suite.
# Usage: scripts/mpirun_test.sh <openmpi|mpich> <np> <seconds> <all|rank0> <program> [args...]
#   all:   every rank prints "collective-test rank R: PASS" and the launcher exits 0;
#   rank0: rank 0 prints it; the exit status is ignored (the case ends the job on purpose).
# Exits 77 (ctest SKIP_RETURN_CODE), printing "skipped: ...", when the launcher is not installed.
set -uo pipefail
impl="$1" np="$2" seconds="$3" expect="$4"
shift 4

case "$impl" in
  openmpi)
    launcher="$(command -v mpirun.openmpi || true)"
    # Root in a container: Open MPI refuses root without both variables; more ranks than
    # cores need oversubscription; the vader BTL's single-copy (CMA) needs ptrace rights
    # containers often lack.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    args=(--oversubscribe --mca btl self,vader -np "$np")
    ;;
  mpich)
    launcher="$(command -v mpiexec.mpich || true)"
    args=(-np "$np")
    ;;
  *)
    echo "usage: $0 <openmpi|mpich> <np> <seconds> <all|rank0> <program> [args...]" >&2
    exit 2
    ;;
esac
if [ -z "$launcher" ]; then
  echo "skipped: no $impl launcher (install $([ "$impl" = openmpi ] && echo openmpi-bin || echo mpich))"
  exit 77
fi
# MPI libraries keep allocations until exit: sanitizer builds would report them as leaks.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export OMP_WAIT_POLICY=PASSIVE

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
timeout -k 5 "$seconds" "$launcher" "${args[@]}" "$@" >"$log" 2>&1
status=$?
cat "$log"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "FAIL: $impl np=$np ran past $seconds s" >&2
  exit 1
fi
passed="$(grep -cE '^collective-test rank [0-9]+: PASS' "$log")"
if [ "$expect" = all ]; then
  if [ "$status" -ne 0 ] || [ "$passed" -ne "$np" ]; then
    echo "FAIL: $impl np=$np: exit status $status, $passed of $np ranks passed" >&2
    exit 1
  fi
elif ! grep -qE '^collective-test rank 0: PASS' "$log"; then
  echo "FAIL: $impl np=$np: rank 0 did not pass (exit status $status)" >&2
  exit 1
fi
echo "OK: $impl np=$np ($expect)"
