"""The triangle steps on the GPU: orientation (``orient_kernel`` and CuPy's radix sort) and the launches of
the counting and listing kernels of :mod:`.device_count`. :class:`DeviceSteps` is the twin of
:class:`.host.HostSteps`: same arguments, same results.

The method follows T. M. Low, V. N. Rao, M. Lee, D. Popovici, F. Franchetti and S. McMillan, "First look:
linear algebra-based triangle counting without matrix multiplication", IEEE HPEC 2017 (see :mod:`.driver`).

Orientation: one pass, a warp per ORIENT_CHUNKS chunks of 32 input entries at a time (four chains of
dependent loads in flight), a lane per entry, counts each chunk's entries ranked above its rank (a ballot)
and writes their keys (x << 32 | w) at a place its block reserves with one atomic per round; CUB's radix
sort (CuPy) then orders them into N+ by rank, each row ascending, and a scan of the chunk counts gives the
row offsets. Chunks, not rows, so a hub's row is spread over many warps.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from ...cuda.arrays import SM_COUNT, SIMULATED, allow_dynamic_shared, cached_kernel, kernel_view, to_device, to_host, xp
from ...cuda.warp import FULL_MASK, WARP_SIZE, lane_id, lanes_below
from .common import GROUP_CHUNKS
from .device_count import (COUNT, LARGE_ROWS, SMALL_ROWS, SMALL_WARPS, WRITE, chunk_entries, large_kernel,
                           small_kernel, table_slots)
from .plan import TrianglePlan

ORIENT_WARPS = 8
ORIENT_CHUNKS = 4  # chunks per warp per round: four independent chains of loads in flight


@cuda.jit(device=True, inline=True)
def _upward(chunk, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors):
    """(key, ballot) for this lane's entry of ``chunk``: ballot marks the lanes whose neighbour ranks above
    the chunk's rank x, and their key is x << 32 | that rank. Every lane must call it (a ballot)."""
    key = int64(0)
    upward = False
    if chunk < chunk_vertex.shape[0]:
        x, entry_first, entry_stop = chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets)
        if entry_first + lane < entry_stop:
            neighbor = rank[neighbors[entry_first + lane]]
            upward = neighbor > x
            key = (int64(x) << 32) | int64(neighbor)
    return key, cuda.ballot_sync(FULL_MASK, upward)


@cuda.jit(device=True, inline=True)
def _put_upward(keys, position, key, ballot, lane):
    """Write this lane's key at ``position`` plus its place among the ballot's lanes, when it is set."""
    if (ballot >> lane) & 1:
        place = position + lanes_below(ballot, lane)
        if place < keys.shape[0]:
            keys[place] = key


