"""Pin counts Phi(e, b) and the rating of moves on the device: every movable vertex's best target block, the
exact gain of moving it alone (km1 or cut) and its internal weight; step 1 of a round of :mod:`.jet`.

The rating of M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph Partitioning
on Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, for hypergraphs:
``rate_moves_kernel`` gives a group of lanes to each vertex (the least power of two >= k / 8, at most a
warp; lane l of a group owns blocks l, l + group, ...), which keeps its blocks' sums in registers and picks
the best by ``warp_argmax``, with the CPU's tie order (gain, then the lighter block, then the smaller id:
:func:`hgpart.refinement.gains.best_move`). Vertices of more than HEAVY_DEGREE nets are cut into chunks of
nets, a block each (``rate_heavy_chunks_kernel``), whose sums meet by integer atomics before a warp picks
each one's move (``pick_heavy_moves_kernel``). Jet's candidate rule (gain > 0 or gain >= -floor(c *
internal)) is applied as the moves are rated.

Limits: k <= MAX_K = 1024; Phi takes 4 * num_nets * k bytes of device memory.
"""

from __future__ import annotations

import math

from numba import cuda, float64, int8, int32, int64

from ...cuda.arrays import cached_kernel
from ...cuda.warp import WARP_SIZE, warp_argmax

MAX_K = 1024
BLOCKS_PER_LANE = 32          # MAX_K // WARP_SIZE: the most blocks a lane of a rating group owns
RATED_BLOCKS_PER_LANE = 8     # blocks each lane of a rating group owns, up to k = 256 (rating_group)
RATE_THREADS = 128            # 4 warps per block of the rating kernels
HEAVY_DEGREE = 256            # vertices with more nets are rated in chunks (rate_heavy_chunks_kernel)


def rating_group(k: int) -> int:
    """Lanes that rate one vertex: the least power of two >= k / RATED_BLOCKS_PER_LANE, at most a warp (k = 32:
    four lanes of eight blocks each, eight vertices a warp). The rating waits on chains of loads (a net's
    offsets, weight and Phi(e, source)) that every lane of a group repeats, so fewer lanes per vertex keep
    more vertices in flight: eight blocks a lane rated faster than two or four at every k measured, and a warp
    per vertex was the slowest."""
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
    gain >= -floor(c * internals[v]) (step 2 of a round of :mod:`.jet`); -1 rates without that rule.
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
