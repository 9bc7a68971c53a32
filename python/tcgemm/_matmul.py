"""tcgemm.matmul, tcgemm.describe and tcgemm.kernels."""

from __future__ import annotations

import functools
import math
import operator
import os
from typing import NamedTuple

from . import _C, _operands
from ._errors import invalid, status_error, wrong_type
from ._plan import CUDA_DEVICE_TYPES, ITEMSIZE, normalize_dtype, plan, resolve

# A stand-in C address for a result not yet allocated (describe(), and
# matmul's checks before it allocates): 256-byte aligned, as a fresh
# allocation is, so the checks and the description are those of the run.
_C_STAND_IN = 1 << 40


class KernelInfo(NamedTuple):
    """One entry of tcgemm's kernel registry (include/tcgemm/registry.h)."""

    name: str  # what kernel= takes
    description: str
    constraints: str  # what the kernel needs of a problem, one line
    dispatch_rank: int  # 0: run only by name; the dispatcher tries the highest first
    needs_workspace: bool  # tcgemm.matmul then allocates one per call


class Description(NamedTuple):
    """What ``tcgemm.matmul`` would run (tcgemm::describe)."""

    kernel: str  # registry name; "" when no GEMM kernel runs (empty or K == 0 results)
    config: str  # the launch configuration, one line
    launches: int  # tcgemm::gemm calls: 1, more when batch strides need a loop, 0 when empty

    def __str__(self):
        calls = f" x {self.launches} calls" if self.launches > 1 else ""
        return f"{self.kernel or 'no kernel'}: {self.config}{calls}"


def kernels() -> list:
    """Every kernel in tcgemm's registry, in registry order (a list of
    ``KernelInfo``). Needs no GPU."""
    return [KernelInfo(**k) for k in _C.kernels()]


@functools.lru_cache(maxsize=1)
def _kernel_names() -> frozenset:
    return frozenset(k["name"] for k in _C.kernels())


def _hashable(x) -> bool:
    try:
        hash(x)
    except TypeError:
        return False
    return True


# The largest finite fp32 value: alpha and beta are applied in fp32.
_FP32_MAX = 3.4028234663852886e38


def _scalar(function: str, name: str, value) -> float:
    # float() would also parse text ("2", b"2"): a scalar must be a number.
    if isinstance(value, (str, bytes, bytearray)):
        raise wrong_type(function, name, f"{value!r} is not a real number")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise wrong_type(function, name, f"{value!r} is not a real number") from None
    except OverflowError:
        raise invalid(function, name, f"{name} is not finite (too large for a float)") from None
    if not math.isfinite(value):
        raise invalid(function, name, f"{name} is not finite ({value})")
    if abs(value) > _FP32_MAX:
        raise invalid(function, name, f"{name}={value!r} is beyond fp32's range (alpha and "
                      "beta are applied in fp32)")
    return value


def _prepare(function, a, b, out, alpha, beta, out_dtype, stream, kernel):
    """(framework, stream, Plan, kernel) for the arguments, or the error."""
    if kernel is not None and not isinstance(kernel, str):
        raise wrong_type(function, "kernel", f"{kernel!r} is not a kernel name (str); see "
                         "tcgemm.kernels()")
    if kernel and kernel not in _kernel_names():
        # What tcgemm::gemm says, before any device is looked for.
        raise status_error(function, _C.STATUS_INVALID_VALUE,
                           f"options.kernel names no registry kernel: '{kernel}'", kernel)
    out_dtype = normalize_dtype(function, out_dtype)
    alpha = _scalar(function, "alpha", alpha)
    beta = _scalar(function, "beta", beta)
    framework = _operands.framework_of(a)
    if framework == "torch":
        ta = _operands.read_torch(a)
        device_type, device_id = ta.device_type, ta.device_id
    else:
        ta = None
        device_type, device_id = _operands.dlpack_device(function, "a", a)
    if stream is not None:
        handle = _operands.stream_handle(function, stream)
    elif device_type in CUDA_DEVICE_TYPES:
        handle = _operands.default_stream(framework, device_id)
    else:
        handle = 0  # a CPU tensor: plan() refuses it below
    if ta is None:
        ta = _operands.read_dlpack(function, "a", a, handle)
    tb = _operands.read(function, "b", b, _operands.framework_of(b), handle)
    tout = None
    if out is not None:
        out_framework = _operands.framework_of(out)
        if out_framework == "jax":
            raise invalid(function, "out", "JAX arrays are immutable: use the array "
                          "tcgemm.matmul returns")
        tout = _operands.read(function, "out", out, out_framework, handle, writable=True)
    p = plan(function, ta, tb, tout, out_dtype, alpha, beta, handle)
    return framework, handle, p, kernel or ""


