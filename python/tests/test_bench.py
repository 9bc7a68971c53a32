"""python -m tcgemm.bench without a GPU: its sets, its table, CSV and plot."""

import os
import re

import pytest

from tcgemm import bench

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fake_row(set_name, m, n, k, ratio=1.0):
    return {"set": set_name, "m": m, "n": n, "k": k, "dtype": "bf16", "out_dtype": "bf16",
            "layout": "row-major A, B, C", "torch_call": "torch.matmul", "kernel": "prod",
            "config": "tile 128x256, stages 4", "tcgemm_ms": 1.0, "torch_ms": ratio,
            "tcgemm_tflops": 500.0 * ratio, "torch_tflops": 500.0, "ratio": ratio,
            "tcgemm_overhead_us": 9.5, "torch_overhead_us": 6.25, "tcgemm_rel_err": 3e-3,
            "torch_rel_err": 3e-3, "timing": "events", "launches_per_sample": 1, "l2_sets": 1,
            "status": "ok"}


def test_default_sets_are_the_issues():
    args = bench.parse_args([])
    problems = bench.problems(args)
    squares = [(p.m, p.n, p.k) for p in problems if p.set == "squares"]
    assert squares == [(s, s, s) for s in (1024, 2048, 3072, 4096, 6144, 8192)]
    llm = [(p.m, p.n, p.k) for p in problems if p.set == "llm"]
    assert len(llm) == 40 and (16384, 28672, 8192) in llm and (1, 4096, 14336) in llm


def test_llm_set_matches_tcgemm_bench():
    path = os.path.join(REPO, "tools", "bench", "shapes.cpp")
    if not os.path.exists(path):
        pytest.skip("tools/bench/shapes.cpp is not in this tree")
    text = open(path).read()
    tokens = re.search(r"kTokens\s*=\s*\{([^}]*)\}", text)
    projections = re.search(r"kProjections\s*=(.*?);", text, re.S)
    if not tokens or not projections:
        pytest.skip("the llm set in shapes.cpp is not written as this test expects")
    assert tuple(int(v) for v in re.findall(r"\d+", tokens.group(1))) == bench.LLM_TOKENS
    pairs = re.findall(r"\{(\d+),\s*(\d+)\}", projections.group(1))
    assert tuple((int(n), int(k)) for n, k in pairs) == bench.LLM_PROJECTIONS


def test_arguments_are_checked():
    with pytest.raises(SystemExit):
        bench.parse_args(["--shapes", "cubes"])
    with pytest.raises(SystemExit):
        bench.parse_args(["--iters", "3"])
    args = bench.parse_args(["--shapes", "llm", "--tokens", "1,16"])
    assert [p.m for p in bench.problems(args)] == [1, 16] * 5


def test_table_and_csv(tmp_path, capsys):
    rows = [fake_row("squares", 1024, 1024, 1024), fake_row("llm", 16, 4096, 4096, 0.5),
            {"set": "llm", "m": 1, "n": 8192, "k": 28672, "status": "error: out of memory"}]
    bench.print_table(rows)
    out = capsys.readouterr().out
    assert "tcgemm us/call" in out and "error: out of memory" in out and "0.500" in out
    path = tmp_path / "b.csv"
    bench.write_csv(path, rows, ["gpu test", "seed 0"])
    assert "\r" not in path.read_text()  # plain lines: scripts grep them
    lines = path.read_text().splitlines()
    assert lines[0] == "# gpu test" and lines[2].startswith("set,m,n,k")
    assert lines[3].endswith(",ok") and len(lines) == 6


def test_plot(tmp_path):
    pytest.importorskip("matplotlib")
    rows = [fake_row("squares", s, s, s) for s in (1024, 2048)]
    rows += [fake_row("llm", m, 4096, 4096) for m in (1, 16, 128)]
    path = tmp_path / "b.png"
    assert bench.write_plot(path, rows, "test")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
