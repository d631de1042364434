"""The data model: :class:`Hypergraph` (CSR both ways) and :class:`Graph` (symmetric CSR).

All validation of structure lives here; readers only tokenise and then call the constructors.
Vertex and net ids are int32, offsets int64, weights int64 (graph edge weights float64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from .adjacency import symmetric_csr
from .errors import InputError
from .parallel import claim_chunk, on_threads, pick

INT32_MAX = np.iinfo(np.int32).max
MERGE_RULES = ("sum", "min", "max")
ARRAYS = ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights", "net_weights")


@numba.njit(parallel=True, cache=True)
def _upper_edges(offsets, neighbors, weights, chunks):
    """Each entry (u, v) of a symmetric CSR with u < v, in CSR order, in ``chunks`` parallel slices of equal
    entries: (int32 sources, int32 targets, float64 weights)."""
    n = offsets.shape[0] - 1
    firsts = np.searchsorted(offsets, np.arange(chunks + 1) * (offsets[n] / chunks)).astype(np.int64)
    firsts[0], firsts[chunks] = 0, n
    counts = np.zeros(chunks + 1, dtype=np.int64)
    for chunk in numba.prange(chunks):
        found = 0
        for u in range(firsts[chunk], firsts[chunk + 1]):
            for entry in range(offsets[u], offsets[u + 1]):
                found += u < neighbors[entry]
        counts[chunk + 1] = found
    starts = np.cumsum(counts)
    sources = np.empty(starts[chunks], dtype=np.int32)
    targets = np.empty(starts[chunks], dtype=np.int32)
    upper_weights = np.empty(starts[chunks], dtype=np.float64)
    for chunk in numba.prange(chunks):
        at = starts[chunk]
        for u in range(firsts[chunk], firsts[chunk + 1]):
            for entry in range(offsets[u], offsets[u + 1]):
                if u < neighbors[entry]:
                    sources[at], targets[at], upper_weights[at] = u, neighbors[entry], weights[entry]
                    at += 1
    return sources, targets, upper_weights


SHORT_SEGMENT = 32  # segments up to this long are sorted by insertion


@numba.njit(inline="always")
def sort_segment(values, begin, end):
    """Sort ``values[begin:end]`` in place: short segments by insertion, without the slice (its reference
    counts, call and allocation cost more than sorting a few values), longer ones by numpy's sort."""
    if end - begin > SHORT_SEGMENT:
        values[begin:end].sort()
        return
    for p in range(begin + 1, end):
        value = values[p]
        q = p
        while q > begin and values[q - 1] > value:
            values[q] = values[q - 1]
            q -= 1
        values[q] = value


@numba.njit(inline="always")
def _sort_count_range(offsets, work, new_counts, first, last):
    """Sort the segments first..last-1 of ``work`` in place; new_counts[s + 1] = segment s's distinct values."""
    for s in range(first, last):
        begin, end = offsets[s], offsets[s + 1]
        sort_segment(work, begin, end)
        count = 0
        for p in range(begin, end):
            if p == begin or work[p] != work[p - 1]:
                count += 1
        new_counts[s + 1] = count


@numba.njit(inline="always")
def _copy_distinct_range(offsets, work, new_offsets, out, first, last):
    """The distinct values of the sorted segments first..last-1 of ``work`` into ``out`` at new_offsets."""
    for s in range(first, last):
        q = new_offsets[s]
        for p in range(offsets[s], offsets[s + 1]):
            if p == offsets[s] or work[p] != work[p - 1]:
                out[q] = work[p]
                q += 1


