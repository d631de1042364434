"""Label propagation refinement: rate every boundary vertex in parallel, then apply the positive moves
in order of gain, re-rating each against the current state so that no move loses (an afterburner)."""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import on_threads
from ..sorting import stable_argsort
from .gains import apply_move, best_move, is_boundary, move_scratch


@numba.njit(cache=True, nogil=True)
def _rate_chunk(t, per_thread, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, targets, gains):
    n = vertex_offsets.shape[0] - 1
    gain, adjacent = move_scratch(k)
    for v in range(t * per_thread, min(n, (t + 1) * per_thread)):
        targets[v] = -1
        gains[v] = 0
        if movable[v] and is_boundary(v, partition, vertex_offsets, incident_nets, net_offsets, pin_counts, k):
            target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                  net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                                  cut_objective, True, gain, adjacent)
            targets[v] = target
            gains[v] = g


@numba.njit(cache=True, nogil=True)
def _rate_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                 pin_counts, block_weights, max_block_weights, k, movable, cut_objective, threads, targets, gains):
    _rate_chunk(0, vertex_offsets.shape[0] - 1, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                vertex_weights, partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective,
                targets, gains)


def _rate_parallel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                   pin_counts, block_weights, max_block_weights, k, movable, cut_objective, threads, targets, gains):
    """:func:`_rate_serial` on ``threads`` threads (:func:`hgpart.parallel.on_threads`), a slice of the vertices
    each."""
    per_thread = (vertex_offsets.shape[0] - 1 + threads - 1) // threads
    on_threads(_rate_chunk, threads, np.int64(per_thread), net_offsets, pin_vertices, vertex_offsets, incident_nets,
               net_weights, vertex_weights, partition, pin_counts, block_weights, max_block_weights, np.int64(k),
               movable, cut_objective, targets, gains)


@numba.njit(cache=True, nogil=True)
def _apply(order, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
           pin_counts, block_weights, max_block_weights, k, cut_objective):
    gain, adjacent = move_scratch(k)
    total = np.int64(0)
    moves = 0
    for v in order:
        target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                              net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                              cut_objective, True, gain, adjacent)
        if target >= 0 and g > 0:
            apply_move(np.int64(v), np.int64(target), partition, net_offsets, vertex_offsets, incident_nets,
                       vertex_weights, pin_counts, block_weights, k)
            total += g
            moves += 1
    return total, moves


@numba.njit(cache=True, nogil=True)
def _move_order(targets, gains):
    """The vertices with a positive move, by gain (descending), then id: int32[]."""
    candidates = np.flatnonzero((targets >= 0) & (gains > 0))
    order = stable_argsort(-gains[candidates])
    return candidates[order].astype(np.int32)


@numba.njit(cache=True, nogil=True)
def label_propagation_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                             partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective,
                             rounds):
    """:func:`label_propagation_parallel` with the serial rating, all rounds in one call. Returns the total gain."""
    n = vertex_offsets.shape[0] - 1
    targets = np.empty(n, dtype=np.int32)
    gains = np.empty(n, dtype=np.int64)
    total = np.int64(0)
    for _ in range(rounds):
        _rate_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                     pin_counts, block_weights, max_block_weights, k, movable, cut_objective, 1, targets, gains)
        order = _move_order(targets, gains)
        if order.shape[0] == 0:
            break
        gained, moves = _apply(order, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                               vertex_weights, partition, pin_counts, block_weights, max_block_weights, k,
                               cut_objective)
        total += gained
        if moves == 0:
            break
    return total


def label_propagation_parallel(hypergraph, partition, pin_counts, block_weights, max_block_weights, k, movable,
                               cut_objective, rounds) -> int:
    """Up to ``rounds`` rounds with the parallel rating; stops when a round moves nothing. Returns the total
    gain. :func:`label_propagation_serial` is its serial twin (the same moves), which small hypergraphs and
    one-thread callers take through :func:`.refiner.refine`."""
    h = hypergraph
    targets = np.empty(h.num_vertices, dtype=np.int32)
    gains = np.empty(h.num_vertices, dtype=np.int64)
    total = 0
    for _ in range(rounds):
        _rate_parallel(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                       h.vertex_weights, partition, pin_counts, block_weights, max_block_weights, k, movable,
                       cut_objective, numba.get_num_threads(), targets, gains)
        order = _move_order(targets, gains)
        if order.shape[0] == 0:
            break
        gained, moves = _apply(order, h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                               h.net_weights, h.vertex_weights, partition, pin_counts, block_weights,
                               max_block_weights, k, cut_objective)
        total += int(gained)
        if moves == 0:
            break
    return total
