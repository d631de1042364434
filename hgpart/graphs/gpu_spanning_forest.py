"""The GPU steps of Borůvka (seed 003): CuPy for gathers, scans, the one sort and compaction; numba.cuda
kernels for the segmented minimum (seed 003 uses a segmented min-scan) and for reducing parallel edges.

Edges are ranked once by a stable sort on weight, so the order (weight, edge id) is an int32 rank and the
segmented minimum is one entry-parallel pass of ``atomic.min``: a supervertex with a million entries costs
what a million supervertices with one entry each cost. Parallel entries between two supervertices are
reduced without a sort: each (source, target) pair claims a slot of a hash table (``atomic.cas``), the
least rank per slot is an ``atomic.min``, and the entry holding it survives. The order is total, so every
result equals the CPU twin's.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from ..cuda.arrays import grid, kernel_view, to_device, to_host, xp
from ..cuda.primitives import scatter, scatter_min_kernel

HASH_MULTIPLIER = 0x9E3779B97F4A7C15 - (1 << 64)  # golden-ratio multiplicative hash, as a (wrapping) int64
LOW63 = (1 << 63) - 1
NO_RANK = np.iinfo(np.int32).max


@cuda.jit
def pair_slot_kernel(sources, targets, n, keys, slots):
    """slots[e] = the hash-table slot of the supervertex pair (sources[e], targets[e]): the 64-bit key
    source * n + target claimed by compare-and-swap, linear probing (the table has spare room)."""
    size = keys.shape[0]
    for entry in range(cuda.grid(1), sources.shape[0], cuda.gridsize(1)):
        key = int64(sources[entry]) * n + targets[entry]
        slot = ((key * HASH_MULTIPLIER) & LOW63) % size
        while True:
            seen = cuda.atomic.cas(keys, slot, int64(-1), key)
            if seen == -1 or seen == key:
                slots[entry] = slot
                break
            slot += 1
            if slot == size:
                slot = 0


@cuda.jit
def winner_kernel(slots, ranks, least, keep):
    """keep[e] = 1 for the entry holding its pair's least rank (one per pair: an edge has one entry per
    direction, and the two directions are different pairs)."""
    for entry in range(cuda.grid(1), slots.shape[0], cuda.gridsize(1)):
        keep[entry] = 1 if least[slots[entry]] == ranks[entry] else 0


class DeviceSteps:
    """The array module, segmented minimum and pair reduction of the GPU path (CuPy; numpy under the CUDA
    simulator)."""

    @staticmethod
    def module():
        return xp()

    @staticmethod
    def group_min(groups, ranks, num_groups):
        least = xp().full(num_groups, NO_RANK, dtype=np.int32)
        return scatter(scatter_min_kernel, groups, ranks, least)  # least[g] = min rank of group g's entries

    @staticmethod
    def lightest_per_pair(sources, targets, ranks, n):
        """Indices of the lightest entry between each ordered pair of supervertices (hash table of 2 E slots)."""
        array = xp()
        count = int(sources.shape[0])
        keys = array.full(2 * count, -1, dtype=np.int64)
        slots = array.empty(count, dtype=np.int64)
        pair_slot_kernel[grid(count)](kernel_view(sources), kernel_view(targets), n, kernel_view(keys),
                                      kernel_view(slots))
        least = DeviceSteps.group_min(slots, ranks, 2 * count)
        keep = array.empty(count, dtype=np.int8)
        winner_kernel[grid(count)](kernel_view(slots), kernel_view(ranks), kernel_view(least), kernel_view(keep))
        return array.flatnonzero(keep)

    @staticmethod
    def to_host(array):
        return to_host(array)

    @staticmethod
    def to_device(array):
        return to_device(array)

    @staticmethod
    def argsort(keys):
        """Stable (CuPy's argsort always is; numpy's only when asked)."""
        array = xp()
        return np.argsort(keys, kind="stable") if array is np else array.argsort(keys)

    @staticmethod
    def synchronize():
        if xp() is not np:
            cuda.synchronize()
