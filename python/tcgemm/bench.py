"""python -m tcgemm.bench: tcgemm.matmul against torch on the same tensors.

For every problem both contenders are verified against an fp32 reference
(and tcgemm's result, on small-integer operands laid out the same way,
must be exact element for element), then timed the way tcgemm-bench times
(docs/benchmarking.md, tools/bench/runner.cpp):

- CUDA events around the launches on torch's current stream; median of
  ``--iters`` samples (min and max in the CSV), ``--warmup`` launches first;
- interleaved: each iteration takes one sample of tcgemm, then one of torch,
  so clock drift hits both alike;
- L2 rotation: when one set of operands is no larger than 4x the L2 (read
  from the device), enough copies are made to exceed that and each launch
  uses the next one;
- short problems (under ~50 us per launch): a sample is a CUDA graph of
  enough launches to last ~0.5 ms, replayed between the events (so Python's
  per-call cost, which would otherwise be what is measured, stays out; it
  is reported on its own, below). The CSV's ``timing`` column says which.

Host overhead: the time to enqueue N calls back to back without
synchronizing, divided by N (microseconds per call), for both tcgemm.matmul
and torch; what a Python caller pays per GEMM on the CPU.

Sets: ``squares`` (bf16 M = N = K from 1024 to 8192, all row-major: torch's
default) and ``llm`` (F.linear: x[M, K] @ W[N, K]^T for tcgemm-bench's llm
set, tools/bench/shapes.cpp: tcgemm.matmul(x, W.mT) against
torch.nn.functional.linear(x, W)).
"""

import argparse
import datetime
import math
import statistics
import sys
import time

# tools/bench/shapes.cpp: the square set's sizes from 1024 to 8192, and the
# llm set's token counts and (N, K) projections.
SQUARE_SIZES = (1024, 2048, 3072, 4096, 6144, 8192)
LLM_TOKENS = (1, 16, 64, 128, 512, 1024, 4096, 16384)
LLM_PROJECTIONS = ((4096, 4096), (14336, 4096), (4096, 14336), (28672, 8192), (8192, 28672))
SETS = ("squares", "llm")

L2_MULTIPLE = 4  # rotate operand sets until they exceed 4x the L2
SHORT_LAUNCH_MS = 0.05  # launches under ~50 us are grouped into one sample
MIN_SAMPLE_MS = 0.5  # ... until a sample lasts about this long
MAX_LAUNCHES_PER_SAMPLE = 10000
OVERHEAD_GPU_MS = 50.0  # GPU time the overhead loop may queue, at most
TOLERANCE = {"bf16": 1e-2, "fp16": 1e-2, "fp32": 1e-4}  # relative Frobenius error

