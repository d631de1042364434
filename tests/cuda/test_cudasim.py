"""The simulator support of tests/cudasim.py itself (run under NUMBA_ENABLE_CUDASIM=1 by
``test_gpu_code_in_the_simulator``)."""

import time

import numpy as np
import pytest
from numba import cuda

from hgpart.cuda.arrays import SIMULATED

pytestmark = pytest.mark.gpu


@pytest.mark.skipif(not SIMULATED, reason="checks the CUDA simulator")
def test_every_thread_of_a_block_gets_the_same_shared_array(monkeypatch):
    """numba's simulator creates a block's shared array on first use without a lock; when creation is slow
    (here: 10 ms) threads used to get different arrays and read memory nobody initialised (a CI failure)."""
    from tests import cudasim

    real_empty = np.empty

    def slow_empty(*args, **kwargs):
        time.sleep(0.01)
        return real_empty(*args, **kwargs)

    monkeypatch.setattr(cudasim, "_empty_array", slow_empty)

    @cuda.jit
    def rotate(out):
        values = cuda.shared.array(64, np.int32)
        thread = cuda.threadIdx.x
        values[thread] = thread
        cuda.syncthreads()
        out[thread] = values[(thread + 1) % 64]

    out = np.zeros(64, np.int32)
    rotate[1, 64](out)
    np.testing.assert_array_equal(out, (np.arange(64) + 1) % 64)


class _SlowCell:
    """One integer whose reads take 10 ms, so that two read-modify-writes that are not exclusive of each
    other overlap for certain."""

    def __init__(self):
        self.value = 0

    def __getitem__(self, index):
        value = self.value
        time.sleep(0.01)
        return value

    def __setitem__(self, index, value):
        self.value = value


@pytest.mark.skipif(not SIMULATED, reason="checks the CUDA simulator")
def test_an_atomic_add_and_an_atomic_sub_of_one_element_do_not_overlap():
    """numba's simulator locks each atomic operation by its own lock, so an add and a sub of the same element
    could each read the old value and one of them was lost (a CI failure of the device refinement, whose
    moves add to and take from the same pin counts). Three threads: +5, -2, +1 must leave 4."""
    import threading

    from numba.cuda.simulator.kernelapi import FakeCUDAAtomic

    cell = _SlowCell()
    atomic = FakeCUDAAtomic()
    threads = [threading.Thread(target=atomic.add, args=(cell, 0, 5)),
               threading.Thread(target=atomic.sub, args=(cell, 0, 2)),
               threading.Thread(target=atomic.max, args=(cell, 0, 0)),
               threading.Thread(target=atomic.add, args=(cell, 0, 1))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cell.value == 4
