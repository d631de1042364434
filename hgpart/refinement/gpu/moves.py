"""Moves applied on the device: Phi, block weights, locks and the objective kept exact by atomics (step 4 of
a round of :mod:`.jet`, and the rebalancer's moves).

A move's change of the objective is read off the old values the atomics return, so a batch of moves made at
once, as in M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning on
Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, still leaves the exact km1 or cut,
without a recount.
"""

from __future__ import annotations

from numba import cuda, int64

from ...cuda.arrays import cached_kernel


@cuda.jit(device=True, inline=True)
def _move_vertex(v, target, lane, lanes, net_offsets, net_weights, vertex_offsets, incident_nets, vertex_weights, k,
                 cut_objective, blocks, pin_counts, connectivity, block_weights, locked):
    """Move v to ``target`` (lane ``lane`` of ``lanes`` threads, which stride over its nets): Phi(e, old) -= 1
    and Phi(e, new) += 1, then (lane 0) the block weights, blocks[v] and locked[v] = 0 when ``locked`` is not
    empty. Returns this lane's part of the exact change of the objective, read off the old values the
    atomics return: a net loses a block when Phi(e, old) drops from 1 (km1 - w(e)), gains one when
    Phi(e, new) rises from 0 (km1 + w(e)); for cut, the same steps of lambda(e) (``connectivity``) from 2
    to 1 and from 1 to 2. However the atomics interleave, these steps telescope to the exact difference
    between the final and the first value of each net's contribution."""
    source = blocks[v]
    change = int64(0)
    for q in range(vertex_offsets[v] + lane, vertex_offsets[v + 1], lanes):
        e = incident_nets[q]
        base = int64(e) * k
        counted = net_offsets[e + 1] - net_offsets[e] >= 2
        if cuda.atomic.sub(pin_counts, base + source, 1) == 1 and counted:
            if not cut_objective:
                change -= net_weights[e]
            elif cuda.atomic.sub(connectivity, e, 1) == 2:
                change -= net_weights[e]
        if cuda.atomic.add(pin_counts, base + target, 1) == 0 and counted:
            if not cut_objective:
                change += net_weights[e]
            elif cuda.atomic.add(connectivity, e, 1) == 1:
                change += net_weights[e]
    if lanes > 1:  # the whole warp moves v: every lane has read blocks[v] before lane 0 writes it
        cuda.syncwarp()
    if lane == 0:
        weight = vertex_weights[v]
        cuda.atomic.sub(block_weights, source, weight)
        cuda.atomic.add(block_weights, target, weight)
        blocks[v] = target
        if locked.shape[0]:
            locked[v] = 0
    return change


@cached_kernel
def apply_moves_kernel(moving, destinations, accepted, net_offsets, net_weights, vertex_offsets, incident_nets,
                       vertex_weights, k, cut_objective, lanes, blocks, pin_counts, connectivity, block_weights,
                       locked, status):
    """Move each moving[i] with accepted[i] to destinations[i] (:func:`_move_vertex`; ``lanes`` threads per
    move, 1 or a warp on levels with hubs): Phi, the block weights and ``locked`` follow; status[0] += moves
    made, status[1] += the exact change of the objective."""
    moves = 0
    change = int64(0)
    lane = cuda.threadIdx.x % lanes
    for i in range(cuda.grid(1) // lanes, moving.shape[0], cuda.gridsize(1) // lanes):
        if not accepted[i]:
            continue
        change += _move_vertex(moving[i], destinations[i], lane, lanes, net_offsets, net_weights, vertex_offsets,
                               incident_nets, vertex_weights, k, cut_objective, blocks, pin_counts, connectivity,
                               block_weights, locked)
        if lane == 0:
            moves += 1
    if moves:
        cuda.atomic.add(status, 0, moves)
    if change != 0:
        cuda.atomic.add(status, 1, change)


@cached_kernel
def apply_kept_kernel(kept, targets, net_offsets, net_weights, vertex_offsets, incident_nets, vertex_weights, k,
                      cut_objective, lanes, blocks, pin_counts, connectivity, block_weights, locked, status):
    """:func:`apply_moves_kernel` for every vertex v with kept[v] != 0, to targets[v] (the moves that
    :func:`afterburner_scan_kernel` kept), without a list of moves."""
    moves = 0
    change = int64(0)
    lane = cuda.threadIdx.x % lanes
    for v in range(cuda.grid(1) // lanes, kept.shape[0], cuda.gridsize(1) // lanes):
        if kept[v] == 0:
            continue
        change += _move_vertex(v, targets[v], lane, lanes, net_offsets, net_weights, vertex_offsets, incident_nets,
                               vertex_weights, k, cut_objective, blocks, pin_counts, connectivity, block_weights,
                               locked)
        if lane == 0:
            moves += 1
    if moves:
        cuda.atomic.add(status, 0, moves)
    if change != 0:
        cuda.atomic.add(status, 1, change)
