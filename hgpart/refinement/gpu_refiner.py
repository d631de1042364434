"""GPU refinement of one level: pin counts Phi(e, b) on the device, exact move gains for km1 and cut,
Jet-style rounds with an afterburner, and a rebalancer (the GPU twin of :mod:`.refiner`).

One round (:func:`refine_device`) moves many vertices at once and stays deterministic:

1. ``rate_moves_kernel`` (a group of lanes per vertex: the least power of two >= k / 8, at most a warp; lane
   l of a group owns blocks l, l + group, ...; for vertices of more than HEAVY_DEGREE nets,
   ``rate_heavy_chunks_kernel``, a block of such groups per chunk of their nets, and
   ``pick_heavy_moves_kernel``) gives every movable vertex that did not move in the
   previous round (Jet's locks) its best adjacent target, whatever its weight, and the exact gain of
   moving it alone, with the CPU's tie order (gain, then the lighter block, then the smaller id:
   :func:`.gains.best_move`), and its internal weight (its nets with another pin in its block);
2. candidates are the vertices with gain > 0 or gain >= -floor(c * internal) (Jet's rule; c is
   ``tolerance``; the rating kernel applies it), ranked by (gain descending, id) by a stable sort;
3. the afterburner recomputes each candidate's gain as if every better-ranked candidate had moved first
   (Jet's afterburner, for hyperedges). On levels of small nets and no big neighbourhoods
   (``SCAN_MEAN_NET_SIZE``, ``SCAN_MAX_PIN_VISITS``), ``afterburner_scan_kernel`` (a thread per vertex)
   reads, for each net of a candidate, which of its pins are better-ranked candidates and where they go,
   which gives the net's row of Phi after their moves: no sort and no list of candidates, so the round
   reads the device once, at its end. On other levels the (net, rank) pairs of the candidates' incidences
   are sorted and each net replays its moves in rank order on its own row of Phi (``afterburner_kernel``, a
   thread per net), adding each move's exact change of the net's contribution to that move's gain. Both
   give the same gains;
4. moves whose recomputed gain is < 0 are dropped, the others are applied (``apply_kept_kernel`` or
   ``apply_moves_kernel``: Phi, block weights and the objective updated by atomics, the objective from the
   old values they return);
5. when a block is then over its bound, the rebalancer below restores the bounds. The best balanced
   partition of all rounds is kept. Rounds stop after ``rounds``, when nothing moves, or after
   STALE_ROUNDS rounds without a new best.

Moves are unconstrained by balance, as in Jet: refused moves into full blocks left evenly connected
inputs far behind FM (see :mod:`.jet`).

Every kernel is launched through :func:`.cuda.arrays.launch`, which passes CuPy arrays to the compiled
kernel without numba's per-launch typing and conversion. Steps on short arrays are CuPy operations.

:func:`rebalance_device` moves vertices out of overloaded blocks, least loss per unit of weight first.
:mod:`.jet` is the CPU twin (njit, the same partitions) and :mod:`.jet_model` a plain numpy model of the
same steps with brute-force gains; the tests compare all three.

Limits: k <= MAX_K = 1024; Phi takes 4 * num_nets * k bytes of device memory.
"""

from __future__ import annotations

import math

import numpy as np
from numba import cuda, float64, int8, int32, int64

from ..cuda.arrays import cached_kernel, grid, launch, to_device, to_host, xp
from ..cuda.primitives import (LOW32, lower_bound, scatter, scatter_add_kernel, segment_items,
                               stable_order_by_small_key)
from ..cuda.warp import (WARP_SIZE, warp_all, warp_argmax, warp_broadcast, warp_count, warp_inclusive_scan,
                         warp_sum)
from .jet import REBALANCE_ROUNDS, best_of_rounds, unbounded_weights

MAX_K = 1024
BLOCKS_PER_LANE = 32          # MAX_K // WARP_SIZE: the most blocks a lane of a rating group owns
RATED_BLOCKS_PER_LANE = 8     # blocks each lane of a rating group owns, up to k = 256 (rating_group)
RATE_THREADS = 128            # 4 warps per block of the rating kernels
HEAVY_DEGREE = 256            # vertices with more nets are rated in chunks (rate_heavy_chunks_kernel)
HEAVY_CHUNK_ROUNDS = 64       # nets per group of lanes in a chunk: a block rates 64 * RATE_THREADS / group nets
# The afterburner scans each candidate's nets (afterburner_scan_kernel: no sort, no list of candidates, no read
# of the device) on levels whose nets have at most this many pins on average, weighted by pins (the sum of
# |e|^2 over the nets of >= 2 pins, over the pins); levels of bigger nets replay sorted (net, rank) pairs.
SCAN_MEAN_NET_SIZE = 64
# ... and where no vertex's nets have more than this many pins in all (what the scan reads for one candidate): the
# hubs of long-tailed inputs have about a million (1.07M on long-tailed 30k), and their one thread (or warp) held
# up every round (long-tailed 300k k=2, H100: a Jet round took 136.6 ms, 15.3 ms with the sorted replay); grids
# have at most 66 on every level, evenly 1M up to 1,966 on the input (more on its coarser levels).
SCAN_MAX_PIN_VISITS = 1024


