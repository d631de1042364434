"""The refinement driver of one level, and the rebalancer that restores the balance constraint."""

from __future__ import annotations

import numba
import numpy as np

from ..config import FMConfig, LabelPropagationConfig
from ..hypergraph import scatter_sum
from ..parallel import runs_serially
from ..sorting import float_keys, stable_argsort
from .fm import fm as run_fm
from .fm import fm_passes
from .gains import apply_move, best_move, compute_pin_counts, move_scratch, pin_counts_serial
from .label_propagation import label_propagation_parallel, label_propagation_serial


def refine(hypergraph, partition, k, max_block_weights, label_propagation=LabelPropagationConfig(), fm=FMConfig(),
           cut_objective: bool = False, movable=None) -> np.ndarray:
    """Label propagation, then k-way FM, on one level (host arrays). Returns the refined partition (a new
    array).

    Small hypergraphs (and one-thread callers, such as the initial partitioning's workers) take
    :func:`refine_serial`, one call that holds no lock; the result is the same either way.

    Parameters
    ----------
    partition : int32[n]
    max_block_weights : int64[k]
        Upper bound of each block's weight; moves never exceed it.
    label_propagation : LabelPropagationConfig
    fm : FMConfig
    cut_objective : bool
        Minimise the cut instead of km1.
    movable : bool[n] or None
        False for fixed vertices.
    """
    h = hypergraph
    partition = np.array(partition, dtype=np.int32)
    movable = np.ones(h.num_vertices, dtype=np.bool_) if movable is None else movable
    max_block_weights = np.asarray(max_block_weights, dtype=np.int64)
    if runs_serially(h.num_pins):
        refine_serial(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                      h.vertex_weights, partition, max_block_weights, k, movable, cut_objective,
                      label_propagation.rounds, fm.passes, fm.fruitless_moves, fm.max_update_net_size,
                      float(fm.min_improvement))
        return partition
    pin_counts = compute_pin_counts(h.net_offsets, h.pin_vertices, partition, k)
    block_weights = scatter_sum(partition, h.vertex_weights, k)
    if label_propagation.rounds:
        label_propagation_parallel(h, partition, pin_counts, block_weights, max_block_weights, k, movable,
                                   cut_objective, label_propagation.rounds)
    if fm.passes:
        run_fm(h, partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, fm.passes,
               fm.fruitless_moves, fm.max_update_net_size, fm.min_improvement)
    return partition


@numba.njit(cache=True, nogil=True)
def refine_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                  max_block_weights, k, movable, cut_objective, lp_rounds, passes, fruitless_limit,
                  max_update_net_size, min_improvement):
    """:func:`refine` with serial loops in one call: ``partition`` (int32[n]) is refined in place. Returns
    the pin counts (int32[num_nets * k]) and block weights (int64[k]) of the result."""
    pin_counts = pin_counts_serial(net_offsets, pin_vertices, partition, k)
    block_weights = scatter_sum(partition, vertex_weights, k)
    if lp_rounds > 0:
        label_propagation_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                 vertex_weights, partition, pin_counts, block_weights, max_block_weights, k, movable,
                                 cut_objective, lp_rounds)
    if passes > 0:
        fm_passes(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                  pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes, fruitless_limit,
                  max_update_net_size, min_improvement)
    return pin_counts, block_weights


@numba.njit(cache=True, nogil=True)
def _rebalance(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
               pin_counts, block_weights, max_block_weights, k, movable, cut_objective):
    """Move vertices out of overloaded blocks, best gain per unit weight first, into blocks with room."""
    n = vertex_offsets.shape[0] - 1
    gain, adjacent = move_scratch(k)
    for _ in range(64):
        overloaded = False
        for b in range(k):
            if block_weights[b] > max_block_weights[b]:
                overloaded = True
        if not overloaded:
            return True
        candidates = np.empty(n, dtype=np.int64)
        scores = np.empty(n, dtype=np.float64)
        count = 0
        for v in range(n):
            if movable[v] and block_weights[partition[v]] > max_block_weights[partition[v]] and vertex_weights[v] > 0:
                target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets,
                                      incident_nets, net_weights, vertex_weights, pin_counts, block_weights,
                                      max_block_weights, k, cut_objective, np.bool_(False), gain, adjacent)
                if target >= 0:
                    candidates[count] = v
                    scores[count] = -g / vertex_weights[v]  # least loss per unit of weight first
                    count += 1
        if count == 0:
            return False
        order = stable_argsort(float_keys(scores[:count]))
        moved = 0
        for i in order:
            v = candidates[i]
            source = partition[v]
            if block_weights[source] <= max_block_weights[source]:
                continue
            target, g = best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                  net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                                  cut_objective, np.bool_(False), gain, adjacent)
            if target >= 0:
                apply_move(np.int64(v), np.int64(target), partition, net_offsets, vertex_offsets, incident_nets,
                           vertex_weights, pin_counts, block_weights, k)
                moved += 1
        if moved == 0:
            return False
    for b in range(k):
        if block_weights[b] > max_block_weights[b]:
            return False
    return True


def rebalance_partition(hypergraph, partition, k, max_block_weights, cut_objective=False, movable=None):
    """Restore ``block weight <= max_block_weights`` with the least loss; returns (partition, balanced)."""
    partition = np.array(partition, dtype=np.int32)
    movable = np.ones(hypergraph.num_vertices, dtype=np.bool_) if movable is None else movable
    max_block_weights = np.asarray(max_block_weights, dtype=np.int64)
    pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, partition, k)
    block_weights = scatter_sum(partition, hypergraph.vertex_weights, k)
    h = hypergraph
    balanced = _rebalance(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                          h.vertex_weights, partition, pin_counts, block_weights, max_block_weights, k, movable,
                          cut_objective)
    return partition, bool(balanced)
