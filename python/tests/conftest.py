"""Shared fixtures. GPU tests need torch with CUDA and an sm_90 (Hopper)
device; without one they skip, saying why, or fail where the environment
variable TCGEMM_REQUIRE_GPU is set (to anything but "" or "0", as on the GPU
machine: scripts/python-check), so that a broken torch or a hidden device
cannot turn the GPU suite into a row of skips."""

import os

import pytest


def _gpu_skip_reason():
    try:
        import torch
    except ImportError:
        return "torch is not installed"
    if not torch.cuda.is_available():
        return "no CUDA device (torch.cuda.is_available() is False)"
    major, minor = torch.cuda.get_device_capability(0)
    if (major, minor) != (9, 0):
        return f"tcgemm's kernels need sm_90 (Hopper); device 0 is sm_{major}{minor}"
    return None


GPU_SKIP_REASON = _gpu_skip_reason()


def require_gpu():
    """Skips the calling test without a usable GPU (fails it when
    TCGEMM_REQUIRE_GPU is set)."""
    if GPU_SKIP_REASON is None:
        return
    if os.environ.get("TCGEMM_REQUIRE_GPU", "") not in ("", "0"):
        pytest.fail(f"TCGEMM_REQUIRE_GPU is set, but {GPU_SKIP_REASON}")
    pytest.skip(GPU_SKIP_REASON)


@pytest.fixture(scope="session")
def torch_cuda():
    """torch, on a Hopper GPU, with fp32 references computed in true fp32."""
    require_gpu()
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch
