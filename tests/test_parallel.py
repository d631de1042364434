"""The host's atomic operations for njit code (hgpart.parallel)."""

import numba
import numpy as np

from hgpart.parallel import fetch_add, load_acquire, store_release


@numba.njit(parallel=True, cache=False)
def _chain(n, threads):
    """Items handed out by a shared counter; item i waits for item i - 1 and adds one to its value."""
    taken = np.zeros(1, dtype=np.int64)
    done = np.zeros(n, dtype=np.int64)
    value = np.zeros(n, dtype=np.int64)
    taker = np.full(n, -1, dtype=np.int64)
    for t in numba.prange(threads):
        while True:
            i = fetch_add(taken, 0, 1)
            if i >= n:
                break
            if i > 0:
                while load_acquire(done, i - 1) == 0:
                    pass
                value[i] = value[i - 1] + 1
            taker[i] = t
            store_release(done, i, 1)
    return value, taker, load_acquire(taken, 0)  # numba does not see the intrinsics' writes: no taken[0]


def test_every_item_is_taken_once_and_sees_the_one_before():
    for threads in (1, 2, 4):
        value, taker, taken = _chain(20_000, threads)
        assert np.array_equal(value, np.arange(20_000))
        assert taker.min() >= 0 and taker.max() < threads
        assert taken == 20_000 + threads  # each thread's last fetch finds the items gone
