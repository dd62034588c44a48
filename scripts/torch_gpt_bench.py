#!/usr/bin/env python3
"""PyTorch eager step time of ShardScope's GPT, for comparison with the CUDA backend.

Builds the same GPT-2 architecture as backend/model (token + position embedding; L blocks of
LN -> causal MHA with a fused qkv projection -> residual, LN -> MLP 4d with tanh-GELU ->
residual; final LN; untied LM head without bias) from a preset in
resources/presets/models.json, and times forward + backward + AdamW (betas 0.9/0.95, eps 1e-8,
weight decay 0.1, as train/optimizer.h) on random tokens. bf16 = autocast with fp32 master
weights (mixed precision, as ShardScope's bf16 working copy); fp32 = no autocast, TF32 off.

--micro-batch overrides the preset's (gpu-check.sh passes ranks x micro-batch, so one PyTorch
process does the same work per step as N shared-device ShardScope ranks).

Prints one line, or a JSON object with --json. Exit code 3 when PyTorch or a CUDA device is
missing (the caller reports "not run" with the printed reason).

--device cpu: ShardScope's CPU ranks against PyTorch's on this machine (scripts/bench-torch.sh,
`make bench-torch`, sets up the venv). For each strategy and rank count, interleaved
(ours, torch, ours, torch …): `shardscope-cli run --model PRESET --ranks N --strategy S` against
the same GPT in N gloo processes, one thread each (torch.set_num_threads(1), as our ranks'
single-threaded BLAS), the same optimizer, clipping and batch per rank. The peers:
ddp = DDP; zero1 = DDP + ZeroRedundancyOptimizer; zero2 = FSDP2 reshard_after_forward=False;
zero3 and fsdp = FSDP2 reshard_after_forward=True. Prints the median step time of each run
(steps after the warm-up), min and median over the repeats, and torch/ours (> 1: ours faster).
"""
import argparse
import json
import math
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PRESETS = os.path.join(HERE, "..", "resources", "presets", "models.json")


def load_preset(name):
    with open(PRESETS) as f:
        presets = json.load(f)
    if name not in presets or name.startswith("_"):
        choices = ", ".join(k for k in presets if not k.startswith("_"))
        raise SystemExit(f"unknown preset {name!r} (choices: {choices})")
    return presets[name]


