"""The rating on the device: scores S(u) in open-addressing hash tables, filled by warps that share their
nets' pins, and the candidate order of the CPU (the device helpers of :mod:`.proposals` and :mod:`.heavy`).

L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015:
MONDRIAAN-PARALLEL with the LAMBDA1 helper (Figs. 5 and 8) and the inner-product similarity (Eq. 7-8). A
vertex v adds the fixed-point rating of each incident net to S(u) for every other pin u, in an
open-addressing hash table (atomic CAS claims a slot, atomic add accumulates; 2^ceil(log2(2 b)) slots for a
vertex with at most b distinct neighbours, so the table never fills). Scores are exact integers, so the order
of the atomics does not matter and the GPU's candidates equal the CPU's
(:func:`hgpart.coarsening.rules.candidate_score`, ties broken by :func:`hgpart.coarsening.rules.pair_priority`,
then the smaller id). A table in shared memory holds each score as
two uint32 halves (a 64-bit shared atomic add is a compare-and-swap loop on Hopper GPUs,
ATOMS.CAST.SPIN.64; a 32-bit one is a single ATOMS.ADD), the high half taking the low half's carries.

A warp rates up to 32 nets at once, one per lane, their pins laid end to end and shared out by
:func:`hgpart.cuda.warp.warp_schedule`: when the nets hold 32 pins or more on average, lane l takes pins
l, l + 32, ..., so that the warp reads 32 consecutive pins at each step (coalesced loads); shorter nets are
split by the Fig. 5 planner's contiguous shares, which cross fewer nets per lane. Indices in the hot loop are
unsigned: numba tests every signed index for a negative value.

The constants below size the tables and bins of every rating kernel (:mod:`.plan` bins the vertices; shared
memory shapes must be plain module constants).
"""

from __future__ import annotations

from numba import cuda, float64, int32, int64, uint64

from ...cuda.arrays import SIMULATED
from ...cuda.primitives import add_halves, halves_value
from ...cuda.warp import FULL_MASK, WARP_SIZE, warp_argmax, warp_next_row, warp_schedule
from ..rules import better_candidate, candidate_score, pair_priority

POOL_BINS = 5                  # bin k: 16 >> k vertices per warp, 32 << k slots each, for b <= 16 << k
POOL_TABLE = 512               # shared table slots per warp of the pooled kernel
POOL_WARPS = 1 if SIMULATED else 4  # warps per block of the pooled kernel (the simulator runs a thread per thread)
POOL_BLOCK_TABLE = POOL_WARPS * POOL_TABLE  # shared-memory shapes must be plain module constants
POOL_BLOCK_ROWS = POOL_WARPS * 32
WIDE_TABLE = 2048              # shared table slots of the wide kernel (one warp per block), b <= 1024
BLOCK_TABLE = 8192             # shared table slots of the block kernel, b <= 4096 (keys static, scores dynamic)
HEAVY_BLOCK = 32 if SIMULATED else 256  # threads per block of the heavy kernels
HEAVY_WARPS = HEAVY_BLOCK // WARP_SIZE
MIN_TABLE = 64                 # fewest slots of a vertex's table
SPLIT_TABLE = 2048             # shared table slots of the split kernel (a block per work item)
SPLIT_NETS = 8 * HEAVY_BLOCK   # incident nets per work item of the split kernel
TOP_LOCAL = 4                  # candidates each thread of heavy_best_kernel keeps
TOP_CANDIDATES = 4 if SIMULATED else 32  # best candidates listed per heavy vertex for later rounds
POOL_LIMITS = (16, 32, 64, 128, 256)  # largest bound of pooled bins 0..4
KERNEL_LIMITS = (256, 1024, 8192, 4096)  # largest bound of the pooled and of the wide kernel; largest work
                                         # outside the split kernels; largest bound of the block kernel (tests
                                         # lower them to fill every bin on tiny inputs)
WIDE_BIN, BLOCK_BIN, SPLIT_BIN, GLOBAL_BIN = POOL_BINS, POOL_BINS + 1, POOL_BINS + 2, POOL_BINS + 3

candidate_score_gpu = cuda.jit(device=True, inline=True)(candidate_score)
pair_priority_gpu = cuda.jit(device=True, inline=True)(pair_priority)
better_candidate_gpu = cuda.jit(device=True, inline=True)(better_candidate)


ROW_END, ROW_PINS = range(2)             # the int64 row_spans shared arrays: a row's end and pin offset
ROW_OWNER, ROW_TABLE, ROW_NET = range(3)  # the int32 row_ids shared arrays (every table base is < 2^31: at most
                                          # plan.HEAVY_TABLE_BUDGET slots before it); 28 bytes a row, so that 8
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
    proportional to its entries. (The shared kernels pass the constant -1, which removes the branches.)"""
    slot = (int64(u) * 2654435761) & mask
    for _ in range(mask + 1):
        index = uint64(base + slot)  # unsigned: numba tests every signed index for a negative value
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
            score = candidate_score_gpu(halves_value(low, high, slot), partner[u], cluster_weight[u],
                                        vertex_weights[v], merge_key[v], merge_key[u], max_weight, weight_penalty,
                                        only_unmatched)
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
