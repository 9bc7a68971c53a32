#!/usr/bin/env python3
"""Compare python -m tcgemm.bench against tcgemm-bench on the same problems.

    scripts/compare_python_cpp.py [--min-ms MS] [--within PCT] [--out DIR] CSV [CSV ...]

Each CSV is either a python -m tcgemm.bench CSV (columns set, m, n, k, ...,
tcgemm_ms, torch_ms, ratio, status) or a tcgemm-bench CSV (columns M, N, K,
batch, ..., layout, ..., kernel, config, median_ms, ..., ratio, ..., status);
the header row says which. Lines starting with '#' are skipped (both tools
write their run's description there), and so is a repeated column row, so
files of several runs may be concatenated. Problems are matched as the two
benches define them: Python's squares (all row-major torch.matmul) are the
C++ layout ttr, its llm set (F.linear, x[M, K] @ W[N, K]^T) the layout tnr,
with the same M, N, K and dtypes. Of the C++ rows only the `tcgemm` row is
read (the dispatcher, as tcgemm.matmul calls it; its cuBLAS time follows from
its cublas_tflops), and only for a single GEMM (batch 1, no offset, tight
leading dimensions, alpha 1, beta 0).

A problem's k-th occurrence in a tool's files (in the order given) is that
tool's round k; every number is the mean over the rounds, and the table also
gives each round's ratio, so drift between rounds shows. Problems whose
tcgemm time in the C++ bench (mean over its rounds) is at most --min-ms
(default 1 ms) are left out and listed.

Per problem: both ratios (Python: tcgemm against torch; C++: tcgemm against
cuBLAS), their difference (Python ratio / C++ ratio - 1, in percent), the
tcgemm time in Python against C++ (what the Python path adds), the torch time
against cuBLAS's (the two baselines), and whether both ran the same kernel
configuration. Then one line: how many problems are within --within percent
(default 2) and the worst difference. With --out, the table goes to
DIR/compare.txt and the rows to DIR/compare.csv as well as to stdout.

Exit status: 0 the comparison was made (whether or not every problem is
within the bound: it is a measurement); 1 no problem could be compared; 2 a
usage error, or a file that is unreadable, of neither kind, or malformed.
"""

import argparse
import csv
import math
import os
import statistics
import sys

PY_COLUMNS = ("set", "m", "n", "k", "dtype", "out_dtype", "kernel", "config", "tcgemm_ms",
              "torch_ms", "ratio", "status")
CPP_COLUMNS = ("M", "N", "K", "batch", "dtype", "out_dtype", "layout", "lda", "ldb", "ldc",
               "offset", "kernel", "config", "median_ms", "cublas_tflops", "ratio", "status",
               "alpha", "beta")
# python -m tcgemm.bench's sets and the C++ layout (op(A), op(B), C storage) of each.
PY_SET_LAYOUT = {"squares": "ttr", "llm": "tnr"}
CPP_ROW = "tcgemm"  # the dispatcher's row in tcgemm-bench
ROUND_MARK = "# python-cpp-compare:"  # lines scripts/python-cpp-compare adds between runs

CSV_OUT_COLUMNS = (
    "set", "m", "n", "k", "cpp_layout", "dtype", "out_dtype", "py_rounds", "cpp_rounds",
    "py_ratio", "cpp_ratio", "ratio_diff_pct", "within", "py_ratio_rounds", "cpp_ratio_rounds",
    "py_tcgemm_ms", "cpp_tcgemm_ms", "tcgemm_py_vs_cpp_pct", "torch_ms", "cublas_ms",
    "torch_vs_cublas_pct", "cpp_sm_clock_mhz", "same_config", "py_config", "cpp_config")


class InputError(Exception):
    """A file that cannot be read or is malformed: exit status 2."""


def _data_lines(f, numbers):
    """The lines of f that are not '#' comments; records each one's line number."""
    for number, line in enumerate(f, 1):
        if line.startswith("#"):
            continue
        numbers.append(number)
        yield line


