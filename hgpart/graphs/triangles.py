"""Exact triangle counting and enumeration (seed 004) on the GPU or its njit CPU twin; clustering coefficients.

Each edge is oriented from the lower to the higher endpoint in the order (degree, id), so every vertex has
at most sqrt(2m) out-neighbours and every triangle {a, b, c} is found exactly once: at its lowest oriented
edge (u, v), as a w in N+(u) ∩ N+(v). The work of an oriented edge is |N+(u)| membership tests of
N+(u)'s entries in N+(v) (binary search). On the GPU (:mod:`.gpu_triangles`) 32 edges at a time go to a
warp and the Fig. 5 planner of seed 000 (``cuda/warp.py``) deals their (edge, entry) pairs out to the
lanes in equal shares, so a heavy edge is split over the lanes and light ones are pooled: the fix for the
imbalance seed 004 measured with one thread per vertex.

Enumeration is a count pass and a scan: each planned share (a lane of a warp's group) counts its
triangles, an exclusive scan of those counts gives each share its output offset, and a second pass
writes the triangles there in the same order, with no atomic cursor. The order (oriented edges in CSR
order, entries in order) is the CPU twin's, so both return the same list.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from ..hypergraph import Graph

WARP = 32


@dataclass
class TriangleResult:
    """Triangles of a graph.

    Attributes
    ----------
    count : int
        Triangles.
    per_vertex : int64[num_vertices]
        Triangles through each vertex.
    clustering : float64[num_vertices]
        Local clustering coefficient 2 T(v) / (d(v) (d(v) - 1)) (0 below degree 2).
    average_clustering : float
        Mean of ``clustering`` over all vertices.
    transitivity : float
        3 * count / (number of paths of length 2), 0 without such paths.
    seconds : dict
    device : str
    """

    count: int
    per_vertex: np.ndarray
    clustering: np.ndarray
    average_clustering: float
    transitivity: float
    seconds: dict = field(default_factory=dict)
    device: str = "cpu"


def orient(offsets, neighbors, xp=np):
    """Oriented CSR: v in N+(u) when (deg u, u) < (deg v, v); rows stay sorted by id. Also the oriented
    edges' sources. Works on numpy or CuPy arrays (``xp``)."""
    n = offsets.shape[0] - 1
    degrees = offsets[1:] - offsets[:-1]
    rows = (xp.searchsorted(offsets, xp.arange(neighbors.shape[0], dtype=np.int64), side="right") - 1)
    rows = rows.astype(np.int32)
    row_degree, neighbor_degree = degrees[rows], degrees[neighbors]
    upward = (row_degree < neighbor_degree) | ((row_degree == neighbor_degree) & (rows < neighbors))
    kept = xp.flatnonzero(upward)
    out_rows, out_neighbors = rows[kept], neighbors[kept]
    out_offsets = xp.zeros(n + 1, dtype=np.int64)
    out_offsets[1:] = xp.cumsum(xp.bincount(out_rows, minlength=n), dtype=np.int64)
    return out_offsets, out_neighbors.astype(np.int32), out_rows


def _search_sorted(neighbors, start, stop, value):
    """Binary search: the first position in the sorted neighbors[start:stop] holding at least ``value``.
    Shared by the CPU twin and the GPU kernels."""
    while start < stop:
        middle = (start + stop) >> 1
        if neighbors[middle] < value:
            start = middle + 1
        else:
            stop = middle
    return start


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


search_sorted = numba.njit(inline="always")(_search_sorted)
put_sorted = numba.njit(inline="always")(_put_sorted)


@numba.njit(inline="always")
def _edge_triangles(out_offsets, out_neighbors, u, v, per_vertex, triangles, position, write):
    """Triangles at the oriented edge (u, v): each w of N+(u) in N+(v). Counts them on the three vertices
    (when not ``write``) or writes them from ``position`` (when ``write``); returns how many."""
    found = 0
    stop = out_offsets[v + 1]
    for p in range(out_offsets[u], out_offsets[u + 1]):
        w = out_neighbors[p]
        at = search_sorted(out_neighbors, out_offsets[v], stop, w)
        if at < stop and out_neighbors[at] == w:
            if write:
                put_sorted(triangles, position + found, u, v, w)
            else:
                per_vertex[w] += 1
            found += 1
    if not write:
        per_vertex[u] += found
        per_vertex[v] += found
    return found


