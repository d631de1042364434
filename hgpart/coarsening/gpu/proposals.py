"""The proposal kernels of vertices rated within one block: proposals[v], each unmatched vertex's best
candidate, for the pooled, wide and block bins of :mod:`.plan` (the bound b caps a vertex's distinct
neighbours; the work w is the pins of its rated nets).

L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015:
the rating of Figs. 5 and 8 (:mod:`.rating`) and the proposals of the parallel suitor matching (Fig. 9).

* ``pooled_propose_kernel``, b <= 256: several vertices per warp (16 >> k vertices with b <= 16 << k, for
  bins k = 0..4; the pooling of several vertices into one warp that Sec. VIII proposes for evenly connected
  inputs). Every lane of the warp takes one incident net of one of its vertices, and all their pins are
  shared evenly over the 32 lanes; each pin goes to its own vertex's table in shared memory. The lanes of
  each vertex then reduce its table to the best candidate (segmented ``warp_argmax``).
* ``wide_propose_kernel``, 256 < b <= 1024: a warp per vertex, its incident nets 32 at a time, a larger
  shared table.
* ``block_propose_kernel``, 1024 < b <= 4096 (most of a long-tailed input's vertices above the wide
  kernel: a few dozen nets of dozens of pins each): a block per vertex, its 8 warps 32 nets each at a time,
  8,192 slots of shared memory (the scores in dynamic shared memory above the 48 KB static limit, opted in
  per kernel).

Vertices with more work are split over many blocks (:mod:`.heavy`).
"""

from __future__ import annotations

from numba import cuda, float64, int32, int64, uint32

from ...cuda.arrays import cached_kernel
from ...cuda.warp import FULL_MASK, WARP_SIZE, warp_argmax, warp_max
from .rating import (BLOCK_TABLE, HEAVY_BLOCK, HEAVY_WARPS, POOL_BINS, POOL_BLOCK_ROWS, POOL_BLOCK_TABLE, POOL_TABLE,
                     POOL_WARPS, WIDE_TABLE, _best_in_table, _block_argmax, _keeps_proposal, _rate_nets, _rate_rows,
                     _table_slots)


@cached_kernel
def pooled_propose_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                          merge_key, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, rerate_only,
                          bin_vertices, bin_starts, group_starts, proposals):
    """proposals[v] for the vertices of bins 0..4, several per warp (Cheng, Cho and Yoon, Sec. VIII).

    bin_vertices int32[n]: vertices ordered by bin; bin k holds bin_vertices[bin_starts[k]:bin_starts[k + 1]]
    (bin_starts int64[6]), in groups of 16 >> k (one group per warp, 2 << k lanes and 32 << k table slots per
    vertex), numbered group_starts[k] .. group_starts[k + 1] - 1 (group_starts int64[6]). A matched vertex
    (partner >= 0) gets -1. The level, the ratings and the matching state as in
    :meth:`.plan.DevicePlan.propose`.
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
