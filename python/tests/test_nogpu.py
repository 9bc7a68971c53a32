"""What works without a GPU: the import, the registry, and every check that
tcgemm makes before touching a device (run in CI, which has no GPU)."""

import ctypes
import subprocess
import sys

import pytest

import tcgemm
from tcgemm import _errors, _plan
from tcgemm._plan import COL_MAJOR, ROW_MAJOR, Tensor, plan

CUDA = _plan.DL_CUDA


def cuda_tensor(shape, strides=None, dtype="bf16", ptr=1 << 20, device=0):
    """A stand-in for a CUDA tensor: only its metadata, never dereferenced."""
    shape = tuple(shape)
    if strides is None:
        strides, step = [], 1
        for d in reversed(shape):
            strides.append(step)
            step *= d
        strides = tuple(reversed(strides))
    return Tensor(ptr, dtype, shape, tuple(strides), CUDA, device)


def make_plan(a, b, out=None, out_dtype=None, alpha=1.0, beta=0.0):
    return plan("tcgemm.matmul", a, b, out, out_dtype, alpha, beta, 0)


def field(call, name):
    names = ["m", "n", "k", "a_ptr", "a_layout", "lda", "stride_a", "b_ptr", "b_layout", "ldb",
             "stride_b", "c_ptr", "c_layout", "ldc", "stride_c", "in_dtype", "out_dtype", "alpha",
             "beta", "batch", "stream"]
    return call[names.index(name)]


def test_import_needs_neither_torch_nor_gpu():
    code = ("import sys, tcgemm; tcgemm.kernels(); "
            "assert 'torch' not in sys.modules, 'import tcgemm imported torch'")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_kernels_lists_the_registry():
    kernels = tcgemm.kernels()
    names = [k.name for k in kernels]
    assert "prod" in names and "hopper-01" in names and "wmma-00" in names
    for k in kernels:
        assert isinstance(k, tcgemm.KernelInfo)
        assert k.description and k.constraints
    assert max(k.dispatch_rank for k in kernels) > 0


def test_device_count_is_an_int():
    count = tcgemm.device_count()
    assert isinstance(count, int) and not isinstance(count, bool)
    assert count >= 0


def test_exceptions_are_builtin_types():
    assert issubclass(tcgemm.InvalidValueError, ValueError)
    assert issubclass(tcgemm.InvalidTypeError, TypeError)
    assert issubclass(tcgemm.NotSupportedError, NotImplementedError)
    assert issubclass(tcgemm.ArchMismatchError, RuntimeError)
    assert issubclass(tcgemm.CudaError, RuntimeError)


@pytest.mark.parametrize("code, message, cls, argument", [
    (1, "ldb=3 is smaller than the 4 x 5 column-major matrix needs (4)",
     tcgemm.InvalidValueError, "b"),
    (1, "c.stride=0 makes batch entries of C overlap", tcgemm.InvalidValueError, "out"),
    (1, "alpha is not finite", tcgemm.InvalidValueError, "alpha"),
    (1, "a is not aligned to its 2-byte element", tcgemm.InvalidValueError, "a"),
    (1, "options.kernel names no registry kernel: 'x'", tcgemm.InvalidValueError, "kernel"),
    (1, "batch_count=0 must be >= 1", tcgemm.InvalidValueError, None),
    (2, "m=4294967296 is over the 2^31 - 257 TMA reach", tcgemm.NotSupportedError, None),
    (3, "no usable CUDA device", tcgemm.ArchMismatchError, None),
    (4, "cudaMallocAsync: out of memory", tcgemm.CudaError, None),
])
def test_status_maps_to_exception_naming_the_argument(code, message, cls, argument):
    err = _errors.status_error("tcgemm.matmul", code, message)
    assert type(err) is cls
    assert err.argument == argument
    assert message in str(err)


def test_a_named_kernels_refusal_names_kernel():
    err = _errors.status_error("tcgemm.matmul", 2, "wmma-00: a is not column-major", "wmma-00")
    assert isinstance(err, tcgemm.NotSupportedError) and err.argument == "kernel"


# ---- strides -> layouts -------------------------------------------------------------