CSV_COLUMNS = ("set", "m", "n", "k", "dtype", "out_dtype", "layout", "torch_call", "kernel",
               "config", "tcgemm_ms", "tcgemm_min_ms", "tcgemm_max_ms", "torch_ms",
               "torch_min_ms", "torch_max_ms", "tcgemm_tflops", "torch_tflops", "ratio",
               "tcgemm_overhead_us", "torch_overhead_us", "tcgemm_rel_err", "torch_rel_err",
               "timing", "launches_per_sample", "l2_sets", "status")


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="python -m tcgemm.bench",
        description="Time tcgemm.matmul against torch (matmul / F.linear) on the same CUDA "
                    "tensors: TFLOP/s, ratio, per-call host overhead; CSV and a plot.")
    p.add_argument("--shapes", default="squares,llm",
                   help="comma-separated sets: squares (bf16 1024..8192, all row-major), llm "
                        "(F.linear shapes of tcgemm-bench's llm set) (default: both)")
    p.add_argument("--sizes", default=None,
                   help="comma-separated square sizes instead of 1024..8192")
    p.add_argument("--tokens", default=None,
                   help="comma-separated M values of the llm set instead of 1..16384")
    p.add_argument("--dtype", default="bf16", choices=("bf16", "fp16"), help="input dtype")
    p.add_argument("--out-dtype", default=None, choices=("bf16", "fp16", "fp32"),
                   help="output dtype (default: the input dtype, as torch gives)")
    p.add_argument("--warmup", type=int, default=5, help="launches before timing (>= 3)")
    p.add_argument("--iters", type=int, default=30, help="timed samples (>= 20)")
    p.add_argument("--overhead-calls", type=int, default=200,
                   help="calls enqueued back to back to measure host overhead (at most; "
                        "fewer for long problems)")
    p.add_argument("--no-graphs", action="store_true",
                   help="time short problems with direct launches instead of CUDA graphs")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    p.add_argument("--csv", default=None, help="write the results here")
    p.add_argument("--plot", default=None, help="write a PNG of TFLOP/s against size here "
                   "(needs matplotlib)")
    args = p.parse_args(argv)
    args.shapes = [s for s in args.shapes.split(",") if s]
    for s in args.shapes:
        if s not in SETS:
            p.error(f"--shapes: unknown set {s!r} (sets: {', '.join(SETS)})")
    args.sizes = _ints(p, "--sizes", args.sizes, SQUARE_SIZES)
    args.tokens = _ints(p, "--tokens", args.tokens, LLM_TOKENS)
    if args.warmup < 3:
        p.error("--warmup must be at least 3")
    if args.iters < 20:
        p.error("--iters must be at least 20")
    if args.overhead_calls < 10:
        p.error("--overhead-calls must be at least 10")
    return args


def _ints(p, flag, text, default):
    if text is None:
        return list(default)
    try:
        values = [int(v) for v in text.split(",") if v]
    except ValueError:
        p.error(f"{flag}: expected comma-separated integers, got {text!r}")
    if not values or min(values) < 1:
        p.error(f"{flag}: sizes must be >= 1")
    return values


class Problem:
    def __init__(self, set_name, m, n, k):
        self.set, self.m, self.n, self.k = set_name, m, n, k

    @property
    def flops(self):
        return 2.0 * self.m * self.n * self.k


def problems(args):
    out = []
    for s in args.shapes:
        if s == "squares":
            out += [Problem("squares", n, n, n) for n in args.sizes]
        else:
            out += [Problem("llm", m, n, k) for n, k in LLM_PROJECTIONS for m in args.tokens]
    return out


# ---- one problem --------------------------------------------------------------------


