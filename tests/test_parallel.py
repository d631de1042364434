"""The host's atomic operations for njit code and its thread pool (hgpart.parallel)."""

import os
import sys
import threading
import time

import numba
import numpy as np
import pytest

from hgpart.parallel import (PROPOSALS, SERIAL_BELOW, SWITCH_INTERVAL, all_parallel, claim_chunk, fetch_add,
                             in_threads, load_acquire, on_threads, quick_handoffs, runs_serially, store_release)


@numba.njit(nogil=True, cache=False)
def _chain_worker(t, n, taken, done, value, taker):
    """Thread t of :func:`_chain`: takes items from the shared counter until none is left."""
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


@numba.njit(parallel=True, cache=False)
def _chain(n, threads):
    """Items handed out by a shared counter; item i waits for item i - 1 and adds one to its value."""
    taken = np.zeros(1, dtype=np.int64)
    done = np.zeros(n, dtype=np.int64)
    value = np.zeros(n, dtype=np.int64)
    taker = np.full(n, -1, dtype=np.int64)
    for t in numba.prange(threads):
        _chain_worker(t, n, taken, done, value, taker)
    return value, taker, load_acquire(taken, 0)  # numba does not see the intrinsics' writes: no taken[0]


def test_every_item_is_taken_once_and_sees_the_one_before():
    for threads in (1, 2, 4):
        value, taker, taken = _chain(20_000, threads)
        assert np.array_equal(value, np.arange(20_000))
        assert taker.min() >= 0 and taker.max() < threads
        assert taken == 20_000 + threads  # each thread's last fetch finds the items gone


def _chain_on_threads(n, threads):
    taken, done = np.zeros(1, dtype=np.int64), np.zeros(n, dtype=np.int64)
    value, taker = np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64)
    on_threads(_chain_worker, threads, n, taken, done, value, taker)
    return value, taker, int(taken[0])  # read from Python, after the workers are done


def test_on_threads_runs_every_worker_once_at_the_same_time():
    """Workers that wait for each other's items finish only if they all run at once; each item is taken once."""
    for threads in (1, 2, 4, 7):
        value, taker, taken = _chain_on_threads(20_000, threads)
        assert np.array_equal(value, np.arange(20_000))
        assert taker.min() >= 0 and taker.max() < threads
        assert taken == 20_000 + threads
    seen = []
    on_threads(lambda t, out: out.append(t), 5, seen)
    assert sorted(seen) == [0, 1, 2, 3, 4]


def test_on_threads_raises_what_a_worker_raises():
    def worker(t):
        if t == 2:
            raise ValueError("worker 2")
    with pytest.raises(ValueError, match="worker 2"):
        on_threads(worker, 4)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_on_threads_works_in_a_forked_child():
    """A child forked after the pools started has none of their threads: it must start its own."""
    _chain_on_threads(1000, 3)  # the parent's pool of two helpers
    pid = os.fork()
    if pid == 0:  # the child: exit 0 only if its run completes
        code = 1
        try:
            value, _, _ = _chain_on_threads(1000, 3)
            code = 0 if np.array_equal(value, np.arange(1000)) else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child hung")


@numba.njit(nogil=True, cache=False)
def _count_claims(t, taken, size, counts):
    """Thread t adds one to every item of the chunks it claims."""
    while True:
        first, last = claim_chunk(taken, size, counts.shape[0])
        if first == last:
            break
        for i in range(first, last):
            counts[i] += 1


def test_claimed_chunks_cover_every_item_once():
    for total, size, threads in ((0, 4, 3), (1, 4, 3), (1000, 7, 4), (1024, 256, 2), (5, 1, 8)):
        counts = np.zeros(total, dtype=np.int64)
        on_threads(_count_claims, threads, np.zeros(1, dtype=np.int64), size, counts)
        assert np.all(counts == 1), (total, size, threads)


def test_quick_handoffs_shortens_the_switch_interval_until_the_last_block_ends():
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.004)
        with quick_handoffs():
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
            with quick_handoffs(0.5):  # never longer than the caller's
                assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
            assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
        assert sys.getswitchinterval() == pytest.approx(0.004)
        # blocks of two threads that overlap: the interval comes back when the later one ends
        entered, release = threading.Event(), threading.Event()

        def other():
            with quick_handoffs():
                entered.set()
                release.wait(10)

        thread = threading.Thread(target=other)
        with quick_handoffs():
            thread.start()
            entered.wait(10)
        assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)  # the other block still runs
        release.set()
        thread.join(10)
        assert sys.getswitchinterval() == pytest.approx(0.004)
        with pytest.raises(KeyError):  # an error inside restores it too
            with quick_handoffs():
                raise KeyError
        assert sys.getswitchinterval() == pytest.approx(0.004)
    finally:
        sys.setswitchinterval(before)


def test_the_pools_hand_off_quickly_while_their_workers_run():
    seen = []
    on_threads(lambda t, out: out.append(sys.getswitchinterval()), 3, seen)
    assert seen == [pytest.approx(SWITCH_INTERVAL)] * 3
    assert in_threads(lambda job: sys.getswitchinterval(), [(1,), (2,)], 2) == [pytest.approx(SWITCH_INTERVAL)] * 2
    assert sys.getswitchinterval() > SWITCH_INTERVAL


def test_all_parallel_forces_the_drivers_it_names_and_no_others():
    threads = numba.get_num_threads()
    numba.set_num_threads(2)
    try:
        small, large = SERIAL_BELOW - 1, SERIAL_BELOW
        assert runs_serially(small) and runs_serially(small, driver=PROPOSALS) and not runs_serially(large)
        with all_parallel():
            assert not runs_serially(small) and not runs_serially(small, driver=PROPOSALS)
        with all_parallel((PROPOSALS,)):
            assert not runs_serially(small, driver=PROPOSALS)
            assert runs_serially(small) and runs_serially(small, driver="another") and not runs_serially(large)
        assert runs_serially(small, driver=PROPOSALS)
        numba.set_num_threads(1)
        with all_parallel():
            assert runs_serially(large)  # a one-thread caller never takes a parallel driver
    finally:
        numba.set_num_threads(threads)
