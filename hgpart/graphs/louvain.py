"""Modularity communities by Louvain: local moving of nodes, then aggregation, level by level (numba).

Sequential and deterministic: nodes are visited in id order, ties go to the smaller community id.
Used by the partitioner to keep coarsening inside communities of the hypergraph's star expansion.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _local_moving(offsets, neighbors, weights, node_weights, total_weight, max_rounds, min_gain):
    """Move nodes to the neighbouring community with the best modularity gain; returns community ids."""
    n = offsets.shape[0] - 1
    community = np.arange(n, dtype=np.int64)
    community_weight = node_weights.copy()
    link = np.zeros(n, dtype=np.float64)
    touched = np.empty(n, dtype=np.int64)
    inverse = 1.0 / total_weight if total_weight > 0 else 0.0
    for _ in range(max_rounds):
        moved = 0
        for v in range(n):
            own = community[v]
            count = 0
            for p in range(offsets[v], offsets[v + 1]):
                u = neighbors[p]
                if u == v:
                    continue
                c = community[u]
                if link[c] == 0.0:
                    touched[count] = c
                    count += 1
                link[c] += weights[p]
            community_weight[own] -= node_weights[v]
            best = own
            best_gain = link[own] - node_weights[v] * community_weight[own] * inverse
            for i in range(count):
                c = touched[i]
                gain = link[c] - node_weights[v] * community_weight[c] * inverse
                if gain > best_gain + min_gain or (abs(gain - best_gain) <= min_gain and c < best and gain >= best_gain):
                    best = c
                    best_gain = gain
            for i in range(count):
                link[touched[i]] = 0.0
            link[own] = 0.0
            community_weight[best] += node_weights[v]
            if best != own:
                community[v] = best
                moved += 1
        if moved == 0:
            break
    return community


@numba.njit(cache=True)
def _aggregate(offsets, neighbors, weights, community, num_communities):
    """The community graph: one node per community, edge weights summed (self loops kept)."""
    n = offsets.shape[0] - 1
    order = np.argsort(community, kind="mergesort")
    starts = np.zeros(num_communities + 1, dtype=np.int64)
    for v in range(n):
        starts[community[v] + 1] += 1
    starts = np.cumsum(starts)
    link = np.zeros(num_communities, dtype=np.float64)
    touched = np.empty(num_communities, dtype=np.int64)
    new_offsets = np.zeros(num_communities + 1, dtype=np.int64)
    total = offsets[-1]
    new_neighbors = np.empty(total, dtype=np.int64)
    new_weights = np.empty(total, dtype=np.float64)
    cursor = 0
    for c in range(num_communities):
        count = 0
        for i in range(starts[c], starts[c + 1]):
            v = order[i]
            for p in range(offsets[v], offsets[v + 1]):
                d = community[neighbors[p]]
                if link[d] == 0.0:
                    touched[count] = d
                    count += 1
                link[d] += weights[p]
        for i in range(count):
            d = touched[i]
            new_neighbors[cursor] = d
            new_weights[cursor] = link[d]
            link[d] = 0.0
            cursor += 1
        new_offsets[c + 1] = cursor
    return new_offsets, new_neighbors[:cursor].copy(), new_weights[:cursor].copy()


def louvain(offsets, neighbors, weights, max_levels: int = 10, max_rounds: int = 8, min_gain: float = 1e-12):
    """Communities of an undirected weighted graph in symmetric CSR (int64 offsets, int ids, float weights).

    Returns int64[n] community ids numbered 0..c-1 in order of first appearance.
    """
    n = offsets.shape[0] - 1
    assignment = np.arange(n, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    neighbors = np.asarray(neighbors, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.float64)
    for _ in range(max_levels):
        rows = np.repeat(np.arange(offsets.shape[0] - 1), np.diff(offsets))
        node_weights = np.bincount(rows, weights=weights, minlength=offsets.shape[0] - 1)
        total = float(weights.sum())
        community = _local_moving(offsets, neighbors, weights, node_weights, total, max_rounds, min_gain)
        _, community = np.unique(community, return_inverse=True)
        count = int(community.max()) + 1 if community.size else 0
        if count == offsets.shape[0] - 1:
            break
        assignment = community[assignment]
        offsets, neighbors, weights = _aggregate(offsets, neighbors, weights, community, count)
    _, first = np.unique(assignment, return_index=True)
    rank = np.empty(first.shape[0], dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.shape[0])
    return rank[np.searchsorted(np.unique(assignment), assignment)]


def hypergraph_communities(hypergraph, max_net_size: int = 1000) -> np.ndarray:
    """Louvain communities of the star expansion (vertex - net edges of weight w(e) / |e|) restricted to
    the vertices: int64[num_vertices]. Nets above ``max_net_size`` pins are left out."""
    n, m = hypergraph.num_vertices, hypergraph.num_nets
    sizes = hypergraph.net_sizes()
    keep = (sizes >= 2) & (sizes <= max_net_size)
    pin_keep = np.repeat(keep, sizes)
    nets = np.repeat(np.arange(m, dtype=np.int64), sizes)[pin_keep]
    vertices = hypergraph.pin_vertices[pin_keep].astype(np.int64)
    pin_weight = (hypergraph.net_weights / np.maximum(sizes, 1))[nets]
    sources = np.concatenate([vertices, n + nets])
    targets = np.concatenate([n + nets, vertices])
    edge_weights = np.concatenate([pin_weight, pin_weight])
    order = np.argsort(sources, kind="stable")
    offsets = np.zeros(n + m + 1, dtype=np.int64)
    np.cumsum(np.bincount(sources, minlength=n + m), out=offsets[1:])
    communities = louvain(offsets, targets[order], edge_weights[order])
    return communities[:n]
