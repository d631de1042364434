"""Triangle counting and listing on the GPU with the warp planner of seed 000 Fig. 5 (``cuda/warp.py``).

A warp takes a group of 32 oriented edges (u, v), one per lane; the work of an edge is the |N+(u)| entries w
of u's out-list, each looked up in v's out-list by binary search. ``warp_plan`` gives every lane an equal
share of the group's (edge, entry) pairs, so a heavy edge is spread over the lanes and light edges are
pooled. The count pass writes one count per group (a warp sum) and adds each triangle to its three
vertices (u and v once per run of an edge within a lane's share, w per triangle); the list pass re-plans
the same groups and writes each lane's triangles from its offset: the group's scanned offset plus the
exclusive warp scan of the lanes' counts (seed 004's prefix sums, no global cursor).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ..cuda.arrays import SM_COUNT, SIMULATED, kernel_view, to_device, to_host, xp
from ..cuda.warp import WARP_SIZE, lane_id, warp_inclusive_scan, warp_plan, warp_sum
from .triangles import _put_sorted, _search_sorted

BLOCK_WARPS = 4
BLOCK_ROWS = BLOCK_WARPS * WARP_SIZE
COUNT, SILENT, WRITE = 0, 1, 2


search_sorted = cuda.jit(device=True, inline=True)(_search_sorted)
put_sorted = cuda.jit(device=True, inline=True)(_put_sorted)


@cuda.jit(device=True, inline=True)
def _load_row(group, lane, rows, out_offsets, out_neighbors, edge_sources, row_u, row_v, row_start):
    """Lane's edge of the group into the warp's rows; returns its work |N+(u)| (0 past the last edge)."""
    edge = group * WARP_SIZE + lane
    length = int64(0)
    u = int32(0)
    v = int32(0)
    if edge < out_neighbors.shape[0]:
        u = edge_sources[edge]
        v = out_neighbors[edge]
        length = out_offsets[u + 1] - out_offsets[u]
    row_u[rows + lane] = u
    row_v[rows + lane] = v
    row_start[rows + lane] = out_offsets[u]
    cuda.syncwarp()
    return length


@cuda.jit(device=True, inline=True)
def _lane_triangles(plan, rows, row_u, row_v, row_start, out_offsets, out_neighbors, per_vertex, triangles, position,
                    mode):
    """Walk this lane's share ``plan`` = (S_r, S_c, E_r, E_c) of the warp's (edge, entry) pairs; each w found
    in N+(v) closes a triangle. mode COUNT adds triangles to their vertices (u and v once per run of a row),
    SILENT only counts, WRITE writes them from ``position``. Returns how many."""
    start_row, start_col, end_row, end_col = plan
    found = int64(0)
    run = int64(0)
    row = start_row
    col = start_col
    while row < end_row or (row == end_row and col < end_col):
        u = row_u[rows + row]
        if col >= out_offsets[u + 1] - out_offsets[u]:
            if run and mode == COUNT:
                cuda.atomic.add(per_vertex, u, run)
                cuda.atomic.add(per_vertex, row_v[rows + row], run)
            run = 0
            row += 1
            col = 0
            continue
        v = row_v[rows + row]
        w = out_neighbors[row_start[rows + row] + col]
        stop = out_offsets[v + 1]
        at = search_sorted(out_neighbors, out_offsets[v], stop, w)
        if at < stop and out_neighbors[at] == w:
            if mode == WRITE:
                put_sorted(triangles, position + found, u, v, w)
            elif mode == COUNT:
                cuda.atomic.add(per_vertex, w, 1)
            found += 1
            run += 1
        col += 1
    if run and mode == COUNT:
        cuda.atomic.add(per_vertex, row_u[rows + row], run)
        cuda.atomic.add(per_vertex, row_v[rows + row], run)
    return found


@cuda.jit
def count_kernel(out_offsets, out_neighbors, edge_sources, group_counts, per_vertex):
    """group_counts[g] = triangles found by group g; per_vertex[x] += triangles through x."""
    row_u = cuda.shared.array(BLOCK_ROWS, int32)
    row_v = cuda.shared.array(BLOCK_ROWS, int32)
    row_start = cuda.shared.array(BLOCK_ROWS, int64)
    unused = cuda.shared.array((1, 3), int32)
    lane = lane_id()
    warp = cuda.threadIdx.x // WARP_SIZE
    rows = warp * WARP_SIZE
    for group in range(cuda.blockIdx.x * BLOCK_WARPS + warp, group_counts.shape[0], cuda.gridDim.x * BLOCK_WARPS):
        length = _load_row(group, lane, rows, out_offsets, out_neighbors, edge_sources, row_u, row_v, row_start)
        start_row, start_col, end_row, end_col, total = warp_plan(length, lane)
        found = _lane_triangles((start_row, start_col, end_row, end_col), rows, row_u, row_v, row_start,
                                out_offsets, out_neighbors, per_vertex, unused, int64(0), COUNT)
        found = warp_sum(found)
        if lane == 0:
            group_counts[group] = found
        cuda.syncwarp()


@cuda.jit
def list_kernel(out_offsets, out_neighbors, edge_sources, group_offsets, first_group, last_group, triangles):
    """Triangles of groups [first_group, last_group) into triangles[group_offsets[g] - group_offsets[first]
    + lane offset + k] (ids ascending in each row): a silent count, a warp scan of the lanes' counts, a write."""
    row_u = cuda.shared.array(BLOCK_ROWS, int32)
    row_v = cuda.shared.array(BLOCK_ROWS, int32)
    row_start = cuda.shared.array(BLOCK_ROWS, int64)
    unused = cuda.shared.array(1, int64)
    lane = lane_id()
    warp = cuda.threadIdx.x // WARP_SIZE
    rows = warp * WARP_SIZE
    base = group_offsets[first_group]
    for group in range(first_group + cuda.blockIdx.x * BLOCK_WARPS + warp, last_group, cuda.gridDim.x * BLOCK_WARPS):
        length = _load_row(group, lane, rows, out_offsets, out_neighbors, edge_sources, row_u, row_v, row_start)
        start_row, start_col, end_row, end_col, total = warp_plan(length, lane)
        plan = (start_row, start_col, end_row, end_col)
        found = _lane_triangles(plan, rows, row_u, row_v, row_start, out_offsets, out_neighbors, unused, triangles,
                                int64(0), SILENT)
        position = group_offsets[group] - base + warp_inclusive_scan(found, lane) - found
        _lane_triangles(plan, rows, row_u, row_v, row_start, out_offsets, out_neighbors, unused, triangles, position,
                        WRITE)
        cuda.syncwarp()


