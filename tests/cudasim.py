"""Warp intrinsics for numba's CUDA simulator, which has none (no shuffles, votes or ``syncwarp``).

The simulator runs every CUDA thread as a Python thread. Here the 32 threads of a warp meet at a
barrier for each intrinsic: each lane posts its value, all read, all leave. That is exactly the
semantics of a converged warp (mask 0xffffffff), which is how every kernel of hgpart calls them, so the
GPU kernels run unchanged on a machine without a GPU, slowly, on small inputs. ``install()`` patches the
simulator's fake ``cuda`` module; it is called from ``conftest.py`` when ``NUMBA_ENABLE_CUDASIM=1``.
"""

from __future__ import annotations

import threading

WARP = 32
TIMEOUT_SECONDS = 120.0
_lock = threading.Lock()
_warps: dict = {}


class _Warp:
    def __init__(self):
        self.barrier = threading.Barrier(WARP, timeout=TIMEOUT_SECONDS)
        self.values = [None] * WARP


def _exchange(value):
    """Post this lane's value, wait for the warp, return (all 32 values, this lane)."""
    thread = threading.current_thread()
    key = (id(thread._manager), tuple(thread.blockIdx), thread.thread_id // WARP)
    with _lock:
        warp = _warps.get(key)
        if warp is None:
            if len(_warps) > 4096:
                _warps.clear()
            warp = _warps[key] = _Warp()
    lane = thread.thread_id % WARP
    warp.values[lane] = value
    warp.barrier.wait()
    values = list(warp.values)
    warp.barrier.wait()
    return values, lane


def shfl_sync(self, mask, value, source):
    values, _ = _exchange(value)
    return values[int(source) % WARP]


def shfl_up_sync(self, mask, value, delta):
    values, lane = _exchange(value)
    return values[lane - delta] if lane >= delta else value


def shfl_down_sync(self, mask, value, delta):
    values, lane = _exchange(value)
    return values[lane + delta] if lane + delta < WARP else value


def shfl_xor_sync(self, mask, value, lane_mask):
    values, lane = _exchange(value)
    return values[(lane ^ int(lane_mask)) % WARP]


def syncwarp(self, mask=0xFFFFFFFF):
    _exchange(None)


def activemask(self):
    return 0xFFFFFFFF


def ballot_sync(self, mask, predicate):
    values, _ = _exchange(bool(predicate))
    return sum(1 << lane for lane, bit in enumerate(values) if bit)


def all_sync(self, mask, predicate):
    values, _ = _exchange(bool(predicate))
    return all(values)


def any_sync(self, mask, predicate):
    values, _ = _exchange(bool(predicate))
    return any(values)


def install():
    import sys

    sys.setswitchinterval(1e-4)  # barriers hand over often: do not let the polling thread hold the GIL 5 ms
    from numba.cuda.simulator import kernelapi

    for function in (shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, syncwarp, activemask, ballot_sync,
                     all_sync, any_sync):
        setattr(kernelapi.FakeCUDAModule, function.__name__, function)
