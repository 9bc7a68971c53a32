"""tcgemm.matmul on torch CUDA tensors against torch (needs an sm_90 GPU).

Most checks are exact: small-integer inputs, compared bit for bit with
torch's fp32 result rounded to the output dtype (helpers.py says why).
"""

import pytest
from helpers import assert_exact, ints, reference

import tcgemm

pytestmark = pytest.mark.usefixtures("torch_cuda")

SHAPES = [  # (M, N, K)
    (1, 1, 1),
    (1, 256, 512),  # M = 1: a vector of tokens
    (17, 9, 33),
    (64, 64, 64),
    (127, 65, 257),
    (256, 128, 1024),
    (1000, 1000, 8),
    (300, 520, 777),
]


def as_layout(torch, x, layout):
    """x's values, stored row-major ("r") or column-major ("c": a transposed view)."""
    return x.contiguous() if layout == "r" else x.mT.contiguous().mT


@pytest.mark.parametrize("m, n, k", SHAPES)
@pytest.mark.parametrize("layouts", ["rr", "rc", "cr", "cc"])
def test_layouts_are_exact(torch_cuda, m, n, k, layouts):
    torch = torch_cuda
    a = as_layout(torch, ints(torch, m, k), layouts[0])
    b = as_layout(torch, ints(torch, k, n), layouts[1])
    c = tcgemm.matmul(a, b)
    assert c.is_contiguous()
    ref = reference(torch, a, b, torch.bfloat16)
    assert_exact(torch, c, ref)
    # Into NaN: an element the kernel skips cannot pass as a stale result the
    # caching allocator handed back.
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tcgemm.matmul(a, b, out=out)
    assert_exact(torch, out, ref)


