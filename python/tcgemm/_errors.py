"""tcgemm's exceptions: tcgemm::Status codes and Python-side checks.

Each exception is also the built-in type a Python user would expect, so
``except ValueError`` works, and every one carries ``argument`` (the name of
the argument at fault, e.g. ``"b"`` or ``"out"``; None when no single
argument is) and ``code`` (the tcgemm::StatusCode name, e.g.
``"kInvalidValue"``, or None for checks made in Python only).
"""

from __future__ import annotations

import re

__all__ = [
    "TcgemmError",
    "InvalidValueError",
    "InvalidTypeError",
    "NotSupportedError",
    "ArchMismatchError",
    "CudaError",
]


class TcgemmError(Exception):
    """Base of every error tcgemm raises."""

    def __init__(self, message: str, *, argument: str | None = None, code: str | None = None):
        super().__init__(message)
        self.argument = argument
        self.code = code


class InvalidValueError(TcgemmError, ValueError):
    """A bad value: shapes that do not agree, a CPU or foreign-device tensor,
    strides tcgemm cannot express, an output aliasing an input, a bad scalar
    (tcgemm::StatusCode::kInvalidValue)."""


class InvalidTypeError(TcgemmError, TypeError):
    """An argument of the wrong type: not a tensor, an unsupported dtype,
    dtypes that differ."""


class NotSupportedError(TcgemmError, NotImplementedError):
    """A valid problem that tcgemm does not run (tcgemm::StatusCode::kNotSupported):
    a dimension over 2^31 - 257, or a kernel named by ``kernel=`` that cannot run it."""


class ArchMismatchError(TcgemmError, RuntimeError):
    """No usable CUDA device, or one that is not sm_90 (Hopper)
    (tcgemm::StatusCode::kArchMismatch)."""


class CudaError(TcgemmError, RuntimeError):
    """A CUDA runtime or driver call failed (tcgemm::StatusCode::kCudaError)."""


# tcgemm::StatusCode values (include/tcgemm/tcgemm.h) -> (name, exception).
_BY_CODE = {
    1: ("kInvalidValue", InvalidValueError),
    2: ("kNotSupported", NotSupportedError),
    3: ("kArchMismatch", ArchMismatchError),
    4: ("kCudaError", CudaError),
}

# tcgemm::validate names the operand first ("a is ...", "ldb=...",
# "c.stride=..."); C is the Python `out` (or the output tcgemm allocated).
_ARGUMENT = re.compile(r"^(?:ld)?([abc])\b|^(alpha|beta)\b|^options\.(kernel)\b")
_PYTHON_NAME = {"a": "a", "b": "b", "c": "out", "alpha": "alpha", "beta": "beta",
                "kernel": "kernel"}


def status_error(function: str, code: int, message: str, kernel: str = "") -> TcgemmError:
    """The exception for a tcgemm::Status that is not kSuccess. `kernel`: the
    name passed as kernel=, whose refusals ("<name>: <reason>") name it."""
    name, cls = _BY_CODE.get(code, ("unknown", CudaError))
    match = _ARGUMENT.match(message)
    argument = None
    if kernel and message.startswith(kernel + ":"):
        argument = "kernel"
    elif match:
        argument = _PYTHON_NAME[next(group for group in match.groups() if group)]
    prefix = f"{function}: {argument}: " if argument else f"{function}: "
    return cls(prefix + message, argument=argument, code=name)


def invalid(function: str, argument: str | None, message: str) -> InvalidValueError:
    prefix = f"{function}: {argument}: " if argument else f"{function}: "
    return InvalidValueError(prefix + message, argument=argument)


def wrong_type(function: str, argument: str | None, message: str) -> InvalidTypeError:
    prefix = f"{function}: {argument}: " if argument else f"{function}: "
    return InvalidTypeError(prefix + message, argument=argument)
