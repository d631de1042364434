"""The bisection portfolio: every algorithm, several seeds each, each run rebalanced and refined by
2-way FM; the best run by (balanced, objective, imbalance, order of the run) wins."""

from __future__ import annotations

import numba
import numpy as np

from ..config import FMConfig, InitialConfig, LabelPropagationConfig
from ..hypergraph import Hypergraph, scatter_sum
from ..parallel import in_threads
from ..refinement.gains import objective_from_pin_counts, pin_counts_serial
from ..refinement.label_propagation import label_propagation_serial
from ..refinement.refiner import _rebalance, refine_serial
from .bisection import bfs_bisection, greedy_bisection, label_propagation_bisection, random_bisection


ALGORITHMS = ("random", "bfs", "greedy", "label-propagation", "greedy-max-net")


@numba.njit(cache=True, nogil=True)
def _portfolio_run(algorithm, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                   fixed_side, movable, target0, max_weights, seed, cut_objective, lp_rounds):
    """One run of the portfolio in one call: flat bisection by ``ALGORITHMS[algorithm]``, the rebalancer,
    then (if it balanced) label propagation. Returns (int32[n] sides, balanced, objective, overload), the
    overload being the largest side weight / max weight."""
    if algorithm == 0:
        partition = random_bisection(vertex_weights, fixed_side, target0, seed)
    elif algorithm == 1:
        partition = bfs_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, vertex_weights,
                                  fixed_side, target0, seed)
    elif algorithm == 2 or algorithm == 4:
        partition = greedy_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                     vertex_weights, fixed_side, target0, seed, cut_objective, algorithm == 4)
    else:
        partition = label_propagation_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                                net_weights, vertex_weights, fixed_side, target0, seed)
    k = np.int64(2)  # k as a runtime int64: a literal 2 would compile the k-way refiners a second time
    pin_counts = pin_counts_serial(net_offsets, pin_vertices, partition, k)
    block_weights = scatter_sum(partition, vertex_weights, k)
    balanced = _rebalance(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                          partition, pin_counts, block_weights, max_weights, k, movable, cut_objective)
    if balanced and lp_rounds > 0:
        label_propagation_serial(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                 vertex_weights, partition, pin_counts, block_weights, max_weights, k, movable,
                                 cut_objective, lp_rounds)
    objective = objective_from_pin_counts(net_offsets, net_weights, pin_counts, k, cut_objective)
    return partition, balanced, objective, _overload(block_weights, max_weights)


@numba.njit(cache=True, nogil=True)
def _overload(block_weights, max_weights):
    overload = 0.0
    for side in range(block_weights.shape[0]):
        overload = max(overload, block_weights[side] / max(max_weights[side], 1))
    return overload


@numba.njit(cache=True, inline="always")
def _key_before(unbalanced, objective, overload, run, other_unbalanced, other_objective, other_overload, other_run):
    """Whether the key (unbalanced, objective, overload, run) orders before the other one (as tuples)."""
    if unbalanced != other_unbalanced:
        return other_unbalanced
    if objective != other_objective:
        return objective < other_objective
    if overload != other_overload:
        return overload < other_overload
    return run < other_run


@numba.njit(cache=True, nogil=True)
def _repeats_earlier(partitions, objectives, order, i):
    """Whether run ``order[i]`` has the same partition as a run before it in ``order``: FM, which is
    deterministic, would make the same of it, and the earlier run wins the tie."""
    run = order[i]
    for j in range(i):
        earlier = order[j]
        if objectives[earlier] == objectives[run]:
            same = True
            for v in range(partitions.shape[1]):
                if partitions[earlier, v] != partitions[run, v]:
                    same = False
                    break
            if same:
                return True
    return False


@numba.njit(cache=True, nogil=True)
def _portfolio_serial(codes, run_seeds, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                      vertex_weights, fixed_side, movable, target0, max_weights, cut_objective, lp_rounds,
                      fm_candidates, fm_passes, fruitless_limit, max_update_net_size, min_improvement):
    """:func:`bisect` on one thread in one call (one release of the GIL for the whole portfolio, so that the
    recursion's workers do not queue for it between runs): run i is algorithm ``codes[i % len(codes)]``
    with seed ``run_seeds[i]``; the runs are ordered by (unbalanced, objective, overload, run), the balanced
    ones among the first ``fm_candidates`` get FM, and the least key wins. int32[n] sides."""
    count = run_seeds.shape[0]
    n = vertex_weights.shape[0]
    k = np.int64(2)  # see _portfolio_run
    partitions = np.empty((count, n), dtype=np.int32)
    unbalanced = np.empty(count, dtype=np.bool_)
    objectives = np.empty(count, dtype=np.int64)
    overloads = np.empty(count, dtype=np.float64)
    for run in range(count):
        partition, balanced, objective, overload = _portfolio_run(
            codes[run % codes.shape[0]], net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
            vertex_weights, fixed_side, movable, target0, max_weights, run_seeds[run], cut_objective, lp_rounds)
        partitions[run] = partition
        unbalanced[run] = not balanced
        objectives[run] = objective
        overloads[run] = overload
    order = np.arange(count)
    for i in range(1, count):  # insertion sort: a few dozen runs
        run = order[i]
        j = i
        while j > 0 and _key_before(unbalanced[run], objectives[run], overloads[run], run, unbalanced[order[j - 1]],
                                    objectives[order[j - 1]], overloads[order[j - 1]], order[j - 1]):
            order[j] = order[j - 1]
            j -= 1
        order[j] = run
    best = partitions[order[0]].copy()
    best_unbalanced, best_objective, best_overload, best_run = (unbalanced[order[0]], objectives[order[0]],
                                                                overloads[order[0]], order[0])
    for i in range(min(fm_candidates, count)):
        run = order[i]
        if unbalanced[run] or _repeats_earlier(partitions, objectives, order, i):  # FM cannot repair; or FM
            continue                                                               # would repeat itself
        partition = partitions[run].copy()
        pin_counts, block_weights = refine_serial(
            net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
            max_weights, k, movable, cut_objective, lp_rounds, fm_passes, fruitless_limit, max_update_net_size,
            min_improvement)
        objective = objective_from_pin_counts(net_offsets, net_weights, pin_counts, k, cut_objective)
        overload = _overload(block_weights, max_weights)
        if _key_before(False, objective, overload, run, best_unbalanced, best_objective, best_overload, best_run):
            best = partition
            best_unbalanced, best_objective, best_overload, best_run = False, objective, overload, run
    return best


