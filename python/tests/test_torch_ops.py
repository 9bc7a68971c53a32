"""tcgemm.torch: the custom ops in eager mode, torch.compile(fullgraph=True)
and CUDA graphs, autograd, and the routing scope."""

import gc
import os

import pytest

if os.environ.get("TCGEMM_REQUIRE_GPU", "") not in ("", "0"):
    import torch  # the GPU machine (conftest.py): no torch is a failure, not a skip
else:
    torch = pytest.importorskip("torch")
import tcgemm  # noqa: E402
import tcgemm.torch as tt  # noqa: E402

from helpers import assert_exact, ints, reference  # noqa: E402


# ---- without a GPU: registration and fake (meta) shapes -------------------------------


def test_ops_are_registered():
    assert hasattr(torch.ops.tcgemm, "matmul")
    assert hasattr(torch.ops.tcgemm, "matmul_out")


@pytest.mark.parametrize("a_shape, b_shape, want", [
    ((8, 4), (4, 6), (8, 6)),
    ((3, 8, 4), (4, 6), (3, 8, 6)),
    ((2, 1, 8, 4), (5, 4, 6), (2, 5, 8, 6)),
    ((4,), (4, 6), (6,)),
    ((3, 8, 4), (4,), (3, 8)),
])
def test_fake_implementation_gives_matmuls_shape(a_shape, b_shape, want):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        a = torch.empty(a_shape, dtype=torch.bfloat16)
        b = torch.empty(b_shape, dtype=torch.bfloat16)
        y = torch.ops.tcgemm.matmul(a, b)
        y32 = torch.ops.tcgemm.matmul(a, b, 1.0, torch.float32)
    assert tuple(y.shape) == want and y.dtype == torch.bfloat16
    assert y32.dtype == torch.float32


def test_routing_leaves_cpu_and_fp32_to_torch():
    x = torch.randn(8, 4)
    w = torch.randn(6, 4)
    with tt.routing() as scope:
        y = torch.nn.functional.linear(x, w)
        z = x @ w.mT
        h = torch.matmul(x.bfloat16(), w.mT.bfloat16())  # CPU bf16
    assert scope.routed == 0 and scope.fallbacks == 3
    assert torch.allclose(y, z)
    assert h.dtype == torch.bfloat16


# ---- on the GPU ------------------------------------------------------------------------


def test_op_matches_tcgemm_matmul(torch_cuda):
    a, b = ints(torch, 4, 96, 64), ints(torch, 64, 80)
    assert_exact(torch, tt.matmul(a, b), reference(torch, a, b, torch.bfloat16))
    y32 = tt.matmul(a, b, out_dtype=torch.float32, alpha=2.0)
    assert_exact(torch, y32, reference(torch, a, b, torch.float32, alpha=2.0))


def test_matmul_out_op(torch_cuda):
    a, b = ints(torch, 96, 64), ints(torch, 64, 80)
    c0 = ints(torch, 96, 80, dtype=torch.float32)
    out = c0.clone()
    assert tt.matmul_out(a, b, out, alpha=0.5, beta=-1.0) is out
    assert_exact(torch, out, reference(torch, a, b, torch.float32, 0.5, -1.0, c0))


def test_linear_matches_f_linear(torch_cuda):
    # K = 16 keeps x @ w.T + bias within bf16's exact integers, so rounding
    # the product and then the sum equals rounding once.
    x, w = ints(torch, 3, 17, 16), ints(torch, 48, 16)
    bias = ints(torch, 48)
    want = torch.nn.functional.linear(x.float(), w.float(), bias.float()).to(torch.bfloat16)
    assert_exact(torch, tt.linear(x, w, bias), want)


def test_torch_compile_fullgraph_matches_eager(torch_cuda):
    def f(x, w1, w2):
        h = tt.matmul(x, w1)
        h = torch.relu(h)
        return tt.linear(h, w2)

    def expected(x, w1, w2):  # torch's fp32 products, each rounded to bf16 once
        h = torch.relu(reference(torch, x, w1, torch.bfloat16))
        return reference(torch, h, w2.T, torch.bfloat16)

    compiled = torch.compile(f, fullgraph=True)
    x, w1, w2 = ints(torch, 64, 128), ints(torch, 128, 96), ints(torch, 32, 96)
    assert_exact(torch, f(x, w1, w2), expected(x, w1, w2))
    assert_exact(torch, compiled(x, w1, w2), expected(x, w1, w2))
    x2 = ints(torch, 40, 128)  # another M: a recompile or a dynamic shape
    assert_exact(torch, compiled(x2, w1, w2), expected(x2, w1, w2))


def test_torch_compile_of_the_out_op(torch_cuda):
    def f(a, b, c):
        tt.matmul_out(a, b, c, alpha=1.0, beta=1.0)
        return c * 2

    a, b = ints(torch, 64, 32), ints(torch, 32, 48)
    c1 = ints(torch, 64, 48, dtype=torch.float32)
    c2 = c1.clone()
    c_want = reference(torch, a, b, torch.float32, 1.0, 1.0, c1)
    assert_exact(torch, f(a, b, c1), c_want * 2)  # eager
    assert_exact(torch, c1, c_want)
    assert_exact(torch, torch.compile(f, fullgraph=True)(a, b, c2), c_want * 2)
    assert_exact(torch, c2, c_want)


