#!/usr/bin/env bash
# Runs every benchmark built under <build>/bin (names containing "bench"). Google Benchmark
# binaries print their table; MPI benchmarks (…bench_comm…) run under mpirun with 4 ranks.
set -euo pipefail
build=${1:-build}
shopt -s nullglob
benches=("$build"/bin/*bench*)
if [ ${#benches[@]} -eq 0 ]; then
  echo "run-bench: no benchmarks in $build/bin (configure with SHARDSCOPE_BENCH=ON)" >&2
  exit 2
fi
mpirun_flags=(--oversubscribe --bind-to none --mca btl self,vader
              --mca btl_vader_single_copy_mechanism none)
[ "$(id -u)" -eq 0 ] && mpirun_flags+=(--allow-run-as-root)
for b in "${benches[@]}"; do
  echo "== $(basename "$b")"
  case "$b" in
    *bench_comm*|*bench_mpi*) mpirun "${mpirun_flags[@]}" -np "${BENCH_RANKS:-4}" "$b" ;;
    *bench_tp*) mpirun "${mpirun_flags[@]}" -np 4 "$b" ;; # T = 2 × D = 2 vs T = 1 × D = 4
    *bench_goals*) "$b" --ranks "${BENCH_RANKS:-4}" ;; # a plain program (docs/performance.md)
    *) "$b" --benchmark_counters_tabular=true ;;
  esac
done
echo "== strategies (step-time ratios, tracing overhead)"
bash "$(dirname "$0")/bench-strategies.sh" "$build" "${BENCH_RANKS:-4}" "${BENCH_MODEL:-small}"
