"""The bisection portfolio: every algorithm, several seeds each, each run rebalanced and refined by
2-way FM; the best run by (balanced, objective, imbalance, order of the run) wins."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..config import InitialConfig, RefinementConfig
from ..hypergraph import Hypergraph, scatter_sum
from ..parallel import in_threads
from ..refinement import rebalance_partition, refine
from .bisection import bfs_bisection, greedy_bisection, label_propagation_bisection, random_bisection


def _run(algorithm: str, hypergraph: Hypergraph, fixed_side, target0: int, seed: int, cut_objective: bool):
    h = hypergraph
    if algorithm == "random":
        return random_bisection(h.vertex_weights, fixed_side, target0, seed)
    if algorithm == "bfs":
        return bfs_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.vertex_weights,
                             fixed_side, target0, seed)
    if algorithm == "greedy":
        return greedy_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                                h.vertex_weights, fixed_side, target0, seed, cut_objective)
    if algorithm == "label-propagation":
        return label_propagation_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                                           h.net_weights, h.vertex_weights, fixed_side, target0, seed)
    raise ValueError(f"unknown initial partitioning algorithm {algorithm!r}")


def objective_value(hypergraph: Hypergraph, partition, k: int, cut_objective: bool) -> int:
    from ..metrics import evaluate

    metrics = evaluate(hypergraph, partition, k)
    return metrics.cut if cut_objective else metrics.km1


def bisect(hypergraph: Hypergraph, max_weights, target0: int, fixed_side, seed: int, config: InitialConfig,
           refinement: RefinementConfig, cut_objective: bool, workers: int = 1) -> np.ndarray:
    """Best bipartition (int32[n], sides 0/1) with side weights at most ``max_weights`` (int64[2]) if any run
    reaches that; otherwise the least imbalanced run.

    Every run is rebalanced and refined by label propagation; the ``fm_candidates`` best then get FM.
    On hypergraphs with many pins, ``config.pin_budget`` caps the runs and FM candidates. With
    ``workers`` > 1 the runs, then the FM candidates, go through that many threads (one numba thread each);
    the choice depends only on the runs' order, so the result does not depend on ``workers``.
    """
    max_weights = np.asarray(max_weights, dtype=np.int64)
    movable = fixed_side < 0
    light = replace(refinement, fm_passes=0)
    affordable = config.pin_budget // max(1, hypergraph.num_pins)  # runs (and FM candidates) within budget
    runs = max(1, min(config.runs, affordable // max(1, len(config.algorithms))))
    fm_candidates = max(1, min(config.fm_candidates, affordable))

    def one_run(run, algorithm):
        run_seed = (seed * 7919 + run * 104729 + 17) % (2**31 - 1)
        partition = _run(algorithm, hypergraph, fixed_side, target0, run_seed, cut_objective)
        partition, balanced = rebalance_partition(hypergraph, partition, 2, max_weights, cut_objective, movable)
        if balanced:
            partition = refine(hypergraph, partition, 2, max_weights, light, cut_objective, movable)
        return _key(hypergraph, partition, balanced, max_weights, cut_objective, run), partition

    def with_fm(key, partition):
        partition = refine(hypergraph, partition, 2, max_weights, refinement, cut_objective, movable)
        return _key(hypergraph, partition, True, max_weights, cut_objective, key[-1]), partition

    jobs = list(enumerate(algorithm for _ in range(runs) for algorithm in config.algorithms))
    candidates = sorted(in_threads(one_run, jobs, workers), key=lambda item: item[0])
    best_key, best = candidates[0]
    balanced = [candidate for candidate in candidates[:fm_candidates] if not candidate[0][0]]  # FM cannot repair
    for key, partition in in_threads(with_fm, balanced, workers):
        if key < best_key:
            best_key, best = key, partition
    return best


def _key(hypergraph, partition, balanced, max_weights, cut_objective, run):
    """Order of runs: balanced first, then objective, then how full the fuller side is, then run order."""
    weights = scatter_sum(partition, hypergraph.vertex_weights, 2)
    overload = float(np.max(weights / np.maximum(max_weights, 1)))
    return (not balanced, objective_value(hypergraph, partition, 2, cut_objective), overload, run)
