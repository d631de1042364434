"""Matching by rounds of proposals (seed 000 Fig. 4 made parallel as in Fig. 9), then cluster joining.

Each round, every unmatched vertex proposes to its most similar unmatched neighbour (similarity of
:mod:`.similarity`, optionally divided by c(u) c(v)); mutual proposals are matched. Candidates are
ordered strictly (higher score, then smaller id), so the heaviest remaining pair is always mutual and
every round makes progress; CPU and GPU agree on the result. Afterwards an unmatched vertex may join
the cluster of its best neighbour while the cluster stays under the weight limit (Mt-KaHyPar-style
clustering, which keeps stars and hubs from stalling the coarsening).
"""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import SERIAL_BELOW
from .similarity import better_candidate, rate_neighbors


@numba.njit(cache=True)
def _best_candidate(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                    fixed, partner, cluster_weight, max_weight, max_net_size, heavy_edge, weight_penalty,
                    only_unmatched, scores, seen, touched):
    count = rate_neighbors(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                           max_net_size, heavy_edge, scores, seen, touched)
    best = -1
    best_score = 0.0
    for i in range(count):
        u = touched[i]
        raw = scores[u]
        scores[u] = 0.0
        seen[u] = False
        if only_unmatched and partner[u] >= 0:
            continue
        if cluster_weight[u] + vertex_weights[v] > max_weight:
            continue
        if fixed[v] >= 0 and fixed[u] >= 0 and fixed[v] != fixed[u]:
            continue
        score = raw / (float(cluster_weight[u]) * float(vertex_weights[v])) if weight_penalty and \
            cluster_weight[u] > 0 and vertex_weights[v] > 0 else raw
        if score > 0.0 and better_candidate(score, u, best_score, best):
            best = u
            best_score = score
    return best


@numba.njit(cache=True)
def _propose_chunk(t, per_thread, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                   vertex_weights, fixed, partner, cluster_weight, max_weight, max_net_size, heavy_edge,
                   weight_penalty, only_unmatched, active, proposals, scores, seen, touched):
    n = vertex_offsets.shape[0] - 1
    for v in range(t * per_thread, min(n, (t + 1) * per_thread)):
        if not active[v]:
            proposals[v] = -1
            continue
        proposals[v] = _best_candidate(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                       vertex_weights, fixed, partner, cluster_weight, max_weight, max_net_size,
                                       heavy_edge, weight_penalty, only_unmatched, scores[t], seen[t], touched[t])


@numba.njit(cache=True)
def _propose_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, fixed,
                    partner, cluster_weight, max_weight, max_net_size, heavy_edge, weight_penalty, only_unmatched,
                    active, proposals, scores, seen, touched):
    _propose_chunk(0, vertex_offsets.shape[0] - 1, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                   net_weights, vertex_weights, fixed, partner, cluster_weight, max_weight, max_net_size, heavy_edge,
                   weight_penalty, only_unmatched, active, proposals, scores, seen, touched)


@numba.njit(cache=True, parallel=True)
def _propose_parallel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, fixed,
                      partner, cluster_weight, max_weight, max_net_size, heavy_edge, weight_penalty, only_unmatched,
                      active, proposals, scores, seen, touched):
    """proposals[v] for every active v: its best candidate or -1; thread t uses scratch row t."""
    threads = scores.shape[0]
    per_thread = (vertex_offsets.shape[0] - 1 + threads - 1) // threads
    for t in numba.prange(threads):
        _propose_chunk(t, per_thread, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                       vertex_weights, fixed, partner, cluster_weight, max_weight, max_net_size, heavy_edge,
                       weight_penalty, only_unmatched, active, proposals, scores, seen, touched)


@numba.njit(cache=True)
def _find(parent, v):
    root = v
    while parent[root] != root:
        root = parent[root]
    while parent[v] != root:  # path compression
        parent[v], v = root, parent[v]
    return root