@numba.njit(parallel=True, cache=True)
def count_triangles_cpu(out_offsets, out_neighbors, edge_sources, num_vertices, chunks):
    """Per-share triangle counts (share = 32 consecutive oriented edges, the GPU's warp group) and
    triangles through each vertex. Returns (int64[num_groups], int64[num_vertices])."""
    num_edges = out_neighbors.shape[0]
    num_groups = (num_edges + WARP - 1) // WARP
    group_counts = np.zeros(num_groups, dtype=np.int64)
    per_chunk = np.zeros((chunks, num_vertices), dtype=np.int64)
    unused = np.zeros((0, 3), dtype=np.int32)
    for chunk in numba.prange(chunks):
        for group in range(chunk * num_groups // chunks, (chunk + 1) * num_groups // chunks):
            found = 0
            for edge in range(group * WARP, min((group + 1) * WARP, num_edges)):
                found += _edge_triangles(out_offsets, out_neighbors, edge_sources[edge], out_neighbors[edge],
                                         per_chunk[chunk], unused, 0, False)
            group_counts[group] = found
    per_vertex = np.zeros(num_vertices, dtype=np.int64)
    for chunk in range(chunks):
        per_vertex += per_chunk[chunk]
    return group_counts, per_vertex


@numba.njit(cache=True)
def list_triangles_cpu(out_offsets, out_neighbors, edge_sources, first_group, last_group, total):
    """The triangles found by groups [first_group, last_group), in order, as int32[total, 3] (ids sorted)."""
    triangles = np.empty((total, 3), dtype=np.int32)
    unused = np.zeros(0, dtype=np.int64)
    position = 0
    for edge in range(first_group * WARP, min(last_group * WARP, out_neighbors.shape[0])):
        position += _edge_triangles(out_offsets, out_neighbors, edge_sources[edge], out_neighbors[edge], unused,
                                    triangles, position, True)
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
    def count(out_offsets, out_neighbors, edge_sources, num_vertices):
        chunks = max(1, min(numba.get_num_threads() * 4, (out_neighbors.shape[0] + WARP - 1) // WARP))
        return count_triangles_cpu(out_offsets, out_neighbors, edge_sources, num_vertices, chunks)

    @staticmethod
    def list(out_offsets, out_neighbors, edge_sources, group_offsets, first_group, last_group):
        total = int(group_offsets[last_group] - group_offsets[first_group])
        return list_triangles_cpu(out_offsets, out_neighbors, edge_sources, first_group, last_group, total)


def _steps(device: str):
    if device == "gpu":
        from . import gpu_triangles

        return gpu_triangles.DeviceSteps
    return _HostSteps


class Triangles:
    """A graph prepared for triangle counting and listing on one device (the oriented CSR lives there)."""

    def __init__(self, graph: Graph, device: str = "cpu"):
        self.graph = graph
        self.device = device
        self.steps = _steps(device)
        xp = self.steps.module()
        started = time.perf_counter()
        offsets = self.steps.to_device(graph.offsets)
        neighbors = self.steps.to_device(graph.neighbors)
        self.steps.synchronize()
        uploaded = time.perf_counter()
        self.out_offsets, self.out_neighbors, self.edge_sources = orient(offsets, neighbors, xp)
        self.steps.synchronize()
        self.seconds = {"upload": uploaded - started, "orient": time.perf_counter() - uploaded}
        self.group_offsets = None

    def count(self) -> TriangleResult:
        """Count triangles (globally and per vertex) and the clustering coefficients."""
        xp = self.steps.module()
        started = time.perf_counter()
        group_counts, per_vertex = self.steps.count(self.out_offsets, self.out_neighbors, self.edge_sources,
                                                    self.graph.num_vertices)
        group_offsets = xp.zeros(group_counts.shape[0] + 1, dtype=np.int64)
        group_offsets[1:] = xp.cumsum(group_counts)
        self.group_offsets = group_offsets
        count = int(group_offsets[-1])
        per_vertex = self.steps.to_host(per_vertex)
        counted = time.perf_counter()
        degrees = self.graph.degrees().astype(np.float64)
        pairs = degrees * (degrees - 1.0)
        clustering = np.divide(2.0 * per_vertex, pairs, out=np.zeros_like(pairs), where=pairs > 0)
        average = float(clustering.mean()) if clustering.size else 0.0
        paths = float(pairs.sum()) / 2.0
        transitivity = 3.0 * count / paths if paths > 0 else 0.0
        seconds = dict(self.seconds, count=counted - started)
        return TriangleResult(count, per_vertex, clustering, average, transitivity, seconds, self.device)

    def chunks(self, max_triangles: int = 1 << 24):
        """The triangles as int32[t, 3] arrays (ids ascending in each row), at most ``max_triangles`` rows
        each (a group is never split), in the order both devices share. Needs :meth:`count` first."""
        if self.group_offsets is None:
            self.count()
        offsets = self.steps.to_host(self.group_offsets)
        num_groups = offsets.shape[0] - 1
        first = 0
        while first < num_groups:
            last = int(np.searchsorted(offsets, offsets[first] + max_triangles, side="right")) - 1
            last = min(max(last, first + 1), num_groups)
            if offsets[last] > offsets[first]:
                yield self.steps.to_host(self.steps.list(self.out_offsets, self.out_neighbors, self.edge_sources,
                                                         self.group_offsets, first, last))
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
    """Compile (or load from numba's cache) the kernels on a tiny graph; returns seconds."""
    started = time.perf_counter()
    tiny = Graph.from_edges(5, [0, 0, 1, 1, 2, 3], [1, 2, 2, 3, 3, 4])
    for used in ("cpu", "gpu") if device == "gpu" else ("cpu",):
        prepared = Triangles(tiny, used)
        prepared.count()
        list(prepared.chunks())
    return time.perf_counter() - started
