"""What the GPU modules of the clustering share: the launch helper, warp-grouped atomics for edge-parallel
kernels, and the int32 copy of a level's weights.

Edge-parallel kernels over a hub's entries would queue their atomics on one address; :func:`group_total`
lets the lanes of a warp that hold the same key sum their values first (``warp_group_sum`` of
:mod:`hgpart.cuda.warp`), so one atomic stands for them all.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64, uint32

from ...cuda.arrays import grid, launch
from ...cuda.warp import WARP_SIZE, warp_group_sum
from ...errors import InputError

EMPTY_SLOT = int64(-1)
LINK_THREADS = 256  # threads per block of the kernels that use group_total's scratch
GROUP_SCRATCH = 2 * LINK_THREADS  # uint32 halves of group_total's sums, 64 a warp (a plain constant: a shape)


def launch_items(kernel, count, *args, threads: int = 256):
    """Launch ``kernel`` on a grid for ``count`` items (nothing when there are none)."""
    if count:
        launch(kernel, grid(count, threads), *args)


@cuda.jit(device=True, inline=True)
def uniform_trips(count):
    """(first item, stride, trips) of a grid-stride loop over ``count`` items that makes the same number of
    trips on every thread (items past the end are idle), as the warp votes of ``group_total`` need."""
    stride = cuda.gridsize(1)
    return cuda.grid(1), stride, (count + stride - 1) // stride


@cuda.jit(device=True, inline=True)
def warp_scratch():
    """(this warp's scratch for ``group_total``: 32 uint32 low and 32 high halves of the block's shared
    array, the lane). The block has LINK_THREADS threads."""
    partial = cuda.shared.array(GROUP_SCRATCH, uint32)
    lane = cuda.threadIdx.x % WARP_SIZE
    low = 2 * (cuda.threadIdx.x - lane)
    return (partial[low:low + WARP_SIZE], partial[low + WARP_SIZE:low + 2 * WARP_SIZE]), lane


@cuda.jit(device=True, inline=True)
def group_total(grouped, key, value, scratch, lane):
    """(leader, total) for a lane of a uniform loop: the lanes with ``grouped`` set that hold the same int64
    ``key`` sum their int64 values (``warp_group_sum``) and only the lowest of them leads, so one atomic
    stands for them all."""
    low, high = scratch
    leader, total = warp_group_sum(key if grouped else EMPTY_SLOT, value, low, high, lane)
    return leader and grouped, total

def check_total_weight(level: dict) -> None:
    """Raise :class:`~hgpart.errors.InputError` (one line) unless 2Ω < 2^31: then every weight fits an int32
    and a vertex's links sum below 2^32 in a link table slot. (:func:`hgpart.graphs.modularity.integer_level`
    keeps 2Ω below 2^30; only a level of unit weights with 2^31 entries or more is refused.)"""
    if level["two_omega"] >= 1 << 31:
        raise InputError(f"the GPU clusters graphs of total weight below 2^30, not {level['two_omega'] // 2}")


def int32_weights(level: dict):
    """The level's weights as int32[D] (see :func:`check_total_weight`), made once and kept in the level
    under ``weights32``: the link and matching kernels, bound by memory, then read 4 bytes less an entry."""
    check_total_weight(level)
    if "weights32" not in level:
        level["weights32"] = level["weights"].astype(np.int32)
    return level["weights32"]