def test_row_major_inputs_map_to_row_major_with_tight_ld():
    call, = make_plan(cuda_tensor((64, 32)), cuda_tensor((32, 16))).calls
    assert (field(call, "a_layout"), field(call, "lda")) == (ROW_MAJOR, 32)
    assert (field(call, "b_layout"), field(call, "ldb")) == (ROW_MAJOR, 16)
    assert (field(call, "c_layout"), field(call, "ldc")) == (ROW_MAJOR, 16)
    assert (field(call, "m"), field(call, "n"), field(call, "k")) == (64, 16, 32)


def test_transposed_view_is_column_major_not_a_copy():
    # b = w.mT for w [16, 32]: shape (32, 16), strides (1, 32).
    a = cuda_tensor((64, 32))
    b = cuda_tensor((32, 16), strides=(1, 32), ptr=1 << 24)
    call, = make_plan(a, b).calls
    assert (field(call, "b_layout"), field(call, "ldb")) == (COL_MAJOR, 32)
    assert field(call, "b_ptr") == 1 << 24


def test_sliced_view_keeps_its_leading_dimension():
    a = cuda_tensor((64, 30), strides=(40, 1))  # big[:, :30] of a [64, 40]
    call, = make_plan(a, cuda_tensor((30, 8))).calls
    assert (field(call, "a_layout"), field(call, "lda")) == (ROW_MAJOR, 40)


def test_ambiguous_shapes_pick_k_major_inputs():
    a = cuda_tensor((1, 32), strides=(1, 1))  # a row vector: both layouts fit
    b = cuda_tensor((32, 1), strides=(1, 1))
    call, = make_plan(a, b).calls
    assert field(call, "a_layout") == ROW_MAJOR and field(call, "b_layout") == COL_MAJOR


def test_no_unit_stride_is_an_error_naming_the_argument():
    a = cuda_tensor((8, 8), strides=(16, 2))  # big[:, ::2]
    with pytest.raises(tcgemm.InvalidValueError, match="neither of its last two") as info:
        make_plan(cuda_tensor((8, 8)), a)
    assert info.value.argument == "b"


def test_negative_and_overlapping_strides_are_errors():
    with pytest.raises(tcgemm.InvalidValueError) as info:
        make_plan(cuda_tensor((8, 8), strides=(-8, 1)), cuda_tensor((8, 8)))
    assert info.value.argument == "a"
    with pytest.raises(tcgemm.InvalidValueError, match="overlap"):
        make_plan(cuda_tensor((8, 8), strides=(0, 1)), cuda_tensor((8, 8)))  # expanded rows


# ---- shapes ---------------------------------------------------------------------


def test_shapes_that_do_not_multiply_name_b():
    with pytest.raises(tcgemm.InvalidValueError, match="cannot be multiplied") as info:
        make_plan(cuda_tensor((4, 5)), cuda_tensor((6, 7)))
    assert info.value.argument == "b"


def test_batches_that_do_not_broadcast_name_b():
    with pytest.raises(tcgemm.InvalidValueError, match="broadcast") as info:
        make_plan(cuda_tensor((3, 4, 5)), cuda_tensor((2, 5, 6)))
    assert info.value.argument == "b"


def test_vectors_follow_numpy():
    p = make_plan(cuda_tensor((5,)), cuda_tensor((5, 7)))
    assert p.out_shape == (7,)
    p = make_plan(cuda_tensor((3, 4, 5)), cuda_tensor((5,)))
    assert p.out_shape == (3, 4)
    p = make_plan(cuda_tensor((5,)), cuda_tensor((5,)))
    assert p.out_shape == ()


def test_zero_dim_tensor_is_an_error():
    with pytest.raises(tcgemm.InvalidValueError):
        make_plan(cuda_tensor(()), cuda_tensor((3,)))


def test_empty_results_make_no_call():
    assert make_plan(cuda_tensor((0, 5)), cuda_tensor((5, 7))).calls == []
    assert make_plan(cuda_tensor((0, 4, 5)), cuda_tensor((5, 7))).calls == []


def test_k_zero_still_calls_tcgemm():  # C = beta * C (zeros for beta = 0)
    call, = make_plan(cuda_tensor((4, 0)), cuda_tensor((0, 7))).calls
    assert field(call, "k") == 0 and field(call, "lda") >= 1 and field(call, "ldb") >= 1


