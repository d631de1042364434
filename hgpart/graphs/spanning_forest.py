"""Minimum spanning forest by Borůvka from data-parallel primitives (seed 003), on the GPU or its CPU twin.

The graph is an edge list; each undirected edge has an id (its index) and the total order (weight, id),
so the minimum spanning forest is unique and both devices find the same one. The edges are sorted once
into that order (a stable sort by weight) and every later step keeps them in it, so an edge's position
in the current list orders it as its rank does. One Borůvka step on the current supervertex graph
(``edges``: int32[3, E], each undirected edge's two supervertices and its input id):

1. every supervertex's lightest edge: a segmented minimum of edge positions over both ends (seed 003's
   segmented min-scan; an ``atomic.min`` pass on the GPU), whose other end is its successor;
2. the successor graph has only 2-cycles (S(S(u)) = u); the smaller of the two becomes the root; every
   other supervertex's chosen edge joins the forest;
3. pointer jumping (S <- S o S, in place) takes every supervertex to its root (representative);
4. roots are numbered by a scan; each supervertex takes its root's number;
5. the edges are relabelled and self edges dropped; parallel edges between two supervertices are reduced
   to the lightest (the first in the list) once the edges number at least a quarter of the pairs of
   supervertices that have edges: before that, parallel edges are rare (or removed soon as self edges) and
   the reduction costs more than it saves. Both devices hash the pairs.

The steps run on ``numpy`` with numba loops (CPU twin) or on CuPy with numba.cuda kernels
(:mod:`.gpu_spanning_forest`); the loop repeats until no edge is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from ..cuda.arrays import prepare_uploads
from ..hypergraph import Graph
from .agglomeration import first_appearance

NO_EDGE = np.iinfo(np.int32).max
DENSE_PAIRS = 1 / 4   # reduce parallel edges once the edges number this share of the supervertex pairs
PAIR_HASH = 0x9E3779B97F4A7C15 - (1 << 64)  # golden-ratio multiplicative hash, as a (wrapping) int64


@dataclass
class ForestResult:
    """A minimum spanning forest.

    Attributes
    ----------
    sources, targets : int32[num_forest_edges]
        Endpoints of each forest edge, sources < targets, sorted by (source, target).
    weights : float64[num_forest_edges]
    total_weight : float
    num_components : int
        Connected components of the graph (isolated vertices included); edges = vertices - components.
    components : int32[num_vertices]
        Component of each vertex, numbered in order of their smallest vertex.
    iterations : int
        Borůvka steps.
    seconds : dict
        upload (input to the device), rank (the sort by weight), boruvka (everything on the device: the
        sort and all steps, until the forest is back on the host), total (with host preparation).
    device : str
    """

    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    total_weight: float
    num_components: int
    components: np.ndarray
    iterations: int
    seconds: dict = field(default_factory=dict)
    device: str = "cpu"


@numba.njit(cache=True)
def least_edges(edges, num_vertices):
    """Step 1: the first (lightest) edge at each supervertex, NO_EDGE where none.

    edges int32[3, E] (source, target, input id) -> int32[num_vertices]."""
    least = np.full(num_vertices, NO_EDGE, dtype=np.int32)
    for edge in range(edges.shape[1]):
        for end in range(2):
            if edge < least[edges[end, edge]]:
                least[edges[end, edge]] = edge
    return least


def _hook_vertex(least, edges, parent, in_forest, vertex):
    """parent[vertex] = its successor (the other end of its lightest edge; itself without one), but itself
    for the smaller end of a 2-cycle; a non-root marks its edge in ``in_forest`` (by input id). Shared by
    both devices."""
    edge = least[vertex]
    other = vertex if edge == NO_EDGE else edges[0, edge] + edges[1, edge] - vertex
    if other > vertex:  # other has an edge (this one): is its successor vertex?
        back = least[other]
        if edges[0, back] + edges[1, back] - other == vertex:
            other = vertex
    parent[vertex] = other
    if other != vertex:
        in_forest[edges[2, edge]] = 1


hook_vertex = numba.njit(inline="always")(_hook_vertex)


@numba.njit(cache=True)
def hook(least, edges, in_forest):
    """Step 2: each supervertex's parent. least int32[n], edges int32[3, E], in_forest uint8[m] -> int32[n]."""
    parent = np.empty(least.shape[0], dtype=np.int32)
    for vertex in range(least.shape[0]):
        hook_vertex(least, edges, parent, in_forest, vertex)
    return parent


@numba.njit(cache=True)
def find_roots(parent):
    """Step 3: parent[v] = the root of v's tree, in place (find with path compression)."""
    for vertex in range(parent.shape[0]):
        root = vertex
        while parent[root] != root:
            root = parent[root]
        while parent[vertex] != root:
            above = parent[vertex]
            parent[vertex] = root
            vertex = above


def _pair_slot(source, target, num_vertices, shift, mask):
    """The 64-bit key of the supervertex pair {source, target} and its home slot in a table of mask + 1 =
    2^(64 - shift) slots (the top bits of a multiplicative hash). Shared by both devices."""
    key = numba.int64(min(source, target)) * num_vertices + max(source, target)
    return key, ((key * PAIR_HASH) >> shift) & mask


pair_slot = numba.njit(inline="always")(_pair_slot)


