"""Exact triangle counting and enumeration on the GPU or its njit CPU twin, and clustering coefficients:
the driver shared by both devices' steps (:mod:`.device`, :mod:`.host`).

The method follows T. M. Low, V. N. Rao, M. Lee, D. Popovici, F. Franchetti and S. McMillan, "First look:
linear algebra-based triangle counting without matrix multiplication", IEEE HPEC 2017, as extended to
enumeration (with workload balancing on the GPU and a prefix sum for the output) by a report on parallel
triangle enumeration.

Vertices are renumbered by rank, the order (degree, id), and each edge is oriented from the lower to the
higher rank, so that every vertex has at most sqrt(2m) out-neighbours N+(x), kept sorted by rank. A
triangle u < x < w (ranks) is found once, at its middle vertex x: u is an in-neighbour of x, and w lies in
both N+(x) and N+(u) after x. The work is vertex-centric: N+(x) is put in a hash table (shared memory on
the GPU, a mark array on the CPU), and for every in-neighbour u only the entries of N+(u) between the
smallest and the largest member of N+(x) are looked up, a contiguous run found by two binary searches.
Every look-up is O(1) and the runs are read in order: the GPU reads them coalesced.

Tasks ("chunks") are 32 consecutive entries of a vertex's row of the input graph, one per lane of a warp
(an entry is a row of the chunk when it is an in-neighbour). The lanes' runs are dealt out cyclically by
the warp scan of :mod:`hgpart.cuda.warp` (the per-warp task planning of L. Cheng, H. Cho and P. Yoon, "An
Accelerated Procedure for Hypergraph Coarsening on the GPU", Fig. 5, with the lanes' loads side by side),
so a hub's long runs and many light rows are balanced alike; a hub with many in-neighbours has many
chunks, spread over warps. Vertices with few out-neighbours hash them per warp; the rest per block of 8
warps that take a group of up to 32 chunks in turn, in pieces of ``TriangleConfig.piece`` out-neighbours
when there are more (:mod:`.device_count`). :mod:`.plan` builds the tasks.

Enumeration is a count pass and a scan: the count pass records each chunk's triangles, an exclusive scan
gives each chunk its output offset, and the listing pass writes the chunk's triangles from there (on the
GPU each lane's from the warp's ballot prefix, no atomic cursor), in the order both devices share: chunks
in order, then the pieces of N+(x), rows (lanes), entries of each run.
"""

from __future__ import annotations

import time

import numpy as np

from ...config import TriangleConfig
from ...cuda.arrays import prepare_uploads
from ...hypergraph import Graph
from .host import HostSteps
from .plan import TrianglePlan, plan_chunks, plan_tasks, rank_vertices


class TriangleResult:
    """Triangles of a graph.

    The per-vertex counts stay on the device that counted them until read: ``per_vertex`` and
    ``clustering`` copy them to the host on first use (8 bytes a vertex, a copy that can take longer than
    the orientation), so a count whose per-vertex figures are not wanted does not pay for it.

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
    device_reason : str or None
        Why ``device="auto"`` ran it there (the graph's size, or no usable GPU); None for ``cpu`` and ``gpu``.
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
        self.device_reason = None

    @property
    def per_vertex(self) -> np.ndarray:
        if not isinstance(self._per_vertex, np.ndarray):
            self._per_vertex = _steps(self.device).to_host(self._per_vertex)
        return self._per_vertex

    @property
    def clustering(self) -> np.ndarray:
        return clustering_coefficients(self.per_vertex, self._degrees, np)


def clustering_coefficients(per_vertex, degrees, xp=np):
    """2 T(v) / (d(v) (d(v) - 1)) per vertex, 0 below degree 2: float64[n] from per_vertex int64[n] and
    degrees int64[n]; numpy or CuPy (``xp``)."""
    pairs = degrees.astype(np.float64) * (degrees.astype(np.float64) - 1.0)
    return xp.where(pairs > 0, 2.0 * per_vertex / xp.where(pairs > 0, pairs, 1.0), 0.0)


def _steps(device: str):
    """The steps of ``device``: :class:`.device.DeviceSteps` for "gpu" (imported on first use: it needs
    numba.cuda), else :class:`.host.HostSteps`."""
    if device == "gpu":
        from .device import DeviceSteps

        return DeviceSteps
    return HostSteps


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
