#!/usr/bin/python3
"""PyTorch CPU reference for `normlab bench transformer --config small|iwslt|cls`.

Times one full training step (zero_grad, forward, loss, backward, Adam step) of the Transformer of
Vaswani et al. 2017 in fairseq's layout (bench/fairseq_transformer.py: pre-norm, q/k/v/out projections,
sinusoidal positions from padding_idx + 1, embeddings scaled by sqrt(d), dropout / attention_dropout /
activation_dropout, ReLU FFN, a final norm on each stack, output projection tied to the embedding) on
synthetic token ids with a fixed seed: --batch-size sentences x --seq-len tokens per side (128 x 32).

    small  d 256, FFN 1024, 4 heads, 3+3 layers, shared vocabulary 8000, dropout 0.3, attn dropout 0.1
    iwslt  d 512, FFN 1024, 4 heads, 6+6 layers, shared vocabulary 10000, dropout 0.3 (fairseq
           transformer_iwslt_de_en, pre-norm as in Xu et al. 2019)
    cls    4-layer encoder, d 128, FFN 512, 4 heads, vocabulary 20000, mean pooling over non-pad
           tokens, 5 classes, dropout 0.2

Loss: label-smoothed cross-entropy (0.1, padding ignored, fairseq's criterion) divided by the number of
target tokens for small/iwslt; cross-entropy on the class for cls. Adam betas (0.9, 0.98), lr 5e-4.

Run with Debian's own interpreter (python3-torch), e.g.
    /usr/bin/python3 bench/pytorch_transformer.py --config small --threads 1 --json
"""
import argparse
import sys

import torch_bench as tb

CONFIGS = {
    "small": dict(kind="mt", d=256, ffn=1024, heads=4, enc_layers=3, dec_layers=3, vocab=8000,
                  dropout=0.3, attention_dropout=0.1, activation_dropout=0.0),
    "iwslt": dict(kind="mt", d=512, ffn=1024, heads=4, enc_layers=6, dec_layers=6, vocab=10000,
                  dropout=0.3, attention_dropout=0.0, activation_dropout=0.0),
    "cls": dict(kind="cls", d=128, ffn=512, heads=4, enc_layers=4, dec_layers=0, vocab=20000, classes=5,
                dropout=0.2, attention_dropout=0.0, activation_dropout=0.0),
}
# Default (steps, warm-up) per config: a step takes seconds on one core for small/iwslt.
DEFAULT_STEPS = {"small": (10, 2), "iwslt": (10, 2), "cls": (20, 3)}

# Op-family classification for --breakdown: (family, substrings of profiler event names).
FAMILIES = [
    ("gemm (addmm/mm/bmm)", ("addmm", "aten::mm", "aten::bmm", "aten::matmul", "aten::linear")),
    ("softmax", ("softmax",)),
    ("layer_norm", ("layer_norm",)),
    ("dropout", ("dropout", "bernoulli", "native_dropout")),
    ("embedding", ("embedding",)),
    ("loss (nll/gather)", ("nll_loss", "gather", "cross_entropy")),
]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--config", choices=sorted(CONFIGS), default="small")
    p.add_argument("--norm", choices=["layernorm", "layernorm-simple", "none"], default="layernorm")
    p.add_argument("--post-norm", action="store_true", help="post-norm layers instead of pre-norm")
    p.add_argument("--batch-size", type=int, default=128, help="sentences per batch (default 128)")
    p.add_argument("--seq-len", type=int, default=32, help="tokens per sentence, each side (default 32)")
    p.add_argument("--lr", type=float, default=5e-4)
    tb.add_common_args(p, steps=0, warmup=-1, profile_steps=3)
    args = p.parse_args(argv)
    steps, warmup = DEFAULT_STEPS[args.config]
    args.steps = steps if args.steps == 0 else args.steps
    args.warmup = warmup if args.warmup == -1 else args.warmup
    tb.check_common_args(p, args, cuda_ok=True)
    if args.batch_size < 1 or args.seq_len < 2:
        p.error("--batch-size must be >= 1 and --seq-len >= 2")
    return args


