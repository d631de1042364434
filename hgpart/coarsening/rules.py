"""The rules both coarsening twins follow, written once: the CPU path (:mod:`.matching`, :mod:`.similarity`,
numba njit) and the GPU path (:mod:`hgpart.coarsening.gpu`, numba.cuda) compile or call these same functions,
so that both pick the same candidates and build the same coarsening map.

- :func:`candidate_score` and :func:`better_candidate`: a candidate's score and the strict order of candidates
  (score, then :func:`pair_priority`, then the smaller id) of the parallel suitor matching of L. Cheng,
  H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015 (Fig. 9).
- :data:`JOIN_ROUNDS`, :func:`joins_on_the_pair_level`, :func:`pair_roots`, :func:`join_targets` and
  :func:`two_hop_pairs`: the joining rounds after the matching, the level they run on, the matching's
  clusters, where each joiner goes, and the pairing of vertices left alone that prefer the same cluster
  (plain array code for numpy and CuPy alike).

Plain Python on scalars and arrays: each twin wraps the scalar functions in ``numba.njit`` or
``cuda.jit(device=True)``.
"""

from __future__ import annotations

import numpy as np

JOIN_ROUNDS = 3  # joining rounds after the matching (:func:`.matching.finish_clustering`)


def candidate_score(raw, partner_u, cluster_weight_u, weight_v, key_v, key_u, max_weight, weight_penalty,
                    only_unmatched):
    """The score of u as v's partner, or -1.0 when u is not a candidate (matched, too heavy, other block).

    ``raw`` is the fixed-point similarity (int64); with ``weight_penalty`` it is divided by c(u) c(v).
    ``partner_u`` is u's partner (-1 unmatched), ``cluster_weight_u`` the weight of u's cluster, ``weight_v``
    v's weight and ``key_v``, ``key_u`` their merge keys (-1 none). Scalars, not the arrays they come from:
    on the CPU, every array passed to a helper costs an atomic reference count up and down per call, more
    than the helper's own work in the rating loop. The same arithmetic runs on the GPU, so both pick the
    same partner. Returns a float64.
    """
    if only_unmatched and partner_u >= 0:
        return -1.0
    if cluster_weight_u + weight_v > max_weight:
        return -1.0
    if key_v >= 0 and key_u >= 0 and key_v != key_u:
        return -1.0
    if weight_penalty and cluster_weight_u > 0 and weight_v > 0:
        return float(raw) / (float(cluster_weight_u) * float(weight_v))
    return float(raw)


def pair_priority(v, u):
    """A pseudo-random 32-bit priority (int64) of the pair {v, u}, the same from both ends.

    Ties in similarity are broken by it before ids: with equal scores everywhere (graphs, unit weights)
    "smaller id wins" makes long chains of proposals and few mutual ones, while a symmetric random order
    makes each locally best pair mutual (as in the suitor / locally-dominant matchings). Plain int64
    arithmetic that never overflows (a hash in the spirit of murmur3's finaliser), so the CPU (njit) and the
    GPU (cuda.jit) get the same numbers.
    """
    low = min(v, u)
    high = max(v, u)
    mixed = (np.int64(low) * 2654435761 + np.int64(high)) & 0xFFFFFFFF
    mixed = ((mixed ^ (mixed >> 16)) * 0x7FEB352D) & 0xFFFFFFFF  # multipliers < 2^31: products < 2^63
    mixed = ((mixed ^ (mixed >> 15)) * 0x68E31DA5) & 0xFFFFFFFF
    return mixed ^ (mixed >> 16)


def better_candidate(score, priority, candidate, best_score, best_priority, best):
    """Strict total order of candidates: higher score (float64), then higher pair priority (int64), then the
    smaller id (GPU and CPU agree). ``best < 0`` means no candidate yet."""
    return best < 0 or score > best_score or (score == best_score and (
        priority > best_priority or (priority == best_priority and candidate < best)))


def joins_on_the_pair_level(config, vertices: int, pins: int, count_paired) -> bool:
    """Whether the joining runs on the level of the matching's pairs (else on the level itself): always with
    ``config.join_unmatched`` on levels of fewer than ``config.pair_level_skip_pins`` pins, and on larger
    levels when the matching paired at least ``config.pair_level_min_paired`` of their ``vertices``.
    ``count_paired()`` returns the number of vertices in pairs (called only on the larger levels: on the
    device it waits for the matching)."""
    if not config.join_unmatched:
        return False
    return pins < config.pair_level_skip_pins or count_paired() >= config.pair_level_min_paired * vertices