# ---- batches ----------------------------------------------------------------------


def test_broadcast_weight_has_batch_stride_zero():
    call, = make_plan(cuda_tensor((6, 4, 64, 32)), cuda_tensor((32, 16))).calls
    assert field(call, "batch") == 24
    assert field(call, "stride_a") == 64 * 32
    assert field(call, "stride_b") == 0
    assert field(call, "stride_c") == 64 * 16


def test_strided_batch_view_is_one_call():
    a = cuda_tensor((4, 8, 8), strides=(128, 8, 1))  # big[::2] of a [8, 8, 8]
    call, = make_plan(a, cuda_tensor((4, 8, 8))).calls
    assert field(call, "batch") == 4 and field(call, "stride_a") == 128


def test_batches_one_stride_cannot_express_are_looped():
    # a [2, 1, M, K] against b [3, K, N]: a's entry changes with the outer
    # index only, b's with the inner one.
    p = make_plan(cuda_tensor((2, 1, 8, 4)), cuda_tensor((3, 4, 6)))
    assert p.out_shape == (2, 3, 8, 6)
    assert len(p.calls) == 2
    for i, call in enumerate(p.calls):
        assert field(call, "batch") == 3
        assert field(call, "stride_a") == 0 and field(call, "stride_b") == 24
        assert field(call, "a_ptr") == (1 << 20) + i * 32 * 2  # entry i of a, bf16
        assert field(call, "c_ptr") == i * 3 * 48  # element offset in the output


def test_the_largest_batch_dimension_is_the_batched_call():
    # a [16, 1, M, K] against b [3, K, N]: the outer dimension is the larger,
    # so it is the call's batch (a's stride 32, b's 0) and the inner one is
    # looped: 3 calls of 16, not 16 of 3.
    p = make_plan(cuda_tensor((16, 1, 8, 4)), cuda_tensor((3, 4, 6)))
    assert p.out_shape == (16, 3, 8, 6)
    assert len(p.calls) == 3
    for j, call in enumerate(p.calls):
        assert field(call, "batch") == 16
        assert field(call, "stride_a") == 32 and field(call, "stride_b") == 0
        assert field(call, "stride_c") == 3 * 48
        assert field(call, "b_ptr") == (1 << 20) + j * 24 * 2  # entry j of b, bf16
        assert field(call, "c_ptr") == j * 48  # element offset in the output


# ---- dtypes -----------------------------------------------------------------------


def test_fp32_inputs_are_a_type_error_naming_a():
    with pytest.raises(tcgemm.InvalidTypeError, match="bf16 or fp16") as info:
        make_plan(cuda_tensor((4, 4), dtype="fp32"), cuda_tensor((4, 4), dtype="fp32"))
    assert info.value.argument == "a"


def test_mixed_dtypes_are_a_type_error_naming_b():
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        make_plan(cuda_tensor((4, 4)), cuda_tensor((4, 4), dtype="fp16"))
    assert info.value.argument == "b"


@pytest.mark.parametrize("name, expected", [
    ("bf16", "bf16"), ("bfloat16", "bf16"), ("float16", "fp16"), ("fp32", "fp32"),
    ("torch.float32", "fp32"), (None, None)])
def test_out_dtype_names(name, expected):
    assert _plan.normalize_dtype("f", name) == expected


def test_unknown_out_dtype_is_a_type_error():
    for bad in ("int8", "int8.float32", "np.fp8", ["fp32"]):
        with pytest.raises(tcgemm.InvalidTypeError) as info:
            _plan.normalize_dtype("f", bad)
        assert info.value.argument == "out_dtype"


def test_numpy_dtypes_and_scalar_types_name_output_dtypes():
    np = pytest.importorskip("numpy")
    assert _plan.normalize_dtype("f", np.float16) == "fp16"
    assert _plan.normalize_dtype("f", np.float32) == "fp32"
    assert _plan.normalize_dtype("f", np.dtype("float16")) == "fp16"
    assert _plan.normalize_dtype("f", "numpy.float32") == "fp32"
    with pytest.raises(tcgemm.InvalidTypeError):
        _plan.normalize_dtype("f", np.int8)


