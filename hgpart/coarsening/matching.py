"""Matching by rounds of proposals, then cluster joining: the CPU twin (numba njit) of
:mod:`hgpart.coarsening.gpu`.

The greedy matching of L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on
the GPU", IEEE HPEC 2015 (Fig. 4), made parallel as their suitor matching (Fig. 9): each round, every
unmatched vertex proposes to its most similar unmatched neighbour (similarity of :mod:`.similarity`,
optionally divided by c(u) c(v)); mutual proposals are matched. Candidates are ordered strictly (higher
score, then a symmetric pseudo-random pair priority, then smaller id: :mod:`.rules`, shared with the GPU), so
the best remaining pair is always mutual, every round makes progress, and CPU and GPU agree on the result.
Afterwards an unmatched vertex may join the cluster of its best neighbour while the cluster stays under the
weight limit (Mt-KaHyPar-style clustering, which keeps stars and hubs from stalling the coarsening), by a
parallel deterministic rule (:func:`finish_clustering`) that the GPU follows step for step.
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from ..hypergraph import scatter_sum
from ..parallel import PROPOSALS, claim_chunk, on_threads, runs_serially
from ..config import UNBOUNDED
from .rules import JOIN_ROUNDS, candidate_score, join_targets, joins_on_the_pair_level, pair_roots, two_hop_pairs
from .contraction import contract
from .similarity import better_candidate_cpu, net_ratings, pair_priority_cpu, rate_neighbors, rating_work


candidate_score_cpu = numba.njit(cache=True, inline="always")(candidate_score)
PROPOSAL_CHUNK = 256  # vertices a thread takes at a time in _propose_parallel


@numba.njit(cache=True, nogil=True)
def _best_candidate(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                    fixed, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, scores, seen,
                    touched):
    count = rate_neighbors(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, scores, seen,
                           touched)
    best = -1
    best_score = 0.0
    best_priority = 0
    for i in range(count):
        u = touched[i]
        raw = scores[u]
        scores[u] = 0
        seen[u] = False
        score = candidate_score_cpu(raw, partner[u], cluster_weight[u], vertex_weights[v], fixed[v], fixed[u],
                                    max_weight, weight_penalty, only_unmatched)
        if score > 0.0:
            priority = pair_priority_cpu(v, u)
            if better_candidate_cpu(score, priority, u, best_score, best_priority, best):
                best = u
                best_score = score
                best_priority = priority
    return best


@numba.njit(cache=True, nogil=True)
def _propose_chunk(first, last, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings,
                   vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty, only_unmatched,
                   rerate_only, active, proposals, scores, seen, touched):
    """The proposals of vertices first .. last - 1 (see :func:`_propose_parallel`), with one thread's scratch
    rows ``scores``, ``seen`` and ``touched``."""
    for v in range(first, last):
        if not active[v]:
            proposals[v] = -1
            continue
        if rerate_only and (proposals[v] < 0 or partner[proposals[v]] < 0):
            continue  # its target is still free (or it had none): the same proposal again
        proposals[v] = _best_candidate(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings,
                                       vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty,
                                       only_unmatched, scores, seen, touched)


@numba.njit(cache=True, nogil=True)
def _propose_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights, fixed,
                    partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only, active, proposals,
                    scores, seen, touched):
    _propose_chunk(np.int64(0), vertex_offsets.shape[0] - 1, net_offsets, pin_vertices, vertex_offsets,
                   incident_nets, ratings, vertex_weights, fixed, partner, cluster_weight, max_weight, weight_penalty,
                   only_unmatched, rerate_only, active, proposals, scores[0], seen[0], touched[0])


@numba.njit(cache=True, nogil=True)
def _match_serial(rounds, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                  merge_key, max_weight, weight_penalty, partner, proposals, scores, seen, touched):
    """The matching rounds of :func:`compute_clustering` in one call (the serial driver, one GIL release for a
    level instead of two or three per round): each round the unmatched vertices propose (after the first,
    only those whose target got matched rate again), and mutual proposals become pairs in ``partner``
    (int32[n], -1 unmatched, updated in place); the rounds stop at the first that pairs nobody."""
    n = partner.shape[0]
    active = np.empty(n, dtype=np.bool_)
    for round_index in range(rounds):
        for v in range(n):
            active[v] = partner[v] < 0
        _propose_chunk(np.int64(0), n, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings,
                       vertex_weights, merge_key, partner, vertex_weights, max_weight, weight_penalty, np.bool_(True),
                       round_index > 0, active, proposals, scores[0], seen[0], touched[0])
        paired = 0
        for v in range(n):
            target = proposals[v]
            if target >= 0 and proposals[target] == v:
                partner[v] = target
                paired += 1
        if paired == 0:
            break


@numba.njit(cache=True, nogil=True)
def _propose_worker(t, taken, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                    fixed, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only, active,
                    proposals, scores, seen, touched):
    """Thread t of :func:`_propose_parallel`: chunks of ``PROPOSAL_CHUNK`` vertices from the shared counter
    ``taken``, with scratch row t."""
    while True:
        first, last = claim_chunk(taken, PROPOSAL_CHUNK, vertex_offsets.shape[0] - 1)
        if first == last:
            break
        _propose_chunk(first, last, net_offsets, pin_vertices,
                       vertex_offsets, incident_nets, ratings, vertex_weights, fixed, partner, cluster_weight,
                       max_weight, weight_penalty, only_unmatched, rerate_only, active, proposals, scores[t], seen[t],
                       touched[t])


def _propose_parallel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights, fixed,
                      partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only, active,
                      proposals, scores, seen, touched):
    """proposals[v] for every active v: its best candidate or -1 (with ``rerate_only``, only for those whose
    previous target got matched: candidates only drop out between matching rounds, so the others keep
    theirs); thread t uses scratch row t (:func:`hgpart.parallel.on_threads`). The threads take chunks of
    ``PROPOSAL_CHUNK`` vertices one after another from a shared counter: a vertex's rating costs the pins of
    its nets, which vary by orders of magnitude between the parts of a level (the clauses and the variables
    of a SAT model)."""
    on_threads(_propose_worker, scores.shape[0], np.zeros(1, dtype=np.int64), net_offsets, pin_vertices,
               vertex_offsets, incident_nets, ratings, vertex_weights, fixed, partner, cluster_weight,
               np.int64(max_weight), weight_penalty, only_unmatched, rerate_only, active, proposals, scores, seen,
               touched)


@numba.njit(cache=True, nogil=True)
def accept_joins(final, proposals, merge_key, cluster_key, weights, cluster_weight, max_weight, budget):
    """Which vertices join the cluster ``final[v]``: in vertex order, a joiner (a proposal, and a root other
    than itself) whose key agrees is counted into its target; it is accepted while the target's weight plus
    the joiners counted so far stays within ``max_weight``, and only the first ``budget`` are accepted."""
    n = final.shape[0]
    counted = np.zeros(n, dtype=np.int64)
    accepted = np.zeros(n, dtype=np.bool_)
    for v in range(n):
        if budget <= 0:
            break
        target = final[v]
        if proposals[v] < 0 or target == v:
            continue
        if merge_key[v] >= 0 and merge_key[v] != cluster_key[target]:
            continue
        counted[target] += weights[v]
        if cluster_weight[target] + counted[target] <= max_weight:
            accepted[v] = True
            budget -= 1
    return accepted


@numba.njit(cache=True, nogil=True)
def number_clusters(root):
    """Coarse ids 0..n'-1 in order of each cluster's smallest member; ``root`` (int32[n]) names each
    vertex's cluster by any of its members."""
    n = root.shape[0]
    smallest = np.full(n, n, dtype=np.int32)
    for v in range(n):
        smallest[root[v]] = min(smallest[root[v]], v)
    cluster = np.empty(n, dtype=np.int32)
    next_id = 0
    for v in range(n):
        first = smallest[root[v]]
        if first == v:
            cluster[v] = next_id
            next_id += 1
        else:
            cluster[v] = cluster[first]  # first < v: already numbered
    return cluster, next_id


