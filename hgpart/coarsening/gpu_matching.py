"""GPU twin of :mod:`.matching`: the whole coarsening map computed on the device (seed 000 Figs. 5, 8, 9).

Rating (MONDRIAAN-PARALLEL with the LAMBDA1 helper, Figs. 5 and 8). A vertex v adds the fixed-point
rating of each incident net to S(u) for every other pin u, in an open-addressing hash table (atomic CAS
claims a slot, atomic add accumulates; 2^ceil(log2(2 b)) slots for a vertex with at most b distinct
neighbours, so the table never fills). Scores are exact integers, so the order of the atomics does not
matter and the GPU's candidates equal the CPU's (:func:`.matching.candidate_score`, ties broken by
:func:`.similarity.pair_priority`, then the smaller id). A table in shared memory holds each score as two
uint32 halves (a 64-bit shared atomic add is a compare-and-swap loop on the H100: ATOMS.CAST.SPIN.64; a
32-bit one is a single ATOMS.ADD), the high half taking the low half's carries.

A warp rates up to 32 nets at once, one per lane, their pins laid end to end and shared out by
:func:`hgpart.cuda.warp.warp_schedule`: when the nets hold 32 pins or more on average, lane l takes pins
l, l + 32, ..., so that the warp reads 32 consecutive pins at each step; shorter nets are split by the Fig. 5
planner's contiguous shares, which cross fewer nets per lane. On the synthetic matrix below, the strided
order, the halves and unsigned indices in the hot loop (numba tests every signed index for a negative value)
took a round from 178 ms to 89 ms (324 -> 649 GB/s of pins read).

The work w of a vertex is the pins of its rated nets; its bound b = min(w, rated vertices - 1) caps its
distinct neighbours. Vertices are binned by both (logarithmic binning, chosen at run time from the level's
degree distribution):

* ``pooled_propose_kernel``, b <= 256: several vertices per warp (16 >> k vertices with b <= 16 << k, for
  bins k = 0..4; seed 000 Sec. VIII's proposed fix for evenly connected inputs). Every lane of the warp
  takes one incident net of one of its vertices, and all their pins are shared evenly over the 32 lanes;
  each pin goes to its own vertex's table in shared memory.
  The lanes of each vertex then reduce its table to the best candidate (segmented ``warp_argmax``).
* ``wide_propose_kernel``, 256 < b <= 1024: a warp per vertex, its incident nets 32 at a time, a larger
  shared table.
* ``block_propose_kernel``, 1024 < b <= 4096 (most of a long-tailed input's vertices above the wide
  kernel: a few dozen nets of dozens of pins each): a block per vertex, its 8 warps 32 nets each at a time,
  8,192 slots of shared memory (the scores in dynamic shared memory above the 48 KB static limit, opted in
  per kernel).
* ``split_rate_kernel``, w > 8192 and b <= 1024 (the paper's synthetic matrix: 1,000 columns of 100,000
  nonzeros): a vertex is split into items of 2,048 incident nets, a block each, that aggregate in shared
  memory and then add to the vertex's table in global memory.
* ``heavy_rate_kernel``, b > 4096 (hubs): a vertex is split into items of 32 incident nets, a warp each,
  from any block, adding straight into its global table.

``heavy_best_kernel`` then reduces each global table, a block per vertex, reading only the slots listed
as used, and lists the vertex's TOP_CANDIDATES best candidates in order. Later rounds serve these vertices
from their lists (``heavy_listed_kernel``), exactly: matching scores do not change between rounds and
candidates only drop out, so the first listed candidate still unmatched is the best; a candidate's
joining score is at most its matching score, so the best listed one by joining score is the best of all
when it beats the last listed matching score. Otherwise the vertex is rated again. On the long-tailed 1M
instance no vertex had to be rated twice, and the map went from 11.4 s to 2.2 s.

Matching (COMPUTE-MATCHING-PARALLEL, Fig. 9): all unmatched vertices propose at once; ``mutual_kernel``
matches mutual proposals; rounds repeat for the vertices still unmatched, all ``matching_rounds`` of them
without a look from the host (the CPU stops after a round that matched nobody; the rounds after such a
round change nothing, so the maps agree, and the host never waits for the device mid-level). Joining (the CPU's
:func:`.matching.finish_clustering`, step for step): one more proposal round over clusters, pointer
doubling to each joiner's final cluster, a radix sort and scan to admit joiners in vertex order under the
weight limit, and a scan to number the clusters. Nothing leaves the device but a handful of counters.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numba import cuda, float64, int32, int64, uint32, uint64

from ..cuda.arrays import (SIMULATED, SIMULATED_BLOCKS, SM_COUNT, allow_dynamic_shared, cached_kernel,
                           grid, launch, scalar, to_device, to_host, xp)
from ..cuda.primitives import (LOW32, add_halves, csr_from_sorted_kernel, halves_value, lower_bound,
                               pointer_double_kernel, scatter, scatter_min_kernel, segment_items, segment_of,
                               sum_before)
from ..cuda.warp import FULL_MASK, WARP_SIZE, warp_argmax, warp_max, warp_next_row, warp_schedule
from .matching import JOIN_ROUNDS, candidate_score, two_hop_pairs
from .similarity import better_candidate, pair_priority

POOL_BINS = 5                  # bin k: 16 >> k vertices per warp, 32 << k slots each, for b <= 16 << k
POOL_TABLE = 512               # shared table slots per warp of the pooled kernel
POOL_WARPS = 1 if SIMULATED else 4  # warps per block of the pooled kernel (the simulator runs a thread per thread)
POOL_BLOCK_TABLE = POOL_WARPS * POOL_TABLE  # shared-memory shapes must be plain module constants
POOL_BLOCK_ROWS = POOL_WARPS * 32
WIDE_TABLE = 2048              # shared table slots of the wide kernel (one warp per block), b <= 1024
BLOCK_TABLE = 8192             # shared table slots of the block kernel, b <= 4096 (keys static, scores dynamic)
HEAVY_BLOCK = 32 if SIMULATED else 256  # threads per block of the heavy kernels
HEAVY_WARPS = HEAVY_BLOCK // WARP_SIZE
HEAVY_TABLE_BUDGET = 1 << 27   # global table slots for the heavy vertices of one batch (12 bytes each)
MIN_TABLE = 64
SPLIT_TABLE = 2048             # shared table slots of the split kernel (a block per work item)
SPLIT_NETS = 8 * HEAVY_BLOCK   # incident nets per work item of the split kernel
TOP_LOCAL = 4                  # candidates each thread of heavy_best_kernel keeps
TOP_CANDIDATES = 4 if SIMULATED else 32  # best candidates listed per heavy vertex for later rounds
POOL_LIMITS = (16, 32, 64, 128, 256)  # largest bound of pooled bins 0..4
KERNEL_LIMITS = (256, 1024, 8192, 4096)  # largest bound of the pooled and of the wide kernel; largest work
                                         # outside the split kernels; largest bound of the block kernel (tests
                                         # lower them to fill every bin on tiny inputs)
WIDE_BIN, BLOCK_BIN, SPLIT_BIN, GLOBAL_BIN = POOL_BINS, POOL_BINS + 1, POOL_BINS + 2, POOL_BINS + 3
TOP_FIELDS = ("top_ids", "top_raws", "top_length", "top_floor", "top_kind")

candidate_score_gpu = cuda.jit(device=True, inline=True)(candidate_score)
pair_priority_gpu = cuda.jit(device=True, inline=True)(pair_priority)
better_candidate_gpu = cuda.jit(device=True, inline=True)(better_candidate)


ROW_END, ROW_PINS = range(2)             # the int64 row_spans shared arrays: a row's end and pin offset
ROW_OWNER, ROW_TABLE, ROW_NET = range(3)  # the int32 row_ids shared arrays (every table base is < 2^31: at most
                                          # HEAVY_TABLE_BUDGET slots before it); 28 bytes a row, so that 8
                                          # blocks of the pooled kernel fit an SM (7 make a second, partial wave)


@cuda.jit(device=True, inline=True)
def _table_add(keys, values, high, base, mask, u, amount, used, fill, list_index):
    """Add ``amount`` (int64 >= 0) to the score of u in the open-addressing table keys[base:base + mask + 1]
    (int32, -1 empty), claiming a slot by compare-and-swap when u is new; False when every slot holds
    another vertex.

    ``list_index`` -1: a table in shared memory, each score held as two uint32 halves, low in ``values`` and
    high in ``high`` (:func:`hgpart.cuda.primitives.add_halves`: native 32-bit shared atomics, exact sums);
    read a score with ``halves_value``. ``used`` and ``fill`` are unused.
    ``list_index`` >= 0: a table in global memory, int64 ``values`` (``high`` unused); a newly claimed slot
    is listed in used[base + fill[list_index]++], so that the table can be read and emptied in time
    proportional to its entries. (The shared kernels pass the constant -1, which removes the branches; a
    probe function returning the slot, called by two adders, ran 3% slower on the synthetic matrix.)"""
    slot = (int64(u) * 2654435761) & mask
    for _ in range(mask + 1):
        index = uint64(base + slot)  # unsigned: no test for a negative index (7% of a round on the synthetic)
        key = keys[index]
        if key == -1:
            key = cuda.atomic.cas(keys, index, -1, u)
            if key == -1:
                key = u
                if list_index >= 0:
                    used[base + cuda.atomic.add(fill, list_index, 1)] = slot
        if key == u:
            if list_index >= 0:
                cuda.atomic.add(values, index, amount)
            else:
                add_halves(values, high, index, amount)
            return True
        slot = (slot + 1) & mask
    return False


@cuda.jit(device=True, inline=True)
def _rate_position(position, state, row_spans, row_ids, pin_vertices, ratings, keys, values, high, mask, used, fill,
                   list_index):
    """One step of ``_rate_rows``: the pin at ``position`` of the rows laid end to end. ``state`` holds the
    current row's (index, end, first pin - first position, owner, table, rating), loaded when the lane
    enters a row; returns it for the next position."""
    row, end, row_pins, row_owner, row_table, row_rating = state
    if position >= end:
        row = warp_next_row(position, row, row_spans[ROW_END])
        end = row_spans[ROW_END, row]
        row_pins = row_spans[ROW_PINS, row]
        row_owner = int64(row_ids[ROW_OWNER, row])
        row_table = int64(row_ids[ROW_TABLE, row])
        row_rating = ratings[row_ids[ROW_NET, row]]
    u = pin_vertices[uint64(row_pins + position)]  # unsigned: numba wraps only signed indices
    if u != row_owner:
        _table_add(keys, values, high, row_table, mask, u, row_rating, used, fill, list_index)
    return row, end, row_pins, row_owner, row_table, row_rating


@cuda.jit(device=True, inline=True)
def _rate_rows(net, owner, table, lane, rows, row_spans, row_ids, net_offsets, pin_vertices, ratings, keys, values,
               high, mask, used, fill, list_index):
    """MONDRIAAN-PARALLEL for one row per lane (Figs. 5 and 8): this lane's row is ``net`` (-1 for none) of
    vertex ``owner``, whose table starts at ``table``. The lanes share all rows' pins laid end to end
    (:func:`hgpart.cuda.warp.warp_schedule`: strided over long nets, Fig. 5's contiguous shares over short
    ones), and each pin u != owner adds the net's rating to S(u) in the owner's table (LAMBDA1, Fig. 8).

    Called by every lane of the warp; ``row_spans`` and ``row_ids`` are the block's int64[2, rows] and
    int32[3, rows] shared arrays, this warp's columns from ``rows``. Tables have mask + 1 slots and are
    sized never to fill up. A shared table (``list_index`` -1; ``used`` and ``fill`` unused) holds its
    scores in halves (``values``, ``high``: see ``_table_add``); a global table (``list_index`` >= 0;
    ``high`` unused) holds int64 ``values`` and lists its claimed slots (``used``, ``fill``: see
    ``_table_add``)."""
    length = int64(0)
    start = int64(0)
    if net >= 0:
        start = net_offsets[net]
        length = net_offsets[net + 1] - start
    row_end = row_spans[ROW_END]
    row_first, first, stop, step, start_row = warp_schedule(length, lane, row_end, rows)
    row_spans[ROW_PINS, rows + lane] = start - row_first  # position t of the rows laid end to end: pin t + this
    row_ids[ROW_OWNER, rows + lane] = owner
    row_ids[ROW_TABLE, rows + lane] = table
    row_ids[ROW_NET, rows + lane] = net
    cuda.syncwarp(FULL_MASK)
    state = (int64(rows + start_row), int64(0), int64(0), int64(-1), int64(0), int64(0))
    if step == 1:  # two loops, each with a constant step: a variable one costs a 64-bit division per call
        for position in range(first, stop):
            state = _rate_position(position, state, row_spans, row_ids, pin_vertices, ratings, keys, values, high,
                                   mask, used, fill, list_index)
    else:
        for position in range(first, stop, WARP_SIZE):
            state = _rate_position(position, state, row_spans, row_ids, pin_vertices, ratings, keys, values, high,
                                   mask, used, fill, list_index)
    cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True, inline=True)
def _consider(v, u, score, best_score, best_priority, best):
    """The better of candidate u (``score``; not a candidate unless > 0) and the best so far (score,
    priority, id or -1), in the CPU's order."""
    if score > 0.0:
        priority = pair_priority_gpu(v, u)
        if better_candidate_gpu(score, priority, u, best_score, best_priority, best):
            return score, priority, u
    return best_score, best_priority, best


