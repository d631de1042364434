"""When to run a numba kernel in parallel: starting threads costs more than a small loop.

Kernels with a ``prange`` come in two drivers over one loop body (a serial ``range`` and a parallel
``prange``); :func:`pick` chooses by the amount of work, and always takes the serial driver on a thread
limited to one numba thread (the initial partitioning's recursion runs its halves on such threads, and
numba's workqueue layer must not be entered from two threads at once).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba

SERIAL_BELOW = 100_000  # items (pins, vertices) under which the serial driver is faster
_ALL_PARALLEL = [False]   # set by all_parallel()


def runs_serially(work: int) -> bool:
    """Whether ``work`` items go to the serial driver: small work (unless within :func:`all_parallel`), or a
    one-thread caller."""
    return numba.get_num_threads() == 1 or (work < SERIAL_BELOW and not _ALL_PARALLEL[0])


@contextmanager
def all_parallel():
    """Within it, work of any size takes the parallel drivers (except on one-thread callers), so that
    :func:`hgpart.multilevel.warm_up` compiles them on a tiny input: the same results, only slower. Not for
    concurrent use with other partitions in the same process."""
    _ALL_PARALLEL[0] = True
    try:
        yield
    finally:
        _ALL_PARALLEL[0] = False


def pick(work: int, serial, parallel):
    """The serial driver for small work or on a one-thread caller, else the parallel one."""
    return serial if runs_serially(work) else parallel



def on_one_numba_thread(function, *arguments):
    """``function(*arguments)`` with this thread limited to one numba thread (for worker threads, and for a
    caller working beside them: their njit kernels release the GIL and, through :func:`pick`, never enter
    numba's parallel layer); the thread's count is restored afterwards."""
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        return function(*arguments)
    finally:
        numba.set_num_threads(threads)


def in_threads(function, jobs, workers: int) -> list:
    """[function(*job) for job in jobs], on up to ``workers`` threads (:func:`on_one_numba_thread`) when
    there are several jobs; results in the order of ``jobs``."""
    jobs = list(jobs)
    if workers <= 1 or len(jobs) <= 1:
        return [function(*job) for job in jobs]
    with ThreadPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        return list(pool.map(lambda job: on_one_numba_thread(function, *job), jobs))