def test_cuda_graph_replay_matches_eager(torch_cuda):
    a, b = ints(torch, 256, 192), ints(torch, 192, 320)
    c = torch.zeros(256, 320, device="cuda", dtype=torch.float32)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm up outside the capture, as torch asks
        for _ in range(3):
            y = tt.matmul(a, b)
            tt.matmul_out(a, b, c)
    torch.cuda.current_stream().wait_stream(side)

    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = tt.matmul(a, b)
        tt.matmul_out(a, b, c, alpha=1.0, beta=1.0)
    # New inputs in place, then replay: the graph reads them.
    a.copy_(ints(torch, 256, 192))
    b.copy_(ints(torch, 192, 320))
    c.zero_()
    graph.replay()
    torch.cuda.synchronize()
    assert_exact(torch, y, reference(torch, a, b, torch.bfloat16))
    assert_exact(torch, c, reference(torch, a, b, torch.float32))
    graph.replay()  # c += a @ b again
    torch.cuda.synchronize()
    assert_exact(torch, c, reference(torch, a, b, torch.float32, 2.0))


def test_cuda_graph_of_a_repacked_problem(torch_cuda):
    # An odd leading dimension: the production family repacks through
    # stream-ordered scratch, which the capture must hold too.
    a = ints(torch, 128, 65)[:, :63]
    b = ints(torch, 63, 96)
    for _ in range(2):
        tt.matmul(a, b)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = tt.matmul(a, b)
    # Only the replay may write y: work done beside the capture would leave
    # the NaNs in place.
    y.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert_exact(torch, y, reference(torch, a, b, torch.bfloat16))


def test_cuda_graph_keeps_the_plan_it_replays(torch_cuda):
    # Calls on the capture stream before the capture leave a remembered plan
    # for the problem, which the capture then records, workspace and all (a
    # repacked A: the plan owns its scratch). The cache of plans, cleared
    # when full, must not free that plan under the graph.
    from tcgemm import _matmul

    a = ints(torch, 128, 65)[:, :63]
    b = ints(torch, 63, 96)
    _matmul._TORCH_PLANS.clear()  # this test's warm-up makes the plan, whatever ran before
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(2):
            tt.matmul(a, b)
    side.synchronize()
    pinned_before = set(_matmul._CAPTURED_PLANS)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side):
        y = tt.matmul(a, b)
    assert set(_matmul._CAPTURED_PLANS) - pinned_before, "the capture ran no remembered plan"
    with torch.cuda.stream(side):  # an eager call after the capture: a plan of its own
        eager = tt.matmul(a, b)
    side.synchronize()
    assert_exact(torch, eager, reference(torch, a, b, torch.bfloat16))
    _matmul._TORCH_PLANS.clear()  # what a full cache does
    gc.collect()
    a.copy_(ints(torch, 128, 65)[:, :63])
    graph.replay()
    torch.cuda.synchronize()
    assert_exact(torch, y, reference(torch, a, b, torch.bfloat16))


def test_autograd_matches_torch(torch_cuda):
    # Small integers, K = 16 and 24: every product and gradient sum is exact
    # in fp32, and y = 0.5 x @ w (multiples of 0.5 up to 72) and dy = 2y are
    # exact in bf16, so both sides round each gradient once, identically.
    x = ints(torch, 3, 40, 16).requires_grad_()
    w = ints(torch, 16, 24).requires_grad_()
    tt.matmul(x, w, alpha=0.5).float().square().sum().backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    (0.5 * torch.matmul(x.float(), w.float())).to(torch.bfloat16).float().square().sum().backward()
    assert_exact(torch, gx, x.grad)
    assert_exact(torch, gw, w.grad)


def test_routing_sends_matmul_and_linear_to_tcgemm(torch_cuda):
    x, w = ints(torch, 2, 33, 64), ints(torch, 48, 64)
    m = ints(torch, 64, 16)
    with tt.routing() as scope:
        y1 = torch.nn.functional.linear(x, w)
        y2 = torch.matmul(x, m)
        y3 = x @ m
        y4 = torch.mm(x[0], m)
        y5 = torch.bmm(x, m.expand(2, 64, 16))
        y6 = torch.matmul(x.float(), m.float())  # fp32: torch's
    assert scope.routed == 5 and scope.fallbacks == 1
    assert_exact(torch, y1, reference(torch, x, w.mT, torch.bfloat16))
    for y in (y2, y3, y5):
        assert_exact(torch, y, reference(torch, x, m, torch.bfloat16))
    assert_exact(torch, y4, reference(torch, x[0], m, torch.bfloat16))
    assert y6.dtype == torch.float32


def test_routing_falls_back_for_layouts_tcgemm_cannot_read(torch_cuda):
    x = ints(torch, 64, 64)[::2, ::2]  # no unit stride
    m = ints(torch, 32, 16)
    with tt.routing() as scope:
        y = torch.matmul(x, m)
    assert scope.routed == 0 and scope.fallbacks == 1
    assert torch.equal(y, torch.matmul(x, m))


def test_routing_inside_a_module(torch_cuda):
    layer = torch.nn.Linear(64, 32, bias=True, device="cuda", dtype=torch.float16)
    x = torch.randn(8, 64, device="cuda", dtype=torch.float16)
    want = layer(x)
    with tt.routing() as scope, torch.no_grad():
        got = layer(x)
    assert scope.routed == 1
    assert ((got.float() - want.float()).norm() / want.float().norm()).item() < 1e-2
