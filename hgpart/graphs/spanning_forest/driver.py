"""Minimum spanning forest by Borůvka's algorithm from data-parallel primitives, on the GPU or its CPU twin:
the driver shared by both devices' steps (:mod:`.device`, :mod:`.host`).

The steps follow V. Vineet, P. Harish, S. Patidar and P. J. Narayanan, "Fast Minimum Spanning Tree for
Large Graphs on the GPU", High Performance Graphics 2009. The graph is an edge list; each undirected edge
has an id (its index) and the total order (weight, id), so the minimum spanning forest is unique and both
devices find the same one. The edges are sorted once into that order (a stable sort by weight) and every
later step keeps them in it, so an edge's position in the current list orders it as its rank does. One
Borůvka step on the current supervertex graph (``edges``: int32[3, E], each undirected edge's two
supervertices and its input id):

1. every supervertex's lightest edge: a segmented minimum of edge positions over both ends (the segmented
   min-scan of Vineet et al. (2009); an ``atomic.min`` pass on the GPU), whose other end is its successor;
2. the successor graph has only 2-cycles (S(S(u)) = u); the smaller of the two becomes the root; every
   other supervertex's chosen edge joins the forest;
3. pointer jumping (S <- S o S, in place) takes every supervertex to its root (representative);
4. roots are numbered by a scan; each supervertex takes its root's number;
5. the edges are relabelled and self edges dropped; parallel edges between two supervertices are reduced
   to the lightest (the first in the list) once the edges number at least a quarter of the pairs of
   supervertices that have edges: before that, parallel edges are rare (or removed soon as self edges) and
   the reduction costs more than it saves. Both devices hash the pairs.

The loop repeats until no edge is left.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...cuda.arrays import prepare_uploads
from ...hypergraph import Graph
from ..clustering.host import first_appearance
from .common import NO_EDGE
from .host import HostSteps

DENSE_PAIRS = 1 / 4   # reduce parallel edges once the edges number this share of the supervertex pairs


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
    device_reason : str or None
        Why ``device="auto"`` ran it there (the graph's size, or no usable GPU); None for ``cpu`` and ``gpu``.
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
    device_reason: str | None = None


def _steps(device: str):
    """The steps of ``device``: :class:`.device.DeviceSteps` for "gpu" (imported on first use: it needs
    numba.cuda), else :class:`.host.HostSteps`."""
    if device == "gpu":
        from .device import DeviceSteps

        return DeviceSteps
    return HostSteps


def _boruvka(steps, num_vertices: int, edges):
    """Borůvka steps until no edge is left. ``edges``: int32[3, m], the input's edges (source, target, id)
    in the order (weight, id). Returns (in_forest uint8[m] by input id, component of each vertex as a host
    array, the number of Borůvka steps)."""
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
