"""GPU refinement of one level: pin counts Phi(e, b) on the device, exact move gains for km1 and cut,
Jet-style rounds with an afterburner, and a rebalancer (the GPU twin of :mod:`.refiner`).

One round (:func:`refine_device`) moves many vertices at once and stays deterministic:

1. ``rate_moves_kernel`` (a warp per vertex; lane l owns blocks l, l + 32, ...) gives every movable
   vertex that did not move in the previous round (Jet's locks) its best target with room and the exact
   gain of moving it alone, with the CPU's tie order (gain, then the lighter block, then the smaller id:
   :func:`.gains.best_move`), and its internal weight (its nets with another pin in its block);
2. candidates are the vertices with gain > 0 or gain >= -floor(c * internal) (Jet's rule; c is
   ``tolerance``), ranked by (gain descending, id);
3. the afterburner (``afterburner_kernel``, a thread per net) recomputes each candidate's gain as if
   every better-ranked candidate had moved first: the (net, rank) pairs of the candidates' incidences are
   sorted and each net replays its moves in rank order on its own row of Phi, adding each move's exact
   change of the net's contribution to that move's gain (Jet's afterburner, for hyperedges);
4. moves whose recomputed gain is < 0 are dropped; into each target block, moves are accepted in rank
   order while the block stays within its bound (weight leaving a block is not counted: conservative);
5. the accepted moves are applied (Phi updated by atomics); the objective is computed on the device and
   the best partition of all rounds is kept. Rounds stop after ``rounds``, when nothing moves, or after
   STALE_ROUNDS rounds without a new best.

:func:`rebalance_device` moves vertices out of overloaded blocks, least loss per unit of weight first.
:mod:`.jet` is the CPU twin (njit, the same partitions) and :mod:`.jet_model` a plain numpy model of the
same steps with brute-force gains; the tests compare all three.

Limits: k <= MAX_K = 1024; Phi takes 4 * num_nets * k bytes of device memory.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int8, int32, int64

from ..cuda.arrays import grid, to_device, xp
from ..cuda.primitives import LOW32, scatter, scatter_add_kernel
from ..cuda.warp import WARP_SIZE, warp_argmax
from .jet import best_of_rounds

MAX_K = 1024
BLOCKS_PER_LANE = 32          # MAX_K // WARP_SIZE: blocks each lane of a rating warp owns
RATE_THREADS = 128            # 4 warps per block of the rating kernel


@cuda.jit
def pin_counts_kernel(pin_nets, pin_vertices, blocks, k, pin_counts):
    """pin_counts[e * k + b] += 1 for each pin of net e in block b (a thread per pin, int32 atomics)."""
    for p in range(cuda.grid(1), pin_vertices.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(pin_counts, pin_nets[p] * k + blocks[pin_vertices[p]], 1)


@cuda.jit
def rate_moves_kernel(net_offsets, vertex_offsets, incident_nets, net_weights, vertex_weights, blocks, pin_counts,
                      block_weights, max_block_weights, k, cut_objective, only_adjacent, active, targets, gains,
                      internals):
    """targets[v], gains[v]: the best block b != blocks[v] with block_weights[b] + w(v) <= max_block_weights[b]
    (with ``only_adjacent``: a block some net of v has a pin in) and the exact gain of moving v there alone;
    -1 and 0 for inactive vertices (active[v] == 0) and those with no such block. internals[v]: the weight
    of v's nets that have another pin in v's block (sum of w(e) [Phi(e, a) > 1]; Jet's conn(v, P(v))).

    km1: gain(b) = sum over nets e of v of w(e) ([Phi(e, a) = 1] - [Phi(e, b) = 0]); cut: w(e) for each net
    that becomes uncut ([Phi(e, a) = 1 and Phi(e, b) = |e| - 1]) minus w(e) for each that becomes cut
    ([Phi(e, a) = |e|]). Nets with fewer than two pins never count. A warp per vertex: lane l reads
    Phi(e, l + 32 j) (coalesced) and keeps its blocks' sums in registers; ``warp_argmax`` picks the best.
    """
    affinity = cuda.local.array(BLOCKS_PER_LANE, int64)
    adjacent = cuda.local.array(BLOCKS_PER_LANE, int8)
    lane = cuda.threadIdx.x % WARP_SIZE
    owned = (k - lane + WARP_SIZE - 1) // WARP_SIZE
    num_vertices = vertex_offsets.shape[0] - 1
    for v in range(cuda.grid(1) // WARP_SIZE, num_vertices, cuda.gridsize(1) // WARP_SIZE):
        if active[v] == 0:
            if lane == 0:
                targets[v] = -1
                gains[v] = 0
                internals[v] = 0
            continue
        for j in range(owned):
            affinity[j] = 0
            adjacent[j] = 0
        source = blocks[v]
        common = int64(0)
        internal = int64(0)
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            size = net_offsets[e + 1] - net_offsets[e]
            if size < 2:
                continue
            weight = net_weights[e]
            base = int64(e) * k
            in_source = pin_counts[base + source]
            if in_source > 1:
                internal += weight
            if cut_objective:
                if in_source == size:
                    common -= weight
            else:
                if in_source == 1:
                    common += weight
                common -= weight
            for j in range(owned):
                b = lane + WARP_SIZE * j
                count = pin_counts[base + b]
                if count > 0 and b != source:
                    adjacent[j] = 1
                    if not cut_objective or (in_source == 1 and count == size - 1):
                        affinity[j] += weight
        best = int32(-1)
        best_gain = int64(0)
        best_priority = int64(0)
        weight = vertex_weights[v]
        for j in range(owned):
            b = lane + WARP_SIZE * j
            if b == source or (only_adjacent and adjacent[j] == 0) or \
                    block_weights[b] + weight > max_block_weights[b]:
                continue
            gain = affinity[j] + common
            priority = -block_weights[b]       # ties: the lighter block, then the smaller id
            if best < 0 or gain > best_gain or (gain == best_gain and priority > best_priority):
                best = b
                best_gain = gain
                best_priority = priority
        best_gain, best_priority, best = warp_argmax(best_gain, best_priority, best)
        if lane == 0:
            targets[v] = best
            gains[v] = best_gain if best >= 0 else 0
            internals[v] = internal


@cuda.jit
def incidence_keys_kernel(moving, vertex_offsets, incident_nets, key_offsets, keys):
    """keys[key_offsets[i] + t] = (t-th net of moving[i]) << 32 | i: the (net, rank) pairs the afterburner
    sorts (a thread per moving vertex)."""
    for i in range(cuda.grid(1), moving.shape[0], cuda.gridsize(1)):
        v = moving[i]
        start = vertex_offsets[v]
        for t in range(vertex_offsets[v + 1] - start):
            keys[key_offsets[i] + t] = (int64(incident_nets[start + t]) << 32) | i


@cuda.jit
def afterburner_kernel(keys, segment_starts, net_offsets, net_weights, moving, sources, destinations, k,
                       cut_objective, pin_counts, new_gains):
    """For each net (a segment of ``keys``, sorted by (net, rank)): replay its moves in rank order on its
    row of Phi and add to new_gains[rank] the exact change of the net's km1 or cut contribution that each
    move makes after all earlier ones; then undo the replay. A thread per net owns the row: no races."""
    for segment in range(cuda.grid(1), segment_starts.shape[0] - 1, cuda.gridsize(1)):
        first = segment_starts[segment]
        last = segment_starts[segment + 1]
        e = keys[first] >> 32
        size = net_offsets[e + 1] - net_offsets[e]
        if size < 2:
            continue
        weight = net_weights[e]
        base = e * k
        for position in range(first, last):
            i = keys[position] & LOW32
            source = sources[i]
            target = destinations[i]
            in_source = pin_counts[base + source]
            in_target = pin_counts[base + target]
            if cut_objective:
                change = (weight if in_target == size - 1 else 0) - (weight if in_source == size else 0)
            else:
                change = (weight if in_source == 1 else 0) - (weight if in_target == 0 else 0)
            if change != 0:
                cuda.atomic.add(new_gains, i, change)
            pin_counts[base + source] = in_source - 1
            pin_counts[base + target] = in_target + 1
        for position in range(first, last):
            i = keys[position] & LOW32
            pin_counts[base + sources[i]] += 1
            pin_counts[base + destinations[i]] -= 1


@cuda.jit
def apply_moves_kernel(moved, destinations, vertex_offsets, incident_nets, k, blocks, pin_counts):
    """Move moved[i] to destinations[i]: Phi(e, old) -= 1 and Phi(e, new) += 1 for each of its nets."""
    for i in range(cuda.grid(1), moved.shape[0], cuda.gridsize(1)):
        v = moved[i]
        source = blocks[v]
        target = destinations[i]
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            base = int64(incident_nets[q]) * k
            cuda.atomic.sub(pin_counts, base + source, 1)
            cuda.atomic.add(pin_counts, base + target, 1)
        blocks[v] = target


class DeviceLevelState:
    """Phi, block weights and the pin -> net map of one level and partition, on the device.

    Parameters
    ----------
    level : dict of device arrays
        net_offsets int64[m + 1], pin_vertices int32[p], vertex_offsets int64[n + 1], incident_nets int32[p],
        vertex_weights int64[n], net_weights int64[m] (as built by ``level_to_device``).
    blocks : device int32[n]
        Modified in place by the refinement.
    k : int
    """

    def __init__(self, level: dict, blocks, k: int):
        if k > MAX_K:
            raise ValueError(f"GPU refinement supports k <= {MAX_K}, got {k}")
        x = xp()
        self.level = level
        self.k = k
        self.blocks = blocks
        num_nets = level["net_offsets"].shape[0] - 1
        num_pins = level["pin_vertices"].shape[0]
        self.sizes = x.diff(level["net_offsets"])
        self.pin_nets = x.searchsorted(level["net_offsets"], x.arange(num_pins, dtype=x.int64),
                                       side="right").astype(x.int32) - 1
        self.pin_counts = x.zeros(num_nets * k, dtype=x.int32)
        if num_pins:
            pin_counts_kernel[grid(num_pins)](self.pin_nets, level["pin_vertices"], blocks, k, self.pin_counts)
        self.block_weights = block_weights_device(blocks, level["vertex_weights"], k)

    def objective(self, cut_objective: bool) -> int:
        """km1 = sum of w(e) (lambda(e) - 1), or cut = sum of w(e) over nets with lambda(e) > 1, on the device;
        nets with fewer than two pins never count."""
        x = xp()
        k = self.k
        connectivity = (self.pin_counts.reshape(-1, k) > 0).sum(axis=1) if k else x.zeros(0, dtype=x.int64)
        counted = self.sizes >= 2
        weights = self.level["net_weights"]
        if cut_objective:
            return int((weights * (counted & (connectivity > 1))).sum())
        return int((weights * x.where(counted, connectivity - 1, 0)).sum())

    def rate(self, max_block_weights, cut_objective: bool, only_adjacent: bool, active):
        """(targets int32[n], gains int64[n], internals int64[n]) of ``rate_moves_kernel`` for the vertices
        with active != 0."""
        x = xp()
        level = self.level
        n = level["vertex_offsets"].shape[0] - 1
        targets = x.full(n, -1, dtype=x.int32)
        gains = x.zeros(n, dtype=x.int64)
        internals = x.zeros(n, dtype=x.int64)
        if n:
            rate_moves_kernel[grid(n * WARP_SIZE, RATE_THREADS)](
                level["net_offsets"], level["vertex_offsets"], level["incident_nets"], level["net_weights"],
                level["vertex_weights"], self.blocks, self.pin_counts, self.block_weights, max_block_weights,
                self.k, cut_objective, only_adjacent, active, targets, gains, internals)
        return targets, gains, internals

    def apply(self, moved, destinations):
        """Move vertices ``moved`` (device int32) to ``destinations``; Phi and block weights follow."""
        if moved.shape[0]:
            apply_moves_kernel[grid(moved.shape[0])](moved, destinations, self.level["vertex_offsets"],
                                                     self.level["incident_nets"], self.k, self.blocks,
                                                     self.pin_counts)
        self.block_weights = block_weights_device(self.blocks, self.level["vertex_weights"], self.k)

    def afterburner(self, moving, destinations, cut_objective: bool):
        """Recomputed gains int64[len(moving)] of the ranked candidates ``moving`` (see the module doc)."""
        x = xp()
        level = self.level
        count = moving.shape[0]
        new_gains = x.zeros(count, dtype=x.int64)
        if count == 0:
            return new_gains
        degrees = level["vertex_offsets"][moving + 1] - level["vertex_offsets"][moving]
        key_offsets = x.zeros(count + 1, dtype=x.int64)
        x.cumsum(degrees, out=key_offsets[1:])
        total = int(key_offsets[-1])
        if total == 0:
            return new_gains
        keys = x.empty(total, dtype=x.int64)
        incidence_keys_kernel[grid(count)](moving, level["vertex_offsets"], level["incident_nets"], key_offsets,
                                           keys)
        keys = x.sort(keys)
        nets = keys >> 32
        starts = x.ones(total, dtype=x.bool_)
        starts[1:] = nets[1:] != nets[:-1]
        segment_starts = x.concatenate([x.flatnonzero(starts), x.asarray([total])]).astype(x.int64)
        sources = self.blocks[moving]
        afterburner_kernel[grid(segment_starts.shape[0] - 1)](keys, segment_starts, level["net_offsets"],
                                                               level["net_weights"], moving, sources, destinations,
                                                               self.k, cut_objective, self.pin_counts, new_gains)
        return new_gains


def block_weights_device(blocks, vertex_weights, k: int):
    """int64[k]: the weight of each block."""
    return scatter(scatter_add_kernel, blocks, vertex_weights, xp().zeros(k, dtype=xp().int64))


def balanced_on_device(blocks, vertex_weights, k: int, max_block_weights) -> bool:
    """Whether every block weighs at most its bound."""
    x = xp()
    weights = block_weights_device(blocks, vertex_weights, k)
    return bool((weights <= x.asarray(max_block_weights, dtype=x.int64)).all())


def _within_bounds(destinations, weights, ranks, block_weights, max_block_weights):
    """bool mask of the moves (given in any order, ``ranks`` their priority) accepted by the balance rule:
    into each block, in rank order, while its weight plus the weight moved in so far stays within bound."""
    x = xp()
    if destinations.shape[0] == 0:
        return x.zeros(0, dtype=x.bool_)
    order = x.lexsort(x.stack([ranks, destinations.astype(x.int64)]))
    sorted_targets = destinations[order]
    prefix = x.cumsum(weights[order])
    starts = x.ones(order.shape[0], dtype=x.bool_)
    starts[1:] = sorted_targets[1:] != sorted_targets[:-1]
    first = x.flatnonzero(starts)[x.cumsum(starts) - 1]
    before = prefix[first] - weights[order][first]
    incoming = prefix - before
    accepted_sorted = block_weights[sorted_targets] + incoming <= max_block_weights[sorted_targets]
    accepted = x.empty(order.shape[0], dtype=x.bool_)
    accepted[order] = accepted_sorted
    return accepted


def jet_round(state: DeviceLevelState, max_block_weights, cut_objective: bool, active, tolerance: float):
    """One round (steps 1-5 of the module doc) on ``state``; returns the moved vertices (device int32).
    ``active`` (int8[n]) is 0 for fixed vertices and for those moved in the previous round (Jet's locks)."""
    x = xp()
    targets, gains, internals = state.rate(max_block_weights, cut_objective, True, active)
    allowed = -x.floor(internals.astype(x.float64) * tolerance).astype(x.int64)
    candidates = x.flatnonzero((targets >= 0) & ((gains > 0) | (gains >= allowed))).astype(x.int32)
    if candidates.shape[0] == 0:
        return candidates
    order = x.lexsort(x.stack([candidates.astype(x.int64), -gains[candidates]]))
    moving = candidates[order]
    destinations = targets[moving]
    new_gains = state.afterburner(moving, destinations, cut_objective)
    kept = x.flatnonzero(new_gains >= 0)
    moving, destinations = moving[kept], destinations[kept]
    accepted = _within_bounds(destinations, state.level["vertex_weights"][moving], kept.astype(x.int64),
                              state.block_weights, max_block_weights)
    moving, destinations = moving[accepted], destinations[accepted]
    state.apply(moving, destinations)
    return moving


def refine_device(level: dict, blocks, k: int, max_block_weights, rounds: int, cut_objective: bool = False,
                  movable=None, tolerance: float = 0.25):
    """Refine the partition ``blocks`` (device int32[n], balanced) of ``level`` by Jet-style rounds; returns
    the best partition seen (a device array; ``blocks`` itself may be modified).

    Parameters
    ----------
    level : dict of device arrays (see :class:`DeviceLevelState`)
    max_block_weights : int64[k] (host or device)
    rounds : int
        At most this many rounds; a level also stops after STALE_ROUNDS rounds without a new best.
    movable : device bool[n] or None
        False for fixed vertices.
    tolerance : float
        Jet's c: a vertex is a candidate when its gain is > 0 or >= -floor(c * internals[v]).
    """
    x = xp()
    max_block_weights = x.asarray(max_block_weights, dtype=x.int64)
    n = level["vertex_offsets"].shape[0] - 1
    free = x.ones(n, dtype=x.int8) if movable is None else x.asarray(movable).astype(x.int8)
    state = DeviceLevelState(level, blocks, k)
    return best_of_rounds(lambda active: jet_round(state, max_block_weights, cut_objective, active, tolerance),
                          lambda: state.objective(cut_objective), state.blocks, free, rounds)


def rebalance_device(level: dict, blocks, k: int, max_block_weights, cut_objective: bool = False, movable=None,
                     max_rounds: int = 64):
    """Restore ``block weight <= max_block_weights`` with the least loss (GPU twin of
    :func:`.refiner.rebalance_partition`): each round rates every movable vertex of an overloaded block
    towards any block with room, and per overloaded block takes its moves in order of least loss per unit
    of weight (then id) until the excess is gone, subject to each target's room in the same order.
    Returns (blocks, balanced)."""
    x = xp()
    max_block_weights = x.asarray(max_block_weights, dtype=x.int64)
    n = level["vertex_offsets"].shape[0] - 1
    movable = x.ones(n, dtype=x.bool_) if movable is None else x.asarray(movable).astype(x.bool_)
    vertex_weights = level["vertex_weights"]
    state = DeviceLevelState(level, blocks, k)
    for _ in range(max_rounds):
        excess = state.block_weights - max_block_weights
        if not bool((excess > 0).any()):
            return state.blocks, True
        active = (movable & (excess[state.blocks] > 0) & (vertex_weights > 0)).astype(x.int8)
        targets, gains, _ = state.rate(max_block_weights, cut_objective, False, active)
        candidates = x.flatnonzero(targets >= 0).astype(x.int32)
        if candidates.shape[0] == 0:
            return state.blocks, False
        weights = vertex_weights[candidates]
        loss = -gains[candidates].astype(x.float64) / weights.astype(x.float64)
        sources = state.blocks[candidates].astype(x.int64)
        order = x.lexsort(x.stack([candidates.astype(x.int64), loss, sources]))
        ordered, ordered_sources = candidates[order], sources[order]
        prefix = x.cumsum(weights[order])
        starts = x.ones(order.shape[0], dtype=x.bool_)
        starts[1:] = ordered_sources[1:] != ordered_sources[:-1]
        first = x.flatnonzero(starts)[x.cumsum(starts) - 1]
        removed_before = prefix - weights[order] - (prefix[first] - weights[order][first])
        needed = removed_before < excess[ordered_sources]
        ranks = x.arange(order.shape[0], dtype=x.int64)[needed]
        ordered, destinations = ordered[needed], targets[ordered[needed]]
        accepted = _within_bounds(destinations, vertex_weights[ordered], ranks, state.block_weights,
                                  max_block_weights)
        if not bool(accepted.any()):
            return state.blocks, False
        state.apply(ordered[accepted], destinations[accepted])
    return state.blocks, bool((state.block_weights <= max_block_weights).all())


def upload_blocks(blocks: np.ndarray):
    """A host partition on the device as int32."""
    return to_device(np.asarray(blocks, dtype=np.int32))
