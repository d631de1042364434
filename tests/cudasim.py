"""Warp intrinsics for numba's CUDA simulator, which has none (no shuffles, votes, ``match_any_sync`` or ``syncwarp``).

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


def _empty_array(shape, dtype):
    import numpy as np

    return np.empty(shape, dtype)


class _Warp:
    """The lanes of one warp meeting at its intrinsics: each posts its value; the last to arrive copies all 32
    into ``snapshot`` and wakes the others, who read that copy. A lane cannot post its next value before all
    have arrived, so one meeting needs one wait (a barrier would need two: one to post, one to read)."""

    def __init__(self):
        self.condition = threading.Condition()
        self.values = [None] * WARP
        self.arrived = 0
        self.generation = 0
        self.snapshot = None


def _exchange(value):
    """Post this lane's value, wait for the warp, return (all 32 values, this lane). A block's warps live on
    its simulator BlockManager, so they go with it."""
    thread = threading.current_thread()
    key = (tuple(thread.blockIdx), thread.thread_id // WARP)
    with _lock:
        warps = thread._manager.__dict__.setdefault("hgpart_warps", {})
        warp = warps.get(key)
        if warp is None:
            warp = warps[key] = _Warp()
    lane = thread.thread_id % WARP
    with warp.condition:
        warp.values[lane] = value
        warp.arrived += 1
        if warp.arrived == WARP:
            warp.snapshot = list(warp.values)
            warp.arrived = 0
            warp.generation += 1
            warp.condition.notify_all()
            return warp.snapshot, lane
        generation = warp.generation
        while warp.generation == generation:
            if not warp.condition.wait(TIMEOUT_SECONDS):
                raise threading.BrokenBarrierError(f"warp {key}: lanes did not meet within {TIMEOUT_SECONDS} s")
        return warp.snapshot, lane


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


def match_any_sync(self, mask, value):
    values, lane = _exchange(value)
    return sum(1 << other for other, seen in enumerate(values) if seen == values[lane])


def _locked_shared_array(original):
    """The simulator's ``cuda.shared.array`` finds the block's array by call site (file, line) and creates
    it when absent, unlocked: two threads arriving together can each create one, and a thread then
    initialises an array the others never read. This version does the same lookup under a lock; dynamic
    shared memory (shape 0) is left to the original."""
    import sys

    from numba.cuda import types
    from numba.cuda.np import numpy_support

    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return original(self, shape, dtype, alignment)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        frame = sys._getframe(1)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with lock:
            result = self._allocations.get(caller)
            if result is None:
                result = self._allocations[caller] = _empty_array(shape, dtype)
        return result

    return array


ATOMIC_LOCKS = ("addlock", "sublock", "andlock", "orlock", "xorlock", "maxlock", "minlock", "compare_and_swaplock",
                "caslock", "inclock", "declock", "exchlock")


def _one_lock_for_all_atomics(kernelapi):
    """The simulator gives each atomic operation its own lock, so an ``atomic.add`` and an ``atomic.sub`` of the
    same element can interleave and lose one of the two (on a GPU they cannot): a CI failure of the device
    refinement, whose moves add to and take from the same pin counts at once. One lock for all of them makes
    every atomic indivisible with respect to every other, as on the device."""
    lock = threading.Lock()
    for name in ATOMIC_LOCKS:
        assert isinstance(getattr(kernelapi, name), type(lock)), f"the simulator has no {name} to replace"
        setattr(kernelapi, name, lock)


def install():
    import sys

    sys.setswitchinterval(1e-4)  # barriers hand over often: do not let the polling thread hold the GIL 5 ms
    from numba.cuda.simulator import kernelapi

    _one_lock_for_all_atomics(kernelapi)

    if not getattr(kernelapi.FakeCUDAShared.array, "hgpart_locked", False):
        array = _locked_shared_array(kernelapi.FakeCUDAShared.array)
        array.hgpart_locked = True
        kernelapi.FakeCUDAShared.array = array

    for function in (shfl_sync, shfl_up_sync, shfl_down_sync, shfl_xor_sync, syncwarp, activemask, ballot_sync,
                     all_sync, any_sync, match_any_sync):
        setattr(kernelapi.FakeCUDAModule, function.__name__, function)