@cached_kernel
def orient_kernel(chunk_vertex, chunk_first, order, rank, offsets, neighbors, chunk_counts, keys, cursor):
    """One pass: a warp takes ORIENT_CHUNKS chunks a round, a lane an entry of each; chunk_counts[c] = the
    chunk's entries ranked above its rank x (a ballot), and their keys (x << 32 | their rank) go to keys at
    a place the block reserves with one atomic on ``cursor`` per round. The keys' order is then arbitrary;
    the sort that follows orders them."""
    warp_starts = cuda.shared.array(ORIENT_WARPS, int64)
    lane = lane_id()
    warp = cuda.threadIdx.x // WARP_SIZE
    round_chunks = ORIENT_WARPS * ORIENT_CHUNKS
    for round_first in range(cuda.blockIdx.x * round_chunks, chunk_vertex.shape[0], cuda.gridDim.x * round_chunks):
        first = round_first + warp * ORIENT_CHUNKS
        key0, ballot0 = _upward(first, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        key1, ballot1 = _upward(first + 1, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        key2, ballot2 = _upward(first + 2, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        key3, ballot3 = _upward(first + 3, lane, chunk_vertex, chunk_first, order, rank, offsets, neighbors)
        count0 = cuda.popc(ballot0)
        count1 = cuda.popc(ballot1)
        count2 = cuda.popc(ballot2)
        count3 = cuda.popc(ballot3)
        if lane < ORIENT_CHUNKS and first + lane < chunk_vertex.shape[0]:
            chunk_counts[first + lane] = (count0 if lane == 0 else count1 if lane == 1 else
                                          count2 if lane == 2 else count3)
        if lane == 0:
            warp_starts[warp] = count0 + count1 + count2 + count3
        cuda.syncthreads()
        if cuda.threadIdx.x == 0:
            running = int64(0)
            for other in range(ORIENT_WARPS):
                count = warp_starts[other]
                warp_starts[other] = running
                running += count
            start = cuda.atomic.add(cursor, 0, running)
            for other in range(ORIENT_WARPS):
                warp_starts[other] += start
        cuda.syncthreads()
        position = warp_starts[warp]
        _put_upward(keys, position, key0, ballot0, lane)
        _put_upward(keys, position + count0, key1, ballot1, lane)
        _put_upward(keys, position + count0 + count1, key2, ballot2, lane)
        _put_upward(keys, position + count0 + count1 + count2, key3, ballot3, lane)


def _blocks(tasks: int, per_block: int) -> int:
    if SIMULATED:
        return 2
    return max(1, min((tasks + per_block - 1) // per_block, SM_COUNT * 16))


class DeviceSteps:
    """The array module and steps of the GPU path (CuPy; numpy under the CUDA simulator), the twin of
    :class:`.host.HostSteps`: ``orient`` builds N+, ``count`` returns (chunk_counts int64[num_chunks],
    per_vertex int64[n] by rank), ``list`` the triangles of a range of chunks as int32[t, 3]."""

    @staticmethod
    def module():
        return xp()

    @staticmethod
    def to_device(array):
        return to_device(array)

    @staticmethod
    def to_host(array):
        return to_host(array)

    @staticmethod
    def synchronize():
        if not SIMULATED:
            cuda.synchronize()

    @staticmethod
    def orient(offsets, neighbors, rank, order, chunk_first, chunk_vertex):
        """N+ by rank: one pass counts each chunk's upward entries and writes their keys (x << 32 | w) at
        places reserved per block, CUB's radix sort (CuPy) orders them, and a scan of the chunk counts gives
        out_offsets (chunks are in rank order). A Graph holds each edge in both directions, so exactly half
        the entries point upward. Both alternatives measured were slower: two passes (a count, then a write
        at scanned places), and a segmented sort instead of the one radix sort (a warp per row of up to 32,
        a block per longer row).

        offsets int64[n + 1], neighbors int32[2m] (the input, original ids), rank, order int32[n],
        chunk_first int64[n + 1], chunk_vertex int32[num_chunks] -> (out_offsets int64[n + 1], out_neighbors
        int32[m])."""
        array = xp()
        num_chunks = chunk_vertex.shape[0]
        upward = neighbors.shape[0] // 2
        chunk_counts = array.empty(num_chunks, dtype=np.int64)
        keys = array.empty(max(1, upward), dtype=np.int64)
        if num_chunks:
            cursor = array.zeros(1, dtype=np.int64)
            orient_kernel[_blocks(num_chunks, ORIENT_WARPS * ORIENT_CHUNKS), ORIENT_WARPS * WARP_SIZE](
                kernel_view(chunk_vertex), kernel_view(chunk_first), kernel_view(order), kernel_view(rank),
                kernel_view(offsets), kernel_view(neighbors), kernel_view(chunk_counts), kernel_view(keys),
                kernel_view(cursor))
            written = int(to_host(cursor)[0])
            if written != upward:
                raise ValueError(f"{written} of {neighbors.shape[0]} adjacency entries point upward, not half: "
                                 "the graph is not symmetric")
        keys = keys[:upward]
        keys.sort()  # in place: no copy of the 8 bytes per edge
        chunk_offsets = array.zeros(num_chunks + 1, dtype=np.int64)
        chunk_offsets[1:] = array.cumsum(chunk_counts)
        return chunk_offsets[chunk_first], array.ascontiguousarray(keys.view(np.int32)[0::2])  # w: low words

    @staticmethod
    def _launch(plan: TrianglePlan, small_tasks, large_groups, per_vertex, chunk_counts, chunk_offsets, first_chunk,
                last_chunk, triangles, mode):
        common = (kernel_view(plan.chunk_vertex), kernel_view(plan.chunk_first), kernel_view(plan.order),
                  kernel_view(plan.rank), kernel_view(plan.offsets), kernel_view(plan.neighbors),
                  kernel_view(plan.out_offsets), kernel_view(plan.out_neighbors))
        outputs = (kernel_view(per_vertex), kernel_view(chunk_counts), kernel_view(chunk_offsets))
        if small_tasks.shape[0]:
            capacity = table_slots(plan.config.small_out)
            nbytes = SMALL_WARPS * 2 * capacity * 4
            arguments = (kernel_view(small_tasks), *common, capacity, *outputs, first_chunk, kernel_view(triangles),
                         mode)
            allow_dynamic_shared(small_kernel, arguments, nbytes)
            small_kernel[_blocks(small_tasks.shape[0], SMALL_WARPS), SMALL_ROWS, 0, nbytes](*arguments)
        if large_groups.shape[0]:
            capacity = table_slots(plan.config.piece)
            nbytes = 2 * capacity * 4
            arguments = (kernel_view(large_groups), *common, plan.config.piece, *outputs, first_chunk, last_chunk,
                         kernel_view(triangles), mode)
            allow_dynamic_shared(large_kernel, arguments, nbytes)
            large_kernel[_blocks(large_groups.shape[0], 1), LARGE_ROWS, 0, nbytes](*arguments)

    @staticmethod
    def count(plan: TrianglePlan):
        array = xp()
        per_vertex = array.zeros(plan.rank.shape[0], dtype=np.int64)
        chunk_counts = array.zeros(plan.num_chunks, dtype=np.int64)
        unused_offsets = array.zeros(1, dtype=np.int64)  # distinct arrays: the simulator copies each one back
        unused_triangles = array.zeros((1, 3), dtype=np.int32)
        DeviceSteps._launch(plan, plan.small_chunks, plan.large_groups, per_vertex, chunk_counts, unused_offsets, 0,
                            plan.num_chunks, unused_triangles, COUNT)
        return chunk_counts, per_vertex

    @staticmethod
    def list(plan: TrianglePlan, chunk_offsets, first_chunk, last_chunk):
        array = xp()
        total = int(chunk_offsets[last_chunk] - chunk_offsets[first_chunk])
        triangles = array.empty((total, 3), dtype=np.int32)
        small_first, small_stop = to_host(array.searchsorted(plan.small_chunks, array.asarray(
            [first_chunk, last_chunk], dtype=np.int64))).tolist()
        groups_first, groups_stop = to_host(array.searchsorted(plan.large_groups, array.asarray(
            [first_chunk - GROUP_CHUNKS + 1, last_chunk], dtype=np.int64))).tolist()
        small = plan.small_chunks[small_first:small_stop]
        groups = plan.large_groups[groups_first:groups_stop]
        DeviceSteps._launch(plan, small, groups, array.zeros(1, dtype=np.int64), array.zeros(1, dtype=np.int64),
                            chunk_offsets, first_chunk, last_chunk, triangles, WRITE)
        return triangles
