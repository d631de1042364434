"""Pairwise FM: 2-way FM on disjoint pairs of blocks at once, for km1 on large inputs.

The km1 gain of moving v from block a to block b, sum over nets e of v of w(e) ([Phi(e, a) = 1] -
[Phi(e, b) = 0]), reads only the pin counts of a and b. So 2-way FM between a and b (the classic O(1)
gain updates of :mod:`.fm2`, with a and b as the two sides, over the vertices of a and b) makes exact k-way
moves, and FM runs on other, disjoint pairs touch other entries of Phi, other block weights and other
vertices: the pairs of a round run on parallel threads, and the result is the same on any number of them.

A sweep is a round-robin schedule (the circle method): k - 1 rounds (k even; k rounds for odd k) of
about k / 2 disjoint pairs, so every pair meets once. Sweeps repeat while they gain. This is pairwise
refinement as KaFFPa runs it on the quotient graph, with the pairs of a round in parallel; it replaces
k-way FM where the latter's O(k) re-rating of every pin of a changed net takes too long (the GPU path's
last step on large inputs).

Phi is kept block-major here (``block_pin_counts[b * m + e]``): a pair reads two rows of m entries, which
stay in cache, where the net-major layout of :mod:`.gains` spreads them over m * k entries (154 MB at 300k
nets and k = 128, one cache miss per read).
"""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import runs_serially
from ..hypergraph import transpose_csr
from .fm2 import bump, delta_gain, pick_side
from .gains import apply_move_strided, track_best_prefix, two_way_gain
from .heap import heap_pop


