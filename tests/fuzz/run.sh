#!/usr/bin/env bash
# Builds the libFuzzer targets (the fuzz preset) and runs each for SECONDS, starting from its
# seed corpus (tests/fuzz/corpus/<target>/, left unchanged: new inputs go to a scratch folder).
# Prints each target's executions; exits 1 when any target crashed or a sanitizer reported.
# The targets run side by side, as many at a time as there are cores.
# Usage: tests/fuzz/run.sh SECONDS [TARGET...]
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_replay fuzz_report fuzz_runconfig fuzz_predict fuzz_config_json fuzz_lesson fuzz_checkpoint_metadata fuzz_config_import)

cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc)" --target "${targets[@]}"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# One target for SECONDS in its own folders; its outcome goes to $scratch/$t/ok or ./failed.
run_one() {
  local t=$1
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/cwd" "$scratch/$t/artifacts"
  # The run-config parser looks at paths (outputs, --data): it runs in an empty folder.
  if (cd "$scratch/$t/cwd" && "$root/build-fuzz/bin/$t" -max_total_time="$seconds" -print_final_stats=1 \
        -timeout=25 -rss_limit_mb=4096 -artifact_prefix="$scratch/$t/artifacts/" \
        "$scratch/$t/corpus" "$root/tests/fuzz/corpus/$t") >"$scratch/$t/log" 2>&1; then
    touch "$scratch/$t/ok"
  fi
}

# The targets run side by side, one per core: each still gets SECONDS of a whole core (the same
# executions as one after the other), and the run takes SECONDS × targets / cores.
root=$PWD
parallel=$(nproc)
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$parallel" ]; do wait -n || true; done
  run_one "$t" &
done
wait

status=0
total=0
for t in "${targets[@]}"; do
  log="$scratch/$t/log"
  if [ -e "$scratch/$t/ok" ]; then
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    total=$((total + ${runs:-0}))
    echo "fuzz: $t: ${runs:-?} executions in ${seconds} s, no crash"
  else
    status=1
    echo "fuzz: $t: FAILED (log and reproducer below)"
    tail -n 60 "$log"
    for a in "$scratch/$t/artifacts/"*; do [ -e "$a" ] && mkdir -p build-fuzz/findings && cp "$a" build-fuzz/findings/ && echo "kept build-fuzz/findings/$(basename "$a")"; done
  fi
done
echo "fuzz: $total executions in all ($parallel at a time)"
exit $status
