#!/usr/bin/env bash
# The GPU backend's check on a machine with one GPU. Needs CMake >= 3.25, ninja, a C++20
# compiler, the CUDA toolkit and python3 (PyTorch optional); Qt, OpenMPI, OpenBLAS, GoogleTest and
# nlohmann_json are NOT needed (GUI and MPI are off; the others fall back to third_party/ and the
# built-in GEMM). No network is used. Budget: under 5 minutes on an H200 with 16 cores, build included.
#
#   1. configure (GUI off, MPI off, CUDA on for this GPU's architecture) and build the GPU tests,
#      the worker and the CLI;
#   2. ctest -L gpu with SHARDSCOPE_EXPECT_GPU=1 (a missing device FAILS instead of skipping);
#   3. shardscope-worker --backend cuda --shared-device --ranks 4 --model gpt100m for ddp, zero1,
#      zero2, zero3 and fsdp; per strategy: measured vs theory per ledger category, the device's
#      pool reserved vs the ledger's peak (goal <= 1.05), median step time after warm-up, the
#      exposed-communication fraction (scripts/gpu_check_report.py);
#   4. PyTorch eager bf16 on the same GPT and global batch (scripts/torch_gpt_bench.py);
#   5. a table.
#
#   scripts/gpu-check.sh [--dry-run] [BUILD_DIR]          (default BUILD_DIR: build-gpucheck)
#
# --dry-run exercises everything without a GPU: CUDA only if nvcc is there, the GPU tests take
# their skip path, and the worker runs the same shared-device strategies on the CPU
# (--backend cpu, model tiny unless GPU_CHECK_MODEL says otherwise).
#
# Environment:
#   GPU_CHECK_MODEL=gpt100m          the GPT preset (resources/presets/models.json)
#   GPU_CHECK_RANKS=4                shared-device ranks
#   GPU_CHECK_STEPS=6                steps per strategy; the first GPU_CHECK_WARMUP=2 are warm-up
#   GPU_CHECK_STRATEGIES=ddp,zero1,zero2,zero3,fsdp
#   GPU_CHECK_WORKER_TIMEOUT=100     seconds per worker run (5 runs must fit a 10-minute session)
#   CUDA_ARCH=90                     CMAKE_CUDA_ARCHITECTURES (default: nvidia-smi's compute_cap)
#   GPU_CHECK_WERROR=1               configure with -Werror (off: a newer compiler's new warnings
#                                    must not cost the GPU run; CI builds with -Werror)
#   GPU_CHECK_CMAKE_ARGS="..."       extra configure arguments, e.g.
#                                    "-DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON -DSHARDSCOPE_BLAS=BUILTIN"
#   OUT=/some/dir                    also write the output (gpu-check.log) and the reports there
#
# Exit code: 0 when everything ran on a GPU and every check passed (or --dry-run passed); 1 when
# something failed, or no GPU was found without --dry-run; 2 when a tool is missing.
set -u -o pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$(pwd)
DRY_RUN=0
BUILD=""
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "gpu-check.sh: unknown option $arg (see --help)"; exit 2 ;;
    *) BUILD=$arg ;;
  esac
done
BUILD=${BUILD:-build-gpucheck}
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
RANKS=${GPU_CHECK_RANKS:-4}
STEPS=${GPU_CHECK_STEPS:-6}
WARMUP=${GPU_CHECK_WARMUP:-2}
STRATEGIES=${GPU_CHECK_STRATEGIES:-ddp,zero1,zero2,zero3,fsdp}
WORKER_TIMEOUT=${GPU_CHECK_WORKER_TIMEOUT:-100}
REPORTS="$BUILD/gpu-check"
START=$(date +%s)
declare -a ROWS=()
FAILED=0

