"""tcgemm for PyTorch: custom ops and a routing scope. Needs torch (>= 2.4).

Custom ops (torch.library; each with a fake implementation, so torch.compile
can trace them with fullgraph=True, and capturable in CUDA graphs, as they
run on torch's current stream and allocate through torch):

    tcgemm.torch.matmul(a, b, *, alpha=1.0, out_dtype=None, kernel=None)
        torch.ops.tcgemm.matmul: alpha * (a @ b), a new tensor. Autograd
        works (the gradients are tcgemm GEMMs too).
    tcgemm.torch.matmul_out(a, b, out, *, alpha=1.0, beta=0.0)
        torch.ops.tcgemm.matmul_out: out = alpha * (a @ b) + beta * out, in
        place (no autograd).
    tcgemm.torch.linear(x, weight, bias=None)
        F.linear on tcgemm: x @ weight.mT (+ bias); weight.mT is a
        column-major view, not a copy.

Shapes, dtypes, layouts and errors are tcgemm.matmul's.

Routing:

    with tcgemm.torch.routing() as scope:
        y = model(x)          # torch.matmul, @, mm, bmm, F.linear -> tcgemm
    scope.routed, scope.fallbacks

Inside the scope (a TorchFunctionMode), torch.matmul / Tensor.matmul / @,
torch.mm, torch.bmm and torch.nn.functional.linear on bf16 or fp16 CUDA
tensors of one dtype and device go to the ops above; anything else (other
dtypes, CPU tensors, out=, layouts tcgemm cannot read in place, a GPU that is
not sm_90) goes to torch as usual. Meant for eager code; in torch.compile
graphs call the ops directly.
"""

import functools
from typing import Optional

import torch
from torch import Tensor
from torch.overrides import TorchFunctionMode

import tcgemm
from tcgemm import _plan

__all__ = ["matmul", "matmul_out", "linear", "routing", "Routing"]

_HALF = (torch.bfloat16, torch.float16)


def _result_shape(a_shape, b_shape):
    """matmul's result shape (numpy rules), for the fake implementation."""
    a_vector, b_vector = len(a_shape) == 1, len(b_shape) == 1
    a2 = (1,) + tuple(a_shape) if a_vector else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if b_vector else tuple(b_shape)
    torch._check(a2[-1] == b2[-2], lambda: f"tcgemm.matmul: b: shapes cannot be multiplied "
                 f"({tuple(a_shape)} and {tuple(b_shape)})")
    batch = tuple(torch.broadcast_shapes(a2[:-2], b2[:-2]))
    return batch + (() if a_vector else (a2[-2],)) + (() if b_vector else (b2[-1],))


@torch.library.custom_op("tcgemm::matmul", mutates_args=())
def _matmul_op(a: Tensor, b: Tensor, alpha: float = 1.0, out_dtype: Optional[torch.dtype] = None,
               kernel_name: Optional[str] = None) -> Tensor:
    # (Not `kernel`: Inductor's fallback for custom ops takes a keyword of
    # that name and refused the op inside torch.compile on the H200.)
    return tcgemm.matmul(a, b, alpha=alpha, out_dtype=out_dtype, kernel=kernel_name)


@_matmul_op.register_fake
def _matmul_fake(a, b, alpha=1.0, out_dtype=None, kernel_name=None):
    return a.new_empty(_result_shape(a.shape, b.shape), dtype=out_dtype or a.dtype)


@torch.library.custom_op("tcgemm::matmul_out", mutates_args=("out",))
def _matmul_out_op(a: Tensor, b: Tensor, out: Tensor, alpha: float = 1.0,
                   beta: float = 0.0) -> None:
    tcgemm.matmul(a, b, out=out, alpha=alpha, beta=beta)


@_matmul_out_op.register_fake
def _matmul_out_fake(a, b, out, alpha=1.0, beta=0.0):
    torch._check(tuple(out.shape) == _result_shape(a.shape, b.shape),
                 lambda: f"tcgemm.matmul: out: shape {tuple(out.shape)} is not the result's")
    return None


# ---- autograd of tcgemm::matmul ---------------------------------------------------


def _mm(x, y, alpha):
    """alpha * x @ y on tcgemm when x and y are one half dtype, else on torch."""
    if x.dtype in _HALF and y.dtype == x.dtype:
        return _matmul_op(x, y, alpha, None, None)
    return torch.matmul(x, y.to(x.dtype)) * alpha


def _setup_context(ctx, inputs, output):
    a, b, alpha, _, _ = inputs
    ctx.save_for_backward(a, b)
    ctx.alpha = alpha


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    alpha = ctx.alpha
    # Vectors as matrices: a [K] -> [1, K], b [K] -> [K, 1]; grad follows.
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    g = grad.unsqueeze(-2) if a.dim() == 1 else grad
    g = g.unsqueeze(-1) if b.dim() == 1 else g
    g = g.to(a.dtype)
    grad_a = grad_b = None
    if ctx.needs_input_grad[0]:
        grad_a = _mm(g, b2.mT, alpha).sum_to_size(a2.shape).reshape(a.shape)
    if ctx.needs_input_grad[1]:
        if b2.dim() == 2 and a2.dim() > 2:  # a weight shared by a batch: one GEMM over it
            k, n = a2.shape[-1], g.shape[-1]
            grad_b = _mm(a2.reshape(-1, k).mT, g.reshape(-1, n), alpha)
        else:
            grad_b = _mm(a2.mT, g, alpha).sum_to_size(b2.shape)
        grad_b = grad_b.reshape(b.shape)
    return grad_a, grad_b, None, None, None