def read_csv(path):
    """(kind, rows, comments): kind 'python' or 'cpp'; rows as dicts with '_line'."""
    try:
        with open(path, newline="") as f:
            text = f.read().splitlines(keepends=True)
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from err
    except UnicodeDecodeError as err:
        raise InputError(f"{path}: not a text file ({err.reason})") from err
    comments = [line.rstrip("\r\n") for line in text if line.startswith("#")]
    numbers = []
    reader = csv.reader(_data_lines(text, numbers))
    try:
        header = next(reader, None)
        if header is None:
            raise InputError(f"{path}: no column row (empty, or only '#' lines)")
        columns = set(header)
        if {"set", "tcgemm_ms"} <= columns:
            kind, required = "python", PY_COLUMNS
        elif {"M", "median_ms"} <= columns:
            kind, required = "cpp", CPP_COLUMNS
        else:
            raise InputError(f"{path}: neither a python -m tcgemm.bench nor a tcgemm-bench CSV "
                             f"(columns: {','.join(header[:8])}...)")
        missing = [c for c in required if c not in columns]
        if missing:
            raise InputError(f"{path}: a {kind} CSV without the columns {', '.join(missing)}")
        rows = []
        for fields in reader:
            line = numbers[-1] if numbers else 0
            if not fields or fields == header:  # blank, or the column row of a concatenated run
                continue
            if len(fields) != len(header):
                raise InputError(f"{path}:{line}: {len(fields)} fields, the column row has "
                                 f"{len(header)}")
            row = dict(zip(header, fields))
            row["_line"] = line
            rows.append(row)
    except csv.Error as err:
        raise InputError(f"{path}:{numbers[-1] if numbers else 0}: {err}") from err
    return kind, rows, comments


def _int(path, row, column):
    try:
        return int(row[column])
    except ValueError:
        raise InputError(f"{path}:{row['_line']}: {column} = {row[column]!r} is not an "
                         f"integer") from None


def _float(path, row, column, positive=True):
    try:
        value = float(row[column])
    except ValueError:
        raise InputError(f"{path}:{row['_line']}: {column} = {row[column]!r} is not a "
                         f"number") from None
    if not math.isfinite(value) or (positive and value <= 0):
        raise InputError(f"{path}:{row['_line']}: {column} = {row[column]!r} is not a positive "
                         f"finite number")
    return value


class Problem:
    """One problem's samples from both tools, one per round."""

    def __init__(self, key):
        self.key = key  # (m, n, k, layout, dtype, out_dtype)
        self.set = {"ttr": "squares", "tnr": "llm"}.get(key[3], "")
        self.py = []  # dicts: ratio, tcgemm_ms, torch_ms, config
        self.cpp = []  # dicts: ratio, tcgemm_ms, cublas_ms, config, sm_clock_mhz
        self.not_ok = []  # "python: FAIL(...)" etc.

    @property
    def flops(self):
        m, n, k = self.key[:3]
        return 2.0 * m * n * k

    def name(self):
        m, n, k = self.key[:3]
        shape = f"{m}^3" if m == n == k else f"{m}x{n}x{k}"
        return f"{self.set} {shape}" if self.set else shape


def add_python(problems, path, rows):
    for row in rows:
        set_name = row["set"]
        if set_name not in PY_SET_LAYOUT:
            raise InputError(f"{path}:{row['_line']}: unknown set {set_name!r} (python -m "
                             f"tcgemm.bench has {', '.join(PY_SET_LAYOUT)})")
        m, n, k = (_int(path, row, c) for c in ("m", "n", "k"))
        out_dtype = row["out_dtype"] or row["dtype"]  # an error row leaves it empty
        key = (m, n, k, PY_SET_LAYOUT[set_name], row["dtype"], out_dtype)
        p = problems.setdefault(key, Problem(key))
        if row["status"] != "ok":
            p.not_ok.append(f"python: {row['status']}")
            continue
        tcgemm_ms = _float(path, row, "tcgemm_ms")
        torch_ms = _float(path, row, "torch_ms")
        p.py.append({"ratio": _float(path, row, "ratio"), "tcgemm_ms": tcgemm_ms,
                     "torch_ms": torch_ms, "config": _config(row["kernel"], row["config"])})