def _validate(function: str, calls: list) -> None:
    for call in calls:
        status = _C.validate(*call)
        if status is not None:
            raise status_error(function, *status)


def _check_named_kernel(function: str, calls: list, device_id: int, kernel: str) -> None:
    """That the named kernel runs every call of a looped batch: the calls
    differ in their pointers, and so in alignment, and a refusal of a later
    call must come before the first one writes."""
    if not kernel or len(calls) < 2:
        return
    for call in calls:
        code, message, _, _ = _C.describe(*call, device_id, kernel)
        if code != _C.STATUS_SUCCESS:
            raise status_error(function, code, message, kernel)


def _run(function: str, calls: list, device_id: int, kernel: str) -> None:
    """The calls, each checked by _validate first (a looped batch's every
    call before the first one writes)."""
    for call in calls:
        status = _C.gemm(*call, device_id, kernel)
        if status is not None:
            raise status_error(function, *status, kernel)


def _record_streams(tensors, handle: int, device_id: int) -> None:
    """Tells torch's caching allocator that `tensors` are in use on stream
    `handle` when it is not torch's current stream (``stream=`` given)."""
    import torch

    if handle == _operands.torch_current_stream(device_id):
        return
    external = torch.cuda.ExternalStream(handle, device=device_id)
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.is_cuda:
            t.record_stream(external)


# The per-call path of torch code (torch tensors, no out=, stream= or
# kernel=): a tcgemm::GemmPlan per problem key (types, dtypes, shapes,
# strides, devices, out_dtype, 16-byte alignment of a and b, and torch's
# current stream, so that runs on streams that may overlap never share a
# plan's workspace). The first call of a key takes the general path and
# makes the plan; later ones only allocate the output and enqueue.
# TCGEMM_PYTHON_PLANS=0 turns this off (every call then goes through
# tcgemm::gemm).
_TORCH_PLANS = {}
_TORCH_PLANS_MAX = 1024
# Plans a CUDA graph captured: the graph replays their workspace (repacked
# operands, K-split partial sums), so they live as long as the process (by
# id: one entry per plan), and with them their workspaces, graph or no
# graph: a process that captures many distinct problems holds a plan for
# each. A captured plan leaves _TORCH_PLANS, so that later eager calls of
# its problem make a plan (and a workspace) of their own rather than share
# the graph's.
_CAPTURED_PLANS = {}
_PLANS_ON = os.environ.get("TCGEMM_PYTHON_PLANS", "1") != "0"


def _torch_fast(function, a, b, alpha, out_dtype):
    """(key, result): the result from a remembered plan, or None on a miss
    (key None: not a case for plans)."""
    try:
        device = a.get_device()
        a_ptr, b_ptr = a.data_ptr(), b.data_ptr()
        key = (type(a), type(b), a.dtype, b.dtype, a.shape, b.shape, a.stride(), b.stride(),
               device, b.get_device(), out_dtype, a_ptr % 16 == 0, b_ptr % 16 == 0)
    except (AttributeError, TypeError):  # not torch tensors
        return None, None
    if device < 0 or not _PLANS_ON:  # a CPU tensor
        return None, None
    stream = _operands.torch_current_stream(device)
    key += (stream,)
    entry = _TORCH_PLANS.get(key)
    if entry is None:
        return key, None
    out_shape, dtype, plan = entry
    import torch

    if torch.cuda.is_current_stream_capturing():
        _CAPTURED_PLANS[id(plan)] = plan
        _TORCH_PLANS.pop(key, None)
    c = torch.empty(out_shape, dtype=dtype, device=device)
    status = plan.run(a_ptr, b_ptr, c.data_ptr(), _scalar(function, "alpha", alpha), 0.0, stream)
    if status is not None:
        raise status_error(function, *status)
    return key, c


