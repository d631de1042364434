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