def build(args, torch, ft):
    """Model, optimizer and the step closure on a fixed synthetic batch; returns
    (model, step, items per step, unit, forward FLOPs)."""
    c = dict(CONFIGS[args.config], norm=args.norm, pre_norm=not args.post_norm,
             max_positions=max(1024, args.seq_len))
    g = torch.Generator().manual_seed(args.seed)
    B, T = args.batch_size, args.seq_len
    dev = tb.torch_device(args, torch)

    def ids():  # real-token ids in [4, V), each sentence ending with </s>
        x = torch.randint(4, c["vocab"], (B, T), generator=g)
        x[:, -1] = ft.EOS
        return x

    if c["kind"] == "mt":
        model = ft.TransformerMT(c).to(dev)
        src, tgt = ids(), ids()
        prev = torch.cat([torch.full((B, 1), ft.EOS), tgt[:, :-1]], dim=1)  # move eos to beginning
        ntokens = int(tgt.ne(ft.PAD).sum())
        src, tgt, prev = src.to(dev), tgt.to(dev), prev.to(dev)

        def loss_fn():
            loss, _ = ft.label_smoothed_nll_loss(model(src, prev), tgt, 0.1)
            return loss / ntokens
        items, unit, flops = ntokens, "target tokens", ft.forward_flops_mt(c, B, T, T)
    else:
        model = ft.TransformerClassifier(c).to(dev)
        x, y = ids().to(dev), torch.randint(0, c["classes"], (B,), generator=g).to(dev)

        def loss_fn():
            return torch.nn.functional.cross_entropy(model(x), y)
        items, unit, flops = B, "sentences", ft.forward_flops_cls(c, B, T)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr, betas=(0.9, 0.98), eps=1e-8)

    def step():
        opt.zero_grad()
        with tb.autocast(args, torch):  # --bf16: mixed precision, as `normlab bench --bf16`
            loss = loss_fn()
        loss.backward()
        opt.step()
        return loss
    return model, step, items, unit, flops


def main(argv=None):
    args = parse_args(argv)
    blas_threads = tb.import_torch(args.threads, args.blas_threads)
    import torch
    import fairseq_transformer as ft
    torch.manual_seed(args.seed)
    model, step, items, unit, flops = build(args, torch, ft)
    sync = torch.cuda.synchronize if args.device != "cpu" else None
    times_ms, cpu_ms = tb.time_steps(step, args.warmup, args.steps, sync)
    stats = tb.step_stats(times_ms)
    med_s = stats["median"] / 1000.0
    fwd_gflop = flops / 1e9
    result = {
        "framework": "pytorch",
        "version": torch.__version__,
        "config": args.config,
        "device": args.device,
        "precision": "bfloat16" if args.bf16 else "float32",
        "threads": torch.get_num_threads(),
        "blas_threads": blas_threads,  # 0 = OpenBLAS default (one per core)
        "batch_size": args.batch_size,
        "seq_len": args.seq_len,
        "norm": args.norm,
        "pre_norm": not args.post_norm,
        "steps": args.steps,
        "warmup": args.warmup,
        "step_ms": stats,
        "step_cpu_ms": tb.step_stats(cpu_ms),  # process CPU time per step (robust to a loaded machine)
        "unit": unit,
        "items_per_step": items,
        "items_per_s": round(items / med_s, 2),
        "parameters": sum(p.numel() for p in model.parameters()),
        # Matrix-product FLOPs of one forward pass; a training step is counted as 3x forward
        # (backward = 2x forward), the usual convention.
        "forward_gflop": round(fwd_gflop, 4),
        "step_gflop": round(3 * fwd_gflop, 4),
        "gflop_per_s": round(3 * fwd_gflop / med_s, 3),
        "peak_rss_mib": tb.peak_rss_mib(),
    }
    summary = []
    sm = result["step_ms"]
    summary.append("pytorch %s  config=%s  threads=%d  batch=%dx%d  norm=%s  params=%d  steps=%d (warm-up %d)"
          % (result["version"], args.config, result["threads"], args.batch_size, args.seq_len,
             args.norm, result["parameters"], args.steps, args.warmup))
    summary.append("step ms: median %.1f  min %.1f  max %.1f  (CPU %.1f)   %s/s %.1f   %.2f GFLOP/step (3x fwd %.2f)  "
          "%.2f GFLOP/s   peak RSS %.0f MiB"
          % (sm["median"], sm["min"], sm["max"], result["step_cpu_ms"]["median"], unit, result["items_per_s"], result["step_gflop"],
             fwd_gflop, result["gflop_per_s"], result["peak_rss_mib"]))
    return tb.report(result, args, step, FAMILIES, "\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