@cuda.jit(device=True, inline=True)
def _best_in_table(v, keys, low, high, base, first, stride, count, vertex_weights, merge_key, partner,
                   cluster_weight, max_weight, weight_penalty, only_unmatched):
    """This thread's best candidate among slots first, first + stride, ... < count of a shared table
    (``_table_add``), with the CPU's scores and tie order; the slots it reads are emptied for the next
    vertex. Returns (score, priority, id or -1)."""
    best = int32(-1)
    best_score = float64(0.0)
    best_priority = int64(0)
    for slot in range(base + first, base + count, stride):
        u = keys[slot]
        if u >= 0:
            score = candidate_score_gpu(v, u, halves_value(low, high, slot), vertex_weights, merge_key, partner,
                                        cluster_weight, max_weight, weight_penalty, only_unmatched)
            best_score, best_priority, best = _consider(v, u, score, best_score, best_priority, best)
            keys[slot] = -1
            low[slot] = 0
            high[slot] = 0
    return best_score, best_priority, best


@cuda.jit(device=True, inline=True)
def _table_slots(bound):
    """Slots for a vertex with at most ``bound`` distinct neighbours: a power of two >= 2 bound, >= 64."""
    size = int64(MIN_TABLE)
    while size < 2 * bound:
        size *= 2
    return size


@cuda.jit(device=True, inline=True)
def _keeps_proposal(v, partner, proposals, rerate_only):
    """In a later matching round (``rerate_only``) an unmatched vertex keeps its proposal unless its target
    got matched: scores do not change between rounds and candidates only drop out, so the best remaining
    one is the same, and a vertex with none still has none. The CPU skips the same vertices."""
    if not rerate_only:
        return False
    target = proposals[v]
    return target < 0 or partner[target] < 0


