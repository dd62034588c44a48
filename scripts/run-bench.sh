#!/usr/bin/env bash
# Runs every benchmark binary built under <build>/bin whose name contains "bench",
# printing Google Benchmark's console table (ratios are reported as counters side by side).
set -euo pipefail
build=${1:-build}
shopt -s nullglob
benches=("$build"/bin/*bench*)
if [ ${#benches[@]} -eq 0 ]; then
  echo "run-bench: no benchmarks in $build/bin (configure with SHARDSCOPE_BENCH=ON)" >&2
  exit 2
fi
for b in "${benches[@]}"; do
  echo "== $(basename "$b")"
  "$b" --benchmark_counters_tabular=true
done
