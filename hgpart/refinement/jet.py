"""CPU twin of the GPU refinement (:mod:`hgpart.refinement.gpu`): the same Jet-style rounds, step for step,
with numba njit, so that the GPU path's partitions can be reproduced (and their quality measured) without a
GPU.

After M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning on
Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, for hypergraphs. A round: rate every
movable vertex not moved in the previous round (:func:`.gains.best_move`, only adjacent blocks, regardless
of balance); the candidates are those with gain > 0 or gain >= -floor(c * internal) (Jet's rule: internal is
the weight of the vertex's nets with another pin in its block), ranked by (gain descending, id); the
afterburner replays the ranked moves on a copy of Phi and keeps those whose gain, measured after all
better-ranked moves, is >= 0; the kept moves are made. When a block is then over its bound,
:func:`rebalance_rounds` (the GPU's rebalancer) restores the bound. The best balanced partition of all rounds
is returned; a level stops after STALE_ROUNDS rounds without a new one (:mod:`.jet_rules`, shared with the
GPU).

Moves are unconstrained, as in Jet: when moves must fit into the room each block has, the blocks fill up to
their bounds and the good moves into them are refused; on evenly connected inputs, unconstrained moves
followed by this rebalancer end with a clearly lower km1.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ..hypergraph import scatter_sum
from ..sorting import float_keys, stable_argsort
from .gains import (apply_move, best_move, clear_scratch, compute_pin_counts, gains_to_blocks, move_scratch,
                    objective_from_pin_counts)
from .jet_rules import REBALANCE_ROUNDS, STALE_ROUNDS, best_of_rounds, unbounded_weights

__all__ = ["REBALANCE_ROUNDS", "STALE_ROUNDS", "best_of_rounds", "jet_refine", "rebalance_rounds",
           "unbounded_weights"]


@numba.njit(cache=True)
def _move_gain(v, target, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
               pin_counts, k, cut_objective, gain, adjacent):
    """Gain of moving v to ``target`` on this Phi (scratch of :func:`.gains.move_scratch`, as it was on exit)."""
    common, count = gains_to_blocks(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                    net_weights, pin_counts, k, cut_objective, gain, adjacent)
    result = gain[target] + common
    clear_scratch(gain, adjacent, count, k)
    return result


@numba.njit(cache=True)
def _jet_round(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
               pin_counts, block_weights, unbounded, k, active, cut_objective, tolerance):
    """Steps 1-4 of the module doc; returns the moved vertices (int64)."""
    n = vertex_offsets.shape[0] - 1
    gain, adjacent = move_scratch(k)
    targets = np.full(n, -1, dtype=np.int32)
    gains = np.zeros(n, dtype=np.int64)
    count = 0
    for v in range(n):
        if active[v]:
            target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                  net_weights, vertex_weights, pin_counts, block_weights, unbounded, k,
                                  cut_objective, np.bool_(True), gain, adjacent)
            internal = np.int64(0)
            for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
                e = incident_nets[q]
                if net_offsets[e + 1] - net_offsets[e] >= 2 and pin_counts[e * k + partition[v]] > 1:
                    internal += net_weights[e]
            if target >= 0 and (g > 0 or g >= -math.floor(internal * tolerance)):
                targets[v] = target
                gains[v] = g
                count += 1
    if count == 0:
        return np.empty(0, dtype=np.int64)
    candidates = np.empty(count, dtype=np.int64)
    count = 0
    for v in range(n):
        if targets[v] >= 0:
            candidates[count] = v
            count += 1
    order = stable_argsort(-gains[candidates])  # stable: ties stay in id order
    replay_partition = partition.copy()
    replay_counts = pin_counts.copy()
    replay_weights = block_weights.copy()
    kept = np.empty(count, dtype=np.int64)
    num_kept = 0
    for position in range(count):
        v = candidates[order[position]]
        target = targets[v]
        recomputed = _move_gain(v, target, replay_partition, net_offsets, pin_vertices, vertex_offsets,
                                incident_nets, net_weights, replay_counts, k, cut_objective, gain, adjacent)
        apply_move(v, target, replay_partition, net_offsets, vertex_offsets, incident_nets, vertex_weights,
                   replay_counts, replay_weights, k)
        if recomputed >= 0:
            kept[num_kept] = v
            num_kept += 1
    for i in range(num_kept):
        v = kept[i]
        apply_move(v, targets[v], partition, net_offsets, vertex_offsets, incident_nets, vertex_weights, pin_counts,
                   block_weights, k)
    return kept[:num_kept]


@numba.njit(cache=True)
def rebalance_rounds(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                     pin_counts, block_weights, max_block_weights, k, movable, cut_objective, max_rounds):
    """CPU twin of :func:`hgpart.refinement.gpu.rebalancer.rebalance_device` on ``partition`` (int32[n]),
    ``pin_counts`` (int32[m * k]) and ``block_weights`` (int64[k]), updated in place: each round rates every
    movable vertex of positive weight in an overloaded block towards its best block with room (any block), and
    per overloaded block takes the moves in order of least loss per unit of weight (then id) until its excess
    is covered; the targets accept them in that order while they stay within their bounds. Returns whether
    every block is within its bound."""
    n = vertex_offsets.shape[0] - 1
    gain, adjacent = move_scratch(k)
    excess = np.zeros(k, dtype=np.int64)
    for _ in range(max_rounds):
        overloaded = False
        for b in range(k):
            excess[b] = block_weights[b] - max_block_weights[b]
            overloaded = overloaded or excess[b] > 0
        if not overloaded:
            return True
        targets = np.full(n, -1, dtype=np.int32)
        gains = np.zeros(n, dtype=np.int64)
        count = 0
        for v in range(n):
            if movable[v] and excess[partition[v]] > 0 and vertex_weights[v] > 0:
                target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                      net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                                      cut_objective, np.bool_(False), gain, adjacent)
                if target >= 0:
                    targets[v] = target
                    gains[v] = g
                    count += 1
        if count == 0:
            return False
        candidates = np.empty(count, dtype=np.int64)
        count = 0
        for v in range(n):
            if targets[v] >= 0:
                candidates[count] = v
                count += 1
        loss = -gains[candidates].astype(np.float64) / vertex_weights[candidates].astype(np.float64)
        by_loss = stable_argsort(float_keys(loss))
        ordered = candidates[by_loss[stable_argsort(partition[candidates[by_loss]].astype(np.int64))]]
        removed = np.zeros(k, dtype=np.int64)
        incoming = np.zeros(k, dtype=np.int64)
        accepted = np.empty(count, dtype=np.int64)
        num_accepted = 0
        for v in ordered:
            source, target = partition[v], targets[v]
            if removed[source] < excess[source]:
                incoming[target] += vertex_weights[v]
                if block_weights[target] + incoming[target] <= max_block_weights[target]:
                    accepted[num_accepted] = v
                    num_accepted += 1
            removed[source] += vertex_weights[v]
        if num_accepted == 0:
            return False
        for i in range(num_accepted):
            v = accepted[i]
            apply_move(v, targets[v], partition, net_offsets, vertex_offsets, incident_nets, vertex_weights,
                       pin_counts, block_weights, k)
    for b in range(k):
        if block_weights[b] > max_block_weights[b]:
            return False
    return True


def jet_refine(hypergraph, partition, k, max_block_weights, rounds, cut_objective=False, movable=None,
               tolerance=0.25) -> np.ndarray:
    """The CPU twin of :func:`hgpart.refinement.gpu.jet.refine_device`.

    Parameters
    ----------
    hypergraph : Hypergraph
    partition : int[n]
        Balanced (not modified).
    k : int
    max_block_weights : int64[k]
    rounds : int
        At most this many rounds; a level also stops after STALE_ROUNDS rounds without a new best.
    cut_objective : bool
        Refine the cut rather than km1.
    movable : bool[n] or None
        False for fixed vertices.
    tolerance : float
        Jet's c: a vertex is a candidate when its gain is > 0 or >= -floor(c * internal).

    Returns
    -------
    int32[n]
        The best balanced partition seen (a new array).
    """
    partition = np.array(partition, dtype=np.int32)
    movable = np.ones(hypergraph.num_vertices, dtype=np.bool_) if movable is None else np.asarray(movable, np.bool_)
    max_block_weights = np.asarray(max_block_weights, dtype=np.int64)
    unbounded = unbounded_weights(k)
    pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, partition, k)
    block_weights = scatter_sum(partition, hypergraph.vertex_weights, k)
    arrays = (hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets, hypergraph.incident_nets,
              hypergraph.net_weights, hypergraph.vertex_weights, partition, pin_counts, block_weights)
    balanced = [True]

    def run_round(active):
        moved = _jet_round(*arrays, unbounded, k, active, cut_objective, tolerance)
        balanced[0] = bool((block_weights <= max_block_weights).all()) or \
            rebalance_rounds(*arrays, max_block_weights, k, movable, cut_objective, REBALANCE_ROUNDS)
        locked = movable.copy()
        locked[moved] = False
        return moved.shape[0], locked

    def objective():
        if not balanced[0]:
            return None
        return objective_from_pin_counts(hypergraph.net_offsets, hypergraph.net_weights, pin_counts, k, cut_objective)

    return best_of_rounds(run_round, objective, partition, movable, rounds)
