"""k-way Fiduccia-Mattheyses (seed 000 Sec. II-B) for km1 or cut, with rollback to the best prefix.

A pass keeps every movable boundary vertex in a max-heap keyed by its best gain among adjacent blocks
that can take it; it repeatedly moves the top vertex (each vertex at most once per pass, even if the
gain is negative), updates the gains of the pins of its nets, and finally undoes the moves after the
best prefix. Passes repeat while they gain. For k = 2 this is classic 2-way FM.
"""

from __future__ import annotations

import numba
import numpy as np

from .fm2 import fm2_pass
from .gains import apply_move, best_move, is_boundary, objective_from_pin_counts, roll_back, track_best_prefix
from .heap import heap_pop, heap_push_or_update, heap_remove


@numba.njit(cache=True, inline="always")
def gains_changed(in_source, in_target, size, cut_objective):
    """Whether moving a pin of a net out of its source block (now ``in_source`` pins there) into the target
    (now ``in_target``) can change any pin's gain or adjacent blocks (the FM delta-gain rule)."""
    if in_source <= 1 or in_target <= 2:
        return True
    return cut_objective and (in_source >= size - 2 or in_target >= size - 1)


@numba.njit(cache=True, inline="always")
def _rate_into_heap(v, partition, net_offsets, vertex_offsets, incident_nets, net_weights, vertex_weights, pin_counts,
                    block_weights, max_block_weights, k, cut_objective, gain, adjacent, heap, keys, position, size,
                    targets):
    """Rate v's best move among adjacent blocks with room: keyed into the heap, or out of it if it has none."""
    target, g = best_move(v, partition, net_offsets, vertex_offsets, incident_nets, net_weights, vertex_weights,
                          pin_counts, block_weights, max_block_weights, k, cut_objective, True, gain, adjacent)
    if target >= 0:
        targets[v] = target
        heap_push_or_update(heap, keys, position, size, v, g)
    else:
        heap_remove(heap, keys, position, size, v)


@numba.njit(cache=True, nogil=True)
def fm_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
            pin_counts, block_weights, max_block_weights, k, movable, cut_objective, fruitless_limit,
            max_update_net_size, heap, keys, position, size, targets):
    """One FM pass; returns the gain kept (>= 0). Arrays are updated in place."""
    n = vertex_offsets.shape[0] - 1
    gain = np.zeros(k, dtype=np.int64)
    adjacent = np.zeros(k, dtype=np.bool_)
    locked = np.zeros(n, dtype=np.bool_)
    size[0] = 0
    for v in range(n):
        position[v] = -1
    for v in range(n):
        if movable[v] and is_boundary(v, partition, vertex_offsets, incident_nets, net_offsets, pin_counts, k):
            _rate_into_heap(v, partition, net_offsets, vertex_offsets, incident_nets, net_weights, vertex_weights,
                            pin_counts, block_weights, max_block_weights, k, cut_objective, gain, adjacent, heap,
                            keys, position, size, targets)
    moved = np.empty(n, dtype=np.int32)
    sources = np.empty(n, dtype=np.int32)
    num_moves = 0
    total = np.int64(0)
    best_total = np.int64(0)
    best_moves = 0
    since_best = 0
    while size[0] > 0:
        v = heap[0]
        # rate the top again: a block may have filled up, or a net above max_update_net_size changed
        target, g = best_move(v, partition, net_offsets, vertex_offsets, incident_nets, net_weights,
                              vertex_weights, pin_counts, block_weights, max_block_weights, k, cut_objective,
                              True, gain, adjacent)
        if target < 0:
            heap_pop(heap, keys, position, size)
            continue
        if g != keys[v] or target != targets[v]:
            targets[v] = target
            heap_push_or_update(heap, keys, position, size, v, g)
            if heap[0] != v:
                continue
        heap_pop(heap, keys, position, size)
        sources[num_moves] = partition[v]
        moved[num_moves] = v
        num_moves += 1
        apply_move(v, target, partition, net_offsets, vertex_offsets, incident_nets, vertex_weights, pin_counts,
                   block_weights, k)
        locked[v] = True
        total += g
        best_total, best_moves, since_best = track_best_prefix(total, num_moves, best_total, best_moves, since_best)
        if since_best >= fruitless_limit:
            break
        source = sources[num_moves - 1]
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            net_size = net_offsets[e + 1] - net_offsets[e]
            if net_size > max_update_net_size or not gains_changed(pin_counts[e * k + source],
                                                                  pin_counts[e * k + target], net_size,
                                                                  cut_objective):
                continue
            for p in range(net_offsets[e], net_offsets[e + 1]):
                u = pin_vertices[p]
                if locked[u] or not movable[u]:
                    continue
                _rate_into_heap(u, partition, net_offsets, vertex_offsets, incident_nets, net_weights, vertex_weights,
                                pin_counts, block_weights, max_block_weights, k, cut_objective, gain, adjacent, heap,
                                keys, position, size, targets)
    roll_back(moved, sources, best_moves, num_moves, partition, net_offsets, vertex_offsets, incident_nets,
              vertex_weights, pin_counts, block_weights, k)
    return best_total


@numba.njit(cache=True, nogil=True)
def fm_passes(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
              pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes, fruitless_limit,
              max_update_net_size, min_improvement):
    """Up to ``passes`` FM passes (2-way FM for k = 2) in one call; returns the total gain. Passes stop after
    one that gains nothing, or (with ``min_improvement`` > 0) less than that fraction of the objective it
    started from (Mt-KaHyPar's relative improvement threshold)."""
    n = vertex_offsets.shape[0] - 1
    heap = np.empty(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    targets = np.full(n, -1, dtype=np.int32)
    objective = objective_from_pin_counts(net_offsets, net_weights, pin_counts, k, cut_objective) \
        if min_improvement > 0 else np.int64(0)
    total = np.int64(0)
    for _ in range(passes):
        if k == 2:  # classic FM with O(1) gain updates
            gained = fm2_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                              partition, pin_counts, block_weights, max_block_weights, movable, fruitless_limit)
        else:
            gained = fm_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                             partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective,
                             fruitless_limit, max_update_net_size, heap, keys, position, size, targets)
        total += gained
        if gained <= min_improvement * objective:
            break
        objective -= gained
    return total


def fm(hypergraph, partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes,
       fruitless_limit, max_update_net_size, min_improvement: float = 0.0) -> int:
    """:func:`fm_passes` on a :class:`~hgpart.hypergraph.Hypergraph`; ``partition``, ``pin_counts`` and
    ``block_weights`` are updated in place."""
    return int(fm_passes(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets,
                         hypergraph.incident_nets, hypergraph.net_weights, hypergraph.vertex_weights, partition,
                         pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes,
                         fruitless_limit, max_update_net_size, float(min_improvement)))