_matmul_op.register_autograd(_backward, setup_context=_setup_context)


# ---- the public functions ----------------------------------------------------------


def matmul(a: Tensor, b: Tensor, *, alpha: float = 1.0, out_dtype: Optional[torch.dtype] = None,
           kernel: Optional[str] = None) -> Tensor:
    """alpha * (a @ b) through the custom op torch.ops.tcgemm.matmul.

    tcgemm.matmul's semantics (shapes [..., M, K] @ [..., K, N] with
    broadcast batches, bf16/fp16 inputs, out_dtype bf16/fp16/fp32 or
    torch.dtype, layouts, errors) for CUDA torch tensors, on torch's current
    stream; traceable by torch.compile(fullgraph=True), capturable in CUDA
    graphs, differentiable.
    """
    if isinstance(out_dtype, str):
        out_dtype = {"bf16": torch.bfloat16, "fp16": torch.float16,
                     "fp32": torch.float32}[_plan.normalize_dtype("tcgemm.torch.matmul",
                                                                  out_dtype)]
    return _matmul_op(a, b, alpha, out_dtype, kernel)


def matmul_out(a: Tensor, b: Tensor, out: Tensor, *, alpha: float = 1.0,
               beta: float = 0.0) -> Tensor:
    """out = alpha * (a @ b) + beta * out in place (torch.ops.tcgemm.matmul_out);
    returns out. out: the result's shape, bf16/fp16/fp32, not aliasing a or b."""
    _matmul_out_op(a, b, out, alpha, beta)
    return out


def linear(x: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    """torch.nn.functional.linear on tcgemm: x [..., K] @ weight[N, K]^T (+ bias [N])."""
    y = _matmul_op(x, weight.mT, 1.0, None, None)
    return y if bias is None else y + bias


# ---- routing -------------------------------------------------------------------------


def _readable(t: Tensor) -> bool:
    """tcgemm reads t in place: unit stride in one of its last two dimensions."""
    if t.dim() < 2:
        return t.dim() == 1
    rows, cols = t.shape[-2], t.shape[-1]
    row_stride, col_stride = t.stride(-2), t.stride(-1)
    if (col_stride == 1 or cols <= 1) and (row_stride >= max(1, cols) or rows <= 1):
        return True
    return (row_stride == 1 or rows <= 1) and (col_stride >= max(1, rows) or cols <= 1)


def _eligible(*tensors) -> bool:
    first = tensors[0]
    if not isinstance(first, Tensor) or first.dtype not in _HALF or not first.is_cuda:
        return False
    return all(isinstance(t, Tensor) and t.dtype == first.dtype and t.device == first.device
               and _readable(t) for t in tensors)


class Routing(TorchFunctionMode):
    """The scope ``routing()`` returns; counts what it sent where."""

    def __init__(self):
        super().__init__()
        self.routed = 0  # calls that ran on tcgemm
        self.fallbacks = 0  # calls of the routed functions that went to torch
        matmul_any = functools.partial(self._matmul, ndim=None)
        self._routes = {
            torch.matmul: matmul_any,
            Tensor.matmul: matmul_any,
            Tensor.__matmul__: matmul_any,
            torch.mm: functools.partial(self._matmul, ndim=2),
            Tensor.mm: functools.partial(self._matmul, ndim=2),
            torch.bmm: functools.partial(self._matmul, ndim=3),
            Tensor.bmm: functools.partial(self._matmul, ndim=3),
            torch.nn.functional.linear: self._linear,
        }

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = self._routes.get(func)
        if route is not None:
            result = route(args, kwargs)
            if result is not NotImplemented:
                self.routed += 1
                return result
            self.fallbacks += 1
        return func(*args, **kwargs)

    @staticmethod
    def _call(fn, *args):
        # What tcgemm refuses (a shape torch would refuse too, a GPU that is
        # not sm_90, a problem no kernel takes) is torch's to run or to refuse.
        try:
            return fn(*args)
        except (tcgemm.InvalidValueError, tcgemm.InvalidTypeError, tcgemm.NotSupportedError,
                tcgemm.ArchMismatchError):
            return NotImplemented

    def _matmul(self, args, kwargs, ndim):
        # (input, other) positionally; any keyword (out=, say) is torch's.
        if len(args) != 2 or kwargs or not _eligible(*args):
            return NotImplemented
        a, b = args
        if ndim is not None and (a.dim() != ndim or b.dim() != ndim or
                                 (ndim == 3 and a.shape[0] != b.shape[0])):
            return NotImplemented
        return self._call(_matmul_op, a, b, 1.0, None, None)

    def _linear(self, args, kwargs):
        names = ("input", "weight", "bias")
        if len(args) > 3 or set(kwargs) - set(names[len(args):]):
            return NotImplemented
        bound = dict(zip(names, args), **kwargs)
        x, weight, bias = bound.get("input"), bound.get("weight"), bound.get("bias")
        if x is None or weight is None or not isinstance(weight, Tensor) or weight.dim() != 2:
            return NotImplemented
        if not _eligible(x, weight, *(() if bias is None else (bias,))):
            return NotImplemented
        return self._call(linear, x, weight, bias)


def routing() -> Routing:
    """A scope routing torch.matmul, @, mm, bmm and F.linear on bf16/fp16
    CUDA tensors through tcgemm (``with tcgemm.torch.routing(): ...``)."""
    return Routing()
