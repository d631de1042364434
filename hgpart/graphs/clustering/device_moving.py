"""Step 5 of the clustering on the GPU (local moving) and the exact modularity of a clustering on a level:
the twins of :func:`.host_moving.local_moving` and :func:`.host_moving.scaled_modularity`, with the same
arguments as device arrays and the same results.

Local moving sums v's links per neighbouring cluster in a hash table of deg(v) slots at offset offsets[v] (v
links to at most deg(v) clusters, so every one finds a slot), each slot cluster << 32 | link in one int64
(claimed by ``atomic.cas``, then ``atomic.add``), after the lanes of a warp holding the same (v, cluster) have
summed their weights (``group_total``); it then rates the slots in two atomic passes, the largest gain
(``atomic.max``), then the smallest cluster reaching it (``atomic.min``), the CPU twin's tie rule. Only active
vertices fill tables, and ``mark_touched_kernel`` marks the neighbours of each round's movers (the CPU twin's
rule) and updates the weight inside clusters from the movers' edges alone, so the round's modularity stays exact
without a recount.

The kernels' arrays: ``rows``, ``neighbors`` int32[D]; ``weights`` int32[D] in ``link_kernel``, int64[D]
elsewhere; ``offsets`` int64[n + 1]; ``clusters``, ``previous``, ``last_touched`` int32[n]; ``best``
int32[n] (n: no move); ``moved`` uint8[n]; ``zeta``, ``cluster_zeta``, ``own_link``, ``best_gain``
int64[n]; ``table`` int64[D]; ``counts`` int64[3 rounds] (a round's movers, change of the inside weight and
Σ ζ(C)², at ``slot``), ``total`` int64[2].
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ...cuda.arrays import cached_kernel, to_host, xp
from ...cuda.primitives import LOW32, scatter, scatter_add_kernel
from . import common
from .common import ACTIVE_ROUNDS, next_stale, stale_threshold
from .device_common import (EMPTY_SLOT, LINK_THREADS, group_total, int32_weights, launch_items, uniform_trips,
                            warp_scratch)

move_gain_gpu = cuda.jit(device=True, inline=True)(common.move_gain)
HASH_MULTIPLIER = 2654435761  # Knuth's multiplicative hash: a 32-bit hash of the cluster id picks its first slot

@cuda.jit(device=True, inline=True)
def _insert_link(table, base, size, cluster, link):
    """Add ``link`` to ``cluster``'s slot of the table ``table[base:base + size]`` (linear probing). A slot
    is cluster << 32 | summed link (links of a vertex sum to less than 2^32), EMPTY_SLOT when unused: a
    slot showing the cluster takes one atomic add, an empty one is claimed with the link by one
    compare-and-swap."""
    slot = (((int64(cluster) * HASH_MULTIPLIER) & LOW32) * size) >> 32  # a 32-bit hash scaled to [0, size):
    # no 64-bit division (size = deg(v) < 2^31, so the product stays below 2^63)
    while True:
        current = table[base + slot]
        if current == EMPTY_SLOT:
            current = cuda.atomic.cas(table, base + slot, EMPTY_SLOT, (int64(cluster) << 32) | link)
            if current == EMPTY_SLOT:
                return
        if (current >> 32) == cluster:
            cuda.atomic.add(table, base + slot, link)
            return
        slot += 1
        if slot == size:
            slot = 0


@cached_kernel
def link_kernel(rows, neighbors, weights, offsets, clusters, upward, last_touched, first_round, table, own_link):
    """For every entry (v, u) of an active v (touched in ``first_round`` or later): add its weight to
    own_link[v] when u is in v's cluster, else to the slot of u's cluster in v's hash table when that
    cluster is on the round's side of v's own (deg(v) slots from offsets[v]); lanes with the same (v,
    cluster) sum first (``group_total``). Most of its time waits on dependent loads (entry, row, cluster,
    slot). Two variants were slower and are not used: a list of the claimed slots, so that the slot passes
    visit only those (its reads scatter and its appends cost more than they save), and two entries a trip
    with all loads first.

    rows, neighbors : int32[D]; weights : int32[D]; offsets : int64[n + 1]; clusters, last_touched :
    int32[n]; upward : bool (the round moves to larger cluster ids); table : int64[D] (EMPTY_SLOT where
    unused); own_link : int64[n] (0 before the round)."""
    scratch, lane = warp_scratch()
    entries = rows.shape[0]
    first, stride, trips = uniform_trips(entries)
    for trip in range(trips):
        entry = first + trip * stride
        kind = 0  # 1: a link inside v's cluster, 2: a link to a candidate cluster
        v = int32(-1)
        c = int32(-1)
        weight = int64(0)
        if entry < entries:
            v = rows[entry]
            if last_touched[v] >= first_round:
                own = clusters[v]
                c = clusters[neighbors[entry]]
                weight = int64(weights[entry])
                if c == own:
                    kind = 1
                elif (c > own) == upward:
                    kind = 2
        leader, total = group_total(kind > 0, (int64(v) << 32) | c, weight, scratch, lane)
        if leader:
            if kind == 1:
                cuda.atomic.add(own_link, v, total)
            else:
                _insert_link(table, offsets[v], offsets[v + 1] - offsets[v], c, total)


@cuda.jit(device=True, inline=True)
def _slot_gain(slot, rows, table, zeta, two_omega, clusters, cluster_zeta, own_link):
    """(v, cluster, gain of moving v there) for a used table slot; cluster and gain -1 for an empty one."""
    packed = table[slot]
    v = rows[slot]
    if packed == EMPTY_SLOT:
        return v, int32(-1), int64(-1)
    c = int32(packed >> 32)
    return v, c, move_gain_gpu(two_omega, packed & LOW32, own_link[v], zeta[v], cluster_zeta[c],
                               cluster_zeta[clusters[v]])


@cached_kernel
def slot_gain_kernel(rows, table, zeta, two_omega, clusters, cluster_zeta, own_link, best_gain):
    """Pass 1 over table slots: best_gain[v] = the largest positive gain of moving v to a linked cluster."""
    for slot in range(cuda.grid(1), table.shape[0], cuda.gridsize(1)):
        v, c, gain = _slot_gain(slot, rows, table, zeta, two_omega, clusters, cluster_zeta, own_link)
        if gain > 0:
            cuda.atomic.max(best_gain, v, gain)


@cached_kernel
def slot_choice_kernel(rows, table, zeta, two_omega, clusters, cluster_zeta, own_link, best_gain, best):
    """Pass 2: best[v] = the smallest cluster reaching best_gain[v]; every slot is emptied for the next round."""
    for slot in range(cuda.grid(1), table.shape[0], cuda.gridsize(1)):
        v, c, gain = _slot_gain(slot, rows, table, zeta, two_omega, clusters, cluster_zeta, own_link)
        if c >= 0:
            if gain > 0 and gain == best_gain[v]:
                cuda.atomic.min(best, v, c)
            table[slot] = EMPTY_SLOT


@cached_kernel
def apply_moves_kernel(best, best_gain, own_link, zeta, clusters, cluster_zeta, previous, moved, last_touched,
                       round_index, counts, slot):
    """Every vertex with a move takes it (all at once) and is touched in this round, except a move straight
    back to the cluster it left in the round before (dropped, as in the CPU twin); previous[v] and moved[v]
    then hold its cluster before this round and whether it moved; ζ(v) leaves its cluster's ζ(C) for the
    target's; per-vertex scratch is reset; counts[slot] counts the movers."""
    none = best.shape[0]
    for v in range(cuda.grid(1), best.shape[0], cuda.gridsize(1)):
        target = best[v]
        if target != none and moved[v] and target == previous[v]:
            target = none
        own = clusters[v]
        previous[v] = own
        moved[v] = target != none
        if target != none:
            clusters[v] = target
            last_touched[v] = round_index
            cuda.atomic.add(cluster_zeta, own, -zeta[v])
            cuda.atomic.add(cluster_zeta, target, zeta[v])
            cuda.atomic.add(counts, slot, 1)
        best[v] = none
        best_gain[v] = 0
        own_link[v] = 0


