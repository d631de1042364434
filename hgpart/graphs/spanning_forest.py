"""Minimum spanning forest by Borůvka from data-parallel primitives (seed 003), on the GPU or its CPU twin.

The graph is an edge list; each undirected edge has an id (its index) and the total order (weight, id),
so the minimum spanning forest is unique and both devices find the same one. One Borůvka step on the
current supervertex graph (directed entries ``sources``, ``targets``, ``ranks``):

1. every supervertex's minimum outgoing edge by a segmented minimum over edge ranks (the position of each
   edge in the order (weight, edge id), found once by a stable sort), whose ends give its successor;
2. the successor graph S has only 2-cycles (S(S(u)) = u); the smaller of the two becomes the root;
   every other supervertex's chosen edge joins the forest;
3. pointer jumping (S ← S∘S) takes every supervertex to its root (representative);
4. roots are numbered by a scan; each supervertex takes its root's number;
5. the entries are relabelled, self edges dropped, and parallel entries between two supervertices reduced
   to the lightest (the CPU twin sorts by (source, target); the GPU hashes the pairs).

The steps run on ``numpy`` (CPU twin: the segmented minimum is a numba loop) or on CuPy with numba.cuda
kernels (:mod:`.gpu_spanning_forest`); the loop repeats until no entry is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numba
import numpy as np

from ..hypergraph import Graph
from .clustering import first_appearance

NO_RANK = np.iinfo(np.int32).max


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
def group_min(groups, ranks, num_groups):
    """For each group, the least rank of its entries (NO_RANK for a group without entries).

    groups int32/int64[E], ranks int32[E] -> int32[num_groups]."""
    least = np.full(num_groups, NO_RANK, dtype=np.int32)
    for entry in range(groups.shape[0]):
        if ranks[entry] < least[groups[entry]]:
            least[groups[entry]] = ranks[entry]
    return least


class _HostSteps:
    """The CPU twin's array module, segmented minimum and pair reduction."""

    group_min = staticmethod(group_min)

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

    @staticmethod
    def lightest_per_pair(sources, targets, ranks, n):
        """Indices of the lightest entry between each ordered pair of supervertices: sort by (source,
        target), mark the first of each run, scan, segmented minimum."""
        keys = sources.astype(np.int64) * n + targets
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        first = np.ones(keys.shape[0], dtype=np.int32)
        first[1:] = keys[1:] != keys[:-1]
        segment = np.cumsum(first, dtype=np.int64) - 1
        least = group_min(segment, ranks[order], int(segment[-1]) + 1)
        return order[np.flatnonzero(ranks[order] == least[segment])]


def _steps(device: str):
    if device == "gpu":
        from . import gpu_spanning_forest

        return gpu_spanning_forest.DeviceSteps
    return _HostSteps


def _boruvka(steps, num_vertices: int, sources, targets, ranks, rank_ends):
    """Borůvka steps until no entry is left. ``ranks``: each entry's edge rank in the order (weight, edge id);
    ``rank_ends``: int32[2, m], the endpoints of the edge of each rank. Returns (ranks of the forest's
    edges, component of each vertex, steps)."""
    xp = steps.module()
    n = num_vertices
    component = xp.arange(n, dtype=np.int32)  # supervertex of each input vertex
    forest = []
    iterations = 0
    while sources.shape[0]:
        iterations += 1
        least = steps.group_min(sources, ranks, n)  # 1. minimum outgoing edge of each supervertex
        vertices = xp.arange(n, dtype=np.int32)
        has_edge = least != NO_RANK
        picked = xp.where(has_edge, least, 0)
        first_end = component[rank_ends[0][picked]]
        other_end = component[rank_ends[1][picked]]
        successor = xp.where(has_edge, xp.where(first_end == vertices, other_end, first_end), vertices)
        root = (successor[successor] == vertices) & (vertices < successor)  # 2. break each 2-cycle
        successor = xp.where(root, vertices, successor).astype(np.int32)
        forest.append(picked[successor != vertices])
        while True:  # 3. pointer jumping
            jumped = successor[successor]
            if not bool((jumped != successor).any()):
                break
            successor = jumped
        is_root = (successor == vertices).astype(np.int32)  # 4. number the roots
        number = xp.cumsum(is_root, dtype=np.int32) - 1
        label = number[successor]
        n = int(number[-1]) + 1
        component = label[component]
        sources, targets = label[sources], label[targets]  # 5. relabel, drop self edges, keep the lightest
        kept = xp.flatnonzero(sources != targets)
        sources, targets, ranks = sources[kept], targets[kept], ranks[kept]
        if sources.shape[0]:
            kept = steps.lightest_per_pair(sources, targets, ranks, n)
            sources, targets, ranks = sources[kept], targets[kept], ranks[kept]
    forest_ranks = xp.concatenate(forest) if forest else xp.zeros(0, dtype=np.int32)
    return forest_ranks, steps.to_host(component), iterations


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
    order = steps.argsort(weights)  # the order (weight, edge id): a stable sort by weight
    ranks = xp.empty(order.shape[0], dtype=np.int32)
    ranks[order] = xp.arange(order.shape[0], dtype=np.int32)
    rank_ends = xp.stack([sources[order], targets[order]])
    steps.synchronize()
    ranked = time.perf_counter()
    forest_ranks, component, iterations = _boruvka(steps, graph.num_vertices, xp.concatenate([sources, targets]),
                                                   xp.concatenate([targets, sources]), xp.concatenate([ranks, ranks]),
                                                   rank_ends)
    forest_ids = np.sort(steps.to_host(order[forest_ranks]))
    finished = time.perf_counter()
    forest_weights = edge_weights[forest_ids]  # edge ids follow (source, target) order: the edge list's
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
    return time.perf_counter() - started