@numba.njit(cache=True, nogil=True)
def _sort_dedup_segments(offsets, values):
    """Sort each segment ``values[offsets[i]:offsets[i+1]]`` and drop repeats.

    Returns the new offsets (int64[s+1]) and values; segments keep their order.
    """
    num_segments = offsets.shape[0] - 1
    new_counts = np.zeros(num_segments + 1, dtype=np.int64)
    work = values.copy()
    _sort_count_range(offsets, work, new_counts, 0, num_segments)
    new_offsets = np.cumsum(new_counts)
    out = np.empty(new_offsets[-1], dtype=values.dtype)
    _copy_distinct_range(offsets, work, new_offsets, out, 0, num_segments)
    return new_offsets, out


SEGMENT_CHUNK = 1024  # segments a parallel iteration takes


@numba.njit(cache=True, nogil=True)
def _sort_count_worker(t, taken, offsets, work, new_counts):
    """Thread t of :func:`sort_dedup_segments_parallel`'s sorting: chunks of ``SEGMENT_CHUNK`` segments from
    the shared counter ``taken``."""
    while True:
        first, last = claim_chunk(taken, SEGMENT_CHUNK, offsets.shape[0] - 1)
        if first == last:
            break
        _sort_count_range(offsets, work, new_counts, first, last)


@numba.njit(cache=True, nogil=True)
def _copy_distinct_worker(t, taken, offsets, work, new_offsets, out):
    """Thread t of :func:`sort_dedup_segments_parallel`'s copy, as :func:`_sort_count_worker`."""
    while True:
        first, last = claim_chunk(taken, SEGMENT_CHUNK, offsets.shape[0] - 1)
        if first == last:
            break
        _copy_distinct_range(offsets, work, new_offsets, out, first, last)


def sort_dedup_segments_parallel(offsets, values):
    """:func:`_sort_dedup_segments` on numba's threads (:func:`hgpart.parallel.on_threads`), ``SEGMENT_CHUNK``
    segments at a time (the parallel driver of :func:`..parallel.pick`; the same result)."""
    threads = numba.get_num_threads()
    num_segments = offsets.shape[0] - 1
    new_counts = np.zeros(num_segments + 1, dtype=np.int64)
    work = values.copy()
    on_threads(_sort_count_worker, threads, np.zeros(1, dtype=np.int64), offsets, work, new_counts)
    new_offsets = np.cumsum(new_counts)
    out = np.empty(new_offsets[-1], dtype=values.dtype)
    on_threads(_copy_distinct_worker, threads, np.zeros(1, dtype=np.int64), offsets, work, new_offsets, out)
    return new_offsets, out


@numba.njit(cache=True, nogil=True)
def scatter_sum(targets, values, size):
    """int64[size] with out[targets[i]] += values[i]: np.add.at, exact for int64 and far faster."""
    out = np.zeros(size, dtype=np.int64)
    for i in range(targets.shape[0]):
        out[targets[i]] += values[i]
    return out


@numba.njit(cache=True, nogil=True)
def transpose_csr(offsets, targets, num_targets):
    """Transpose a CSR incidence: segment i lists targets -> for each target, the segments holding it.

    Parameters
    ----------
    offsets : int64[s+1]
    targets : int32[nnz], values in [0, num_targets)
    num_targets : int

    Returns
    -------
    t_offsets : int64[num_targets+1]
    t_sources : int32[nnz], sorted ascending within each target (stable counting sort).
    """
    counts = np.zeros(num_targets + 1, dtype=np.int64)
    for p in range(targets.shape[0]):
        counts[targets[p] + 1] += 1
    t_offsets = np.cumsum(counts)
    cursor = t_offsets[:-1].copy()
    t_sources = np.empty(targets.shape[0], dtype=np.int32)
    for s in range(offsets.shape[0] - 1):
        for p in range(offsets[s], offsets[s + 1]):
            t = targets[p]
            t_sources[cursor[t]] = s
            cursor[t] += 1
    return t_offsets, t_sources