def test_out_dtype_sets_the_output_code():
    call, = make_plan(cuda_tensor((4, 4)), cuda_tensor((4, 4)), out_dtype="fp32").calls
    assert field(call, "in_dtype") == 0 and field(call, "out_dtype") == 2


# ---- devices and out ----------------------------------------------------------------


def test_cpu_tensor_is_an_error_naming_it():
    cpu = Tensor(1 << 20, "bf16", (4, 4), (4, 1), _plan.DL_CPU, 0)
    with pytest.raises(tcgemm.InvalidValueError, match="CUDA device memory") as info:
        make_plan(cuda_tensor((4, 4)), cpu)
    assert info.value.argument == "b"


def test_operands_on_different_devices_are_an_error():
    with pytest.raises(tcgemm.InvalidValueError, match="one device") as info:
        make_plan(cuda_tensor((4, 4)), cuda_tensor((4, 4), device=1))
    assert info.value.argument == "b"


def test_out_of_the_wrong_shape_is_an_error():
    out = cuda_tensor((4, 5), ptr=1 << 30)
    with pytest.raises(tcgemm.InvalidValueError, match="shape") as info:
        make_plan(cuda_tensor((4, 4)), cuda_tensor((4, 4)), out=out)
    assert info.value.argument == "out"


def test_out_aliasing_an_input_is_an_error():
    a = cuda_tensor((4, 4))
    with pytest.raises(tcgemm.InvalidValueError, match="alias") as info:
        make_plan(a, cuda_tensor((4, 4), ptr=1 << 30), out=a)
    assert info.value.argument == "out"


def test_out_with_overlapping_elements_is_an_error():
    out = cuda_tensor((3, 4, 4), strides=(0, 4, 1), ptr=1 << 30)  # an expanded batch
    with pytest.raises(tcgemm.InvalidValueError, match="overlap") as info:
        make_plan(cuda_tensor((3, 4, 4)), cuda_tensor((4, 4)), out=out)
    assert info.value.argument == "out"


def test_out_with_interleaved_but_distinct_elements_is_accepted():
    # (2, 3, 2) with strides (6, 4, 1): batch entry 1 fills entry 0's gaps
    # ({0,1,4,5,8,9} and {6,7,10,11,14,15}); no element is shared, as
    # tcgemm::validate's exact check of C's batch entries agrees.
    out = cuda_tensor((2, 3, 2), strides=(6, 4, 1), ptr=1 << 30)
    call, = make_plan(cuda_tensor((2, 3, 4)), cuda_tensor((4, 2)), out=out).calls
    assert (field(call, "batch"), field(call, "stride_c"), field(call, "ldc")) == (2, 6, 4)
    # One element shared (strides (5, 4, 1): entry 1 starts at 5 = entry 0's
    # (1, 1)) is an overlap.
    out = cuda_tensor((2, 3, 2), strides=(5, 4, 1), ptr=1 << 30)
    with pytest.raises(tcgemm.InvalidValueError, match="overlap") as info:
        make_plan(cuda_tensor((2, 3, 4)), cuda_tensor((4, 2)), out=out)
    assert info.value.argument == "out"


def test_out_beside_an_input_in_one_buffer_is_accepted():
    # buf is 4 x 8; a = buf[:, :4] and out = buf[:, 4:] interleave by rows
    # and share no element (writing into part of a concatenated buffer).
    base = 1 << 20
    a = cuda_tensor((4, 4), strides=(8, 1), ptr=base)
    out = cuda_tensor((4, 4), strides=(8, 1), ptr=base + 4 * 2)
    call, = make_plan(a, cuda_tensor((4, 4), ptr=1 << 30), out=out).calls
    assert field(call, "ldc") == 8
    # Shifted one element left, out's rows overlap a's last column.
    out = cuda_tensor((4, 4), strides=(8, 1), ptr=base + 3 * 2)
    with pytest.raises(tcgemm.InvalidValueError, match="alias") as info:
        make_plan(a, cuda_tensor((4, 4), ptr=1 << 30), out=out)
    assert info.value.argument == "out"


