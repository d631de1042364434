"""Modularity clustering by agglomeration (seed 002) and local moving: the njit CPU twin of the GPU code.

A level is a weighted graph in symmetric CSR with integer weights (see :func:`integer_level`):

``offsets`` int64[n + 1], ``neighbors`` int32[D], ``weights`` int64[D] (both directions of each edge, no self
loops, rows sorted), ``loops`` int64[n] (weight of the edges inside each vertex: a coarse vertex is a cluster)
and ``zeta`` int64[n], the weighted degree ζ(v) = Σ_u ω(v, u) + 2 loops(v). ``two_omega`` = Σ ζ = 2Ω.

With integer weights every sum and gain is exact, so the GPU (int64 atomics, any order) and this CPU code
agree to the bit. Modularity scaled by 4Ω² is ``Σ_C 4Ω I(C) − ζ(C)²`` (I(C): weight inside cluster C).

The steps (each has a GPU twin with the same arguments in :mod:`.gpu_agglomeration`):

1. :func:`match_clusters`: blue/red matching of seed 002. Per round each unmatched vertex is coloured by a
   hash; blue vertices propose to the red neighbour of largest merge gain 2Ω ω(u, v) − ζ(u)ζ(v) > 0, each red
   vertex accepts its best proposer; ties go to the smaller id.
2. :func:`satellite_targets`: the centre potential cp(v) = ζ(v)² / Σ_{u~v} ζ(u) of seed 002. An unmatched
   vertex with cp < 1 (a satellite) joins the neighbour with cp >= 1 (a centre) of largest positive merge
   gain, so many satellites join one centre in one level.
3. :func:`group_map`: the map of vertices to coarse vertices (pairs and stars), ids in order of their
   smallest member.
4. :func:`contract_level`: the coarse graph (π, sort by (π(u), π(v)), scan, scatter), loops and ζ summed.
5. :func:`local_moving`: Louvain-style moves by exact modularity gain, all vertices at once per round,
   rounds alternately moving only to larger and only to smaller cluster ids (no swaps), and no vertex
   moving straight back to the cluster it left in the round before (on R-MAT 2^19, 52k of the 56k movers
   of a late round did, so that modularity rose and fell by turns; without them the movers die out and
   modularity ends higher, 0.0769 -> 0.0812 with the same settings); from the third round on only the
   active vertices (moved, or a neighbour moved, in the last ``ACTIVE_ROUNDS`` rounds) are looked at; the
   best clustering of all rounds is kept. (On R-MAT 2^23 the active vertices made a round at the finest
   level 40% cheaper and modularity 0.056 -> 0.067.)
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np
from numba import int64, uint64

from .modularity import integer_level

PROPOSE, RESPOND, SATELLITE = 0, 1, 2
SCRATCH_BYTES = 1 << 31  # the CPU twin's per-thread dense scratch stays within this (fewer threads if needed)
ACTIVE_ROUNDS = 2  # local moving revisits a vertex for this many rounds after it or a neighbour moved


def _colour_bit(salt, v):
    """1 (blue) or 0 (red) for vertex v in the round with this salt: a splitmix64 hash."""
    x = uint64(salt) + uint64(v) * uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    x = x ^ (x >> uint64(31))
    return int64(x & uint64(1))


def _candidate_gain(mode, v, u, weight, two_omega, zeta_v, zeta_u, partner_v, partner_u, proposal_u, blue_v, blue_u,
                    centre_v, centre_u):
    """Twice the modularity gain (scaled by 4Ω², halved) of merging v with u for the step ``mode``, or -1
    when u is not a candidate of v in that step. Shared by the CPU twin and the GPU kernels (scalar
    arguments: array arguments would cost reference counting per call in the CPU code)."""
    if partner_v >= 0 or u == v:
        return int64(-1)
    if mode == PROPOSE:
        if blue_v == 0 or blue_u != 0 or partner_u >= 0:
            return int64(-1)
    elif mode == RESPOND:
        if blue_v != 0 or proposal_u != v or partner_u >= 0:
            return int64(-1)
    else:
        if centre_v != 0 or centre_u == 0:
            return int64(-1)
    gain = two_omega * weight - zeta_v * zeta_u
    return gain if gain > 0 else int64(-1)


def _move_gain(two_omega, link, own_link, zeta_v, zeta_target, zeta_own):
    """Twice the modularity gain (scaled by 4Ω², halved) of moving v from its cluster (weight ζ_own,
    including v; v's links into it: own_link) to another (ζ_target; links: link)."""
    return two_omega * (link - own_link) - zeta_v * (zeta_target - zeta_own + zeta_v)


candidate_gain = numba.njit(inline="always")(_candidate_gain)
move_gain = numba.njit(_move_gain)
colour_bit = numba.njit(_colour_bit)


def round_salt(seed: int, level: int, round_index: int) -> int:
    """The hash salt of one matching round (the same on both devices)."""
    return (seed * 1_000_003 + level * 10_007 + round_index * 101 + 1) & 0x7FFF_FFFF_FFFF_FFFF


@numba.njit(cache=True)
def colours(salt, n):
    """int8[n]: 1 for blue vertices, 0 for red, in the round with this salt."""
    blue = np.empty(n, dtype=np.int8)
    for v in range(n):
        blue[v] = colour_bit(salt, v)
    return blue


@numba.njit(cache=True)
def _best_candidates(mode, offsets, neighbors, weights, two_omega, zeta, partner, proposal, blue, centre, best):
    """best[v] = the candidate u of largest gain (ties: smaller u), or -1; returns how many have one."""
    found = 0
    for v in range(offsets.shape[0] - 1):
        chosen = -1
        best_gain = int64(0)
        if partner[v] < 0:
            for p in range(offsets[v], offsets[v + 1]):
                u = neighbors[p]
                gain = candidate_gain(mode, v, u, weights[p], two_omega, zeta[v], zeta[u], partner[v], partner[u],
                                      proposal[u], blue[v], blue[u], centre[v], centre[u])
                if gain > best_gain or (gain == best_gain and gain > 0 and u < chosen):
                    best_gain = gain
                    chosen = u
        if chosen >= 0:
            found += 1
        best[v] = chosen
    return found


@numba.njit(cache=True)
def _match_round(offsets, neighbors, weights, two_omega, zeta, partner, blue, proposal, response):
    """One blue/red round: proposals, responses, matches. Returns the number of new pairs."""
    no_centres = blue  # unused by PROPOSE and RESPOND
    _best_candidates(PROPOSE, offsets, neighbors, weights, two_omega, zeta, partner, proposal, blue, no_centres,
                     proposal)
    _best_candidates(RESPOND, offsets, neighbors, weights, two_omega, zeta, partner, proposal, blue, no_centres,
                     response)
    pairs = 0
    for u in range(partner.shape[0]):
        v = response[u]
        if v >= 0:
            partner[u] = v
            partner[v] = u
            pairs += 1
    return pairs


def match_clusters(level: dict, seed: int, depth: int, rounds: int) -> np.ndarray:
    """Blue/red matching of seed 002 with merge gains (step 1). Returns partner int32[n] (-1: unmatched)."""
    n = level["offsets"].shape[0] - 1
    partner = np.full(n, -1, dtype=np.int32)
    proposal = np.empty(n, dtype=np.int32)
    response = np.empty(n, dtype=np.int32)
    for round_index in range(rounds):
        blue = colours(round_salt(seed, depth, round_index), n)
        if _match_round(level["offsets"], level["neighbors"], level["weights"], level["two_omega"], level["zeta"],
                        partner, blue, proposal, response) == 0:
            break
    return partner


@numba.njit(cache=True)
def centres(offsets, neighbors, zeta):
    """int8[n]: 1 where the centre potential ζ(v)² / Σ_{u~v} ζ(u) is at least 1 (isolated vertices too)."""
    n = offsets.shape[0] - 1
    centre = np.empty(n, dtype=np.int8)
    for v in range(n):
        around = int64(0)
        for p in range(offsets[v], offsets[v + 1]):
            around += zeta[neighbors[p]]
        centre[v] = 1 if zeta[v] * zeta[v] >= around else 0
    return centre


def satellite_targets(level: dict, partner: np.ndarray) -> np.ndarray:
    """Step 2: for each unmatched satellite the centre it joins, else -1. int32[n]."""
    n = partner.shape[0]
    centre = centres(level["offsets"], level["neighbors"], level["zeta"])
    target = np.empty(n, dtype=np.int32)
    _best_candidates(SATELLITE, level["offsets"], level["neighbors"], level["weights"], level["two_omega"],
                     level["zeta"], partner, target, centre, centre, target)
    return target


@numba.njit(cache=True)
def group_map(partner, target):
    """Step 3: coarse vertex of every vertex (int32[n]) and the number of coarse vertices. A pair's
    representative is its smaller member; a satellite takes its centre's; ids follow representatives."""
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


@contextlib.contextmanager
def _threads_for_scratch(row_bytes: int):
    """Run the block on at most as many numba threads as dense scratch rows of ``row_bytes`` (one per thread)
    fit in SCRATCH_BYTES; yields that count."""
    available = numba.get_num_threads()
    threads = max(1, min(available, SCRATCH_BYTES // max(1, row_bytes)))
    numba.set_num_threads(threads)
    try:
        yield threads
    finally:
        numba.set_num_threads(available)


@numba.njit(parallel=True, cache=True)
def _contract(offsets, neighbors, weights, loops, zeta, mapping, num_coarse, threads):
    """The coarse CSR of ``mapping``, coarse vertices in parallel: each thread sums a coarse vertex's links
    per coarse neighbour in its own row of a dense scratch (as local moving does), sorts the neighbours it
    touched, and writes them at the row's bound (the sum of its members' degrees); a scan and a copy then
    pack the rows. ``threads``: numba's thread count (asked outside: a call from inside stops caching)."""
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
    for v in range(n):  # members of each coarse vertex in vertex order
        members[filled[mapping[v]]] = v
        filled[mapping[v]] += 1
    link = np.zeros((threads, max(num_coarse, 1)), dtype=np.int64)
    seen = np.zeros((threads, max(num_coarse, 1)), dtype=np.bool_)
    bound_neighbors = np.empty(bound_offsets[num_coarse], dtype=np.int32)
    bound_weights = np.empty(bound_offsets[num_coarse], dtype=np.int64)
    row_counts = np.zeros(num_coarse + 1, dtype=np.int64)
    for c in numba.prange(num_coarse):
        thread = numba.get_thread_id()
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
                    if not seen[thread, cu]:
                        seen[thread, cu] = True
                        bound_neighbors[start + count] = cu
                        count += 1
                    link[thread, cu] += weights[p]
        coarse_loops[c] += inside
        bound_neighbors[start:start + count].sort()
        for i in range(start, start + count):
            cu = bound_neighbors[i]
            bound_weights[i] = link[thread, cu]
            link[thread, cu] = 0
            seen[thread, cu] = False
        row_counts[c + 1] = count
    coarse_offsets = np.cumsum(row_counts)
    coarse_neighbors = np.empty(coarse_offsets[num_coarse], dtype=np.int32)
    coarse_weights = np.empty(coarse_offsets[num_coarse], dtype=np.int64)
    for c in numba.prange(num_coarse):
        source = bound_offsets[c]
        for i in range(coarse_offsets[c], coarse_offsets[c + 1]):
            coarse_neighbors[i] = bound_neighbors[source + i - coarse_offsets[c]]
            coarse_weights[i] = bound_weights[source + i - coarse_offsets[c]]
    return coarse_offsets, coarse_neighbors, coarse_weights, coarse_loops, coarse_zeta


def contract_level(level: dict, mapping: np.ndarray, num_coarse: int) -> dict:
    """Step 4: the coarse level of ``mapping`` (canonical: rows sorted, parallel edges summed)."""
    with _threads_for_scratch(9 * num_coarse) as threads:  # a link (int64) and a seen flag per coarse vertex
        offsets, neighbors, weights, loops, zeta = _contract(level["offsets"], level["neighbors"], level["weights"],
                                                             level["loops"], level["zeta"], mapping, num_coarse,
                                                             threads)
    return {"offsets": offsets, "neighbors": neighbors, "weights": weights, "loops": loops, "zeta": zeta,
            "two_omega": level["two_omega"]}


@numba.njit(cache=True)
def _fill_cluster_zeta(clusters, zeta, cluster_zeta):
    """cluster_zeta[c] = ζ(C), the sum of ζ over the vertices of cluster c."""
    cluster_zeta[:] = 0
    for v in range(clusters.shape[0]):
        cluster_zeta[clusters[v]] += zeta[v]


@numba.njit(parallel=True, cache=True)
def _scaled_modularity(offsets, neighbors, weights, loops, two_omega, clusters, cluster_zeta):
    """4Ω² times the modularity of ``clusters``, whose ζ(C) are ``cluster_zeta`` (exact integer: the parallel
    sums are the same in any order)."""
    n = offsets.shape[0] - 1
    row_inside = np.empty(n, dtype=np.int64)
    for v in numba.prange(n):  # no scalar reduction across the prange: numba 0.68.0's parfor pass fails on it
        row = loops[v]
        for p in range(offsets[v], offsets[v + 1]):
            u = neighbors[p]
            if v < u and clusters[u] == clusters[v]:
                row += weights[p]
        row_inside[v] = row
    inside = int64(0)
    squares = int64(0)
    for v in range(n):
        inside += row_inside[v]
        squares += cluster_zeta[v] * cluster_zeta[v]
    return 2 * two_omega * inside - squares


def _level_modularity(level: dict, clusters: np.ndarray, cluster_zeta: np.ndarray) -> int:
    return int(_scaled_modularity(level["offsets"], level["neighbors"], level["weights"], level["loops"],
                                  level["two_omega"], clusters, cluster_zeta))


def scaled_modularity(level: dict, clusters: np.ndarray) -> int:
    """4Ω² times the modularity of ``clusters`` (int32[n], ids < n) on this level; exact."""
    cluster_zeta = np.empty(clusters.shape[0], dtype=np.int64)
    _fill_cluster_zeta(clusters, level["zeta"], cluster_zeta)
    return _level_modularity(level, clusters, cluster_zeta)


def stale_threshold(two_omega: int, min_improvement: float) -> float:
    """4Ω² times ``min_improvement``: a gain of scaled modularity at most this counts as stale (a round of
    local moving, or a cycle of agglomeration and refinement)."""
    return min_improvement * float(two_omega) ** 2


def next_stale(value: int, best_value: int, stale: int, threshold: float) -> tuple[bool, int]:
    """(whether ``value`` is a new best, the count of stale rounds after it): a round that improves by more
    than ``threshold`` resets the count, any other round adds one."""
    if value > best_value:
        return True, 0 if value - best_value > threshold else stale + 1
    return False, stale + 1


@numba.njit(parallel=True, cache=True)
def _move_round(offsets, neighbors, weights, zeta, two_omega, clusters, cluster_zeta, upward, targets, link, touched,
                last_touched, first_round):
    """Every active vertex's best move (targets[v], -1 for none) against the same clusters; returns the movers.
    Active: touched (moved, or a neighbour moved) in round ``first_round`` or later. Vertices in parallel,
    each thread summing links in its own row of ``link`` (int64[threads, n], zero between uses) and listing
    the clusters it touched in its row of ``touched`` (int32[threads, max degree])."""
    n = offsets.shape[0] - 1
    for v in numba.prange(n):
        if last_touched[v] < first_round:
            targets[v] = -1
            continue
        thread = numba.get_thread_id()
        own = clusters[v]
        count = 0
        own_link = int64(0)
        for p in range(offsets[v], offsets[v + 1]):
            c = clusters[neighbors[p]]
            if c == own:
                own_link += weights[p]
            elif (c > own) == upward:
                if link[thread, c] == 0:
                    touched[thread, count] = c
                    count += 1
                link[thread, c] += weights[p]
        best = -1
        best_gain = int64(0)
        for i in range(count):
            c = touched[thread, i]
            gain = move_gain(two_omega, link[thread, c], own_link, zeta[v], cluster_zeta[c], cluster_zeta[own])
            if gain > best_gain or (gain == best_gain and gain > 0 and c < best):
                best_gain = gain
                best = c
            link[thread, c] = 0
        targets[v] = best
    movers = 0
    for v in range(n):
        movers += targets[v] >= 0
    return movers


@numba.njit(cache=True)
def _mark_touched(offsets, neighbors, targets, last_touched, round_index):
    """last_touched[v] = round_index for every mover and every neighbour of one."""
    for v in range(offsets.shape[0] - 1):
        if targets[v] >= 0:
            last_touched[v] = round_index
            for p in range(offsets[v], offsets[v + 1]):
                last_touched[neighbors[p]] = round_index


@numba.njit(cache=True)
def _apply_moves(clusters, targets, previous, moved, zeta, cluster_zeta):
    """Every vertex with a target moves there at once, except straight back to the cluster it left in the
    round before (that target is dropped: targets[v] = -1). previous[v] and moved[v] then hold v's cluster
    before this round and whether it moved. Returns the movers."""
    movers = 0
    for v in range(clusters.shape[0]):
        if targets[v] >= 0 and moved[v] and targets[v] == previous[v]:
            targets[v] = -1
        previous[v] = clusters[v]
        moved[v] = targets[v] >= 0
        if targets[v] >= 0:
            clusters[v] = targets[v]
            movers += 1
    _fill_cluster_zeta(clusters, zeta, cluster_zeta)
    return movers


def local_moving(level: dict, clusters: np.ndarray, rounds: int, stale_rounds: int,
                 min_improvement: float = 0.0) -> tuple[np.ndarray, int]:
    """Step 5: rounds of simultaneous moves by exact modularity gain; returns the best clustering seen
    (int32[n], cluster ids < n) and 4Ω² times its modularity. Stops after ``stale_rounds`` rounds without a
    new best, or two rounds in a row without movers."""
    max_degree = int(np.max(np.diff(level["offsets"]))) if clusters.shape[0] else 0
    with _threads_for_scratch(8 * clusters.shape[0] + 4 * max_degree) as threads:
        return _local_moving(level, clusters, rounds, stale_rounds, min_improvement, threads, max_degree)


def _local_moving(level: dict, clusters: np.ndarray, rounds: int, stale_rounds: int, min_improvement: float,
                  threads: int, max_degree: int) -> tuple[np.ndarray, int]:
    n = clusters.shape[0]
    clusters = clusters.astype(np.int32, copy=True)
    cluster_zeta = np.zeros(n, dtype=np.int64)
    _fill_cluster_zeta(clusters, level["zeta"], cluster_zeta)
    best = clusters.copy()
    best_value = _level_modularity(level, clusters, cluster_zeta)
    targets = np.empty(n, dtype=np.int32)
    link = np.zeros((threads, n), dtype=np.int64)
    touched = np.empty((threads, max(max_degree, 1)), dtype=np.int32)
    last_touched = np.full(n, -1, dtype=np.int32)  # every vertex is active in the first two rounds
    previous = np.empty(n, dtype=np.int32)
    moved = np.zeros(n, dtype=np.bool_)
    stale = idle = 0
    threshold = stale_threshold(level["two_omega"], min_improvement)
    for round_index in range(rounds):
        _move_round(level["offsets"], level["neighbors"], level["weights"], level["zeta"], level["two_omega"], clusters,
                    cluster_zeta, round_index % 2 == 0, targets, link, touched, last_touched,
                    round_index - ACTIVE_ROUNDS)
        if _apply_moves(clusters, targets, previous, moved, level["zeta"], cluster_zeta) == 0:
            idle += 1
            if idle == 2:
                break
            continue
        idle = 0
        _mark_touched(level["offsets"], level["neighbors"], targets, last_touched, round_index)
        value = _level_modularity(level, clusters, cluster_zeta)  # cluster_zeta: _apply_moves refilled it
        improved, stale = next_stale(value, best_value, stale, threshold)
        if improved:
            best_value = value
            best[:] = clusters
        if stale >= stale_rounds:
            break
    return best, best_value


@numba.njit(cache=True)
def first_appearance(clusters):
    """Cluster ids (in [0, n)) renumbered 0.. in order of each cluster's smallest vertex; returns (int32[n],
    count)."""
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


def no_targets(n: int) -> np.ndarray:
    return np.full(n, -1, dtype=np.int32)


def graph_level(graph) -> tuple[dict, float]:
    """Level 0 of ``graph`` (a :class:`~hgpart.hypergraph.Graph`) where this twin works (the host), and the
    weight scale (see :func:`.modularity.integer_level`)."""
    return integer_level(graph)


def identity(n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int32)


def project(coarse_clusters: np.ndarray, mapping: np.ndarray) -> np.ndarray:
    """Each fine vertex takes the cluster of its coarse vertex."""
    return coarse_clusters[mapping]


def compact(clusters: np.ndarray, array=np) -> tuple[np.ndarray, int]:
    """Cluster ids renumbered 0.. in order of the smallest id in use; returns (ids int32[n], count).
    ``array``: the array module of ``clusters`` (numpy here, CuPy for the GPU twin)."""
    used = array.zeros(clusters.shape[0] + 1, dtype=np.int32)
    used[clusters + 1] = 1
    numbers = array.cumsum(used, dtype=np.int32)
    return numbers[clusters], int(numbers[-1])


def intersect(first: np.ndarray, second: np.ndarray, array=np) -> np.ndarray:
    """Clusters of vertices that both clusterings put together, with ids < n (``array`` as for compact)."""
    n = first.shape[0]
    _, inverse = array.unique(first.astype(np.int64) * n + second, return_inverse=True)
    return inverse.reshape(-1).astype(np.int32)


def to_host(array) -> np.ndarray:
    return array