row() { ROWS+=("$(printf '%-30s %-14s %s' "$1" "$2" "$3")"); }
table() {
  printf '\n%-30s %-14s %s\n' "check" "result" "detail"
  printf '%s\n' "${ROWS[@]}"
}
say() { printf '\n== %s  [%ss]\n' "$*" "$(( $(date +%s) - START ))"; }
save_reports() {
  if [ -n "${OUT:-}" ] && [ -d "$REPORTS" ]; then
    mkdir -p "$OUT/gpu-check" && cp -f "$REPORTS"/* "$OUT/gpu-check/" 2>/dev/null
  fi
}
finish() { # exit code
  save_reports
  say "summary"
  table
  exit "$1"
}

main() {
# ---- 1. the GPU ------------------------------------------------------------------------------
say "GPU"
GPU_OK=0
CAP=""
if command -v nvidia-smi >/dev/null 2>&1 && smi=$(nvidia-smi -L 2>&1); then
  echo "$smi"
  GPU_NAME=$(echo "$smi" | head -1 | sed 's/ (UUID.*//')
  CAP=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  GPU_OK=1
  row "GPU" "ok" "${GPU_NAME}, driver ${DRIVER:-?}, sm_${CAP:-?}"
else
  echo "nvidia-smi: ${smi:-not found}"
  row "GPU" "none" "no nvidia-smi / no driver$([ $DRY_RUN = 1 ] && echo ': dry run')"
fi
ARCH=${CUDA_ARCH:-$CAP}
[ -z "$ARCH" ] && ARCH="80;90" # no GPU to ask: the project's default architectures

# ---- 2. tools ----------------------------------------------------------------------------------
say "tools"
MISSING=0
need() { row "$1" "MISSING" "$2"; MISSING=1; }
version_ge() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -1)" = "$2" ]; }
if command -v cmake >/dev/null; then
  CMV=$(cmake --version | head -1 | awk '{print $3}')
  if version_ge "$CMV" 3.25; then row "cmake" "ok" "$CMV"; else need "cmake" "3.25 or newer (have $CMV): pip install 'cmake>=3.25'"; fi
else need "cmake" "pip install 'cmake>=3.25' (or apt-get install cmake)"; fi
if command -v ninja >/dev/null; then row "ninja" "ok" "$(ninja --version)"; else need "ninja" "pip install ninja (or apt-get install ninja-build)"; fi
if command -v c++ >/dev/null; then row "C++ compiler" "ok" "$(c++ --version | head -1)"; else need "C++ compiler" "g++ 12 or newer (C++20)"; fi
if command -v python3 >/dev/null; then row "python3" "ok" "$(python3 --version 2>&1)"; else need "python3" "reads the reports (standard library only)"; fi
NVCC=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ -n "$NVCC" ]; then
  row "nvcc" "ok" "$("$NVCC" --version | grep -o 'release [0-9.]*')"
elif [ $DRY_RUN = 1 ]; then
  row "nvcc" "absent" "dry run: CUDA code not built"
else
  need "nvcc" "the CUDA toolkit (nvcc in PATH or /usr/local/cuda/bin)"
fi
CUDA_HOME_GUESS=$(dirname "$(dirname "${NVCC:-/usr/local/cuda/bin/nvcc}")")
if [ -f "$CUDA_HOME_GUESS/include/nccl.h" ] || [ -f /usr/include/nccl.h ] || [ -n "${NCCL_HOME:-}" ]; then
  row "NCCL" "found" "NcclCommunicator will be built (not used by --shared-device)"
else
  row "NCCL" "absent" "NcclCommunicator not built (not needed here: ranks share one GPU)"
fi
[ $MISSING = 1 ] && { echo "missing tools: see the table"; finish 2; }

