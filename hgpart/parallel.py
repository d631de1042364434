"""When to run a numba kernel in parallel: starting threads costs more than a small loop.

Kernels with a ``prange`` come in two drivers over one loop body (a serial ``range`` and a parallel
``prange``); :func:`pick` chooses by the amount of work, and always takes the serial driver on a thread
limited to one numba thread (the initial partitioning's recursion runs its halves on such threads, and
numba's workqueue layer must not be entered from two threads at once).

For njit code whose threads hand work to each other, :func:`fetch_add`, :func:`load_acquire` and
:func:`store_release` are the atomic operations on int64 array elements that numba lacks on the CPU (LLVM's
``atomicrmw add``, acquire loads and release stores). Such a kernel can run as a serial ``nogil`` worker on
Python threads (:func:`on_threads`) instead of a ``prange`` over threads: the same parallel run, without the
seconds that numba's parallel compilation adds to each kernel. Numba does not see their writes: read an
element that only they write through :func:`load_acquire`, never by indexing (numba may take it for the
value it was created with).

While hgpart's Python threads run (:func:`on_threads`, :func:`in_threads`, the initial partitioning's recursion),
:func:`quick_handoffs` shortens the interpreter's switch interval: a thread that returns from an njit kernel
waits for the GIL while another runs Python, by default up to 5 ms, and these threads hand it over thousands of
times a partition.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import numba
import numpy as np
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

SERIAL_BELOW = 100_000  # items (pins, vertices) under which the serial driver is faster
SWITCH_INTERVAL = 0.0002  # seconds: the switch interval within quick_handoffs (docs/tuning.md, "GIL handoffs")
_FORCED: list = [None]    # set by all_parallel(): the drivers forced parallel (a set of names, or ALL_DRIVERS)
ALL_DRIVERS = "all"
PROPOSALS = "proposals"   # the coarsening's proposal rounds (hgpart.coarsening.matching)
_HANDOFFS_LOCK = threading.Lock()
_HANDOFFS = [0, 0.0]  # quick_handoffs blocks running now, the interval to restore after the last


def let_idle_threads_sleep() -> None:
    """Have numba's OpenMP threads sleep between parallel loops (``OMP_WAIT_POLICY=PASSIVE``) instead of spinning
    for a while first, unless the user set the variable. For the partitioning commands: their own helper threads
    (:func:`on_threads`, the initial partitioning's recursion) and the serial steps between parallel loops need
    the cores that spinning threads would hold. OpenMP reads the variable when numba starts its threads, so it
    counts only before then (the commands call it before setting the thread count). The graph commands keep
    OpenMP's default: their parallel loops follow one another closely, and on small graphs sleeping threads
    took longer to wake than the loops ran (docs/tuning.md, "OpenMP's idle threads sleep while partitioning")."""
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def runs_serially(work: int, below: int | None = None, driver: str | None = None) -> bool:
    """Whether ``work`` items go to the serial driver: fewer than ``below`` (default :data:`SERIAL_BELOW`; the
    kernels of another algorithm may have a bound of their own) unless :func:`all_parallel` forces the
    parallel drivers (all, or the one named ``driver``), or a one-thread caller."""
    if numba.get_num_threads() == 1:
        return True
    forced = _FORCED[0]
    if forced is not None and (forced == ALL_DRIVERS or driver in forced):
        return False
    return work < (SERIAL_BELOW if below is None else below)


@contextmanager
def all_parallel(drivers: tuple[str, ...] | None = None):
    """Within it, work of any size takes the parallel drivers (except on one-thread callers): all of them, or
    only those named in ``drivers`` (e.g. :data:`PROPOSALS`), so that :func:`hgpart.compilation.warm_up`
    compiles them on a tiny input: the same results, only slower. Not for concurrent use with other
    partitions in the same process."""
    _FORCED[0] = ALL_DRIVERS if drivers is None else frozenset(drivers)
    try:
        yield
    finally:
        _FORCED[0] = None


def threads_for(work: int, per_thread: int) -> int:
    """Numba's threads for ``work`` items, but at most one per ``per_thread`` of them (starting a thread costs more
    than a little work) and at least one."""
    return max(1, min(numba.get_num_threads(), work // per_thread))


def pick(work: int, serial, parallel):
    """The serial driver for small work or on a one-thread caller, else the parallel one."""
    return serial if runs_serially(work) else parallel



@contextmanager
def quick_handoffs(interval: float | None = None):
    """Within it the interpreter's switch interval (:func:`sys.setswitchinterval`) is at most ``interval``
    seconds (default :data:`SWITCH_INTERVAL`), so that a thread waiting for the GIL (one returning from a
    ``nogil`` kernel, or starting a worker) gets it soon after asking; the caller's interval comes back when the
    last such block ends, whatever the thread. Nests and may run in several threads at once."""
    with _HANDOFFS_LOCK:
        if _HANDOFFS[0] == 0:
            _HANDOFFS[1] = sys.getswitchinterval()
            sys.setswitchinterval(min(SWITCH_INTERVAL if interval is None else interval, _HANDOFFS[1]))
        _HANDOFFS[0] += 1
    try:
        yield
    finally:
        with _HANDOFFS_LOCK:
            _HANDOFFS[0] -= 1
            if _HANDOFFS[0] == 0:
                sys.setswitchinterval(_HANDOFFS[1])


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
    with quick_handoffs(), ThreadPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        return list(pool.map(lambda job: on_one_numba_thread(function, *job), jobs))


_POOLS: dict[int, ThreadPoolExecutor] = {}  # on_threads' helpers, by their number
_POOLS_LOCK = threading.Lock()


def _forget_pools_in_a_forked_child() -> None:
    """A forked child has none of its parent's threads: it starts pools of its own (and new locks, which a
    parent's thread may have held at the fork)."""
    global _POOLS_LOCK, _HANDOFFS_LOCK
    _POOLS.clear()
    _POOLS_LOCK = threading.Lock()
    _HANDOFFS_LOCK = threading.Lock()


