"""Tensors in, tensors out: frameworks, DLPack, streams.

- torch tensors are read directly (data_ptr, shape, stride, dtype, device):
  the same zero-copy view DLPack would give, without building a capsule per
  call. Results are torch tensors from torch's caching allocator.
- Anything else that exports DLPack (CuPy, JAX, numba, numpy for CPU) is
  read through ``__dlpack__(stream=...)``, so the producer makes its data
  ready on the stream tcgemm will use (the DLPack stream protocol). Results:
  CuPy arrays from CuPy's allocator; for JAX and other frameworks, device
  memory tcgemm allocates, handed to the framework's ``from_dlpack``
  (``DLPackTensor`` below).
"""

from __future__ import annotations

import operator
import sys

from . import _C
from ._errors import CudaError, invalid, status_error, wrong_type
from ._plan import CUDA_DEVICE_TYPES, DTYPE_CODES, Tensor

_TORCH_DTYPES = None  # torch dtype -> name, filled on first use


def framework_of(x) -> str:
    """'torch', 'cupy', 'jax' or the top-level module of x's type.

    A subclass of torch.Tensor or cupy.ndarray, wherever it is defined, is
    read as its base: the check is isinstance against the framework's class
    when the framework is imported (a subclass's module imported it), so
    neither is imported here for it.
    """
    for root, cls in (("torch", "Tensor"), ("cupy", "ndarray")):
        base = getattr(sys.modules.get(root), cls, None)
        if isinstance(base, type) and isinstance(x, base):
            return root
    module = type(x).__module__ or ""
    root = module.split(".", 1)[0]
    if root == "jaxlib":
        return "jax"
    return root