@numba.njit(cache=True)
def contract_edges(edges, label, num_vertices, reduce_pairs):
    """Step 5 on the CPU, one pass in order: the edges relabelled, self edges dropped and, when
    ``reduce_pairs``, every edge whose supervertex pair an earlier (lighter) edge already holds (a hash set
    of pairs, as on the GPU). int32[3, E] -> int32[3, E']."""
    count = edges.shape[1]
    kept = np.empty((3, count), dtype=np.int32)
    bits = 1
    while (1 << bits) < 2 * count:
        bits += 1
    pairs = np.full((1 << bits) if reduce_pairs else 1, -1, dtype=np.int64)
    mask = pairs.shape[0] - 1
    found = 0
    for edge in range(count):
        source, target = label[edges[0, edge]], label[edges[1, edge]]
        if source == target:
            continue
        if reduce_pairs:
            key, slot = pair_slot(source, target, num_vertices, 64 - bits, mask)
            while pairs[slot] != -1 and pairs[slot] != key:
                slot = (slot + 1) & mask
            if pairs[slot] == key:
                continue
            pairs[slot] = key
        kept[0, found], kept[1, found], kept[2, found] = source, target, edges[2, edge]
        found += 1
    return kept[:, :found].copy()


class _HostSteps:
    """The CPU twin's array module and steps."""

    least_edges = staticmethod(least_edges)
    hook = staticmethod(hook)
    find_roots = staticmethod(find_roots)

    @staticmethod
    def module():
        return np

    @staticmethod
    def to_host(array):
        return array

    @staticmethod
    def to_device(array):
        return array

    @staticmethod
    def argsort(keys):
        return np.argsort(keys, kind="stable")

    @staticmethod
    def synchronize():
        pass

    contract = staticmethod(contract_edges)


def _steps(device: str):
    if device == "gpu":
        from . import gpu_spanning_forest

        return gpu_spanning_forest.DeviceSteps
    return _HostSteps


def _boruvka(steps, num_vertices: int, edges):
    """Borůvka steps until no edge is left. ``edges``: int32[3, m], the input's edges (source, target, id)
    in the order (weight, id). Returns (in_forest uint8[m] by input id, component of each vertex as a host
    array, steps)."""
    xp = steps.module()
    n = num_vertices
    component = xp.arange(n, dtype=np.int32)  # supervertex of each input vertex
    in_forest = xp.zeros(edges.shape[1], dtype=np.uint8)
    iterations = 0
    while edges.shape[1]:
        iterations += 1
        least = steps.least_edges(edges, n)  # 1. lightest edge of each supervertex
        parent = steps.hook(least, edges, in_forest)  # 2. successors, 2-cycles broken, forest edges marked
        steps.find_roots(parent)  # 3. pointer jumping
        is_root = parent == xp.arange(n, dtype=np.int32)  # 4. number the roots
        number = xp.cumsum(is_root, dtype=np.int32) - 1
        label = number[parent]
        n = int(number[-1]) + 1
        component = label[component]
        joined = int(xp.count_nonzero(is_root & (least != NO_EDGE)))  # supervertices that may keep edges
        dense = edges.shape[1] >= DENSE_PAIRS * joined * (joined - 1) / 2
        edges = steps.contract(edges, label, n, dense)  # 5. relabel, drop self (and parallel) edges
    return in_forest, steps.to_host(component), iterations


def minimum_spanning_forest(graph: Graph, device: str = "cpu") -> ForestResult:
    """The minimum spanning forest of ``graph`` (unique under the order (weight, edge id)).

    Parameters
    ----------
    graph : Graph
        Undirected; parallel edges already merged (readers keep the lightest), no self loops.
    device : {"cpu", "gpu"}
        The njit/numpy CPU twin or the GPU (CuPy + numba.cuda); both return the same forest.
    """
    started = time.perf_counter()
    edge_sources, edge_targets, edge_weights = graph.edge_list()
    steps = _steps(device)
    xp = steps.module()
    upload = time.perf_counter()
    weights = steps.to_device(edge_weights)
    sources = steps.to_device(edge_sources.astype(np.int32))
    targets = steps.to_device(edge_targets.astype(np.int32))
    steps.synchronize()
    boruvka = time.perf_counter()
    order = steps.argsort(weights).astype(np.int32)  # the order (weight, edge id): a stable sort by weight
    edges = xp.stack([sources[order], targets[order], order])
    steps.synchronize()
    ranked = time.perf_counter()
    in_forest, component, iterations = _boruvka(steps, graph.num_vertices, edges)
    forest_ids = steps.to_host(xp.flatnonzero(in_forest))  # ascending ids: (source, target) order
    finished = time.perf_counter()
    forest_weights = edge_weights[forest_ids]
    components, num_components = first_appearance(np.ascontiguousarray(component, dtype=np.int32))
    seconds = {"upload": boruvka - upload, "rank": ranked - boruvka, "boruvka": finished - boruvka,
               "total": time.perf_counter() - started}
    return ForestResult(edge_sources[forest_ids].astype(np.int32), edge_targets[forest_ids].astype(np.int32),
                        forest_weights, float(np.sum(forest_weights)), num_components, components, iterations,
                        seconds, device)


def warm_up(device: str = "cpu") -> float:
    """Compile (or load from numba's cache) the kernels on a tiny graph; returns seconds."""
    started = time.perf_counter()
    tiny = Graph.from_edges(6, [0, 1, 2, 3, 4], [1, 2, 0, 4, 5], [1.0, 2.0, 1.0, 3.0, 1.0], merge="min")
    for used in ("cpu", "gpu") if device == "gpu" else ("cpu",):
        minimum_spanning_forest(tiny, used)
    if device == "gpu":
        prepare_uploads()
    return time.perf_counter() - started
