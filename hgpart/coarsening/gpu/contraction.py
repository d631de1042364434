"""GPU twin of :mod:`hgpart.coarsening.contraction` by sort / scan / scatter: the result equals the CPU's
array for array.

The contraction of L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the
GPU", IEEE HPEC 2015 (Eq. 3-4), built from data-parallel primitives as B. O. Fagginger Auer and
R. H. Bisseling, "Graph Coarsening and Clustering on the GPU" (2012), build their coarse graphs (pi, pi^-1,
rho):

1. every pin becomes the key (net << 32 | f(pin)) (``pin_keys_kernel``), and one radix sort (CuPy's CUB)
   orders the keys of each net and brings duplicate pins together; a prefix sum over the first pin of
   each run ranks the distinct pins (Eq. 3);
2. nets left with fewer than two pins are dropped (``net_sizes_kernel``, one prefix sum over both the
   kept nets and their pins); ``write_kept_kernel`` writes the kept nets, their pins, weights and the
   (vertex << 32 | net) keys of the incidence;
3. identical nets: each net gets the CPU's FNV hash (``net_hash_kernel``); nets are stably sorted by
   hash, and ``merge_kernel`` finds for each net the first net of its hash run with the same pins, which
   absorbs its weight (Eq. 4, weights summed), and counts the nets absorbed; only if there are any,
   ``unique_sizes_kernel`` and ``write_unique_kernel`` drop them;
4. vertex weights add up (``scatter_add_kernel``); the incident-net lists come from one more sort of the
   incidence keys (``csr_from_sorted_kernel``).

About 25 operations and two reads of the device (the kept and the absorbed counts) a level, whatever its
size: boolean masks, ``flatnonzero`` or ``bincount`` would each wait for the device, and the host's time per
level would dominate the small levels.

CuPy is an optional dependency (``pip install 'hgpart[gpu]'``); the arrays stay on the device. Under the
CUDA simulator the same steps run on numpy arrays (:mod:`hgpart.cuda.arrays`).
"""
from __future__ import annotations

from numba import cuda, int32, int64, uint64

from ...cuda.arrays import cached_kernel, grid, launch, to_host, xp
from ...cuda.primitives import (LOW32, csr_from_sorted_kernel, lower_bound, scatter, scatter_add_kernel, segment_of,
                                sum_before)
from ...hypergraph import Hypergraph


@cached_kernel
def pin_keys_kernel(net_offsets, pin_vertices, cluster, keys):
    """keys[p] = e << 32 | cluster[pin_vertices[p]] for pin p of net e: a thread per pin."""
    for p in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        keys[p] = (int64(segment_of(net_offsets, p)) << 32) | int64(cluster[pin_vertices[p]])


@cached_kernel
def distinct_pins_kernel(keys, distinct):
    """distinct[p] = 1 where the sorted keys[p] starts a run of equal keys (a net's first pin of a cluster)."""
    for p in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        distinct[p] = 1 if p == 0 or keys[p] != keys[p - 1] else 0


@cached_kernel
def net_sizes_kernel(net_offsets, ranks, counts):
    """counts[0, e] = 1 and counts[1, e] = its distinct pins for a net e with at least two distinct pins;
    0 and 0 for the others (dropped): a thread per net."""
    for e in range(cuda.grid(1), net_offsets.shape[0] - 1, cuda.gridsize(1)):
        size = sum_before(ranks, net_offsets[e + 1]) - sum_before(ranks, net_offsets[e])
        counts[0, e] = 1 if size >= 2 else 0
        counts[1, e] = size if size >= 2 else 0


@cuda.jit(device=True, inline=True)
def _kept(prefix, e):
    """Whether row 0 of the inclusive prefix sums ``prefix`` steps up at e (net e is kept)."""
    return prefix[0, e] != sum_before(prefix[0], e)


@cuda.jit(device=True, inline=True)
def _write_net(prefix, e, offsets, weights, weight):
    """Net e, if kept (``prefix``: inclusive prefix sums of the kept nets and of their pins), as net j of the
    result: offsets[j + 1] = its end, weights[j] = ``weight``. Returns j, or -1 for a net not kept."""
    if not _kept(prefix, e):
        return int64(-1)
    net = prefix[0, e] - 1
    offsets[net + 1] = prefix[1, e]
    weights[net] = weight
    return net