def test_views_interleaved_too_finely_to_check_are_refused_saying_so():
    # Past _plan._MAX_RUNS contiguous runs the exact check is not attempted:
    # out is refused, naming why, even where its elements are in fact
    # distinct. (2, m, 2) with strides (6, 4, 1): 2m runs of 2 elements.
    m = _plan._MAX_RUNS
    out = cuda_tensor((2, m, 2), strides=(6, 4, 1), ptr=1 << 32)
    with pytest.raises(tcgemm.InvalidValueError, match="too finely") as info:
        make_plan(cuda_tensor((2, m, 4)), cuda_tensor((4, 2), ptr=1 << 30), out=out)
    assert info.value.argument == "out"
    # out beside a in one buffer (as in the test above) with m + 1 rows of
    # each: too many runs to show they share no element.
    rows = _plan._MAX_RUNS + 1
    base = 1 << 32
    a = cuda_tensor((rows, 4), strides=(8, 1), ptr=base)
    out = cuda_tensor((rows, 4), strides=(8, 1), ptr=base + 4 * 2)
    with pytest.raises(tcgemm.InvalidValueError, match="too finely interleaved") as info:
        make_plan(a, cuda_tensor((4, 4), ptr=1 << 30), out=out)
    assert info.value.argument == "out"
    # With fewer rows the same layout is checked exactly and accepted.
    a = cuda_tensor((8, 4), strides=(8, 1), ptr=base)
    out = cuda_tensor((8, 4), strides=(8, 1), ptr=base + 4 * 2)
    call, = make_plan(a, cuda_tensor((4, 4), ptr=1 << 30), out=out).calls
    assert field(call, "ldc") == 8


def test_a_batch_past_one_calls_limit_runs_in_several_calls():
    # 2^31 entries of an expanded a against one b: two calls, the second
    # starting where the first's 2^31 - 1 entries end.
    big = 2**31
    a = cuda_tensor((big, 1, 8), strides=(0, 8, 1), dtype="fp16")
    b = cuda_tensor((8, 1), dtype="fp16", ptr=1 << 30)
    calls = make_plan(a, b).calls
    assert [field(c, "batch") for c in calls] == [2**31 - 1, 1]
    assert field(calls[1], "c_ptr") - field(calls[0], "c_ptr") == (2**31 - 1) * field(calls[0], "stride_c")
    assert field(calls[1], "a_ptr") == field(calls[0], "a_ptr")  # stride 0


def test_column_major_out_is_accepted():
    out = cuda_tensor((8, 6), strides=(1, 8), ptr=1 << 30, dtype="fp32")
    call, = make_plan(cuda_tensor((8, 4)), cuda_tensor((4, 6)), out=out).calls
    assert (field(call, "c_layout"), field(call, "ldc")) == (COL_MAJOR, 8)
    assert field(call, "out_dtype") == 2


def test_beta_without_out_is_an_error():
    with pytest.raises(tcgemm.InvalidValueError) as info:
        make_plan(cuda_tensor((4, 4)), cuda_tensor((4, 4)), beta=1.0)
    assert info.value.argument == "beta"


# ---- through tcgemm.matmul, with real arrays on the CPU --------------------------------


def test_matmul_of_cpu_numpy_arrays_raises_naming_the_argument():
    np = pytest.importorskip("numpy")
    a = np.ones((4, 4), dtype=np.float16)
    with pytest.raises(tcgemm.InvalidValueError, match="cpu") as info:
        tcgemm.matmul(a, a)
    assert info.value.argument == "a"


def test_matmul_shape_mismatch_comes_before_the_device_check():
    np = pytest.importorskip("numpy")
    with pytest.raises(tcgemm.InvalidValueError, match="cannot be multiplied") as info:
        tcgemm.matmul(np.ones((4, 5), np.float16), np.ones((6, 7), np.float16))
    assert info.value.argument == "b"


def test_matmul_of_numpy_float32_is_a_type_error():
    np = pytest.importorskip("numpy")
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        tcgemm.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32))
    assert info.value.argument == "a"


def test_matmul_of_a_non_tensor_is_a_type_error():
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        tcgemm.matmul([[1.0]], [[1.0]])
    assert info.value.argument == "a"