def finish_clustering(hypergraph, max_weight: int, config, merge_key, partner, join_proposals,
                      base_budget: int):
    """From a matching (partner, -1 = unmatched) to the coarsening map: pairs become clusters, then (if
    configured) unmatched vertices join the cluster of their best neighbour, in up to JOIN_ROUNDS rounds.

    :func:`compute_clustering` calls it on the level of the matching's pairs (:func:`pair_level`), where the
    pairs are marked by ``partner[v] = v``; a plain matching (partner[v] = u, partner[u] = v) works as well.
    The joining is parallel and deterministic, so the GPU gets the same map (see
    :func:`hgpart.coarsening.gpu.joining.finish_clustering_device`). In each round every free vertex (not
    matched, not joined, not joined by others) v with a proposal u heads for the cluster u is in now, unless
    it is proposed to itself (:func:`.rules.join_targets`), and joins it if its merge key agrees and the
    cluster, with the joiners before it in vertex order, stays within ``max_weight``. Vertices turned away
    propose again in the next round, to clusters that still have room. At most ``base_budget`` minus the
    pairs vertices join in all (the shrink cap), the first ones in vertex order. With ``config.two_hop`` and
    the cap not reached, the vertices still alone name the cluster they would join were there no weight
    limit, and those naming the same one pair up by :func:`two_hop_pairs` (within the cap and the limit),
    isolated ones (in no net) with each other: without it, levels whose light vertices only touch full
    clusters stop shrinking far above the contraction limit.

    ``join_proposals(cluster_keys, cluster_weight, free, max_weight)`` returns the best neighbour of each
    free vertex (free[v] < 0; -1 for none and for the others) whose cluster can take it within
    ``max_weight``, given every vertex's cluster key and cluster weight.
    """
    n = hypergraph.num_vertices
    weights = hypergraph.vertex_weights
    vertices = np.arange(n, dtype=np.int32)
    root = pair_roots(np, partner)
    cluster_weight = scatter_sum(root, weights, n)
    cluster_key = merge_key.copy()
    np.maximum.at(cluster_key, root, merge_key)  # matching never pairs different keys
    if config.join_unmatched:
        free = partner.copy()
        budget = base_budget - int(np.count_nonzero(partner > vertices))
        for _ in range(JOIN_ROUNDS):
            if budget <= 0:
                break
            proposals = join_proposals(cluster_key[root], cluster_weight[root], free, max_weight)
            final = join_targets(np, proposals, root, free)
            accepted = accept_joins(final, proposals, merge_key, cluster_key, weights, cluster_weight, max_weight,
                                    budget)
            joiners = np.flatnonzero(accepted)
            if joiners.size == 0:
                break
            budget -= joiners.size
            targets = final[joiners]
            root[joiners] = targets
            np.add.at(cluster_weight, targets, weights[joiners])
            np.maximum.at(cluster_key, targets, merge_key[joiners])
            free[joiners] = targets
            free[targets] = targets
        if config.two_hop and budget > 0:
            preferred = join_proposals(cluster_key[root], cluster_weight[root], free, UNBOUNDED)
            first, second = two_hop_pairs(np, free < 0, preferred, root, merge_key, weights, max_weight, budget,
                                          np.diff(hypergraph.vertex_offsets) == 0)
            root[second] = first
    return number_clusters(root)