def _blocks(groups: int) -> int:
    if SIMULATED:
        return 2
    return max(1, min((groups + BLOCK_WARPS - 1) // BLOCK_WARPS, SM_COUNT * 16))


class DeviceSteps:
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
    def count(out_offsets, out_neighbors, edge_sources, num_vertices):
        array = xp()
        groups = (int(out_neighbors.shape[0]) + WARP_SIZE - 1) // WARP_SIZE
        group_counts = array.zeros(groups, dtype=np.int64)
        per_vertex = array.zeros(num_vertices, dtype=np.int64)
        if groups:
            count_kernel[_blocks(groups), BLOCK_ROWS](kernel_view(out_offsets), kernel_view(out_neighbors),
                                                      kernel_view(edge_sources), kernel_view(group_counts),
                                                      kernel_view(per_vertex))
        return group_counts, per_vertex

    @staticmethod
    def list(out_offsets, out_neighbors, edge_sources, group_offsets, first_group, last_group):
        total = int(group_offsets[last_group] - group_offsets[first_group])
        triangles = xp().empty((total, 3), dtype=np.int32)
        list_kernel[_blocks(last_group - first_group), BLOCK_ROWS](
            kernel_view(out_offsets), kernel_view(out_neighbors), kernel_view(edge_sources),
            kernel_view(group_offsets), first_group, last_group, kernel_view(triangles))
        return triangles