def test_bad_scalars_and_kernel_types_are_type_errors():
    np = pytest.importorskip("numpy")
    a = np.ones((4, 4), np.float16)
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        tcgemm.matmul(a, a, alpha="two")
    assert info.value.argument == "alpha"
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        tcgemm.matmul(a, a, kernel=3)
    assert info.value.argument == "kernel"
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        tcgemm.matmul(a, a, stream=object())
    assert info.value.argument == "stream"
    # Text is not a number, though float() would parse it.
    for text in ("2", b"2", " 3 "):
        with pytest.raises(tcgemm.InvalidTypeError) as info:
            tcgemm.matmul(a, a, alpha=text)
        assert info.value.argument == "alpha"
    # An array beta is refused as a scalar, not by numpy's truth test.
    with pytest.raises(tcgemm.InvalidTypeError) as info:
        tcgemm.matmul(a, a, beta=np.array([0.0, 0.0]))
    assert info.value.argument == "beta"
    # A stream handle is 0 .. 2^64 - 1, numpy integers included.
    for bad in (-1, 2**64):
        with pytest.raises(tcgemm.InvalidValueError) as info:
            tcgemm.matmul(a, a, stream=bad)
        assert info.value.argument == "stream"
    from tcgemm import _operands
    assert _operands.stream_handle("f", np.int64(5)) == 5
    with pytest.raises(tcgemm.InvalidTypeError):
        _operands.stream_handle("f", True)


def test_a_result_no_gpu_could_hold_is_refused_before_its_calls_are_listed():
    # 2^52 broadcast entries of a 1 x 1 result: 2^21 calls, were they listed.
    a = cuda_tensor((2**52, 1, 8), strides=(0, 8, 1))
    with pytest.raises(tcgemm.InvalidValueError, match="more than a GPU holds"):
        make_plan(a, cuda_tensor((8, 1), ptr=1 << 30))


def test_torch_cpu_tensor_is_an_error_naming_it():
    torch = pytest.importorskip("torch")
    a = torch.ones(4, 4, dtype=torch.bfloat16)
    with pytest.raises(tcgemm.InvalidValueError, match="cpu") as info:
        tcgemm.matmul(a, a)
    assert info.value.argument == "a"


def test_bench_help_needs_no_gpu():
    out = subprocess.run([sys.executable, "-m", "tcgemm.bench", "--help"], check=True,
                         capture_output=True, text=True).stdout
    assert "--shapes" in out


# ---- the extension, called with planned problems (no memory is touched) -----------------


def test_planned_call_passes_tcgemm_validate():
    from tcgemm import _C

    p = make_plan(cuda_tensor((3, 64, 32)), cuda_tensor((32, 16), strides=(1, 32), ptr=1 << 24),
                  out_dtype="fp32")
    call, = _plan.resolve(p.calls, 1 << 28, _plan.ITEMSIZE[p.out_dtype])
    assert _C.validate(*call) is None


def test_validate_errors_come_back_named():
    from tcgemm import _C

    call, = make_plan(cuda_tensor((64, 32)), cuda_tensor((32, 16))).calls
    call = _plan.resolve([call], 1 << 28, 2)[0]
    bad = call[:5] + (8,) + call[6:]  # lda 8 < K = 32
    code, message = _C.validate(*bad)
    err = _errors.status_error("tcgemm.matmul", code, message)
    assert isinstance(err, tcgemm.InvalidValueError) and err.argument == "a", str(err)
    nan_alpha = call[:17] + (float("nan"),) + call[18:]
    err = _errors.status_error("tcgemm.matmul", *_C.validate(*nan_alpha))
    assert err.argument == "alpha"
    huge_alpha = call[:17] + (1e300,) + call[18:]  # beyond fp32: infinite, refused
    assert _errors.status_error("tcgemm.matmul", *_C.validate(*huge_alpha)).argument == "alpha"


