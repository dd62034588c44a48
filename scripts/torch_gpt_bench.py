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
    args = ap.parse_args()
    p = load_preset(args.preset)

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


if __name__ == "__main__":
    sys.exit(main())