def _remember_plan(key, p, calls, out_dtype):
    """Makes the plan of a single-call problem for later calls of `key`."""
    if key is None or len(calls) != 1:
        return
    m, n, k, alpha = calls[0][0], calls[0][1], calls[0][2], calls[0][17]
    if m == 0 or n == 0 or k == 0 or alpha == 0.0:  # quick returns: nothing to plan
        return
    plan = _C.plan_create(*calls[0], p.device_id)
    if plan is None:  # not one tcgemm plans, or the stream is being captured
        return
    if len(_TORCH_PLANS) >= _TORCH_PLANS_MAX:
        _TORCH_PLANS.clear()
    _TORCH_PLANS[key] = (p.out_shape, out_dtype, plan)


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, out_dtype=None, stream=None, kernel=None):
    """``alpha * (a @ b) + beta * out`` on tcgemm's Hopper kernels.

    Semantics are numpy's / torch's ``matmul``: ``a`` is ``[..., M, K]`` and
    ``b`` ``[..., K, N]``; leading (batch) dimensions broadcast; a 1-D ``a``
    (``[K]``) or ``b`` (``[K]``) is a vector, its dimension dropped from the
    result. The result is ``[..., M, N]``.

    Args:
        a, b: CUDA tensors of one dtype, bf16 or fp16: torch tensors or any
            array exporting DLPack (CuPy, JAX, ...), read in place (zero
            copy). The last two dimensions of each must have unit stride in
            one of them: a row-major matrix (``x``), or a column-major one (a
            transposed view ``x.mT``, no copy); the other stride is the
            leading dimension (a slice of a wider tensor is fine). Any
            element alignment; 16-byte-aligned pointers, leading dimensions
            and batch strides are the fast path (others are repacked).
            Batch strides are any that are not negative, 0 (broadcast)
            included.
        out: optional result tensor of the result's exact shape, dtype bf16,
            fp16 or fp32, on the same device, with non-overlapping elements
            not aliasing ``a`` or ``b``; row- or column-major like the
            inputs. Written in place and returned. Read when ``beta != 0``.
        alpha, beta: real scalars (computed in fp32; finite). ``beta != 0``
            needs ``out``.
        out_dtype: the result's dtype when ``out`` is None: "bf16", "fp16",
            "fp32" or a torch/numpy dtype; default a's dtype. Accumulation is
            fp32 always.
        stream: where to run: an int (cudaStream_t), or an object with
            ``cuda_stream`` (torch), ``__cuda_stream__`` (CUDA stream
            protocol) or ``ptr`` (CuPy). Default: torch's current stream for
            torch tensors, CuPy's current stream for CuPy arrays, the legacy
            default stream otherwise.
        kernel: run this registry kernel (``tcgemm.kernels()``) instead of
            the dispatcher's choice; NotSupportedError if it cannot.

    Returns:
        ``out``, or a new C-contiguous (row-major) tensor of a's framework:
        a torch.Tensor for torch, a cupy.ndarray for CuPy, a jax.Array for
        JAX. The call is asynchronous on ``stream`` for torch and CuPy; for
        other frameworks it waits for the stream before returning.

    Raises (all but CudaError before anything is written; ``out`` is then
    untouched):
        InvalidTypeError (TypeError): not a tensor, dtype not bf16/fp16,
            dtypes that differ, bad out_dtype/alpha/beta/kernel/stream types.
        InvalidValueError (ValueError): shapes that do not multiply or
            broadcast, ``out`` of the wrong shape, a CPU tensor or operands
            on different devices, strides with no unit stride in the last two
            dimensions (or negative, or overlapping rows), ``out`` with
            overlapping elements or aliasing an input, beta != 0 without out,
            non-finite alpha/beta (or beyond fp32's range), an unknown kernel
            name.
        NotSupportedError (NotImplementedError): M, N or K above 2^31 - 257,
            or a named kernel that cannot run the problem.
        ArchMismatchError (RuntimeError): no sm_90 (Hopper) device.
        CudaError (RuntimeError): a CUDA call failed (part way through:
            work enqueued before it may still run and write ``out``).
        Each names the argument at fault in its message and ``.argument``.
    """
    function = "tcgemm.matmul"
    key = None
    if out is None and stream is None and kernel is None and type(beta) in (int, float) and \
            beta == 0.0 and _hashable(out_dtype):
        key, result = _torch_fast(function, a, b, alpha, out_dtype)
        if result is not None:
            return result
    framework, handle, p, kernel = _prepare(function, a, b, out, alpha, beta, out_dtype,
                                            stream, kernel)
    # Every argument check before anything touches the device (the result's
    # allocation, a device switch), as tcgemm::gemm validates before it looks
    # for one. Without out, C's address needs only its 256-byte alignment.
    checked = p.calls if out is not None else resolve(p.calls, _C_STAND_IN, ITEMSIZE[p.out_dtype])
    _validate(function, checked)
    _check_named_kernel(function, checked, p.device_id, kernel)
    if out is None:
        result, base = _operands.empty(function, framework, a, p.out_shape, p.out_dtype,
                                       p.device_id, handle)
        calls = resolve(p.calls, base, ITEMSIZE[p.out_dtype])
        if framework == "torch":
            _remember_plan(key, p, calls, result.dtype)
    else:
        result, calls = out, p.calls
    _run(function, calls, p.device_id, kernel)
    if framework == "torch" and stream is not None:
        _record_streams((a, b, result), handle, p.device_id)
    return _operands.finish(framework, result, handle, p.device_id,
                            enqueued=any(_C.has_work(*call) for call in calls))


