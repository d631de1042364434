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

from ..hypergraph import scatter_sum
from ..parallel import SERIAL_BELOW
from .similarity import better_candidate, net_ratings, rate_neighbors


def candidate_score(v, u, raw, vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty,
                    only_unmatched):
    """The score of u as v's partner, or -1.0 when u is not a candidate (matched, too heavy, other block).

    ``raw`` is the fixed-point similarity; with ``weight_penalty`` it is divided by c(u) c(v). The same
    arithmetic runs on the GPU, so both pick the same partner.
    """
    if only_unmatched and partner[u] >= 0:
        return -1.0
    if cluster_weight[u] + vertex_weights[v] > max_weight:
        return -1.0
    if fixed[v] >= 0 and fixed[u] >= 0 and fixed[v] != fixed[u]:
        return -1.0
    if weight_penalty and cluster_weight[u] > 0 and vertex_weights[v] > 0:
        return float(raw) / (float(cluster_weight[u]) * float(vertex_weights[v]))
    return float(raw)


candidate_score_cpu = numba.njit(cache=True)(candidate_score)


@numba.njit(cache=True)
def _best_candidate(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                    fixed, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, scores, seen,
                    touched):
    count = rate_neighbors(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, scores, seen,
                           touched)
    best = -1
    best_score = 0.0
    for i in range(count):
        u = touched[i]
        raw = scores[u]
        scores[u] = 0
        seen[u] = False
        score = candidate_score_cpu(v, u, raw, vertex_weights, fixed, partner, cluster_weight, max_weight,
                                    weight_penalty, only_unmatched)
        if score > 0.0 and better_candidate(score, u, best_score, best):
            best = u
            best_score = score
    return best


@numba.njit(cache=True)
def _propose_chunk(t, per_thread, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings,
                   vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, active,
                   proposals, scores, seen, touched):
    n = vertex_offsets.shape[0] - 1
    for v in range(t * per_thread, min(n, (t + 1) * per_thread)):
        if not active[v]:
            proposals[v] = -1
            continue
        proposals[v] = _best_candidate(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings,
                                       vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty,
                                       only_unmatched, scores[t], seen[t], touched[t])


@numba.njit(cache=True)
def _propose_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights, fixed,
                    partner, cluster_weight, max_weight, weight_penalty, only_unmatched, active, proposals, scores,
                    seen, touched):
    _propose_chunk(0, vertex_offsets.shape[0] - 1, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                   ratings, vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty,
                   only_unmatched, active, proposals, scores, seen, touched)


@numba.njit(cache=True, parallel=True)
def _propose_parallel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights, fixed,
                      partner, cluster_weight, max_weight, weight_penalty, only_unmatched, active, proposals, scores,
                      seen, touched):
    """proposals[v] for every active v: its best candidate or -1; thread t uses scratch row t."""
    threads = scores.shape[0]
    per_thread = (vertex_offsets.shape[0] - 1 + threads - 1) // threads
    for t in numba.prange(threads):
        _propose_chunk(t, per_thread, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings,
                       vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty, only_unmatched,
                       active, proposals, scores, seen, touched)


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


def finish_clustering(hypergraph, max_weight: int, config, merge_key, partner, join_proposals):
    """From a matching (partner, -1 = unmatched) to the coarsening map: pairs become clusters, then (if
    configured) unmatched vertices join their best neighbour's cluster in vertex order, up to the shrink cap.

    ``join_proposals(cluster_keys, cluster_weight)`` returns each unmatched vertex's best neighbour (-1 for
    none and for matched vertices), given every vertex's current cluster key and cluster weight.
    """
    n = hypergraph.num_vertices
    weights = hypergraph.vertex_weights
    parent = np.arange(n, dtype=np.int32)
    matched = np.flatnonzero(partner >= 0)
    low = np.minimum(matched, partner[matched]).astype(np.int32)
    parent[matched] = low
    cluster_weight = weights + scatter_sum(low, np.where(matched == low, 0, weights[matched]), n)
    cluster_fixed = merge_key.copy()
    np.maximum.at(cluster_fixed, low, merge_key[matched])  # matching never pairs different keys
    if config.join_unmatched:
        proposals = join_proposals(cluster_fixed[parent], cluster_weight[parent])
        joining = np.flatnonzero(proposals >= 0).astype(np.int32)
        min_clusters = int(np.ceil(n / config.max_shrink_factor))
        _join(proposals, joining, cluster_fixed, max_weight, parent, cluster_weight, n - matched.size // 2,
              min_clusters)
    return _compact(parent)


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
    run = _propose_serial if threads == 1 else _propose_parallel
    merge_key = np.full(n, -1, dtype=np.int64) if fixed is None else np.ascontiguousarray(fixed, dtype=np.int64)
    scores = np.zeros((threads, n), dtype=np.int64)
    seen = np.zeros((threads, n), dtype=np.bool_)
    touched = np.empty((threads, n), dtype=np.int32)
    partner = np.full(n, -1, dtype=np.int32)
    proposals = np.full(n, -1, dtype=np.int32)
    ratings, _ = net_ratings(hypergraph, config.rating == "heavy-edge", config.max_rated_net_size)

    def propose(keys, cluster_weight, only_unmatched):
        run(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets, hypergraph.incident_nets,
            ratings, hypergraph.vertex_weights, keys, partner, cluster_weight, max_weight, config.weight_penalty,
            only_unmatched, partner < 0, proposals, scores, seen, touched)
        return proposals

    for _ in range(config.matching_rounds):
        propose(merge_key, hypergraph.vertex_weights, True)
        candidates = np.flatnonzero(proposals >= 0)
        mutual = candidates[proposals[proposals[candidates]] == candidates]
        if mutual.size == 0:
            break
        partner[mutual] = proposals[mutual]
    return finish_clustering(hypergraph, max_weight, config, merge_key, partner,
                             lambda keys, cluster_weight: propose(keys, cluster_weight, False))
