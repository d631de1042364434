"""Modularity of a clustering, and the integer weights the modularity clustering (:mod:`.clustering`) works
with: its level 0, the same on both devices."""

from __future__ import annotations

import numba
import numpy as np

from ..errors import InputError
from ..hypergraph import Graph

EXACT_LIMIT = 2**30  # integer weights are used as they are while 2Ω stays below this (exact int64 gains)


@numba.njit(parallel=True, cache=True)
def _modularity_terms(offsets, neighbors, edge_weights, clusters, num_clusters):
    n = offsets.shape[0] - 1
    inside = np.zeros(n, dtype=np.float64)
    degrees = np.zeros(n, dtype=np.float64)
    for v in numba.prange(n):
        for p in range(offsets[v], offsets[v + 1]):
            degrees[v] += edge_weights[p]
            if clusters[neighbors[p]] == clusters[v]:
                inside[v] += edge_weights[p]
    cluster_degrees = np.zeros(num_clusters, dtype=np.float64)
    for v in range(n):
        cluster_degrees[clusters[v]] += degrees[v]
    return inside.sum(), degrees.sum(), np.dot(cluster_degrees, cluster_degrees)


def modularity(graph: Graph, clusters: np.ndarray) -> float:
    """Newman-Girvan modularity Σ_C [ω(E(C)) / Ω - (ζ(C) / 2Ω)²] of a clustering on the graph's own weights.

    Parameters
    ----------
    graph : Graph
        Undirected, float64 weights.
    clusters : int[num_vertices]
        Cluster ids >= 0.

    Returns
    -------
    float
        0 for a graph without edges.
    """
    clusters = np.ascontiguousarray(clusters, dtype=np.int64)
    num_clusters = int(clusters.max()) + 1 if clusters.size else 0
    inside, total, squares = _modularity_terms(graph.offsets, graph.neighbors, graph.edge_weights, clusters,
                                               num_clusters)  # inside: 2 ω(E(C)) summed; total: 2Ω
    if total == 0.0:
        return 0.0
    return inside / total - squares / (total * total)


@numba.njit(parallel=True, cache=True)
def _weight_summary(weights):
    """(smallest, sum, all whole, all one) of ``weights`` in one parallel pass over fixed blocks (the same
    sum on every run)."""
    blocks = 64
    smallest = np.full(blocks, np.inf)
    sums = np.zeros(blocks)
    whole = np.ones(blocks, dtype=np.bool_)
    unit = np.ones(blocks, dtype=np.bool_)
    for block in numba.prange(blocks):
        for position in range(block * weights.shape[0] // blocks, (block + 1) * weights.shape[0] // blocks):
            weight = weights[position]
            smallest[block] = min(smallest[block], weight)
            sums[block] += weight
            if weight != 1.0:
                unit[block] = False
                if weight != np.rint(weight):
                    whole[block] = False
    return smallest.min(), sums.sum(), whole.all(), unit.all()


def weight_scale(graph: Graph) -> tuple[float, bool]:
    """(scale, unit): the factor :func:`integer_level` applies to the weights (1.0: kept as they are), and
    whether every weight is 1 with the scale 1 (the level's weights are then all 1 and ζ the degrees).
    Negative weights are refused."""
    if not graph.edge_weights.size:
        return 1.0, True
    smallest, total, whole, unit = _weight_summary(graph.edge_weights)
    if smallest < 0:
        raise InputError("modularity clustering needs non-negative edge weights")
    if total > 0 and (total >= EXACT_LIMIT or not whole):
        return 2.0**29 / total, False
    return 1.0, bool(unit)


@numba.njit(parallel=True, cache=True)
def _integer_weights(offsets, weights, scale):
    """(int64 weights, their row sums ζ): ``weights`` as they are when ``scale`` is 1, else rint(weight *
    scale), positive weights to at least 1. One parallel pass over the rows."""
    n = offsets.shape[0] - 1
    integer = np.empty(weights.shape[0], dtype=np.int64)
    zeta = np.zeros(n, dtype=np.int64)
    for v in numba.prange(n):
        total = 0
        for position in range(offsets[v], offsets[v + 1]):
            weight = weights[position]
            if scale == 1.0:
                value = np.int64(weight)
            else:
                value = np.int64(np.rint(weight * scale))
                if value == 0 and weight > 0:
                    value = 1
            integer[position] = value
            total += value
        zeta[v] = total
    return integer, zeta


def integer_level(graph: Graph, scale: float | None = None) -> tuple[dict, float]:
    """The graph as level 0 of the clustering (a level dict, see :mod:`.clustering.host`) and the weight
    scale used.

    Integer weights are kept when 2Ω < 2^30; other weights are scaled so that 2Ω is about 2^29 and rounded
    (positive weights to at least 1), which changes modularity by about 2^-29 relative. Negative weights
    are refused. ``scale``: that of :func:`weight_scale`, when already known."""
    if scale is None:
        scale, _ = weight_scale(graph)
    offsets = np.ascontiguousarray(graph.offsets, dtype=np.int64)
    integer, zeta = _integer_weights(offsets, graph.edge_weights, scale)
    level = {"offsets": offsets, "neighbors": np.ascontiguousarray(graph.neighbors, dtype=np.int32),
             "weights": integer, "loops": np.zeros(graph.num_vertices, dtype=np.int64), "zeta": zeta,
             "two_omega": np.int64(zeta.sum())}
    return level, scale
