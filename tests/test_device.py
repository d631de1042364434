"""Device choice: the quick answer where no CUDA driver is installed, and numba.cuda's elsewhere."""

import ctypes
import sys

import pytest

import hgpart.device
from hgpart.device import gpu_available, no_cuda_driver


def loader(present: set):
    """A stand-in for ctypes.CDLL that loads only the paths in ``present``; records every path asked for."""
    asked = []

    def load(path):
        asked.append(path)
        if path not in present:
            raise OSError(f"{path}: cannot open shared object file")
        return object()

    load.asked = asked
    return load


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the quick answer is for Linux")
def test_no_cuda_driver_looks_where_numba_cuda_looks(monkeypatch):
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    monkeypatch.delenv("NUMBA_CUDA_DRIVER", raising=False)
    absent = loader(set())
    monkeypatch.setattr(ctypes, "CDLL", absent)
    assert no_cuda_driver()
    assert absent.asked == ["libcuda.so", "libcuda.so.1", "/usr/lib/libcuda.so", "/usr/lib/libcuda.so.1",
                            "/usr/lib64/libcuda.so", "/usr/lib64/libcuda.so.1"]
    for path in absent.asked:  # a driver in any of those places: numba.cuda is asked
        monkeypatch.setattr(ctypes, "CDLL", loader({path}))
        assert not no_cuda_driver(), path
    monkeypatch.setattr(ctypes, "CDLL", absent)
    monkeypatch.setenv("NUMBA_CUDA_DRIVER", "/opt/cuda/libcuda.so")
    assert not no_cuda_driver()
    monkeypatch.delenv("NUMBA_CUDA_DRIVER")
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    assert not no_cuda_driver()


def test_gpu_available_is_false_without_a_driver_whatever_numba_cuda_would_say(monkeypatch):
    cuda = pytest.importorskip("numba.cuda")
    monkeypatch.setattr(cuda, "is_available", lambda: True)
    monkeypatch.setattr(hgpart.device, "no_cuda_driver", lambda: False)
    assert gpu_available()
    monkeypatch.setattr(hgpart.device, "no_cuda_driver", lambda: True)
    assert not gpu_available()