@cached_kernel
def mark_touched_kernel(rows, neighbors, weights, moved, previous, clusters, last_touched, round_index, counts, slot):
    """For every entry (v, u) of a vertex v that moved in this round: last_touched[u] = round_index, and
    counts[slot] += how the edge's weight inside clusters changed (each edge once: taken from v's side unless
    u moved too and u < v). Each thread sums its share, one atomic. (Warps over a list of the movers' entries
    were slower: building the list took about ten CuPy launches and a host sync a round.)"""
    mine = int64(0)
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v = rows[entry]
        if moved[v]:
            u = neighbors[entry]
            last_touched[u] = round_index
            if v < u or not moved[u]:
                before = previous[v] == previous[u]
                after = clusters[v] == clusters[u]
                if before != after:
                    mine += weights[entry] if after else -weights[entry]
    if mine:
        cuda.atomic.add(counts, slot, mine)


@cached_kernel
def inside_weight_kernel(rows, neighbors, weights, clusters, total):
    """total[0] += weight of the entries (v < u) inside a cluster: each thread sums its share, one atomic."""
    mine = int64(0)
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v = rows[entry]
        u = neighbors[entry]
        if v < u and clusters[v] == clusters[u]:
            mine += weights[entry]
    if mine:
        cuda.atomic.add(total, 0, mine)


