"""The rating of vertices too big for one block, split over many: the split and global bins of
:mod:`.plan` (the bound b caps a vertex's distinct neighbours; the work w is the pins of its rated nets).

L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015:
the rating of Figs. 5 and 8 (:mod:`.rating`), spread over many warps and blocks, and the proposals of the
parallel suitor matching (Fig. 9).

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
when it beats the last listed matching score. Otherwise the vertex is rated again. So a hub is rated once
a level rather than once a round.
"""

from __future__ import annotations

from numba import cuda, float64, int32, int64, uint32

from ...cuda.arrays import cached_kernel
from ...cuda.primitives import halves_value
from ...cuda.warp import WARP_SIZE
from .rating import (HEAVY_BLOCK, HEAVY_WARPS, SPLIT_NETS, SPLIT_TABLE, TOP_CANDIDATES, TOP_LOCAL, _block_argmax,
                     _consider, _keeps_proposal, _rate_nets, _rate_rows, _table_add, better_candidate_gpu,
                     candidate_score_gpu, pair_priority_gpu)


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
            score = candidate_score_gpu(raw, partner[u], cluster_weight[u], vertex_weights[v], merge_key[v],
                                        merge_key[u], max_weight, weight_penalty, only_unmatched)
            table_keys[base + slot] = -1  # emptied after the score's loads, which stores ahead of them would hold up
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
            score = candidate_score_gpu(top_raws[position], partner[u], cluster_weight[u], vertex_weights[v],
                                        merge_key[v], merge_key[u], max_weight, weight_penalty, only_unmatched)
            best_score, best_priority, best = _consider(v, u, score, best_score, best_priority, best)
            if only_unmatched and best >= 0:
                break  # listed in the order of these scores
        if top_floor[index] < 0.0 or (best >= 0 and (only_unmatched or best_score > top_floor[index])):
            proposals[v] = best
        else:
            skip[index] = 0