def _as_weights(weights, size: int, what: str) -> np.ndarray:
    if weights is None:
        return np.ones(size, dtype=np.int64)
    weights = np.asarray(weights)
    if weights.shape != (size,):
        raise InputError(f"{what} has {weights.shape[0] if weights.ndim == 1 else weights.shape} entries, expected {size}")
    if weights.dtype.kind == "f":
        if not np.all(np.isfinite(weights)) or np.any(weights != np.round(weights)):
            raise InputError(f"{what} must be integers")
    weights = weights.astype(np.int64)
    if size and weights.min() < 0:
        raise InputError(f"{what} must be non-negative (found {weights.min()})")
    return weights


@dataclass(frozen=True, eq=False)
class Hypergraph:
    """A weighted hypergraph with both incidence directions in CSR, its arrays on the host (numpy) or, as a
    level of the GPU path, on the device (:meth:`to_device`, :meth:`to_host`).

    Attributes
    ----------
    net_offsets : int64[num_nets + 1]
        Pins of net e are ``pin_vertices[net_offsets[e]:net_offsets[e+1]]``.
    pin_vertices : int32[num_pins]
        Sorted, duplicate-free within each net.
    vertex_offsets : int64[num_vertices + 1]
        Incident nets of vertex v are ``incident_nets[vertex_offsets[v]:vertex_offsets[v+1]]``.
    incident_nets : int32[num_pins]
        Sorted ascending within each vertex.
    vertex_weights : int64[num_vertices]
    net_weights : int64[num_nets]
    """

    net_offsets: np.ndarray
    pin_vertices: np.ndarray
    vertex_offsets: np.ndarray
    incident_nets: np.ndarray
    vertex_weights: np.ndarray
    net_weights: np.ndarray

    @property
    def num_vertices(self) -> int:
        return self.vertex_offsets.shape[0] - 1

    @property
    def num_nets(self) -> int:
        return self.net_offsets.shape[0] - 1

    @property
    def num_pins(self) -> int:
        return int(self.pin_vertices.shape[0])

    @property
    def total_vertex_weight(self) -> int:
        return int(self.vertex_weights.sum())

    def net_sizes(self) -> np.ndarray:
        """int64[num_nets]: pins per net."""
        return np.diff(self.net_offsets)

    def vertex_degrees(self) -> np.ndarray:
        """int64[num_vertices]: incident nets per vertex (nonzeros per column in the row-net model)."""
        return np.diff(self.vertex_offsets)

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_pins(cls, num_vertices: int, net_offsets, pin_vertices, vertex_weights=None, net_weights=None,
                  *, one_based: bool = False) -> "Hypergraph":
        """Build from net-major pin lists; duplicate pins in a net are merged.

        Parameters
        ----------
        num_vertices : int
        net_offsets : array of int, shape (num_nets + 1,)
        pin_vertices : array of int, shape (net_offsets[-1],), ids in [0, num_vertices) (or 1-based)
        vertex_weights, net_weights : array of int, optional (default all ones)
        one_based : bool
            Pin ids count from 1 (hMetis).
        """
        if num_vertices < 0 or num_vertices > INT32_MAX:
            raise InputError(f"number of vertices {num_vertices} is out of range")
        net_offsets = np.ascontiguousarray(net_offsets, dtype=np.int64)
        num_nets = net_offsets.shape[0] - 1
        if num_nets > INT32_MAX:
            raise InputError(f"number of nets {num_nets} is out of range")
        if net_offsets[0] != 0 or np.any(np.diff(net_offsets) < 0):
            raise InputError("net offsets must start at 0 and not decrease")
        pins = np.asarray(pin_vertices)
        if pins.shape[0] != net_offsets[-1]:
            raise InputError(f"pin list has {pins.shape[0]} entries, offsets say {net_offsets[-1]}")
        low = 1 if one_based else 0
        if pins.shape[0]:
            if pins.min() < low or pins.max() >= num_vertices + low:
                bad = int(pins.min()) if pins.min() < low else int(pins.max())
                raise InputError(f"pin {bad} is out of range {low}..{num_vertices + low - 1}")
        pins = pins.astype(np.int32) - np.int32(low) if one_based else pins.astype(np.int32, copy=False)
        vertex_weights = _as_weights(vertex_weights, num_vertices, "vertex weights")
        net_weights = _as_weights(net_weights, num_nets, "net weights")
        net_offsets, pins = pick(pins.shape[0], _sort_dedup_segments, sort_dedup_segments_parallel)(
            net_offsets, np.ascontiguousarray(pins))
        vertex_offsets, incident_nets = transpose_csr(net_offsets, pins, num_vertices)
        return cls(net_offsets, pins, vertex_offsets, incident_nets, vertex_weights, net_weights)

    @classmethod
    def from_pin_lists(cls, nets, num_vertices: int | None = None, vertex_weights=None, net_weights=None) -> "Hypergraph":
        """Build from a list of pin lists (0-based), e.g. ``[[0, 1], [1, 2, 3]]``."""
        sizes = np.array([len(net) for net in nets], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        pins = np.concatenate([np.asarray(net, dtype=np.int64) for net in nets]) if len(nets) else np.zeros(0, np.int64)
        if num_vertices is None:
            num_vertices = int(pins.max()) + 1 if pins.size else 0
        return cls.from_pins(num_vertices, offsets, pins, vertex_weights, net_weights)

    @classmethod
    def from_sparse(cls, matrix, model: str = "row-net") -> "Hypergraph":
        """Build from a ``scipy.sparse`` matrix.

        ``row-net`` (default, as in Cheng, Cho and Yoon 2015): rows are nets and columns are vertices.
        ``column-net``: columns are nets and rows are vertices.
        """
        import scipy.sparse as sp

        if model not in ("row-net", "column-net"):
            raise InputError(f"unknown hypergraph model {model!r} (row-net or column-net)")
        csr = sp.csr_matrix(matrix) if model == "row-net" else sp.csr_matrix(matrix).T.tocsr()
        csr.sum_duplicates()
        return cls.from_pins(csr.shape[1], csr.indptr, csr.indices)

    @classmethod
    def from_graph(cls, graph: "Graph") -> "Hypergraph":
        """Each undirected edge {u, v} becomes a two-pin net; edge weights must be integers."""
        sources, targets, weights = graph.edge_list()
        offsets = np.arange(0, 2 * sources.shape[0] + 1, 2, dtype=np.int64)
        pins = np.empty(2 * sources.shape[0], dtype=np.int32)
        pins[0::2], pins[1::2] = sources, targets
        return cls.from_pins(graph.num_vertices, offsets, pins, graph.vertex_weights, weights)

    @classmethod
    def from_networkx(cls, nx_graph) -> "Hypergraph":
        return cls.from_graph(Graph.from_networkx(nx_graph))

    def to_device(self) -> "Hypergraph":
        """The same hypergraph with every array on the GPU (one copy each: CuPy arrays, numpy under numba's
        CUDA simulator). The GPU steps take and return such hypergraphs."""
        from .cuda.arrays import to_device

        return Hypergraph(*(to_device(getattr(self, name)) for name in ARRAYS))

    def to_host(self) -> "Hypergraph":
        """The same hypergraph with every array on the host (numpy); a copy of each device array."""
        from .cuda.arrays import to_host

        return Hypergraph(*(to_host(getattr(self, name)) for name in ARRAYS))

    def to_sparse(self):
        """The row-net incidence matrix (num_nets x num_vertices, pattern of ones) as ``scipy.sparse.csr_matrix``."""
        import scipy.sparse as sp

        data = np.ones(self.num_pins, dtype=np.int8)
        return sp.csr_matrix((data, self.pin_vertices, self.net_offsets), shape=(self.num_nets, self.num_vertices))


@dataclass(frozen=True, eq=False)
class Graph:
    """An undirected graph as symmetric CSR (both directions stored), no self loops, no parallel edges.

    Attributes
    ----------
    offsets : int64[num_vertices + 1]
    neighbors : int32[2 * num_edges], sorted ascending within each row
    edge_weights : float64[2 * num_edges], the same weight on both directions
    vertex_weights : int64[num_vertices]
    """

    offsets: np.ndarray
    neighbors: np.ndarray
    edge_weights: np.ndarray
    vertex_weights: np.ndarray

    @property
    def num_vertices(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def num_edges(self) -> int:
        return int(self.neighbors.shape[0] // 2)

    def degrees(self) -> np.ndarray:
        return np.diff(self.offsets)

    @classmethod
    def from_edges(cls, num_vertices: int, sources, targets, weights=None, vertex_weights=None,
                   merge: str = "sum") -> "Graph":
        """Build from an undirected edge list (0-based).

        Self loops are dropped; parallel edges (also (u, v) next to (v, u)) are merged by ``merge``:
        ``"sum"`` adds their weights, ``"min"`` keeps the lightest (spanning forests), ``"max"`` the heaviest.
        """
        if merge not in MERGE_RULES:
            raise InputError(f"unknown merge rule {merge!r}")
        sources = np.ascontiguousarray(sources, dtype=np.int64)
        targets = np.ascontiguousarray(targets, dtype=np.int64)
        if sources.shape != targets.shape:
            raise InputError("edge endpoint arrays differ in length")
        if num_vertices < 0 or num_vertices > INT32_MAX:
            raise InputError(f"number of vertices {num_vertices} is out of range")
        if sources.size and (min(sources.min(), targets.min()) < 0 or max(sources.max(), targets.max()) >= num_vertices):
            raise InputError(f"edge endpoint out of range 0..{num_vertices - 1}")
        weights = np.ones(sources.shape[0]) if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        if weights.shape != sources.shape:
            raise InputError("edge weights differ in length from the edges")
        if not np.all(np.isfinite(weights)):
            raise InputError("edge weights must be finite numbers")
        vertex_weights = _as_weights(vertex_weights, num_vertices, "vertex weights")
        offsets, neighbors, edge_weights = symmetric_csr(num_vertices, sources, targets, weights,
                                                         MERGE_RULES.index(merge))
        return cls(offsets, neighbors, edge_weights, vertex_weights)

    @classmethod
    def from_sparse(cls, matrix, merge: str = "sum") -> "Graph":
        """Undirected graph of a square sparse matrix: entry (i, j) is edge {i, j}; the diagonal is dropped."""
        import scipy.sparse as sp

        coo = sp.coo_matrix(matrix)
        if coo.shape[0] != coo.shape[1]:
            raise InputError(f"a graph needs a square matrix, got {coo.shape[0]} x {coo.shape[1]}")
        return cls.from_edges(coo.shape[0], coo.row, coo.col, coo.data.astype(np.float64), merge=merge)

    @classmethod
    def from_networkx(cls, nx_graph, weight: str = "weight") -> "Graph":
        """Nodes are numbered in ``nx_graph.nodes`` order."""
        index = {node: i for i, node in enumerate(nx_graph.nodes)}
        edges = list(nx_graph.edges(data=weight, default=1))
        sources = np.array([index[u] for u, _, _ in edges], dtype=np.int64)
        targets = np.array([index[v] for _, v, _ in edges], dtype=np.int64)
        weights = np.array([w for _, _, w in edges], dtype=np.float64)
        return cls.from_edges(len(index), sources, targets, weights)

    def edge_list(self):
        """Each undirected edge once as (u < v): int32 sources, int32 targets, float64 weights."""
        chunks = max(1, min(4 * numba.get_num_threads(), self.num_vertices))
        return _upper_edges(self.offsets, self.neighbors, self.edge_weights.astype(np.float64, copy=False), chunks)

    def to_sparse(self):
        import scipy.sparse as sp

        return sp.csr_matrix((self.edge_weights, self.neighbors, self.offsets), shape=(self.num_vertices,) * 2)
