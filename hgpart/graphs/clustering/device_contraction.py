"""Step 4 of the clustering on the GPU: the coarse level, the twin of :func:`.host.contract_level` (the
same level, rows sorted).

Contraction by sort, scan and scatter (π, π⁻¹, ρ) as in B. O. Fagginger Auer and R. H. Bisseling, "Graph
Coarsening and Clustering on the GPU", 10th DIMACS Implementation Challenge, 2012, with CuPy's radix sort
and scans: every entry (v, u) gets the key (π(v), π(u)), the keys are sorted, the first of each run is
marked and numbered by a scan, and each entry adds its weight to its run's coarse entry.

The kernels' arrays: ``rows``, ``neighbors``, ``mapping`` int32 (D, D, n), ``weights`` int64[D], ``keys``
int64[D], ``loops`` int64[n']; over the E entries between coarse vertices ``sorted_keys``, ``order`` and
``segment`` int64[E] (``order`` unread when the weights ride in the keys); ``coarse_rows``,
``coarse_neighbors`` int32[E'] and ``coarse_weights`` int64[E'] for the E' distinct coarse entries.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ...cuda.arrays import cached_kernel, xp
from ...cuda.primitives import scatter, scatter_add_kernel
from .device_common import LINK_THREADS, group_total, launch_items, uniform_trips, warp_scratch

PACKED_KEY_BITS = 62  # a contraction key with its weight in the low bits stays positive in an int64

@cached_kernel
def coarse_key_kernel(rows, neighbors, weights, mapping, num_coarse, weight_bits, keys, loops):
    """Contraction, pass 1: keys[e] = π(v) num_coarse + π(u) for an entry (v, u) between two coarse vertices,
    shifted left by ``weight_bits`` with the weight in those bits when that is not 0, -1 for an entry inside a
    coarse vertex; those with v < u add their weight to loops[π(v)] (lanes of the same coarse vertex summed
    first)."""
    scratch, lane = warp_scratch()
    entries = rows.shape[0]
    first, stride, trips = uniform_trips(entries)
    for trip in range(trips):
        entry = first + trip * stride
        inside = False
        coarse_row = int32(-1)
        weight = int64(0)
        if entry < entries:
            v = rows[entry]
            u = neighbors[entry]
            coarse_row = mapping[v]
            coarse_neighbor = mapping[u]
            if coarse_row == coarse_neighbor:
                keys[entry] = -1
                if v < u:
                    inside = True
                    weight = weights[entry]
            else:
                key = int64(coarse_row) * num_coarse + coarse_neighbor
                keys[entry] = (key << weight_bits) | weights[entry] if weight_bits else key
        leader, total = group_total(inside, int64(coarse_row), weight, scratch, lane)
        if leader:
            cuda.atomic.add(loops, coarse_row, total)


@cached_kernel
def coarse_entry_kernel(sorted_keys, order, weights, segment, num_coarse, weight_bits, coarse_rows,
                        coarse_neighbors, coarse_weights):
    """Contraction, pass 2, over the sorted keys of the entries between coarse vertices (their weights in the
    low ``weight_bits`` bits, or when that is 0 at weights[order[i]]): the first key of each run (segment s)
    writes coarse row and neighbour s, and every entry adds its weight to coarse_weights[s] (lanes of the
    same run summed first)."""
    scratch, lane = warp_scratch()
    count = sorted_keys.shape[0]
    first, stride, trips = uniform_trips(count)
    for trip in range(trips):
        index = first + trip * stride
        run = int64(-1)
        weight = int64(0)
        if index < count:
            run = segment[index]
            key = sorted_keys[index] >> weight_bits
            weight = sorted_keys[index] & ((int64(1) << weight_bits) - 1) if weight_bits else weights[order[index]]
            if index == 0 or key != sorted_keys[index - 1] >> weight_bits:
                coarse_rows[run] = key // num_coarse
                coarse_neighbors[run] = key % num_coarse
        leader, total = group_total(index < count, run, weight, scratch, lane)
        if leader:
            cuda.atomic.add(coarse_weights, run, total)


def contract_level(level: dict, mapping, num_coarse: int) -> dict:
    """Step 4 on the device: parameters and result as :func:`.host.contract_level`, arrays on the device (the
    coarse level with its ``rows`` and ``loops_total``). Keys every entry by (π(v), π(u))
    (``coarse_key_kernel``), sorts the keys, marks the first of each run, scans, scatters
    (``coarse_entry_kernel``); the row offsets come from a binary search of the sorted coarse rows."""
    array = xp()
    rows, neighbors, weights = level["rows"], level["neighbors"], level["weights"]
    entries = int(rows.shape[0])
    loops = array.zeros(num_coarse, dtype=np.int64)
    scatter(scatter_add_kernel, mapping, level["loops"], loops)
    zeta = array.zeros(num_coarse, dtype=np.int64)
    scatter(scatter_add_kernel, mapping, level["zeta"], zeta)
    # each weight rides in the low bits of its key when both fit in PACKED_KEY_BITS: a sort of the keys alone
    # then replaces the argsort and its two gathers, which took longer than the sort itself
    weight_bits = int(weights.max()).bit_length() if entries else 0
    if max(num_coarse * num_coarse - 1, 1).bit_length() + weight_bits > PACKED_KEY_BITS:
        weight_bits = 0
    keys = array.empty(entries, dtype=np.int64)
    launch_items(coarse_key_kernel, entries, rows, neighbors, weights, mapping, num_coarse, weight_bits, keys, loops,
                 threads=LINK_THREADS)
    if weight_bits:
        sorted_keys = array.sort(keys)
        order = sorted_keys[:1]  # not read
    else:
        order = array.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    inside = int(array.searchsorted(sorted_keys, 0))  # their key -1 sorts first
    sorted_keys = sorted_keys[inside:]
    if not weight_bits:
        order = order[inside:]
    across = int(sorted_keys.shape[0])
    run_keys = sorted_keys >> weight_bits if weight_bits else sorted_keys
    first = array.ones(across, dtype=np.int32)
    first[1:] = run_keys[1:] != run_keys[:-1]
    del run_keys
    segment = array.cumsum(first, dtype=np.int64) - 1
    distinct = int(segment[-1]) + 1 if across else 0
    coarse_rows = array.empty(distinct, dtype=np.int32)
    coarse_neighbors = array.empty(distinct, dtype=np.int32)
    coarse_weights = array.zeros(distinct, dtype=np.int64)
    launch_items(coarse_entry_kernel, across, sorted_keys, order, weights, segment, num_coarse, weight_bits,
                 coarse_rows, coarse_neighbors, coarse_weights, threads=LINK_THREADS)
    offsets = array.searchsorted(coarse_rows, array.arange(num_coarse + 1, dtype=np.int32)).astype(np.int64)
    return {"offsets": offsets, "neighbors": coarse_neighbors, "weights": coarse_weights, "loops": loops, "zeta": zeta,
            "two_omega": level["two_omega"], "rows": coarse_rows, "loops_total": int(loops.sum())}