class Contenders:
    """The operand sets of one problem and the two calls on set i."""

    def __init__(self, torch, tcgemm, problem, dtype, out_dtype, l2_bytes, generator):
        self.torch = torch
        self.tcgemm_module, self.out_dtype, self.generator = tcgemm, out_dtype, generator
        p = problem
        item = 2
        out_item = 4 if out_dtype == torch.float32 else 2
        set_bytes = (p.m * p.k + p.k * p.n) * item + p.m * p.n * out_item
        self.sets = 1 if set_bytes > L2_MULTIPLE * l2_bytes else \
            L2_MULTIPLE * l2_bytes // set_bytes + 1
        self.inputs = []
        for _ in range(self.sets):
            a = torch.randn(p.m, p.k, device="cuda", dtype=dtype, generator=generator)
            if p.set == "squares":  # both row-major, as torch makes them
                b = torch.randn(p.k, p.n, device="cuda", dtype=dtype, generator=generator)
            else:  # a weight W[N, K]; B = W^T is a column-major view
                b = torch.randn(p.n, p.k, device="cuda", dtype=dtype, generator=generator)
            self.inputs.append((a, b))
        self.layout = "row-major A, B, C" if p.set == "squares" else "x row-major, W^T col-major"
        linear = torch.nn.functional.linear
        if p.set == "squares":
            self.torch_call = "torch.matmul"
            self.tcgemm = lambda i: tcgemm.matmul(*self.inputs[i], out_dtype=out_dtype)
            if out_dtype == dtype:
                self.torch_fn = lambda i: torch.matmul(*self.inputs[i])
            else:  # torch has no mixed output for matmul: its own matmul, then a cast
                self.torch_call = "torch.matmul + .to(out_dtype)"
                self.torch_fn = lambda i: torch.matmul(*self.inputs[i]).to(out_dtype)
            self.a0, self.b0 = self.inputs[0]
        else:
            self.torch_call = "F.linear"
            self.tcgemm = lambda i: tcgemm.matmul(self.inputs[i][0], self.inputs[i][1].mT,
                                                  out_dtype=out_dtype)
            if out_dtype == dtype:
                self.torch_fn = lambda i: linear(*self.inputs[i])
            else:
                self.torch_call = "F.linear + .to(out_dtype)"
                self.torch_fn = lambda i: linear(*self.inputs[i]).to(out_dtype)
            self.a0, self.b0 = self.inputs[0][0], self.inputs[0][1].mT

    def rel_errors(self):
        torch = self.torch
        ref = torch.matmul(self.a0.float(), self.b0.float())
        norm = ref.norm().item() or 1.0
        errs = []
        for fn in (self.tcgemm, self.torch_fn):
            got = fn(0).float()
            bad = int((~torch.isfinite(got)).sum().item())
            errs.append(math.inf if bad else (got - ref).norm().item() / norm)
        return errs

    def exact_mismatches(self):
        """Elements of tcgemm's result that differ from the exact one on operands
        of small integers laid out as set 0's (the same shapes and strides,
        fresh allocations as the timed ones are): every fp32 sum is exact
        there, so the relative error's blind spot (a small wrong region of a
        large C) shows."""
        torch = self.torch

        def like(t):
            x = torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device)
            x.copy_(torch.randint(-3, 4, t.shape, device=t.device, generator=self.generator))
            return x

        a, b = like(self.a0), like(self.b0)
        got = self.tcgemm_module.matmul(a, b, out_dtype=self.out_dtype)
        want = torch.matmul(a.float(), b.float()).to(got.dtype)
        return int((got != want).sum().item())


def _elapsed_ms(torch, fn, count):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for i in range(count):
        fn(i)
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def _sampler(torch, fn, sets, launches, use_graph):
    """A function that enqueues one sample (`launches` calls) and whether it is a graph."""
    calls = [lambda i=i: fn(i % sets) for i in range(launches)]
    if use_graph:
        try:
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                for call in calls[:3]:
                    call()
            torch.cuda.current_stream().wait_stream(side)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                for call in calls:
                    call()
            return graph.replay, "graph"
        except RuntimeError as err:  # not capturable: launch directly
            print(f"  (CUDA graph capture failed, timing direct launches: {err})",
                  file=sys.stderr)
            torch.cuda.synchronize()

    def run():
        for call in calls:
            call()

    return run, "events"


def time_both(torch, c, warmup, iters, use_graphs):
    """Interleaved samples of tcgemm and torch: ([ms per launch] x 2, timing, launches)."""
    fns = (c.tcgemm, c.torch_fn)
    estimates = [_elapsed_ms(torch, lambda i, f=f: f(i % c.sets), warmup) / warmup
                 for f in fns]
    short = min(estimates) < SHORT_LAUNCH_MS
    launches = 1
    if short:
        launches = min(MAX_LAUNCHES_PER_SAMPLE,
                       max(1, math.ceil(MIN_SAMPLE_MS / max(min(estimates), 1e-4))))
    samplers = [_sampler(torch, f, c.sets, launches, short and use_graphs) for f in fns]
    timing = "+".join(sorted({kind for _, kind in samplers}))
    for run, _ in samplers:  # one untimed sample each (graph upload, allocator)
        run()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(iters)] for _ in fns]
    for it in range(iters):
        for j, (run, _) in enumerate(samplers):
            start, end = events[j][it]
            start.record()
            run()
            end.record()
    torch.cuda.synchronize()
    samples = [[s.elapsed_time(e) / launches for s, e in ev] for ev in events]
    return samples, timing, launches