def build_model(torch, p, attention):
    nn = torch.nn
    F = torch.nn.functional
    d, heads, seq, vocab = p["d_model"], p["heads"], p["seq_len"], p["vocab"]

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1 = nn.LayerNorm(d, eps=1e-5)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d, eps=1e-5)
            self.fc = nn.Linear(d, 4 * d)
            self.fc_proj = nn.Linear(4 * d, d)
            mask = torch.ones(seq, seq, dtype=torch.bool).tril()
            self.register_buffer("mask", mask, persistent=False)

        def attn(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(x).split(d, dim=2)
            q, k, v = (t.view(b, s, heads, d // heads).transpose(1, 2) for t in (q, k, v))
            if attention == "sdpa":
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:  # explicit probabilities, as ShardScope's kernels (saved for backward)
                att = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
                att = att.masked_fill(~self.mask[:s, :s], float("-inf")).softmax(dim=-1)
                y = att @ v
            return self.proj(y.transpose(1, 2).reshape(b, s, d))

        def forward(self, x):
            x = x + self.attn(self.ln1(x))
            return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(seq, d)
            self.blocks = nn.ModuleList(Block() for _ in range(p["layers"]))
            self.ln_f = nn.LayerNorm(d, eps=1e-5)
            self.lm_head = nn.Linear(d, vocab, bias=False)

        def forward(self, ids, targets):
            pos = torch.arange(ids.shape[1], device=ids.device)
            x = self.wte(ids) + self.wpe(pos)
            for blk in self.blocks:
                x = blk(x)
            logits = self.lm_head(self.ln_f(x))
            return F.cross_entropy(logits.float().view(-1, vocab), targets.view(-1))

    return Gpt()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="small")
    ap.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16")
    ap.add_argument("--attention", choices=["manual", "sdpa"], default="manual")
    ap.add_argument("--micro-batch", type=int, default=0, help="0: the preset's")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--device", choices=["cuda", "cpu"], default="cuda")
    ap.add_argument("--build", default=os.path.join(HERE, "..", "build"), help="cpu: where bin/shardscope-cli is")
    ap.add_argument("--ranks", default="1,4", help="cpu: rank counts")
    ap.add_argument("--strategies", default="ddp,zero1,zero2,zero3,fsdp", help="cpu: ours, each with its peer")
    ap.add_argument("--repeats", type=int, default=4, help="cpu: interleaved repeats")
    ap.add_argument("--ours-precision", choices=["fp32", "bf16"], default="fp32",
                    help="cpu: the precision of both sides (PyTorch: bf16 = autocast, FSDP2 "
                         "param_dtype=bf16; fp32 = neither)")
    ap.add_argument("--markdown", action="store_true", help="cpu: also print the table as Markdown")
    ap.add_argument("--print-cpu-requirements", action="store_true",
                    help="print what the installed torch needs to import on a CPU (scripts/bench-torch.sh)")
    ap.add_argument("--rank-worker", nargs=4, metavar=("RANK", "WORLD", "PORT", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    p = load_preset(args.preset)
    if args.print_cpu_requirements:
        print("\n".join(cpu_requirements()))
        return 0
    if args.rank_worker:
        return cpu_rank(args, p)
    if args.device == "cpu":
        return cpu_main(args, p)

    try:
        import torch
    except ImportError as e:
        print(f"not run: PyTorch is not importable ({e})")
        return 3
    if not torch.cuda.is_available():
        print(f"not run: torch {torch.__version__} sees no CUDA device")
        return 3

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 means fp32, as ShardScope's Fp32 GEMMs
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    model = build_model(torch, p, args.attention).to(dev)
    params = sum(t.numel() for t in model.parameters())
    decay = [t for n, t in model.named_parameters() if t.dim() == 2]
    no_decay = [t for n, t in model.named_parameters() if t.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                             {"params": no_decay, "weight_decay": 0.0}],
                            lr=p.get("learning_rate", 1e-3), betas=(0.9, 0.95), eps=1e-8)
    mb, seq, vocab = args.micro_batch or p["micro_batch"], p["seq_len"], p["vocab"]
    ids = torch.randint(0, vocab, (mb, seq), device=dev)
    targets = torch.randint(0, vocab, (mb, seq), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.dtype == "bf16"):
            loss = model(ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(args.steps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        loss = step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    result = {
        "framework": f"torch {torch.__version__} eager",
        "device": torch.cuda.get_device_name(0),
        "preset": args.preset, "dtype": args.dtype, "attention": args.attention,
        "param_count": params, "micro_batch": mb, "tokens_per_step": mb * seq,
        "step_ms_median": statistics.median(times),
        "step_ms_p90": times[min(len(times) - 1, int(0.9 * len(times)))],
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
        "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
        "final_loss": float(loss),
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(f"{result['framework']} {args.dtype} on {result['device']}: {args.preset} "
              f"({params:,} params, {mb * seq} tokens) step {result['step_ms_median']:.2f} ms median, "
              f"p90 {result['step_ms_p90']:.2f} ms, peak {result['peak_allocated_bytes'] / 2**20:.1f} MiB")
    return 0


# ---- CPU mode: ours vs PyTorch's gloo ranks -----------------------------------------------------

TORCH_PEER = {"ddp": "DDP", "zero1": "DDP+ZeroRedundancyOptimizer", "zero2": "FSDP2 reshard=False",
              "zero3": "FSDP2 reshard=True", "fsdp": "FSDP2 reshard=True"}


def cpu_description():
    """The CPU model and its bf16 units (every figure says which CPU it is from)."""
    model, flags = "unknown CPU", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model == "unknown CPU":
                    model = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    units = [name for flag, name in (("amx_bf16", "AMX-BF16"), ("avx512_bf16", "AVX512-BF16"))
             if flag in flags]
    isa = "AVX-512" if "avx512f" in flags else ("AVX2" if "avx2" in flags else "no AVX2")
    return (f"CPU: {model}, {os.cpu_count()} logical CPUs, {isa}; bf16 units: "
            f"{', '.join(units) if units else 'none'}")


def cpu_requirements():
    """torch's requirements (torch installed with --no-deps) less the CUDA stack: the PyPI wheel
    imports on a CPU with only four CUDA wheels beside it — NCCL, cuSPARSELt, NVSHMEM and cuFile
    (the last through cuda-toolkit's `cufile` extra, which pins it)."""
    import importlib.metadata as md
    import re
    keep = []
    for req in md.requires("torch") or []:
        spec, _, marker = req.partition(";")
        spec = spec.strip()
        if "extra ==" in marker:
            continue
        name = re.split(r"[\[<>=~! ]", spec, maxsplit=1)[0].lower()
        if name == "cuda-toolkit":
            keep.append(re.sub(r"\[[^\]]*\]", "[cufile]", spec))
        elif name.startswith("nvidia-"):
            if any(k in name for k in ("nccl", "cusparselt", "nvshmem")):
                keep.append(spec)
        elif name not in ("cuda-bindings", "triton"):
            keep.append(spec)
    return keep


def cpu_rank(args, p):
    """One gloo rank (a process of its own): prints nothing, rank 0 writes the JSON result."""
    rank, world, port, out = int(args.rank_worker[0]), int(args.rank_worker[1]), args.rank_worker[2], args.rank_worker[3]
    import resource
    import time
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = build_model(torch, p, args.attention)
    params = sum(t.numel() for t in model.parameters())
    strategy = args.strategies
    # bf16 as PyTorch users run it on a CPU: autocast around the forward (DDP and ZeRO-1; FSDP2 as
    # well, where the bf16 parameters make its casts no-ops).
    bf16 = args.dtype == "bf16"
    groups = lambda m: [{"params": [t for t in m.parameters() if t.dim() == 2], "weight_decay": 0.1},
                        {"params": [t for t in m.parameters() if t.dim() != 2], "weight_decay": 0.0}]
    hyper = dict(lr=p.get("learning_rate", 1e-3), betas=(0.9, 0.95), eps=1e-8)
    if strategy in ("ddp", "zero1"):
        from torch.nn.parallel import DistributedDataParallel
        model = DistributedDataParallel(model)
        if strategy == "ddp":
            opt = torch.optim.AdamW(groups(model), **hyper)
        else:
            from torch.distributed.optim import ZeroRedundancyOptimizer
            opt = ZeroRedundancyOptimizer(groups(model), optimizer_class=torch.optim.AdamW, **hyper)
    else:
        from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard
        reshard = strategy != "zero2"
        # bf16: FSDP2 gathers and computes in bf16, the sharded fp32 parameters are the master
        # copy, gradients are reduced in fp32 (ShardScope reduces bf16 gradients: a lead to them).
        mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) \
            if bf16 else MixedPrecisionPolicy()
        for blk in model.blocks:
            fully_shard(blk, reshard_after_forward=reshard, mp_policy=mp)
        fully_shard(model, reshard_after_forward=reshard, mp_policy=mp)
        opt = torch.optim.AdamW(groups(model), **hyper)
    g = torch.Generator().manual_seed(1 + rank)
    mb, seq, vocab = args.micro_batch or p["micro_batch"], p["seq_len"], p["vocab"]
    ids = torch.randint(0, vocab, (mb, seq), generator=g)
    targets = torch.randint(0, vocab, (mb, seq), generator=g)
    times = []
    for i in range(args.warmup + args.steps):
        t0 = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            loss = model(ids, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if i >= args.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    mine = torch.tensor([resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024], dtype=torch.int64)
    gathered = [torch.zeros_like(mine) for _ in range(world)]
    dist.all_gather(gathered, mine)
    rss = [int(t.item()) for t in gathered]
    if rank == 0:
        with open(out, "w") as f:
            json.dump({"param_count": params, "step_ms": times, "rss_bytes": rss, "loss": float(loss)}, f)
    dist.destroy_process_group()
    return 0


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return str(s.getsockname()[1])


def run_torch(args, strategy, ranks, tmp):
    import subprocess
    out = os.path.join(tmp, "torch.json")
    port = free_port()
    cmd = [sys.executable, "-W", "ignore", os.path.abspath(__file__), "--device", "cpu", "--preset", args.preset,
           "--dtype", args.ours_precision,
           "--attention", args.attention, "--micro-batch", str(args.micro_batch), "--steps", str(args.steps),
           "--warmup", str(args.warmup), "--strategies", strategy, "--rank-worker"]
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    procs = [subprocess.Popen(cmd + [str(r), str(ranks), port, out], env=env) for r in range(ranks)]
    codes = [q.wait() for q in procs]
    if any(codes):
        raise SystemExit(f"torch {strategy} on {ranks} ranks failed (exit codes {codes})")
    with open(out) as f:
        return json.load(f)


def run_ours(args, strategy, ranks, tmp):
    import subprocess
    out = os.path.join(tmp, "ours.json")
    cli = os.path.join(args.build, "bin", "shardscope-cli")
    cmd = [cli, "run", "--model", args.preset, "--ranks", str(ranks), "--strategy", strategy,
           "--steps", str(args.warmup + args.steps), "--precision", args.ours_precision, "--no-events",
           "--json", out]
    if args.micro_batch:
        cmd += ["--micro-batch", str(args.micro_batch)]
    # wait4's usage of the CLI covers every process of the job it waited for (mpirun and the
    # ranks, through their parents): its maximum resident set is the largest rank's (this
    # process stays small: it never imports torch).
    err = os.path.join(tmp, "ours.stderr")
    with open(err, "w") as errf:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        with open(err) as f:
            raise SystemExit(f"ours {strategy} on {ranks} ranks failed: {f.read().strip()}")
    with open(out) as f:
        rep = json.load(f)
    peak = max(r["peak_bytes"]["total"] for r in rep["ranks"])  # the ledger's tensors, not RSS
    return {"param_count": rep["param_count"], "step_ms": rep["step_ms"][args.warmup:], "peak_bytes": peak,
            "rss_bytes": usage.ru_maxrss * 1024}


def cpu_main(args, p):
    import subprocess
    import tempfile
    # torch is imported by the ranks only: a child forked from a process holding torch starts
    # with its resident set, which the children's maximum RSS (theirs and ours) would report.
    probe = subprocess.run([sys.executable, "-W", "ignore", "-c", "import torch; print(torch.__version__)"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        reason = (probe.stderr.strip().splitlines() or ["import failed"])[-1]
        print(f"not run: PyTorch is not importable ({reason}); scripts/bench-torch.sh sets up its venv")
        return 3
    torch_version = probe.stdout.strip()
    ranks = [int(n) for n in args.ranks.split(",")]
    strategies = args.strategies.split(",")
    for s in strategies:
        if s not in TORCH_PEER:
            raise SystemExit(f"--strategies: unknown strategy {s!r} (choices: {', '.join(TORCH_PEER)})")
    if args.steps < 2 or args.repeats < 1:
        raise SystemExit("--steps must be at least 2 and --repeats at least 1")
    ours = {}
    theirs = {}
    with tempfile.TemporaryDirectory(prefix="shardscope-torch-") as tmp:
        for rep in range(args.repeats):
            for n in ranks:
                for s in strategies:
                    a = run_ours(args, s, n, tmp)
                    b = run_torch(args, s, n, tmp)
                    if a["param_count"] != b["param_count"]:
                        raise SystemExit(f"parameter counts differ: ours {a['param_count']}, torch {b['param_count']}")
                    ours.setdefault((s, n), []).append(statistics.median(a["step_ms"]))
                    theirs.setdefault((s, n), []).append(statistics.median(b["step_ms"]))
                    theirs.setdefault((s, n, "rss"), []).append(max(b["rss_bytes"]))
                    ours.setdefault((s, n, "peak"), []).append(a["peak_bytes"])
                    ours.setdefault((s, n, "rss"), []).append(a["rss_bytes"])
                    print(f"repeat {rep + 1}: {s} N={n}: ours {ours[(s, n)][-1]:.1f} ms, "
                          f"torch {theirs[(s, n)][-1]:.1f} ms", flush=True)
    print(f"\n{args.preset} ({p['micro_batch'] if not args.micro_batch else args.micro_batch} x {p['seq_len']} tokens "
          f"per rank), {args.ours_precision} on both sides (torch {torch_version}), one thread per rank, "
          f"{args.repeats} interleaved repeats, {args.steps} timed steps each")
    print(cpu_description())
    head = (f"{'strategy':8} {'N':>2} {'torch peer':28} {'ours min':>9} {'ours med':>9} {'torch min':>9} "
            f"{'torch med':>9} {'torch/ours':>10} {'torch RSS':>10} {'ours RSS':>10} {'ours ledger peak':>16}")
    print(head)
    rows = []
    for n in ranks:
        for s in strategies:
            o, t = ours[(s, n)], theirs[(s, n)]
            ratio = statistics.median(t) / statistics.median(o)
            rss = max(theirs[(s, n, "rss")]) / 2**20
            peak = max(ours[(s, n, "peak")]) / 2**20
            our_rss = max(ours[(s, n, "rss")]) / 2**20
            rows.append((s, n, TORCH_PEER[s], min(o), statistics.median(o), min(t), statistics.median(t), ratio, rss,
                         peak, min(t) / min(o), our_rss))
            print(f"{s:8} {n:>2} {TORCH_PEER[s]:28} {min(o):9.1f} {statistics.median(o):9.1f} {min(t):9.1f} "
                  f"{statistics.median(t):9.1f} {ratio:10.2f} {rss:6.0f} MiB {our_rss:6.0f} MiB {peak:12.1f} MiB")
    if args.markdown:
        print("\n| strategy | N | torch peer | ours min ms | ours median ms | torch min ms | torch median ms | "
              "torch/ours (medians) | torch/ours (mins) | torch max RSS/rank | ours max RSS/rank | "
              "ours ledger peak/rank |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]:.1f} | {r[4]:.1f} | {r[5]:.1f} | {r[6]:.1f} | {r[7]:.2f} | "
                  f"{r[10]:.2f} | {r[8]:.0f} MiB | {r[11]:.0f} MiB | {r[9]:.1f} MiB |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