def round_robin(k: int) -> np.ndarray:
    """The circle method's schedule: int32[rounds, ceil(k / 2), 2] block pairs (smaller block first; -1 pads
    a round of odd k); each unordered pair of blocks meets in exactly one round, and the pairs of a round
    are disjoint."""
    slots = k + (k % 2)  # odd k: one slot is a bye
    rounds = np.full((slots - 1, slots // 2, 2), -1, dtype=np.int32)
    for r in range(slots - 1):
        pairs = [(slots - 1, r)] + [((r + i) % (slots - 1), (r - i) % (slots - 1)) for i in range(1, slots // 2)]
        kept = [(min(x, y), max(x, y)) for x, y in pairs if x < k and y < k]
        rounds[r, :len(kept)] = kept
    return rounds


@numba.njit(cache=True, nogil=True)
def block_pin_counts_of(net_offsets, pin_vertices, partition, k):
    """Phi(e, b) block-major: int32[k * m], at b * m + e."""
    m = net_offsets.shape[0] - 1
    block_pin_counts = np.zeros(k * m, dtype=np.int32)
    for e in range(m):
        for p in range(net_offsets[e], net_offsets[e + 1]):
            block_pin_counts[partition[pin_vertices[p]] * m + e] += 1
    return block_pin_counts


@numba.njit(cache=True, nogil=True)
def pair_fm_pass(a, b, block_offsets, block_members, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                 net_weights, vertex_weights, partition, block_pin_counts, block_weights, max_block_weights, movable,
                 fruitless_limit, keys, positions, free):
    """One 2-way FM pass between blocks a and b (their vertices: ``block_members`` in the ranges of
    ``block_offsets``, as :func:`~hgpart.hypergraph.transpose_csr` of the partition lists them); returns the
    km1 gain kept (>= 0). Writes only rows a and b of ``block_pin_counts``
    (:func:`block_pin_counts_of`), ``block_weights`` of a and b, and ``partition``, ``keys``, ``positions``
    and ``free`` (int64[n], int64[n], bool[n]; False on entry and on return) of the pair's vertices."""
    m = net_offsets.shape[0] - 1
    count = block_offsets[a + 1] - block_offsets[a] + block_offsets[b + 1] - block_offsets[b]
    heap_a = np.empty(max(count, 1), dtype=np.int64)
    heap_b = np.empty(max(count, 1), dtype=np.int64)
    size_a = np.zeros(1, dtype=np.int64)
    size_b = np.zeros(1, dtype=np.int64)
    for block in (a, b):
        other = b if block == a else a
        for i in range(block_offsets[block], block_offsets[block + 1]):
            v = block_members[i]
            positions[v] = -1
            if not movable[v]:
                continue
            free[v] = True  # every free vertex gets its gain; those with a net in the other block start in
            keys[v], touches = two_way_gain(v, block, other, net_offsets, vertex_offsets, incident_nets,  # a heap
                                            net_weights, block_pin_counts, 1, m)
            if touches:
                bump(v, 0, a, partition, heap_a, heap_b, keys, positions, size_a, size_b)
    moved = np.empty(max(count, 1), dtype=np.int32)
    num_moves, best_moves, since_best = 0, 0, 0
    total, best_total = np.int64(0), np.int64(0)
    while True:
        side = pick_side(a, b, heap_a, size_a, heap_b, size_b, keys, vertex_weights, block_weights,
                         max_block_weights)
        if side < 0:
            break
        v = heap_pop(heap_a if side == a else heap_b, keys, positions, size_a if side == a else size_b)
        free[v] = False
        target = b if side == a else a
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):  # the delta rules of .fm2
            e = incident_nets[q]
            if net_offsets[e + 1] - net_offsets[e] < 2:
                continue
            w = net_weights[e]
            in_target = block_pin_counts[target * m + e]
            in_source = block_pin_counts[side * m + e]
            if in_target <= 1 or in_source <= 2:
                for p in range(net_offsets[e], net_offsets[e + 1]):
                    x = pin_vertices[p]
                    own = partition[x]
                    if (own != a and own != b) or not free[x]:  # other pairs' vertices never enter a or b
                        continue
                    delta = delta_gain(w, in_source, in_target, own, side, target)
                    if delta != 0:
                        bump(x, delta, a, partition, heap_a, heap_b, keys, positions, size_a, size_b)
        total += keys[v]
        apply_move_strided(v, target, partition, vertex_offsets, incident_nets, vertex_weights, block_pin_counts,
                           block_weights, 1, m)
        moved[num_moves] = v
        num_moves += 1
        best_total, best_moves, since_best = track_best_prefix(total, num_moves, best_total, best_moves, since_best)
        if since_best >= fruitless_limit:
            break
    for i in range(num_moves - 1, best_moves - 1, -1):  # roll back to the best prefix, newest first
        v = moved[i]
        apply_move_strided(v, a if partition[v] == b else b, partition, vertex_offsets, incident_nets,
                           vertex_weights, block_pin_counts, block_weights, 1, m)
    for block in (a, b):
        for i in range(block_offsets[block], block_offsets[block + 1]):
            free[block_members[i]] = False
    return best_total


@numba.njit(cache=True, inline="always")
def _pair_of_round(pairs, i, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                   partition, block_pin_counts, block_weights, max_block_weights, movable, fruitless_limit, keys,
                   positions, free, block_offsets, block_members):
    if pairs[i, 0] < 0:
        return np.int64(0)
    return pair_fm_pass(pairs[i, 0], pairs[i, 1], block_offsets, block_members, net_offsets, pin_vertices,
                        vertex_offsets, incident_nets, net_weights, vertex_weights, partition, block_pin_counts,
                        block_weights, max_block_weights, movable, fruitless_limit, keys, positions, free)


@numba.njit(cache=True, nogil=True)
def _round_serial(pairs, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                  partition, block_pin_counts, block_weights, max_block_weights, movable, fruitless_limit, keys,
                  positions, free, block_offsets, block_members):
    total = np.int64(0)
    for i in range(pairs.shape[0]):
        total += _pair_of_round(pairs, i, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                vertex_weights, partition, block_pin_counts, block_weights, max_block_weights,
                                movable, fruitless_limit, keys, positions, free, block_offsets, block_members)
    return total


@numba.njit(cache=True, parallel=True)
def _round_parallel(pairs, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                    partition, block_pin_counts, block_weights, max_block_weights, movable, fruitless_limit, keys,
                    positions, free, block_offsets, block_members):
    gains = np.zeros(pairs.shape[0], dtype=np.int64)
    for i in numba.prange(pairs.shape[0]):
        gains[i] = _pair_of_round(pairs, i, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                  vertex_weights, partition, block_pin_counts, block_weights, max_block_weights,
                                  movable, fruitless_limit, keys, positions, free, block_offsets, block_members)
    return gains.sum()


def pair_fm(hypergraph, partition, block_weights, max_block_weights, k, movable, sweeps, fruitless_limit,
            min_improvement: float = 0.0, km1: int = 0) -> int:
    """Up to ``sweeps`` round-robin sweeps of pairwise km1 FM (:func:`pair_fm_pass` on the disjoint pairs of
    each round, on parallel threads); ``partition`` (int32[n]) and ``block_weights`` (int64[k]) are updated
    in place. Sweeps stop after one that gains at most ``min_improvement`` times the km1 it started from
    (``km1``: that of ``partition``). Returns the total gain; the result does not depend on the number of
    threads."""
    h = hypergraph
    n = h.num_vertices
    movable = np.ones(n, dtype=np.bool_) if movable is None else movable
    block_pin_counts = block_pin_counts_of(h.net_offsets, h.pin_vertices, partition, k)
    keys = np.zeros(n, dtype=np.int64)
    positions = np.full(n, -1, dtype=np.int64)
    free = np.zeros(n, dtype=np.bool_)
    run_round = _round_serial if runs_serially(h.num_pins) else _round_parallel
    one_per_vertex = np.arange(n + 1, dtype=np.int64)
    total = 0
    for _ in range(sweeps):
        gained = 0
        for pairs in round_robin(k):
            block_offsets, block_members = transpose_csr(one_per_vertex, partition, k)  # each block's vertices
            gained += int(run_round(pairs, h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                                    h.net_weights, h.vertex_weights, partition, block_pin_counts, block_weights,
                                    max_block_weights, movable, fruitless_limit, keys, positions, free,
                                    block_offsets, block_members))
        total += gained
        if gained <= min_improvement * km1:
            break
        km1 -= gained
    return total