def host_overhead_us(torch, fn, calls):
    """Microseconds to enqueue one call, from `calls` calls back to back (median of 3)."""
    results = []
    for _ in range(3):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(0)
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        results.append((t1 - t0) / calls * 1e6)
    return statistics.median(results)


def run_problem(torch, tcgemm, p, args, dtype, out_dtype, l2_bytes, generator):
    row = {"set": p.set, "m": p.m, "n": p.n, "k": p.k, "dtype": args.dtype,
           "out_dtype": args.out_dtype or args.dtype, "status": "ok"}
    c = Contenders(torch, tcgemm, p, dtype, out_dtype, l2_bytes, generator)
    row.update(layout=c.layout, torch_call=c.torch_call, l2_sets=c.sets)
    d = tcgemm.describe(c.a0, c.b0, out_dtype=out_dtype)
    row.update(kernel=d.kernel, config=d.config)
    err_tc, err_torch = c.rel_errors()
    row.update(tcgemm_rel_err=err_tc, torch_rel_err=err_torch)
    if not err_tc < TOLERANCE[row["out_dtype"]]:
        row["status"] = f"FAIL(rel_err {err_tc:.3g})"
        return row
    wrong = c.exact_mismatches()
    if wrong:
        row["status"] = f"FAIL(exact: {wrong} elements)"
        return row
    samples, timing, launches = time_both(torch, c, args.warmup, args.iters, not args.no_graphs)
    for name, s in zip(("tcgemm", "torch"), samples):
        median = statistics.median(s)
        row.update({f"{name}_ms": median, f"{name}_min_ms": min(s), f"{name}_max_ms": max(s),
                    f"{name}_tflops": p.flops / (median * 1e-3) / 1e12})
    row["ratio"] = row["tcgemm_tflops"] / row["torch_tflops"]
    row.update(timing=timing, launches_per_sample=launches)
    calls = max(10, min(args.overhead_calls, int(OVERHEAD_GPU_MS / max(row["torch_ms"], 1e-4))))
    row["tcgemm_overhead_us"] = host_overhead_us(torch, c.tcgemm, calls)
    row["torch_overhead_us"] = host_overhead_us(torch, c.torch_fn, calls)
    return row


# ---- output -------------------------------------------------------------------------


def _fmt(value, digits=3):
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.{digits}g}" if abs(value) < 1e-2 and value != 0 else f"{value:.{digits}f}"
    return str(value)


def print_table(rows, out=None):
    heads = ("set", "M", "N", "K", "tcgemm TF/s", "torch TF/s", "ratio", "tcgemm us/call",
             "torch us/call", "timing", "kernel", "status")
    keys = ("set", "m", "n", "k", "tcgemm_tflops", "torch_tflops", "ratio",
            "tcgemm_overhead_us", "torch_overhead_us", "timing", "kernel", "status")
    digits = {"tcgemm_tflops": 1, "torch_tflops": 1, "ratio": 3, "tcgemm_overhead_us": 1,
              "torch_overhead_us": 1}
    out = out or sys.stdout
    table = [heads] + [tuple(_fmt(r.get(k), digits.get(k, 3)) for k in keys) for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(heads))]
    for line in table:
        print("  ".join(cell.rjust(w) if i and i < 10 else cell.ljust(w)
                        for i, (cell, w) in enumerate(zip(line, widths))).rstrip(), file=out)


def write_csv(path, rows, header_lines):
    import csv

    with open(path, "w", newline="") as f:
        for line in header_lines:
            f.write(f"# {line}\n")
        writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                             for k, v in r.items()})


