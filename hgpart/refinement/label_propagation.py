"""Label propagation refinement: rate every active boundary vertex in parallel, then apply the positive moves
in order of gain, re-rating each against the current state so that no move loses (an afterburner).

Every vertex is active in the first round; in a later one only the pins of the nets of the vertices that
moved in the round before, whose gains those moves changed (Mt-KaHyPar's active nodes). The others would
be rated as before: their rating changes only where a move fills or empties a block they could not, or
could, move to. Later rounds move few vertices (a few dozen on a level of 10^5), so rating only the
active ones saves most of their rating (docs/tuning.md, "Label propagation's active vertices")."""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import on_threads
from ..sorting import stable_argsort
from .gains import apply_move, best_move, is_boundary, move_scratch


@numba.njit(cache=True, nogil=True)
def _rate_chunk(t, per_thread, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, active, targets,
                gains):
    n = vertex_offsets.shape[0] - 1
    gain, adjacent = move_scratch(k)
    for v in range(t * per_thread, min(n, (t + 1) * per_thread)):
        targets[v] = -1
        gains[v] = 0
        if active[v] and movable[v] and is_boundary(v, partition, vertex_offsets, incident_nets, net_offsets,
                                                    pin_counts, k):
            target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                  net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                                  cut_objective, np.bool_(True), gain, adjacent)
            targets[v] = target
            gains[v] = g


@numba.njit(cache=True, nogil=True)
def _rate_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                 pin_counts, block_weights, max_block_weights, k, movable, cut_objective, active, targets, gains):
    """The best move of every active, movable boundary vertex: ``targets`` (int32[n], -1: none or not rated)
    and ``gains`` (int64[n])."""
    _rate_chunk(0, vertex_offsets.shape[0] - 1, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                vertex_weights, partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective,
                active, targets, gains)


def _rate_parallel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                   pin_counts, block_weights, max_block_weights, k, movable, cut_objective, active, targets, gains,
                   threads):
    """:func:`_rate_serial` on ``threads`` threads (:func:`hgpart.parallel.on_threads`), a slice of the vertices
    each."""
    per_thread = (vertex_offsets.shape[0] - 1 + threads - 1) // threads
    on_threads(_rate_chunk, threads, np.int64(per_thread), net_offsets, pin_vertices, vertex_offsets, incident_nets,
               net_weights, vertex_weights, partition, pin_counts, block_weights, max_block_weights, np.int64(k),
               movable, cut_objective, active, targets, gains)


@numba.njit(cache=True, nogil=True)
def _apply(order, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
           pin_counts, block_weights, max_block_weights, k, cut_objective, active):
    """Each vertex of ``order`` re-rated and moved where its move still gains; then ``active`` (bool[n]) marks the
    next round's active vertices, the pins of the movers' nets. Returns (the gain, the number of moves)."""
    gain, adjacent = move_scratch(k)
    total = np.int64(0)
    moves = 0
    movers = np.empty(order.shape[0], dtype=np.int64)
    for v in order:
        target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                              net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                              cut_objective, np.bool_(True), gain, adjacent)
        if target >= 0 and g > 0:
            apply_move(np.int64(v), np.int64(target), partition, net_offsets, vertex_offsets, incident_nets,
                       vertex_weights, pin_counts, block_weights, k)
            total += g
            movers[moves] = v
            moves += 1
    active[:] = False
    marked = np.zeros(net_offsets.shape[0] - 1, dtype=np.bool_)  # each net's pins once, however many movers
    for i in range(moves):
        v = movers[i]
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            if not marked[e]:
                marked[e] = True
                for p in range(net_offsets[e], net_offsets[e + 1]):
                    active[pin_vertices[p]] = True
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
    active = np.ones(n, dtype=np.bool_)
    total = np.int64(0)
    for _ in range(rounds):
        _rate_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                     pin_counts, block_weights, max_block_weights, k, movable, cut_objective, active, targets, gains)
        order = _move_order(targets, gains)
        if order.shape[0] == 0:
            break
        gained, moves = _apply(order, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                               vertex_weights, partition, pin_counts, block_weights, max_block_weights, k,
                               cut_objective, active)
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
    active = np.ones(h.num_vertices, dtype=np.bool_)
    total = 0
    for _ in range(rounds):
        _rate_parallel(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                       h.vertex_weights, partition, pin_counts, block_weights, max_block_weights, k, movable,
                       cut_objective, active, targets, gains, numba.get_num_threads())
        order = _move_order(targets, gains)
        if order.shape[0] == 0:
            break
        gained, moves = _apply(order, h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                               h.net_weights, h.vertex_weights, partition, pin_counts, block_weights,
                               max_block_weights, k, cut_objective, active)
        total += int(gained)
        if moves == 0:
            break
    return total