def pair_level(hypergraph, partner, merge_key):
    """The level of the matching's pairs, on which :func:`compute_clustering` joins: (pair_map int32[n], the
    contracted hypergraph, its merge keys int64[n'], its partner int32[n']: v for a pair, -1 for a vertex
    left alone). Its nets count each pair once, so a vertex there rates a pair by the nets they share, each
    once, with the net's size in clusters (Mt-KaHyPar's rating of clusters)."""
    from .backends import HOST_COARSENING

    pair_map, count = number_clusters(pair_roots(np, partner))
    level = contract(hypergraph, pair_map, count)
    keys = HOST_COARSENING.carry(merge_key, pair_map, count)
    paired = np.bincount(pair_map, minlength=count) > 1
    return pair_map, level, keys, np.where(paired, np.arange(count, dtype=np.int32), -1).astype(np.int32)


class _Proposer:
    """Proposal rounds on one level (:func:`compute_clustering`): the level's net ratings and per-thread
    scratch, and the serial or the parallel driver, chosen by the pin visits of a rating round (the sum of
    |e|^2, which on coarse levels and SAT models is ten to a hundred times the pins)."""

    def __init__(self, hypergraph, config, threads):
        n = hypergraph.num_vertices
        self.hypergraph, self.config = hypergraph, config
        work = max(hypergraph.num_pins, rating_work(hypergraph, config.max_rated_net_size))
        self.threads = 1 if runs_serially(work, driver=PROPOSALS) else max(1, min(threads, n))
        self.run = _propose_serial if self.threads == 1 else _propose_parallel
        self.scores = np.zeros((self.threads, n), dtype=np.int64)
        self.seen = np.zeros((self.threads, n), dtype=np.bool_)
        self.touched = np.empty((self.threads, n), dtype=np.int32)
        self.proposals = np.full(n, -1, dtype=np.int32)
        self.ratings, _ = net_ratings(hypergraph, config.rating == "heavy-edge", config.max_rated_net_size)

    def propose(self, keys, cluster_weight, status, only_unmatched, rerate_only, limit):
        """One round: proposals of the vertices with status < 0 (the others get -1), to clusters that stay
        within ``limit``."""
        h = self.hypergraph
        self.run(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, self.ratings, h.vertex_weights,
                 keys, status, cluster_weight, limit, self.config.weight_penalty, only_unmatched, rerate_only,
                 status < 0, self.proposals, self.scores, self.seen, self.touched)
        return self.proposals

    def join_proposals(self, keys, cluster_weight, free, limit):
        return self.propose(keys, cluster_weight, free, False, False, limit)