def write_plot(path, rows, title):
    """TFLOP/s against size: squares against N, llm against M per (N, K)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("tcgemm.bench: matplotlib is not installed; no plot", file=sys.stderr)
        return False
    ok = [r for r in rows if r.get("status") == "ok"]
    sets = [s for s in SETS if any(r["set"] == s for r in ok)]
    if not sets:
        return False
    fig, axes = plt.subplots(1, len(sets), figsize=(7 * len(sets), 5), squeeze=False)
    for ax, s in zip(axes[0], sets):
        mine = [r for r in ok if r["set"] == s]
        if s == "squares":
            xs = [r["m"] for r in mine]
            ax.plot(xs, [r["tcgemm_tflops"] for r in mine], "o-", label="tcgemm.matmul")
            ax.plot(xs, [r["torch_tflops"] for r in mine], "s--", label="torch.matmul")
            ax.set_xlabel("M = N = K")
            ax.set_title("squares (all row-major)")
        else:
            for n, k in LLM_PROJECTIONS:
                group = [r for r in mine if (r["n"], r["k"]) == (n, k)]
                if not group:
                    continue
                xs = [r["m"] for r in group]
                line, = ax.plot(xs, [r["tcgemm_tflops"] for r in group], "o-",
                                label=f"tcgemm N={n} K={k}")
                ax.plot(xs, [r["torch_tflops"] for r in group], "s--", color=line.get_color(),
                        label=f"F.linear N={n} K={k}")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("M (tokens)")
            ax.set_title("llm: x[M, K] @ W[N, K]^T")
        ax.set_ylabel("TFLOP/s")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import torch
    except ImportError:
        print("tcgemm.bench: needs torch (pip install torch)", file=sys.stderr)
        return 2
    import tcgemm

    if not torch.cuda.is_available():
        print("tcgemm.bench: no CUDA device", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    dtypes = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
    dtype = dtypes[args.dtype]
    out_dtype = dtypes[args.out_dtype or args.dtype]
    device = torch.cuda.current_device()
    props = torch.cuda.get_device_properties(device)
    l2_bytes = tcgemm._C.l2_bytes(device) or getattr(props, "L2_cache_size", 0)
    generator = torch.Generator(device="cuda").manual_seed(args.seed)
    header = [
        f"tcgemm.bench {tcgemm.__version__}: {' '.join(['python -m tcgemm.bench'] + sys.argv[1:])}"
        if argv is None else f"tcgemm.bench {tcgemm.__version__}: main({argv})",
        f"date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
        f"gpu {props.name}, {props.multi_processor_count} SMs, L2 {l2_bytes} bytes",
        f"torch {torch.__version__} (CUDA {torch.version.cuda}), python {sys.version.split()[0]}",
        f"seed {args.seed}; timing: CUDA events, interleaved, median of {args.iters} samples "
        f"after {args.warmup} warm-up launches, L2 rotation over > {L2_MULTIPLE}x L2, "
        f"short problems as CUDA graphs of launches ({'off' if args.no_graphs else 'on'})",
    ]
    for line in header:
        print(line, file=sys.stderr)
    rows = []
    for p in problems(args):
        print(f"{p.set} {p.m} x {p.n} x {p.k} ...", file=sys.stderr, flush=True)
        try:
            row = run_problem(torch, tcgemm, p, args, dtype, out_dtype, l2_bytes, generator)
        except (tcgemm.TcgemmError, RuntimeError) as err:  # out of memory, say
            row = {"set": p.set, "m": p.m, "n": p.n, "k": p.k, "dtype": args.dtype,
                   "status": f"error: {err}".replace("\n", " ")[:200]}
            torch.cuda.synchronize()
        rows.append(row)
        torch.cuda.empty_cache()
    if args.csv:
        write_csv(args.csv, rows, header)
    if args.plot:
        write_plot(args.plot, rows, f"{props.name}: tcgemm.matmul vs torch, {args.dtype}")
    print_table(rows)
    return 0 if all(r.get("status") == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