def rating_group(k: int) -> int:
    """Lanes that rate one vertex: the least power of two >= k / RATED_BLOCKS_PER_LANE, at most a warp (k = 32:
    four lanes of eight blocks each, eight vertices a warp). The rating waits on chains of loads (a net's
    offsets, weight and Phi(e, source)) that every lane of a group repeats, so fewer lanes per vertex keep
    more vertices in flight. On grid 1M (H100, one process, CUPTI) the rating kernel took 9.5 / 45.1 / 142.7 ms
    at k = 8 / 32 / 128 with four blocks a lane, 7.9 / 32.3 / 91.7 ms with eight, 14.0 / 73.1 / 142.6 ms with
    two; a warp per vertex at k = 32 took 128.9 ms."""
    group = 1
    while group < min(-(-k // RATED_BLOCKS_PER_LANE), WARP_SIZE):
        group *= 2
    return group


@cached_kernel
def pin_counts_kernel(pin_nets, pin_vertices, blocks, k, pin_counts):
    """pin_counts[e * k + b] += 1 for each pin of net e in block b (a thread per pin, int32 atomics)."""
    for p in range(cuda.grid(1), pin_vertices.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(pin_counts, pin_nets[p] * k + blocks[pin_vertices[p]], 1)


@cuda.jit(device=True, inline=True)
def _rate_net(e, source, lane, group, owned, k, cut_objective, net_offsets, net_weights, pin_counts, affinity,
              adjacent):
    """Net e of a vertex in block ``source``, seen by lane ``lane`` of its rating group: adds w(e) to
    affinity[j] for the lane's blocks b = lane + group j that the move to b would gain (km1: b has a pin of
    e; cut: e would become uncut) and marks adjacent[j]; returns the parts that do not depend on b: (the
    common gain, w(e) when e has another pin in ``source``). Nets with fewer than two pins: (0, 0). A net
    whose pins are all in ``source`` reads one entry of Phi, not its row."""
    size = net_offsets[e + 1] - net_offsets[e]
    if size < 2:
        return int64(0), int64(0)
    weight = net_weights[e]
    base = int64(e) * k
    in_source = pin_counts[base + source]
    internal = weight if in_source > 1 else int64(0)
    if cut_objective:
        common = -weight if in_source == size else int64(0)
    else:
        common = (weight if in_source == 1 else int64(0)) - weight
    if in_source == size:  # no pin elsewhere (most nets): no block to mark, and the row need not be read
        return common, internal
    for j in range(owned):
        b = lane + group * j
        count = pin_counts[base + b]
        if count > 0 and b != source:
            adjacent[j] = 1
            if not cut_objective or (in_source == 1 and count == size - 1):
                affinity[j] += weight
    return common, internal


@cuda.jit(device=True, inline=True)
def _jet_candidate(best, best_gain, internal, tolerance):
    """``best``, or -1 when ``tolerance`` >= 0 and the move is not a Jet candidate: gain <= 0 and
    gain < -floor(tolerance * internal)."""
    if tolerance >= 0 and best >= 0 and best_gain <= 0 and \
            best_gain < -int64(math.floor(float64(internal) * tolerance)):
        return int32(-1)
    return best


@cuda.jit(device=True, inline=True)
def _consider(b, gain, allowed, source, weight, block_weights, max_block_weights, best, best_gain, best_priority):
    """(best, best_gain, best_priority) after offering block b with ``gain``: skipped when it is the source, not
    ``allowed`` (only_adjacent and no pin there) or without room for ``weight``; ties go to the lighter
    block, then (in ``warp_argmax``) the smaller id."""
    if b == source or not allowed or block_weights[b] + weight > max_block_weights[b]:
        return best, best_gain, best_priority
    priority = -block_weights[b]
    if best < 0 or gain > best_gain or (gain == best_gain and priority > best_priority):
        return int32(b), gain, priority
    return best, best_gain, best_priority


@cached_kernel
def rate_moves_kernel(net_offsets, vertex_offsets, incident_nets, net_weights, vertex_weights, blocks, pin_counts,
                      block_weights, max_block_weights, k, group, cut_objective, only_adjacent, active, tolerance,
                      targets, gains, internals):
    """For the vertices with at most HEAVY_DEGREE nets (the others are left to
    :func:`rate_heavy_chunks_kernel`): targets[v], gains[v]: the best block b != blocks[v] with
    block_weights[b] + w(v) <= max_block_weights[b]
    (with ``only_adjacent``: a block some net of v has a pin in) and the exact gain of moving v there alone;
    -1 and 0 for inactive vertices (active[v] == 0) and those with no such block. internals[v]: the weight
    of v's nets that have another pin in v's block (sum of w(e) [Phi(e, a) > 1]; Jet's conn(v, P(v))).

    km1: gain(b) = sum over nets e of v of w(e) ([Phi(e, a) = 1] - [Phi(e, b) = 0]); cut: w(e) for each net
    that becomes uncut ([Phi(e, a) = 1 and Phi(e, b) = |e| - 1]) minus w(e) for each that becomes cut
    ([Phi(e, a) = |e|]). Nets with fewer than two pins never count. A ``group`` of lanes per vertex (a
    power of two: :func:`rating_group`, the whole warp once k > 128): lane l of the group reads
    Phi(e, l + group j) (coalesced) and keeps its blocks' sums in registers; ``warp_argmax`` over the group
    picks the best. Every lane of a warp runs the same number of iterations, so the shuffles see them all.

    With ``tolerance`` >= 0 (Jet's c), targets[v] is also -1 unless v is a candidate: gain > 0 or
    gain >= -floor(c * internals[v]) (step 2 of the module doc); -1 rates without that rule.
    """
    affinity = cuda.local.array(BLOCKS_PER_LANE, int64)
    adjacent = cuda.local.array(BLOCKS_PER_LANE, int8)
    lane = cuda.threadIdx.x % group
    owned = (k - lane + group - 1) // group
    num_vertices = vertex_offsets.shape[0] - 1
    per_warp = WARP_SIZE // group
    first = cuda.grid(1) // WARP_SIZE * per_warp
    for start in range(first, num_vertices, cuda.gridsize(1) // WARP_SIZE * per_warp):
        v = start + cuda.threadIdx.x % WARP_SIZE // group
        light = v < num_vertices and vertex_offsets[v + 1] - vertex_offsets[v] <= HEAVY_DEGREE
        rated = light and active[v] != 0
        best = int32(-1)
        best_gain = int64(0)
        best_priority = int64(0)
        internal = int64(0)
        if rated:
            for j in range(owned):
                affinity[j] = 0
                adjacent[j] = 0
            source = blocks[v]
            common = int64(0)
            for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
                common_part, internal_part = _rate_net(incident_nets[q], source, lane, group, owned, k,
                                                       cut_objective, net_offsets, net_weights, pin_counts,
                                                       affinity, adjacent)
                common += common_part
                internal += internal_part
            weight = vertex_weights[v]
            for j in range(owned):
                b = lane + group * j
                best, best_gain, best_priority = _consider(
                    b, affinity[j] + common, adjacent[j] != 0 or not only_adjacent, source, weight, block_weights,
                    max_block_weights, best, best_gain, best_priority)
        best_gain, best_priority, best = warp_argmax(best_gain, best_priority, best, group)
        best = _jet_candidate(best, best_gain, internal, tolerance)
        if lane == 0 and light:
            targets[v] = best
            gains[v] = best_gain if best >= 0 else 0
            internals[v] = internal


@cached_kernel
def rate_heavy_chunks_kernel(chunk_heavy, chunk_starts, chunk_size, heavy, net_offsets, vertex_offsets, incident_nets,
                             net_weights, blocks, pin_counts, k, group, cut_objective, active, heavy_affinity,
                             heavy_adjacent, heavy_sums):
    """First half of ``rate_moves_kernel`` for the vertices ``heavy`` (more than HEAVY_DEGREE nets): their nets
    are cut into chunks of ``chunk_size`` (chunk c: nets chunk_starts[c] ... of heavy vertex chunk_heavy[c]),
    a block of RATE_THREADS each, so that a hub's nets spread over many blocks rather than waiting on one.
    The block's threads form RATE_THREADS / group groups of ``group`` lanes; group s takes the chunk's nets
    s, s + groups, ... and lane l of a group its blocks l + group j, as in the light kernel. The sums meet in
    shared memory, then in heavy_affinity[h * k + b], heavy_adjacent[h * k + b] and heavy_sums[2 h] (the
    common part), heavy_sums[2 h + 1] (the internal weight) by integer atomics: exact, so the order in
    which chunks add does not matter. The arrays start at 0: :func:`pick_heavy_moves_kernel` clears them."""
    affinity = cuda.local.array(BLOCKS_PER_LANE, int64)
    adjacent = cuda.local.array(BLOCKS_PER_LANE, int8)
    shared_affinity = cuda.shared.array(MAX_K, int64)
    shared_adjacent = cuda.shared.array(MAX_K, int32)
    shared_sums = cuda.shared.array(2, int64)          # common, internal
    thread = cuda.threadIdx.x
    lane = thread % group
    owned = (k - lane + group - 1) // group
    groups = cuda.blockDim.x // group
    for chunk in range(cuda.blockIdx.x, chunk_heavy.shape[0], cuda.gridDim.x):
        h = chunk_heavy[chunk]
        v = heavy[h]
        if active[v] == 0:       # the same for the whole block
            continue
        for b in range(thread, k, cuda.blockDim.x):
            shared_affinity[b] = 0
            shared_adjacent[b] = 0
        if thread < 2:
            shared_sums[thread] = 0
        cuda.syncthreads()
        for j in range(owned):
            affinity[j] = 0
            adjacent[j] = 0
        source = blocks[v]
        common = int64(0)
        internal = int64(0)
        end = min(chunk_starts[chunk] + chunk_size, vertex_offsets[v + 1])
        for q in range(chunk_starts[chunk] + thread // group, end, groups):
            common_part, internal_part = _rate_net(incident_nets[q], source, lane, group, owned, k, cut_objective,
                                                   net_offsets, net_weights, pin_counts, affinity, adjacent)
            if lane == 0:  # the parts that do not depend on the target: once per net
                common += common_part
                internal += internal_part
        for j in range(owned):
            b = lane + group * j
            if affinity[j] != 0:
                cuda.atomic.add(shared_affinity, b, affinity[j])
            if adjacent[j] != 0:
                shared_adjacent[b] = 1
        if common != 0:
            cuda.atomic.add(shared_sums, 0, common)
        if internal != 0:
            cuda.atomic.add(shared_sums, 1, internal)
        cuda.syncthreads()
        base = h * k
        for b in range(thread, k, cuda.blockDim.x):
            if shared_affinity[b] != 0:
                cuda.atomic.add(heavy_affinity, base + b, shared_affinity[b])
            if shared_adjacent[b] != 0:
                heavy_adjacent[base + b] = 1
        if thread < 2 and shared_sums[thread] != 0:
            cuda.atomic.add(heavy_sums, 2 * h + thread, shared_sums[thread])
        cuda.syncthreads()


@cached_kernel
def pick_heavy_moves_kernel(heavy, vertex_weights, blocks, block_weights, max_block_weights, k, only_adjacent, active,
                            tolerance, heavy_affinity, heavy_adjacent, heavy_sums, targets, gains, internals):
    """Second half for the vertices ``heavy``: a warp per vertex (lane l reads blocks l + 32 j of the sums of
    :func:`rate_heavy_chunks_kernel`) picks the best block as the light kernel does (gain, the lighter block,
    the smaller id), writes targets, gains and internals, and sets the sums back to 0 for the next call."""
    lane = cuda.threadIdx.x % WARP_SIZE
    for h in range(cuda.grid(1) // WARP_SIZE, heavy.shape[0], cuda.gridsize(1) // WARP_SIZE):
        v = heavy[h]
        rated = active[v] != 0
        source = blocks[v]
        weight = vertex_weights[v]
        common = heavy_sums[2 * h]
        internal = heavy_sums[2 * h + 1]
        base = h * k
        best = int32(-1)
        best_gain = int64(0)
        best_priority = int64(0)
        for b in range(lane, k, WARP_SIZE):
            affinity = heavy_affinity[base + b]
            adjacent = heavy_adjacent[base + b]
            heavy_affinity[base + b] = 0
            heavy_adjacent[base + b] = 0
            if rated:
                best, best_gain, best_priority = _consider(
                    b, affinity + common, adjacent != 0 or not only_adjacent, source, weight, block_weights,
                    max_block_weights, best, best_gain, best_priority)
        best_gain, best_priority, best = warp_argmax(best_gain, best_priority, best, WARP_SIZE)
        best = _jet_candidate(best, best_gain, internal, tolerance)
        if lane == 0:
            targets[v] = best
            gains[v] = best_gain if best >= 0 else 0
            internals[v] = internal
            heavy_sums[2 * h] = 0
            heavy_sums[2 * h + 1] = 0


@cached_kernel
def incidence_keys_kernel(moving, vertex_offsets, incident_nets, lanes, key_offsets, keys):
    """keys[key_offsets[i] + t] = (t-th net of moving[i]) << 32 | i: the (net, rank) pairs the afterburner
    sorts; ``lanes`` threads per moving vertex (1, or a warp on levels with hubs), striding over its nets."""
    lane = cuda.threadIdx.x % lanes
    for i in range(cuda.grid(1) // lanes, moving.shape[0], cuda.gridsize(1) // lanes):
        v = moving[i]
        start = vertex_offsets[v]
        for t in range(lane, vertex_offsets[v + 1] - start, lanes):
            keys[key_offsets[i] + t] = (int64(incident_nets[start + t]) << 32) | i


@cached_kernel
def afterburner_kernel(keys, net_offsets, net_weights, moving, blocks, destinations, k, cut_objective, pin_counts,
                       new_gains):
    """For each net (a run of equal nets in ``keys``, sorted by (net, rank)): replay its moves in rank order
    on its row of Phi and add to new_gains[rank] the exact change of the net's km1 or cut contribution that
    each move makes after all earlier ones; then undo the replay. The thread at a run's first key owns the
    row (no races); the others return at once."""
    total = keys.shape[0]
    for first in range(cuda.grid(1), total, cuda.gridsize(1)):
        e = keys[first] >> 32
        if first > 0 and (keys[first - 1] >> 32) == e:
            continue
        last = first + 1
        while last < total and (keys[last] >> 32) == e:
            last += 1
        size = net_offsets[e + 1] - net_offsets[e]
        if size < 2:
            continue
        weight = net_weights[e]
        base = e * k
        for position in range(first, last):
            i = keys[position] & LOW32
            source = blocks[moving[i]]
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
            pin_counts[base + blocks[moving[i]]] += 1
            pin_counts[base + destinations[i]] -= 1


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


@cached_kernel
def neighbourhood_exceeds_kernel(vertex_offsets, incident_nets, counted_sizes, limit, exceeds):
    """exceeds[0] = 1 when some vertex's nets have more than ``limit`` pins in all (``counted_sizes``: |e|, 0
    for nets of fewer than two pins): the pins ``afterburner_scan_kernel`` reads for that vertex. A thread
    per vertex stops adding once past the limit, so a hub costs at most ``limit`` reads."""
    for v in range(cuda.grid(1), vertex_offsets.shape[0] - 1, cuda.gridsize(1)):
        visits = int64(0)
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            visits += counted_sizes[incident_nets[q]]
            if visits > limit:
                exceeds[0] = 1
                break


@cached_kernel
def afterburner_scan_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, blocks, targets,
                            gains, k, cut_objective, lanes, pin_counts, kept):
    """Step 3 of the module doc without sorting, for levels of small nets and neighbourhoods
    (``DeviceLevelState.scans_nets``):
    for each candidate v (targets[v] >= 0, moving from a = blocks[v] to b = targets[v]) and each net e of v,
    the candidates u of e ranked before v (a higher gain, or the same gain and a smaller id) give
    Phi(e, a) and Phi(e, b) after their moves: each that leaves a or b takes one off, each that enters adds
    one. The change of e's contribution that v's move makes there, summed over v's nets, is the gain that
    :func:`afterburner_kernel`'s replay in rank order computes; kept[v] = 1 when it is >= 0, else 0.
    ``lanes`` threads per vertex (1, or a warp on levels with hubs) stride over its nets; a net of |e| pins
    costs |e| reads for each of its candidates."""
    lane = cuda.threadIdx.x % lanes
    for v in range(cuda.grid(1) // lanes, kept.shape[0], cuda.gridsize(1) // lanes):
        target = targets[v]
        if target < 0:  # the same for the whole warp
            if lane == 0:
                kept[v] = int8(0)
            continue
        source = blocks[v]
        gain = gains[v]
        total = int64(0)
        for q in range(vertex_offsets[v] + lane, vertex_offsets[v + 1], lanes):
            e = incident_nets[q]
            start = net_offsets[e]
            size = net_offsets[e + 1] - start
            if size < 2:
                continue
            base = int64(e) * k
            in_source = pin_counts[base + source]
            in_target = pin_counts[base + target]
            for p in range(start, start + size):
                u = pin_vertices[p]
                other_target = targets[u]
                if other_target < 0 or u == v:
                    continue
                other_gain = gains[u]
                if other_gain > gain or (other_gain == gain and u < v):
                    other_source = blocks[u]
                    if other_source == source:
                        in_source -= 1
                    elif other_source == target:
                        in_target -= 1
                    if other_target == source:
                        in_source += 1
                    elif other_target == target:
                        in_target += 1
            weight = net_weights[e]
            if cut_objective:
                total += (weight if in_target == size - 1 else 0) - (weight if in_source == size else 0)
            else:
                total += (weight if in_source == 1 else 0) - (weight if in_target == 0 else 0)
        if lanes > 1:
            total = warp_sum(total)
        if lane == 0:
            kept[v] = int8(1) if total >= 0 else int8(0)


@cached_kernel
def negated_gains_kernel(candidates, gains, ranks):
    """ranks[i] = -gains[candidates[i]]: a stable sort of the ascending candidates by it ranks them by gain
    (descending), then id."""
    for i in range(cuda.grid(1), candidates.shape[0], cuda.gridsize(1)):
        ranks[i] = -gains[candidates[i]]


@cached_kernel
def ranked_moves_kernel(order, candidates, targets, vertex_offsets, moving, destinations, degrees):
    """The candidates in rank order (``order``): their ids, targets and numbers of incident nets."""
    for i in range(cuda.grid(1), order.shape[0], cuda.gridsize(1)):
        v = candidates[order[i]]
        moving[i] = v
        destinations[i] = targets[v]
        degrees[i] = vertex_offsets[v + 1] - vertex_offsets[v]


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


class DeviceLevelState:
    """Phi, block weights, the objective and the pin -> net map of one level and partition, on the device.

    Parameters
    ----------
    level : Hypergraph
        On the device (:meth:`~hgpart.hypergraph.Hypergraph.to_device`).
    blocks : device int32[n]
        Modified in place by the refinement.
    k : int
    cut_objective : bool
        Which objective :meth:`apply` keeps up to date (``status``).
    max_block_weights : int64[k] (host or device), optional
        The bounds :meth:`overloaded` checks.

    Attributes
    ----------
    status : device int64[2]
        Moves made so far, and the current km1 (or cut).
    block_weights : device int64[k]
    host_block_weights : int64[k]
    host_status : (int, int)
        The moves of the last :meth:`apply` and the objective, as of then; with ``host_block_weights``, the
        block weights (``status`` and ``block_weights`` are one device buffer, read in one copy).
    """

    def __init__(self, level, blocks, k: int, cut_objective: bool = False, max_block_weights=None):
        if k > MAX_K:
            raise ValueError(f"GPU refinement supports k <= {MAX_K}, got {k}")
        x = xp()
        self.level = level
        self.k = k
        self.blocks = blocks
        self.cut_objective = cut_objective
        num_nets = level.net_offsets.shape[0] - 1
        num_pins = level.pin_vertices.shape[0]
        self.sizes = x.diff(level.net_offsets)
        pin_nets = x.searchsorted(level.net_offsets, x.arange(num_pins, dtype=x.int64),
                                  side="right").astype(x.int32) - 1
        self.pin_counts = x.zeros(num_nets * k, dtype=x.int32)
        if num_pins:
            launch(pin_counts_kernel, grid(num_pins), pin_nets, level.pin_vertices, blocks, k, self.pin_counts)
        self._summary = x.zeros(2 + k, dtype=x.int64)
        self.status, self.block_weights = self._summary[:2], self._summary[2:]
        scatter(scatter_add_kernel, blocks, level.vertex_weights, self.block_weights)
        connectivity = self._connectivity()
        self.connectivity = connectivity.astype(x.int32) if cut_objective else x.zeros(1, dtype=x.int32)
        self.status[1] = self._objective(connectivity, cut_objective)
        self._moves_read = 0
        self._read_summary()
        if max_block_weights is not None:
            self.max_block_weights = x.asarray(max_block_weights, dtype=x.int64)
            self.host_bounds = np.asarray(to_host(self.max_block_weights), dtype=np.int64)
        self.no_locks = x.zeros(0, dtype=x.int8)
        n = level.vertex_offsets.shape[0] - 1
        self.targets = x.empty(n, dtype=x.int32)
        self.gains = x.empty(n, dtype=x.int64)
        self.internals = x.empty(n, dtype=x.int64)
        self.kept = x.empty(n, dtype=x.int8)
        counted = x.where(self.sizes >= 2, self.sizes, 0)
        scan_checks = x.zeros(2, dtype=x.int64)  # sum of |e|^2, whether a neighbourhood exceeds the visits
        scan_checks[0] = (counted * counted).sum()
        if n:
            launch(neighbourhood_exceeds_kernel, grid(n), level.vertex_offsets, level.incident_nets, counted,
                   SCAN_MAX_PIN_VISITS, scan_checks[1:])
        squares, exceeds = (int(value) for value in to_host(scan_checks))
        self.scans_nets = squares <= SCAN_MEAN_NET_SIZE * num_pins and not exceeds
        self.heavy = x.flatnonzero(x.diff(level.vertex_offsets) > HEAVY_DEGREE).astype(x.int32)
        self._heavy_chunks(level.vertex_offsets)
        # threads per moved vertex in apply and the afterburner's keys: a warp when the level has hubs (a
        # thread would walk a hub's nets alone), else one (on a grid, 4 nets a vertex, a warp idles 28 lanes)
        self.lanes = WARP_SIZE if self.heavy.shape[0] else 1
        self.arrays = {name: array for name, array in level.items() if hasattr(array, "shape")}
        self.arrays.update((name, getattr(self, name)) for name in (
            "blocks", "pin_counts", "block_weights", "connectivity", "status", "no_locks", "targets", "gains",
            "internals", "kept", "heavy", "chunk_heavy", "chunk_starts", "heavy_affinity", "heavy_adjacent",
            "heavy_sums"))

    def _heavy_chunks(self, vertex_offsets):
        """The chunks of the heavy vertices' nets (``rate_heavy_chunks_kernel``): HEAVY_CHUNK_ROUNDS nets for
        each group of lanes of a block, and the zeroed sums they meet in (int64[heavy * k] and so on)."""
        x = xp()
        count = self.heavy.shape[0]
        self.chunk_size = HEAVY_CHUNK_ROUNDS * (RATE_THREADS // rating_group(self.k))
        firsts = vertex_offsets[self.heavy]
        self.chunk_heavy, rank = segment_items(vertex_offsets[self.heavy + 1] - firsts, self.chunk_size)
        self.chunk_starts = firsts[self.chunk_heavy] + rank * self.chunk_size
        self.heavy_affinity = x.zeros(count * self.k, dtype=x.int64)
        self.heavy_adjacent = x.zeros(count * self.k, dtype=x.int8)
        self.heavy_sums = x.zeros(2 * count, dtype=x.int64)

    def _connectivity(self):
        k = self.k
        return (self.pin_counts.reshape(-1, k) > 0).sum(axis=1) if k else xp().zeros(0, dtype=xp().int64)

    def _objective(self, connectivity, cut_objective: bool) -> int:
        x = xp()
        counted = self.sizes >= 2
        weights = self.level.net_weights
        if cut_objective:
            return int((weights * (counted & (connectivity > 1))).sum())
        return int((weights * x.where(counted, connectivity - 1, 0)).sum())

    def objective(self, cut_objective: bool) -> int:
        """km1 = sum of w(e) (lambda(e) - 1), or cut = sum of w(e) over nets with lambda(e) > 1, recomputed from
        Phi on the device; nets with fewer than two pins never count."""
        return self._objective(self._connectivity(), cut_objective)

    def rate(self, max_block_weights, cut_objective: bool, only_adjacent: bool, active, tolerance: float = -1.0):
        """(targets int32[n], gains int64[n], internals int64[n]) of ``rate_moves_kernel`` for the vertices
        with active != 0 (with ``tolerance`` >= 0, only Jet's candidates keep their targets). The arrays are
        the state's buffers: the next call overwrites them."""
        n = self.targets.shape[0]
        if n:
            arrays, group, bounds = self.arrays, rating_group(self.k), max_block_weights
            level = [arrays[name] for name in ("net_offsets", "vertex_offsets", "incident_nets", "net_weights")]
            launch(rate_moves_kernel, grid(-(-n // (WARP_SIZE // group)) * WARP_SIZE, RATE_THREADS), *level,
                   arrays.vertex_weights, arrays["blocks"], arrays["pin_counts"], arrays["block_weights"], bounds,
                   self.k, group, cut_objective, only_adjacent, active, tolerance, arrays["targets"],
                   arrays["gains"], arrays["internals"])
            if self.heavy.shape[0]:
                launch(rate_heavy_chunks_kernel, grid(self.chunk_heavy.shape[0] * RATE_THREADS, RATE_THREADS),
                       arrays["chunk_heavy"], arrays["chunk_starts"], self.chunk_size, arrays["heavy"], *level,
                       arrays["blocks"], arrays["pin_counts"], self.k, group, cut_objective, active,
                       arrays["heavy_affinity"], arrays["heavy_adjacent"], arrays["heavy_sums"])
                launch(pick_heavy_moves_kernel, grid(self.heavy.shape[0] * WARP_SIZE, RATE_THREADS),
                       arrays["heavy"], arrays.vertex_weights, arrays["blocks"], arrays["block_weights"], bounds,
                       self.k, only_adjacent, active, tolerance, arrays["heavy_affinity"], arrays["heavy_adjacent"],
                       arrays["heavy_sums"], arrays["targets"], arrays["gains"], arrays["internals"])
        return self.targets, self.gains, self.internals

    def apply(self, moving, destinations, accepted, locked=None):
        """Move the vertices ``moving[accepted]`` to ``destinations[accepted]``; Phi, block weights and
        ``status`` follow; moved vertices get locked[v] = 0. Returns (moves made, objective) on the host
        (one read of the device)."""
        if moving.shape[0]:
            arrays = self.arrays
            launch(apply_moves_kernel, grid(moving.shape[0] * self.lanes), moving, destinations, accepted,
                   arrays.net_offsets, arrays.net_weights, arrays.vertex_offsets, arrays.incident_nets,
                   arrays.vertex_weights, self.k, self.cut_objective, self.lanes, arrays["blocks"],
                   arrays["pin_counts"], arrays["connectivity"], arrays["block_weights"],
                   arrays["no_locks"] if locked is None else locked, arrays["status"])
        return self._read_summary()

    def apply_kept(self, locked=None):
        """:meth:`apply` for the moves of :meth:`afterburner_scan`: every v with kept[v] != 0 goes to targets[v]."""
        arrays = self.arrays
        n = self.kept.shape[0]
        if n:
            launch(apply_kept_kernel, grid(n * self.lanes), arrays["kept"], arrays["targets"], arrays.net_offsets,
                   arrays.net_weights, arrays.vertex_offsets, arrays.incident_nets, arrays.vertex_weights,
                   self.k, self.cut_objective, self.lanes, arrays["blocks"], arrays["pin_counts"],
                   arrays["connectivity"], arrays["block_weights"], arrays["no_locks"] if locked is None else locked,
                   arrays["status"])
        return self._read_summary()

    def _read_summary(self):
        """(moves since the last call, objective) of ``status``, whose moves only grow, with
        ``host_block_weights``: one copy from the device."""
        summary = np.array(to_host(self._summary))
        self.host_block_weights = summary[2:]
        moves = int(summary[0])
        self.host_status = moves - self._moves_read, int(summary[1])
        self._moves_read = moves
        return self.host_status

    def overloaded(self) -> bool:
        """Whether a block weighed more than its bound after the last :meth:`apply` (the state must have been
        given ``max_block_weights``)."""
        return self.overloaded_weight() > 0

    def overloaded_weight(self) -> int:
        """The weight of the blocks over their bounds after the last :meth:`apply` (0: none; bounds are >= 0)."""
        weights = self.host_block_weights
        return int(weights[weights > self.host_bounds].sum())

    def afterburner(self, moving, destinations, degrees, cut_objective: bool):
        """Recomputed gains int64[len(moving)] of the ranked candidates ``moving`` (see the module doc);
        ``degrees`` are their numbers of incident nets."""
        x = xp()
        count = moving.shape[0]
        new_gains = x.zeros(count, dtype=x.int64)
        if count == 0:
            return new_gains
        key_offsets = x.zeros(count + 1, dtype=x.int64)
        x.cumsum(degrees, out=key_offsets[1:])
        total = int(key_offsets[-1])
        if total == 0:
            return new_gains
        keys = x.empty(total, dtype=x.int64)
        arrays = self.arrays
        launch(incidence_keys_kernel, grid(count * self.lanes), moving, arrays.vertex_offsets,
               arrays.incident_nets, self.lanes, key_offsets, keys)
        keys = x.sort(keys)
        launch(afterburner_kernel, grid(total), keys, arrays.net_offsets, arrays.net_weights, moving,
               arrays["blocks"], destinations, self.k, cut_objective, arrays["pin_counts"], new_gains)
        return new_gains

    def afterburner_scan(self, cut_objective: bool):
        """kept int8[n] (the state's buffer): 1 for the candidates of the last :meth:`rate` (targets >= 0) whose
        gain after every better-ranked candidate's move is >= 0 (``afterburner_scan_kernel``: the same
        moves as :meth:`afterburner` keeps, on levels with ``scans_nets``)."""
        arrays = self.arrays
        n = self.kept.shape[0]
        if n:
            launch(afterburner_scan_kernel, grid(n * self.lanes), arrays.net_offsets, arrays.pin_vertices,
                   arrays.vertex_offsets, arrays.incident_nets, arrays.net_weights, arrays["blocks"],
                   arrays["targets"], arrays["gains"], self.k, cut_objective, self.lanes, arrays["pin_counts"],
                   arrays["kept"])
        return self.kept


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
           state.arrays.vertex_offsets, moving, destinations, degrees)
    kept = state.afterburner(moving, destinations, degrees, cut_objective) >= 0
    return state.apply(moving, destinations, kept, locked)


def refine_device(level, blocks, k: int, max_block_weights, rounds: int, cut_objective: bool = False,
                  movable=None, tolerance: float = 0.25):
    """Refine the partition ``blocks`` (device int32[n], balanced) of ``level`` by Jet-style rounds; returns
    the best balanced partition seen (a device array; ``blocks`` itself may be modified).

    Parameters
    ----------
    level : Hypergraph on the device
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


def rebalance_device(level, blocks, k: int, max_block_weights, cut_objective: bool = False, movable=None,
                     max_rounds: int = REBALANCE_ROUNDS):
    """Restore ``block weight <= max_block_weights`` with the least loss (GPU twin of
    :func:`.refiner.rebalance_partition`; :func:`.jet.rebalance_rounds` is its CPU twin): each round rates
    every movable vertex of an overloaded block towards any block with room, and per overloaded block takes
    its moves in order of least loss per unit of weight (then id) until the excess is gone, subject to each
    target's room in the same order. Returns (blocks, balanced)."""
    x = xp()
    n = level.vertex_offsets.shape[0] - 1
    movable = x.ones(n, dtype=x.bool_) if movable is None else x.asarray(movable).astype(x.bool_)
    state = DeviceLevelState(level, blocks, k, cut_objective, max_block_weights)
    balanced, _ = _rebalance_state(state, cut_objective, movable, max_rounds)
    return state.blocks, balanced


def _rebalance_state(state: DeviceLevelState, cut_objective: bool, movable, max_rounds: int = REBALANCE_ROUNDS):
    """:func:`rebalance_device` on ``state`` (modified in place; the bounds are its ``max_block_weights``):
    (balanced, objective) on the host. A round (the steps of :func:`.jet.rebalance_rounds`) is a few kernels
    and CuPy operations on the device and one read, the moves made, at its end:

    - the vertices to rate (those of positive weight in an overloaded block) and their ratings towards any
      block with room;
    - the candidates compacted into slots in ascending order (``rebalance_keys_kernel``; as many slots as
      the overloaded blocks weigh, at most n, known on the host without reading the device: each candidate
      weighs at least 1), the empty slots last;
    - ordered by source, loss per unit of weight and id: a stable sort by loss (CuPy), then the stable
      counting sort by source of :func:`.cuda.primitives.stable_order_by_small_key`;
    - the moves each source needs to shed its excess, a prefix of its run (``rebalance_needed_kernel``, a
      warp per source block), and of those, the ones whose target still has room in that order
      (``rebalance_accept_kernel``, a warp per target block).

    Before (2026-11-24) a round compacted the candidates with ``flatnonzero`` (a read of the device), sorted
    them by target too and took prefix sums over all of them: about 25 operations, 1.6-2.3 ms of the host's
    time a round, after 115 of 123 Jet rounds on grid 1M k=32."""
    x = xp()
    arrays = state.arrays
    max_block_weights = state.max_block_weights
    vertex_weights = arrays.vertex_weights
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


def upload_blocks(blocks: np.ndarray):
    """A host partition on the device as int32."""
    return to_device(np.asarray(blocks, dtype=np.int32))