@cached_kernel
def square_sum_kernel(values, total, slot):
    """total[slot] += Σ values², each thread its share, one atomic."""
    mine = int64(0)
    for index in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        mine += values[index] * values[index]
    if mine:
        cuda.atomic.add(total, slot, mine)


def _cluster_zeta(level: dict, clusters):
    cluster_zeta = xp().zeros(clusters.shape[0], dtype=np.int64)
    return scatter(scatter_add_kernel, clusters, level["zeta"], cluster_zeta)


def _modularity_sums(level: dict, clusters, cluster_zeta) -> tuple[int, int]:
    """(weight of the edges inside clusters, Σ ζ(C)²) on this level."""
    totals = xp().zeros(2, dtype=np.int64)
    launch_items(inside_weight_kernel, int(level["rows"].shape[0]), level["rows"], level["neighbors"], level["weights"],
                 clusters, totals)
    launch_items(square_sum_kernel, int(clusters.shape[0]), cluster_zeta, totals, 1)
    inside, squares = (int(value) for value in to_host(totals))
    return inside, squares


def _scaled_value(level: dict, inside: int, squares: int) -> int:
    """4Ω² times the modularity from the weight inside clusters (loops aside) and Σ ζ(C)²."""
    return 2 * level["two_omega"] * (inside + level["loops_total"]) - squares


def scaled_modularity(level: dict, clusters) -> int:
    """4Ω² times the modularity of ``clusters`` (int32[n] on the device) on this level; exact (int64 sums).
    As :func:`.host_moving.scaled_modularity`."""
    return _scaled_value(level, *_modularity_sums(level, clusters, _cluster_zeta(level, clusters)))


def local_moving(level: dict, clusters, rounds: int, stale_rounds: int, min_improvement: float = 0.0):
    """Step 5 on the device: parameters and results as :func:`.host_moving.local_moving`, arrays on the
    device. A round is six launches and one read of its three counts (movers, the change of the weight
    inside clusters, Σ ζ(C)²): the movers update ζ(C) and, from their edges alone, the weight inside
    clusters (``mark_touched_kernel``), so the value stays exact without a recount."""
    array = xp()
    n = clusters.shape[0]
    entries = int(level["rows"].shape[0])
    link_weights = int32_weights(level)  # checks 2Ω < 2^31 first (``check_total_weight``)
    clusters = clusters.astype(np.int32, copy=True)
    two_omega = level["two_omega"]
    cluster_zeta = _cluster_zeta(level, clusters)
    inside, squares = _modularity_sums(level, clusters, cluster_zeta)
    best, best_value = clusters.copy(), _scaled_value(level, inside, squares)
    table = array.full(entries, -1, dtype=np.int64)
    own_link = array.zeros(n, dtype=np.int64)
    best_gain = array.zeros(n, dtype=np.int64)
    target = array.full(n, n, dtype=np.int32)
    counts = array.zeros(3 * max(rounds, 1), dtype=np.int64)  # per round: movers, inside change, Σ ζ(C)²
    previous = array.empty(n, dtype=np.int32)
    moved = array.zeros(n, dtype=np.uint8)
    last_touched = array.full(n, -1, dtype=np.int32)  # every vertex is active in the first two rounds
    rows, neighbors, weights, zeta, offsets = (level[key] for key in ("rows", "neighbors", "weights", "zeta",
                                                                      "offsets"))
    stale = idle = 0
    threshold = stale_threshold(two_omega, min_improvement)
    for round_index in range(rounds):
        first_round = round_index - ACTIVE_ROUNDS
        launch_items(link_kernel, entries, rows, neighbors, link_weights, offsets, clusters, round_index % 2 == 0,
                     last_touched, first_round, table, own_link, threads=LINK_THREADS)
        slot_args = (rows, table, zeta, two_omega, clusters, cluster_zeta, own_link, best_gain)
        launch_items(slot_gain_kernel, entries, *slot_args)
        launch_items(slot_choice_kernel, entries, *slot_args, target)
        base = 3 * round_index
        launch_items(apply_moves_kernel, n, target, best_gain, own_link, zeta, clusters, cluster_zeta, previous, moved,
                     last_touched, round_index, counts, base)
        launch_items(mark_touched_kernel, entries, rows, neighbors, weights, moved, previous, clusters, last_touched,
                     round_index, counts, base + 1)
        launch_items(square_sum_kernel, n, cluster_zeta, counts, base + 2)
        movers, change, squares = (int(value) for value in to_host(counts[base:base + 3]))
        if movers == 0:
            idle += 1
            if idle == 2:
                break
            continue
        idle = 0
        inside += change
        value = _scaled_value(level, inside, squares)
        improved, stale = next_stale(value, best_value, stale, threshold)
        if improved:
            best_value = value
            best = clusters.copy()
        if stale >= stale_rounds:
            break
    return best, best_value
