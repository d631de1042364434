"""Device choice: ``cpu`` (numba njit, all cores), ``gpu`` (numba.cuda) or ``auto``."""

from __future__ import annotations

import ctypes
import importlib
import os
import sys

from .errors import DeviceError

DEVICES = ("auto", "cpu", "gpu")

# where numba.cuda looks for the driver library on Linux: the loader's path, then these folders
CUDA_DRIVER_NAMES, CUDA_DRIVER_FOLDERS = ("libcuda.so", "libcuda.so.1"), ("", "/usr/lib", "/usr/lib64")


def no_cuda_driver() -> bool:
    """True when, on Linux, the CUDA driver library loads from none of the places numba.cuda looks in: then no
    GPU can be used, which this says in microseconds where importing numba.cuda to learn it takes about 0.7 s
    (every command's start on a machine without a GPU). False on other systems, under the CUDA simulator
    (``NUMBA_ENABLE_CUDASIM``) and where ``NUMBA_CUDA_DRIVER`` names the library: numba.cuda decides there."""
    if (not sys.platform.startswith("linux") or os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
            or os.environ.get("NUMBA_CUDA_DRIVER")):
        return False
    for folder in CUDA_DRIVER_FOLDERS:
        for name in CUDA_DRIVER_NAMES:
            try:
                ctypes.CDLL(os.path.join(folder, name))
            except OSError:
                continue
            return False
    return True


def gpu_available() -> bool:
    """True when numba.cuda is installed and sees a usable GPU (not asked where no CUDA driver is installed)."""
    if no_cuda_driver():
        return False
    try:
        from numba import cuda
    except Exception:  # numba-cuda not installed or broken
        return False
    try:
        return bool(cuda.is_available())
    except Exception:
        return False


def cupy_available() -> bool:
    """True when CuPy (the ``gpu`` extra: device sorts and scans) imports."""
    try:
        importlib.import_module("cupy")
    except Exception:
        return False
    return True


def resolve_device(requested: str, gpu_implemented: bool = False) -> tuple[str, str | None]:
    """The device that will run, and a note to show the user when ``auto`` falls back although a GPU is there
    (CuPy missing). Without a GPU, ``auto`` quietly means the CPU; summaries name the device that ran.

    ``gpu_implemented`` says whether the requested job has a GPU path in this version.
    """
    if requested not in DEVICES:
        raise DeviceError(f"unknown device {requested!r} (auto, cpu or gpu)")
    if requested == "cpu":
        return "cpu", None
    if not gpu_implemented:
        if requested == "gpu":
            raise DeviceError("--device gpu: this job has no GPU path in this version of hgpart; use --device cpu")
        return "cpu", None
    if not gpu_available():
        if requested == "gpu":
            raise DeviceError("--device gpu: no usable CUDA GPU found (numba.cuda.is_available() is False)")
        return "cpu", None  # the usual case on a machine without a GPU: the summary says "device": "cpu"
    if not cupy_available():
        if requested == "gpu":
            raise DeviceError("--device gpu: CuPy is not installed (pip install 'hgpart[gpu]')")
        return "cpu", "CuPy is not installed (pip install 'hgpart[gpu]'); running on the CPU"
    return "gpu", None
