#!/usr/bin/env bash
# Records the bundled recordings the lessons open (resources/recordings/*.sstrace) with the real
# worker: the tiny model on 4 ranks, 2 steps, bf16, so each file stays well under
# 200 KB. Re-run after a protocol change (backend/protocol/protocol.h: kProtocolVersion) and commit
# the files.  Usage: scripts/record-lesson-recordings.sh [BUILD_DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$root/build}/bin/shardscope-cli
out=$root/resources/recordings
mkdir -p "$out"
common=(--model tiny --ranks 4 --steps 2 --precision bf16)
for s in ddp zero1 zero2 zero3 fsdp; do
  "$cli" run "${common[@]}" --strategy "$s" --trace "$out/${s}_tiny_4r.sstrace"
done
# What activation checkpointing and prefetch change (lesson "peak"): ZeRO-3 without prefetch, and
# ZeRO-3 with checkpointing.
"$cli" run "${common[@]}" --strategy zero3 --prefetch 0 --trace "$out/zero3_noprefetch_tiny_4r.sstrace"
"$cli" run "${common[@]}" --strategy zero3 --checkpointing --trace "$out/zero3_ckpt_tiny_4r.sstrace"
# The capacity lesson ("offload"): 2 ranks at a 1.6 MB device budget, where ZeRO-3 runs out of
# device memory and the same run with the optimizer states on the host fits.
capacity=(--model tiny --ranks 2 --steps 2 --precision bf16 --strategy zero3 --capacity 1.6MB)
if "$cli" run "${capacity[@]}" --trace "$out/zero3_oom_tiny_2r.sstrace"; then
  echo "expected ZeRO-3 to run out of device memory at 1.6 MB" >&2
  exit 1
fi
"$cli" run "${capacity[@]}" --offload-optimizer host --trace "$out/zero3_offload_tiny_2r.sstrace"
# Offload transfers (lesson "offload-transfers"): the optimizer on NVMe, params on the host. Its
# step 3 points at a read rank 0 waited on (block1 in step 2): check the lesson after re-recording.
nvme=$(mktemp -d)
"$cli" run --model tiny --ranks 2 --steps 2 --precision bf16 --strategy zero3 \
  --offload-optimizer nvme --offload-params host --nvme-dir "$nvme" \
  --trace "$out/zero3_nvme_tiny_2r.sstrace"
rm -rf "$nvme"
# TP beside ZeRO (lesson "tp-and-zero"): a 2 × 2 mesh of the TP-ready preset.
"$cli" run --model tiny_tp --ranks 4 --tp 2 --steps 2 --precision bf16 --strategy zero3 \
  --trace "$out/zero3_tp2_tiny_4r.sstrace"
# ZeRO vs TP vs PP (lesson "zero-tp-pp"): the same model on 8 ranks as D = 8, T = 2 × D = 4,
# P = 2 × D = 4 and P = 2 × T = 2 × D = 2, each data-parallel rank 2 micro-batches per step.
mesh=(--model tiny_tp --ranks 8 --steps 2 --precision bf16 --strategy zero3 --grad-accum 2)
"$cli" run "${mesh[@]}" --trace "$out/zero3_d8_tiny_tp_8r.sstrace"
"$cli" run "${mesh[@]}" --tp 2 --trace "$out/zero3_t2d4_tiny_tp_8r.sstrace"
"$cli" run "${mesh[@]}" --pp 2 --trace "$out/zero3_p2d4_tiny_tp_8r.sstrace"
"$cli" run "${mesh[@]}" --pp 2 --tp 2 --trace "$out/zero3_p2t2d2_tiny_tp_8r.sstrace"
# Resume at another N (lesson "resume"): ZeRO-3 saved by 3 ranks after step 3, resumed by 2 for 2
# steps (its steps are 4 and 5).
ck=$(mktemp -d)
trap 'rm -rf "$ck"' EXIT
"$cli" run --model tiny --ranks 3 --steps 3 --precision bf16 --strategy zero3 --no-events --save "$ck/ckpt"
"$cli" run --model tiny --ranks 2 --steps 2 --precision bf16 --strategy zero3 --resume "$ck/ckpt" \
  --trace "$out/zero3_resumed_3to2_tiny.sstrace"
ls -l "$out"