# ---- 3. configure and build ---------------------------------------------------------------------
CUDA_MODE=ON
[ $DRY_RUN = 1 ] && CUDA_MODE=AUTO
WERROR=OFF
[ "${GPU_CHECK_WERROR:-0}" = 1 ] && WERROR=ON
# shellcheck disable=SC2206 # word splitting of the extra arguments is intended
EXTRA=(${GPU_CHECK_CMAKE_ARGS:-})
say "configure ($BUILD; CUDA $CUDA_MODE, architectures $ARCH)"
mkdir -p "$BUILD" "$REPORTS"
rm -f "$REPORTS"/*
if ! cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
     -DSHARDSCOPE_GUI=OFF -DSHARDSCOPE_MPI=OFF -DSHARDSCOPE_CUDA=$CUDA_MODE -DSHARDSCOPE_BENCH=OFF \
     -DSHARDSCOPE_TESTS=ON -DSHARDSCOPE_WERROR=$WERROR "-DCMAKE_CUDA_ARCHITECTURES=$ARCH" \
     ${NVCC:+-DCMAKE_CUDA_COMPILER=$NVCC} "${EXTRA[@]}" >"$BUILD/gpu-check-configure.log" 2>&1; then
  tail -30 "$BUILD/gpu-check-configure.log"
  cp -f "$BUILD/gpu-check-configure.log" "$REPORTS/" 2>/dev/null
  row "configure" "FAILED" "see $BUILD/gpu-check-configure.log"
  finish 1
fi
# Which of the project's dependencies came from the system and which from the fallbacks.
grep -E "^-- (ShardScope:|nlohmann_json:|GoogleTest:|CPU GEMM:)" "$BUILD/gpu-check-configure.log"
WITH_CUDA=$(sed -n 's/^-- ShardScope:.*CUDA=\([A-Z]*\).*/\1/p' "$BUILD/gpu-check-configure.log" | tail -1)
row "configure" "ok" "GUI off, MPI off, CUDA ${WITH_CUDA:-?} ($ARCH), -Werror $WERROR"
for dep in nlohmann_json GoogleTest "CPU GEMM"; do
  row "$dep" "info" "$(sed -n "s/^-- $dep: //p" "$BUILD/gpu-check-configure.log" | tail -1)"
done

say "build"
# The GPU tests are the executables tests/gpu/CMakeLists.txt declares; those a CPU-only
# configuration does not define are left out (ninja lists the targets it knows).
mapfile -t GPU_TESTS < <(sed -n 's/^gpu_add_gtest(\([A-Za-z0-9_]*\).*/\1/p' "$ROOT/tests/gpu/CMakeLists.txt")
KNOWN=$(ninja -C "$BUILD" -t targets all 2>/dev/null | sed -n 's/^\([A-Za-z0-9_.-]*\): .*/\1/p')
TARGETS=()
for t in "${GPU_TESTS[@]}" shardscope-worker shardscope-cli; do
  if grep -qx "$t" <<<"$KNOWN"; then TARGETS+=("$t"); fi
done
t0=$(date +%s)
if cmake --build "$BUILD" --target "${TARGETS[@]}" -j "$(nproc)" >"$BUILD/gpu-check-build.log" 2>&1; then
  row "build" "ok" "$(( $(date +%s) - t0 ))s: ${TARGETS[*]}"
else
  grep -m 20 -B 2 -A 10 -E "error|FAILED" "$BUILD/gpu-check-build.log" || tail -40 "$BUILD/gpu-check-build.log"
  tail -300 "$BUILD/gpu-check-build.log" >"$REPORTS/gpu-check-build.tail.log"
  row "build" "FAILED" "see $BUILD/gpu-check-build.log"
  finish 1
fi

# ---- 4. ctest -L gpu ---------------------------------------------------------------------------
# The probe (libcudart's own answer) also decides when nvidia-smi is missing but a GPU is not.
probe=$("$BUILD/bin/gpu_probe_test" --gtest_filter='*ThisMachine*' 2>/dev/null | sed -n 's/^probe: //p')
row "probe" "info" "${probe:-gpu_probe_test printed nothing}"
if [ "$GPU_OK" != 1 ] && [[ "$probe" =~ ^CUDA:\ [0-9]+\ device ]]; then
  GPU_OK=1
  row "GPU" "ok" "found by the probe (no nvidia-smi)"
fi
say "ctest -L gpu"
export SHARDSCOPE_EXPECT_GPU=$GPU_OK
ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 120 -j 1 >"$BUILD/gpu-check-ctest.log" 2>&1
CTEST_RC=$?
cp -f "$BUILD/gpu-check-ctest.log" "$REPORTS/"
grep -E "tests passed|tests failed|\*\*\*Failed|\*\*\*Skipped|\*\*\*Timeout|Not Run" "$BUILD/gpu-check-ctest.log" | head -40
summary=$(grep -E "tests passed" "$BUILD/gpu-check-ctest.log" | tail -1)
skipped=$(grep -c "\*\*\*Skipped" "$BUILD/gpu-check-ctest.log")
if [ -z "$summary" ]; then
  row "ctest -L gpu" "FAILED" "no tests ran (see $BUILD/gpu-check-ctest.log)"
  FAILED=1