@cached_kernel
def write_kept_kernel(keys, ranks, net_offsets, net_weights, prefix, offsets, pins, weights, merged, incidence):
    """The kept nets (``prefix``: inclusive prefix sums of ``net_sizes_kernel``'s counts) in order: for net e
    kept as j, offsets[j + 1], weights[j] = merged[j] = w(e); each distinct pin u of e at its place in pins,
    with the incidence key (u << 32 | j). A thread per net, then per pin."""
    if cuda.grid(1) == 0:
        offsets[0] = 0
    for e in range(cuda.grid(1), net_offsets.shape[0] - 1, cuda.gridsize(1)):
        net = _write_net(prefix, e, offsets, weights, net_weights[e])
        if net >= 0:
            merged[net] = net_weights[e]
    for i in range(cuda.grid(1), keys.shape[0], cuda.gridsize(1)):
        key = keys[i]
        e = key >> 32
        if _kept(prefix, e) and (i == 0 or key != keys[i - 1]):
            start = sum_before(prefix[1], e)
            position = start + ranks[i] - 1 - sum_before(ranks, net_offsets[e])
            pins[position] = int32(key & LOW32)
            incidence[position] = ((key & LOW32) << 32) | (prefix[0, e] - 1)


@cached_kernel
def net_hash_kernel(offsets, pins, hashes):
    """hashes[e] = FNV-1a over the pins of e, xor its size: the CPU's ``_net_hashes``, one thread per net."""
    for e in range(cuda.grid(1), hashes.shape[0], cuda.gridsize(1)):
        h = uint64(14695981039346656037)
        for p in range(offsets[e], offsets[e + 1]):
            h = (h ^ uint64(pins[p])) * uint64(1099511628211)
        hashes[e] = h ^ uint64(offsets[e + 1] - offsets[e])


@cuda.jit(device=True, inline=True)
def _same_pins(offsets, pins, e, f):
    """Whether nets e and f of the CSR (offsets int64, pins int32, each net's pins sorted) have the same pins."""
    size = offsets[e + 1] - offsets[e]
    if size != offsets[f + 1] - offsets[f]:
        return False
    for t in range(size):
        if pins[offsets[e] + t] != pins[offsets[f] + t]:
            return False
    return True


@cached_kernel
def merge_kernel(order, sorted_hashes, offsets, pins, weights, representative, merged, absorbed):
    """For the net e at sorted position i: the first net of its hash run (found by a binary search in
    ``sorted_hashes``) with the same pins represents it and receives its weight (atomic add into
    ``merged``); a net with no earlier twin represents itself. absorbed[0] and absorbed[1] count the
    represented nets and their pins."""
    for i in range(cuda.grid(1), order.shape[0], cuda.gridsize(1)):
        e = order[i]
        rep = e
        for j in range(lower_bound(sorted_hashes, sorted_hashes[i]), i):
            f = order[j]
            if _same_pins(offsets, pins, e, f):
                rep = f
                break
        representative[e] = rep
        if rep != e:
            cuda.atomic.add(merged, rep, weights[e])
            cuda.atomic.add(absorbed, 0, 1)
            cuda.atomic.add(absorbed, 1, offsets[e + 1] - offsets[e])


@cached_kernel
def unique_sizes_kernel(offsets, representative, counts):
    """counts[0, e] = 1 and counts[1, e] = its size for a net e that represents itself, else 0 and 0."""
    for e in range(cuda.grid(1), representative.shape[0], cuda.gridsize(1)):
        unique = representative[e] == e
        counts[0, e] = 1 if unique else 0
        counts[1, e] = offsets[e + 1] - offsets[e] if unique else 0


@cached_kernel
def write_unique_kernel(offsets, pins, merged, prefix, unique_offsets, unique_pins, unique_weights, incidence):
    """The nets that represent themselves (``prefix``: inclusive prefix sums of ``unique_sizes_kernel``'s
    counts) in order, with their merged weights and the incidence keys: a thread per net, then per pin."""
    if cuda.grid(1) == 0:
        unique_offsets[0] = 0
    for e in range(cuda.grid(1), offsets.shape[0] - 1, cuda.gridsize(1)):
        _write_net(prefix, e, unique_offsets, unique_weights, merged[e])
    for i in range(cuda.grid(1), pins.shape[0], cuda.gridsize(1)):
        e = segment_of(offsets, i)
        if _kept(prefix, e):
            position = sum_before(prefix[1], e) + i - offsets[e]
            unique_pins[position] = pins[i]
            incidence[position] = (int64(pins[i]) << 32) | (prefix[0, e] - 1)


