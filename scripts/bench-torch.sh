#!/usr/bin/env bash
# ShardScope against PyTorch on this machine's CPU, side by side (scripts/torch_gpt_bench.py
# --device cpu: every strategy at 1 and 4 ranks, interleaved repeats). A benchmark, not a test:
# `make bench-torch` runs it, CI does not. PyTorch comes from PyPI into a venv of its own
# (SHARDSCOPE_TORCH_VENV, default ~/.cache/shardscope/torch-venv), installed once: torch without
# its CUDA stack, plus the four CUDA wheels its import needs even on a CPU.
# usage: scripts/bench-torch.sh [build] [torch_gpt_bench.py flags, e.g. --repeats 6 --markdown]
#        scripts/bench-torch.sh [build] --pipeline [torch_pipeline_bench.py flags]: run --pp against
#        torch.distributed.pipelining (GPipe, 1F1B, Interleaved 1F1B over gloo; our ZB-H1; the
#        measured bubble per stage on both sides; it needs numpy too)
set -euo pipefail
build=${1:-build}
[ $# -gt 0 ] && shift
here=$(cd "$(dirname "$0")" && pwd)
venv=${SHARDSCOPE_TORCH_VENV:-$HOME/.cache/shardscope/torch-venv}
if [ ! -x "$build/bin/shardscope-cli" ]; then
  echo "bench-torch: $build/bin/shardscope-cli is missing (make build first)" >&2
  exit 2
fi
if ! "$venv/bin/python" -W ignore -c "import torch" >/dev/null 2>&1; then
  echo "bench-torch: installing PyTorch into $venv (pip then names the CUDA packages left out: expected)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --no-deps torch
  "$venv/bin/python" "$here/torch_gpt_bench.py" --print-cpu-requirements | tr '\n' '\0' |
    xargs -0 "$venv/bin/pip" install --quiet
fi
if [ "${1:-}" = "--pipeline" ]; then
  shift
  "$venv/bin/python" -W ignore -c "import numpy" >/dev/null 2>&1 || "$venv/bin/pip" install --quiet numpy
  exec "$venv/bin/python" -W ignore "$here/torch_pipeline_bench.py" --build "$build" "$@"
fi
exec "$venv/bin/python" -W ignore "$here/torch_gpt_bench.py" --device cpu --build "$build" \
  --warmup 2 --steps 8 "$@"