elif [ $CTEST_RC -ne 0 ]; then
  row "ctest -L gpu" "FAILED" "$summary (see $BUILD/gpu-check-ctest.log)"
  FAILED=1
elif [ "$GPU_OK" = 1 ]; then
  # Only the multi-GPU tests may skip on a one-GPU machine.
  row "ctest -L gpu" "ok" "$summary$([ "$skipped" -gt 0 ] && echo "; $skipped skipped (need 2+ GPUs)")"
else
  row "ctest -L gpu" "dry run" "$summary; $skipped skipped (no GPU)"
fi

# ---- 5. the strategies on one shared device --------------------------------------------------
if [ "$GPU_OK" = 1 ]; then
  BACKEND=cuda
  MODEL=${GPU_CHECK_MODEL:-gpt100m}
elif [ $DRY_RUN = 1 ]; then
  BACKEND=cpu
  MODEL=${GPU_CHECK_MODEL:-tiny}
else
  row "strategies" "not run" "no GPU; scripts/gpu-check.sh --dry-run runs them on the CPU"
  finish 1
fi
WORKER="$BUILD/bin/shardscope-worker"
say "shardscope-worker --backend $BACKEND --shared-device --ranks $RANKS --model $MODEL ($STEPS steps, $WARMUP warm-up)"
PARAMS=""
IFS=, read -r -a STRATEGY_LIST <<<"$STRATEGIES"
for s in "${STRATEGY_LIST[@]}"; do
  t0=$(date +%s)
  timeout "$WORKER_TIMEOUT" "$WORKER" --backend "$BACKEND" --shared-device --ranks "$RANKS" --model "$MODEL" \
    --strategy "$s" --steps "$STEPS" --precision bf16 --json "$REPORTS/worker-$s.json" --no-events \
    >"$REPORTS/worker-$s.log" 2>&1
  rc=$?
  took=$(( $(date +%s) - t0 ))
  if [ $rc -eq 0 ] && [ -f "$REPORTS/worker-$s.json" ]; then
    row "worker $s" "ok" "${took}s"
    echo "$s: ok (${took}s)"
    [ -z "$PARAMS" ] && PARAMS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["param_count"])' "$REPORTS/worker-$s.json" 2>/dev/null)
  else
    [ $rc -eq 124 ] && echo "timed out after ${WORKER_TIMEOUT}s (GPU_CHECK_WORKER_TIMEOUT)" >>"$REPORTS/worker-$s.log"
    rm -f "$REPORTS/worker-$s.json" # a failed run leaves no report to be read as a result
    why=$(grep -v '^\s*$' "$REPORTS/worker-$s.log" | tail -1)
    row "worker $s" "FAILED" "exit $rc: $why"
    echo "$s: FAILED (exit $rc after ${took}s): $why"
    FAILED=1
  fi
done

# ZeRO-Offload on the same device: master, m, v and the param shards in pinned host memory, the
# CPU AdamW between reduce-scatter and all-gather; the digest must equal the device run's.
# ZeRO-Infinity (nvme): the same states in one file per rank under $REPORTS/nvme, read through
# pinned staging ahead of each all-gather and the optimizer, written back behind them.
mkdir -p "$REPORTS/nvme"
for o in device host nvme; do
  flags=(); [ $o = host ] && flags=(--offload-optimizer host --offload-params host)
  [ $o = nvme ] && flags=(--offload-optimizer nvme --offload-params nvme --nvme-dir "$REPORTS/nvme")
  timeout "$WORKER_TIMEOUT" "$WORKER" --backend "$BACKEND" --shared-device --ranks "$RANKS" --model "$MODEL" \
    --strategy zero3 --steps "$STEPS" --deterministic --json "$REPORTS/offload-$o.json" --no-events "${flags[@]}" \
    >"$REPORTS/offload-$o.log" 2>&1 || rm -f "$REPORTS/offload-$o.json"