@cached_kernel
def pooled_propose_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                          merge_key, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only,
                          bin_vertices, bin_starts, group_starts, proposals):
    """proposals[v] for the vertices of bins 0..4, several per warp (seed 000 Sec. VIII).

    bin_vertices int32: vertices ordered by bin; bin k holds bin_vertices[bin_starts[k]:bin_starts[k + 1]],
    in groups of 16 >> k (one group per warp, 2 << k lanes and 32 << k table slots per vertex), numbered
    group_starts[k] .. group_starts[k + 1] - 1. A matched vertex (partner >= 0) gets -1. Other arrays as
    in :func:`propose_on_device`.
    """
    keys = cuda.shared.array(POOL_BLOCK_TABLE, int32)
    low = cuda.shared.array(POOL_BLOCK_TABLE, uint32)
    high = cuda.shared.array(POOL_BLOCK_TABLE, uint32)
    row_spans = cuda.shared.array((2, POOL_BLOCK_ROWS), int64)
    row_ids = cuda.shared.array((3, POOL_BLOCK_ROWS), int32)
    lane = cuda.threadIdx.x % WARP_SIZE
    warp_in_block = cuda.threadIdx.x // WARP_SIZE
    base = warp_in_block * POOL_TABLE
    rows = warp_in_block * WARP_SIZE
    for slot in range(lane, POOL_TABLE, WARP_SIZE):
        keys[base + slot] = -1
        low[base + slot] = 0
        high[base + slot] = 0
    cuda.syncwarp(FULL_MASK)
    for group in range(cuda.blockIdx.x * POOL_WARPS + warp_in_block, group_starts[POOL_BINS],
                       cuda.gridDim.x * POOL_WARPS):
        bin_index = 0
        while group >= group_starts[bin_index + 1]:
            bin_index += 1
        per_warp = 16 >> bin_index
        width = WARP_SIZE // per_warp          # lanes per vertex
        slots = 32 << bin_index
        member = lane // width
        sub = lane % width
        index = bin_starts[bin_index] + (group - group_starts[bin_index]) * per_warp + member
        v = int32(-1)
        if index < bin_starts[bin_index + 1]:
            v = bin_vertices[index]
            if partner[v] >= 0:
                if sub == 0:
                    proposals[v] = -1
                v = int32(-1)
            elif _keeps_proposal(v, partner, proposals, rerate_only):
                v = int32(-1)
        table = base + member * slots
        begin = int64(0)
        end = int64(0)
        if v >= 0:
            begin = vertex_offsets[v]
            end = vertex_offsets[v + 1]
        steps = warp_max((end - begin + width - 1) // width)
        if steps == 0:  # nothing to rate in this group (in later rounds, most groups): no table to read
            if sub == 0 and v >= 0:
                proposals[v] = -1
            continue
        for step in range(steps):
            q = begin + step * width + sub
            net = int32(-1)
            if q < end:
                net = incident_nets[q]
                if ratings[net] == 0:
                    net = int32(-1)
            _rate_rows(net, v, table, lane, rows, row_spans, row_ids, net_offsets, pin_vertices, ratings, keys, low,
                       high, slots - 1, keys, keys, -1)
        best_score, best_priority, best = _best_in_table(v, keys, low, high, table, sub, width, slots,
                                                         vertex_weights, merge_key, partner, cluster_weight,
                                                         max_weight, weight_penalty, only_unmatched)
        best_score, best_priority, best = warp_argmax(best_score, best_priority, best, width)
        if sub == 0 and v >= 0:
            proposals[v] = best
        cuda.syncwarp(FULL_MASK)


@cached_kernel
def wide_propose_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                        merge_key, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only,
                        wide_vertices, neighbour_bound, proposals):
    """proposals[v] for v in ``wide_vertices`` (bin 5, b <= 1024): a warp (and block) per vertex, its
    incident nets 32 at a time (``_rate_rows``), 2^ceil(log2(2 b)) slots of a shared table."""
    keys = cuda.shared.array(WIDE_TABLE, int32)
    low = cuda.shared.array(WIDE_TABLE, uint32)
    high = cuda.shared.array(WIDE_TABLE, uint32)
    row_spans = cuda.shared.array((2, WARP_SIZE), int64)
    row_ids = cuda.shared.array((3, WARP_SIZE), int32)
    lane = cuda.threadIdx.x
    for slot in range(lane, WIDE_TABLE, WARP_SIZE):
        keys[slot] = -1
        low[slot] = 0
        high[slot] = 0
    cuda.syncwarp(FULL_MASK)
    for index in range(cuda.blockIdx.x, wide_vertices.shape[0], cuda.gridDim.x):
        v = wide_vertices[index]
        if partner[v] >= 0:
            if lane == 0:
                proposals[v] = -1
            continue
        if _keeps_proposal(v, partner, proposals, rerate_only):
            continue
        slots = _table_slots(neighbour_bound[v])
        end = vertex_offsets[v + 1]
        for chunk in range(vertex_offsets[v], end, WARP_SIZE):
            q = chunk + lane
            net = int32(-1)
            if q < end:
                net = incident_nets[q]
                if ratings[net] == 0:
                    net = int32(-1)
            _rate_rows(net, v, 0, lane, 0, row_spans, row_ids, net_offsets, pin_vertices, ratings, keys, low, high,
                       slots - 1, keys, keys, -1)
        best_score, best_priority, best = _best_in_table(v, keys, low, high, 0, lane, WARP_SIZE, slots,
                                                         vertex_weights, merge_key, partner, cluster_weight,
                                                         max_weight, weight_penalty, only_unmatched)
        best_score, best_priority, best = warp_argmax(best_score, best_priority, best)
        if lane == 0:
            proposals[v] = best
        cuda.syncwarp(FULL_MASK)


@cuda.jit(device=True, inline=True)
def _rate_nets(v, first, end, rows, row_spans, row_ids, net_offsets, pin_vertices, incident_nets, ratings, keys, low,
               high, mask):
    """A block rates v's incident nets first .. end - 1 into its shared table (mask + 1 slots, sized never to
    fill): each warp takes 32 nets at a time through ``_rate_rows``."""
    lane = cuda.threadIdx.x % WARP_SIZE
    for chunk in range(first + (cuda.threadIdx.x // WARP_SIZE) * WARP_SIZE, end, HEAVY_BLOCK):  # uniform in a warp
        q = chunk + lane
        net = int32(-1)
        if q < end:
            net = incident_nets[q]
            if ratings[net] == 0:
                net = int32(-1)
        _rate_rows(net, v, 0, lane, rows, row_spans, row_ids, net_offsets, pin_vertices, ratings, keys, low, high, mask,
                   keys, keys, -1)


@cuda.jit(device=True, inline=True)
def _block_argmax(best_score, best_priority, best, warp_scores, warp_priorities, warp_best):
    """The best of the block's threads' candidates (valid on thread 0), through shared arrays of HEAVY_WARPS
    entries; every thread of the block must call it."""
    lane = cuda.threadIdx.x % WARP_SIZE
    warp = cuda.threadIdx.x // WARP_SIZE
    best_score, best_priority, best = warp_argmax(best_score, best_priority, best)
    if lane == 0:
        warp_scores[warp] = best_score
        warp_priorities[warp] = best_priority
        warp_best[warp] = best
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        best = warp_best[0]
        best_score = warp_scores[0]
        best_priority = warp_priorities[0]
        for w in range(1, HEAVY_WARPS):
            u = warp_best[w]
            if u >= 0 and better_candidate_gpu(warp_scores[w], warp_priorities[w], u, best_score, best_priority,
                                               best):
                best = u
                best_score = warp_scores[w]
                best_priority = warp_priorities[w]
    return best


@cached_kernel
def block_propose_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                         merge_key, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only,
                         block_vertices, neighbour_bound, proposals):
    """proposals[v] for v in ``block_vertices`` (1024 < b <= 4096): a block per vertex, each warp rating 32 of
    its incident nets at a time (``_rate_rows``) into 2^ceil(log2(2 b)) slots of a shared table
    (keys static, scores in BLOCK_TABLE * 8 bytes of dynamic shared memory), then a block argmax."""
    keys = cuda.shared.array(BLOCK_TABLE, int32)
    scores = cuda.shared.array(0, uint32)
    low = scores[:BLOCK_TABLE]
    high = scores[BLOCK_TABLE:]
    row_spans = cuda.shared.array((2, HEAVY_BLOCK), int64)
    row_ids = cuda.shared.array((3, HEAVY_BLOCK), int32)
    warp_scores = cuda.shared.array(HEAVY_WARPS, float64)
    warp_priorities = cuda.shared.array(HEAVY_WARPS, int64)
    warp_best = cuda.shared.array(HEAVY_WARPS, int32)
    rows = cuda.threadIdx.x // WARP_SIZE * WARP_SIZE
    for slot in range(cuda.threadIdx.x, BLOCK_TABLE, HEAVY_BLOCK):
        keys[slot] = -1
        low[slot] = 0
        high[slot] = 0
    cuda.syncthreads()
    for index in range(cuda.blockIdx.x, block_vertices.shape[0], cuda.gridDim.x):
        v = block_vertices[index]
        if partner[v] >= 0:
            if cuda.threadIdx.x == 0:
                proposals[v] = -1
            continue  # the same for the whole block
        if _keeps_proposal(v, partner, proposals, rerate_only):
            continue
        slots = _table_slots(neighbour_bound[v])
        _rate_nets(v, vertex_offsets[v], vertex_offsets[v + 1], rows, row_spans, row_ids, net_offsets, pin_vertices,
                   incident_nets, ratings, keys, low, high, slots - 1)
        cuda.syncthreads()
        best_score, best_priority, best = _best_in_table(v, keys, low, high, 0, cuda.threadIdx.x, HEAVY_BLOCK, slots,
                                                         vertex_weights, merge_key, partner, cluster_weight,
                                                         max_weight, weight_penalty, only_unmatched)
        best = _block_argmax(best_score, best_priority, best, warp_scores, warp_priorities, warp_best)
        if cuda.threadIdx.x == 0:
            proposals[v] = best
        cuda.syncthreads()


@cached_kernel
def split_rate_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, heavy_vertices, item_vertex,
                      item_first, table_offsets, table_keys, table_values, table_used, table_fill, skip):
    """The rating of vertices with much work but few possible neighbours (b > 8192, bound <= 1024: the
    paper's synthetic columns), split into work items of SPLIT_NETS incident nets, a block each: the block's
    warps rate their nets 32 at a time (``_rate_rows``) into a table in shared memory, then the block adds the
    table's entries to the vertex's global table (one global atomic per distinct neighbour and item, not
    per pin). Tables as in ``heavy_rate_kernel``; the global table of heavy_vertices[j] has at most
    SPLIT_TABLE slots."""
    keys = cuda.shared.array(SPLIT_TABLE, int32)
    low = cuda.shared.array(SPLIT_TABLE, uint32)
    high = cuda.shared.array(SPLIT_TABLE, uint32)
    row_spans = cuda.shared.array((2, HEAVY_BLOCK), int64)
    row_ids = cuda.shared.array((3, HEAVY_BLOCK), int32)
    rows = cuda.threadIdx.x // WARP_SIZE * WARP_SIZE
    for slot in range(cuda.threadIdx.x, SPLIT_TABLE, HEAVY_BLOCK):
        keys[slot] = -1
        low[slot] = 0
        high[slot] = 0
    cuda.syncthreads()
    for item in range(cuda.blockIdx.x, item_vertex.shape[0], cuda.gridDim.x):
        j = item_vertex[item]
        if skip[j]:
            continue  # the same for the whole block
        v = heavy_vertices[j]
        base = table_offsets[j]
        slots = table_offsets[j + 1] - base
        _rate_nets(v, item_first[item], min(item_first[item] + SPLIT_NETS, vertex_offsets[v + 1]), rows, row_spans,
                   row_ids, net_offsets, pin_vertices, incident_nets, ratings, keys, low, high, slots - 1)
        cuda.syncthreads()
        for slot in range(cuda.threadIdx.x, slots, HEAVY_BLOCK):
            u = keys[slot]
            if u >= 0:
                _table_add(table_keys, table_values, table_values, base, slots - 1, u, halves_value(low, high, slot),
                           table_used, table_fill, j)
                keys[slot] = -1
                low[slot] = 0
                high[slot] = 0
        cuda.syncthreads()


