"""Element-wise device kernels shared by the GPU phases: scatters with atomics; the
64-bit shared-memory sum in two 32-bit halves; binary searches (the segment of a CSR entry); a CSR's offsets
from its sorted (segment << 32 | value) keys; segments cut into work items of a fixed size; a stable
counting sort by small keys.

Every kernel is grid-stride, so any launch shape covers any size (the simulator runs tiny grids).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint32

from .arrays import cached_kernel, grid, launch, xp

LOW32 = np.int64(0xFFFFFFFF)  # the low half of an int64 (packed keys, halves of sums)
COUNTING_SORT_ENTRIES = 1 << 20  # at most this many (key, chunk) counters in stable_order_by_small_key (8 MB)
COUNTING_SORT_CHUNK = 64         # at least this many keys per thread there


@cuda.jit(device=True, inline=True)
def add_halves(low, high, index, value):
    """Atomically add int64 ``value`` to the sum held in halves at low[index] and high[index] (uint32 arrays,
    in shared memory): one native 32-bit atomic add, and a second only when the low half carries or value
    has high bits. A 64-bit atomic add in shared memory is a compare-and-swap loop on Hopper GPUs
    (ATOMS.CAST.SPIN.64), which queues when many lanes add to one address. Exact modulo 2^64; read the sum
    with :func:`halves_value`."""
    value_low = uint32(value & LOW32)
    old = cuda.atomic.add(low, index, value_low)
    carry = (value >> 32) + ((int64(old) + int64(value_low)) >> 32)
    if carry != 0:
        cuda.atomic.add(high, index, uint32(carry & LOW32))


@cuda.jit(device=True, inline=True)
def halves_value(low, high, index):
    """The int64 sum that :func:`add_halves` holds at ``index``."""
    return (int64(high[index]) << 32) | int64(low[index])


@cuda.jit(device=True, inline=True)
def lower_bound(sorted_keys, key):
    """The first index i of ``sorted_keys`` (ascending) with sorted_keys[i] >= key: a binary search."""
    low = 0
    high = sorted_keys.shape[0]
    while low < high:
        middle = (low + high) // 2
        if sorted_keys[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


@cuda.jit(device=True, inline=True)
def sum_before(inclusive, i):
    """The sum of the entries before position i, from their inclusive prefix sum ``inclusive`` (0 at i = 0)."""
    return inclusive[i - 1] if i > 0 else int64(0)


@cuda.jit(device=True, inline=True)
def segment_of(offsets, position):
    """The segment s of a CSR (offsets ascending, int64[s + 1]) holding entry ``position``:
    offsets[s] <= position < offsets[s + 1] (empty segments skipped)."""
    return lower_bound(offsets, position + 1) - 1


@cached_kernel
def csr_from_sorted_kernel(sorted_keys, count, offsets, values):
    """The CSR of keys (u << 32 | value) sorted ascending, u in [0, count): offsets[u] (int64[count + 1]) = the
    first index i with sorted_keys[i] >> 32 >= u (empty segments included), values[i] (int32) = the low half
    of sorted_keys[i]; a thread per key."""
    size = sorted_keys.shape[0]
    if size == 0:
        for u in range(cuda.grid(1), count + 1, cuda.gridsize(1)):
            offsets[u] = 0
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        values[i] = int32(sorted_keys[i] & LOW32)
        segment = sorted_keys[i] >> 32
        previous = sorted_keys[i - 1] >> 32 if i > 0 else int64(-1)
        for u in range(previous + 1, segment + 1):
            offsets[u] = i
        if i == size - 1:
            for u in range(segment + 1, count + 1):
                offsets[u] = size


@cached_kernel
def scatter_add_kernel(targets, values, out):
    """out[targets[i]] += values[i] for every i (int64 atomics)."""
    for i in range(cuda.grid(1), targets.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(out, targets[i], values[i])


@cached_kernel
def scatter_max_kernel(targets, values, out):
    """out[targets[i]] = max(out[targets[i]], values[i]) for every i."""
    for i in range(cuda.grid(1), targets.shape[0], cuda.gridsize(1)):
        cuda.atomic.max(out, targets[i], values[i])


@cached_kernel
def scatter_min_kernel(targets, values, out):
    """out[targets[i]] = min(out[targets[i]], values[i]) for every i."""
    for i in range(cuda.grid(1), targets.shape[0], cuda.gridsize(1)):
        cuda.atomic.min(out, targets[i], values[i])


@cached_kernel
def chunk_histogram_kernel(keys, chunk_size, chunks, counts):
    """counts[key * chunks + c] += 1 for each key of chunk c (entries c * chunk_size ... of ``keys``); a thread
    per chunk, so no atomics."""
    for chunk in range(cuda.grid(1), chunks, cuda.gridsize(1)):
        for i in range(chunk * chunk_size, min((chunk + 1) * chunk_size, keys.shape[0])):
            counts[keys[i] * chunks + chunk] += 1


@cached_kernel
def chunk_scatter_kernel(keys, chunk_size, chunks, ends, order):
    """order[--ends[key * chunks + c]] = i for the entries i of chunk c, last first: with ``ends`` the inclusive
    prefix sum of :func:`chunk_histogram_kernel`'s counts (key-major), each key's entries land in index order."""
    for chunk in range(cuda.grid(1), chunks, cuda.gridsize(1)):
        for i in range(min((chunk + 1) * chunk_size, keys.shape[0]) - 1, chunk * chunk_size - 1, -1):
            slot = keys[i] * chunks + chunk
            position = ends[slot] - 1
            ends[slot] = position
            order[position] = i


def stable_order_by_small_key(keys, num_keys: int):
    """``argsort(keys, kind="stable")`` (device int64[len(keys)]) for int keys in [0, num_keys) by a counting
    sort: each thread counts its chunk of keys, one prefix sum over (key, chunk), each thread places its
    chunk. Four operations and no read of the device (CuPy's argsort waits for its sort to finish)."""
    x = xp()
    count = keys.shape[0]
    order = x.empty(count, dtype=x.int64)
    if count == 0:
        return order
    chunks = max(1, min(-(-count // COUNTING_SORT_CHUNK), COUNTING_SORT_ENTRIES // max(num_keys, 1)))
    chunk_size = -(-count // chunks)
    chunks = -(-count // chunk_size)
    counts = x.zeros(num_keys * chunks, dtype=x.int64)
    launch(chunk_histogram_kernel, grid(chunks), keys, chunk_size, chunks, counts)
    launch(chunk_scatter_kernel, grid(chunks), keys, chunk_size, chunks, x.cumsum(counts), order)
    return order


def scatter(kernel, targets, values, out):
    if targets.shape[0]:
        launch(kernel, grid(targets.shape[0]), targets, values, out)
    return out


def segment_items(lengths, per_item: int):
    """Cut segments of ``lengths`` entries (int64[s], host or device) into work items of at most ``per_item``
    entries, in segment order: (owner int32[items], rank int64[items]); item i holds entries
    rank[i] * per_item ... of segment owner[i]. Segments of length 0 get no item. Used for hubs, whose
    incident nets are split over many blocks or warps (coarsening's rating, refinement's rating)."""
    module = np if isinstance(lengths, np.ndarray) else xp()
    counts = -(-lengths // per_item)
    ends = module.cumsum(counts)
    total = int(ends[-1]) if ends.shape[0] else 0
    items = module.arange(total, dtype=module.int64)
    owner = module.searchsorted(ends, items, side="right")
    return owner.astype(module.int32), items - (ends - counts)[owner]
