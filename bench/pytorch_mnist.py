#!/usr/bin/python3
"""PyTorch CPU reference for `normlab bench mnist`.

Times one full training step (zero_grad, forward, loss, backward, optimizer.step) of the MNIST CNN
of Xu et al. 2019, appendix A.3, on random data with a fixed seed:

    Conv2d(1,20,5) -> MaxPool2d(2) -> Conv2d(20,50,5) -> MaxPool2d(2) -> flatten (800)
    -> Linear(800,500) -> norm(500) -> ReLU -> Linear(500,10);  cross-entropy;  Adam lr 1e-3

Run with Debian's own interpreter (python3-torch), e.g.
    /usr/bin/python3 bench/pytorch_mnist.py --threads 1 --json
"""
import argparse
import json
import os
import statistics
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--norm", choices=["none", "layernorm", "layernorm-simple"], default="layernorm")
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="OpenBLAS threads (default: same as --threads; 0 = library default). "
                        "Debian's torch calls OpenBLAS, which otherwise starts one thread per core "
                        "even with --threads 1")
    p.add_argument("--steps", type=int, default=300, help="timed steps (default 300)")
    p.add_argument("--warmup", type=int, default=30, help="untimed warm-up steps (default 30)")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--breakdown", action="store_true",
                   help="also profile steps and report the time share per op family")
    p.add_argument("--profile-steps", type=int, default=50, help="steps profiled for --breakdown")
    args = p.parse_args(argv)
    if args.threads < 1 or args.steps < 1 or args.warmup < 0 or args.batch_size < 1:
        p.error("--threads, --steps and --batch-size must be >= 1, --warmup >= 0")
    return args


def import_torch(args):
    """Imports torch after pinning the BLAS thread count (OpenBLAS reads it when loaded)."""
    blas = args.threads if args.blas_threads is None else args.blas_threads
    if blas > 0:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
            os.environ[var] = str(blas if var == "OPENBLAS_NUM_THREADS" else args.threads)
    global torch, nn
    try:
        import torch
        import torch.nn as nn
    except ImportError:  # the first python3 on PATH may not have torch
        sys.stderr.write("error: torch not importable by %s; run with /usr/bin/python3 "
                         "(Debian package python3-torch)\n" % sys.executable)
        sys.exit(2)
    return blas


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


def make_model(norm):
    return nn.Sequential(
        nn.Conv2d(1, 20, 5), nn.MaxPool2d(2),
        nn.Conv2d(20, 50, 5), nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(800, 500), make_norm(norm, 500), nn.ReLU(),
        nn.Linear(500, 10))


def make_step(model, opt, loss_fn, x, y):
    def step():
        opt.zero_grad()
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


def classify(name):
    low = name.lower()
    if low.startswith("optimizer.") or "adam" in low:
        return "optimizer"
    for fam, keys in FAMILIES:
        if any(k in low for k in keys):
            return fam
    return "other"


def breakdown(step, n_steps):
    """Profile n_steps steps; return {family: share of self CPU time} and the total ms per step."""
    import bisect
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(n_steps):
            step()
    # Self time per event name, so nested ops are not counted twice. Adam's elementwise ops
    # (aten::add_, mul_, addcdiv_, sqrt ...) run inside the `Optimizer.step#Adam.step` range, so
    # attribute every event under that range to the optimizer via its name stack when available.
    totals = {}
    grand = 0.0
    events = prof.events()
    # Find optimizer ranges (record_function inserted by torch.optim: "Optimizer.step#Adam.step").
    opt_ranges = [(e.time_range.start, e.time_range.end) for e in events
                  if e.name.startswith("Optimizer.step#") or e.name.startswith("Optimizer.zero_grad#")]
    opt_ranges.sort()

    def in_opt(t0):
        i = bisect.bisect_right(opt_ranges, (t0, float("inf"))) - 1
        return i >= 0 and opt_ranges[i][0] <= t0 <= opt_ranges[i][1]

    for e in events:
        self_us = e.self_cpu_time_total
        if self_us <= 0:
            continue
        grand += self_us
        if e.name.startswith("Optimizer.") or in_opt(e.time_range.start):
            fam = "optimizer"
        else:
            fam = classify(e.name)
        totals[fam] = totals.get(fam, 0.0) + self_us
    shares = {k: v / grand for k, v in sorted(totals.items(), key=lambda kv: -kv[1])}
    top = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)
    return shares, grand / 1000.0 / n_steps, top


def main(argv=None):
    args = parse_args(argv)
    blas_threads = import_torch(args)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    model = make_model(args.norm)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    g = torch.Generator().manual_seed(args.seed)
    x = torch.randn(args.batch_size, 1, 28, 28, generator=g, dtype=torch.float32)
    y = torch.randint(0, 10, (args.batch_size,), generator=g)
    step = make_step(model, opt, loss_fn, x, y)

    for _ in range(args.warmup):
        step()
    times_ms = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        step()
        times_ms.append((time.perf_counter() - t0) * 1000.0)
    med = statistics.median(times_ms)
    result = {
        "framework": "pytorch",
        "version": torch.__version__,
        "threads": torch.get_num_threads(),
        "blas_threads": blas_threads,  # 0 = OpenBLAS default (one per core)
        "batch_size": args.batch_size,
        "norm": args.norm,
        "steps": args.steps,
        "warmup": args.warmup,
        "step_ms": {"median": round(med, 4), "min": round(min(times_ms), 4),
                    "max": round(max(times_ms), 4)},
        "images_per_s": round(args.batch_size / (med / 1000.0), 2),
    }
    prof_table = None
    if args.breakdown:
        shares, prof_ms, prof_table = breakdown(step, args.profile_steps)
        result["breakdown"] = {k: round(v, 4) for k, v in shares.items()}
        result["profiled_step_ms"] = round(prof_ms, 4)

    if args.json:
        print(json.dumps(result))
    else:
        sm = result["step_ms"]
        print("pytorch %s  threads=%d  batch=%d  norm=%s  steps=%d (warm-up %d)"
              % (result["version"], result["threads"], args.batch_size, args.norm,
                 args.steps, args.warmup))
        print("step ms: median %.3f  min %.3f  max %.3f   images/s %.1f"
              % (sm["median"], sm["min"], sm["max"], result["images_per_s"]))
    if args.breakdown:
        out = sys.stderr if args.json else sys.stdout
        print("time share (self CPU time, %d profiled steps, %.2f ms/step under the profiler):"
              % (args.profile_steps, result["profiled_step_ms"]), file=out)
        for k, v in result["breakdown"].items():
            print("  %-16s %5.1f %%" % (k, 100.0 * v), file=out)
        if os.environ.get("NL_BENCH_TOP"):
            print(prof_table, file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