@pytest.mark.skipif(tcgemm.device_count() > 0, reason="a CUDA device is present")
def test_gemm_without_a_device_is_an_arch_mismatch():
    from tcgemm import _C

    call, = make_plan(cuda_tensor((64, 32)), cuda_tensor((32, 16))).calls
    call = _plan.resolve([call], 1 << 28, 2)[0]
    code, message = _C.gemm(*call, 0, "")
    err = _errors.status_error("tcgemm.matmul", code, message)
    assert isinstance(err, tcgemm.ArchMismatchError), str(err)
    code, message, kernel, config = _C.describe(*call, 0, "")
    assert code == 3 and kernel == ""
    assert _C.plan_create(*call, 0) is None  # no plan without a device: gemm() reports
    array, ptr, status = _C.empty([4, 4], 0, 0)
    assert array is None and ptr == 0
    err = _errors.status_error("tcgemm.matmul", *status)
    assert isinstance(err, tcgemm.ArchMismatchError), str(err)


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class FakeCudaArray:
    """A DLPack producer (unversioned) of a bf16 C-contiguous CUDA array at a
    made-up address: what tcgemm sees of a framework it does not know,
    without a GPU. Never dereferenced; its structures live as long as it."""

    def __init__(self, shape, ptr=1 << 20):
        self.shape = tuple(shape)
        n = len(self.shape)
        strides, step = [], 1
        for d in reversed(self.shape):
            strides.insert(0, step)
            step *= d
        self._shape = (ctypes.c_int64 * n)(*self.shape)
        self._strides = (ctypes.c_int64 * n)(*strides)
        self._managed = _DLManagedTensor(
            _DLTensor(ptr, _DLDevice(CUDA, 0), n, _DLDataType(4, 16, 1), self._shape,
                      self._strides, 0), None, None)

    def __dlpack_device__(self):
        return (CUDA, 0)

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if max_version is not None:
            raise TypeError("this producer makes unversioned capsules only")
        new_capsule = ctypes.pythonapi.PyCapsule_New
        new_capsule.restype = ctypes.py_object
        new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new_capsule(ctypes.addressof(self._managed), b"dltensor", None)


@pytest.mark.skipif(tcgemm.device_count() > 0, reason="a CUDA device is present")
def test_matmul_of_a_foreign_cuda_array_without_a_device_is_an_arch_mismatch():
    # The result is allocated by tcgemm for a framework it does not know: a
    # device it cannot use is ArchMismatchError (a plain RuntimeError before).
    with pytest.raises(tcgemm.ArchMismatchError):
        tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)))
    with pytest.raises(tcgemm.ArchMismatchError):
        tcgemm.describe(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)))


def test_an_empty_product_into_out_needs_no_device():
    # Nothing to compute and nothing enqueued: no stream to wait for, so no
    # device either, for a framework tcgemm synchronizes for (a bare
    # RuntimeError from the synchronization before).
    out = FakeCudaArray((0, 16), ptr=1 << 24)
    assert tcgemm.matmul(FakeCudaArray((0, 32)), FakeCudaArray((32, 16)), out=out) is out


def test_a_product_that_leaves_out_as_it_is_needs_no_device():
    # K == 0 or alpha == 0 with beta == 1: C stays as it is (tcgemm::gemm's
    # quick return, before it looks for a device; so does the extension).
    out = FakeCudaArray((64, 16), ptr=1 << 24)
    for a, b, alpha in ((FakeCudaArray((64, 0)), FakeCudaArray((0, 16)), 1.0),
                        (FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), 0.0)):
        assert tcgemm.matmul(a, b, out=out, alpha=alpha, beta=1.0) is out
        assert tcgemm.describe(a, b, out=out, alpha=alpha, beta=1.0).kernel == ""
    # With beta != 1, C = beta * C runs a kernel: a device is needed.
    if tcgemm.device_count() == 0:
        with pytest.raises(tcgemm.ArchMismatchError):
            tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), out=out,
                          alpha=0.0, beta=0.5)


def test_a_dlpack_producers_failures_name_the_argument():
    class BadDevice(FakeCudaArray):
        def __dlpack_device__(self):
            return ("cuda", 0)

    class Refuses(FakeCudaArray):
        def __dlpack__(self, stream=None, max_version=None, **kwargs):
            raise BufferError("this array cannot be exported")

    with pytest.raises(tcgemm.InvalidTypeError, match="__dlpack_device__") as err:
        tcgemm.matmul(BadDevice((64, 32)), FakeCudaArray((32, 16)))
    assert err.value.argument == "a"
    with pytest.raises(tcgemm.InvalidValueError, match="cannot be exported") as err:
        tcgemm.matmul(FakeCudaArray((64, 32)), Refuses((32, 16)))
    assert err.value.argument == "b"