def _config(kernel, config):
    """tcgemm.describe's (kernel, config) as tcgemm-bench's config column writes them."""
    if not config:
        return kernel
    return f"{kernel}: {config}" if kernel else config


def _tight(layout, m, n, k):
    """The tight (lda, ldb, ldc) of a layout name such as tnr."""
    a = k if layout[0] == "t" else m  # row-major A[M, K]: ld = K
    b = n if layout[1] == "t" else k  # row-major B[K, N]: ld = N
    c = n if layout[2:] == "r" else m  # row-major C[M, N]: ld = N
    return a, b, c


def add_cpp(problems, path, rows):
    for row in rows:
        if row["kernel"] != CPP_ROW:
            continue  # cuBLAS, registry kernels: the tcgemm row carries cuBLAS's time
        m, n, k = (_int(path, row, c) for c in ("M", "N", "K"))
        layout = row["layout"]
        if len(layout) not in (2, 3) or any(ch not in "nt" for ch in layout[:2]) or \
                layout[2:] not in ("", "c", "r"):
            raise InputError(f"{path}:{row['_line']}: layout {layout!r} is not a tcgemm-bench "
                             f"layout (tn, nn, ..., tnr)")
        single = (_int(path, row, "batch") == 1 and _int(path, row, "offset") == 0 and
                  (_int(path, row, "lda"), _int(path, row, "ldb"), _int(path, row, "ldc")) ==
                  _tight(layout, m, n, k) and
                  _float(path, row, "alpha", positive=False) == 1.0 and
                  _float(path, row, "beta", positive=False) == 0.0)
        if not single:
            continue  # not a problem python -m tcgemm.bench runs
        key = (m, n, k, layout, row["dtype"], row["out_dtype"])
        p = problems.setdefault(key, Problem(key))
        if row["status"] != "ok":
            p.not_ok.append(f"C++: {row['status']}")
            continue
        tcgemm_ms = _float(path, row, "median_ms")
        cublas_ms = p.flops / (_float(path, row, "cublas_tflops") * 1e9)
        clock = _float(path, row, "sm_clock_mhz") if row.get("sm_clock_mhz") else None
        p.cpp.append({"ratio": _float(path, row, "ratio"), "tcgemm_ms": tcgemm_ms,
                      "cublas_ms": cublas_ms, "config": row["config"], "sm_clock_mhz": clock})


def _mean(samples, field):
    values = [s[field] for s in samples if s[field] is not None]
    return statistics.fmean(values) if values else None


def _pct(a, b):
    return (a / b - 1.0) * 100.0


def summarize(p, within):
    py_ratio, cpp_ratio = _mean(p.py, "ratio"), _mean(p.cpp, "ratio")
    diff = _pct(py_ratio, cpp_ratio)
    py_tc, cpp_tc = _mean(p.py, "tcgemm_ms"), _mean(p.cpp, "tcgemm_ms")
    torch_ms, cublas_ms = _mean(p.py, "torch_ms"), _mean(p.cpp, "cublas_ms")
    py_configs = sorted({s["config"] for s in p.py})
    cpp_configs = sorted({s["config"] for s in p.cpp})
    clock = _mean(p.cpp, "sm_clock_mhz")
    m, n, k, layout, dtype, out_dtype = p.key
    return {
        "set": p.set, "m": m, "n": n, "k": k, "cpp_layout": layout, "dtype": dtype,
        "out_dtype": out_dtype, "py_rounds": len(p.py), "cpp_rounds": len(p.cpp),
        "py_ratio": py_ratio, "cpp_ratio": cpp_ratio, "ratio_diff_pct": diff,
        "within": "yes" if abs(diff) <= within else "no",
        "py_ratio_rounds": " ".join(f"{s['ratio']:.4f}" for s in p.py),
        "cpp_ratio_rounds": " ".join(f"{s['ratio']:.4f}" for s in p.cpp),
        "py_tcgemm_ms": py_tc, "cpp_tcgemm_ms": cpp_tc,
        "tcgemm_py_vs_cpp_pct": _pct(py_tc, cpp_tc),
        "torch_ms": torch_ms, "cublas_ms": cublas_ms,
        "torch_vs_cublas_pct": _pct(torch_ms, cublas_ms),
        "cpp_sm_clock_mhz": round(clock) if clock is not None else "",
        "same_config": "yes" if py_configs == cpp_configs else "no",
        "py_config": " | ".join(py_configs), "cpp_config": " | ".join(cpp_configs),
        "_name": p.name(),
    }


