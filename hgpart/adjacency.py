"""A graph's symmetric CSR from its edge list, on threads: what :meth:`hgpart.hypergraph.Graph.from_edges`
builds, and so what every graph file and generated graph goes through.

Each thread owns a range of rows holding about an equal share of the entries, reads the whole edge list and
writes only the entries of its rows: no atomics and no per-thread copies of the rows' counters, its writes stay
within its share of the output, and a row's entries arrive in edge order whatever the number of threads. A row
is then ordered by neighbour (kept as it is when already ascending, by insertion when short, else by a sort of
(neighbour, place) keys, which keeps equal neighbours in edge order) and its parallel edges merged in that
order, so the result is the same on any number of threads.
"""

from __future__ import annotations

import numba
import numpy as np

from .parallel import on_threads, threads_for

SUM, MIN, MAX = 0, 1, 2  # how parallel edges merge (Graph.from_edges' ``merge``: "sum", "min", "max")
SHORT_ROW = 16  # rows up to this long are ordered by insertion
EDGES_PER_THREAD = 1 << 18  # fewer edges than this per thread: fewer threads (starting one costs more)


@numba.njit(cache=True, nogil=True)
def _count_rows(thread, row_bounds, sources, targets, counts):
    """counts[u + 1] = entries of row u (one per edge end, self loops left out), for this thread's rows."""
    first, stop = row_bounds[thread], row_bounds[thread + 1]
    for i in range(sources.shape[0]):
        u, v = sources[i], targets[i]
        if u != v:
            if first <= u < stop:
                counts[u + 1] += 1
            if first <= v < stop:
                counts[v + 1] += 1


@numba.njit(cache=True, nogil=True)
def _place_rows(thread, row_bounds, sources, targets, weights, offsets, neighbors, edge_weights):
    """Each edge's two entries written into this thread's rows, in edge order."""
    first, stop = row_bounds[thread], row_bounds[thread + 1]
    if first == stop:
        return
    cursor = offsets[first:stop].copy()
    for i in range(sources.shape[0]):
        u, v = sources[i], targets[i]
        if u != v:
            if first <= u < stop:
                place = cursor[u - first]
                neighbors[place] = v
                edge_weights[place] = weights[i]
                cursor[u - first] = place + 1
            if first <= v < stop:
                place = cursor[v - first]
                neighbors[place] = u
                edge_weights[place] = weights[i]
                cursor[v - first] = place + 1


@numba.njit(cache=True, nogil=True)
def order_row(neighbors, edge_weights, begin, end, keys, scratch_weights):
    """Row [begin, end) ordered by neighbour, equal neighbours in their order (stable); keys int64 and
    scratch_weights float64 of at least end - begin."""
    length = end - begin
    if length <= SHORT_ROW:
        for p in range(begin + 1, end):
            neighbor, weight = neighbors[p], edge_weights[p]
            q = p - 1
            while q >= begin and neighbors[q] > neighbor:
                neighbors[q + 1] = neighbors[q]
                edge_weights[q + 1] = edge_weights[q]
                q -= 1
            neighbors[q + 1] = neighbor
            edge_weights[q + 1] = weight
        return
    for p in range(length):  # (neighbour, place): distinct, so any sort keeps equal neighbours in order
        keys[p] = (np.int64(neighbors[begin + p]) << 32) | p
        scratch_weights[p] = edge_weights[begin + p]
    row_keys = keys[:length]
    row_keys.sort()
    for p in range(length):
        key = row_keys[p]
        neighbors[begin + p] = key >> 32
        edge_weights[begin + p] = scratch_weights[key & 0xFFFFFFFF]


