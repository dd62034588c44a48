#!/usr/bin/env bash
# Step-time ratio of each strategy to DDP (with the exposed-communication fraction), tracing
# overhead (events on vs off) and rank threads vs mpirun processes (--shared-device), measured
# side by side in one session with the same seed. Runs are interleaved (on, off, on, off…) so
# machine noise hits both sides alike; the figure is the ratio of median step times.
# usage: scripts/bench-strategies.sh [build] [ranks] [model] [steps] [repeats]
set -euo pipefail
build=${1:-build}; ranks=${2:-4}; model=${3:-small}; steps=${4:-6}; repeats=${5:-3}
cli="$build/bin/shardscope-cli"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

median_ms() { # median of step_ms over the steps after the first (warm-up) of the given reports
  python3 - "$@" <<'PY'
import json, sys, statistics
ms = []
for f in sys.argv[1:]:
    ms += json.load(open(f))["step_ms"][1:]
print(f"{statistics.median(ms):.3f}")
PY
}

exposed() { # median over the reports of the worst rank's median exposed-communication fraction
  python3 - "$@" <<'PY'
import json, sys, statistics
print(f"{statistics.median(json.load(open(f))['exposed_comm_fraction'] for f in sys.argv[1:]):.3f}")
PY
}

echo "== step time per strategy ($model, $ranks ranks, $steps steps × $repeats, median of steps 2…)"
declare -A med exp
for s in ddp zero1 zero2 zero3 fsdp; do
  files=()
  for r in $(seq "$repeats"); do
    "$cli" run --model "$model" --ranks "$ranks" --strategy "$s" --steps "$steps" --json "$tmp/$s.$r.json" >/dev/null
    files+=("$tmp/$s.$r.json")
  done
  med[$s]=$(median_ms "${files[@]}")
  exp[$s]=$(exposed "${files[@]}")
done
printf "%-8s %12s %14s %16s\n" strategy "step ms" "ratio to ddp" "exposed comm"
for s in ddp zero1 zero2 zero3 fsdp; do
  printf "%-8s %12s %14s %16s\n" "$s" "${med[$s]}" "$(python3 -c "print(f'{${med[$s]}/${med[ddp]}:.3f}')")" "${exp[$s]}"
done

echo "== tracing overhead (zero3, events on vs --no-events, interleaved)"
on=(); off=()
for r in $(seq "$repeats"); do
  "$cli" run --model "$model" --ranks "$ranks" --strategy zero3 --steps "$steps" --json "$tmp/on.$r.json" >/dev/null
  on+=("$tmp/on.$r.json")
  "$cli" run --model "$model" --ranks "$ranks" --strategy zero3 --steps "$steps" --no-events --json "$tmp/off.$r.json" >/dev/null
  off+=("$tmp/off.$r.json")
done
m_on=$(median_ms "${on[@]}"); m_off=$(median_ms "${off[@]}")
echo "events on: $m_on ms/step; events off: $m_off ms/step; throughput on/off = $(python3 -c "print(f'{$m_off/$m_on:.3f}')") (goal ≥ 0.98)"

echo "== rank threads vs processes (zero3, --shared-device vs mpirun, interleaved)"
thr=(); prc=()
for r in $(seq "$repeats"); do
  "$cli" run --model "$model" --ranks "$ranks" --strategy zero3 --steps "$steps" --shared-device --json "$tmp/thr.$r.json" >/dev/null
  thr+=("$tmp/thr.$r.json")
  "$cli" run --model "$model" --ranks "$ranks" --strategy zero3 --steps "$steps" --json "$tmp/prc.$r.json" >/dev/null
  prc+=("$tmp/prc.$r.json")
done
m_thr=$(median_ms "${thr[@]}"); m_prc=$(median_ms "${prc[@]}")
echo "threads: $m_thr ms/step (exposed $(exposed "${thr[@]}")); mpirun: $m_prc ms/step (exposed $(exposed "${prc[@]}")); step time threads/mpirun = $(python3 -c "print(f'{$m_thr/$m_prc:.3f}')")"
