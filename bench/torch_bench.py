"""Shared parts of the PyTorch references in bench/ (pytorch_<task>.py): thread pinning before torch is
imported, the device (cpu; cuda for the twins that support it), the timed step loop, peak RSS, and the
torch.profiler time share per op family."""
import bisect
import json
import os
import resource
import statistics
import sys
import time


def add_common_args(p, steps, warmup, profile_steps):
    """The options every reference shares (same names as `normlab bench`)."""
    p.add_argument("--threads", type=int, default=1, help="torch.set_num_threads (default 1)")
    p.add_argument("--blas-threads", type=int, default=None,
                   help="OpenBLAS threads (default: same as --threads; 0 = library default). "
                        "Debian's torch calls OpenBLAS, which otherwise starts one thread per core "
                        "even with --threads 1")
    p.add_argument("--steps", type=int, default=steps, help="timed steps (default %d)" % steps)
    p.add_argument("--warmup", type=int, default=warmup, help="untimed warm-up steps (default %d)" % warmup)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cpu",
                   help="torch device: cpu, or cuda / cuda:N for the twins that support it (default cpu)")
    p.add_argument("--bf16", action="store_true",
                   help="mixed precision: forward and loss under torch.autocast(device, dtype=torch.bfloat16), "
                        "as `normlab bench --bf16` (backward and optimizer outside it, as PyTorch recommends)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--breakdown", action="store_true",
                   help="also profile steps and report the time share per op family")
    p.add_argument("--profile-steps", type=int, default=profile_steps,
                   help="steps profiled for --breakdown (default %d)" % profile_steps)


def check_common_args(p, args, cuda_ok=False):
    """Range checks; `cuda_ok`: the twin can run on --device cuda[:N] (else only cpu is accepted)."""
    if args.threads < 1 or args.steps < 1 or args.warmup < 0 or args.profile_steps < 1:
        p.error("--threads, --steps and --profile-steps must be >= 1, --warmup >= 0")
    if args.device != "cpu" and not (cuda_ok and (args.device == "cuda" or args.device.startswith("cuda:"))):
        p.error("--device %s: this twin runs on %s" % (args.device, "cpu or cuda[:N]" if cuda_ok else "the cpu only"))


def torch_device(args, torch):
    """The torch.device of --device; exits with a clear message when CUDA is asked for but
    torch.cuda.is_available() is False (then `normlab bench` reports no reference)."""
    if args.device != "cpu" and not torch.cuda.is_available():
        sys.exit("--device %s: torch.cuda.is_available() is False (no GPU, or a CPU-only torch)" % args.device)
    return torch.device(args.device)


def autocast(args, torch):
    """The context of the forward and loss: torch.autocast(<device type>, dtype=torch.bfloat16) with
    --bf16, else a no-op (torch.autocast with enabled=False)."""
    dev = "cuda" if args.device != "cpu" else "cpu"
    return torch.autocast(dev, dtype=torch.bfloat16, enabled=bool(args.bf16))


def import_torch(threads, blas_threads):
    """Pins OpenBLAS/OpenMP threads (read when the libraries load), imports torch, sets its thread count.
    Exits with status 2 and a message when torch is missing. Returns the BLAS thread count used."""
    blas = threads if blas_threads is None else blas_threads
    if blas > 0:
        os.environ["OPENBLAS_NUM_THREADS"] = str(blas)
        os.environ["OMP_NUM_THREADS"] = str(threads)
    try:
        import torch
    except ImportError:  # the first python3 on PATH may not have torch
        sys.stderr.write("error: torch not importable by %s; run with /usr/bin/python3 "
                         "(Debian package python3-torch)\n" % sys.executable)
        sys.exit(2)
    torch.set_num_threads(threads)
    return blas


