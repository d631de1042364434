"""Modularity clustering by agglomeration and local moving on the host: the njit CPU twin of the GPU steps.

Agglomeration follows B. O. Fagginger Auer and R. H. Bisseling, "Graph Coarsening and Clustering on the
GPU", 10th DIMACS Implementation Challenge, 2012; local moving, which Fagginger Auer and Bisseling (2012)
leave out, refines the clusters level by level as Louvain does.

A level is a dict: a weighted graph in symmetric CSR with integer weights (see
:func:`hgpart.graphs.modularity.integer_level`),

``offsets`` : int64[n + 1]
``neighbors`` : int32[D]
    Both directions of each edge, no self loops, rows sorted.
``weights`` : int64[D]
``loops`` : int64[n]
    Weight of the edges inside each vertex (a coarse vertex is a cluster).
``zeta`` : int64[n]
    The weighted degree ζ(v) = Σ_u ω(v, u) + 2 loops(v).
``two_omega`` : int64
    Σ ζ = 2Ω.

With integer weights every sum and gain is exact, so the GPU (int64 atomics, in any order) and this code
agree to the bit. Modularity scaled by 4Ω² is ``Σ_C 4Ω I(C) − ζ(C)²`` (I(C): weight inside cluster C).

The steps; each has a GPU twin with the same arguments (:mod:`.device` lists them):

1. :func:`match_clusters`: the blue/red matching of Fagginger Auer and Bisseling (2012). Per round each
   unmatched vertex is coloured by a hash; blue vertices propose to the red neighbour of largest merge gain
   2Ω ω(u, v) − ζ(u)ζ(v) > 0, each red vertex accepts its best proposer; ties go to the smaller id.
2. :func:`satellite_targets`: their centre potential cp(v) = ζ(v)² / Σ_{u~v} ζ(u). An unmatched vertex
   with cp < 1 (a satellite) joins the neighbour with cp >= 1 (a centre) of largest positive merge gain,
   so many satellites join one centre in one level.
3. :func:`group_map`: the map of vertices to coarse vertices (pairs and stars), ids in order of their
   smallest member.
4. :func:`contract_level`: the coarse graph, loops and ζ summed.
5. :func:`local_moving` (in :mod:`.host_moving`, with :func:`scaled_modularity`): Louvain-style moves by
   exact modularity gain, all vertices at once per round. Rounds alternately move only to larger and only
   to smaller cluster ids, so that no two vertices swap. No vertex moves straight back to the cluster it
   left in the round before: such moves make modularity rise and fall by turns on large graphs, and
   without them the movers die out and modularity ends higher. From the third round on only the active
   vertices (moved, or a neighbour moved, in the last ``ACTIVE_ROUNDS`` rounds) are looked at, which makes
   the late rounds cheap. The best clustering of all rounds is kept.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import int64

from ...hypergraph import sort_segment
from ...parallel import claim_chunk, on_threads
from ..modularity import integer_level
from . import common
from .common import PROPOSE, SATELLITE, intersect, project, round_salt
from .host_moving import local_moving, scaled_modularity, threads_for_level

CONTRACT_CHUNK = 256  # coarse vertices a thread of the contraction takes at a time from a shared counter

__all__ = ["match_clusters", "satellite_targets", "group_map", "contract_level", "local_moving",
           "scaled_modularity", "first_appearance", "graph_level", "identity", "no_targets", "project", "compact",
           "intersect", "to_host"]

candidate_gain = numba.njit(inline="always")(common.candidate_gain)
colour_bit = numba.njit(common.colour_bit)


@numba.njit(cache=True)
def colours(salt, n):
    """The colours of one matching round: int8[n], 1 for blue vertices, 0 for red (int64 ``salt``)."""
    blue = np.empty(n, dtype=np.int8)
    for v in range(n):
        blue[v] = colour_bit(salt, v)
    return blue


@numba.njit(parallel=True, cache=True)
def _best_candidates(mode, offsets, neighbors, weights, two_omega, zeta, partner, proposal, blue, centre, best,
                     best_gain):
    """best[v] = the candidate u of largest gain in the step ``mode`` (ties: smaller u), or -1, and best_gain[v]
    its gain; vertices in parallel. Arrays as in a level, partner/proposal/best int32[n], blue/centre int8[n],
    best_gain int64[n]."""
    for v in numba.prange(offsets.shape[0] - 1):
        chosen = -1
        gain_of_chosen = int64(0)
        if partner[v] < 0:
            for p in range(offsets[v], offsets[v + 1]):
                u = neighbors[p]
                gain = candidate_gain(mode, v, u, weights[p], two_omega, zeta[v], zeta[u], partner[v], partner[u],
                                      proposal[u], blue[v], blue[u], centre[v], centre[u])
                if gain > gain_of_chosen or (gain == gain_of_chosen and gain > 0 and u < chosen):
                    gain_of_chosen = gain
                    chosen = u
        best[v] = chosen
        best_gain[v] = gain_of_chosen


@numba.njit(cache=True)
def _match_round(offsets, neighbors, weights, two_omega, zeta, partner, blue, proposal, proposal_gain, response,
                 response_gain):
    """One blue/red round: proposals, responses, matches. Returns the number of new pairs.

    Each red vertex accepts the proposer of largest gain (ties: the smaller id), as the device's RESPOND step
    finds it (a pair's gain is symmetric): one pass over the proposals instead of one over the red vertices'
    edges."""
    no_centres = blue  # unused by PROPOSE
    _best_candidates(np.int64(PROPOSE), offsets, neighbors, weights, two_omega, zeta, partner, proposal, blue,
                     no_centres, proposal, proposal_gain)
    response[:] = -1
    response_gain[:] = 0
    for v in range(partner.shape[0]):  # in id order: a tie keeps the smaller proposer
        u = proposal[v]
        if u >= 0 and proposal_gain[v] > response_gain[u]:
            response[u] = v
            response_gain[u] = proposal_gain[v]
    pairs = 0
    for u in range(partner.shape[0]):
        v = response[u]
        if v >= 0:
            partner[u] = v
            partner[v] = u
            pairs += 1
    return pairs


def match_clusters(level: dict, seed: int, depth: int, rounds: int) -> np.ndarray:
    """Step 1: blue/red matching by merge gain (Fagginger Auer and Bisseling 2012).

    Parameters
    ----------
    level : dict
        A level (see the module docstring).
    seed : int
        Seed of the run; with ``depth`` and the round it salts the colouring hash.
    depth : int
        Index of the level in the agglomeration.
    rounds : int
        Most rounds; a round without a new pair ends the matching.

    Returns
    -------
    partner : int32[n]
        Each vertex's partner, -1 for unmatched vertices.
    """
    n = level["offsets"].shape[0] - 1
    partner = np.full(n, -1, dtype=np.int32)
    proposal, response = np.empty(n, dtype=np.int32), np.empty(n, dtype=np.int32)
    proposal_gain, response_gain = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    with threads_for_level(level):
        for round_index in range(rounds):
            blue = colours(round_salt(seed, depth, round_index), n)
            if _match_round(level["offsets"], level["neighbors"], level["weights"], level["two_omega"],
                            level["zeta"], partner, blue, proposal, proposal_gain, response, response_gain) == 0:
                break
    return partner


@numba.njit(cache=True)
def centres(offsets, neighbors, zeta):
    """int8[n]: 1 where the centre potential ζ(v)² / Σ_{u~v} ζ(u) is at least 1 (isolated vertices too);
    offsets int64[n + 1], neighbors int32[D], zeta int64[n]."""
    n = offsets.shape[0] - 1
    centre = np.empty(n, dtype=np.int8)
    for v in range(n):
        around = int64(0)
        for p in range(offsets[v], offsets[v + 1]):
            around += zeta[neighbors[p]]
        centre[v] = 1 if zeta[v] * zeta[v] >= around else 0
    return centre


def satellite_targets(level: dict, partner: np.ndarray) -> np.ndarray:
    """Step 2: the centre each unmatched satellite joins.

    Parameters
    ----------
    level : dict
    partner : int32[n]
        The matching of step 1.

    Returns
    -------
    target : int32[n]
        The centre of largest positive merge gain for an unmatched satellite, else -1.
    """
    n = partner.shape[0]
    centre = centres(level["offsets"], level["neighbors"], level["zeta"])
    target = np.empty(n, dtype=np.int32)
    _best_candidates(SATELLITE, level["offsets"], level["neighbors"], level["weights"], level["two_omega"],
                     level["zeta"], partner, partner, centre, centre, target, np.empty(n, dtype=np.int64))  # no proposals
    return target


@numba.njit(cache=True)
def group_map(partner, target):
    """Step 3: the coarse vertex of every vertex. A pair's representative is its smaller member; a satellite
    takes its centre's; coarse ids follow the representatives.

    Parameters
    ----------
    partner, target : int32[n]
        Steps 1 and 2.

    Returns
    -------
    mapping : int32[n]
    count : int
        Coarse vertices.
    """
    n = partner.shape[0]
    representative = np.empty(n, dtype=np.int32)
    for v in range(n):
        representative[v] = min(v, partner[v]) if partner[v] >= 0 else v
    for v in range(n):
        if partner[v] < 0 and target[v] >= 0:
            representative[v] = representative[target[v]]
    coarse_id = np.empty(n, dtype=np.int32)
    count = 0
    for v in range(n):
        if representative[v] == v:
            coarse_id[v] = count
            count += 1
    mapping = np.empty(n, dtype=np.int32)
    for v in range(n):
        mapping[v] = coarse_id[representative[v]]
    return mapping, count


@numba.njit(cache=True, nogil=True)
def _group_members(offsets, loops, zeta, mapping, num_coarse):
    """For :func:`_contract`: the coarse loops and ζ summed over the members, the members of each coarse
    vertex in vertex order (``members`` at ``member_offsets``), and each coarse row's bound (the sum of its
    members' degrees) as offsets."""
    n = offsets.shape[0] - 1
    coarse_loops = np.zeros(num_coarse, dtype=np.int64)
    coarse_zeta = np.zeros(num_coarse, dtype=np.int64)
    member_offsets = np.zeros(num_coarse + 1, dtype=np.int64)
    bound_offsets = np.zeros(num_coarse + 1, dtype=np.int64)
    for v in range(n):
        coarse_loops[mapping[v]] += loops[v]
        coarse_zeta[mapping[v]] += zeta[v]
        member_offsets[mapping[v] + 1] += 1
        bound_offsets[mapping[v] + 1] += offsets[v + 1] - offsets[v]
    for c in range(num_coarse):
        member_offsets[c + 1] += member_offsets[c]
        bound_offsets[c + 1] += bound_offsets[c]
    members = np.empty(n, dtype=np.int32)
    filled = member_offsets[:-1].copy()
    for v in range(n):
        members[filled[mapping[v]]] = v
        filled[mapping[v]] += 1
    return coarse_loops, coarse_zeta, member_offsets, bound_offsets, members


@numba.njit(cache=True, nogil=True)
def _contract_worker(t, taken, offsets, neighbors, weights, mapping, members, member_offsets, bound_offsets, link, seen,
                     bound_neighbors, bound_weights, row_counts, coarse_loops):
    """Thread t of :func:`_contract`: coarse vertices, ``CONTRACT_CHUNK`` at a time from the shared counter
    ``taken``, each summed in row t of ``link`` and ``seen`` and written, sorted, at its bound."""
    while True:
        first, last = claim_chunk(taken, CONTRACT_CHUNK, member_offsets.shape[0] - 1)
        if first == last:
            break
        for c in range(first, last):
            start = bound_offsets[c]
            count = 0
            inside = int64(0)
            for m in range(member_offsets[c], member_offsets[c + 1]):
                v = members[m]
                for p in range(offsets[v], offsets[v + 1]):
                    u = neighbors[p]
                    cu = mapping[u]
                    if cu == c:
                        if v < u:
                            inside += weights[p]
                    else:
                        if not seen[t, cu]:
                            seen[t, cu] = True
                            bound_neighbors[start + count] = cu
                            count += 1
                        link[t, cu] += weights[p]
            coarse_loops[c] += inside
            sort_segment(bound_neighbors, start, start + count)
            for i in range(start, start + count):
                cu = bound_neighbors[i]
                bound_weights[i] = link[t, cu]
                link[t, cu] = 0
                seen[t, cu] = False
            row_counts[c + 1] = count


@numba.njit(cache=True, nogil=True)
def _pack_rows(bound_offsets, bound_neighbors, bound_weights, coarse_offsets):
    """The rows written at their bounds, packed at ``coarse_offsets``."""
    num_coarse = coarse_offsets.shape[0] - 1
    coarse_neighbors = np.empty(coarse_offsets[num_coarse], dtype=np.int32)
    coarse_weights = np.empty(coarse_offsets[num_coarse], dtype=np.int64)
    for c in range(num_coarse):
        source = bound_offsets[c]
        for i in range(coarse_offsets[c], coarse_offsets[c + 1]):
            coarse_neighbors[i] = bound_neighbors[source + i - coarse_offsets[c]]
            coarse_weights[i] = bound_weights[source + i - coarse_offsets[c]]
    return coarse_neighbors, coarse_weights


def _contract(offsets, neighbors, weights, loops, zeta, mapping, num_coarse, threads):
    """The coarse CSR of ``mapping``, coarse vertices on ``threads`` threads (:func:`hgpart.parallel.on_threads`):
    each thread sums a coarse vertex's links per coarse neighbour in its own row of a dense scratch (as local
    moving does), sorts the neighbours it touched, and writes them at the row's bound (the sum of its members'
    degrees); a scan and a copy then pack the rows."""
    coarse_loops, coarse_zeta, member_offsets, bound_offsets, members = _group_members(offsets, loops, zeta, mapping,
                                                                                       np.int64(num_coarse))
    link = np.zeros((threads, max(num_coarse, 1)), dtype=np.int64)
    seen = np.zeros((threads, max(num_coarse, 1)), dtype=np.bool_)
    bound_neighbors = np.empty(bound_offsets[num_coarse], dtype=np.int32)
    bound_weights = np.empty(bound_offsets[num_coarse], dtype=np.int64)
    row_counts = np.zeros(num_coarse + 1, dtype=np.int64)
    on_threads(_contract_worker, threads, np.zeros(1, dtype=np.int64), offsets, neighbors, weights, mapping, members,
               member_offsets, bound_offsets, link, seen, bound_neighbors, bound_weights, row_counts, coarse_loops)
    coarse_offsets = np.cumsum(row_counts)
    coarse_neighbors, coarse_weights = _pack_rows(bound_offsets, bound_neighbors, bound_weights, coarse_offsets)
    return coarse_offsets, coarse_neighbors, coarse_weights, coarse_loops, coarse_zeta


def contract_level(level: dict, mapping: np.ndarray, num_coarse: int) -> dict:
    """Step 4: the coarse level of ``mapping`` (canonical: rows sorted, parallel edges summed).

    Parameters
    ----------
    level : dict
    mapping : int32[n]
        Coarse vertex of each vertex, ids < ``num_coarse``.
    num_coarse : int

    Returns
    -------
    dict
        The coarse level; its ``two_omega`` is the level's.
    """
    with threads_for_level(level, 9 * num_coarse) as threads:  # a link (int64) and a seen flag per coarse vertex
        offsets, neighbors, weights, loops, zeta = _contract(level["offsets"], level["neighbors"], level["weights"],
                                                             level["loops"], level["zeta"], mapping, num_coarse,
                                                             threads)
    return {"offsets": offsets, "neighbors": neighbors, "weights": weights, "loops": loops, "zeta": zeta,
            "two_omega": level["two_omega"]}



@numba.njit(cache=True)
def first_appearance(clusters):
    """Cluster ids renumbered 0.. in order of each cluster's smallest vertex.

    Parameters
    ----------
    clusters : int32[n]
        Cluster ids in [0, n).

    Returns
    -------
    renumbered : int32[n]
    count : int
    """
    n = clusters.shape[0]
    number = np.full(n, -1, dtype=np.int32)
    renumbered = np.empty(n, dtype=np.int32)
    count = 0
    for v in range(n):
        if number[clusters[v]] < 0:
            number[clusters[v]] = count
            count += 1
        renumbered[v] = number[clusters[v]]
    return renumbered, count


@numba.njit(cache=True)
def compact(clusters):
    """:func:`.common.compact` in two serial passes (numpy's takes four and three temporaries): cluster ids
    (int32[n], in [0, n)) renumbered 0.. in order of the smallest id in use; returns (int32[n], count)."""
    n = clusters.shape[0]
    number = np.zeros(n + 1, dtype=np.int32)
    for v in range(n):
        number[clusters[v]] = 1
    count = 0
    for c in range(n):
        used = number[c]
        number[c] = count
        count += used
    ids = np.empty(n, dtype=np.int32)
    for v in range(n):
        ids[v] = number[clusters[v]]
    return ids, count


def no_targets(n: int) -> np.ndarray:
    return np.full(n, -1, dtype=np.int32)


def graph_level(graph) -> tuple[dict, float]:
    """Level 0 of ``graph`` (a :class:`~hgpart.hypergraph.Graph`) on the host, and the weight scale (see
    :func:`hgpart.graphs.modularity.integer_level`)."""
    return integer_level(graph)


def identity(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int32)


def to_host(array) -> np.ndarray:
    return array
