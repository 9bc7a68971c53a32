"""Shared fixtures. GPU tests need torch with CUDA and an sm_90 (Hopper)
device; without one they skip, saying why."""

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


@pytest.fixture(scope="session")
def torch_cuda():
    """torch, on a Hopper GPU, with fp32 references computed in true fp32."""
    if GPU_SKIP_REASON is not None:
        pytest.skip(GPU_SKIP_REASON)
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch
