"""PEP 517 backend for tcgemm: scikit-build-core's, with two things first.

1. The CUDA toolkit. The library is CUDA code; without nvcc, CMake would stop
   deep in its compiler detection. This says so up front, in one line, and
   points CMake at /usr/local/cuda/bin/nvcc when nvcc is installed there but
   not on PATH (CUDACXX).
2. The stable ABI. nanobind builds abi3 extensions on CPython >= 3.12 only,
   and CMake's FindPython knows Development.SABIModule from 3.26 on; where
   both hold the wheel is tagged cp312-abi3, elsewhere it is a plain wheel for
   the running interpreter.

Everything else is scikit-build-core's, unchanged.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from scikit_build_core import build as _skbuild
from scikit_build_core.build import *  # noqa: F401,F403  (the PEP 517 hooks)

# The library's CMakeLists asks for CUDAToolkit 12.8 or later; the project is
# developed and tested on CUDA 13.
_MIN_CUDA = (12, 8)
_DEFAULT_NVCC = "/usr/local/cuda/bin/nvcc"
_STABLE_ABI_PYTHON = (3, 12)
_STABLE_ABI_CMAKE = (3, 26)


class CudaToolkitMissing(RuntimeError):
    pass


def _version(text: str, pattern: str) -> tuple[int, ...] | None:
    match = re.search(pattern, text)
    return tuple(int(part) for part in match.groups()) if match else None


def _find_nvcc() -> str:
    """The nvcc CMake will use, or CudaToolkitMissing saying what to do."""
    candidates = [os.environ.get("CUDACXX"), shutil.which("nvcc"), _DEFAULT_NVCC]
    if os.environ.get("CUDA_HOME"):
        candidates.insert(1, os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc"))
    for nvcc in candidates:
        if nvcc and os.path.isfile(nvcc) and os.access(nvcc, os.X_OK):
            return nvcc
    raise CudaToolkitMissing(
        "tcgemm needs the CUDA 13 toolkit (nvcc) to build: nvcc is not on PATH, "
        f"CUDACXX is not set and {_DEFAULT_NVCC} does not exist. Install the CUDA "
        "toolkit (12.8 or later; 13 is what tcgemm is tested with) and put its bin "
        "directory on PATH, e.g. export PATH=/usr/local/cuda/bin:$PATH"
    )


def _check_cuda() -> None:
    nvcc = _find_nvcc()
    try:
        text = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        raise CudaToolkitMissing(
            f"tcgemm needs the CUDA 13 toolkit (nvcc) to build: {nvcc} --version failed: {err}"
        ) from err
    found = _version(text, r"release (\d+)\.(\d+)")
    if found is not None and found < _MIN_CUDA:
        raise CudaToolkitMissing(
            f"tcgemm needs the CUDA 13 toolkit (nvcc) to build; {nvcc} is CUDA "
            f"{found[0]}.{found[1]}, older than {_MIN_CUDA[0]}.{_MIN_CUDA[1]}"
        )
    os.environ.setdefault("CUDACXX", nvcc)


def _stable_abi_possible() -> bool:
    if sys.implementation.name != "cpython" or sys.version_info[:2] < _STABLE_ABI_PYTHON:
        return False
    if sysconfig_free_threaded():
        return False
    cmake = shutil.which("cmake")
    if cmake is None:
        return False
    try:
        text = subprocess.run([cmake, "--version"], capture_output=True, text=True,
                              check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return False
    found = _version(text, r"version (\d+)\.(\d+)")
    return found is not None and found >= _STABLE_ABI_CMAKE


def sysconfig_free_threaded() -> bool:
    import sysconfig

    return bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


def _settings(config_settings: dict | None) -> dict:
    settings = dict(config_settings or {})
    if _stable_abi_possible():
        settings.setdefault("wheel.py-api", "cp312")
    return settings


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _check_cuda()
    return _skbuild.build_wheel(wheel_directory, _settings(config_settings),
                                metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _check_cuda()
    return _skbuild.build_editable(wheel_directory, _settings(config_settings),
                                   metadata_directory)


# pip asks for the metadata first (with --no-build-isolation it does) and
# scikit-build-core checks that the wheel it then builds carries the same
# WHEEL file: the metadata hooks must see the same abi3 setting.
def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _skbuild.prepare_metadata_for_build_wheel(metadata_directory,
                                                     _settings(config_settings))


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None):
    return _skbuild.prepare_metadata_for_build_editable(metadata_directory,
                                                        _settings(config_settings))