def _prefix_sums(counts):
    """Inclusive prefix sums of both rows of int64[2, m] and their totals on the host (one read)."""
    x = xp()
    prefix = x.cumsum(counts, axis=1)
    totals = to_host(prefix[:, -1]) if counts.shape[1] else (0, 0)
    return prefix, int(totals[0]), int(totals[1])


def contract_device(level: Hypergraph, cluster, num_clusters: int) -> Hypergraph:
    """The coarse level of ``cluster`` on the device: the CPU's :func:`hgpart.coarsening.contraction.contract`,
    array for array.

    Parameters
    ----------
    level : Hypergraph
        On the device (CuPy or numba arrays), n vertices.
    cluster : device int32[n]
        f: V -> [0, num_clusters).
    num_clusters : int

    Returns
    -------
    Hypergraph
        On the device: num_clusters vertices, the nets of at least two distinct pins with identical nets
        merged (weights summed).
    """
    x = xp()
    net_offsets = x.asarray(level.net_offsets)
    pin_vertices = x.asarray(level.pin_vertices)
    cluster = x.asarray(cluster)
    num_nets = net_offsets.shape[0] - 1
    num_pins = pin_vertices.shape[0]
    keys = x.empty(num_pins, dtype=x.int64)
    launch(pin_keys_kernel, grid(num_pins), net_offsets, pin_vertices, cluster, keys)
    keys = x.sort(keys)
    distinct = x.empty(num_pins, dtype=x.int64)
    launch(distinct_pins_kernel, grid(num_pins), keys, distinct)
    ranks = x.cumsum(distinct)
    counts = x.empty((2, num_nets), dtype=x.int64)
    launch(net_sizes_kernel, grid(num_nets), net_offsets, ranks, counts)
    prefix, kept_nets, kept_pins = _prefix_sums(counts)
    offsets = x.empty(kept_nets + 1, dtype=x.int64)
    pins, incidence = x.empty(kept_pins, dtype=x.int32), x.empty(kept_pins, dtype=x.int64)
    weights, merged = x.empty(kept_nets, dtype=x.int64), x.empty(kept_nets, dtype=x.int64)
    launch(write_kept_kernel, grid(max(num_pins, num_nets)), keys, ranks, net_offsets,
           x.asarray(level.net_weights), prefix, offsets, pins, weights, merged, incidence)
    if kept_nets:
        hashes = x.empty(kept_nets, dtype=x.uint64)
        launch(net_hash_kernel, grid(kept_nets), offsets, pins, hashes)
        order = x.argsort(hashes, kind="stable")
        representative, absorbed = x.empty(kept_nets, dtype=x.int64), x.zeros(2, dtype=x.int64)
        launch(merge_kernel, grid(kept_nets), order, hashes[order], offsets, pins, weights, representative, merged,
               absorbed)
        absorbed_nets, absorbed_pins = (int(count) for count in to_host(absorbed))
        if absorbed_nets:
            counts = x.empty((2, kept_nets), dtype=x.int64)
            launch(unique_sizes_kernel, grid(kept_nets), offsets, representative, counts)
            prefix = x.cumsum(counts, axis=1)
            unique_offsets = x.empty(kept_nets - absorbed_nets + 1, dtype=x.int64)
            unique_pins = x.empty(kept_pins - absorbed_pins, dtype=x.int32)
            weights = x.empty(kept_nets - absorbed_nets, dtype=x.int64)
            incidence = x.empty(kept_pins - absorbed_pins, dtype=x.int64)
            launch(write_unique_kernel, grid(kept_pins), offsets, pins, merged, prefix, unique_offsets, unique_pins,
                   weights, incidence)
            offsets, pins = unique_offsets, unique_pins
    vertex_weights = x.zeros(num_clusters, dtype=x.int64)
    scatter(scatter_add_kernel, cluster, x.asarray(level.vertex_weights), vertex_weights)
    incidence = x.sort(incidence)
    vertex_offsets, incident_nets = x.empty(num_clusters + 1, dtype=x.int64), x.empty(pins.shape[0], dtype=x.int32)
    launch(csr_from_sorted_kernel, grid(max(pins.shape[0], 1)), incidence, num_clusters, vertex_offsets,
           incident_nets)
    return Hypergraph(offsets, pins, vertex_offsets, incident_nets, vertex_weights, weights)
