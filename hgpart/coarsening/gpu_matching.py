"""GPU twin of :mod:`.matching`: proposal rounds on the device (seed 000 Figs. 5, 8, 9).

Kernel ``propose_kernel`` (MONDRIAAN-PARALLEL with the LAMBDA1 helper, Fig. 5 and 8): one warp per
active vertex v. The incident nets of v are taken 32 at a time, one per lane, and the Fig. 5 planner
(:func:`hgpart.cuda.warp.warp_plan`) gives every lane an equal share of their pins. Each pin u != v adds
the net's fixed-point rating to S(u) in a per-warp open-addressing hash table in shared memory
(atomic CAS to claim a slot, atomic add for the score). The warp then scans the table, scores each
candidate exactly as the CPU does (:func:`.matching.candidate_score`), and reduces to the best (higher
score, ties to the smaller id) with :func:`hgpart.cuda.warp.warp_argmax`. Each vertex uses only the
first 2^ceil(log2(2 b)) slots of the table (at least 64), b bounding its distinct neighbours, so a
light vertex scans a small table. Vertices are binned by b before the launch: those with b above half
the shared table go to ``heavy_propose_kernel`` instead, a whole block per vertex, its warps sharing
the incident nets, with a table of its own in global memory sized the same way.

Kernel ``mutual_kernel`` (Fig. 9 lines 10-15): mutual proposals are matched.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, float64, int32, int64

from ..cuda.warp import FULL_MASK, WARP_SIZE, warp_argmax, warp_plan

HEAVY_BLOCK = 256                      # threads per block of the heavy-vertex kernel
HEAVY_WARPS = HEAVY_BLOCK // WARP_SIZE
HEAVY_ROWS = HEAVY_BLOCK
HEAVY_TABLE_BUDGET = 1 << 27          # table slots per launch (12 bytes each)
from .matching import candidate_score

TABLE_BITS = 11
TABLE_SIZE = 1 << TABLE_BITS          # slots per warp (2048 x 12 bytes = 24 KiB)
WARPS_PER_BLOCK = 2
BLOCK_TABLE = TABLE_SIZE * WARPS_PER_BLOCK  # shared-memory shapes must be compile-time constants
BLOCK_ROWS = WARP_SIZE * WARPS_PER_BLOCK
MIN_TABLE = 64

candidate_score_gpu = cuda.jit(device=True, inline=True)(candidate_score)


@cuda.jit(device=True, inline=True)
def _slot(u):
    return (u * 2654435761) & (TABLE_SIZE - 1)


@cuda.jit(device=True, inline=True)
def _table_add(keys, values, base, mask, u, amount):
    """Add ``amount`` to the score of u in the open-addressing table keys/values[base:base + mask + 1]
    (shared or global memory); False when every slot holds another vertex."""
    slot = (u * 2654435761) & mask
    for _ in range(mask + 1):
        key = keys[base + slot]
        if key == -1:
            key = cuda.atomic.cas(keys, base + slot, -1, u)
            if key == -1:
                key = u
        if key == u:
            cuda.atomic.add(values, base + slot, amount)
            return True
        slot = (slot + 1) & mask
    return False


@cuda.jit(device=True, inline=True)
def _rate_chunk(v, chunk, end, lane, rows, net_offsets, pin_vertices, incident_nets, ratings, row_net, row_start,
                keys, values, base, mask):
    """MONDRIAAN-PARALLEL for one chunk of v's incident nets (Fig. 5): lane l takes net chunk + l, the
    planner gives every lane an equal share of their pins, and each pin u != v adds the net's rating to
    S(u) (LAMBDA1, Fig. 8). Called by every lane of the warp. Returns False if the table filled up."""
    q = chunk + lane
    length = int64(0)
    net = int32(-1)
    if q < end:
        net = incident_nets[q]
        if ratings[net] > 0:
            length = net_offsets[net + 1] - net_offsets[net]
    row_net[rows + lane] = net
    row_start[rows + lane] = net_offsets[net] if net >= 0 else 0
    cuda.syncwarp(FULL_MASK)
    start_row, start_col, end_row, end_col, total = warp_plan(length, lane)
    fits = True
    row = start_row
    col = start_col
    while row < end_row or (row == end_row and col < end_col):
        net = row_net[rows + row]
        size = net_offsets[net + 1] - net_offsets[net] if net >= 0 else 0
        if net < 0 or ratings[net] == 0 or col >= size:
            row += 1
            col = 0
            continue
        u = pin_vertices[row_start[rows + row] + col]
        if u != v and not _table_add(keys, values, base, mask, u, ratings[net]):
            fits = False
        col += 1
    cuda.syncwarp(FULL_MASK)
    return fits


@cuda.jit(device=True, inline=True)
def _best_in_table(v, keys, values, base, first, stride, count, vertex_weights, merge_key, partner, cluster_weight,
                   max_weight, weight_penalty, only_unmatched):
    """This thread's best candidate among slots first, first + stride, ... < count of the table (the CPU's
    scores and tie order); the slots it reads are emptied for the next vertex. Returns (score, id or -1)."""
    best = int32(-1)
    best_score = float64(0.0)
    for slot in range(first, count, stride):
        u = keys[base + slot]
        if u >= 0:
            score = candidate_score_gpu(v, u, values[base + slot], vertex_weights, merge_key, partner,
                                        cluster_weight, max_weight, weight_penalty, only_unmatched)
            if score > 0.0 and (best < 0 or score > best_score or (score == best_score and u < best)):
                best = u
                best_score = score
            keys[base + slot] = -1
            values[base + slot] = 0
    return best_score, best


@cuda.jit(device=True, inline=True)
def _table_slots(bound):
    """Slots for a vertex with at most ``bound`` distinct neighbours: a power of two >= 2 bound, >= 64."""
    size = int64(MIN_TABLE)
    while size < 2 * bound:
        size *= 2
    return size


@cuda.jit
def propose_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights, merge_key,
                   partner, cluster_weight, max_weight, weight_penalty, only_unmatched, neighbour_bound,
                   active_vertices, proposals):
    """proposals[v] for each v in ``active_vertices`` (int32[a], each with neighbour_bound[v] <= TABLE_SIZE / 2):
    the best candidate, -1 if none.

    net_offsets int64[m+1], pin_vertices int32[p], vertex_offsets int64[n+1], incident_nets int32[p],
    ratings int64[m] (fixed point, 0 = skipped net), vertex_weights int64[n], merge_key int64[n] (-1 none),
    partner int32[n] (-1 unmatched), cluster_weight int64[n], proposals int32[n].
    """
    keys = cuda.shared.array(BLOCK_TABLE, int32)
    values = cuda.shared.array(BLOCK_TABLE, int64)
    row_net = cuda.shared.array(BLOCK_ROWS, int32)
    row_start = cuda.shared.array(BLOCK_ROWS, int64)
    lane = cuda.threadIdx.x % WARP_SIZE
    warp_in_block = cuda.threadIdx.x // WARP_SIZE
    base = warp_in_block * TABLE_SIZE
    rows = warp_in_block * WARP_SIZE
    for slot in range(lane, TABLE_SIZE, WARP_SIZE):
        keys[base + slot] = -1
        values[base + slot] = 0
    cuda.syncwarp(FULL_MASK)
    warps = cuda.gridDim.x * WARPS_PER_BLOCK
    for index in range(cuda.blockIdx.x * WARPS_PER_BLOCK + warp_in_block, active_vertices.shape[0], warps):
        v = active_vertices[index]
        begin = vertex_offsets[v]
        end = vertex_offsets[v + 1]
        slots = _table_slots(neighbour_bound[v])
        for chunk in range(begin, end, WARP_SIZE):  # the same trip count on every lane
            _rate_chunk(v, chunk, end, lane, rows, net_offsets, pin_vertices, incident_nets, ratings, row_net,
                        row_start, keys, values, base, slots - 1)  # 2 b slots: never fills up
        best_score, best = _best_in_table(v, keys, values, base, lane, WARP_SIZE, slots, vertex_weights, merge_key,
                                          partner, cluster_weight, max_weight, weight_penalty, only_unmatched)
        best_score, best = warp_argmax(best_score, best)
        if lane == 0:
            proposals[v] = best
        cuda.syncwarp(FULL_MASK)


@cuda.jit
def heavy_propose_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, vertex_weights,
                         merge_key, partner, cluster_weight, max_weight, weight_penalty, only_unmatched, heavy_vertices,
                         table_offsets, table_keys, table_values, proposals):
    """proposals[v] for each v in ``heavy_vertices``: one block per vertex, its table in global memory at
    table_offsets[i]..table_offsets[i+1] (a power of two, at least twice v's possible neighbours; keys -1,
    values 0 on entry and again on exit). The steps and the tie order are those of ``propose_kernel``."""
    row_net = cuda.shared.array(HEAVY_ROWS, int32)
    row_start = cuda.shared.array(HEAVY_ROWS, int64)
    warp_scores = cuda.shared.array(HEAVY_WARPS, float64)
    warp_best = cuda.shared.array(HEAVY_WARPS, int32)
    lane = cuda.threadIdx.x % WARP_SIZE
    warp = cuda.threadIdx.x // WARP_SIZE
    rows = warp * WARP_SIZE
    for index in range(cuda.blockIdx.x, heavy_vertices.shape[0], cuda.gridDim.x):
        v = heavy_vertices[index]
        base = table_offsets[index]
        mask = table_offsets[index + 1] - base - 1
        end = vertex_offsets[v + 1]
        for chunk in range(vertex_offsets[v] + warp * WARP_SIZE, end, HEAVY_BLOCK):  # uniform within a warp
            _rate_chunk(v, chunk, end, lane, rows, net_offsets, pin_vertices, incident_nets, ratings, row_net,
                        row_start, table_keys, table_values, base, mask)  # sized never to fill up
        cuda.syncthreads()
        best_score, best = _best_in_table(v, table_keys, table_values, base, cuda.threadIdx.x, HEAVY_BLOCK, mask + 1,
                                          vertex_weights, merge_key, partner, cluster_weight, max_weight,
                                          weight_penalty, only_unmatched)
        best_score, best = warp_argmax(best_score, best)
        if lane == 0:
            warp_scores[warp] = best_score
            warp_best[warp] = best
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            best = warp_best[0]
            best_score = warp_scores[0]
            for w in range(1, HEAVY_WARPS):
                u = warp_best[w]
                if u >= 0 and (best < 0 or warp_scores[w] > best_score or (warp_scores[w] == best_score and u < best)):
                    best = u
                    best_score = warp_scores[w]
            proposals[v] = best
        cuda.syncthreads()


@cuda.jit
def mutual_kernel(active_vertices, proposals, partner, matched_count):
    """Fig. 9 lines 10-15: v and u = proposals[v] are matched when u proposed v too."""
    index = cuda.grid(1)
    if index < active_vertices.shape[0]:
        v = active_vertices[index]
        u = proposals[v]
        if u >= 0 and proposals[u] == v:
            partner[v] = u
            cuda.atomic.add(matched_count, 0, 1)


def _launch_shape(count: int):
    blocks = max(1, min((count + WARPS_PER_BLOCK - 1) // WARPS_PER_BLOCK, 132 * 16))
    return blocks, WARPS_PER_BLOCK * WARP_SIZE


def _table_sizes(neighbour_bound: np.ndarray) -> np.ndarray:
    """Power-of-two table sizes of at least twice each bound (and at least 64), as ``_table_slots``."""
    bits = np.ceil(np.log2(np.maximum(2 * neighbour_bound, MIN_TABLE))).astype(np.int64)
    return np.left_shift(np.int64(1), bits)


def propose(device_arrays: dict, active: np.ndarray, partner, cluster_weight, max_weight: int,
            weight_penalty: bool, only_unmatched: bool, proposals, neighbour_bound: np.ndarray):
    """One proposal round on the device for the vertices ``active`` (host int32[a]).

    ``device_arrays`` holds the level on the device (net_offsets, pin_vertices, vertex_offsets,
    incident_nets, ratings, vertex_weights, merge_key, neighbour_bound); ``neighbour_bound`` (host
    int64[n]) bins the vertices: light ones to a warp each, heavy ones to a block each. Returns the device
    array ``proposals`` (-1 for vertices not active).
    """
    proposals.copy_to_device(np.full(proposals.shape[0], -1, dtype=np.int32))
    d = device_arrays
    arguments = (d["net_offsets"], d["pin_vertices"], d["vertex_offsets"], d["incident_nets"], d["ratings"],
                 d["vertex_weights"], d["merge_key"], partner, cluster_weight, max_weight, weight_penalty,
                 only_unmatched)
    heavy = neighbour_bound[active] > TABLE_SIZE // 2
    light = active[~heavy]
    if light.shape[0]:
        blocks, threads = _launch_shape(light.shape[0])
        propose_kernel[blocks, threads](*arguments, d["neighbour_bound"], cuda.to_device(light), proposals)
    heavy_vertices = active[heavy]
    start = 0
    while start < heavy_vertices.shape[0]:  # batches whose tables fit the budget
        sizes = _table_sizes(neighbour_bound[heavy_vertices[start:]])
        count = max(1, int(np.searchsorted(np.cumsum(sizes), HEAVY_TABLE_BUDGET, side="right")))
        batch, sizes = heavy_vertices[start:start + count], sizes[:count]
        offsets = np.zeros(count + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        table_keys = cuda.to_device(np.full(int(offsets[-1]), -1, dtype=np.int32))
        table_values = cuda.to_device(np.zeros(int(offsets[-1]), dtype=np.int64))
        heavy_propose_kernel[min(count, 132 * 8), HEAVY_BLOCK](*arguments, cuda.to_device(batch),
                                                                cuda.to_device(offsets), table_keys, table_values,
                                                                proposals)
        start += count
    return proposals


def compute_clustering_gpu(hypergraph, max_weight: int, config, fixed=None):
    """GPU twin of :func:`.matching.compute_clustering`: the same map f: V -> V' and n'.

    The proposal rounds and mutual matching run on the device; the final joining of unmatched vertices
    (sequential union-find in vertex order, as on the CPU) runs on the host.
    """
    from .matching import finish_clustering
    from .similarity import net_ratings

    n = hypergraph.num_vertices
    merge_key = np.full(n, -1, dtype=np.int64) if fixed is None else np.ascontiguousarray(fixed, dtype=np.int64)
    ratings, _ = net_ratings(hypergraph, config.rating == "heavy-edge", config.max_rated_net_size)
    weights = hypergraph.vertex_weights
    d = {"net_offsets": cuda.to_device(hypergraph.net_offsets), "pin_vertices": cuda.to_device(hypergraph.pin_vertices),
         "vertex_offsets": cuda.to_device(hypergraph.vertex_offsets),
         "incident_nets": cuda.to_device(hypergraph.incident_nets), "ratings": cuda.to_device(ratings),
         "vertex_weights": cuda.to_device(weights), "merge_key": cuda.to_device(merge_key)}
    partner_host = np.full(n, -1, dtype=np.int32)
    partner = cuda.to_device(partner_host)
    proposals = cuda.to_device(np.full(n, -1, dtype=np.int32))
    matched_count = cuda.to_device(np.zeros(1, dtype=np.int64))
    rated_sizes = np.where(ratings > 0, hypergraph.net_sizes(), 0)
    running = np.concatenate([[0], np.cumsum(rated_sizes[hypergraph.incident_nets], dtype=np.int64)])
    work = running[hypergraph.vertex_offsets[1:]] - running[hypergraph.vertex_offsets[:-1]]
    neighbour_bound = np.minimum(work, max(n - 1, 1))
    d["neighbour_bound"] = cuda.to_device(neighbour_bound)

    for _ in range(config.matching_rounds):
        active = np.flatnonzero(partner_host < 0).astype(np.int32)
        propose(d, active, partner, d["vertex_weights"], max_weight, config.weight_penalty, True, proposals,
                neighbour_bound)
        matched_count.copy_to_device(np.zeros(1, dtype=np.int64))
        active_d = cuda.to_device(active)
        mutual_kernel[max(1, (active.shape[0] + 255) // 256), 256](active_d, proposals, partner, matched_count)
        if int(matched_count.copy_to_host()[0]) == 0:
            break
        partner_host = partner.copy_to_host()
    return finish_clustering(hypergraph, max_weight, config, merge_key, partner_host,
                             lambda keys_now, cluster_weight_now: _join_round(
                                 d, partner_host, keys_now, cluster_weight_now, max_weight, config, proposals,
                                 neighbour_bound))


def _join_round(d, partner_host, cluster_keys, cluster_weight, max_weight, config, proposals, neighbour_bound):
    active = np.flatnonzero(partner_host < 0).astype(np.int32)
    d = dict(d, merge_key=cuda.to_device(np.ascontiguousarray(cluster_keys, dtype=np.int64)))
    propose(d, active, cuda.to_device(partner_host), cuda.to_device(np.ascontiguousarray(cluster_weight)), max_weight,
            config.weight_penalty, False, proposals, neighbour_bound)
    result = proposals.copy_to_host()
    result[partner_host >= 0] = -1
    return result
