"""The rebalancer on the device: moves vertices out of overloaded blocks, least loss per unit of weight
first, until every block is within its bound (the GPU twin of :func:`hgpart.refinement.jet.rebalance_rounds`).

The rounds of M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning
on Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, move vertices regardless of
balance; after a round that leaves a block over its bound, this rebalancer restores the bounds. Each round is
a few kernels and CuPy operations and one read of the device (:func:`_rebalance_state`).
"""

from __future__ import annotations

from numba import cuda, float64, int8, int32, int64

from ...cuda.arrays import cached_kernel, grid, launch, xp
from ...cuda.primitives import lower_bound, stable_order_by_small_key
from ...cuda.warp import WARP_SIZE, warp_all, warp_broadcast, warp_count, warp_inclusive_scan
from ..jet_rules import REBALANCE_ROUNDS
from .level_state import DeviceLevelState


@cached_kernel
def rebalance_active_kernel(blocks, vertex_weights, movable, block_weights, max_block_weights, active):
    """active[v] = 1 for the movable vertices of positive weight in a block over its bound, else 0: the
    vertices a rebalancing round rates."""
    for v in range(cuda.grid(1), blocks.shape[0], cuda.gridsize(1)):
        block = blocks[v]
        over = block_weights[block] > max_block_weights[block]
        active[v] = int8(1) if movable[v] and vertex_weights[v] > 0 and over else int8(0)


@cached_kernel
def rebalance_keys_kernel(targets, gains, vertex_weights, blocks, prefix, k, candidates, losses, sources):
    """The candidates (targets[v] >= 0) in ascending order, compacted by the inclusive ``prefix`` of their flags,
    with the sort keys of each: its loss per unit of weight, -gain / weight (float64), and its source block.
    The slots after the last candidate (there are at most n slots, maybe more than candidates) get candidate
    -1 and source ``k``, which sorts after every block."""
    n = targets.shape[0]
    count = prefix[n - 1] if n else 0
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        if targets[i] >= 0:
            slot = prefix[i] - 1
            candidates[slot] = i
            losses[slot] = -float64(gains[i]) / float64(vertex_weights[i])
            sources[slot] = blocks[i]
        if count <= i < candidates.shape[0]:
            candidates[i] = -1
            losses[i] = 0.0
            sources[i] = int32(k)


@cached_kernel
def rebalance_order_kernel(by_loss, by_source, candidates, sources, targets, vertex_weights, moving, moving_sources,
                           destinations, moving_weights):
    """The candidates in the order (source, then loss, then id), ``by_loss[by_source]``: their ids, sources,
    targets and weights (the empty slots: -1, k, -1, 0)."""
    for i in range(cuda.grid(1), by_source.shape[0], cuda.gridsize(1)):
        position = by_loss[by_source[i]]
        v = candidates[position]
        moving[i] = v
        moving_sources[i] = sources[position]
        destinations[i] = targets[v] if v >= 0 else int32(-1)
        moving_weights[i] = vertex_weights[v] if v >= 0 else int64(0)


