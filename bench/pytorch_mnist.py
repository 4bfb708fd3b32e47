#!/usr/bin/python3
"""PyTorch CPU reference for `normlab bench mnist`.

Times one full training step (zero_grad, forward, loss, backward, optimizer.step) of the MNIST CNN
of Xu et al. 2019, appendix A.3, on random data with a fixed seed:

    Conv2d(1,20,5) -> ReLU -> MaxPool2d(2) -> Conv2d(20,50,5) -> ReLU -> MaxPool2d(2) -> flatten (800)
    -> Linear(800,500) -> norm(500) -> ReLU -> Linear(500,10);  cross-entropy;  Adam lr 1e-3

Run with Debian's own interpreter (python3-torch), e.g.
    /usr/bin/python3 bench/pytorch_mnist.py --threads 1 --json
"""
import argparse
import sys

import torch_bench as tb


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--norm", choices=["none", "layernorm", "layernorm-simple"], default="layernorm")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--no-conv-relu", action="store_true", help="the network without ReLUs after the convolutions")
    tb.add_common_args(p, steps=300, warmup=30, profile_steps=50)
    args = p.parse_args(argv)
    tb.check_common_args(p, args)
    if args.batch_size < 1:
        p.error("--batch-size must be >= 1")
    return args


torch = None
nn = None


def make_norm(name, d):
    if name == "none":
        return nn.Identity()
    if name == "layernorm":
        return nn.LayerNorm(d)
    if name == "layernorm-simple":
        return nn.LayerNorm(d, elementwise_affine=False)
    raise ValueError(name)


def make_model(norm, conv_relu=True):
    act = nn.ReLU if conv_relu else nn.Identity
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), act(), nn.MaxPool2d(2),
        nn.Conv2d(20, 50, 5), act(), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(800, 500), make_norm(norm, 500), nn.ReLU(),
        nn.Linear(500, 10))


def make_step(model, opt, loss_fn, x, y, args):
    def step():
        opt.zero_grad()
        with tb.autocast(args, torch):  # --bf16: mixed precision, as `normlab bench --bf16`
            loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return step


# Op-family classification for --breakdown: (family, substrings of profiler event names).
FAMILIES = [
    ("conv", ("conv", "mkldnn_convolution", "thnn_conv", "im2col", "col2im", "slow_conv")),
    ("gemm (addmm/mm)", ("addmm", "aten::mm", "aten::bmm", "aten::matmul", "aten::linear")),
    ("layer_norm", ("layer_norm",)),
    ("max_pool", ("max_pool",)),
    ("optimizer", ("optimizer", "adam", "_foreach")),
]


def main(argv=None):
    args = parse_args(argv)
    blas_threads = tb.import_torch(args.threads, args.blas_threads)
    global torch, nn
    import torch
    import torch.nn as nn
    torch.manual_seed(args.seed)
    model = make_model(args.norm, not args.no_conv_relu)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(args.batch_size, 1, 28, 28, generator=g, dtype=torch.float32)
    y = torch.randint(0, 10, (args.batch_size,), generator=g)
    step = make_step(model, opt, loss_fn, x, y, args)

    times_ms, cpu_ms = tb.time_steps(step, args.warmup, args.steps)
    stats = tb.step_stats(times_ms)
    med = stats["median"]
    result = {
        "framework": "pytorch",
        "version": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas_threads": blas_threads,  # 0 = OpenBLAS default (one per core)
        "batch_size": args.batch_size,
        "norm": args.norm,
        "precision": "bfloat16" if args.bf16 else "float32",
        "steps": args.steps,
        "warmup": args.warmup,
        "step_ms": stats,
        "step_cpu_ms": tb.step_stats(cpu_ms),  # process CPU time per step (robust to a loaded machine)
        "images_per_s": round(args.batch_size / (med / 1000.0), 2),
        "unit": "images",
        "items_per_s": round(args.batch_size / (med / 1000.0), 2),
        "peak_rss_mib": tb.peak_rss_mib(),
    }
    summary = []
    sm = result["step_ms"]
    summary.append("pytorch %s  threads=%d  batch=%d  norm=%s  steps=%d (warm-up %d)"
          % (result["version"], result["threads"], args.batch_size, args.norm,
             args.steps, args.warmup))
    summary.append("step ms: median %.3f  min %.3f  max %.3f   images/s %.1f"
          % (sm["median"], sm["min"], sm["max"], result["images_per_s"]))
    return tb.report(result, args, step, FAMILIES, "\n".join(summary))


if __name__ == "__main__":
    sys.exit(main())
