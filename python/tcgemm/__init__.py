"""tcgemm: tensor-core GEMM for NVIDIA Hopper (sm_90a) from Python.

    import tcgemm
    c = tcgemm.matmul(a, b)            # a @ b, torch / CuPy / JAX CUDA tensors
    tcgemm.describe(a, b)              # the kernel and launch config it runs
    tcgemm.kernels()                   # the kernel registry

``tcgemm.torch`` (needs torch) adds a torch.library custom op, usable in
torch.compile graphs and CUDA graphs, and ``tcgemm.torch.routing()``, a scope
in which torch.matmul and F.linear on bf16/fp16 CUDA tensors run on tcgemm.
Importing tcgemm itself needs neither torch nor a GPU. docs/python.md.
"""

from . import _errors
from ._errors import *  # noqa: F401,F403  (TcgemmError and its subclasses)
from ._matmul import Description, KernelInfo, describe, flops, kernels, matmul
from ._operands import DLPackTensor

__version__ = "0.1.0"

__all__ = [
    "matmul",
    "describe",
    "kernels",
    "flops",
    "device_count",
    "Description",
    "KernelInfo",
    "DLPackTensor",
] + _errors.__all__


def device_count() -> int:
    """CUDA devices the CUDA runtime sees (0 without a driver or a GPU)."""
    from . import _C

    return _C.device_count()
