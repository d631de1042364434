"""Local moving on the host (step 5 of the clustering, see :mod:`.host`) and the exact modularity of a
clustering on a level: the njit CPU twin of :mod:`.device_moving`.

Each round rates every active vertex's moves against the same clusters, vertices in parallel, each numba
thread summing the vertex's links per neighbouring cluster in its own row of a dense scratch; then every
vertex with a positive gain moves at once. The weight inside clusters is then updated from the movers' edges
alone, as on the device, so each round's modularity is exact without a pass over every edge.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np
from numba import int64

from ...parallel import claim_chunk, runs_serially
from . import common
from .common import ACTIVE_ROUNDS, next_stale, stale_threshold

SCRATCH_BYTES = 1 << 31  # the per-thread dense scratch of contraction and local moving stays within this
SERIAL_LEVEL_BELOW = 10_000  # vertices plus entries under which a level runs on one thread (docs/tuning.md)
CHUNK = 512  # vertices (coarse vertices) a thread takes at a time from a shared counter

move_gain = numba.njit(common.move_gain)


@contextlib.contextmanager
def threads_for_level(level: dict, row_bytes: int = 0):
    """Run the block on one numba thread for a level of fewer than SERIAL_LEVEL_BELOW vertices plus entries
    (starting the threads of each parallel loop would cost more than its work: a small level's every round and
    step is such a loop), else on at most as many as dense scratch rows of ``row_bytes`` (one per thread) fit
    in SCRATCH_BYTES; yields that count. Local moving, contraction and matching (:mod:`.host`) run under it."""
    available = numba.get_num_threads()
    size = level["offsets"].shape[0] - 1 + level["neighbors"].shape[0]
    if runs_serially(size, SERIAL_LEVEL_BELOW):
        threads = 1
    else:
        threads = max(1, min(available, SCRATCH_BYTES // max(1, row_bytes)))
    numba.set_num_threads(threads)
    try:
        yield threads
    finally:
        numba.set_num_threads(available)


@numba.njit(cache=True)
def _fill_cluster_zeta(clusters, zeta, cluster_zeta):
    """cluster_zeta[c] = ζ(C), the sum of ζ over the vertices of cluster c."""
    cluster_zeta[:] = 0
    for v in range(clusters.shape[0]):
        cluster_zeta[clusters[v]] += zeta[v]


@numba.njit(parallel=True, cache=True)
def _inside_weight(offsets, neighbors, weights, loops, clusters):
    """The weight inside clusters, loops included (exact integer: the parallel sums are the same in any
    order)."""
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
    for v in range(n):
        inside += row_inside[v]
    return inside


@numba.njit(cache=True)
def _square_sum(values):
    """Σ values² (int64)."""
    total = int64(0)
    for value in values:
        total += value * value
    return total


def _scaled_value(level: dict, inside: int, cluster_zeta: np.ndarray) -> int:
    """4Ω² times the modularity of clusters with ``inside`` weight inside them and ζ(C) ``cluster_zeta``."""
    return 2 * int(level["two_omega"]) * inside - int(_square_sum(cluster_zeta))


def _inside(level: dict, clusters: np.ndarray) -> int:
    """The weight inside clusters, loops included; the caller sets the threads (:func:`threads_for_level`)."""
    return int(_inside_weight(level["offsets"], level["neighbors"], level["weights"], level["loops"], clusters))


def scaled_modularity(level: dict, clusters: np.ndarray) -> int:
    """4Ω² times the modularity of ``clusters`` on this level, exact.

    Parameters
    ----------
    level : dict
    clusters : int32[n]
        Cluster ids < n.

    Returns
    -------
    int
    """
    cluster_zeta = np.empty(clusters.shape[0], dtype=np.int64)
    _fill_cluster_zeta(clusters, level["zeta"], cluster_zeta)
    with threads_for_level(level):
        inside = _inside(level, clusters)
    return _scaled_value(level, inside, cluster_zeta)


@numba.njit(cache=True, inline="always")
def _best_target(v, offsets, neighbors, weights, zeta, two_omega, clusters, cluster_zeta, upward, link, touched,
                 last_touched, first_round):
    """v's best move (:func:`_move_round`) with one thread's rows of ``link`` and ``touched``; -1 for none."""
    if last_touched[v] < first_round:
        return -1
    own = clusters[v]
    count = 0
    own_link = int64(0)
    for p in range(offsets[v], offsets[v + 1]):
        c = clusters[neighbors[p]]
        if c == own:
            own_link += weights[p]
        elif (c > own) == upward:
            if link[c] == 0:
                touched[count] = c
                count += 1
            link[c] += weights[p]
    best = -1
    best_gain = int64(0)
    for i in range(count):
        c = touched[i]
        gain = move_gain(two_omega, link[c], own_link, zeta[v], cluster_zeta[c], cluster_zeta[own])
        if gain > best_gain or (gain == best_gain and gain > 0 and c < best):
            best_gain = gain
            best = c
        link[c] = 0
    return best


@numba.njit(parallel=True, cache=True)
def _move_round(offsets, neighbors, weights, zeta, two_omega, clusters, cluster_zeta, upward, targets, link, touched,
                last_touched, first_round):
    """Every active vertex's best move (targets[v], -1 for none) against the same clusters; returns the movers.
    Active: touched (moved, or a neighbour moved) in round ``first_round`` or later. Vertices in parallel,
    ``CHUNK`` at a time, each thread summing links in its own row of ``link`` (int64[threads, n], zero between
    uses) and listing the clusters it touched in its row of ``touched`` (int32[threads, max degree])."""
    n = offsets.shape[0] - 1
    taken = np.zeros(1, dtype=np.int64)
    for thread in numba.prange(link.shape[0]):  # chunks from a counter: the active vertices thin out unevenly
        while True:
            first, last = claim_chunk(taken, CHUNK, n)
            if first == last:
                break
            for v in range(first, last):
                targets[v] = _best_target(v, offsets, neighbors, weights, zeta, two_omega, clusters, cluster_zeta,
                                          upward, link[thread], touched[thread], last_touched, first_round)
    movers = 0
    for v in range(n):
        movers += targets[v] >= 0
    return movers


@numba.njit(parallel=True, cache=True)
def _mark_touched(offsets, neighbors, weights, movers, count, targets, previous, clusters, last_touched, round_index,
                  row_change):
    """last_touched[v] = round_index for every mover (``movers[:count]``) and every neighbour of one (threads
    that write one entry write the same value); returns how the weight inside clusters changed, from the movers'
    edges alone (each edge once: from v's side unless u moved too and u < v), so that the round's modularity
    stays exact without a pass over every edge. ``row_change`` is int64[n] scratch."""
    for i in numba.prange(count):
        v = movers[i]
        change = int64(0)
        last_touched[v] = round_index
        for p in range(offsets[v], offsets[v + 1]):
            u = neighbors[p]
            last_touched[u] = round_index
            if v < u or targets[u] < 0:
                before = previous[v] == previous[u]
                after = clusters[v] == clusters[u]
                if before != after:
                    change += weights[p] if after else -weights[p]
        row_change[i] = change
    total = int64(0)
    for i in range(count):
        total += row_change[i]
    return total


@numba.njit(cache=True)
def _apply_moves(clusters, targets, previous, moved, zeta, cluster_zeta, movers):
    """Every vertex with a target moves there at once, except straight back to the cluster it left in the
    round before (that target is dropped: targets[v] = -1). previous[v] and moved[v] then hold v's cluster
    before this round and whether it moved; ``cluster_zeta`` (ζ(C)) follows the moves, and ``movers``
    (int32[n]) lists the movers. Returns (the number of movers, the change of Σ ζ(C)²)."""
    count = 0
    squares_change = int64(0)
    for v in range(clusters.shape[0]):
        if targets[v] >= 0 and moved[v] and targets[v] == previous[v]:
            targets[v] = -1
        previous[v] = clusters[v]
        moved[v] = targets[v] >= 0
        if targets[v] >= 0:
            old, new, z = clusters[v], targets[v], zeta[v]
            squares_change += 2 * z * (z + cluster_zeta[new] - cluster_zeta[old])  # (a - z)² - a² + (b + z)² - b²
            cluster_zeta[old] -= z
            cluster_zeta[new] += z
            clusters[v] = new
            movers[count] = v
            count += 1
    return count, squares_change


_next_stale = numba.njit(next_stale)


@numba.njit(cache=True)
def _rounds(offsets, neighbors, weights, zeta, two_omega, clusters, cluster_zeta, inside, squares, rounds,
            stale_rounds, threshold, link, touched):
    """The rounds of :func:`local_moving` from ``clusters`` (changed in place), whose weight inside clusters
    (loops included) is ``inside`` and Σ ζ(C)² ``squares``; ``link`` and ``touched`` as for
    :func:`_move_round`. Returns (the best clustering seen, 4Ω² times its modularity)."""
    n = clusters.shape[0]
    best = clusters.copy()
    best_value = 2 * two_omega * inside - squares
    targets = np.empty(n, dtype=np.int32)
    last_touched = np.full(n, -1, dtype=np.int32)  # every vertex is active in the first two rounds
    previous = np.empty(n, dtype=np.int32)
    moved = np.zeros(n, dtype=np.bool_)
    movers = np.empty(n, dtype=np.int32)
    row_change = np.empty(n, dtype=np.int64)
    stale = idle = 0
    for round_index in range(rounds):
        _move_round(offsets, neighbors, weights, zeta, two_omega, clusters, cluster_zeta, round_index % 2 == 0,
                    targets, link, touched, last_touched, round_index - ACTIVE_ROUNDS)
        count, squares_change = _apply_moves(clusters, targets, previous, moved, zeta, cluster_zeta, movers)
        if count == 0:
            idle += 1
            if idle == 2:
                break
            continue
        idle = 0
        squares += squares_change
        inside += _mark_touched(offsets, neighbors, weights, movers, count, targets, previous, clusters,
                                last_touched, round_index, row_change)
        value = 2 * two_omega * inside - squares
        improved, stale = _next_stale(value, best_value, stale, threshold)
        if improved:
            best_value = value
            for v in range(clusters.shape[0]):  # element by element, as max_flow's relabelling copies
                best[v] = clusters[v]
        if stale >= stale_rounds:
            break
    return best, best_value


def local_moving(level: dict, clusters: np.ndarray, rounds: int, stale_rounds: int,
                 min_improvement: float = 0.0) -> tuple[np.ndarray, int]:
    """Step 5: rounds of simultaneous moves by exact modularity gain.

    Parameters
    ----------
    level : dict
    clusters : int32[n]
        The start, cluster ids < n (not changed).
    rounds : int
        Most rounds.
    stale_rounds : int
        Stop after this many rounds without a new best (two rounds in a row without movers stop too).
    min_improvement : float
        A new best that improves modularity by at most this still counts as a stale round.

    Returns
    -------
    best : int32[n]
        The best clustering seen, cluster ids < n.
    value : int
        4Ω² times its modularity.
    """
    max_degree = int(np.max(np.diff(level["offsets"]))) if clusters.shape[0] else 0
    with threads_for_level(level, 8 * clusters.shape[0] + 4 * max_degree) as threads:
        return _local_moving(level, clusters, rounds, stale_rounds, min_improvement, threads, max_degree)


def _local_moving(level: dict, clusters: np.ndarray, rounds: int, stale_rounds: int, min_improvement: float,
                  threads: int, max_degree: int) -> tuple[np.ndarray, int]:
    n = clusters.shape[0]
    clusters = clusters.astype(np.int32, copy=True)
    cluster_zeta = np.zeros(n, dtype=np.int64)
    _fill_cluster_zeta(clusters, level["zeta"], cluster_zeta)
    link = np.zeros((threads, n), dtype=np.int64)
    touched = np.empty((threads, max(max_degree, 1)), dtype=np.int32)
    best, best_value = _rounds(level["offsets"], level["neighbors"], level["weights"], level["zeta"],
                               np.int64(level["two_omega"]), clusters, cluster_zeta, np.int64(_inside(level, clusters)),
                               _square_sum(cluster_zeta), rounds, stale_rounds,
                               stale_threshold(level["two_omega"], min_improvement), link, touched)
    return best, int(best_value)