@cached_kernel
def heavy_rate_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, heavy_vertices, item_vertex,
                      item_first, table_offsets, table_keys, table_values, table_used, table_fill, skip):
    """The rating of heavy vertices (b > 1024), split into work items of 32 incident nets, a warp each,
    from any block: item i rates nets item_first[i] .. +31 of heavy_vertices[item_vertex[i]] into that
    vertex's table table_offsets[j] .. table_offsets[j + 1] in global memory (keys -1, values 0 when empty;
    the claimed slots listed in table_used from the same offset, table_fill[j] of them). Vertices with
    skip[j] set (see ``heavy_listed_kernel``) are skipped."""
    row_spans = cuda.shared.array((2, HEAVY_BLOCK), int64)
    row_ids = cuda.shared.array((3, HEAVY_BLOCK), int32)
    lane = cuda.threadIdx.x % WARP_SIZE
    warp = cuda.threadIdx.x // WARP_SIZE
    rows = warp * WARP_SIZE
    for item in range(cuda.blockIdx.x * HEAVY_WARPS + warp, item_vertex.shape[0], cuda.gridDim.x * HEAVY_WARPS):
        j = item_vertex[item]
        if skip[j]:
            continue
        v = heavy_vertices[j]
        q = item_first[item] + lane
        net = int32(-1)
        if q < vertex_offsets[v + 1]:
            net = incident_nets[q]
            if ratings[net] == 0:
                net = int32(-1)
        _rate_rows(net, v, table_offsets[j], lane, rows, row_spans, row_ids, net_offsets, pin_vertices, ratings,
                   table_keys, table_values, table_values, table_offsets[j + 1] - table_offsets[j] - 1, table_used,
                   table_fill, j)


@cuda.jit(device=True, inline=True)
def _keep_top(score, priority, u, raw, scores, priorities, ids, raws, kept):
    """Insert candidate u, better than the last of a full list, into a thread's list of its TOP_LOCAL best
    (sorted best first, ``kept`` long). Returns the new length and whether a candidate fell off."""
    position = kept
    fell = kept == TOP_LOCAL
    if fell:
        position -= 1
    else:
        kept += 1
    while position > 0 and better_candidate_gpu(score, priority, u, scores[position - 1], priorities[position - 1],
                                                ids[position - 1]):
        scores[position] = scores[position - 1]
        priorities[position] = priorities[position - 1]
        ids[position] = ids[position - 1]
        raws[position] = raws[position - 1]
        position -= 1
    scores[position] = score
    priorities[position] = priority
    ids[position] = u
    raws[position] = raw
    return kept, fell


@cached_kernel
def heavy_best_kernel(vertex_weights, merge_key, partner, cluster_weight, max_weight, weight_penalty, only_unmatched,
                      rerate_only, heavy_vertices, table_offsets, table_keys, table_values, table_used, table_fill,
                      skip, top_ids, top_raws, top_length, top_floor, top_kind, proposals):
    """proposals[v] for the heavy vertices not skipped: a block per vertex reads the listed slots of its
    global table (and empties them), each thread keeping its TOP_LOCAL best candidates in order; the block
    then merges the threads' lists, best first, by repeated block argmax. The first is the proposal.

    When matching (``only_unmatched``) the merge goes on and stores the vertex's best candidates in
    order, up to TOP_CANDIDATES of them, in top_ids / top_raws[j * TOP_CANDIDATES:] (top_length[j] of
    them; top_kind[j] = 1 when listed in the first round, when nobody was matched yet, else 2). The list is
    an exact prefix of the vertex's candidates in the CPU's order: it stops when a thread that dropped a
    candidate has no more listed, since the next best might be one of those. top_floor[j] is the score
    of the last listed candidate, or -1.0 when the list holds every candidate. ``heavy_listed_kernel``
    serves the later rounds from these lists."""
    warp_scores = cuda.shared.array(HEAVY_WARPS, float64)
    warp_priorities = cuda.shared.array(HEAVY_WARPS, int64)
    warp_best = cuda.shared.array(HEAVY_WARPS, int32)
    merge_state = cuda.shared.array(2, int32)  # the merge's winner, and whether it must stop
    local_scores = cuda.local.array(TOP_LOCAL, float64)
    local_priorities = cuda.local.array(TOP_LOCAL, int64)
    local_ids = cuda.local.array(TOP_LOCAL, int32)
    local_raws = cuda.local.array(TOP_LOCAL, int64)
    for index in range(cuda.blockIdx.x, heavy_vertices.shape[0], cuda.gridDim.x):
        if skip[index]:
            continue  # the same for the whole block
        v = heavy_vertices[index]
        base = table_offsets[index]
        kept = 0
        dropped = False
        last_score = float64(0.0)  # the last of a full list, in registers (the list is in local memory)
        last_priority = int64(0)
        last = int32(-1)
        for position in range(cuda.threadIdx.x, table_fill[index], HEAVY_BLOCK):
            slot = table_used[base + position]
            u = table_keys[base + slot]
            raw = table_values[base + slot]
            score = candidate_score_gpu(v, u, raw, vertex_weights, merge_key, partner, cluster_weight, max_weight,
                                        weight_penalty, only_unmatched)
            table_keys[base + slot] = -1  # emptied after the score's loads: emptied first, the kernel ran 3x slower
            table_values[base + slot] = 0
            if score > 0.0:
                priority = pair_priority_gpu(v, u)
                if better_candidate_gpu(score, priority, u, last_score, last_priority, last):
                    kept, fell = _keep_top(score, priority, u, raw, local_scores, local_priorities, local_ids,
                                           local_raws, kept)
                    dropped = dropped or fell
                    if kept == TOP_LOCAL:
                        last_score = local_scores[TOP_LOCAL - 1]
                        last_priority = local_priorities[TOP_LOCAL - 1]
                        last = local_ids[TOP_LOCAL - 1]
                else:
                    dropped = True
        if cuda.threadIdx.x == 0:
            merge_state[1] = 0
        head = 0
        stored = 0
        best = int32(-1)
        while stored < TOP_CANDIDATES:
            score = float64(0.0)
            priority = int64(0)
            u = int32(-1)
            if head < kept:
                score = local_scores[head]
                priority = local_priorities[head]
                u = local_ids[head]
            best = _block_argmax(score, priority, u, warp_scores, warp_priorities, warp_best)
            if cuda.threadIdx.x == 0:
                merge_state[0] = best
                if stored == 0:
                    proposals[v] = best
            cuda.syncthreads()
            best = merge_state[0]
            if best < 0 or not only_unmatched:
                break  # every candidate listed; or joining, which needs only the best
            if u == best:
                top_ids[index * TOP_CANDIDATES + stored] = u
                top_raws[index * TOP_CANDIDATES + stored] = local_raws[head]
                top_floor[index] = score
                head += 1
                if head == kept and dropped:
                    merge_state[1] = 1
            stored += 1
            cuda.syncthreads()
            stop = merge_state[1]
            cuda.syncthreads()  # all have read the state before the next round writes it
            if stop:
                break
        if cuda.threadIdx.x == 0:
            table_fill[index] = 0
            if only_unmatched:
                top_length[index] = stored
                top_kind[index] = 2 if rerate_only else 1
                if best < 0:
                    top_floor[index] = -1.0
        cuda.syncthreads()


