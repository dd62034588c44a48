#!/usr/bin/env python3
"""ShardScope's pipeline (run --pp) against torch.distributed.pipelining on this CPU.

The same GPT (scripts/torch_gpt_bench.py's model, the preset's shape), split into P stages of
consecutive layers as ShardScope splits it (embedding on the first, final LayerNorm and head on
the last), M micro-batches per step, GPipe, 1F1B, Interleaved 1F1B (V = 2 chunks per rank, where
the layers allow P·V) and ZB-H1 (ours only: PyTorch's zero-bubble schedules need two or more
chunks per rank), fp32, AdamW with the global gradient norm clipped on both sides, one thread
per rank over gloo (torch) and MPI (ours), interleaved repeats. Prints the median step time of
each side and ours / torch, and each side's measured bubble per stage — the stage's idle time
between its first and last compute of a step over the step (torch: its PipelineStage's
forward/backward chunks timed on the rank) — beside the schedule's formula, with the machine's
CPU and load. A benchmark, not a test: `make bench-torch` runs it, CI does not.

usage: scripts/bench-torch.sh [build] is the usual entry; directly:
  python3 torch_pipeline_bench.py --build build [--preset small] [--stages 2,4] [--micro-batches 8]
      [--repeats 3] [--steps 6] [--warmup 2] [--markdown]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt_bench import build_model, cpu_description, free_port, load_preset  # noqa: E402

SCHEDULES = {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B", "interleaved": "ScheduleInterleaved1F1B",
             "zb1": None}
VIRTUAL = 2  # interleaved: chunks per rank


def chunks_of(schedule):
    return VIRTUAL if schedule == "interleaved" else 1


def theory_bubble(schedule, stages, micro):
    """theory/pipeline.h at equal op times."""
    v = chunks_of(schedule)
    if schedule == "zb1":
        lost = (stages - 1) * 2 - min(micro - 1, stages - 1)
        return lost / (micro * 3 + lost)
    return (stages - 1) / (v * micro + stages - 1)


def stage_layers(layers, stages, s):
    """plan::stageFirstLayers: contiguous, earlier stages one more when P does not divide L."""
    base, extra = divmod(layers, stages)
    first = s * base + min(s, extra)
    return first, first + base + (1 if s < extra else 0)


def rank_main(args, p):
    rank, world, port, out = int(args.rank_worker[0]), int(args.rank_worker[1]), args.rank_worker[2], \
        args.rank_worker[3]
    import time
    import torch
    import torch.distributed as dist
    from torch.distributed import pipelining
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    full = build_model(torch, p, "explicit")
    v = chunks_of(args.schedule)
    virtual = world * v  # chunk c of rank r is virtual stage c·P + r (Megatron-LM's layout)
    first, last = rank == 0, rank == world - 1
    nn = torch.nn

    class Stage(nn.Module):
        def __init__(self, k):
            super().__init__()
            lo, hi = stage_layers(p["layers"], virtual, k)
            self.first, self.last = k == 0, k == virtual - 1
            if self.first:
                self.wte, self.wpe = full.wte, full.wpe
            self.blocks = nn.ModuleList(full.blocks[lo:hi])
            if self.last:
                self.ln_f, self.lm_head = full.ln_f, full.lm_head

        def forward(self, x):
            if self.first:
                pos = torch.arange(x.shape[1], device=x.device)
                x = self.wte(x) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.lm_head(self.ln_f(x)) if self.last else x

    modules = [Stage(c * world + rank) for c in range(v)]
    vocab = p["vocab"]
    loss_fn = lambda logits, targets: torch.nn.functional.cross_entropy(  # noqa: E731
        logits.float().reshape(-1, vocab), targets.reshape(-1))
    stages = [pipelining.PipelineStage(m, c * world + rank, virtual, torch.device("cpu"))
              for c, m in enumerate(modules)]
    # Each compute chunk timed on this rank (the schedule's receives wait outside them).
    spans = []

    def timed(method):
        def run(*a, **k):
            t = time.perf_counter()
            try:
                return method(*a, **k)
            finally:
                spans.append((t, time.perf_counter()))
        return run

    for st in stages:
        for name in ("forward_one_chunk", "backward_one_chunk", "backward_weight_one_chunk"):
            if hasattr(st, name):
                setattr(st, name, timed(getattr(st, name)))
    kind = getattr(pipelining, SCHEDULES[args.schedule])
    schedule = kind(stages if v > 1 else stages[0], args.micro_batches, loss_fn=loss_fn)
    params = [t for m in modules for t in m.parameters()]
    decay = [t for t in params if t.dim() == 2]
    rest = [t for t in params if t.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=p.get("learning_rate", 1e-3), betas=(0.9, 0.95), eps=1e-8)
    mb, seq = p["micro_batch"], p["seq_len"]
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (args.micro_batches * mb, seq), generator=g)
    targets = torch.randint(0, vocab, (args.micro_batches * mb, seq), generator=g)
    times, idle = [], []
    for i in range(args.warmup + args.steps):
        spans.clear()
        t0 = time.perf_counter()
        if first:
            schedule.step(ids)
        elif last:
            schedule.step(target=targets)
        else:
            schedule.step()
        # The global norm over every stage's gradients, clipped alike (as ShardScope does).
        sq = torch.zeros(1)
        for t in params:
            if t.grad is not None:
                sq += t.grad.pow(2).sum()
        dist.all_reduce(sq)
        scale = min(1.0, 1.0 / (float(sq.sqrt()) + 1e-6))
        for t in params:
            if t.grad is not None:
                t.grad.mul_(scale)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= args.warmup:
            step = time.perf_counter() - t0
            times.append(step * 1e3)
            busy = sum(e - b for b, e in spans)  # one thread: the spans never overlap
            window = max(e for _, e in spans) - min(b for b, _ in spans)
            idle.append(max(0.0, window - busy) / step)
    with open(f"{out}.{rank}", "w") as f:
        json.dump({"step_ms": times, "idle_share": idle}, f)
    dist.destroy_process_group()
    return 0


def run_torch(args, stages, schedule, tmp):
    out = os.path.join(tmp, "torch.json")
    port = free_port()
    cmd = [sys.executable, "-W", "ignore", os.path.abspath(__file__), "--preset", args.preset,
           "--micro-batches", str(args.micro_batches), "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--schedule", schedule, "--rank-worker"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs = [subprocess.Popen(cmd + [str(r), str(stages), port, out], env=env) for r in range(stages)]
    codes = [q.wait() for q in procs]
    if any(codes):
        raise SystemExit(f"torch {schedule} on {stages} stages failed (exit codes {codes})")
    per_rank = []
    for r in range(stages):
        with open(f"{out}.{r}") as f:
            per_rank.append(json.load(f))
    return (statistics.median(per_rank[0]["step_ms"]),
            [statistics.median(r["idle_share"]) for r in per_rank])


def run_ours(args, stages, schedule, tmp):
    out = os.path.join(tmp, "ours.json")
    cli = os.path.join(args.build, "bin", "shardscope-cli")
    cmd = [cli, "run", "--model", args.preset, "--ranks", str(stages), "--pp", str(stages), "--pp-schedule",
           schedule, "--grad-accum", str(args.micro_batches), "--strategy", "ddp", "--precision", "fp32",
           "--steps", str(args.warmup + args.steps), "--no-events", "--json", out]
    if chunks_of(schedule) > 1:
        cmd += ["--virtual-stages", str(chunks_of(schedule))]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"ours {schedule} on {stages} stages failed: {proc.stderr.strip()}")
    with open(out) as f:
        rep = json.load(f)
    bubble = [n for n in rep["notes"] if n.startswith("bubble:")]
    # The report's per-stage measure, the same as torch's above: "stage 0 12.3 ms (4.5 % of the step".
    shares = [float(m) / 100 for m in re.findall(r"stage \d+ [\d.]+ ms \(([\d.]+) % of the step",
                                                  bubble[0] if bubble else "")]
    return statistics.median(rep["step_ms"][args.warmup:]), shares


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--stages", default="2,4")
    ap.add_argument("--micro-batches", type=int, default=8)
    ap.add_argument("--schedules", default="gpipe,1f1b,interleaved,zb1")
    ap.add_argument("--schedule", default="1f1b")  # a rank worker's
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--rank-worker", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    p = load_preset(args.preset)
    if args.rank_worker:
        return rank_main(args, p)
    probe = subprocess.run([sys.executable, "-W", "ignore", "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        print("not run: PyTorch is not importable; scripts/bench-torch.sh sets up its venv")
        return 3
    stages = [int(s) for s in args.stages.split(",")]
    schedules = args.schedules.split(",")
    for s in schedules:
        if s not in SCHEDULES:
            raise SystemExit(f"--schedules: unknown schedule {s!r} (choices: {', '.join(SCHEDULES)})")
    load = os.getloadavg()[0]
    # Interleaved needs P·V ≤ L (every chunk a layer) and M a multiple of P.
    runs = [(n, s) for n in stages for s in schedules
            if n * chunks_of(s) <= p["layers"] and (s != "interleaved" or args.micro_batches % n == 0)]
    ours, theirs, ours_idle, torch_idle = {}, {}, {}, {}
    with tempfile.TemporaryDirectory(prefix="shardscope-pipe-") as tmp:
        for rep in range(args.repeats):
            for n, s in runs:
                a, a_idle = run_ours(args, n, s, tmp)
                ours.setdefault((n, s), []).append(a)
                ours_idle.setdefault((n, s), []).append(a_idle)
                line = f"repeat {rep + 1}: P={n} {s}: ours {a:.1f} ms"
                if SCHEDULES[s]:
                    b, b_idle = run_torch(args, n, s, tmp)
                    theirs.setdefault((n, s), []).append(b)
                    torch_idle.setdefault((n, s), []).append(b_idle)
                    line += f", torch {b:.1f} ms"
                print(line, flush=True)
    print(f"\n{args.preset}, P stages = P ranks (D = 1), {args.micro_batches} micro-batches of "
          f"{p['micro_batch']} x {p['seq_len']} tokens per step, fp32, one thread per rank "
          f"(torch {probe.stdout.strip()} on gloo, ours on MPI), {args.repeats} interleaved repeats, "
          f"load average {load:.2f} at the start")
    print(cpu_description())
    def shares(runs_of):  # per stage, the median over repeats, as "a / b / c %"
        if not runs_of or not all(runs_of):
            return "—"
        per_stage = [statistics.median(r[i] for r in runs_of) for i in range(len(runs_of[0]))]
        return " / ".join(f"{100 * x:.0f}" for x in per_stage) + " %"

    rows = []
    for n, s in runs:
        o = statistics.median(ours[(n, s)])
        t = statistics.median(theirs[(n, s)]) if (n, s) in theirs else None
        name = s + (f" (V = {VIRTUAL})" if chunks_of(s) > 1 else "")
        theory = 100 * theory_bubble(s, n, args.micro_batches)
        row = (n, name, o, t, o / t if t else None, theory, shares(ours_idle[(n, s)]),
               shares(torch_idle.get((n, s))))
        rows.append(row)
        print(f"P={n} {name:16} ours {o:8.1f} ms  torch " + (f"{t:8.1f} ms  ours/torch {o / t:5.2f}" if t else
                                                               "       — (no such schedule)")
              + f"  bubble theory {theory:.1f} %, measured per stage ours {row[6]}, torch {row[7]}")
    if args.markdown:
        print("\n| P | schedule | ours median ms | torch median ms | ours ÷ torch | bubble theory |"
              " ours measured (per stage) | torch measured (per stage) |")
        print("|---|---|---|---|---|---|---|---|")
        for n, name, o, t, r, theory, a, b in rows:
            print(f"| {n} | {name} | {o:.1f} | " + (f"{t:.1f} | {r:.2f}" if t else "— | —")
                  + f" | {theory:.1f} % | {a} | {b} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
