"""Jet-style refinement of one level on the device: the GPU twin of :func:`hgpart.refinement.jet.jet_refine`.

After M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning on
Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, for hypergraphs: rounds of many moves
at once that stay deterministic. One round (:func:`jet_round`):

1. every movable vertex that did not move in the previous round (Jet's locks) gets its best adjacent target,
   whatever its weight, the exact gain of moving it alone and its internal weight (its nets with another pin
   in its block) (:mod:`.gains`);
2. candidates are the vertices with gain > 0 or gain >= -floor(c * internal) (Jet's rule; c is
   ``tolerance``; the rating kernel applies it), ranked by (gain descending, id);
3. the afterburner recomputes each candidate's gain as if every better-ranked candidate had moved first
   (:mod:`.afterburner`);
4. moves whose recomputed gain is < 0 are dropped, the others are applied (:mod:`.moves`);
5. when a block is then over its bound, the rebalancer restores the bounds (:mod:`.rebalancer`).

The best balanced partition of all rounds is kept (:func:`hgpart.refinement.jet_rules.best_of_rounds`, shared
with the CPU twin). Rounds stop after ``rounds``, when nothing moves, or after STALE_ROUNDS rounds without a
new best. Moves are unconstrained by balance, as in Jet: refused moves into full blocks left evenly connected
inputs far behind FM (see :mod:`hgpart.refinement.jet`).

Every kernel is launched through :func:`hgpart.cuda.arrays.launch`, which passes CuPy arrays to the compiled
kernel without numba's per-launch typing and conversion. Steps on short arrays are CuPy operations.
"""

from __future__ import annotations

import numpy as np

from ...cuda.arrays import grid, launch, to_device, xp
from ...cuda.primitives import scatter, scatter_add_kernel
from ..jet_rules import best_of_rounds, unbounded_weights
from .afterburner import negated_gains_kernel, ranked_moves_kernel
from .level_state import DeviceLevelState
from .rebalancer import _rebalance_state


def block_weights_device(blocks, vertex_weights, k: int):
    """int64[k]: the weight of each block."""
    return scatter(scatter_add_kernel, blocks, vertex_weights, xp().zeros(k, dtype=xp().int64))


def balanced_on_device(blocks, vertex_weights, k: int, max_block_weights) -> bool:
    """Whether every block weighs at most its bound."""
    x = xp()
    weights = block_weights_device(blocks, vertex_weights, k)
    return bool((weights <= x.asarray(max_block_weights, dtype=x.int64)).all())


def jet_round(state: DeviceLevelState, unbounded, cut_objective: bool, active, tolerance: float, locked, movable):
    """One round (steps 1-5 of the module doc) on ``state`` (with its ``max_block_weights``). ``active``
    (int8[n]) is 0 for fixed vertices and for those moved in the previous round (Jet's locks); ``locked`` (a
    copy of the free vertices) gets 0 for each vertex the round's Jet moves move; ``unbounded`` (int64[k])
    are bounds no move reaches. Returns (Jet moves made, objective or None when a block stayed over its
    bound) on the host."""
    targets, gains, _ = state.rate(unbounded, cut_objective, True, active, tolerance)
    if state.scans_nets:
        state.afterburner_scan(cut_objective)
        moves, value = state.apply_kept(locked)
    else:
        moves, value = _ranked_moves(state, targets, gains, cut_objective, locked)
    if moves and state.overloaded():
        balanced, rebalanced_value = _rebalance_state(state, cut_objective, movable)
        value = rebalanced_value if balanced else None
    return moves, value


def _ranked_moves(state: DeviceLevelState, targets, gains, cut_objective: bool, locked):
    """Steps 2-4 on levels of big nets: the candidates ranked by a stable sort, the afterburner's replay of
    sorted (net, rank) pairs, the kept moves applied. Returns (moves, objective) on the host."""
    x = xp()
    candidates = x.flatnonzero(targets >= 0)
    count = candidates.shape[0]
    if count == 0:
        return 0, None
    ranks = x.empty(count, dtype=x.int64)
    launch(negated_gains_kernel, grid(count), candidates, gains, ranks)
    moving, destinations = x.empty(count, dtype=x.int64), x.empty(count, dtype=x.int32)
    degrees = x.empty(count, dtype=x.int64)
    launch(ranked_moves_kernel, grid(count), x.argsort(ranks, kind="stable"), candidates, targets,
           state.arrays["vertex_offsets"], moving, destinations, degrees)
    kept = state.afterburner(moving, destinations, degrees, cut_objective) >= 0
    return state.apply(moving, destinations, kept, locked)


def refine_device(level, blocks, k: int, max_block_weights, rounds: int, cut_objective: bool = False,
                  movable=None, tolerance: float = 0.25):
    """Refine the partition ``blocks`` of ``level`` by Jet-style rounds.

    Parameters
    ----------
    level : Hypergraph
        On the device, n vertices.
    blocks : device int32[n]
        Balanced; may be modified.
    k : int
    max_block_weights : int64[k] (host or device)
    rounds : int
        At most this many rounds; a level also stops after STALE_ROUNDS rounds without a new best.
    cut_objective : bool
        Refine the cut rather than km1.
    movable : device bool[n] or None
        False for fixed vertices.
    tolerance : float
        Jet's c: a vertex is a candidate when its gain is > 0 or >= -floor(c * internals[v]).

    Returns
    -------
    device int32[n]
        The best balanced partition seen.
    """
    x = xp()
    max_block_weights = x.asarray(max_block_weights, dtype=x.int64)
    unbounded = x.asarray(unbounded_weights(k))
    n = level.vertex_offsets.shape[0] - 1
    free = x.ones(n, dtype=x.int8) if movable is None else x.asarray(movable).astype(x.int8)
    free_mask = free.astype(x.bool_)
    state = DeviceLevelState(level, blocks, k, cut_objective, max_block_weights)
    objective = [state.host_status[1]]
    lock_buffers = [x.empty(n, dtype=x.int8) for _ in range(2)]

    def run_round(active):
        locked = lock_buffers[0] if active is not lock_buffers[0] else lock_buffers[1]  # not the one read now
        locked[...] = free
        moves, value = jet_round(state, unbounded, cut_objective, active, tolerance, locked, free_mask)
        objective[0] = value
        return moves, locked

    return best_of_rounds(run_round, lambda: objective[0], state.blocks, free, rounds)


def upload_blocks(blocks: np.ndarray):
    """A host partition on the device as int32."""
    return to_device(np.asarray(blocks, dtype=np.int32))