@numba.njit(cache=True)
def _join(proposals, order, fixed, max_weight, parent, weight, num_clusters, min_clusters):
    """Apply join proposals in ``order`` with union-find, keeping every cluster under max_weight, until only
    ``min_clusters`` clusters would remain (the level's shrink cap). Returns the number of clusters."""
    for v in order:
        if num_clusters <= min_clusters:
            break
        u = proposals[v]
        if u < 0:
            continue
        root_v, root_u = _find(parent, v), _find(parent, u)
        if root_v == root_u or weight[root_v] + weight[root_u] > max_weight:
            continue
        if fixed[root_v] >= 0 and fixed[root_u] >= 0 and fixed[root_v] != fixed[root_u]:
            continue
        low, high = min(root_v, root_u), max(root_v, root_u)
        parent[high] = low
        weight[low] += weight[high]
        if fixed[low] < 0:
            fixed[low] = fixed[high]
        num_clusters -= 1
    return num_clusters


@numba.njit(cache=True)
def _compact(parent):
    """Coarse ids 0..n'-1 in order of each cluster's smallest member."""
    n = parent.shape[0]
    cluster = np.empty(n, dtype=np.int32)
    next_id = 0
    for v in range(n):
        root = _find(parent, v)
        if root == v:
            cluster[v] = next_id
            next_id += 1
        else:
            cluster[v] = cluster[root]  # root < v: already numbered
    return cluster, next_id


def compute_clustering(hypergraph, max_weight: int, config, fixed=None, threads: int | None = None):
    """The coarsening map f: V -> V' (seed 000 Sec. II-C) as int32[n] with ids 0..n'-1, and n'.

    Parameters
    ----------
    hypergraph : Hypergraph
    max_weight : int
        No cluster may outweigh this.
    config : CoarseningConfig
    fixed : int[n] or None
        Merge key of each vertex, -1 if none: vertices with different keys never merge (fixed blocks,
        communities).
    """
    n = hypergraph.num_vertices
    threads = threads or numba.get_num_threads()
    threads = 1 if hypergraph.num_pins < SERIAL_BELOW else max(1, min(threads, n))
    _propose = _propose_serial if threads == 1 else _propose_parallel
    fixed = np.full(n, -1, dtype=np.int64) if fixed is None else np.ascontiguousarray(fixed, dtype=np.int64)
    scores = np.zeros((threads, n), dtype=np.float64)
    seen = np.zeros((threads, n), dtype=np.bool_)
    touched = np.empty((threads, n), dtype=np.int32)
    partner = np.full(n, -1, dtype=np.int32)
    proposals = np.full(n, -1, dtype=np.int32)
    weights = hypergraph.vertex_weights
    heavy_edge = config.rating == "heavy-edge"
    arrays = (hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets, hypergraph.incident_nets,
              hypergraph.net_weights, weights, fixed)
    for _ in range(config.matching_rounds):
        active = partner < 0
        _propose(*arrays, partner, weights, max_weight, config.max_rated_net_size, heavy_edge,
                 config.weight_penalty, True, active, proposals, scores, seen, touched)
        candidates = np.flatnonzero(proposals >= 0)
        mutual = candidates[proposals[proposals[candidates]] == candidates]
        if mutual.size == 0:
            break
        partner[mutual] = proposals[mutual]
    parent = np.arange(n, dtype=np.int32)
    matched = np.flatnonzero(partner >= 0)
    low = np.minimum(matched, partner[matched]).astype(np.int32)
    parent[matched] = low
    cluster_weight = weights.copy()
    np.add.at(cluster_weight, low, np.where(matched == low, 0, weights[matched]))
    cluster_fixed = fixed.copy()
    np.maximum.at(cluster_fixed, low, fixed[matched])  # matching never pairs different fixed blocks
    if config.join_unmatched:
        weight_of_cluster = cluster_weight[parent]  # every vertex's current cluster weight (pairs: root weight)
        active = partner < 0
        _propose(*arrays[:6], cluster_fixed[parent], partner, weight_of_cluster, max_weight,
                 config.max_rated_net_size, heavy_edge, config.weight_penalty, False, active, proposals, scores,
                 seen, touched)
        proposals[~active] = -1
        joining = np.flatnonzero(proposals >= 0).astype(np.int32)
        min_clusters = int(np.ceil(n / config.max_shrink_factor))
        _join(proposals, joining, cluster_fixed, max_weight, parent, cluster_weight, n - matched.size // 2,
              min_clusters)
    return _compact(parent)