os.register_at_fork(after_in_child=_forget_pools_in_a_forked_child)


def on_threads(worker, threads: int, *arguments) -> None:
    """``worker(t, *arguments)`` for t = 0 .. threads - 1 at once, t = 0 on the calling thread and the others
    on a kept pool of helper threads; returns once all are done. For njit workers compiled with
    ``nogil=True`` that share their work through :func:`fetch_add` or :func:`claim_chunk` (and wait for each
    other only on work that a running worker has taken). numba compiles such a worker in a fraction of the
    time of a ``prange`` over threads (docs/tuning.md, "Compilation and warm-up")."""
    if threads <= 1:
        worker(0, *arguments)
        return
    with _POOLS_LOCK:
        pool = _POOLS.get(threads)
        if pool is None:
            pool = _POOLS[threads] = ThreadPoolExecutor(max_workers=threads - 1, thread_name_prefix="hgpart")
    with quick_handoffs():
        helpers = [pool.submit(worker, t, *arguments) for t in range(1, threads)]
        try:
            worker(0, *arguments)
        finally:
            for helper in helpers:
                helper.result()


def _element_pointer(context, builder, signature, args):
    array = context.make_array(signature.args[0])(context, builder, args[0])
    index = context.cast(builder, args[1], signature.args[1], types.intp)
    return cgutils.get_item_pointer(context, builder, signature.args[0], array, [index])


@intrinsic
def fetch_add(typingctx, array, index, value):
    """In njit code: add ``value`` to ``array[index]`` (int64) atomically; returns the value before."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        return builder.atomic_rmw("add", _element_pointer(context, builder, signature, args), value, "seq_cst")
    return types.int64(array, index, value), codegen


@intrinsic
def load_acquire(typingctx, array, index):
    """In njit code: ``array[index]`` (int64), read so that what its writer wrote before its
    :func:`store_release` is visible after it (and read anew on every call: a loop may wait on it)."""
    def codegen(context, builder, signature, args):
        return builder.load_atomic(_element_pointer(context, builder, signature, args), "acquire", 8)
    return types.int64(array, index), codegen


@intrinsic
def store_release(typingctx, array, index, value):
    """In njit code: ``array[index] = value`` (int64), after everything this thread wrote before it."""
    def codegen(context, builder, signature, args):
        value = context.cast(builder, args[2], signature.args[2], types.int64)
        builder.store_atomic(value, _element_pointer(context, builder, signature, args), "release", 8)
        return context.get_dummy_value()
    return types.void(array, index, value), codegen


def ranges_by_items(offsets, parts: int) -> np.ndarray:
    """int64[parts + 1]: the segments of a CSR (``offsets`` int64[s + 1]) cut into ``parts`` contiguous ranges of
    about as many items each, part t holding segments firsts[t]..firsts[t + 1] - 1 (for workers that each take
    one range, in order)."""
    items = int(offsets[-1])
    firsts = np.searchsorted(offsets, np.arange(parts + 1) * (items / parts)).astype(np.int64)
    firsts[0], firsts[parts] = 0, offsets.shape[0] - 1
    return firsts


@numba.njit(cache=True, nogil=True)
def thread_cursors(counts):
    """From counts[t, s], the items that worker t (of the contiguous ranges of :func:`ranges_by_items`) has for
    segment s: the segments' offsets (int64[s + 1]), and counts[t, s] replaced by where worker t writes its first
    item of segment s, after the workers before it, so that each segment's items come in the order of the ranges."""
    workers, segments = counts.shape
    offsets = np.empty(segments + 1, dtype=np.int64)
    running = 0
    for segment in range(segments):
        offsets[segment] = running
        for t in range(workers):
            count = counts[t, segment]
            counts[t, segment] = running
            running += count
    offsets[segments] = running
    return offsets


@numba.njit(inline="always")
def claim_chunk(taken, size, total):
    """In njit code: the next chunk of ``size`` of ``total`` items from the shared counter ``taken`` (int64[1],
    zero at the start), as (first, last); first == last once none is left."""
    first = min(fetch_add(taken, 0, 1) * size, total)
    return first, min(first + size, total)
