"""Exact triangle counting and enumeration (seed 004) on the GPU or its njit CPU twin; clustering coefficients.

Vertices are renumbered by rank, the order (degree, id), and each edge is oriented from the lower to the
higher rank, so that every vertex has at most sqrt(2m) out-neighbours N+(x), kept sorted by rank. A
triangle u < x < w (ranks) is found once, at its middle vertex x: u is an in-neighbour of x, and w lies in
both N+(x) and N+(u) after x. The work is vertex-centric: N+(x) is put in a hash table (shared memory on
the GPU, a mark array on the CPU), and for every in-neighbour u only the entries of N+(u) between the
smallest and the largest member of N+(x) are looked up, a contiguous run found by two binary searches.
Every look-up is O(1) and the runs are read in order: the GPU reads them coalesced.

Tasks ("chunks") are 32 consecutive entries of a vertex's row of the input graph, one per lane of a warp
(an entry is a row of the chunk when it is an in-neighbour). The lanes' runs are dealt out cyclically by
the warp scan of ``cuda/warp.py`` (seed 000 Fig. 5's planning, with the lanes' loads side by side), so a
hub's long runs and many light rows are balanced alike; a hub with many in-neighbours has many chunks,
spread over warps. Vertices with few out-neighbours hash them per warp; the rest per block of 8 warps
that take a group of up to 32 chunks in turn, in pieces of ``TriangleConfig.piece`` out-neighbours when
there are more (:mod:`.gpu_triangles`).

Enumeration is a count pass and a scan: the count pass records each chunk's triangles, an exclusive scan
gives each chunk its output offset, and the listing pass writes the chunk's triangles from there (on the
GPU each lane's from the warp's ballot prefix, seed 004's prefix sums, no atomic cursor), in the order
both devices share: chunks in order, then the pieces of N+(x), rows (lanes), entries of each run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numba
import numpy as np

from ..config import TriangleConfig
from ..cuda.arrays import prepare_uploads
from ..hypergraph import Graph

WARP = 32
CHUNK = WARP  # entries of a vertex's row per task: one per lane
GROUP_CHUNKS = 32  # chunks of a vertex with many out-neighbours per block (its warps take them in turn)


class TriangleResult:
    """Triangles of a graph.

    The per-vertex counts stay on the device that counted them until read: ``per_vertex`` and
    ``clustering`` copy them to the host on first use (64 MB for 8M vertices: 20 ms on the H100 machine,
    more than the orientation), so a count whose per-vertex figures are not wanted does not pay for it.

    Attributes
    ----------
    count : int
        Triangles.
    per_vertex : int64[num_vertices]
        Triangles through each vertex (numpy, copied from the device on first use).
    clustering : float64[num_vertices]
        Local clustering coefficient 2 T(v) / (d(v) (d(v) - 1)) (0 below degree 2), on the host.
    average_clustering : float
        Mean of ``clustering`` over all vertices (computed where the counts are).
    transitivity : float
        3 * count / (number of paths of length 2), 0 without such paths.
    seconds : dict
    device : str
    """

    def __init__(self, count: int, per_vertex, degrees: np.ndarray, average_clustering: float,
                 transitivity: float, seconds: dict | None = None, device: str = "cpu"):
        self.count = count
        self._per_vertex = per_vertex
        self._degrees = degrees
        self.average_clustering = average_clustering
        self.transitivity = transitivity
        self.seconds = seconds if seconds is not None else {}
        self.device = device

    @property
    def per_vertex(self) -> np.ndarray:
        if not isinstance(self._per_vertex, np.ndarray):
            self._per_vertex = _steps(self.device).to_host(self._per_vertex)
        return self._per_vertex

    @property
    def clustering(self) -> np.ndarray:
        return clustering_coefficients(self.per_vertex, self._degrees, np)


def clustering_coefficients(per_vertex, degrees, xp=np):
    """2 T(v) / (d(v) (d(v) - 1)) per vertex, 0 below degree 2 (float64); numpy or CuPy (``xp``)."""
    pairs = degrees.astype(np.float64) * (degrees.astype(np.float64) - 1.0)
    return xp.where(pairs > 0, 2.0 * per_vertex / xp.where(pairs > 0, pairs, 1.0), 0.0)


@dataclass
class TrianglePlan:
    """The oriented graph and its tasks, on one device (numpy or CuPy arrays).

    Attributes
    ----------
    offsets, neighbors : int64[n + 1], int32[2m]
        The input graph (symmetric CSR, original ids): a chunk's entries are read from here.
    rank, order : int32[n]
        rank[v] = position of v in the order (degree, id); order = its inverse.
    out_offsets, out_neighbors : int64[n + 1], int32[m]
        N+(x) by rank, members as ranks, ascending.
    chunk_first : int64[n + 1]
        Chunks of rank x are chunk_first[x] .. chunk_first[x + 1] - 1: ceil(d(x) / 32), 32 entries of its
        input row each (the GPU also orients the edges chunk by chunk).
    chunk_vertex : int32[num_chunks]
        The rank each chunk belongs to.
    small_chunks : int64[s]
        Chunks of ranks with in-neighbours and 1 to ``config.small_out`` out-neighbours (a warp each); the
        chunks of ranks without in- or out-neighbours hold no triangle and are left out.
    large_groups : int64[g]
        First chunks of the groups of up to 32 consecutive chunks of the other ranks (a block each).
    config : TriangleConfig
    """

    offsets: object
    neighbors: object
    rank: object
    order: object
    out_offsets: object
    out_neighbors: object
    chunk_first: object
    chunk_vertex: object
    small_chunks: object
    large_groups: object
    config: TriangleConfig

    @property
    def num_chunks(self) -> int:
        return int(self.chunk_vertex.shape[0])


def rank_vertices(degrees, xp=np):
    """(rank, order) as int32 arrays: vertices sorted by (degree, id); numpy or CuPy (``xp``). The degrees
    are sorted as int32 (a degree is below n): half the radix passes of int64 keys."""
    order = xp.argsort(degrees.astype(np.int32), kind="stable").astype(np.int32)
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.shape[0], dtype=np.int32)
    return rank, order


def plan_chunks(rank_degrees, xp=np):
    """(chunk_first, chunk_vertex) of :class:`TrianglePlan`: ceil(d / 32) chunks per rank, given the degrees
    by rank; numpy or CuPy."""
    n = rank_degrees.shape[0]
    chunk_first = xp.zeros(n + 1, dtype=np.int64)
    chunk_first[1:] = xp.cumsum((rank_degrees + CHUNK - 1) // CHUNK)
    chunks = xp.arange(int(chunk_first[-1]), dtype=np.int64)
    # a binary search per chunk: on R-MAT 2^23 0.9 ms on the H100, where a histogram and a scan took 4.0
    chunk_vertex = (xp.searchsorted(chunk_first, chunks, side="right") - 1).astype(np.int32)
    return chunk_first, chunk_vertex


def plan_tasks(rank_degrees, out_offsets, chunk_first, chunk_vertex, config: TriangleConfig, xp=np):
    """(small_chunks, large_groups) of :class:`TrianglePlan`: the chunks of ranks with both in- and out-
    neighbours, given the degrees by rank; numpy or CuPy."""
    out_degrees = out_offsets[1:] - out_offsets[:-1]
    active = (out_degrees > 0) & (rank_degrees > out_degrees)
    kind = (active * (1 + (out_degrees > config.small_out))).astype(np.int8)[chunk_vertex]  # 0 idle, 1 small, 2 large
    small_chunks = xp.flatnonzero(kind == 1)
    large_chunks = xp.flatnonzero(kind == 2)
    large_groups = large_chunks[(large_chunks - chunk_first[chunk_vertex[large_chunks]]) % GROUP_CHUNKS == 0]
    return small_chunks, large_groups


def _put_sorted(triangles, position, a, b, c):
    """Row ``position`` of triangles = (a, b, c) in ascending order. Shared by both devices."""
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
    if a > b:
        a, b = b, a
    triangles[position, 0] = a
    triangles[position, 1] = b
    triangles[position, 2] = c


def _run_bounds(out_offsets, out_neighbors, u, low, high):
    """The run of N+(u) (ascending) with members in [low, high], as (start, length), by two binary
    searches. Shared by both devices."""
    start = out_offsets[u]
    stop = out_offsets[u + 1]
    while start < stop:  # the first member >= low
        middle = (start + stop) >> 1
        if out_neighbors[middle] < low:
            start = middle + 1
        else:
            stop = middle
    end = start
    stop = out_offsets[u + 1]
    while end < stop:  # the first member > high
        middle = (end + stop) >> 1
        if out_neighbors[middle] <= high:
            end = middle + 1
        else:
            stop = middle
    return start, end - start


def _chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets):
    """(x, first entry, entry stop) of a chunk: CHUNK entries of the input row of rank x. Shared."""
    x = chunk_vertex[chunk]
    vertex = order[x]
    first = offsets[vertex] + (chunk - chunk_first[x]) * CHUNK
    return x, first, min(first + CHUNK, offsets[vertex + 1])


put_sorted = numba.njit(inline="always")(_put_sorted)
run_bounds = numba.njit(inline="always")(_run_bounds)
chunk_entries = numba.njit(inline="always")(_chunk_entries)


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
        out_neighbors[out_offsets[x]:position].sort()
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


class _HostSteps:
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


def _steps(device: str):
    if device == "gpu":
        from . import gpu_triangles

        return gpu_triangles.DeviceSteps
    return _HostSteps


class Triangles:
    """A graph prepared for triangle counting and listing on one device (the oriented graph and its tasks
    live there)."""

    def __init__(self, graph: Graph, device: str = "cpu", config: TriangleConfig = TriangleConfig()):
        self.graph = graph
        self.device = device
        self.steps = _steps(device)
        xp = self.steps.module()
        started = time.perf_counter()
        offsets = self.steps.to_device(graph.offsets)
        neighbors = self.steps.to_device(graph.neighbors)
        self.steps.synchronize()
        uploaded = time.perf_counter()
        degrees = offsets[1:] - offsets[:-1]
        rank, order = rank_vertices(degrees, xp)
        rank_degrees = degrees[order]
        chunk_first, chunk_vertex = plan_chunks(rank_degrees, xp)
        out_offsets, out_neighbors = self.steps.orient(offsets, neighbors, rank, order, chunk_first, chunk_vertex)
        self.plan = TrianglePlan(offsets, neighbors, rank, order, out_offsets, out_neighbors, chunk_first,
                                 chunk_vertex, *plan_tasks(rank_degrees, out_offsets, chunk_first, chunk_vertex,
                                                           config, xp), config)
        self.steps.synchronize()
        self.seconds = {"upload": uploaded - started, "orient": time.perf_counter() - uploaded}
        self.chunk_counts = None

    def count(self) -> TriangleResult:
        """Count triangles (globally and per vertex) and the clustering coefficients."""
        xp = self.steps.module()
        started = time.perf_counter()
        chunk_counts, per_rank = self.steps.count(self.plan)
        self.chunk_counts = chunk_counts
        count = int(chunk_counts.sum())
        per_vertex = per_rank[self.plan.rank]
        degrees = self.plan.offsets[1:] - self.plan.offsets[:-1]
        average = float(clustering_coefficients(per_vertex, degrees, xp).mean()) if degrees.shape[0] else 0.0
        paths = float((degrees * (degrees - 1)).sum()) / 2.0
        transitivity = 3.0 * count / paths if paths > 0 else 0.0
        seconds = dict(self.seconds, count=time.perf_counter() - started)
        return TriangleResult(count, per_vertex, self.graph.degrees(), average, transitivity, seconds, self.device)

    def chunks(self, max_triangles: int = 1 << 24):
        """The triangles as int32[t, 3] arrays (ids ascending in each row), at most ``max_triangles`` rows
        each (a task's triangles are never split), in the order both devices share. Needs :meth:`count`
        first (calls it when not yet run)."""
        if self.chunk_counts is None:
            self.count()
        xp = self.steps.module()
        chunk_offsets = xp.zeros(self.chunk_counts.shape[0] + 1, dtype=np.int64)  # where each chunk writes
        chunk_offsets[1:] = xp.cumsum(self.chunk_counts)
        offsets = self.steps.to_host(chunk_offsets)
        num_chunks = offsets.shape[0] - 1
        first = 0
        while first < num_chunks:
            last = int(np.searchsorted(offsets, offsets[first] + max_triangles, side="right")) - 1
            last = min(max(last, first + 1), num_chunks)
            if offsets[last] > offsets[first]:
                yield self.steps.to_host(self.steps.list(self.plan, chunk_offsets, first, last))
            first = last


def count_triangles(graph: Graph, device: str = "cpu") -> TriangleResult:
    """Triangles of ``graph`` (undirected, no self loops or parallel edges), per vertex and in total, and
    the clustering coefficients; the same on both devices."""
    started = time.perf_counter()
    result = Triangles(graph, device).count()
    result.seconds["total"] = time.perf_counter() - started
    return result


def list_triangles(graph: Graph, device: str = "cpu") -> np.ndarray:
    """Every triangle once as int32[t, 3] with ids ascending in each row."""
    parts = list(Triangles(graph, device).chunks())
    return np.concatenate(parts) if parts else np.zeros((0, 3), dtype=np.int32)


def warm_up(device: str = "cpu") -> float:
    """Compile (or load from numba's cache) the kernels on a tiny graph, with tasks small enough that both
    GPU kernels and pieces run; returns seconds."""
    started = time.perf_counter()
    tiny = Graph.from_edges(5, [0, 0, 1, 1, 2, 3, 0], [1, 2, 2, 3, 3, 4, 3])
    for used in ("cpu", "gpu") if device == "gpu" else ("cpu",):
        prepared = Triangles(tiny, used, TriangleConfig(small_out=1, piece=1))
        prepared.count()
        list(prepared.chunks())
    if device == "gpu":
        prepare_uploads()
    return time.perf_counter() - started
