"""The round loop and constants both Jet twins follow, written once: the CPU twin (:mod:`.jet`, numba njit)
and the GPU refinement (:mod:`hgpart.refinement.gpu`) call these, so that both keep the same partitions.

After M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning on
Graphics Processing Units", SIAM Journal on Scientific Computing, 2024: rounds of unconstrained moves (bounds
no move reaches, :func:`unbounded_weights`), a vertex moved in one round locked for the next, and the best
balanced partition of all rounds kept (:func:`best_of_rounds`).
"""

from __future__ import annotations

import numpy as np

# Rounds without a new best before a level stops (CPU twin, GPU and model alike): 3 rather than 4 leaves km1
# about the same in fewer rounds.
STALE_ROUNDS = 3

# Rounds of the rebalancer after a Jet round that left a block over its bound.
REBALANCE_ROUNDS = 64


def unbounded_weights(k: int) -> np.ndarray:
    """int64[k] block bounds that no move reaches: Jet's moves are rated and made regardless of balance."""
    return np.full(k, np.iinfo(np.int64).max // 2, dtype=np.int64)


def best_of_rounds(run_round, objective, partition, free, rounds: int):
    """The round loop of the CPU twin and of the GPU (host or device arrays alike).

    Parameters
    ----------
    run_round : callable
        ``run_round(active)`` moves vertices of ``partition`` in place and returns how many it moved and the
        next round's ``active``: ``free`` without the vertices it moved, which are locked for a round.
    objective : callable
        ``objective()``: the partition's km1 or cut now, or None when it is not balanced.
    partition : int32[n] (host or device)
    free : bool[n] or int8[n] (host or device)
        The movable vertices.
    rounds : int
        At most this many rounds.

    Returns
    -------
    int32[n]
        A copy of the partition with the smallest ``objective()`` seen; the loop stops after ``rounds``, when
        nothing moves, or after STALE_ROUNDS rounds without a new best.
    """
    best_objective, best, stale = objective(), partition.copy(), 0
    active = free
    for _ in range(rounds):
        moves, active = run_round(active)
        if moves == 0:
            break
        value = objective()
        if value is not None and value < best_objective:
            best_objective, best, stale = value, partition.copy(), 0
        else:
            stale += 1
            if stale >= STALE_ROUNDS:
                break
    return best