done
if python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a["param_digest"]!=b["param_digest"] or not b["comparison"]["model_states_equal"])' \
     "$REPORTS/offload-device.json" "$REPORTS/offload-host.json" 2>/dev/null; then
  row "zero3 offload host" "ok" "digest equals the device run; tiers equal theory"
else
  row "zero3 offload host" "FAILED" "$(grep -v '^\s*$' "$REPORTS/offload-host.log" 2>/dev/null | tail -1)"
  FAILED=1
fi
if python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(a["param_digest"]!=b["param_digest"] or not b["comparison"]["model_states_equal"])' \
     "$REPORTS/offload-device.json" "$REPORTS/offload-nvme.json" 2>/dev/null; then
  row "zero3 offload nvme" "ok" "digest equals the device run; tiers equal theory"
elif grep -q "liburing" "$REPORTS/offload-nvme.log" 2>/dev/null; then
  row "zero3 offload nvme" "not run" "this build has no liburing (apt-get install liburing-dev)"
else
  row "zero3 offload nvme" "FAILED" "$(grep -v '^\s*$' "$REPORTS/offload-nvme.log" 2>/dev/null | tail -1)"
  FAILED=1
fi
rm -rf "$REPORTS/nvme"

# The ZeRO paper's per-rank model states for the same Ψ and N (the report has the exact replay).
if [ -n "$PARAMS" ]; then
  "$BUILD/bin/shardscope-cli" estimate --params "$PARAMS" --ranks "$RANKS" --strategy all --json \
    >"$REPORTS/estimate.json" 2>"$REPORTS/estimate.log" || rm -f "$REPORTS/estimate.json"
fi

# ---- 6. PyTorch eager on the same GPT and global batch ------------------------------------------
MB=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]]["micro_batch"])' \
     "$ROOT/resources/presets/models.json" "$MODEL" 2>/dev/null || echo 1)
say "PyTorch eager bf16 ($MODEL, micro-batch $RANKS x $MB)"
timeout 180 python3 "$ROOT/scripts/torch_gpt_bench.py" --preset "$MODEL" --dtype bf16 \
  --micro-batch $(( RANKS * MB )) --steps 20 --warmup 5 --json >"$REPORTS/torch.json" 2>"$REPORTS/torch.log"
rc=$?
if [ $rc -eq 0 ]; then
  row "torch eager bf16" "ok" "$(python3 -c "import json,sys; r=json.loads(open(sys.argv[1]).read().splitlines()[-1]); print('%.2f ms median' % r['step_ms_median'])" "$REPORTS/torch.json" 2>/dev/null)"
else
  # torch_gpt_bench prints its reason ("not run: …") on stdout: keep it for the report.
  cat "$REPORTS/torch.json" >>"$REPORTS/torch.log"
  rm -f "$REPORTS/torch.json"
  [ $rc -eq 124 ] && echo "not run: timed out after 180 s" >>"$REPORTS/torch.log"
  row "torch eager bf16" "not run" "$(grep -v '^\s*$' "$REPORTS/torch.log" | tail -1)"
fi

# ---- 7. the comparison -------------------------------------------------------------------------
say "results"
python3 "$ROOT/scripts/gpu_check_report.py" "$REPORTS" --strategies "$STRATEGIES" --warmup "$WARMUP"
REPORT_RC=$?
if [ $REPORT_RC -eq 0 ]; then row "report checks" "ok" "$REPORTS/summary.txt"; else row "report checks" "FAILED" "see the PROBLEM lines above"; FAILED=1; fi
[ "$GPU_OK" != 1 ] && echo "no GPU on this machine: this was a dry run (CPU ranks, tests skipped)"
finish $FAILED
}

if [ -n "${OUT:-}" ]; then
  # Everything printed also lands in $OUT (the device machine's results folder).
  mkdir -p "$OUT"
  main 2>&1 | tee "$OUT/gpu-check.log"
  exit "${PIPESTATUS[0]}"
fi
main