class LevelMap(NamedTuple):
    """A level's coarsening map (host or device arrays): ``cluster`` (int32[n], ids 0..count-1) and
    ``count``; where the joining ran on the level of the matching's pairs, also that level (``pairs``) and
    the joining's map on it (``pair_cluster``, so that cluster == pair_cluster[pair map]). Contracting
    ``pairs`` by ``pair_cluster`` gives the same coarse level as contracting the level by ``cluster``
    (contraction's result does not depend on the order of merges), from fewer pins."""

    cluster: object
    count: int
    pairs: object = None
    pair_cluster: object = None

    def contraction_input(self, level):
        """(hypergraph, map) to contract: the pair level and the joining's map where there is one."""
        return (level, self.cluster) if self.pairs is None else (self.pairs, self.pair_cluster)


def compute_clustering(hypergraph, max_weight: int, config, fixed=None, threads: int | None = None):
    """The coarsening map f: V -> V' (Cheng, Cho and Yoon, Sec. II-C) as int32[n] with ids 0..n'-1, and n'
    (:func:`map_level`'s map)."""
    level_map = map_level(hypergraph, max_weight, config, fixed, threads)
    return level_map.cluster, level_map.count


def map_level(hypergraph, max_weight: int, config, fixed=None, threads: int | None = None) -> LevelMap:
    """The coarsening map of a level, with the level of the matching's pairs it was joined on.

    The matching rounds pair vertices; the joining (:func:`finish_clustering`) then runs on the level of
    those pairs (:func:`pair_level`), so that a vertex left alone rates each pair as a whole; on large
    levels where the matching paired almost nobody, on the level itself, and the map has no pair level
    (:func:`.rules.joins_on_the_pair_level`).

    Parameters
    ----------
    hypergraph : Hypergraph
    max_weight : int
        No cluster may outweigh this.
    config : CoarseningConfig
    fixed : int[n] or None
        Merge key of each vertex, -1 if none: vertices with different keys never merge (fixed blocks,
        communities).
    threads : int, optional
        Numba threads (default: all).
    """
    n = hypergraph.num_vertices
    threads = threads or numba.get_num_threads()
    merge_key = np.full(n, -1, dtype=np.int64) if fixed is None else np.ascontiguousarray(fixed, dtype=np.int64)
    partner = np.full(n, -1, dtype=np.int32)
    matcher = _Proposer(hypergraph, config, threads)
    if matcher.threads == 1:
        _match_serial(config.matching_rounds, hypergraph.net_offsets, hypergraph.pin_vertices,
                      hypergraph.vertex_offsets, hypergraph.incident_nets, matcher.ratings, hypergraph.vertex_weights,
                      merge_key, max_weight, config.weight_penalty, partner, matcher.proposals, matcher.scores,
                      matcher.seen, matcher.touched)
    else:
        proposals = matcher.proposals
        for round_index in range(config.matching_rounds):
            matcher.propose(merge_key, hypergraph.vertex_weights, partner, True, round_index > 0, max_weight)
            candidates = np.flatnonzero(proposals >= 0)
            mutual = candidates[proposals[proposals[candidates]] == candidates]
            if mutual.size == 0:
                break
            partner[mutual] = proposals[mutual]
    base_budget = n - int(np.ceil(n / config.max_shrink_factor))
    if not joins_on_the_pair_level(config, n, hypergraph.num_pins, lambda: int(np.count_nonzero(partner >= 0))):
        return LevelMap(*finish_clustering(hypergraph, max_weight, config, merge_key, partner,
                                           matcher.join_proposals, base_budget))
    pair_map, pairs, pair_keys, pair_partner = pair_level(hypergraph, partner, merge_key)
    joiner = _Proposer(pairs, config, threads)
    cluster, count = finish_clustering(pairs, max_weight, config, pair_keys, pair_partner, joiner.join_proposals,
                                       base_budget - (n - pairs.num_vertices))
    return LevelMap(cluster[pair_map], count, pairs, cluster)