@cached_kernel
def heavy_listed_kernel(vertex_weights, merge_key, partner, cluster_weight, max_weight, weight_penalty,
                        only_unmatched, rerate_only, heavy_vertices, top_ids, top_raws, top_length, top_floor,
                        top_kind, skip, proposals):
    """Which heavy vertices must be rated this round (skip[j] = 0), a thread per vertex; the others get
    their proposal here. Matched vertices propose nobody; in later matching rounds a vertex keeps its
    proposal unless its target got matched (``_keeps_proposal``), and otherwise takes the first candidate
    of its list (``heavy_best_kernel``) still unmatched: scores do not change between matching rounds and
    candidates only drop out, so that one is its best, as a new rating would find. A list that runs out
    answers "none" when it held every candidate, else the vertex is rated again.

    Joining rounds use lists of the first round (every vertex a candidate then): a candidate's score when
    joining is at most its score when matching (its cluster is heavier, its key no more compatible), so
    the list's best by joining score is the vertex's best when it beats top_floor[j], which bounds the
    score of every candidate not listed."""
    for index in range(cuda.grid(1), heavy_vertices.shape[0], cuda.gridDim.x * cuda.blockDim.x):
        v = heavy_vertices[index]
        skip[index] = 1
        if partner[v] >= 0:
            proposals[v] = -1
            continue
        if _keeps_proposal(v, partner, proposals, rerate_only):
            continue
        usable = (top_kind[index] > 0 and rerate_only) or (top_kind[index] == 1 and not only_unmatched)
        if not usable:
            skip[index] = 0
            continue
        best = int32(-1)
        best_score = float64(0.0)
        best_priority = int64(0)
        start = index * TOP_CANDIDATES
        for position in range(start, start + top_length[index]):
            u = top_ids[position]
            score = candidate_score_gpu(v, u, top_raws[position], vertex_weights, merge_key, partner, cluster_weight,
                                        max_weight, weight_penalty, only_unmatched)
            best_score, best_priority, best = _consider(v, u, score, best_score, best_priority, best)
            if only_unmatched and best >= 0:
                break  # listed in the order of these scores
        if top_floor[index] < 0.0 or (best >= 0 and (only_unmatched or best_score > top_floor[index])):
            proposals[v] = best
        else:
            skip[index] = 0


@cached_kernel
def mutual_kernel(proposals, partner):
    """Fig. 9 lines 10-15: an unmatched v and u = proposals[v] are matched when u proposed v too."""
    for v in range(cuda.grid(1), proposals.shape[0], cuda.gridDim.x * cuda.blockDim.x):
        u = proposals[v]
        if u >= 0 and partner[v] < 0 and proposals[u] == v:
            partner[v] = u


def _blocks(count: int, per_sm: int) -> int:
    blocks = max(1, min(count, SM_COUNT * per_sm))
    return min(blocks, SIMULATED_BLOCKS) if SIMULATED else blocks


@cached_kernel
def rated_degree_kernel(net_offsets, pin_vertices, net_weights, max_net_size, weighted_degree):
    """weighted_degree[u] += w(e) for each pin u of each net e of 2..max_net_size pins: a thread per pin."""
    for p in range(cuda.grid(1), pin_vertices.shape[0], cuda.gridsize(1)):
        e = segment_of(net_offsets, p)
        size = net_offsets[e + 1] - net_offsets[e]
        if 2 <= size <= max_net_size:
            cuda.atomic.add(weighted_degree, pin_vertices[p], net_weights[e])


@cached_kernel
def net_ratings_kernel(net_offsets, net_weights, shift, heavy_edge, max_net_size, ratings):
    """ratings[e] = (w(e) << shift) // (|e| - 1 with ``heavy_edge``, else 1) for nets of 2..max_net_size pins,
    else 0: the CPU's ``_fixed_point_ratings``."""
    for e in range(cuda.grid(1), ratings.shape[0], cuda.gridsize(1)):
        size = net_offsets[e + 1] - net_offsets[e]
        rating = int64(0)
        if 2 <= size <= max_net_size:
            rating = (int64(net_weights[e]) << shift) // (max(size - 1, 1) if heavy_edge else 1)
        ratings[e] = rating


def device_net_ratings(level, heavy_edge: bool, max_net_size: int):
    """:func:`.similarity.net_ratings` on the device: (int64[m] fixed-point ratings, shift)."""
    x = xp()
    offsets = level.net_offsets
    num_vertices = level.vertex_offsets.shape[0] - 1
    weighted_degree = x.zeros(num_vertices, dtype=x.int64)
    pins = level.pin_vertices
    if pins.shape[0]:
        launch(rated_degree_kernel, grid(pins.shape[0]), offsets, pins, level.net_weights, max_net_size,
               weighted_degree)
    largest = float(scalar(weighted_degree.max(keepdims=True))) if num_vertices else 0.0
    bits = int(np.ceil(np.log2(largest + 2.0)))
    shift = max(0, min(20, 62 - bits))
    ratings = x.empty(offsets.shape[0] - 1, dtype=x.int64)
    launch(net_ratings_kernel, grid(ratings.shape[0]), offsets, level.net_weights, shift, bool(heavy_edge),
           max_net_size, ratings)
    return ratings, shift


@cached_kernel
def incident_work_kernel(net_offsets, ratings, incident_nets, work_terms):
    """work_terms[i] = |e| for incidence entry i of a rated net e (ratings[e] > 0), else 0."""
    for i in range(cuda.grid(1), incident_nets.shape[0], cuda.gridsize(1)):
        e = incident_nets[i]
        work_terms[i] = net_offsets[e + 1] - net_offsets[e] if ratings[e] > 0 else int64(0)