def render_table(rows):
    heads = ("problem", "C++", "py ratio", "C++ ratio", "diff", "py rounds", "C++ rounds",
             "tcgemm ms py", "C++", "py-C++", "torch ms", "cuBLAS ms", "torch-cuBLAS", "config")
    lines = [heads]
    for r in rows:
        lines.append((
            r["_name"], r["cpp_layout"], f"{r['py_ratio']:.3f}", f"{r['cpp_ratio']:.3f}",
            f"{r['ratio_diff_pct']:+.2f}%", r["py_ratio_rounds"] or "-",
            r["cpp_ratio_rounds"] or "-", f"{r['py_tcgemm_ms']:.4f}",
            f"{r['cpp_tcgemm_ms']:.4f}", f"{r['tcgemm_py_vs_cpp_pct']:+.2f}%",
            f"{r['torch_ms']:.4f}", f"{r['cublas_ms']:.4f}", f"{r['torch_vs_cublas_pct']:+.2f}%",
            "same" if r["same_config"] == "yes" else "DIFFERS"))
    widths = [max(len(line[i]) for line in lines) for i in range(len(heads))]
    left = {0, 1, 5, 6, 13}
    return ["  ".join(cell.ljust(w) if i in left else cell.rjust(w)
                      for i, (cell, w) in enumerate(zip(line, widths))).rstrip()
            for line in lines]


def run_lines(marks):
    """The '# python-cpp-compare:' lines, one run of a tool's round (its first three
    words: 'round 1 tcgemm-bench') as its first and last line."""
    groups = []
    for mark in marks:
        head = " ".join(mark.split()[:3])
        if groups and groups[-1][0] == head:
            groups[-1][1].append(mark)
        else:
            groups.append((head, [mark]))
    lines = []
    for _, group in groups:
        lines.append(f"  {group[0]}")
        if len(group) > 1:
            lines.append(f"    ... {len(group)} runs, the last: {group[-1]}")
    return lines


def _some(items, sep, most=12):
    """items joined by sep, the first `most` of them and how many more."""
    shown = sep.join(items[:most])
    return shown + (f"{sep}and {len(items) - most} more" if len(items) > most else "")