@pytest.mark.parametrize("in_dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("out_dtype", ["bfloat16", "float16", "float32"])
def test_dtypes_are_exact(torch_cuda, in_dtype, out_dtype):
    torch = torch_cuda
    dt_in, dt_out = getattr(torch, in_dtype), getattr(torch, out_dtype)
    a, b = ints(torch, 129, 257, dtype=dt_in), ints(torch, 257, 65, dtype=dt_in)
    c = tcgemm.matmul(a, b, out_dtype=dt_out)
    assert_exact(torch, c, reference(torch, a, b, dt_out))


def test_random_values_match_torch(torch_cuda):
    torch = torch_cuda
    a = torch.randn(512, 1024, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(1024, 768, device="cuda", dtype=torch.bfloat16)
    c = tcgemm.matmul(a, b, out_dtype=torch.float32)
    ref = torch.matmul(a.float(), b.float())
    assert (c - ref).norm() / ref.norm() < 1e-4
    c16 = tcgemm.matmul(a, b)
    assert ((c16.float() - ref).norm() / ref.norm()).item() < 1e-2


@pytest.mark.parametrize("pad", [8, 1])  # +8 keeps 16-byte rows, +1 breaks them (repacked)
def test_padded_leading_dimensions_from_slicing(torch_cuda, pad):
    torch = torch_cuda
    m, n, k = 200, 136, 72
    a = ints(torch, m, k + pad)[:, :k]
    b = ints(torch, n, k + pad)[:, :k].mT  # column-major with ld = k + pad
    # NaN everywhere: a skipped element of out, or a write into the padding
    # columns (a value the GEMM could produce), shows.
    out_big = torch.full((m, n + pad), float("nan"), device="cuda", dtype=torch.bfloat16)
    out = out_big[:, :n]
    tcgemm.matmul(a, b, out=out)
    assert_exact(torch, out, reference(torch, a, b, torch.bfloat16))
    assert bool(out_big[:, n:].isnan().all()), "wrote past out's columns"


def test_unaligned_base_pointers(torch_cuda):
    torch = torch_cuda
    a = ints(torch, 65 * 33 + 1)[1:].view(65, 33)  # 2-byte-aligned base
    b = ints(torch, 33 * 17 + 1)[1:].view(33, 17)
    assert_exact(torch, tcgemm.matmul(a, b), reference(torch, a, b, torch.bfloat16))


@pytest.mark.parametrize("a_shape, b_shape", [
    ((4, 64, 32), (4, 32, 48)),  # strided batch
    ((4, 64, 32), (32, 48)),  # a weight shared by the batch: stride 0
    ((64, 32), (3, 32, 48)),  # one activation against a batch of weights
    ((2, 3, 64, 32), (2, 3, 32, 48)),  # two batch dimensions, one stride each
    ((2, 1, 64, 32), (3, 32, 48)),  # broadcast in both: looped over the outer dimension
    ((5, 1, 16), (16, 24)),  # M = 1 in a batch
])
def test_batches_and_broadcasting_match_torch(torch_cuda, a_shape, b_shape):
    torch = torch_cuda
    a, b = ints(torch, *a_shape), ints(torch, *b_shape)
    c = tcgemm.matmul(a, b)
    assert_exact(torch, c, reference(torch, a, b, torch.bfloat16))


def test_batch_of_transposed_and_strided_views(torch_cuda):
    torch = torch_cuda
    a = ints(torch, 8, 32, 64)[::2].mT  # batch stride 2 * 32 * 64, column-major entries
    b = ints(torch, 4, 32, 40)[:, :, :24]  # padded rows
    c = tcgemm.matmul(a, b)
    assert_exact(torch, c, reference(torch, a, b, torch.bfloat16))


def test_vectors_follow_torch(torch_cuda):
    torch = torch_cuda
    v, w = ints(torch, 64), ints(torch, 64)
    mat = ints(torch, 64, 32)
    batch = ints(torch, 3, 16, 64)
    for x, y in [(v, mat), (mat.mT, v), (batch, v), (v, w)]:
        assert_exact(torch, tcgemm.matmul(x, y), reference(torch, x, y, torch.bfloat16))


@pytest.mark.parametrize("alpha, beta", [(1.0, 0.0), (2.0, 0.0), (0.5, 1.0), (1.0, -1.0),
                                         (-2.0, 0.5), (0.0, 2.0)])
def test_alpha_beta_with_out(torch_cuda, alpha, beta):
    torch = torch_cuda
    a, b = ints(torch, 96, 80), ints(torch, 80, 112)
    for dtype in (torch.bfloat16, torch.float32):
        c0 = ints(torch, 96, 112, dtype=dtype)
        out = c0.clone()
        result = tcgemm.matmul(a, b, out=out, alpha=alpha, beta=beta)
        assert result is out
        assert_exact(torch, out, reference(torch, a, b, dtype, alpha, beta, c0))


def test_column_major_out(torch_cuda):
    torch = torch_cuda
    a, b = ints(torch, 70, 40), ints(torch, 40, 90)
    out = torch.empty(90, 70, device="cuda", dtype=torch.float16).mT
    tcgemm.matmul(a.half(), b.half(), out=out)
    assert_exact(torch, out, reference(torch, a.half(), b.half(), torch.float16))


def test_k_zero_gives_zeros_and_scales_out(torch_cuda):
    torch = torch_cuda
    a = torch.empty(5, 0, device="cuda", dtype=torch.bfloat16)
    b = torch.empty(0, 7, device="cuda", dtype=torch.bfloat16)
    zeros = torch.zeros(5, 7, device="cuda", dtype=torch.bfloat16)
    assert torch.equal(tcgemm.matmul(a, b), zeros)
    # Into NaN: zeros are written, not found (fresh memory may hold them).
    out = torch.full((5, 7), float("nan"), device="cuda", dtype=torch.bfloat16)
    tcgemm.matmul(a, b, out=out)
    assert torch.equal(out, zeros)
    out = torch.full((5, 7), 3.0, device="cuda")
    tcgemm.matmul(a, b, out=out, beta=2.0)
    assert bool((out == 6).all())


def test_empty_results(torch_cuda):
    torch = torch_cuda
    a = torch.empty(0, 8, device="cuda", dtype=torch.bfloat16)
    assert tcgemm.matmul(a, ints(torch, 8, 4)).shape == (0, 4)
    assert tcgemm.matmul(ints(torch, 0, 3, 8), ints(torch, 8, 4)).shape == (0, 3, 4)


def test_a_tensor_subclass_is_read_as_a_torch_tensor(torch_cuda):
    # A subclass defined outside torch (nn.Parameter's kind) is read
    # directly, with torch's stream and allocator, and the result is torch's.
    torch = torch_cuda

    class Mine(torch.Tensor):
        pass

    a, b = ints(torch, 65, 40).as_subclass(Mine), ints(torch, 40, 24).as_subclass(Mine)
    c = tcgemm.matmul(a, b)
    assert isinstance(c, torch.Tensor)
    assert_exact(torch, c, reference(torch, a.as_subclass(torch.Tensor),
                                     b.as_subclass(torch.Tensor), torch.bfloat16))


class DLPackOnly:
    """A CUDA array of no framework tcgemm knows: only the DLPack protocol,
    backed by a torch tensor (so the generic path runs without CuPy or JAX)."""

    def __init__(self, tensor):
        self.tensor = tensor

    def __dlpack__(self, stream=None, **kwargs):
        return self.tensor.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self.tensor.__dlpack_device__()


def test_a_dlpack_producer_of_no_known_framework(torch_cuda):
    # Read through __dlpack__ (strides included: b is a column-major view),
    # the result tcgemm's own memory handed back through DLPack, and out=
    # written in place.
    torch = torch_cuda
    a, b = ints(torch, 72, 40), ints(torch, 24, 40).mT
    want = reference(torch, a, b, torch.bfloat16)
    c = tcgemm.matmul(DLPackOnly(a), DLPackOnly(b))
    assert_exact(torch, torch.from_dlpack(c), want)
    out = torch.full((72, 24), float("nan"), device="cuda", dtype=torch.bfloat16)
    assert tcgemm.matmul(DLPackOnly(a), DLPackOnly(b), out=DLPackOnly(out)).tensor is out
    assert_exact(torch, out, want)


def test_larger_square_matches_torch(torch_cuda):
    torch = torch_cuda
    a, b = ints(torch, 2048, 2048), ints(torch, 2048, 2048)
    assert_exact(torch, tcgemm.matmul(a, b), reference(torch, a, b, torch.bfloat16))


def test_repeated_calls_take_new_pointers(torch_cuda):
    # After the first call of a problem, tcgemm.matmul runs a remembered
    # tcgemm::GemmPlan with each call's pointers: new tensors, a view whose
    # alignment differs, another stream, each must still be exact.
    torch = torch_cuda
    for _ in range(3):
        a, b = ints(torch, 192, 96), ints(torch, 96, 160)
        assert_exact(torch, tcgemm.matmul(a, b), reference(torch, a, b, torch.bfloat16))
    big = ints(torch, 192 * 96 + 1)
    for offset in (0, 1, 0):  # 16-byte aligned, 2-byte aligned (repacked), aligned again
        a = big[offset:offset + 192 * 96].view(192, 96)
        # Into NaN each time: the third call's result is the first's, whose
        # freed memory the allocator may hand back.
        out = torch.full((192, 160), float("nan"), device="cuda", dtype=torch.bfloat16)
        tcgemm.matmul(a, b, out=out)
        assert_exact(torch, out, reference(torch, a, b, torch.bfloat16))
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        c = tcgemm.matmul(a, b)
        want = reference(torch, a, b, torch.bfloat16)
    side.synchronize()
    assert_exact(torch, c, want)


def test_repeatable(torch_cuda):
    torch = torch_cuda
    a = torch.randn(777, 555, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(555, 333, device="cuda", dtype=torch.bfloat16)
    first = tcgemm.matmul(a, b)
    assert torch.equal(first, tcgemm.matmul(a, b))
    # And right, not merely the same twice (two unwritten results could be).
    want = torch.matmul(a.float(), b.float())
    assert ((first.float() - want).norm() / want.norm()).item() < 1e-2


# ---- streams ------------------------------------------------------------------------


def test_current_stream_and_explicit_stream(torch_cuda):
    torch = torch_cuda
    a0, b0 = ints(torch, 256, 256), ints(torch, 256, 256)
    want = reference(torch, a0, b0, torch.bfloat16)
    # The operands hold zeros until `side`, after a sleep, copies the
    # values in: only a product ordered on `side` sees them.
    a, b = torch.zeros_like(a0), torch.zeros_like(b0)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)  # about 25 ms of GPU clock cycles
        a.copy_(a0)
        b.copy_(b0)
        c1 = tcgemm.matmul(a, b)  # torch's current stream: side
    c2 = tcgemm.matmul(a, b, stream=side)  # a torch stream object
    c3 = tcgemm.matmul(a, b, stream=side.cuda_stream)  # a raw handle
    side.synchronize()
    torch.cuda.synchronize()
    for c in (c1, c2, c3):
        assert_exact(torch, c, want)


# ---- errors -------------------------------------------------------------------------


def snapshot(out):
    return out.clone()


def test_a_named_kernel_refusing_a_later_call_of_a_looped_batch_writes_nothing(torch_cuda):
    # a's batch dimensions (2, 2) have strides (1028, 512): no one stride
    # collapses them, so the batch runs as two calls of two entries, and the
    # second call's A starts 1028 elements in (8 bytes off 16), which
    # prod-skinny refuses. The refusal comes before the first call writes.
    torch = torch_cuda
    base = ints(torch, 2 * 1028 + 1024)
    a = base.as_strided((2, 2, 8, 64), (1028, 512, 64, 1))
    b = ints(torch, 128, 64).mT  # 64 x 128, column-major
    out = torch.full((2, 2, 8, 128), 5.0, device="cuda", dtype=torch.bfloat16)
    before = snapshot(out)
    assert tcgemm.describe(a, b).launches == 2
    # The first call alone is one prod-skinny takes: the refusal below is
    # the second call's.
    assert tcgemm.describe(a[0], b, out=out[0], kernel="prod-skinny").kernel == "prod-skinny"
    for call in (tcgemm.describe, tcgemm.matmul):
        with pytest.raises(tcgemm.NotSupportedError) as info:
            call(a, b, out=out, kernel="prod-skinny")
        assert info.value.argument == "kernel", str(info.value)
    torch.cuda.synchronize()
    assert torch.equal(out, before)
    # The dispatcher runs it (exact: small integers).
    tcgemm.matmul(a, b, out=out)
    assert_exact(torch, out, reference(torch, a, b, torch.bfloat16))


def test_errors_leave_out_untouched(torch_cuda):
    torch = torch_cuda
    a, b = ints(torch, 64, 64), ints(torch, 64, 64)
    out = torch.full((64, 64), 5.0, device="cuda", dtype=torch.bfloat16)
    before, a_before = snapshot(out), snapshot(a)
    cases = [
        (dict(out=a), tcgemm.InvalidValueError, "out"),  # aliases a
        (dict(out=out, out_dtype=torch.float32), tcgemm.InvalidTypeError, "out_dtype"),
        (dict(out=out, alpha=float("nan")), tcgemm.InvalidValueError, "alpha"),
        (dict(out=out, kernel="no-such-kernel"), tcgemm.InvalidValueError, "kernel"),
        (dict(out=out, kernel="wmma-00"), tcgemm.NotSupportedError, "kernel"),  # fp16 NN only
    ]
    for kwargs, cls, argument in cases:
        with pytest.raises(cls) as info:
            tcgemm.matmul(a, b, **kwargs)
        assert info.value.argument == argument, str(info.value)
    torch.cuda.synchronize()
    assert torch.equal(out, before)
    assert torch.equal(a, a_before)  # the refused out=a wrote nothing either


def test_input_errors_name_the_argument(torch_cuda):
    torch = torch_cuda
    a = ints(torch, 32, 32)
    cases = [
        ((a, a.cpu()), tcgemm.InvalidValueError, "b"),
        ((a, a.half()), tcgemm.InvalidTypeError, "b"),
        ((a.float(), a.float()), tcgemm.InvalidTypeError, "a"),
        ((a, ints(torch, 16, 32)), tcgemm.InvalidValueError, "b"),
        ((ints(torch, 64, 64)[::2, ::2], a), tcgemm.InvalidValueError, "a"),
        ((a, ints(torch, 32).expand(32, 32)), tcgemm.InvalidValueError, "b"),  # rows overlap
    ]
    for args, cls, argument in cases:
        with pytest.raises(cls) as info:
            tcgemm.matmul(*args)
        assert info.value.argument == argument, str(info.value)


def test_out_with_overlapping_batch_entries_is_refused(torch_cuda):
    torch = torch_cuda
    a, b = ints(torch, 3, 16, 16), ints(torch, 16, 16)
    base = torch.full((16, 16), 5.0, device="cuda", dtype=torch.bfloat16)
    with pytest.raises(tcgemm.InvalidValueError) as info:
        tcgemm.matmul(a, b, out=base.expand(3, 16, 16))
    assert info.value.argument == "out"
    assert bool((base == 5).all())


def test_operands_on_two_devices_are_refused(torch_cuda):
    torch = torch_cuda
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device")
    a = ints(torch, 16, 16)
    with pytest.raises(tcgemm.InvalidValueError) as info:
        tcgemm.matmul(a, a.to("cuda:1"))
    assert info.value.argument == "b"


# ---- introspection ------------------------------------------------------------------


def test_describe_names_the_kernel_and_its_config(torch_cuda):
    torch = torch_cuda
    a, b = ints(torch, 4096, 4096), ints(torch, 4096, 4096)
    d = tcgemm.describe(a, b)
    assert d.kernel.startswith("prod") and d.config and d.launches == 1
    assert d.kernel in {k.name for k in tcgemm.kernels()}
    # The ladder takes TN only: B and C column-major.
    out = torch.empty(4096, 4096, device="cuda", dtype=torch.bfloat16).mT
    d = tcgemm.describe(a, b.mT.contiguous().mT, out=out, kernel="hopper-14")
    assert d.kernel == "hopper-14"
    with pytest.raises(tcgemm.NotSupportedError) as info:
        tcgemm.describe(a, b, kernel="hopper-14")  # row-major B and C
    assert info.value.argument == "kernel"


def test_named_kernel_runs(torch_cuda):
    torch = torch_cuda
    a = ints(torch, 256, 256)
    bt = ints(torch, 256, 256)  # hopper ladder: TN, i.e. B column-major, C column-major
    out = torch.empty(256, 256, device="cuda", dtype=torch.bfloat16).mT
    tcgemm.matmul(a, bt.mT.contiguous().mT, out=out, kernel="hopper-14")
    assert_exact(torch, out, reference(torch, a, bt, torch.bfloat16))


def test_kernel_needing_a_workspace_gets_one(torch_cuda):
    torch = torch_cuda
    # hopper-15 (stream-K) keeps its partial sums in a workspace: the binding
    # must say so and allocate one.
    names = {k.name: k for k in tcgemm.kernels()}
    assert "hopper-15" in names
    assert names["hopper-15"].needs_workspace
    a, bt = ints(torch, 1024, 512), ints(torch, 512, 768)
    out = torch.empty(768, 1024, device="cuda", dtype=torch.bfloat16).mT
    tcgemm.matmul(a, bt.mT.contiguous().mT, out=out, kernel="hopper-15")
    assert_exact(torch, out, reference(torch, a, bt, torch.bfloat16))
