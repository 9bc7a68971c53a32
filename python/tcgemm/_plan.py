"""From tensors to tcgemm problems: shapes, strides, dtypes and devices.

Pure Python on plain numbers, so all of it runs (and is tested) without a GPU.
An operand is a ``Tensor`` tuple (what ``_operands`` reads from a torch
tensor or a DLPack capsule); ``plan`` checks a, b and out against each other
and returns the calls to make, each a tuple of tcgemm::GemmArgs fields.

How strides map to tcgemm (include/tcgemm/tcgemm.h): the last two dimensions
of a tensor are a matrix. Unit stride along the last one is a row-major
matrix whose leading dimension is the stride of the other; unit stride along
the second-to-last is a column-major one (a transposed view such as ``x.mT``
is column-major, not a copy). A dimension of size 1 may have any stride that
is not negative.
Leading (batch) dimensions broadcast as in numpy; a broadcast operand has
batch stride 0 (one matrix shared by every entry). Batch dimensions that
collapse into one stride per operand become one batched tcgemm call (the
largest such run of them); the rest, if any, are looped over here, one call
per entry of them.
"""

from __future__ import annotations

import itertools
import math
from typing import NamedTuple, Optional

from ._errors import invalid, wrong_type

ROW_MAJOR = 0  # tcgemm::Layout::kRowMajor
COL_MAJOR = 1  # tcgemm::Layout::kColMajor

# tcgemm::DType values and element sizes.
DTYPE_CODES = {"bf16": 0, "fp16": 1, "fp32": 2}
ITEMSIZE = {"bf16": 2, "fp16": 2, "fp32": 4}
INPUT_DTYPES = ("bf16", "fp16")
# The most batch entries one tcgemm call takes (GemmArgs::batch_count);
# plan() splits a larger batch into several calls.
MAX_BATCH_COUNT = 2**31 - 1

# DLPack device types of memory a CUDA kernel may read and write.
DL_CPU = 1
DL_CUDA = 2
DL_CUDA_HOST = 3
DL_CUDA_MANAGED = 13
CUDA_DEVICE_TYPES = (DL_CUDA, DL_CUDA_MANAGED)
_DEVICE_NAMES = {-1: "a torch device that is not CUDA", 1: "cpu", 2: "cuda", 3: "cuda_host", 4: "opencl", 7: "vulkan", 8: "metal",
                 10: "rocm", 11: "rocm_host", 13: "cuda_managed", 14: "oneapi"}


class Tensor(NamedTuple):
    """What tcgemm needs to know of one tensor. Strides are in elements."""

    ptr: int
    dtype: str  # "bf16", "fp16", "fp32" or another name (refused)
    shape: tuple
    strides: tuple
    device_type: int  # DLPack device type
    device_id: int


class Plan(NamedTuple):
    """What ``plan`` decided.

    ``calls``: one tuple per tcgemm::gemm call, the 21 fields _C.gemm takes
    before ``device`` (m, n, k, then pointer, layout, ld, batch stride of A, B
    and C, input and output DType, alpha, beta, batch count and stream), with
    C's pointer given as an element offset from C's base when ``out`` was None
    (``resolve`` adds the base once the output exists). Empty when there is
    nothing to compute (an empty output).
    """

    out_shape: tuple
    out_dtype: str
    calls: list
    device_id: int


def device_name(device_type: int, device_id: int) -> str:
    return f"{_DEVICE_NAMES.get(device_type, f'device type {device_type}')}:{device_id}"


def normalize_dtype(function: str, dtype) -> Optional[str]:
    """'bf16', 'fp16' or 'fp32' for a torch/numpy dtype or name; None for None."""
    if dtype is None:
        return None
    aliases = {"bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "half": "fp16",
               "fp16": "fp16", "float32": "fp32", "float": "fp32", "fp32": "fp32"}
    if isinstance(dtype, type):
        # A scalar type class: numpy.float16, cupy.float32, ml_dtypes'
        # bfloat16 (JAX's) -- the class's own name.
        name = dtype.__name__.lower()
    else:
        # A name, or a dtype object: torch.bfloat16 prints as
        # "torch.bfloat16", a numpy dtype as "float16".
        module, _, name = str(dtype).lower().rpartition(".")
        if module not in ("", "torch", "numpy", "np"):
            name = ""
    if name not in aliases:
        raise wrong_type(function, "out_dtype",
                         f"{dtype!r} is not an output dtype tcgemm has (bf16, fp16 or fp32)")
    return aliases[name]