def _fmt_csv(value):
    return f"{value:.6g}" if isinstance(value, float) else value


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="scripts/compare_python_cpp.py",
        description="python -m tcgemm.bench's ratio against torch beside tcgemm-bench's "
                    "tcgemm-row ratio against cuBLAS, problem by problem (see the source's "
                    "docstring).")
    ap.add_argument("csv", nargs="+", help="CSVs of either tool, in round order")
    ap.add_argument("--min-ms", type=float, default=1.0,
                    help="keep problems whose C++ tcgemm time is above this (default 1)")
    ap.add_argument("--within", type=float, default=2.0,
                    help="the bound on |ratio difference| in percent (default 2)")
    ap.add_argument("--out", default=None,
                    help="also write DIR/compare.txt (the table) and DIR/compare.csv")
    args = ap.parse_args(argv)
    if not (args.min_ms >= 0 and args.within >= 0):
        ap.error("--min-ms and --within must be >= 0")
    if args.out and not os.path.isdir(args.out):
        ap.error(f"--out {args.out}: not a directory")

    problems = {}
    inputs = []  # one line per file
    marks = []  # the '# python-cpp-compare:' lines: when each run started, the GPU's state
    kinds = set()
    try:
        for path in args.csv:
            kind, rows, comments = read_csv(path)
            kinds.add(kind)
            (add_python if kind == "python" else add_cpp)(problems, path, rows)
            tool = "python -m tcgemm.bench" if kind == "python" else "tcgemm-bench"
            gpu = next((c[2:] for c in comments if c.startswith(("# gpu ", "# GPU "))), "")
            inputs.append(f"  {path}: {tool}, {len(rows)} rows" + (f"; {gpu}" if gpu else ""))
            marks += [c[len(ROUND_MARK):].strip() for c in comments if c.startswith(ROUND_MARK)]
    except InputError as err:
        print(f"compare_python_cpp: {err}", file=sys.stderr)
        return 2
    both = [p for p in problems.values() if p.py and p.cpp]
    # In the order the files first name them (python -m tcgemm.bench's order when its CSV
    # comes first).
    kept = [p for p in both if _mean(p.cpp, "tcgemm_ms") > args.min_ms]
    short = sorted((p for p in both if p not in kept), key=lambda p: p.flops)
    one_side = sorted((p for p in problems.values() if not (p.py and p.cpp)),
                      key=lambda p: p.flops)
    rows = [summarize(p, args.within) for p in kept]

    out = [
        "python -m tcgemm.bench (tcgemm.matmul against torch) beside tcgemm-bench's tcgemm row "
        "(against cuBLAS)",
        f"problems whose C++ tcgemm time is over {args.min_ms:g} ms; every number is the mean "
        "over rounds",
        "diff = py ratio / C++ ratio - 1 (about torch-cuBLAS minus py-C++); py-C++: tcgemm's "
        "time in Python against C++; torch-cuBLAS: the two baselines",
        "inputs:",
        *inputs,
    ]
    if marks:
        out += ["runs (start, GPU state):", *run_lines(marks)]
    out.append("")
    if rows:
        out += render_table(rows)
    elif len(kinds) < 2:
        out.append(f"no problem to compare: the files are all {kinds.pop()} CSVs")
    elif both:
        out.append(f"no problem to compare: none with tcgemm over {args.min_ms:g} ms")
    else:
        out.append("no problem to compare: none is in both tools' files")
    if short:
        out.append(f"left out, tcgemm at most {args.min_ms:g} ms in C++: " + _some(
            [f"{p.name()} ({_mean(p.cpp, 'tcgemm_ms'):.3f} ms)" for p in short], ", "))
    if one_side:
        out.append("in one tool's files only (or not ok in the other): " + _some(
            [f"{p.name()} {p.key[3]} {p.key[4]}>{p.key[5]} "
             f"(python {len(p.py)}, C++ {len(p.cpp)} ok rows"
             f"{': ' + ', '.join(p.not_ok) if p.not_ok else ''})" for p in one_side], "; "))
    failed = [p for p in both if p.not_ok]
    if failed:
        out.append("rows not ok (left out of the means): " + "; ".join(
            f"{p.name()}: {', '.join(p.not_ok)}" for p in failed))
    if rows:
        worst = max(rows, key=lambda r: abs(r["ratio_diff_pct"]))
        inside = sum(r["within"] == "yes" for r in rows)
        out.append(f"within {args.within:g}%: {inside} of {len(rows)} problems; worst difference "
                   f"{worst['ratio_diff_pct']:+.2f}% ({worst['_name']} {worst['cpp_layout']}: "
                   f"py {worst['py_ratio']:.3f}, C++ {worst['cpp_ratio']:.3f})")

    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if args.out:
        try:
            with open(os.path.join(args.out, "compare.txt"), "w") as f:
                f.write(text)
            with open(os.path.join(args.out, "compare.csv"), "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=CSV_OUT_COLUMNS, extrasaction="ignore",
                                        lineterminator="\n")
                writer.writeheader()
                for r in rows:
                    writer.writerow({k: _fmt_csv(v) for k, v in r.items()})
        except OSError as err:
            print(f"compare_python_cpp: cannot write to {args.out}: {err}", file=sys.stderr)
            return 2
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main())