def describe(a, b, *, out=None, alpha=1.0, beta=0.0, out_dtype=None, stream=None,
             kernel=None) -> Description:
    """What ``matmul`` with these arguments would run, without running it.

    Takes matmul's arguments and raises its errors. Returns a
    ``Description``: the registry kernel and its launch configuration
    (tile shape, stages, cluster, operand major-ness, epilogue, how each
    operand is fed) from tcgemm::describe, and how many tcgemm calls the
    batch takes. Reads the device (needs a GPU); enqueues nothing.
    """
    function = "tcgemm.describe"
    _, _, p, kernel = _prepare(function, a, b, out, alpha, beta, out_dtype, stream, kernel)
    if not p.calls:
        return Description("", "the result is empty", 0)
    calls = p.calls if out is not None else resolve(p.calls, _C_STAND_IN,
                                                    ITEMSIZE[p.out_dtype])
    code, message, name, config = _C.describe(*calls[0], p.device_id, kernel)
    if code != _C.STATUS_SUCCESS:
        raise status_error(function, code, message, kernel)
    _check_named_kernel(function, calls, p.device_id, kernel)
    return Description(name, config, len(calls))


def flops(a_shape, b_shape) -> int:
    """2 * M * N * K * batch of ``matmul`` on operands of these shapes.

    Shapes follow ``matmul`` (a 1-d a is a row, a 1-d b a column; batch
    dimensions broadcast). InvalidValueError for a negative or non-integer
    dimension, a 0-d shape, K that differs between a and b, or batch
    dimensions that do not broadcast."""
    function = "tcgemm.flops"
    shapes = {}
    for name, shape in (("a", a_shape), ("b", b_shape)):
        try:
            shape = tuple(shape)
        except TypeError:
            raise invalid(function, name, f"{shape!r} is not a shape (a sequence of "
                          "sizes)") from None
        if not shape:
            raise invalid(function, name, "a 0-d shape has no matrix to multiply")
        sizes = []
        for d in shape:
            try:
                size = operator.index(d)  # int, numpy integers; not float or bool
            except TypeError:
                size = -1
            if isinstance(d, bool) or size < 0:
                raise invalid(function, name, f"dimension {d!r} of {shape} is not a size")
            sizes.append(size)
        shapes[name] = tuple(sizes)
    a_shape, b_shape = shapes["a"], shapes["b"]
    if len(a_shape) == 1:
        a_shape = (1,) + a_shape
    if len(b_shape) == 1:
        b_shape = b_shape + (1,)
    if a_shape[-1] != b_shape[-2]:
        raise invalid(function, "b", f"shapes {tuple(a_shape)} and {tuple(b_shape)} do not "
                      f"multiply (K = {a_shape[-1]} and {b_shape[-2]})")
    for x, y in _pad_zip(a_shape[:-2], b_shape[:-2]):
        if x != y and x != 1 and y != 1:
            raise invalid(function, "b", f"batch dimensions of {tuple(a_shape)} and "
                          f"{tuple(b_shape)} do not broadcast")
    batch = math.prod(y if x == 1 else x for x, y in _pad_zip(a_shape[:-2], b_shape[:-2]))
    return 2 * a_shape[-2] * a_shape[-1] * b_shape[-1] * batch


def _pad_zip(x, y):
    n = max(len(x), len(y))
    return zip((1,) * (n - len(x)) + x, (1,) * (n - len(y)) + y)


__all__ = ["matmul", "describe", "kernels", "flops", "KernelInfo", "Description"]
