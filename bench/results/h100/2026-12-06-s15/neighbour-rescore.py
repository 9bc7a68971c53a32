#!/usr/bin/env python3
"""Would the tuned choice of the nearest tuned shape serve a shape the table
lacks better than the heuristic? Scored with no GPU on the tables'
measurements (session 15): for each shape, the nearest other shape of the
same layout and dtypes (sum of |log| ratios of M, N and K, within MAXDIST)
lends its tuned choice, timed from the shape's own candidates (the
heuristic's time where that choice is not among them).

    t="build/release/tcgemm-tune --report --rescore --model-sms 132"
    $t --out bench/results/h100/2026-12-05-s12/heldout.json --model-bytes-per-cycle 1693 \
        | grep -E '^[0-9]+x' > /tmp/heldout-rescore.txt
    $t --out data/tuned/nvidia-h100-80gb-hbm3.json --model-bytes-per-cycle 1693 \
        | grep -E '^[0-9]+x' > /tmp/h100-rescore.txt
    $t --out data/tuned/nvidia-h200.json --model-bytes-per-cycle 2483 \
        | grep -E '^[0-9]+x' > /tmp/h200-rescore.txt
    python3 bench/results/h100/2026-12-06-s15/neighbour-rescore.py   # from the repository root

Prints, per MAXDIST: geomean of the heuristic's time over the tuned one,
the same for the neighbour rule, the rule's worst, and on how many shapes
the neighbour's choice was used.
"""
import json
import math
import re

FILES = {  # table json, rescore output, whether a shape may lend to itself
    "heldout (H100 table lends)": ("bench/results/h100/2026-12-05-s12/heldout.json", "/tmp/heldout-rescore.txt"),
    "H100 table, leave one out": ("data/tuned/nvidia-h100-80gb-hbm3.json", "/tmp/h100-rescore.txt"),
    "H200 table, leave one out": ("data/tuned/nvidia-h200.json", "/tmp/h200-rescore.txt"),
}
LENDER = {"heldout (H100 table lends)": "data/tuned/nvidia-h100-80gb-hbm3.json"}


def shapes(path):
    return json.load(open(path))["shapes"]


def choice(c):
    return (c["config"], c["k_splits"], bool(c.get("split_tail")), bool(c.get("flipped")))


def rescored(path):
    out = {}
    for line in open(path):
        f = line.split()
        nums = [x for x in f if re.fullmatch(r"[0-9.]+", x)]
        out[(f[0], f[2])] = (float(nums[0]), float(nums[1]))  # tuned ms, heuristic ms
    return out


def score(lenders, tests, times, maxdist):
    heur, rule, used = [], [], 0
    for s in tests:
        tuned_ms, heur_ms = times[(f"{s['m']}x{s['n']}x{s['k']}", s["layout"])]
        best, dist = None, math.inf
        for t in lenders:
            if (t["layout"], t["dtype"], t.get("out_dtype")) != (s["layout"], s["dtype"], s.get("out_dtype")):
                continue
            if (t["m"], t["n"], t["k"]) == (s["m"], s["n"], s["k"]):
                continue
            d = sum(abs(math.log(t[x] / s[x])) for x in "mnk")
            if d < dist:
                best, dist = t, d
        ms = heur_ms
        if best is not None and dist <= maxdist:
            timed = {choice(c): c["ms"] for c in s["candidates"] if c.get("status") == "ok"}
            if choice(best["tuned"]) in timed:
                ms = timed[choice(best["tuned"])]
                used += 1
        heur.append(math.log(heur_ms / tuned_ms))
        rule.append(math.log(ms / tuned_ms))
    g = lambda v: math.exp(sum(v) / len(v))
    return g(heur), g(rule), math.exp(max(rule)), used, len(tests)


for maxdist in (0.6, 1.0, 1.5, math.inf):
    print(f"maxdist {maxdist}")
    for name, (path, rescore_out) in FILES.items():
        h, r, worst, used, n = score(shapes(LENDER.get(name, path)), shapes(path), rescored(rescore_out), maxdist)
        print(f"  {name}: heuristic {h:.3f}x, neighbour rule {r:.3f}x (worst {worst:.2f}x), "
              f"neighbour used on {used} of {n}")