def time_steps(step, warmup, steps, sync=None):
    """Runs `warmup` untimed then `steps` timed calls of step(); returns (wall ms per step, process CPU
    ms per step). CPU time (all threads of the process) is the load-robust figure on a shared machine:
    with one thread it stays close to the wall time of an idle core while the wall time grows. `sync`
    (e.g. torch.cuda.synchronize) runs after every step, inside the timed region, as normlab's
    device synchronisation does."""
    sync = sync or (lambda: None)
    for _ in range(warmup):
        step()
    sync()
    wall_ms, cpu_ms = [], []
    for _ in range(steps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        sync()
        cpu_ms.append((time.process_time() - c0) * 1000.0)
        wall_ms.append((time.perf_counter() - t0) * 1000.0)
    return wall_ms, cpu_ms


def step_stats(times_ms):
    """{"median", "min", "max", "all"} in ms, rounded to 4 decimals; "all" lists every step in order
    (`normlab bench --rounds` merges the steps of several runs with it)."""
    return {"median": round(statistics.median(times_ms), 4), "min": round(min(times_ms), 4),
            "max": round(max(times_ms), 4), "all": [round(t, 4) for t in times_ms]}


def peak_rss_mib():
    """Peak resident set size of this process so far (getrusage ru_maxrss, KiB on Linux) in MiB."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def classify(name, families):
    """Op family of a profiler event name: the first family one of whose substrings occurs in it."""
    low = name.lower()
    if low.startswith("optimizer.") or "adam" in low:
        return "optimizer"
    for fam, keys in families:
        if any(k in low for k in keys):
            return fam
    return "other"


def breakdown(step, n_steps, families):
    """Profiles n_steps calls of step(); returns ({family: share of self CPU time}, ms per step under
    the profiler, the profiler's top-15 table). Events inside torch.optim's `Optimizer.step#...` /
    `Optimizer.zero_grad#...` ranges count as "optimizer" (Adam's elementwise ops are plain aten ops)."""
    from torch.profiler import profile, ProfilerActivity
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(n_steps):
            step()
    events = prof.events()
    opt_ranges = sorted((e.time_range.start, e.time_range.end) for e in events
                        if e.name.startswith("Optimizer.step#") or e.name.startswith("Optimizer.zero_grad#"))

    def in_opt(t0):
        i = bisect.bisect_right(opt_ranges, (t0, float("inf"))) - 1
        return i >= 0 and opt_ranges[i][0] <= t0 <= opt_ranges[i][1]

    totals, grand = {}, 0.0
    for e in events:
        self_us = e.self_cpu_time_total
        if self_us <= 0:
            continue
        grand += self_us
        fam = "optimizer" if e.name.startswith("Optimizer.") or in_opt(e.time_range.start) \
            else classify(e.name, families)
        totals[fam] = totals.get(fam, 0.0) + self_us
    shares = {k: v / grand for k, v in sorted(totals.items(), key=lambda kv: -kv[1])}
    top = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=15)
    return shares, grand / 1000.0 / n_steps, top


def print_breakdown(result, profile_steps, table, to_stderr):
    """Human-readable shares (stderr when stdout carries the JSON); the top table with NL_BENCH_TOP=1."""
    out = sys.stderr if to_stderr else sys.stdout
    print("time share (self CPU time, %d profiled steps, %.2f ms/step under the profiler):"
          % (profile_steps, result["profiled_step_ms"]), file=out)
    for k, v in result["breakdown"].items():
        print("  %-16s %5.1f %%" % (k, 100.0 * v), file=out)
    if os.environ.get("NL_BENCH_TOP"):
        print(table, file=out)


def report(result, args, step, families, summary):
    """Adds the profiled time shares when --breakdown, then prints the JSON object (--json) or the
    human-readable `summary`, then the shares. Returns the exit status 0."""
    table = None
    if args.breakdown:
        shares, prof_ms, table = breakdown(step, args.profile_steps, families)
        result["breakdown"] = {k: round(v, 4) for k, v in shares.items()}
        result["profiled_step_ms"] = round(prof_ms, 4)
    print(json.dumps(result) if args.json else summary)
    if args.breakdown:
        print_breakdown(result, args.profile_steps, table, args.json)
    return 0
