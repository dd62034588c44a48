#!/usr/bin/env python3
"""Summarise scripts/gpu-check.sh's runs: ShardScope's worker reports next to the theory and PyTorch.

Reads, from one folder (what gpu-check.sh writes):
  worker-<strategy>.json   shardscope-worker --json reports (one per strategy)
  worker-<strategy>.log    the worker's stderr/stdout (its one-line error when it failed)
  estimate.json            shardscope-cli estimate --strategy all --json (the ZeRO paper's accounting)
  torch.json / torch.log   scripts/torch_gpt_bench.py --json (or why it did not run)

Prints per strategy: measured vs theory per ledger category (peak and model states), collective
bytes per step, the device's view (pool reserved vs the ledger's peak; the goal is
reserved + declared <= 1.05 x (ledger + declared), the declared workspaces being CudaOps's
cuBLAS workspace, bf16 cast buffer and reduction scratch, outside the pool),
median step time after warm-up, the exposed-communication fraction; then PyTorch eager's step
time on the same model and global batch, and a short table. Standard library only.

Exit code: 0 when every strategy ran and met its checks, 1 otherwise.
"""
import argparse
import json
import os
import statistics
import sys

MIB = 1024.0 * 1024.0
RESERVED_GOAL = 1.05
CATEGORIES = ["param_shard", "param_full", "grad_full", "grad_shard", "master_fp32", "adam_m", "adam_v",
              "activation", "comm_buffer", "workspace"]
STATE_CATEGORIES = CATEGORIES[:7]


class Missing(Exception):
    pass


def get(obj, path, what):
    """obj[path…] or raise Missing naming the key and what it was for."""
    cur = obj
    for key in path.split("."):
        if isinstance(cur, dict) and key in cur:
            cur = cur[key]
        else:
            raise Missing(f"report has no '{path}' ({what})")
    return cur


def mib(b):
    return f"{b / MIB:,.1f} MiB"


def pct(x):
    return f"{100.0 * x:+.2f}%"


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def delta_text(measured, theory):
    if theory == 0:
        return "=" if measured == 0 else f"+{measured:,} B"
    if measured == theory:
        return "="
    return f"{measured - theory:+,} B ({pct((measured - theory) / theory)})"


class StrategyResult:
    def __init__(self, name):
        self.name = name
        self.ran = False
        self.error = ""
        self.problems = []  # failed checks / missing keys: the row's status
        self.step_ms = None
        self.tokens_per_s = None
        self.peak_measured = None
        self.peak_theory = None
        self.reserved_ratio = None
        self.outside = None
        self.exposed = None
        self.states_equal = None
        self.losses = []


def last_line(path):
    try:
        with open(path, errors="replace") as f:
            lines = [ln.strip() for ln in f if ln.strip()]
        return lines[-1] if lines else ""
    except OSError:
        return ""


