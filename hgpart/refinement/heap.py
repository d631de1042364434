"""An indexed binary max-heap over vertices, in flat arrays for numba.

Key order: larger ``keys[v]`` first, ties to the smaller vertex id. ``position[v]`` is -1 when v is out.
State: ``heap`` (int64[n]), ``keys`` (int64[n]), ``position`` (int64[n]), ``size`` (int64[1]). int64
indices and shifts instead of floor division make an update about twice as fast as with int32.

Each operation comes compiled twice from one source: ``heap_*`` are called, ``inlined_heap_*`` are inlined
into the caller's code. 2-way FM's passes (:mod:`.fm2`), which make tens of thousands of updates of a few
dozen instructions each, run markedly faster with them inlined; every inlined copy costs seconds of
compilation on the first run, so other callers call (docs/tuning.md, "Inlined heaps cost compile time").
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def _above(keys, u, v):
    return keys[u] > keys[v] or (keys[u] == keys[v] and u < v)


@numba.njit(cache=True, inline="always")
def _sift_up(heap, keys, position, i):
    v = heap[i]
    while i > 0:
        parent = (i - 1) >> 1
        u = heap[parent]
        if not _above(keys, v, u):
            break
        heap[i] = u
        position[u] = i
        i = parent
    heap[i] = v
    position[v] = i


@numba.njit(cache=True, inline="always")
def _sift_down(heap, keys, position, size, i):
    v = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _above(keys, heap[child + 1], heap[child]):
            child += 1
        u = heap[child]
        if not _above(keys, u, v):
            break
        heap[i] = u
        position[u] = i
        i = child
    heap[i] = v
    position[v] = i


def _push_or_update(heap, keys, position, size, v, key):
    if position[v] < 0:
        keys[v] = key
        heap[size[0]] = v
        position[v] = size[0]
        size[0] += 1
        _sift_up(heap, keys, position, size[0] - 1)
    else:
        old = keys[v]
        keys[v] = key
        if key > old:
            _sift_up(heap, keys, position, position[v])
        else:
            _sift_down(heap, keys, position, size[0], position[v])


def _remove(heap, keys, position, size, v):
    i = position[v]
    if i < 0:
        return
    size[0] -= 1
    last = heap[size[0]]
    position[v] = -1
    if i < size[0]:
        heap[i] = last
        position[last] = i
        _sift_down(heap, keys, position, size[0], i)
        _sift_up(heap, keys, position, position[last])


def _pop(heap, keys, position, size):
    v = heap[0]
    heap_remove(heap, keys, position, size, v)
    return v


heap_push_or_update = numba.njit(cache=True, nogil=True)(_push_or_update)
heap_remove = numba.njit(cache=True, nogil=True)(_remove)
heap_pop = numba.njit(cache=True, nogil=True)(_pop)
inlined_heap_push_or_update = numba.njit(cache=True, inline="always")(_push_or_update)
inlined_heap_pop = numba.njit(cache=True, inline="always")(_pop)


def new_heap(n: int):
    return (np.empty(n, dtype=np.int64), np.zeros(n, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.zeros(1, dtype=np.int64))
