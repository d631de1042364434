"""A plain numpy model of the GPU refinement (:mod:`hgpart.refinement.gpu`), step for step, for tests on tiny
inputs.

It shares no code with the kernels: every gain is measured by brute force, as the change of the whole
objective when the move is made (km1 or cut recomputed from scratch), and the afterburner is the
sequential application of the ranked candidates, each measured after all earlier ones. Slow (cubic);
for hypergraphs of a few hundred pins.
"""

from __future__ import annotations

import numpy as np

from hgpart.refinement.jet_rules import STALE_ROUNDS


def objective(net_offsets, pin_vertices, net_weights, blocks, cut_objective: bool) -> int:
    """km1 or cut of ``blocks``, nets with fewer than two pins not counted."""
    total = 0
    for e in range(net_offsets.shape[0] - 1):
        pins = pin_vertices[net_offsets[e]:net_offsets[e + 1]]
        if pins.shape[0] < 2:
            continue
        connectivity = np.unique(blocks[pins]).shape[0]
        total += int(net_weights[e]) * ((connectivity > 1) if cut_objective else (connectivity - 1))
    return total


def _gain(hypergraph, blocks, v, target, cut_objective):
    before = objective(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights, blocks, cut_objective)
    moved = blocks.copy()
    moved[v] = target
    after = objective(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights, moved, cut_objective)
    return before - after


def internal_weights(hypergraph, blocks):
    """int64[n]: per vertex, the weight of its nets (>= 2 pins) with another pin in its block."""
    internals = np.zeros(hypergraph.num_vertices, dtype=np.int64)
    for e in range(hypergraph.num_nets):
        pins = hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]]
        for v in pins:
            if pins.shape[0] >= 2 and np.count_nonzero(blocks[pins] == blocks[v]) > 1:
                internals[v] += hypergraph.net_weights[e]
    return internals


def best_moves(hypergraph, blocks, k, max_block_weights, cut_objective, only_adjacent, active):
    """(targets int32[n], gains int64[n]) as ``rate_moves_kernel`` defines them."""
    n = hypergraph.num_vertices
    block_weights = np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64)
    targets = np.full(n, -1, dtype=np.int32)
    gains = np.zeros(n, dtype=np.int64)
    for v in range(n):
        if not active[v]:
            continue
        neighbours = set()
        for e in hypergraph.incident_nets[hypergraph.vertex_offsets[v]:hypergraph.vertex_offsets[v + 1]]:
            pins = hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]]
            if pins.shape[0] >= 2:
                neighbours.update(int(b) for b in blocks[pins])
        best, best_key = -1, None
        for b in range(k):
            if b == blocks[v] or (only_adjacent and b not in neighbours) or \
                    block_weights[b] + hypergraph.vertex_weights[v] > max_block_weights[b]:
                continue
            key = (_gain(hypergraph, blocks, v, b, cut_objective), -int(block_weights[b]), -b)
            if best_key is None or key > best_key:
                best, best_key = b, key
        if best >= 0:
            targets[v], gains[v] = best, best_key[0]
    return targets, gains


def _accept_within_bounds(moves, block_weights, max_block_weights, vertex_weights):
    """The moves (in priority order) accepted into each block while it stays within its bound."""
    incoming = np.zeros_like(block_weights)
    accepted = []
    for v, target in moves:
        incoming[target] += vertex_weights[v]
        if block_weights[target] + incoming[target] <= max_block_weights[target]:
            accepted.append((v, target))
    return accepted


def jet_round(hypergraph, blocks, k, max_block_weights, cut_objective, active, tolerance, movable) -> tuple:
    """One round on ``blocks`` (modified in place): the kept moves are made whatever the balance, then the
    rebalancer runs (on the ``movable`` vertices) if a block is over its bound. Returns (the vertices the
    Jet moves moved, whether the blocks are within their bounds)."""
    unbounded = np.full(k, np.iinfo(np.int64).max // 2, dtype=np.int64)
    targets, gains = best_moves(hypergraph, blocks, k, unbounded, cut_objective, True, active)
    internals = internal_weights(hypergraph, blocks)
    candidates = [v for v in range(hypergraph.num_vertices) if targets[v] >= 0 and
                  (gains[v] > 0 or gains[v] >= -np.floor(float(internals[v]) * tolerance))]
    candidates.sort(key=lambda v: (-gains[v], v))
    replay = blocks.copy()
    kept = []
    for v in candidates:
        if _gain(hypergraph, replay, v, targets[v], cut_objective) >= 0:
            kept.append(v)
        replay[v] = targets[v]
    for v in kept:
        blocks[v] = targets[v]
    block_weights = np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64)
    balanced = bool((block_weights <= max_block_weights).all())
    if not balanced:
        rebalanced, balanced = rebalance(hypergraph, blocks, k, max_block_weights, cut_objective, movable)
        blocks[:] = rebalanced
    return kept, balanced


def refine(hypergraph, blocks, k, max_block_weights, rounds, cut_objective=False, movable=None,
           tolerance=0.25) -> np.ndarray:
    """The model of :func:`hgpart.refinement.gpu.refine_device`: the best balanced partition of all rounds."""
    blocks = np.array(blocks, dtype=np.int32)
    active = np.ones(hypergraph.num_vertices, dtype=bool) if movable is None else np.asarray(movable, dtype=bool)
    args = (hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights)
    best_objective, best_blocks, stale = objective(*args, blocks, cut_objective), blocks.copy(), 0
    free = active
    for _ in range(rounds):
        moved, balanced = jet_round(hypergraph, blocks, k, max_block_weights, cut_objective, active, tolerance, free)
        if not moved:
            break
        active = free.copy()
        active[moved] = False
        value = objective(*args, blocks, cut_objective)
        if balanced and value < best_objective:
            best_objective, best_blocks, stale = value, blocks.copy(), 0
        else:
            stale += 1
            if stale >= STALE_ROUNDS:
                break
    return best_blocks


def rebalance(hypergraph, blocks, k, max_block_weights, cut_objective=False, movable=None, max_rounds=64):
    """The model of :func:`hgpart.refinement.gpu.rebalance_device`: returns (blocks, balanced)."""
    blocks = np.array(blocks, dtype=np.int32)
    n = hypergraph.num_vertices
    movable = np.ones(n, dtype=bool) if movable is None else np.asarray(movable, dtype=bool)
    weights = hypergraph.vertex_weights
    for _ in range(max_rounds):
        block_weights = np.bincount(blocks, weights=weights, minlength=k).astype(np.int64)
        excess = block_weights - max_block_weights
        if not (excess > 0).any():
            return blocks, True
        active = movable & (excess[blocks] > 0) & (weights > 0)
        targets, gains = best_moves(hypergraph, blocks, k, max_block_weights, cut_objective, False, active)
        candidates = [v for v in range(n) if targets[v] >= 0]
        if not candidates:
            return blocks, False
        candidates.sort(key=lambda v: (int(blocks[v]), -float(gains[v]) / float(weights[v]), v))
        removed = np.zeros(k, dtype=np.int64)
        needed = []
        for v in candidates:
            source = blocks[v]
            if removed[source] < excess[source]:
                needed.append((v, int(targets[v])))
            removed[source] += weights[v]
        accepted = _accept_within_bounds(needed, block_weights, max_block_weights, weights)
        if not accepted:
            return blocks, False
        for v, target in accepted:
            blocks[v] = target
    block_weights = np.bincount(blocks, weights=weights, minlength=k).astype(np.int64)
    return blocks, bool((block_weights <= max_block_weights).all())