def analyse(name, path, log, warmup, estimate, out):
    res = StrategyResult(name)
    if not os.path.exists(path):
        res.error = last_line(log) or "no report written"
        out(f"\n== {name}: NOT RUN — {res.error}")
        return res
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        res.error = f"unreadable report {path}: {e}"
        out(f"\n== {name}: FAILED — {res.error}")
        return res
    res.ran = True

    def need(p, what, default=None):
        try:
            return get(r, p, what)
        except Missing as e:
            res.problems.append(str(e))
            return default

    ranks = need("ranks", "per-rank figures", [])
    cfg = r.get("config", {})
    world = r.get("world_size", len(ranks))
    steps_ms = need("step_ms", "per-step wall time", [])
    device_name = next((rk["device"].get("name", "?") for rk in ranks if "device" in rk), None)
    out(f"\n== {name}: {r.get('model', '?')} ({r.get('param_count', 0):,} params), {world} ranks "
        f"on {device_name or cfg.get('backend', '?') + ' (no device object in the report)'}, "
        f"{r.get('precision', '?')}, {len(steps_ms)} steps")

    # --- memory: measured (max over ranks) vs the theory's replay of this implementation ---
    theory_peak = need("theory.peak_by_category", "predicted peak per category", {})
    theory_states = need("theory.model_state_bytes", "predicted model states per category", {})
    if ranks:
        out(f"  {'category':<13} {'measured peak':>16} {'theory peak':>16}  {'delta':<26}"
            f"{'model states':>16} {'theory':>16}")
        for cat in CATEGORIES:
            m = max(rk.get("peak_bytes", {}).get(cat, 0) for rk in ranks)
            t = theory_peak.get(cat, 0)
            ms = max(rk.get("model_state_bytes", {}).get(cat, 0) for rk in ranks) if cat in STATE_CATEGORIES else None
            ts = theory_states.get(cat, 0) if cat in STATE_CATEGORIES else None
            if m == 0 and t == 0 and not ms and not ts:
                continue
            states = f"{mib(ms):>16} {mib(ts):>16}" if ms is not None else ""
            out(f"  {cat:<13} {mib(m):>16} {mib(t):>16}  {delta_text(m, t):<26}{states}")
        res.peak_measured = max(rk.get("peak_bytes", {}).get("total", 0) for rk in ranks)
        res.peak_theory = need("theory.predicted_peak_bytes", "predicted peak total")
        if res.peak_theory is not None:
            out(f"  {'total':<13} {mib(res.peak_measured):>16} {mib(res.peak_theory):>16}  "
                f"{delta_text(res.peak_measured, res.peak_theory)}")
        if "peak_phase" in r.get("theory", {}):
            out(f"  predicted peak at: {r['theory']['peak_phase']}")
    res.states_equal = need("comparison.model_states_equal", "model states vs theory")
    if res.states_equal is False:
        res.problems.append("model states differ from the theory")
    for note in r.get("notes", []):
        out(f"  note: {note}")

    if estimate is not None:
        row = next((row for row in estimate.get("rows", []) if row.get("strategy") in (name, f"{name}_full_shard")), None)
        if row and ranks:
            paper = row.get("per_rank_bytes", {}).get("total")
            measured_states = max(sum(rk.get("model_state_bytes", {}).get(c, 0) for c in STATE_CATEGORIES) for rk in ranks)
            if paper:
                out(f"  ZeRO paper's accounting (shardscope-cli estimate): model states {mib(paper)} per rank; "
                    f"measured {mib(measured_states)} ({delta_text(measured_states, paper)}: padding, "
                    f"gathered units and buckets are in the theory's replay, not the paper's formula)")

    # --- communication ---
    comm = need("comm_bytes_per_step", "measured collective bytes per step", {})
    comm_theory = need("theory.comm_bytes_per_step", "predicted collective bytes per step", {})
    kinds = sorted(set(comm) | set(comm_theory))
    if kinds:
        out("  collectives per rank per step (sent bytes): " + "; ".join(
            f"{k} {mib(comm.get(k, 0))} vs theory {mib(comm_theory.get(k, 0))}" for k in kinds))

    # --- the device's view ---
    ratios, outside = [], []
    for rk in ranks:
        d = rk.get("device")
        if d is None:
            continue
        try:
            ledger = get(d, "ledger_peak_bytes", "ledger peak (device tier)")
            reserved = get(d, "pool_reserved_high_bytes", "pool reserved high-water")
            used = get(d, "pool_used_high_bytes", "pool used high-water")
            out_b = get(d, "outside_ledger_bytes", "device memory outside every pool")
            declared = get(d, "declared_workspace_bytes", "declared workspaces (cuBLAS, bf16 casts)")
        except Missing as e:
            res.problems.append(f"rank {rk.get('rank')}: device {e}")
            continue
        # The goal: what the rank holds (its pool + its declared workspaces, which live outside
        # the pool) against what it accounts for (ledger + the same declared workspaces).
        ratio = (reserved + declared) / (ledger + declared) if ledger + declared else float("inf")
        ratios.append(ratio)
        outside.append(out_b)
        flag = "ok" if ratio <= RESERVED_GOAL else f"ABOVE the {RESERVED_GOAL:.2f} goal"
        pool_only = reserved / ledger if ledger else float("inf")
        out(f"  device rank {rk.get('rank')}: ledger peak {mib(ledger)}, pool used high {mib(used)} "
            f"(rounding {mib(used - ledger)}), reserved high {mib(reserved)}, declared workspaces "
            f"{mib(declared)} -> (reserved+declared)/(ledger+declared) {ratio:.3f} ({flag}); "
            f"pool alone {pool_only:.3f}")
    if ratios:
        res.reserved_ratio = max(ratios)
        res.outside = max(outside)
        out(f"  outside the ledger (CUDA context, cuBLAS workspaces, other processes; whole GPU): "
            f"{mib(res.outside)}")
        if res.reserved_ratio > RESERVED_GOAL:
            res.problems.append(f"(reserved + declared) / (ledger + declared) {res.reserved_ratio:.3f} > {RESERVED_GOAL}")
    elif cfg.get("backend") == "cuda":
        res.problems.append("CUDA run without a per-rank 'device' object (CudaDevice::measure() figures)")
    else:
        out("  device: none in the report (a CPU run has no pool figures)")

    # --- time and overlap ---
    timed = steps_ms[warmup:] if len(steps_ms) > warmup else steps_ms
    if timed:
        res.step_ms = statistics.median(timed)
        tokens = world * r.get("micro_batch", 0) * r.get("grad_accum", 1) * cfg.get("shape", {}).get("seq_len", 0)
        res.tokens_per_s = tokens / (res.step_ms / 1000.0) if tokens and res.step_ms > 0 else None
        skipped = f"after {min(warmup, len(steps_ms) - len(timed))} warm-up" if len(timed) < len(steps_ms) else "no warm-up skipped"
        out(f"  step time: median {res.step_ms:.2f} ms over {len(timed)} steps ({skipped}); all: "
            + ", ".join(f"{x:.1f}" for x in steps_ms)
            + (f"; {res.tokens_per_s:,.0f} tokens/s ({tokens} tokens per step)" if res.tokens_per_s else ""))
    res.losses = need("losses", "loss per step", [])
    if res.losses:
        out("  loss per step: " + ", ".join(f"{x:.5f}" for x in res.losses))
    res.exposed = need("exposed_comm_fraction", "exposed-communication fraction")
    per_rank = [rk.get("exposed_comm", {}).get("fraction_median") for rk in ranks]
    if res.exposed is not None:
        out(f"  exposed communication: {res.exposed:.3f} of the step (largest per-rank median; per rank: "
            + ", ".join("?" if f is None else f"{f:.3f}" for f in per_rank) + ")")

    for p in res.problems:
        out(f"  PROBLEM: {p}")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", help="where gpu-check.sh wrote worker-*.json, estimate.json, torch.json")
    ap.add_argument("--strategies", default="ddp,zero1,zero2,zero3,fsdp")
    ap.add_argument("--warmup", type=int, default=2, help="steps left out of the median")
    args = ap.parse_args()
    lines = []

    def out(s=""):
        print(s)
        lines.append(s)

    estimate = None
    try:
        with open(os.path.join(args.folder, "estimate.json")) as f:
            estimate = json.load(f)
    except (OSError, ValueError):
        out("(no estimate.json: the ZeRO paper's figures are left out)")

    results = [analyse(s, os.path.join(args.folder, f"worker-{s}.json"), os.path.join(args.folder, f"worker-{s}.log"),
                       args.warmup, estimate, out) for s in args.strategies.split(",") if s]

    # Every strategy computes the same math (docs/design.md): the losses agree with DDP's to rounding.
    ref = next((res for res in results if res.name == "ddp" and res.losses), None)
    if ref:
        out("\n== losses vs ddp (same math; bitwise only with --deterministic)")
        for res in results:
            if res is ref or not res.losses:
                continue
            n = min(len(res.losses), len(ref.losses))
            worst = max(abs(a - b) for a, b in zip(res.losses[:n], ref.losses[:n]))
            out(f"  {res.name:<8} max |loss - ddp's| over {n} steps: {worst:.3g}")

    torch = None
    torch_reason = ""
    try:
        with open(os.path.join(args.folder, "torch.json")) as f:
            torch = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        torch_reason = last_line(os.path.join(args.folder, "torch.log")) or "no output"
        if torch_reason.startswith("not run: "):
            torch_reason = torch_reason[len("not run: "):]
    out("\n== PyTorch eager, same GPT")
    if torch:
        tps = torch["tokens_per_step"] / (torch["step_ms_median"] / 1000.0)
        out(f"  {torch['framework']} {torch['dtype']} on {torch['device']}: {torch['preset']} "
            f"({torch['param_count']:,} params), micro-batch {torch.get('micro_batch', '?')} "
            f"({torch['tokens_per_step']} tokens/step): median {torch['step_ms_median']:.2f} ms, "
            f"p90 {torch['step_ms_p90']:.2f} ms, {tps:,.0f} tokens/s, peak allocated "
            f"{mib(torch['peak_allocated_bytes'])}, reserved {mib(torch.get('peak_reserved_bytes', 0))}")
    else:
        out(f"  not run: {torch_reason}")

    out("\n== summary (step ms: median after warm-up; x torch: step time / PyTorch's on the same global batch)")
    torch_ms = torch["step_ms_median"] if torch else None
    head = (f"{'run':<16} {'step ms':>9} {'x torch':>8} {'tokens/s':>11} {'peak meas/theory':>17} "
            f"{'reserved/ledger+':>16} {'outside':>11} {'exposed':>8}  status")
    out(head)
    out("-" * len(head))
    failed = False
    for res in results:
        if not res.ran:
            failed = True
            out(f"{res.name:<16} {'-':>9} {'-':>8} {'-':>11} {'-':>17} {'-':>16} {'-':>11} {'-':>8}  NOT RUN: {res.error}")
            continue
        peak = (f"{res.peak_measured / res.peak_theory:.4f}" if res.peak_measured is not None and res.peak_theory
                else "-")
        status = "ok" if not res.problems else "CHECK: " + res.problems[0] + (
            f" (+{len(res.problems) - 1} more)" if len(res.problems) > 1 else "")
        failed = failed or bool(res.problems)
        vs_torch = res.step_ms / torch_ms if res.step_ms is not None and torch_ms else None
        out(f"{res.name:<16} {fmt(res.step_ms, '.2f'):>9} {fmt(vs_torch, '.2f'):>8} {fmt(res.tokens_per_s, ',.0f'):>11} {peak:>17} "
            f"{fmt(res.reserved_ratio, '.3f'):>16} {mib(res.outside) if res.outside is not None else '-':>11} "
            f"{fmt(res.exposed, '.3f'):>8}  {status}")
    if torch:
        tps = torch["tokens_per_step"] / (torch["step_ms_median"] / 1000.0)
        out(f"{'torch ' + torch['dtype']:<16} {torch['step_ms_median']:>9.2f} {1.0:>8.2f} {tps:>11,.0f} {'-':>17} "
            f"{'-':>16} {'-':>11} {'-':>8}  eager, 1 process, same global batch")
    else:
        out(f"{'torch':<16} {'-':>9} {'-':>8} {'-':>11} {'-':>17} {'-':>16} {'-':>11} {'-':>8}  not run: {torch_reason}")
    with open(os.path.join(args.folder, "summary.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