@pytest.mark.skipif(tcgemm.device_count() > 0, reason="a CUDA device is present")
def test_matmul_checks_its_arguments_before_allocating_the_result():
    # A NaN alpha is the caller's error whether or not a device is there: it
    # is reported before the result's allocation finds no device (as
    # tcgemm::gemm validates before it looks for one).
    for alpha in (float("nan"), float("inf")):
        with pytest.raises(tcgemm.InvalidValueError) as err:
            tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), alpha=alpha)
        assert err.value.argument == "alpha"
        # With out given too (the device switch came first there).
        with pytest.raises(tcgemm.InvalidValueError) as err:
            tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)),
                          out=FakeCudaArray((64, 16), ptr=1 << 24), alpha=alpha)
        assert err.value.argument == "alpha"
    # An alpha too large for a float, and a NaN beta without out: named as
    # not finite (not a raw OverflowError, not "needs out=").
    with pytest.raises(tcgemm.InvalidValueError, match="not finite") as err:
        tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), alpha=10**400)
    assert err.value.argument == "alpha"
    # Finite in Python, infinite in fp32, where alpha and beta are applied.
    with pytest.raises(tcgemm.InvalidValueError, match="fp32") as err:
        tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), alpha=1e39)
    assert err.value.argument == "alpha"
    with pytest.raises(tcgemm.InvalidValueError, match="not finite") as err:
        tcgemm.matmul(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), beta=float("nan"))
    assert err.value.argument == "beta"
    # An unknown kernel name, as tcgemm::gemm reports it before any device.
    for call in (tcgemm.matmul, tcgemm.describe):
        with pytest.raises(tcgemm.InvalidValueError) as err:
            call(FakeCudaArray((64, 32)), FakeCudaArray((32, 16)), kernel="no-such-kernel")
        assert err.value.argument == "kernel", str(err.value)


def test_flops_counts_two_per_multiply_add_over_the_broadcast_batch():
    assert tcgemm.flops((64, 32), (32, 16)) == 2 * 64 * 32 * 16
    assert tcgemm.flops((3, 64, 32), (32, 16)) == 3 * 2 * 64 * 32 * 16
    assert tcgemm.flops((2, 1, 8, 4), (5, 4, 6)) == 2 * 5 * 2 * 8 * 4 * 6
    assert tcgemm.flops((32,), (32, 16)) == 2 * 32 * 16  # a 1-d a is one row
    assert tcgemm.flops((0, 32), (32, 16)) == 0
    assert tcgemm.flops((0, 4, 8), (8, 16)) == 0  # a batch of 0 broadcast against 1
    assert tcgemm.flops((2, 1, 4, 8), (1, 0, 8, 16)) == 0


@pytest.mark.parametrize("a_shape, b_shape, argument", [
    ((4, 3), (4, 4), "b"),        # K differs
    ((-4, 3), (3, 4), "a"),       # a negative size
    ((4, 3.0), (3, 4), "a"),      # not an integer
    ((), (3, 4), "a"),            # 0-d
    ((2, 4, 3), (5, 3, 4), "b"),  # batch 2 and 5 do not broadcast
    (5, (3, 4), "a"),             # not a sequence
    ((3, 4), None, "b"),
])
def test_flops_refuses_shapes_matmul_would(a_shape, b_shape, argument):
    with pytest.raises(tcgemm.InvalidValueError) as err:
        tcgemm.flops(a_shape, b_shape)
    assert err.value.argument == argument, str(err.value)


def test_a_tensor_subclass_is_read_as_its_framework(monkeypatch):
    # A subclass defined outside torch (or cupy) is still a torch tensor: it
    # is read directly, not sent through DLPack as an unknown framework's
    # array. A stand-in module plays torch, so no torch is needed here.
    from tcgemm import _operands

    fake_torch = type(sys)("torch")

    class Tensor:
        pass

    fake_torch.Tensor = Tensor
    monkeypatch.setitem(sys.modules, "torch", fake_torch)

    class Mine(Tensor):  # defined in this test module, as a user's would be
        pass

    assert Mine.__module__.split(".")[0] != "torch"
    assert _operands.framework_of(Mine()) == "torch"
    assert _operands.framework_of(FakeCudaArray((4, 4))) == FakeCudaArray.__module__.split(".")[0]