def _matrix(function, name, rows, cols, row_stride, col_stride, prefer):
    """(layout, ld) of a rows x cols matrix with these element strides."""
    if rows == 0 or cols == 0:  # nothing is read: the strides mean nothing
        return prefer, max(1, cols if prefer == ROW_MAJOR else rows)
    if row_stride < 0 or col_stride < 0:
        raise invalid(function, name, f"negative strides ({row_stride}, {col_stride}) are not "
                      "supported; make the tensor contiguous first")
    row_ok = col_stride == 1 or cols <= 1
    col_ok = row_stride == 1 or rows <= 1
    if row_ok and col_ok:
        layout = prefer
    elif row_ok:
        layout = ROW_MAJOR
    elif col_ok:
        layout = COL_MAJOR
    else:
        raise invalid(function, name, f"neither of its last two dimensions has unit stride "
                      f"(strides ({row_stride}, {col_stride}) in elements for a {rows} x {cols} "
                      "matrix); tcgemm reads row- or column-major matrices: make it contiguous "
                      "(.contiguous()) first")
    if layout == ROW_MAJOR:
        ld = row_stride if rows > 1 else max(1, cols)
        if ld < max(1, cols):
            raise invalid(function, name, f"its rows overlap (row stride {row_stride} < {cols} "
                          "columns); tcgemm cannot express that")
    else:
        ld = col_stride if cols > 1 else max(1, rows)
        if ld < max(1, rows):
            raise invalid(function, name, f"its columns overlap (column stride {col_stride} < "
                          f"{rows} rows); tcgemm cannot express that")
    return layout, ld


def _broadcast(function, batch_a, batch_b):
    ndim = max(len(batch_a), len(batch_b))
    pa = (1,) * (ndim - len(batch_a)) + tuple(batch_a)
    pb = (1,) * (ndim - len(batch_b)) + tuple(batch_b)
    out = []
    for da, db in zip(pa, pb):
        if da != db and da != 1 and db != 1:
            raise invalid(function, "b", f"batch dimensions {tuple(batch_b)} do not broadcast "
                          f"against a's {tuple(batch_a)}")
        out.append(db if da == 1 else da)
    return tuple(out)


def _batch_strides(shape, strides, batch):
    """The element offset per step of each batch dimension (0 where broadcast)."""
    nb = len(shape) - 2
    pad = len(batch) - nb
    eff = []
    for i, size in enumerate(batch):
        j = i - pad
        if j < 0 or shape[j] == 1:
            eff.append(0)
        else:
            eff.append(strides[j])
    return eff


def _non_overlapping(shape, strides):
    """True when no two elements of the view share an address."""
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n > 1)
    reach = 0  # largest offset reachable with the dimensions so far
    for stride, size in dims:
        if stride <= reach:
            return False
        reach += (size - 1) * stride
    return True


# The most contiguous runs an exact overlap check enumerates (below; about
# 0.15 s of Python at the limit, paid only where the quick tests fail).
_MAX_RUNS = 1 << 17
# The largest result matmul allocates itself, in bytes: past any GPU's memory.
_MAX_RESULT_BYTES = 1 << 48


def _runs(t: Tensor):
    """The view's bytes as sorted [lo, hi) intervals, one per contiguous run
    along its unit-stride dimension (one per element where it has none);
    None when there would be more than _MAX_RUNS of them."""
    dims = [(n, s) for n, s in zip(t.shape, t.strides) if n != 1]
    if any(n == 0 for n, _ in dims):
        return []
    unit = [i for i, (_, s) in enumerate(dims) if abs(s) == 1]
    run_n, run_s = 1, 1
    if unit:
        run = max(unit, key=lambda i: dims[i][0])
        run_n, run_s = dims.pop(run)
    count = 1
    for n, _ in dims:
        count *= n
    if count > _MAX_RUNS:
        return None
    offsets = [0]
    for n, s in dims:
        offsets = [o + i * s for o in offsets for i in range(n)]
    lo = min(0, (run_n - 1) * run_s)
    hi = max(0, (run_n - 1) * run_s) + 1
    size = ITEMSIZE.get(t.dtype, 1)
    return sorted((t.ptr + (o + lo) * size, t.ptr + (o + hi) * size) for o in offsets)


def _runs_overlap(runs) -> bool:
    """Whether two of one view's runs share a byte."""
    reach = None
    for lo, hi in runs:
        if reach is not None and lo < reach:
            return True
        reach = hi if reach is None else max(reach, hi)
    return False


def _views_overlap(x, y) -> bool:
    """Whether two sorted run lists share a byte."""
    i = j = 0
    while i < len(x) and j < len(y):
        if x[i][1] <= y[j][0]:
            i += 1
        elif y[j][1] <= x[i][0]:
            j += 1
        else:
            return True
    return False


