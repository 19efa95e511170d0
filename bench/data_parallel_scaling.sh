#!/usr/bin/env bash
# Weak scaling of data-parallel training (bench/data_parallel_bench.cc): one rank per core,
# OMP_NUM_THREADS=1, batch 64 per rank. Runs np=1 then np=N under the same launcher and binding,
# prints efficiency = thr(N) / (N * thr(1)) per model and bucket size (thr = images/s over all
# ranks, so efficiency = steps/s at N / steps/s at 1), and the share of allreduce time hidden
# under compute; then writes a Chrome trace of a few wide-LeNet steps at np=N to --out.
#
# Usage: bench/data_parallel_scaling.sh [--np N] [--mpi openmpi|mpich] [--rounds R] [--build DIR]
#                                      [--out DIR] [-- extra ir-data-parallel-bench options]
# np=1 and np=N alternate for R rounds (default 3); the report keeps each configuration's best
# round: other processes on the cores only ever slow a round down.
# N defaults to the number of physical cores. Refuses to run N ranks on fewer cores (no
# oversubscription: the timings would measure time slicing, not scaling).
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
build="$repo/build"
out="$repo/build/data_parallel_bench"
mpi=""
np=""
rounds=3
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --np) np="$2"; shift 2 ;;
    --mpi) mpi="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --build) build="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option $1 (see the usage at the top of $0)" >&2; exit 2 ;;
  esac
done

# Cores this process may use: the smaller of the CPUs it is allowed on (nproc: affinity, cgroup
# quota) and the physical cores (lscpu: hyperthreads share a core's arithmetic units).
allowed=$(nproc)
physical=$(lscpu -p=CORE,SOCKET 2>/dev/null | grep -v '^#' | sort -u | wc -l)
[ "$physical" -gt 0 ] || physical=$allowed
cores=$(( allowed < physical ? allowed : physical ))
np="${np:-$cores}"
if [ "$np" -gt "$cores" ]; then
  echo "refusing to run: $np ranks need $np cores, this machine offers $cores" \
       "(nproc $allowed, physical cores $physical); weak scaling needs one rank per core." >&2
  exit 1
fi
if [ "$np" -lt 2 ]; then
  echo "refusing to run: weak scaling needs at least 2 cores (np=$np)" >&2
  exit 1
fi

bench="$build/bin/ir-data-parallel-bench"
[ -x "$bench" ] || bench="$build/ir-data-parallel-bench"
[ -x "$bench" ] || { echo "no ir-data-parallel-bench under $build: build it (target ir-data-parallel-bench)" >&2; exit 1; }

if [ -z "$mpi" ]; then
  if command -v mpirun.openmpi >/dev/null; then mpi=openmpi; elif command -v mpiexec.mpich >/dev/null; then mpi=mpich; fi
fi
case "$mpi" in
  openmpi)
    # Root in a container: allow root; shared-memory transport without CMA (ptrace is often denied).
    launcher=(mpirun.openmpi --allow-run-as-root --bind-to core --map-by core
              --mca btl self,vader --mca btl_vader_single_copy_mechanism none
              -x OMP_NUM_THREADS=1 -x OMP_WAIT_POLICY=PASSIVE) ;;
  mpich)
    launcher=(mpiexec.mpich -bind-to core -genv OMP_NUM_THREADS 1 -genv OMP_WAIT_POLICY PASSIVE) ;;
  *) echo "no MPI launcher: install openmpi-bin or mpich, or pass --mpi openmpi|mpich" >&2; exit 1 ;;
esac
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=PASSIVE

mkdir -p "$out"
# Other processes on the cores make the timings measure them too: say so.
load=$(cut -d' ' -f1 /proc/loadavg)
if awk -v l="$load" 'BEGIN { exit !(l > 0.5) }'; then
  echo "warning: load average $load before starting: other processes compete for the cores; timings are not clean" >&2
fi
echo "data-parallel weak scaling: $mpi, np=1 and np=$np on $cores cores, batch 64 per rank, OMP_NUM_THREADS=1"
rm -f "$out"/np*_round*.log
for round in $(seq 1 "$rounds"); do
  for n in 1 "$np"; do
    echo "  round $round: np=$n (load average $(cut -d' ' -f1 /proc/loadavg)) ..."
    # -1: the step without allreduce nodes: the one-process baseline, and at np=N the ceiling
    # the shared hardware (memory bandwidth, caches) leaves without any communication.
    log="$out/np${n}_round$round.log"
    "${launcher[@]}" -np "$n" "$bench" --buckets -1,0,1,25,auto "${extra[@]}" | tee "$log" | grep -v '^RESULT' || true
    grep -q '^RESULT' "$log" || { echo "np=$n produced no results (see above)" >&2; exit 1; }
  done
done

echo "  tracing 4 wide-LeNet steps (1 MiB, 25 MiB and auto buckets) at np=$np ..."
rm -f "$out"/timeline_*.json
for mib in 1 25 auto; do
  "${launcher[@]}" -np "$np" "$bench" --models wide --buckets "$mib" --steps 4 --reps 1 --warmup 2 \
    --profile-steps 0 --timeline "$out/timeline_${mib}MiB_rank%r.json" >/dev/null
done

python3 "$repo/bench/data_parallel_report.py" --np "$np" --out "$out"