@numba.njit(cache=True, nogil=True)
def _merge_rows(thread, row_bounds, offsets, neighbors, edge_weights, rule, longest, kept):
    """This thread's rows ordered by neighbour and their parallel edges merged by ``rule`` (in edge order) at
    the row's start; kept[u + 1] = the entries row u keeps."""
    first, stop = row_bounds[thread], row_bounds[thread + 1]
    keys = np.empty(longest, dtype=np.int64)
    scratch_weights = np.empty(longest, dtype=np.float64)
    for u in range(first, stop):
        begin, end = offsets[u], offsets[u + 1]
        ascending = True
        for p in range(begin + 1, end):
            if neighbors[p] <= neighbors[p - 1]:
                ascending = False
                break
        if ascending:
            kept[u + 1] = end - begin
            continue
        order_row(neighbors, edge_weights, begin, end, keys, scratch_weights)
        q = begin
        for p in range(begin, end):
            if p > begin and neighbors[p] == neighbors[q - 1]:
                if rule == MIN:
                    edge_weights[q - 1] = min(edge_weights[q - 1], edge_weights[p])
                elif rule == MAX:
                    edge_weights[q - 1] = max(edge_weights[q - 1], edge_weights[p])
                else:
                    edge_weights[q - 1] += edge_weights[p]
            else:
                neighbors[q] = neighbors[p]
                edge_weights[q] = edge_weights[p]
                q += 1
        kept[u + 1] = q - begin


@numba.njit(cache=True, nogil=True)
def _compact_rows(thread, row_bounds, offsets, neighbors, edge_weights, new_offsets, out_neighbors, out_weights):
    """The kept entries of this thread's rows, moved to their places in the merged CSR."""
    for u in range(row_bounds[thread], row_bounds[thread + 1]):
        begin = offsets[u]
        length = new_offsets[u + 1] - new_offsets[u]
        out_neighbors[new_offsets[u]:new_offsets[u + 1]] = neighbors[begin:begin + length]
        out_weights[new_offsets[u]:new_offsets[u + 1]] = edge_weights[begin:begin + length]


def balanced_rows(offsets: np.ndarray, threads: int) -> np.ndarray:
    """int64[threads + 1]: the bounds of ``threads`` ranges of the rows of a CSR (offsets int64[n + 1]) holding
    about equal entries."""
    n = offsets.shape[0] - 1
    bounds = np.searchsorted(offsets, np.arange(threads + 1) * (offsets[n] / threads)).astype(np.int64)
    bounds[0], bounds[threads] = 0, n
    return np.maximum.accumulate(np.minimum(bounds, n))


def symmetric_csr(num_vertices: int, sources: np.ndarray, targets: np.ndarray, weights: np.ndarray, rule: int,
                  threads: int | None = None) -> tuple:
    """The symmetric CSR of undirected edges: self loops dropped, each row ascending, parallel edges (also (u,
    v) beside (v, u)) merged by ``rule`` (SUM, MIN or MAX) in edge order.

    Parameters
    ----------
    num_vertices : int
    sources, targets : int64[m]
        Edge ends, 0-based, checked by the caller to lie in range.
    weights : float64[m]
    rule : int
    threads : int, optional
        Threads to use; by default numba's, fewer for few edges (one per EDGES_PER_THREAD at most). The result
        does not depend on it.

    Returns
    -------
    offsets : int64[num_vertices + 1]
    neighbors : int32[entries]
    edge_weights : float64[entries]
    """
    m = sources.shape[0]
    threads = threads or threads_for(m, EDGES_PER_THREAD)
    rows = np.linspace(0, num_vertices, threads + 1).astype(np.int64)  # counts: any ranges do
    counts = np.zeros(num_vertices + 1, dtype=np.int64)
    on_threads(_count_rows, threads, rows, sources, targets, counts)
    offsets = np.cumsum(counts)
    rows = balanced_rows(offsets, threads)
    neighbors = np.empty(offsets[-1], dtype=np.int32)
    edge_weights = np.empty(offsets[-1], dtype=np.float64)
    on_threads(_place_rows, threads, rows, sources, targets, weights, offsets, neighbors, edge_weights)
    longest = int(counts.max()) if num_vertices else 0
    kept = np.zeros(num_vertices + 1, dtype=np.int64)
    on_threads(_merge_rows, threads, rows, offsets, neighbors, edge_weights, rule, longest, kept)
    new_offsets = np.cumsum(kept)
    if new_offsets[-1] == offsets[-1]:  # no parallel edges: every row is in place
        return offsets, neighbors, edge_weights
    out_neighbors = np.empty(new_offsets[-1], dtype=np.int32)
    out_weights = np.empty(new_offsets[-1], dtype=np.float64)
    on_threads(_compact_rows, threads, rows, offsets, neighbors, edge_weights, new_offsets, out_neighbors,
               out_weights)
    return new_offsets, out_neighbors, out_weights