@cached_kernel
def rebalance_needed_kernel(moving_sources, moving_weights, block_weights, max_block_weights, run_starts,
                            needed_counts):
    """A warp per block s: the moves s needs, the first of its run in ``moving_sources`` (sorted) while the
    weight given up before each is below s's excess. They are a prefix of the run: its start and length go
    to run_starts[s] and needed_counts[s] (0 for blocks within their bounds). The warp stops once the excess
    is covered."""
    lane = cuda.threadIdx.x % WARP_SIZE
    count = moving_sources.shape[0]
    for source in range(cuda.grid(1) // WARP_SIZE, block_weights.shape[0], cuda.gridsize(1) // WARP_SIZE):
        start = lower_bound(moving_sources, source)
        excess = block_weights[source] - max_block_weights[source]
        given = int64(0)   # weight of the run's moves before this chunk
        needed = 0
        chunk = start
        while excess > 0 and given < excess and chunk < count:
            i = chunk + lane
            in_run = i < count and moving_sources[i] == source
            weight = moving_weights[i] if in_run else int64(0)
            inclusive = warp_inclusive_scan(weight, lane)
            needed += warp_count(in_run and given + inclusive - weight < excess)
            if not warp_all(in_run):
                break
            given += warp_broadcast(inclusive, WARP_SIZE - 1)
            chunk += WARP_SIZE
        if lane == 0:
            run_starts[source] = start
            needed_counts[source] = needed


@cached_kernel
def rebalance_accept_kernel(run_starts, needed_counts, destinations, moving_weights, block_weights,
                            max_block_weights, accepted):
    """A warp per target block t: over the needed moves (the ranges of ``rebalance_needed_kernel``, in order of
    source, then rank), accepted[i] for those into t while t, with the weight of the needed moves into it up to
    this one, stays within its bound (``accepted`` zero on entry)."""
    lane = cuda.threadIdx.x % WARP_SIZE
    k = block_weights.shape[0]
    for target in range(cuda.grid(1) // WARP_SIZE, k, cuda.gridsize(1) // WARP_SIZE):
        room = max_block_weights[target] - block_weights[target]
        incoming = int64(0)
        for source in range(k):
            needed = needed_counts[source]
            first = run_starts[source]
            for offset in range(0, needed, WARP_SIZE):
                mine = offset + lane < needed and destinations[first + offset + lane] == target
                weight = moving_weights[first + offset + lane] if mine else int64(0)
                inclusive = warp_inclusive_scan(weight, lane)
                if mine:
                    accepted[first + offset + lane] = incoming + inclusive <= room
                incoming += warp_broadcast(inclusive, WARP_SIZE - 1)


def rebalance_device(level, blocks, k: int, max_block_weights, cut_objective: bool = False, movable=None,
                     max_rounds: int = REBALANCE_ROUNDS):
    """Restore ``block weight <= max_block_weights`` with the least loss (GPU twin of
    :func:`hgpart.refinement.refiner.rebalance_partition`; :func:`hgpart.refinement.jet.rebalance_rounds` is
    its CPU twin): each round rates every movable vertex of an overloaded block towards any block with room,
    and per overloaded block takes its moves in order of least loss per unit of weight (then id) until the
    excess is gone, subject to each target's room in the same order.

    Parameters
    ----------
    level : Hypergraph
        On the device, n vertices.
    blocks : device int32[n]
        Modified in place.
    k : int
    max_block_weights : int64[k] (host or device)
    cut_objective : bool
        Lose the least cut rather than km1.
    movable : device bool[n] or None
        False for fixed vertices.
    max_rounds : int

    Returns
    -------
    blocks : device int32[n]
    balanced : bool
        Whether every block is within its bound.
    """
    x = xp()
    n = level.vertex_offsets.shape[0] - 1
    movable = x.ones(n, dtype=x.bool_) if movable is None else x.asarray(movable).astype(x.bool_)
    state = DeviceLevelState(level, blocks, k, cut_objective, max_block_weights)
    balanced, _ = _rebalance_state(state, cut_objective, movable, max_rounds)
    return state.blocks, balanced


def _rebalance_state(state: DeviceLevelState, cut_objective: bool, movable, max_rounds: int = REBALANCE_ROUNDS):
    """:func:`rebalance_device` on ``state`` (modified in place; the bounds are its ``max_block_weights``):
    (balanced, objective) on the host. A round (the steps of :func:`hgpart.refinement.jet.rebalance_rounds`)
    is a few kernels and CuPy operations on the device and one read, the moves made, at its end:

    - the vertices to rate (those of positive weight in an overloaded block) and their ratings towards any
      block with room;
    - the candidates compacted into slots in ascending order (``rebalance_keys_kernel``; as many slots as
      the overloaded blocks weigh, at most n, known on the host without reading the device: each candidate
      weighs at least 1), the empty slots last;
    - ordered by source, loss per unit of weight and id: a stable sort by loss (CuPy), then the stable
      counting sort by source of :func:`hgpart.cuda.primitives.stable_order_by_small_key`;
    - the moves each source needs to shed its excess, a prefix of its run (``rebalance_needed_kernel``, a
      warp per source block), and of those, the ones whose target still has room in that order
      (``rebalance_accept_kernel``, a warp per target block).

    Nothing is compacted by ``flatnonzero`` (which would read the device) and nothing is sorted by target,
    so the host's time a round stays small after most Jet rounds."""
    x = xp()
    arrays = state.arrays
    max_block_weights = state.max_block_weights
    vertex_weights = arrays["vertex_weights"]
    value = state.host_status[1]
    n = state.targets.shape[0]
    k = state.k
    active = x.empty(n, dtype=x.int8)
    run_starts, needed_counts = x.empty(k, dtype=x.int64), x.empty(k, dtype=x.int64)
    for _ in range(max_rounds):
        overloaded_weight = state.overloaded_weight()
        if not overloaded_weight:
            return True, value
        slots = min(n, overloaded_weight)
        launch(rebalance_active_kernel, grid(n), arrays["blocks"], vertex_weights, movable, arrays["block_weights"],
               max_block_weights, active)
        targets, gains, _ = state.rate(max_block_weights, cut_objective, False, active)
        candidates, losses = x.empty(slots, dtype=x.int64), x.empty(slots, dtype=x.float64)
        sources = x.empty(slots, dtype=x.int32)
        launch(rebalance_keys_kernel, grid(n), targets, gains, vertex_weights, arrays["blocks"],
               x.cumsum(targets >= 0, dtype=x.int64), k, candidates, losses, sources)
        by_loss = x.argsort(losses, kind="stable")
        by_source = stable_order_by_small_key(sources[by_loss], k + 1)
        moving, destinations = x.empty(slots, dtype=x.int64), x.empty(slots, dtype=x.int32)
        moving_sources, moving_weights = x.empty(slots, dtype=x.int32), x.empty(slots, dtype=x.int64)
        launch(rebalance_order_kernel, grid(slots), by_loss, by_source, candidates, sources, targets, vertex_weights,
               moving, moving_sources, destinations, moving_weights)
        launch(rebalance_needed_kernel, grid(k * WARP_SIZE), moving_sources, moving_weights, arrays["block_weights"],
               max_block_weights, run_starts, needed_counts)
        accepted = x.zeros(slots, dtype=x.bool_)
        launch(rebalance_accept_kernel, grid(k * WARP_SIZE), run_starts, needed_counts, destinations, moving_weights,
               arrays["block_weights"], max_block_weights, accepted)
        moves, value = state.apply(moving, destinations, accepted)
        if moves == 0:
            return False, value
    return not state.overloaded(), value