def pair_roots(array, partner):
    """Each vertex's cluster after the matching, named by its smaller member (int32[n]): min(v, partner[v]) for
    a matched v, v for the others. ``array`` is numpy or CuPy; ``partner`` int32[n], -1 unmatched."""
    vertices = array.arange(partner.shape[0], dtype=array.int32)
    return array.where(partner >= 0, array.minimum(vertices, partner), vertices).astype(array.int32)


def join_targets(array, proposals, root, free):
    """Where each vertex goes in a joining round (int32[n]): a free vertex that proposes joins the cluster its
    target is in now (``root[proposals[v]]``), unless another free vertex proposes to it; then it stays and
    the others join it. Of two free vertices that propose to each other and to whom nobody else proposes,
    the larger joins the smaller. The others keep ``root[v]``.

    So every joiner lands in a cluster that stays put this round, and a cluster grows only by vertices that
    chose it (as in Mt-KaHyPar's clustering, where a vertex joins its best neighbour's cluster as it is),
    never by chains of proposals that carry a vertex on to its target's target. Measured against following
    the chains to their ends, with one matching round (docs/tuning.md, "coarsening.matching_rounds = 1").

    Written once for both devices: ``array`` is numpy or CuPy; elementwise steps and one bincount.

    Parameters
    ----------
    proposals, root, free : int32[n]
        Each vertex's proposal (-1 none), the root of its cluster, and free[v] < 0 for the vertices still
        alone.
    """
    n = proposals.shape[0]
    vertices = array.arange(n, dtype=array.int32)
    target_vertex = array.maximum(proposals, 0)
    proposing = (proposals >= 0) & (free < 0)
    target = root[target_vertex]
    followers = array.bincount(array.where(proposing, target, n), minlength=n + 1)[:n]
    mutual_larger = proposing & (proposals[target_vertex] == vertices) & (target_vertex < vertices)
    moves = proposing & ((followers == 0) | (mutual_larger & (followers == 1)))
    return array.where(moves, target, root).astype(array.int32)


def two_hop_pairs(array, alone, proposals, root, merge_key, weights, max_weight: int, budget: int, isolated):
    """Pairs of vertices left alone that prefer the same cluster (2-hop matching), as (first, second) with
    first < second: the lone vertices v with proposals[v] >= 0, sorted by (the preferred
    cluster root[proposals[v]], merge key, v), are paired 2i with 2i + 1 within each run of equal cluster
    and key, while the pair's weight is within ``max_weight``; the first ``budget`` pairs in that order.
    Lone ``isolated`` vertices (in no net: nothing to propose to) form one more run, ahead of the others,
    as if they had all proposed to cluster -1: they pair up with each other, so a level of mostly
    isolated vertices (the 700,000-column synthetic matrix of Cheng, Cho and Yoon: 699,000 of them) still
    shrinks.

    Written once for both devices: ``array`` is numpy (the CPU path) or CuPy (the device twin), and every
    step is a sort, a search or a scan, so both give the same pairs.

    Parameters
    ----------
    alone, isolated : bool[n]
    proposals, root : int32[n]
        Each vertex's proposal (-1 none) and the root of its cluster.
    merge_key, weights : int64[n]

    Returns
    -------
    first, second : int32[pairs]
    """
    empty = array.zeros(0, dtype=array.int32)
    if budget <= 0:  # also when no joining round ran (and left no proposals)
        return empty, empty
    candidates = array.flatnonzero(alone & ((proposals >= 0) | isolated))
    if candidates.shape[0] < 2:
        return empty, empty
    target = array.where(isolated[candidates], -1, root[array.maximum(proposals[candidates], 0)]).astype(array.int64)
    key = merge_key[candidates].astype(array.int64)
    order = array.lexsort(array.stack([candidates.astype(array.int64), key, target]))
    candidates, target, key = candidates[order], target[order], key[order]
    same = (target[1:] == target[:-1]) & (key[1:] == key[:-1])
    group_start = array.concatenate([array.ones(1, dtype=array.bool_), ~same])
    starts = array.flatnonzero(group_start)
    rank = array.arange(candidates.shape[0]) - starts[array.cumsum(group_start) - 1]
    first = array.flatnonzero((rank[:-1] % 2 == 0) & same)
    first = first[weights[candidates[first]] + weights[candidates[first + 1]] <= max_weight][:budget]
    return candidates[first].astype(array.int32), candidates[first + 1].astype(array.int32)