def _byte_range(t: Tensor):
    """[lo, hi) of the bytes the view touches; None when it has no element."""
    lo = hi = 0
    for n, s in zip(t.shape, t.strides):
        if n == 0:
            return None
        step = (n - 1) * s
        if step < 0:
            lo += step
        else:
            hi += step
    size = ITEMSIZE.get(t.dtype, 1)
    return t.ptr + lo * size, t.ptr + (hi + 1) * size


def plan(function: str, a: Tensor, b: Tensor, out: Optional[Tensor], out_dtype: Optional[str],
         alpha: float, beta: float, stream: int) -> Plan:
    """Checks a, b (and out) and returns the tcgemm calls; raises the error
    naming the argument otherwise. Checks come in this order: dtypes, shapes,
    devices, out's memory (no overlap with itself, a or b), strides."""
    # ---- dtypes
    if a.dtype not in INPUT_DTYPES:
        raise wrong_type(function, "a", f"dtype {a.dtype} is not supported: tcgemm's inputs are "
                         "bf16 or fp16")
    if b.dtype != a.dtype:
        raise wrong_type(function, "b", f"dtype {b.dtype} differs from a's {a.dtype} (tcgemm "
                         "multiplies two inputs of one dtype)")
    if out is not None:
        if out.dtype not in ITEMSIZE:
            raise wrong_type(function, "out", f"dtype {out.dtype} is not an output dtype tcgemm "
                             "has (bf16, fp16 or fp32)")
        if out_dtype is not None and out_dtype != out.dtype:
            raise wrong_type(function, "out_dtype", f"{out_dtype} differs from out's dtype "
                             f"{out.dtype}")
        out_dtype = out.dtype
    elif out_dtype is None:
        out_dtype = a.dtype
    if beta != 0.0 and out is None:
        raise invalid(function, "beta", f"beta={beta} reads C, so it needs out= (C = alpha * a "
                      "@ b + beta * out)")

    # ---- shapes (numpy matmul rules; a 1-D operand is a row or column vector)
    if len(a.shape) == 0 or len(b.shape) == 0:
        raise invalid(function, "a" if len(a.shape) == 0 else "b",
                      "matmul needs tensors of at least 1 dimension, got a 0-d one")
    a_vector = len(a.shape) == 1
    b_vector = len(b.shape) == 1
    a_shape, a_strides = ((1,) + a.shape, (0,) + a.strides) if a_vector else (a.shape, a.strides)
    b_shape, b_strides = (b.shape + (1,), b.strides + (0,)) if b_vector else (b.shape, b.strides)
    m, k = a_shape[-2], a_shape[-1]
    k_b, n = b_shape[-2], b_shape[-1]
    if k != k_b:
        raise invalid(function, "b", f"shapes cannot be multiplied: a is {_fmt(a.shape)} and b "
                      f"is {_fmt(b.shape)} (a has {k} columns, b has {k_b} rows)")
    batch = _broadcast(function, a_shape[:-2], b_shape[:-2])
    out_shape = batch + (() if a_vector else (m,)) + (() if b_vector else (n,))
    if out is not None and tuple(out.shape) != out_shape:
        raise invalid(function, "out", f"shape {_fmt(out.shape)} is not the result's "
                      f"{_fmt(out_shape)}")

    # ---- devices
    for name, t in (("a", a), ("b", b), ("out", out)):
        if t is not None and t.device_type not in CUDA_DEVICE_TYPES:
            where = device_name(t.device_type, t.device_id)
            raise invalid(function, name, f"is on {where}; tcgemm needs CUDA device memory "
                          "(move it with .cuda() / .to('cuda'))")
    for name, t in (("b", b), ("out", out)):
        if t is not None and t.device_id != a.device_id:
            raise invalid(function, name, f"is on cuda:{t.device_id} but a is on "
                          f"cuda:{a.device_id}; all operands must be on one device")

    # ---- out's memory
    # A quick sufficient test first; where it fails, the exact one over the
    # views' contiguous runs (interleaved strides, an output beside its
    # inputs in one buffer), unless there are too many runs to list.
    if out is not None:
        out_runs = None
        if not _non_overlapping(out.shape, out.strides):
            out_runs = _runs(out)
            if out_runs is None or _runs_overlap(out_runs):
                why = ("overlap" if out_runs is not None else
                       "interleave too finely to check that none overlap")
                raise invalid(function, "out", f"its elements {why} (strides {out.strides}); "
                              "an output must give every element its own memory")
        out_range = _byte_range(out)
        for name, t in (("a", a), ("b", b)):
            other = _byte_range(t)
            if not (out_range and other and out_range[0] < other[1] and other[0] < out_range[1]):
                continue
            if out_runs is None:
                out_runs = _runs(out)
            t_runs = _runs(t)
            if out_runs is None or t_runs is None:
                raise invalid(function, "out", f"lies within {name}'s span of memory, too finely "
                              "interleaved with it to check that they share no element; tcgemm "
                              "writes out while it reads the inputs, so out must not alias them")
            if _views_overlap(out_runs, t_runs):
                raise invalid(function, "out", f"overlaps {name}'s memory; tcgemm writes out "
                              "while it reads the inputs, so out must not alias them")

    size = 1
    for d in out_shape:
        size *= d
    if size == 0:
        return Plan(out_shape, out_dtype, [], a.device_id)

    # ---- matrices
    lay_a, lda = _matrix(function, "a", m, k, a_strides[-2], a_strides[-1], ROW_MAJOR)
    lay_b, ldb = _matrix(function, "b", k, n, b_strides[-2], b_strides[-1], COL_MAJOR)
    if out is None:
        c_shape = batch + (m, n)
        # A result no device could hold is refused before its calls are
        # listed (a broadcast batch of 2^52 entries would be millions).
        c_bytes = math.prod(c_shape) * ITEMSIZE[out_dtype]
        if c_bytes > _MAX_RESULT_BYTES:
            raise invalid(function, None, f"the result {_fmt(out_shape)} would take {c_bytes} "
                          f"bytes, more than a GPU holds (2^48)")
        c_strides = []
        step = 1
        for d in reversed(c_shape):
            c_strides.append(step)
            step *= d
        c_strides = tuple(reversed(c_strides))
        c_ptr = 0
    else:
        c_shape = batch + (m, n)
        c_strides = tuple(out.strides)
        if a_vector:  # the result dropped the M dimension
            c_strides = c_strides[:len(batch)] + (0,) + c_strides[len(batch):]
        if b_vector:
            c_strides = c_strides + (0,)
        c_ptr = out.ptr
    lay_c, ldc = _matrix(function, "out", m, n, c_strides[-2], c_strides[-1], ROW_MAJOR)

    # ---- batch: collapse what one stride per operand can express, loop the rest
    eff = [_batch_strides(a_shape, a_strides, batch), _batch_strides(b_shape, b_strides, batch),
           list(c_strides[:-2])]
    dims = [i for i, d in enumerate(batch) if d > 1]
    # Runs of neighbouring dimensions that collapse (each operand's stride
    # over the outer one is the inner one's times its size): the largest run
    # becomes the batched call, the innermost one on a tie, and the others
    # are looped, so that (4096, 1, m, k) @ (8, k, n) is 8 calls of batch 4096,
    # not 4096 of batch 8.
    runs, start = [], 0
    for t in range(1, len(dims) + 1):
        if t == len(dims) or any(e[dims[t - 1]] != e[dims[t]] * batch[dims[t]] for e in eff):
            runs.append(dims[start:t])
            start = t
    batched = max(reversed(runs), key=lambda r: math.prod(batch[i] for i in r), default=[])
    count = math.prod(batch[i] for i in batched)
    strides_abc = [e[batched[-1]] if batched else 0 for e in eff]
    in_code = DTYPE_CODES[a.dtype]
    out_code = DTYPE_CODES[out_dtype]
    in_size = ITEMSIZE[a.dtype]
    out_size = ITEMSIZE[out_dtype] if out is not None else 1  # offsets in elements when no out
    outer = [i for i in dims if i not in batched]
    calls = []
    for index in itertools.product(*(range(batch[i]) for i in outer)):
        off = [sum(e[i] * x for i, x in zip(outer, index)) for e in eff]
        # A batch past what one call takes runs in several, in order.
        for first in range(0, count, MAX_BATCH_COUNT):
            o = [x + first * st for x, st in zip(off, strides_abc)]
            calls.append((m, n, k,
                          a.ptr + o[0] * in_size, lay_a, lda, strides_abc[0],
                          b.ptr + o[1] * in_size, lay_b, ldb, strides_abc[1],
                          c_ptr + o[2] * out_size, lay_c, ldc, strides_abc[2],
                          in_code, out_code, alpha, beta, min(MAX_BATCH_COUNT, count - first),
                          stream))
    return Plan(out_shape, out_dtype, calls, a.device_id)


def resolve(calls, c_base: int, itemsize: int):
    """The calls with C's element offsets turned into addresses from c_base."""
    return [c[:11] + (c_base + c[11] * itemsize,) + c[12:] for c in calls]


def _fmt(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ")"