def _torch_dtypes():
    global _TORCH_DTYPES
    if _TORCH_DTYPES is None:
        import torch

        _TORCH_DTYPES = {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32"}
    return _TORCH_DTYPES


def read_torch(t) -> Tensor:
    dtype = _torch_dtypes().get(t.dtype) or str(t.dtype).replace("torch.", "")
    if t.is_cuda:
        device_type, device_id = 2, t.get_device()
    elif t.device.type == "cpu":
        device_type, device_id = 1, 0
    else:  # meta, mps, xpu, ...: no DLPack type of ours; named in the error
        device_type, device_id = -1, 0
    ptr = t.data_ptr() if device_type > 0 else 0
    return Tensor(ptr, dtype, tuple(t.shape), tuple(t.stride()), device_type, device_id)


def dlpack_device(function: str, name: str, x):
    try:
        reported = x.__dlpack_device__()
    except AttributeError:
        raise wrong_type(function, name, f"{type(x).__name__} is not a tensor: tcgemm takes "
                         "torch tensors and any array that exports DLPack (__dlpack__)") from None
    try:
        device_type, device_id = reported
        return int(device_type), int(device_id)
    except (TypeError, ValueError):
        raise wrong_type(function, name, f"{type(x).__name__}.__dlpack_device__() returned "
                         f"{reported!r}, not a (device type, device id) pair of integers"
                         ) from None


def _export(x, dl_stream: int, versioned: bool):
    """x.__dlpack__ on `dl_stream`; `versioned` asks for a DLPack 1.0 capsule
    (it carries the read-only flag), which a producer may not have."""
    if versioned:
        try:
            return x.__dlpack__(stream=dl_stream, max_version=(1, 0))
        except TypeError:  # a producer from before max_version (array API 2023)
            pass
    try:
        return x.__dlpack__(stream=dl_stream)
    except TypeError:  # ... or before the stream argument
        return x.__dlpack__()


def read_dlpack(function: str, name: str, x, stream: int, writable: bool = False) -> Tensor:
    """A DLPack producer's tensor, made ready on `stream` when it is on a GPU."""
    device_type, device_id = dlpack_device(function, name, x)
    if device_type in CUDA_DEVICE_TYPES:
        # DLPack numbers the legacy default stream 1 (0 is ambiguous there).
        dl_stream = stream if stream != 0 else 1
        try:
            info = _C.inspect(_export(x, dl_stream, versioned=True), writable)
            if info is None and not writable:  # a nanobind that reads only unversioned capsules
                info = _C.inspect(_export(x, dl_stream, versioned=False), writable)
        except BufferError as e:  # the producer's refusal, named for the argument
            raise invalid(function, name, f"{type(x).__name__} did not export through "
                          f"DLPack: {e}") from e
    else:
        info = _C.inspect(x, writable)
    if info is None:
        what = "writable tensor" if writable else "tensor"
        raise wrong_type(function, name, f"{type(x).__name__} does not export a {what} "
                         "through DLPack" + (" (it is read-only?)" if writable else ""))
    ptr, dtype, shape, strides, dev_type, dev_id = info
    return Tensor(ptr, dtype, tuple(shape), tuple(strides), dev_type, dev_id)


def read(function: str, name: str, x, framework: str, stream: int, writable=False) -> Tensor:
    if framework == "torch":
        return read_torch(x)
    return read_dlpack(function, name, x, stream, writable)


# ---- streams -------------------------------------------------------------------


def stream_handle(function: str, stream) -> int:
    """A cudaStream_t from an int, a torch/CuPy/cuda.core stream object."""
    if not isinstance(stream, bool):
        try:
            stream = operator.index(stream)  # int, numpy integers
        except TypeError:
            pass
    if isinstance(stream, int) and not isinstance(stream, bool):
        if not 0 <= stream < 1 << 64:
            raise invalid(function, "stream", f"{stream} is not a cudaStream_t (a handle "
                          "from 0 to 2^64 - 1)")
        return stream
    handle = getattr(stream, "cuda_stream", None)  # torch.cuda.Stream, ExternalStream
    if handle is None and hasattr(stream, "__cuda_stream__"):  # the CUDA stream protocol
        handle = stream.__cuda_stream__()
        if isinstance(handle, tuple):  # (version, handle)
            handle = handle[1]
    if handle is None:
        handle = getattr(stream, "ptr", None)  # cupy.cuda.Stream
    if handle is None:
        handle = getattr(stream, "handle", None)  # numba
        handle = getattr(handle, "value", handle)
    if not isinstance(handle, int):
        raise wrong_type(function, "stream", f"{type(stream).__name__} is not a CUDA stream: pass "
                         "an int (cudaStream_t) or an object with cuda_stream / __cuda_stream__")
    return handle


def torch_current_stream(device_id: int) -> int:
    import torch

    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:  # what torch's own generated code calls: no Stream object
        return raw(device_id)
    return torch.cuda.current_stream(device_id).cuda_stream


def default_stream(framework: str, device_id: int) -> int:
    """The framework's current stream; the legacy default stream otherwise."""
    if framework == "torch":
        return torch_current_stream(device_id)
    if framework == "cupy":
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(device_id):
            return cupy.cuda.get_current_stream().ptr
    return 0


# ---- outputs -------------------------------------------------------------------


class DLPackTensor:
    """Device memory tcgemm allocated, holding a result, exported through DLPack.

    What ``tcgemm.matmul`` returns for a framework it cannot allocate in
    (after handing it to that framework's ``from_dlpack`` when it has one).
    ``__dlpack__(stream=s)`` makes stream s wait for the GEMM that wrote it
    (the DLPack stream protocol); the memory is freed (cudaFree) when the last
    consumer lets go of it.
    """

    def __init__(self, array, stream: int, device_id: int, shape: tuple):
        # `array` is what the extension made: a DLPack capsule (nanobind
        # exports an ndarray of no framework as one), which a consumer may
        # take once, or an object with __dlpack__.
        self._array = array
        self._stream = stream
        self._device = device_id
        self.shape = tuple(shape)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        if copy:
            raise BufferError("tcgemm.DLPackTensor: copy=True is not supported")
        if stream != -1:
            # None means the legacy default stream (1), per the DLPack protocol.
            consumer = 1 if stream is None else int(stream)
            _cuda("tcgemm.DLPackTensor.__dlpack__", _C.stream_wait, consumer,
                  self._stream if self._stream != 0 else 1, self._device)
        if not hasattr(self._array, "__dlpack__"):
            capsule, self._array = self._array, None
            if capsule is None:
                raise BufferError("tcgemm.DLPackTensor: already exported (a DLPack capsule is "
                                  "consumed once)")
            return capsule
        if max_version is not None:
            try:
                return self._array.__dlpack__(max_version=max_version)
            except TypeError:
                pass
        return self._array.__dlpack__()

    def __dlpack_device__(self):
        return (2, self._device)

    def __repr__(self):
        return f"tcgemm.DLPackTensor(shape={self.shape}, device=cuda:{self._device})"


def _cupy_dtype(name: str):
    if name == "bf16":
        import ml_dtypes  # CuPy names bf16 through ml_dtypes where it has it

        return ml_dtypes.bfloat16
    return {"fp16": "float16", "fp32": "float32"}[name]


def empty(function: str, framework: str, like, shape: tuple, dtype: str, device_id: int,
          stream: int):
    """An uninitialized C-contiguous result of the framework of `like`, and
    its data pointer. For a framework tcgemm cannot allocate in, a
    ``DLPackTensor`` (the caller converts it once written); a device tcgemm
    cannot use raises ArchMismatchError, a failed allocation CudaError."""
    if framework == "torch":
        import torch

        dtypes = {v: k for k, v in _torch_dtypes().items()}
        out = torch.empty(shape, dtype=dtypes[dtype], device=like.device)
        return out, out.data_ptr()
    if framework == "cupy":
        cupy = sys.modules["cupy"]
        try:
            with cupy.cuda.Device(device_id):
                out = cupy.empty(shape, dtype=_cupy_dtype(dtype))
            return out, out.data.ptr
        except (ImportError, TypeError, ValueError):
            pass  # a dtype this CuPy lacks: tcgemm's own memory, through DLPack
    array, ptr, status = _C.empty(list(shape), DTYPE_CODES[dtype], device_id)
    if status is not None:
        raise status_error(function, *status)
    return DLPackTensor(array, stream, device_id, shape), ptr


# Frameworks whose allocators order memory reuse on the stream tcgemm ran on
# (their current one), so nothing need wait for the GEMM on the host.
STREAM_ORDERED = ("torch", "cupy")


def _cuda(function: str, call, *args) -> None:
    """Runs one of the extension's CUDA helpers (a stream handshake, a
    synchronization), raising its failure as CudaError."""
    try:
        call(*args)
    except RuntimeError as e:
        raise CudaError(f"{function}: {e}", code="kCudaError") from e


def finish(framework: str, result, stream: int, device_id: int, enqueued: bool = True):
    """The result as the caller's framework has it.

    For other frameworks than torch and CuPy the stream is synchronized
    first, where anything was enqueued: they can neither order their work
    after a foreign stream nor keep the inputs' memory alive until it is
    done (JAX, say). A failure there (an earlier kernel's fault, say) is
    CudaError.
    """
    if framework not in STREAM_ORDERED and enqueued:
        _cuda("tcgemm.matmul", _C.synchronize, stream, device_id)
    if not isinstance(result, DLPackTensor):
        return result
    if framework == "jax":
        import jax.dlpack

        return jax.dlpack.from_dlpack(result)
    from_dlpack = getattr(sys.modules.get(framework), "from_dlpack", None)
    return result if from_dlpack is None else from_dlpack(result)
