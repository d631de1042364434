"""2-hop matching on the device when no vertex has a merge key: vertices left alone that would join the same
cluster but for its weight pair up (:func:`hgpart.coarsening.rules.two_hop_pairs`, which the keyed case runs
on CuPy arrays).

Without keys the candidates' order (cluster, vertex) is one int64 key a vertex, so the step is a radix
sort and a scan: five launches, where the general array code takes dozens of operations.
"""

from __future__ import annotations

from numba import cuda, int32, int64

from ...cuda.arrays import cached_kernel, grid, launch, xp
from ...cuda.primitives import LOW32, lower_bound


@cached_kernel
def two_hop_keys_kernel(free, proposals, root, vertex_offsets, keys):
    """keys[v] = (c + 1) << 32 | v for a vertex v left alone (free[v] < 0) that proposed to cluster c = root[
    proposals[v]] (c = -1 for a lone vertex in no net), else (n + 1) << 32 | v, which sorts after them."""
    n = free.shape[0]
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        cluster = int64(n)
        if free[v] < 0:
            if vertex_offsets[v + 1] == vertex_offsets[v]:
                cluster = int64(-1)
            elif proposals[v] >= 0:
                cluster = int64(root[proposals[v]])
        keys[v] = ((cluster + 1) << 32) | int64(v)


@cached_kernel
def two_hop_pairs_kernel(keys, vertex_weights, max_weight, pairs):
    """pairs[i] = 1 where the sorted candidate at position i takes the next one as its pair: i has an even rank
    in its run of one cluster (a binary search finds the run's start), the next one is in the run, and the
    two weigh at most ``max_weight``."""
    n = keys.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        run = keys[i] >> 32
        pair = 0
        if run <= n and i + 1 < n and keys[i + 1] >> 32 == run and (i - lower_bound(keys, run << 32)) % 2 == 0:
            weight = vertex_weights[keys[i] & LOW32] + vertex_weights[keys[i + 1] & LOW32]
            pair = 1 if weight <= max_weight else 0
        pairs[i] = pair


@cached_kernel
def two_hop_apply_kernel(keys, pairs, ranks, budget, root):
    """The first ``budget`` pairs in sorted order (``ranks``: the inclusive prefix sum of ``pairs``): the
    second vertex of each takes the first as its root."""
    for i in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        if pairs[i] and ranks[i] <= budget:
            root[keys[i + 1] & LOW32] = int32(keys[i] & LOW32)


def _two_hop_unkeyed(state: dict, level, proposals, max_weight: int, budget: int):
    """:func:`hgpart.coarsening.rules.two_hop_pairs` applied to ``state["root"]`` (device int32[n]) when no
    vertex has a merge key (all -1): the candidates sorted by (cluster, vertex) as one radix sort, paired by a
    scan. ``state`` holds the joining's device buffers (:func:`.joining.finish_clustering_device`): ``free``
    int32[n] (-1: left alone), ``keys`` int64[n] and ``fits`` int64[n] as scratch; ``proposals`` int32[n]
    are the last joining round's."""
    x = xp()
    if budget <= 0:
        return
    n = proposals.shape[0]
    keys = state["keys"]
    launch(two_hop_keys_kernel, grid(n), state["free"], proposals, state["root"], level.vertex_offsets, keys)
    keys = x.sort(keys)
    pairs = state["fits"]
    launch(two_hop_pairs_kernel, grid(n), keys, level.vertex_weights, max_weight, pairs)
    launch(two_hop_apply_kernel, grid(n), keys, pairs, x.cumsum(pairs), budget, state["root"])
