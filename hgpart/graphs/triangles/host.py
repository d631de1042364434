"""Triangle counting and listing on the host: the njit CPU twin of the GPU kernels (:mod:`.device`,
:mod:`.device_count`), with the same tasks and the same order of the list.

The method follows T. M. Low, V. N. Rao, M. Lee, D. Popovici, F. Franchetti and S. McMillan, "First look:
linear algebra-based triangle counting without matrix multiplication", IEEE HPEC 2017 (see :mod:`.driver`).
N+(x) is marked in a per-worker array (mark[w] == x) instead of a hash table; the chunks are cut into
consecutive blocks dealt round robin to numba's threads.
"""

from __future__ import annotations

import numba
import numpy as np

from ...hypergraph import sort_segment
from . import common
from .plan import TrianglePlan

put_sorted = numba.njit(inline="always")(common.put_sorted)
run_bounds = numba.njit(inline="always")(common.run_bounds)
chunk_entries = numba.njit(inline="always")(common.chunk_entries)


@numba.njit(parallel=True, cache=True)
def orient_cpu(offsets, neighbors, rank, order):
    """N+ by rank: (out_offsets int64[n + 1], out_neighbors int32[m]), each row ascending."""
    n = order.shape[0]
    out_degrees = np.zeros(n, dtype=np.int64)
    for x in numba.prange(n):
        vertex = order[x]
        for entry in range(offsets[vertex], offsets[vertex + 1]):
            if rank[neighbors[entry]] > x:
                out_degrees[x] += 1
    out_offsets = np.zeros(n + 1, dtype=np.int64)
    out_offsets[1:] = np.cumsum(out_degrees)
    out_neighbors = np.empty(out_offsets[n], dtype=np.int32)
    for x in numba.prange(n):
        vertex = order[x]
        position = out_offsets[x]
        for entry in range(offsets[vertex], offsets[vertex + 1]):
            neighbor = rank[neighbors[entry]]
            if neighbor > x:
                out_neighbors[position] = neighbor
                position += 1
        sort_segment(out_neighbors, out_offsets[x], position)  # most rows are short
    return out_offsets, out_neighbors


@numba.njit(inline="always")
def _chunk_triangles(chunk, chunk_vertex, chunk_first, order, rank, offsets, neighbors, out_offsets, out_neighbors,
                     piece, mark, per_vertex, triangles, position, write):
    """Triangles of a chunk, N+(x) marked in ``mark`` (mark[w] == x): counted on their three vertices (ranks)
    when not ``write``, else written (original ids) from ``position``, in the GPU's order. Returns how many."""
    x, entry_first, entry_stop = chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets)
    found = 0
    for piece_first in range(out_offsets[x], out_offsets[x + 1], piece):
        low = out_neighbors[piece_first]
        high = out_neighbors[min(piece_first + piece, out_offsets[x + 1]) - 1]
        for entry in range(entry_first, entry_stop):
            u = rank[neighbors[entry]]
            if u >= x:
                continue
            start, length = run_bounds(out_offsets, out_neighbors, u, low, high)
            hits = 0
            for p in range(start, start + length):
                w = out_neighbors[p]
                if mark[w] == x:
                    if write:
                        put_sorted(triangles, position + found + hits, order[u], order[x], order[w])
                    else:
                        per_vertex[w] += 1
                    hits += 1
            if not write:
                per_vertex[u] += hits
            found += hits
    if not write:
        per_vertex[x] += found
    return found


@numba.njit(inline="always")
def _mark(mark, out_offsets, out_neighbors, x):
    for p in range(out_offsets[x], out_offsets[x + 1]):
        mark[out_neighbors[p]] = x


@numba.njit(parallel=True, cache=True)
def count_triangles_cpu(chunk_vertex, chunk_first, order, rank, offsets, neighbors, out_offsets, out_neighbors,
                        piece, workers, blocks):
    """(chunk_counts int64[num_chunks], per_vertex int64[n] by rank): the chunks cut into ``blocks``
    consecutive ranges, dealt round robin to ``workers`` parallel workers, each with its own mark array and
    per-vertex counts."""
    n = order.shape[0]
    num_chunks = chunk_vertex.shape[0]
    chunk_counts = np.zeros(num_chunks, dtype=np.int64)
    per_worker = np.zeros((workers, n), dtype=np.int64)
    marks = np.full((workers, n), -1, dtype=np.int32)
    unused = np.zeros((0, 3), dtype=np.int32)
    for worker in numba.prange(workers):
        for block in range(worker, blocks, workers):
            marked = -1
            for chunk in range(num_chunks * block // blocks, num_chunks * (block + 1) // blocks):
                x = chunk_vertex[chunk]
                if x != marked:
                    _mark(marks[worker], out_offsets, out_neighbors, x)
                    marked = x
                chunk_counts[chunk] = _chunk_triangles(chunk, chunk_vertex, chunk_first, order, rank, offsets,
                                                       neighbors, out_offsets, out_neighbors, piece, marks[worker],
                                                       per_worker[worker], unused, 0, False)
    per_vertex = np.zeros(n, dtype=np.int64)
    for worker in range(workers):
        per_vertex += per_worker[worker]
    return chunk_counts, per_vertex


@numba.njit(cache=True)
def list_triangles_cpu(chunk_vertex, chunk_first, order, rank, offsets, neighbors, out_offsets, out_neighbors,
                       piece, first_chunk, last_chunk, total):
    """The triangles of chunks [first_chunk, last_chunk), in order, as int32[total, 3] (original ids, sorted)."""
    triangles = np.empty((total, 3), dtype=np.int32)
    mark = np.full(order.shape[0], -1, dtype=np.int32)
    unused = np.zeros(0, dtype=np.int64)
    position = 0
    marked = -1
    for chunk in range(first_chunk, last_chunk):
        x = chunk_vertex[chunk]
        if x != marked:
            _mark(mark, out_offsets, out_neighbors, x)
            marked = x
        position += _chunk_triangles(chunk, chunk_vertex, chunk_first, order, rank, offsets, neighbors, out_offsets,
                                     out_neighbors, piece, mark, unused, triangles, position, True)
    return triangles


class HostSteps:
    """The array module and steps of the CPU twin (numpy and njit), with the attributes of
    :class:`.device.DeviceSteps`."""

    @staticmethod
    def module():
        return np

    @staticmethod
    def to_device(array):
        return array

    @staticmethod
    def to_host(array):
        return array

    @staticmethod
    def synchronize():
        pass

    @staticmethod
    def orient(offsets, neighbors, rank, order, chunk_first, chunk_vertex):
        return orient_cpu(offsets, neighbors, rank, order)

    @staticmethod
    def count(plan: TrianglePlan):
        workers = numba.get_num_threads()
        return count_triangles_cpu(plan.chunk_vertex, plan.chunk_first, plan.order, plan.rank, plan.offsets,
                                   plan.neighbors, plan.out_offsets, plan.out_neighbors, plan.config.piece, workers,
                                   max(1, min(workers * 16, plan.num_chunks)))

    @staticmethod
    def list(plan: TrianglePlan, chunk_offsets, first_chunk, last_chunk):
        total = int(chunk_offsets[last_chunk] - chunk_offsets[first_chunk])
        return list_triangles_cpu(plan.chunk_vertex, plan.chunk_first, plan.order, plan.rank, plan.offsets,
                                  plan.neighbors, plan.out_offsets, plan.out_neighbors, plan.config.piece,
                                  first_chunk, last_chunk, total)

