#!/usr/bin/env python3
"""ShardScope's pipeline (run --pp) against torch.distributed.pipelining on this CPU.

The same GPT (scripts/torch_gpt_bench.py's model, the preset's shape), split into P stages of
consecutive layers as ShardScope splits it (embedding on the first, final LayerNorm and head on
the last), M micro-batches per step, GPipe and 1F1B, fp32, AdamW with the global gradient norm
clipped on both sides, one thread per rank over gloo (torch) and MPI (ours), interleaved
repeats. Prints the median step time of each side and ours / torch, with the machine's CPU and
load. A benchmark, not a test: `make bench-torch` runs it, CI does not.

usage: scripts/bench-torch.sh [build] is the usual entry; directly:
  python3 torch_pipeline_bench.py --build build [--preset small] [--stages 2,4] [--micro-batches 8]
      [--repeats 3] [--steps 6] [--warmup 2] [--markdown]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt_bench import build_model, cpu_description, free_port, load_preset  # noqa: E402

SCHEDULES = {"gpipe": "ScheduleGPipe", "1f1b": "Schedule1F1B"}


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
    lo, hi = stage_layers(p["layers"], world, rank)
    first, last = rank == 0, rank == world - 1
    nn = torch.nn

    class Stage(nn.Module):
        def __init__(self):
            super().__init__()
            if first:
                self.wte, self.wpe = full.wte, full.wpe
            self.blocks = nn.ModuleList(full.blocks[lo:hi])
            if last:
                self.ln_f, self.lm_head = full.ln_f, full.lm_head

        def forward(self, x):
            if first:
                pos = torch.arange(x.shape[1], device=x.device)
                x = self.wte(x) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            return self.lm_head(self.ln_f(x)) if last else x

    module = Stage()
    vocab = p["vocab"]
    loss_fn = lambda logits, targets: torch.nn.functional.cross_entropy(  # noqa: E731
        logits.float().reshape(-1, vocab), targets.reshape(-1))
    stage = pipelining.PipelineStage(module, rank, world, torch.device("cpu"))
    schedule = getattr(pipelining, SCHEDULES[args.schedule])(stage, args.micro_batches, loss_fn=loss_fn)
    params = list(module.parameters())
    decay = [t for t in params if t.dim() == 2]
    rest = [t for t in params if t.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
                            lr=p.get("learning_rate", 1e-3), betas=(0.9, 0.95), eps=1e-8)
    mb, seq = p["micro_batch"], p["seq_len"]
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (args.micro_batches * mb, seq), generator=g)
    targets = torch.randint(0, vocab, (args.micro_batches * mb, seq), generator=g)
    times = []
    for i in range(args.warmup + args.steps):
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
            times.append((time.perf_counter() - t0) * 1e3)
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"step_ms": times}, f)
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
    with open(out) as f:
        return statistics.median(json.load(f)["step_ms"])


def run_ours(args, stages, schedule, tmp):
    out = os.path.join(tmp, "ours.json")
    cli = os.path.join(args.build, "bin", "shardscope-cli")
    cmd = [cli, "run", "--model", args.preset, "--ranks", str(stages), "--pp", str(stages), "--pp-schedule",
           schedule, "--grad-accum", str(args.micro_batches), "--strategy", "ddp", "--precision", "fp32",
           "--steps", str(args.warmup + args.steps), "--no-events", "--json", out]
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"ours {schedule} on {stages} stages failed: {proc.stderr.strip()}")
    with open(out) as f:
        rep = json.load(f)
    bubble = [n for n in rep["notes"] if n.startswith("bubble:")]
    return statistics.median(rep["step_ms"][args.warmup:]), (bubble[0] if bubble else "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--preset", default="small")
    ap.add_argument("--stages", default="2,4")
    ap.add_argument("--micro-batches", type=int, default=8)
    ap.add_argument("--schedules", default="gpipe,1f1b")
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
    ours, theirs, bubbles = {}, {}, {}
    with tempfile.TemporaryDirectory(prefix="shardscope-pipe-") as tmp:
        for rep in range(args.repeats):
            for n in stages:
                for s in schedules:
                    a, bubble = run_ours(args, n, s, tmp)
                    b = run_torch(args, n, s, tmp)
                    ours.setdefault((n, s), []).append(a)
                    theirs.setdefault((n, s), []).append(b)
                    bubbles[(n, s)] = bubble
                    print(f"repeat {rep + 1}: P={n} {s}: ours {a:.1f} ms, torch {b:.1f} ms", flush=True)
    print(f"\n{args.preset}, P stages = P ranks (D = 1), {args.micro_batches} micro-batches of "
          f"{p['micro_batch']} x {p['seq_len']} tokens per step, fp32, one thread per rank "
          f"(torch {probe.stdout.strip()} on gloo, ours on MPI), {args.repeats} interleaved repeats, "
          f"load average {load:.2f} at the start")
    print(cpu_description())
    rows = []
    for n in stages:
        for s in schedules:
            o, t = statistics.median(ours[(n, s)]), statistics.median(theirs[(n, s)])
            rows.append((n, s, o, t, o / t))
            print(f"P={n} {s:6} ours {o:8.1f} ms  torch {t:8.1f} ms  ours/torch {o / t:5.2f}")
            if bubbles[(n, s)]:
                print(f"  ours: {bubbles[(n, s)]}")
    if args.markdown:
        print("\n| P | schedule | ours median ms | torch median ms | ours ÷ torch |")
        print("|---|---|---|---|---|")
        for n, s, o, t, r in rows:
            print(f"| {n} | {s} | {o:.1f} | {t:.1f} | {r:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