def bisect(hypergraph: Hypergraph, max_weights, target0: int, fixed_side, seed: int, config: InitialConfig,
           label_propagation: LabelPropagationConfig, fm: FMConfig, cut_objective: bool,
           workers: int = 1) -> np.ndarray:
    """Best bipartition (int32[n], sides 0/1) with side weights at most ``max_weights`` (int64[2]) if any run
    reaches that; otherwise the least imbalanced run.

    Every run is rebalanced and refined by label propagation; the ``fm_candidates`` best then get FM.
    On hypergraphs with many pins, ``config.pin_budget`` caps the runs and FM candidates. With
    ``workers`` > 1 the runs, then the FM candidates, go through that many threads (one numba thread each)
    where the hypergraph has at least ``config.pins_per_thread`` pins; otherwise everything is one call
    (:func:`_portfolio_serial`), which takes the GIL once instead of once per run and FM candidate: the
    recursion's threads would otherwise queue for the GIL after every njit call, and small sub-problems are
    not worth threads. The choice depends only on the runs' order, so the result does not depend on
    ``workers``.
    """
    max_weights = np.asarray(max_weights, dtype=np.int64)
    movable = fixed_side < 0
    affordable = config.pin_budget // max(1, hypergraph.num_pins)  # runs (and FM candidates) within budget
    runs = max(1, min(config.runs, affordable // max(1, len(config.algorithms))))
    fm_candidates = max(1, min(config.fm_candidates, affordable))

    h = hypergraph
    codes = [ALGORITHMS.index(algorithm) if algorithm in ALGORITHMS else None for algorithm in config.algorithms]
    if None in codes:
        raise ValueError(f"unknown initial partitioning algorithm {config.algorithms[codes.index(None)]!r}")

    # run i is repetition i // len(codes) of algorithm codes[i % len(codes)]; its seed depends on that pair
    # only, so adding an algorithm to the portfolio leaves the other algorithms' runs as they were
    run_seeds = np.array([(seed * 7919 + (run // len(codes)) * 104729 + codes[run % len(codes)] * 1299709 + 17)
                          % (2**31 - 1) for run in range(runs * len(codes))], dtype=np.int64)
    if workers <= 1 or h.num_pins < config.pins_per_thread:
        return _portfolio_serial(np.array(codes, dtype=np.int64), run_seeds, h.net_offsets, h.pin_vertices,
                                 h.vertex_offsets, h.incident_nets, h.net_weights, h.vertex_weights, fixed_side,
                                 movable, target0, max_weights, cut_objective, label_propagation.rounds, fm_candidates,
                                 fm.passes, fm.fruitless_moves, fm.max_update_net_size,
                                 float(fm.min_improvement))

    # runs are ordered by (unbalanced, objective, how full the fuller side is, run order)
    def one_run(run, code):
        partition, balanced, objective, overload = _portfolio_run(
            code, h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
            h.vertex_weights, fixed_side, movable, target0, max_weights, run_seeds[run], cut_objective,
            label_propagation.rounds)
        return (not balanced, int(objective), overload, run), partition

    def with_fm(key, partition):
        partition = partition.copy()
        pin_counts, block_weights = refine_serial(
            h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights, h.vertex_weights,
            partition, max_weights, 2, movable, cut_objective, label_propagation.rounds, fm.passes,
            fm.fruitless_moves, fm.max_update_net_size, float(fm.min_improvement))
        objective = objective_from_pin_counts(h.net_offsets, h.net_weights, pin_counts, 2, cut_objective)
        return (False, int(objective), _overload(block_weights, max_weights), key[-1]), partition

    jobs = list(enumerate(code for _ in range(runs) for code in codes))
    candidates = sorted(in_threads(one_run, jobs, workers), key=lambda item: item[0])
    best_key, best = candidates[0]
    balanced, seen = [], set()  # FM cannot repair the others; a partition seen before would come out the same
    for key, partition in candidates[:fm_candidates]:
        if not key[0] and partition.tobytes() not in seen:
            seen.add(partition.tobytes())
            balanced.append((key, partition))
    for key, partition in in_threads(with_fm, balanced, workers):
        if key < best_key:
            best_key, best = key, partition
    return best