@cached_kernel
def vertex_work_kernel(vertex_offsets, running, work, rated_count):
    """work[v] = the pins of v's rated nets (``running``: the inclusive prefix sum of ``incident_work_kernel``);
    rated_count[0] (zero on entry) += the vertices with work (counted per block in shared memory)."""
    counted = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        counted[0] = 0
    cuda.syncthreads()
    for v in range(cuda.grid(1), work.shape[0], cuda.gridsize(1)):
        start, end = vertex_offsets[v], vertex_offsets[v + 1]
        amount = sum_before(running, end) - sum_before(running, start)
        work[v] = amount
        if amount:
            cuda.atomic.add(counted, 0, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and counted[0]:
        cuda.atomic.add(rated_count, 0, counted[0])


@cached_kernel
def vertex_bins_kernel(work, rated_count, pool_limits, wide_limit, block_limit, split_limit, global_limit, bound,
                       keys):
    """bound[v] = min(work[v], max(rated vertices - 1, 1)) (v's distinct neighbours at most) and the kernel that
    rates v, as keys (bin << 32 | v): the global bin above ``global_limit``, the block bin above
    ``block_limit``, the split bin for work above ``split_limit``, the wide bin above ``wide_limit``, else the
    pooled bin of the first POOL_LIMITS entry >= bound."""
    neighbours = max(rated_count[0] - 1, 1)
    for v in range(cuda.grid(1), work.shape[0], cuda.gridsize(1)):
        amount = work[v]
        limit = min(amount, neighbours)
        bound[v] = limit
        if limit > global_limit:
            kind = GLOBAL_BIN
        elif limit > block_limit:
            kind = BLOCK_BIN
        elif amount > split_limit:
            kind = SPLIT_BIN
        elif limit > wide_limit:
            kind = WIDE_BIN
        else:
            kind = lower_bound(pool_limits, limit)
        keys[v] = (int64(kind) << 32) | int64(v)


class _Clock:
    """Seconds per kernel into ``timings`` (a dict) when profiling: each lap synchronises the device."""

    def __init__(self, timings):
        self.timings = timings
        if timings is not None:
            cuda.synchronize()
            self.last = time.perf_counter()

    def lap(self, name):
        if self.timings is not None:
            cuda.synchronize()
            now = time.perf_counter()
            self.timings[name] = self.timings.get(name, 0.0) + now - self.last
            self.last = now


_POOL_LIMITS: list = []


def _pool_limits():
    """POOL_LIMITS on the device, copied once."""
    if not _POOL_LIMITS:
        _POOL_LIMITS.append(to_device(np.array(POOL_LIMITS, dtype=np.int64)))
    return _POOL_LIMITS[0]


class DevicePlan:
    """The binned work of one level on the device: which kernel rates which vertex, fixed for the level's
    proposal rounds (``propose``). ``level`` is a :class:`~hgpart.hypergraph.Hypergraph` on the device.
    Set ``timings`` to a dict to collect seconds per kernel (synchronising after each; for profiling)."""

    timings = None

    def __init__(self, level, ratings, max_weight: int, weight_penalty: bool, limits=KERNEL_LIMITS):
        x = xp()
        self.level = level
        self.ratings = ratings
        self.max_weight = int(max_weight)
        self.weight_penalty = bool(weight_penalty)
        offsets, vertex_offsets, incident_nets = level.net_offsets, level.vertex_offsets, level.incident_nets
        n = vertex_offsets.shape[0] - 1
        running = x.empty(incident_nets.shape[0], dtype=x.int64)
        launch(incident_work_kernel, grid(running.shape[0]), offsets, ratings, incident_nets, running)
        running = x.cumsum(running)
        work, rated_count = x.empty(n, dtype=x.int64), x.zeros(1, dtype=x.int64)
        launch(vertex_work_kernel, grid(n), vertex_offsets, running, work, rated_count)  # only they can be neighbours
        self.bound, keys = x.empty(n, dtype=x.int64), x.empty(n, dtype=x.int64)
        launch(vertex_bins_kernel, grid(n), work, rated_count, _pool_limits(), *(int(limit) for limit in limits),
               self.bound, keys)
        self.order, device_starts = x.empty(n, dtype=x.int32), x.empty(GLOBAL_BIN + 2, dtype=x.int64)
        launch(csr_from_sorted_kernel, grid(max(n, 1)), x.sort(keys), GLOBAL_BIN + 1, device_starts, self.order)
        bin_starts = to_host(device_starts)
        counts = np.diff(bin_starts)
        groups = [-(-int(counts[k]) // (16 >> k)) for k in range(POOL_BINS)]
        self.pool_groups = int(sum(groups))
        self.bin_starts = device_starts[:POOL_BINS + 1]
        self.group_starts = to_device(np.concatenate([[0], np.cumsum(groups)]).astype(np.int64))
        self.counts = counts

        def members(bin_index):
            return self.order[int(bin_starts[bin_index]):int(bin_starts[bin_index + 1])]

        self.wide = members(WIDE_BIN)
        self.block = members(BLOCK_BIN)
        self.split_batches = self._heavy_batches(members(SPLIT_BIN), SPLIT_NETS)
        self.heavy_batches = self._heavy_batches(members(GLOBAL_BIN), WARP_SIZE)
        self.arrays = {"ratings": ratings, "order": self.order, "bin_starts": self.bin_starts,
                       "group_starts": self.group_starts, "wide": self.wide, "block": self.block, "bound": self.bound,
                       **{name: getattr(level, name) for name in ("net_offsets", "pin_vertices", "vertex_offsets",
                                                                  "incident_nets", "vertex_weights")}}

    def _heavy_batches(self, heavy, nets_per_item: int) -> list:
        """Vertices rated by many warps, in batches whose global tables fit HEAVY_TABLE_BUDGET slots, with
        their work items (``nets_per_item`` incident nets each): item_vertex (index into the batch) and
        item_first (first net). The table arrays are shared by the batches (emptied after each use)."""
        x = xp()
        batches = []
        if heavy.shape[0] == 0:
            return batches
        vertex_offsets = self.level.vertex_offsets
        bounds, degrees = to_host(self.bound[heavy]), to_host(vertex_offsets[heavy + 1] - vertex_offsets[heavy])
        sizes = np.left_shift(np.int64(1), np.ceil(np.log2(np.maximum(2 * bounds, MIN_TABLE))).astype(np.int64))
        start = 0
        while start < heavy.shape[0]:
            count = max(1, int(np.searchsorted(np.cumsum(sizes[start:]), HEAVY_TABLE_BUDGET, side="right")))
            stop = start + count
            table_offsets = np.concatenate([[0], np.cumsum(sizes[start:stop])]).astype(np.int64)
            item_vertex, rank = segment_items(np.asarray(degrees[start:stop], dtype=np.int64), nets_per_item)
            # Item r of every vertex before item r + 1 of any: incident nets are sorted, so the blocks that run at
            # once read the pins of nearby nets, which L2 then holds (long-tailed round 1.10 -> 0.97 s).
            order = np.argsort(rank, kind="stable")
            item_vertex, rank = item_vertex[order], rank[order]
            vertices = heavy[start:stop]
            item_vertex_d = to_device(item_vertex)
            item_first = self.level.vertex_offsets[vertices[item_vertex_d]] + to_device(rank * nets_per_item)
            batches.append({"vertices": vertices, "table_offsets": to_device(table_offsets),
                            "item_vertex": item_vertex_d, "item_first": item_first.astype(x.int64),
                            "slots": int(table_offsets[-1])})
            start = stop
        largest = max(batch["slots"] for batch in batches)
        keys = x.full(largest, -1, dtype=x.int32)  # shared by the batches: emptied by heavy_best_kernel
        values = x.zeros(largest, dtype=x.int64)
        used = x.empty(largest, dtype=x.int32)
        fill = x.zeros(max(batch["vertices"].shape[0] for batch in batches), dtype=x.int64)
        for batch in batches:
            count = batch["vertices"].shape[0]
            batch["keys"], batch["values"], batch["used"], batch["fill"] = keys, values, used, fill
            batch["skip"] = x.zeros(count, dtype=x.uint8)
            batch["top_ids"] = x.empty(count * TOP_CANDIDATES, dtype=x.int32)
            batch["top_raws"] = x.empty(count * TOP_CANDIDATES, dtype=x.int64)
            batch["top_length"] = x.zeros(count, dtype=x.int32)
            batch["top_floor"] = x.zeros(count, dtype=x.float64)
            batch["top_kind"] = x.zeros(count, dtype=x.uint8)  # no list yet
        return batches

    def propose(self, merge_key, cluster_weight, partner, proposals, only_unmatched: bool, rerate_only: bool = False):
        """One proposal round: proposals[v] for every vertex (-1 for the matched and those with no candidate).

        merge_key int64[n] (-1 none), cluster_weight int64[n], partner int32[n] (-1 unmatched), proposals
        int32[n]; with ``only_unmatched`` only unmatched vertices are candidates (matching), else any (joining);
        with ``rerate_only`` (matching rounds after the first) only vertices whose target got matched are
        rated again.
        """
        static = self.arrays
        tables = [static[name] for name in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets")]
        ratings = static["ratings"]
        arguments = (*tables, ratings, static.vertex_weights, merge_key, partner, cluster_weight, self.max_weight,
                     self.weight_penalty, only_unmatched, rerate_only)
        clock = _Clock(self.timings)
        if self.pool_groups:
            blocks = _blocks(-(-self.pool_groups // POOL_WARPS), 8)
            launch(pooled_propose_kernel, (blocks, POOL_WARPS * WARP_SIZE), *arguments, static["order"],
                   static["bin_starts"], static["group_starts"], proposals)
            clock.lap("pooled")
        if self.wide.shape[0]:
            launch(wide_propose_kernel, (_blocks(self.wide.shape[0], 9), WARP_SIZE), *arguments, static["wide"],
                   static["bound"], proposals)
            clock.lap("wide")
        if self.block.shape[0]:
            block_arguments = (*arguments, static["block"], static["bound"], proposals)
            allow_dynamic_shared(block_propose_kernel, block_arguments, BLOCK_TABLE * 8)
            launch(block_propose_kernel, (_blocks(self.block.shape[0], 2), HEAVY_BLOCK, 0, BLOCK_TABLE * 8),
                   *block_arguments)
            clock.lap("block")
        for kernel, batches, per_block in ((split_rate_kernel, self.split_batches, 1),
                                           (heavy_rate_kernel, self.heavy_batches, HEAVY_WARPS)):
            for batch in batches:
                table = (batch["table_offsets"], batch["keys"], batch["values"], batch["used"], batch["fill"])
                top = tuple(batch[name] for name in TOP_FIELDS)
                launch(heavy_listed_kernel, grid(batch["vertices"].shape[0]), *arguments[5:], batch["vertices"],
                       *top, batch["skip"], proposals)
                clock.lap("listed")
                launch(kernel, (_blocks(-(-batch["item_vertex"].shape[0] // per_block), 8), HEAVY_BLOCK),
                       *tables, ratings, batch["vertices"], batch["item_vertex"], batch["item_first"], *table,
                       batch["skip"])
                clock.lap("split" if kernel is split_rate_kernel else "global")
                launch(heavy_best_kernel, (_blocks(batch["vertices"].shape[0], 8), HEAVY_BLOCK), *arguments[5:],
                       batch["vertices"], *table, batch["skip"], *top, proposals)
                clock.lap("best")
        return proposals


@cached_kernel
def pair_roots_kernel(partner, vertex_weights, merge_key, base_budget, root, free, cluster_weight, cluster_key,
                      budgets):
    """The matching's pairs as clusters: root[v] = min(v, partner[v]) (v when unmatched), free = partner, each
    vertex's weight added to its root's cluster_weight (zero on entry) and its key maxed into cluster_key
    (merge_key's copy on entry); budgets[0] (zero on entry) = base_budget - the pairs (counted per block in
    shared memory, one global atomic a block)."""
    pairs = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        pairs[0] = 0
    cuda.syncthreads()
    for v in range(cuda.grid(1), partner.shape[0], cuda.gridsize(1)):
        u = partner[v]
        r = min(v, u) if u >= 0 else v
        root[v] = r
        free[v] = u
        cuda.atomic.add(cluster_weight, r, vertex_weights[v])
        cuda.atomic.max(cluster_key, r, merge_key[v])
        if u > v:
            cuda.atomic.add(pairs, 0, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(budgets, 0, (base_budget if cuda.blockIdx.x == 0 else 0) - pairs[0])


@cached_kernel
def root_views_kernel(root, cluster_key, cluster_weight, root_keys, root_weights):
    """root_keys[v] = cluster_key[root[v]], root_weights[v] = cluster_weight[root[v]]: what a joining round's
    proposals see of each vertex's cluster."""
    for v in range(cuda.grid(1), root.shape[0], cuda.gridsize(1)):
        r = root[v]
        root_keys[v] = cluster_key[r]
        root_weights[v] = cluster_weight[r]


@cached_kernel
def join_walk_kernel(proposals, root, jump, smallest, changed):
    """The pointers a joining round follows: jump[v] = the root of proposals[v]'s cluster (v's own root without
    a proposal), smallest[v] = v; changed[0] = 0 (for the first doubling step)."""
    if cuda.grid(1) == 0:
        changed[0] = 0
    for v in range(cuda.grid(1), proposals.shape[0], cuda.gridsize(1)):
        target = proposals[v]
        jump[v] = root[target] if target >= 0 else root[v]
        smallest[v] = v


@cached_kernel
def join_keys_kernel(proposals, jump, smallest, merge_key, cluster_key, final, keys):
    """final[v] = the smallest id on the cycle v's pointers lead to (after pointer doubling); keys[v] =
    final[v] << 32 | v for a joiner (a proposal, a final cluster other than itself, keys that agree), else
    n << 32 | v, which sorts after every joiner."""
    n = proposals.shape[0]
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        target = smallest[jump[v]]
        final[v] = target
        joiner = proposals[v] >= 0 and target != v and (merge_key[v] < 0 or merge_key[v] == cluster_key[target])
        keys[v] = ((int64(target) if joiner else int64(n)) << 32) | int64(v)


@cached_kernel
def joiner_weights_kernel(keys, vertex_weights, sorted_weights):
    """sorted_weights[i] = the weight of the joiner at sorted position i (0 past the joiners)."""
    n = keys.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        key = keys[i]
        sorted_weights[i] = vertex_weights[key & LOW32] if (key >> 32) < n else int64(0)


@cached_kernel
def join_fits_kernel(keys, running, cluster_weight, max_weight, fits):
    """fits[v] = 1 for a joiner v whose target, with the joiners before v in vertex order that aim at it
    (``running``: the inclusive prefix sum of the sorted weights; a binary search finds the target's run),
    stays within ``max_weight``; 0 for the others."""
    n = keys.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        key = keys[i]
        target = key >> 32
        fit = 0
        if target < n:
            start = lower_bound(keys, target << 32)
            counted = running[i] - sum_before(running, start)
            fit = 1 if cluster_weight[target] + counted <= max_weight else 0
        fits[key & LOW32] = fit


@cached_kernel
def apply_joins_kernel(fits, ranks, final, vertex_weights, merge_key, budgets, round_index, root, free,
                       cluster_weight, cluster_key):
    """The first budgets[round_index] vertices that fit (``ranks``: the inclusive prefix sum of ``fits``) join
    their final cluster: root, free, the cluster's weight and key follow; budgets[round_index + 1] = the
    budget left."""
    n = fits.shape[0]
    budget = budgets[round_index]
    if cuda.grid(1) == 0:
        budgets[round_index + 1] = budget - (min(ranks[n - 1], budget) if n and budget > 0 else 0)
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        if fits[v] and ranks[v] <= budget:
            target = final[v]
            root[v] = target
            free[v] = target
            free[target] = target
            cuda.atomic.add(cluster_weight, target, vertex_weights[v])
            cuda.atomic.max(cluster_key, target, merge_key[v])


@cached_kernel
def first_members_kernel(root, smallest, is_first):
    """is_first[v] = 1 when v is the smallest member of its cluster (``smallest``: per root, by scatter-min)."""
    for v in range(cuda.grid(1), root.shape[0], cuda.gridsize(1)):
        is_first[v] = 1 if smallest[root[v]] == v else 0


@cached_kernel
def cluster_ids_kernel(root, smallest, ranks, cluster):
    """cluster[v] = the rank of its cluster's smallest member among the first members, from 0."""
    for v in range(cuda.grid(1), root.shape[0], cuda.gridsize(1)):
        cluster[v] = int32(ranks[smallest[root[v]]] - 1)


def number_clusters_device(root):
    """:func:`.matching.number_clusters` on the device: (cluster int32[n], n')."""
    x = xp()
    n = root.shape[0]
    if n == 0:
        return x.empty(0, dtype=x.int32), 0
    smallest = x.full(n, n, dtype=x.int32)
    scatter(scatter_min_kernel, root, x.arange(n, dtype=x.int32), smallest)
    is_first = x.empty(n, dtype=x.int64)
    launch(first_members_kernel, grid(n), root, smallest, is_first)
    ranks = x.cumsum(is_first)
    cluster = x.empty(n, dtype=x.int32)
    launch(cluster_ids_kernel, grid(n), root, smallest, ranks, cluster)
    return cluster, int(scalar(ranks, n - 1))


@cached_kernel
def two_hop_keys_kernel(free, proposals, root, vertex_offsets, keys):
    """keys[v] = (c + 1) << 32 | v for a vertex v left alone (free[v] < 0) that proposed to cluster c = root[
    proposals[v]] (c = -1 for a lone vertex in no net), else (n + 1) << 32 | v, which sorts after them."""
    n = free.shape[0]
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        cluster = int64(n)
        if free[v] < 0:
            if vertex_offsets[v + 1] == vertex_offsets[v]:
                cluster = int64(-1)
            elif proposals[v] >= 0:
                cluster = int64(root[proposals[v]])
        keys[v] = ((cluster + 1) << 32) | int64(v)


@cached_kernel
def two_hop_pairs_kernel(keys, vertex_weights, max_weight, pairs):
    """pairs[i] = 1 where the sorted candidate at position i takes the next one as its pair: i has an even rank
    in its run of one cluster (a binary search finds the run's start), the next one is in the run, and the
    two weigh at most ``max_weight``."""
    n = keys.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        run = keys[i] >> 32
        pair = 0
        if run <= n and i + 1 < n and keys[i + 1] >> 32 == run and (i - lower_bound(keys, run << 32)) % 2 == 0:
            weight = vertex_weights[keys[i] & LOW32] + vertex_weights[keys[i + 1] & LOW32]
            pair = 1 if weight <= max_weight else 0
        pairs[i] = pair


@cached_kernel
def two_hop_apply_kernel(keys, pairs, ranks, budget, root):
    """The first ``budget`` pairs in sorted order (``ranks``: the inclusive prefix sum of ``pairs``): the
    second vertex of each takes the first as its root."""
    for i in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        if pairs[i] and ranks[i] <= budget:
            root[keys[i + 1] & LOW32] = int32(keys[i] & LOW32)


def _two_hop_unkeyed(state: dict, level, proposals, max_weight: int, budget: int):
    """:func:`.matching.two_hop_pairs` applied to ``state["root"]`` when no vertex has a merge key (all -1):
    the candidates sorted by (cluster, vertex) as one radix sort, paired by a scan; five operations instead of
    about 45."""
    x = xp()
    if budget <= 0:
        return
    n = proposals.shape[0]
    keys = state["keys"]
    launch(two_hop_keys_kernel, grid(n), state["free"], proposals, state["root"], level.vertex_offsets, keys)
    keys = x.sort(keys)
    pairs = state["fits"]
    launch(two_hop_pairs_kernel, grid(n), keys, level.vertex_weights, max_weight, pairs)
    launch(two_hop_apply_kernel, grid(n), keys, pairs, x.cumsum(pairs), budget, state["root"])


def _join_round(state: dict, plan: DevicePlan, round_index: int, max_weight: int, merge_key, proposals):
    """One joining round of :func:`.matching.finish_clustering` on the device (proposals, pointer doubling to
    each joiner's final cluster, a radix sort by (target, vertex) and a scan to admit joiners in vertex order
    under the weight limit and the budget); returns the budgets before and after it (one read)."""
    x = xp()
    n = proposals.shape[0]
    root, free, cluster_weight, cluster_key = (state[name] for name in ("root", "free", "cluster_weight",
                                                                         "cluster_key"))
    launch(root_views_kernel, grid(n), root, cluster_key, cluster_weight, state["root_keys"], state["root_weights"])
    plan.propose(state["root_keys"], state["root_weights"], free, proposals, False)
    jump, smallest, jump_out, smallest_out = (state[name] for name in ("jump", "smallest", "jump_out",
                                                                       "smallest_out"))
    changed = state["changed"]
    launch(join_walk_kernel, grid(n), proposals, root, jump, smallest, changed)
    for _ in range(int(math.ceil(math.log2(max(n, 2)))) + 1):  # 2^steps >= n: every walk is on its cycle
        launch(pointer_double_kernel, grid(n), jump, smallest, jump_out, smallest_out, changed)
        jump, jump_out, smallest, smallest_out = jump_out, jump, smallest_out, smallest
        if scalar(changed) == 0:  # jumps are fixed points: each covers its whole (power-of-two) cycle
            break
        changed[...] = 0
    final, keys = state["final"], state["keys"]
    launch(join_keys_kernel, grid(n), proposals, jump, smallest, merge_key, cluster_key, final, keys)
    keys = x.sort(keys)
    sorted_weights = state["sorted_weights"]
    launch(joiner_weights_kernel, grid(n), keys, state["weights"], sorted_weights)
    fits = state["fits"]
    launch(join_fits_kernel, grid(n), keys, x.cumsum(sorted_weights), cluster_weight, max_weight, fits)
    launch(apply_joins_kernel, grid(n), fits, x.cumsum(fits), final, state["weights"], merge_key, state["budgets"],
           round_index, root, free, cluster_weight, cluster_key)
    before, after = (int(budget) for budget in to_host(state["budgets"][round_index:round_index + 2]))
    return before, after


def finish_clustering_device(level, plan: DevicePlan, max_weight: int, config, merge_key, partner, proposals,
                             keyed: bool = True):
    """:func:`.matching.finish_clustering` on the device, step for step, with one read a joining round (the
    budget left). Unlike the CPU it runs the first joining round even when the matching alone spent the
    budget: that round admits nobody (the CPU's loop would not have started), so the map is the same.
    Before (2026-11-24) a joining round took about 45 operations and 5 reads: 10-12 ms of the host's time a
    level on the H100 machine. ``keyed``: False when no vertex has a merge key (the 2-hop step then sorts
    one key per vertex, see :func:`_two_hop_unkeyed`)."""
    x = xp()
    n = partner.shape[0]
    weights = level.vertex_weights
    state = {"root": x.empty(n, dtype=x.int32), "free": x.empty(n, dtype=x.int32),
             "cluster_weight": x.zeros(n, dtype=x.int64), "cluster_key": merge_key.copy(),
             "budgets": x.zeros(JOIN_ROUNDS + 1, dtype=x.int64), "weights": weights}
    base_budget = n - int(np.ceil(n / config.max_shrink_factor))
    launch(pair_roots_kernel, grid(n), partner, weights, merge_key, base_budget, state["root"], state["free"],
           state["cluster_weight"], state["cluster_key"], state["budgets"])
    root = state["root"]
    if config.join_unmatched and n:
        for name, dtype in (("root_keys", x.int64), ("root_weights", x.int64), ("jump", x.int32),
                            ("smallest", x.int32), ("jump_out", x.int32), ("smallest_out", x.int32),
                            ("final", x.int32), ("keys", x.int64), ("sorted_weights", x.int64), ("fits", x.int64)):
            state[name] = x.empty(n, dtype=dtype)
        state["changed"] = x.empty(1, dtype=x.int32)
        budget = 0
        for round_index in range(JOIN_ROUNDS):
            before, budget = _join_round(state, plan, round_index, max_weight, merge_key, proposals)
            if before == budget or budget <= 0:  # nobody joined, or the budget is spent
                break
        if config.two_hop and not keyed:  # with budget left, a joining round ran and left its proposals
            _two_hop_unkeyed(state, level, proposals, max_weight, budget)
        elif config.two_hop:
            first, second = two_hop_pairs(x, state["free"] < 0, proposals, root, merge_key, weights, max_weight,
                                          budget, x.diff(level.vertex_offsets) == 0)
            root[second] = first
    return number_clusters_device(root)


def compute_clustering_device(level, max_weight: int, config, merge_key=None, limits=KERNEL_LIMITS):
    """The coarsening map of a level held on the device: (cluster int32[n] on the device, n').

    ``level``: a :class:`~hgpart.hypergraph.Hypergraph` on the device; ``merge_key`` int64[n] on the device or None; ``limits``: the largest
    work b of the pooled and of the wide kernel (the defaults suit the kernels; tests lower them).
    """
    x = xp()
    n = level.vertex_offsets.shape[0] - 1
    keyed = merge_key is not None
    merge_key = x.full(n, -1, dtype=x.int64) if merge_key is None else merge_key.astype(x.int64)
    ratings, _ = device_net_ratings(level, config.rating == "heavy-edge", config.max_rated_net_size)
    plan = DevicePlan(level, ratings, max_weight, config.weight_penalty, limits)
    partner = x.full(n, -1, dtype=x.int32)
    proposals = x.full(n, -1, dtype=x.int32)
    for round_index in range(config.matching_rounds):  # no early stop: it would wait for the device each round
        plan.propose(merge_key, level.vertex_weights, partner, proposals, True, round_index > 0)
        launch(mutual_kernel, grid(n), proposals, partner)
    return finish_clustering_device(level, plan, max_weight, config, merge_key, partner, proposals, keyed)


def compute_clustering_gpu(hypergraph, max_weight: int, config, fixed=None, limits=KERNEL_LIMITS):
    """GPU twin of :func:`.matching.compute_clustering` for a host hypergraph: the same map f: V -> V' (host
    int32[n]) and n'. Copies the hypergraph to the device and the map back."""
    level = hypergraph.to_device()
    merge_key = None if fixed is None else to_device(np.asarray(fixed, dtype=np.int64))
    cluster, count = compute_clustering_device(level, max_weight, config, merge_key, limits)
    return to_host(cluster), count
