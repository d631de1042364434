"""GPU twin of :mod:`.contraction` (seed 000 Eq. 3-4) by sort / scan / scatter, as seed 002 builds its
coarse graphs (pi, pi^-1, rho): the result equals the CPU's array for array.

1. every pin becomes the key (net << 32 | f(pin)), and one radix sort (CuPy's CUB) orders the keys of
   each net and brings duplicate pins together; a neighbour comparison drops them (Eq. 3);
2. nets left with fewer than two pins are dropped; a prefix sum renumbers the others;
3. identical nets: each net gets the CPU's FNV hash (kernel ``net_hash_kernel``); nets are stably sorted
   by hash, and kernel ``merge_kernel`` finds for each net the first net of its hash run with the same
   pins, which absorbs its weight (Eq. 4, weights summed);
4. vertex weights add up (kernel ``scatter_add_kernel``); the incident-net lists come from a second sort
   of (vertex << 32 | net) keys.

CuPy is an optional dependency (``pip install 'hgpart[gpu]'``); the arrays stay on the device. Under the
CUDA simulator the same steps run on numpy arrays (:mod:`hgpart.cuda.arrays`).
"""

from __future__ import annotations

from numba import cuda, uint64

from ..cuda.arrays import cached_kernel, grid, launch, to_device, to_host, xp
from ..cuda.primitives import LOW32, scatter, scatter_add_kernel


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
    size = offsets[e + 1] - offsets[e]
    if size != offsets[f + 1] - offsets[f]:
        return False
    for t in range(size):
        if pins[offsets[e] + t] != pins[offsets[f] + t]:
            return False
    return True


@cached_kernel
def merge_kernel(order, run_start, offsets, pins, weights, representative, merged_weights):
    """For the net at sorted position i: the first net of its hash run with the same pins represents it
    and receives its weight (atomic add); a net with no earlier twin represents itself."""
    for i in range(cuda.grid(1), order.shape[0], cuda.gridsize(1)):
        e = order[i]
        rep = e
        for j in range(run_start[i], i):
            f = order[j]
            if _same_pins(offsets, pins, e, f):
                rep = f
                break
        representative[e] = rep
        if rep != e:
            cuda.atomic.add(merged_weights, rep, weights[e])


def contract_device(level: dict, cluster, num_clusters: int) -> dict:
    """The coarse level of ``cluster`` (device int32[n] -> [0, num_clusters)) as a dict of CuPy arrays:
    net_offsets int64, pin_vertices int32, vertex_offsets int64, incident_nets int32, vertex_weights int64,
    net_weights int64. ``level`` holds the same keys for the finer level (CuPy or numba device arrays)."""
    x = xp()
    net_offsets = x.asarray(level["net_offsets"])
    pin_vertices = x.asarray(level["pin_vertices"])
    cluster = x.asarray(cluster)
    num_nets = net_offsets.shape[0] - 1
    num_pins = pin_vertices.shape[0]
    net_of_pin = x.searchsorted(net_offsets, x.arange(num_pins, dtype=x.int64), side="right") - 1
    keys = x.sort((net_of_pin << 32) | cluster[pin_vertices].astype(x.int64))
    distinct = x.ones(keys.shape[0], dtype=x.bool_)
    distinct[1:] = keys[1:] != keys[:-1]
    keys = keys[distinct]
    nets = keys >> 32
    sizes = x.bincount(nets, minlength=num_nets)
    rated = sizes >= 2
    keys = keys[rated[nets]]
    kept = x.flatnonzero(rated)
    new_sizes = sizes[kept]
    offsets = x.zeros(kept.shape[0] + 1, dtype=x.int64)
    x.cumsum(new_sizes, out=offsets[1:])
    pins = (keys & LOW32).astype(x.int32)
    weights = x.asarray(level["net_weights"])[kept]
    hashes = x.empty(kept.shape[0], dtype=x.uint64)
    if kept.shape[0]:
        launch(net_hash_kernel, grid(kept.shape[0]), offsets, pins, hashes)
    order = x.argsort(hashes, kind="stable")
    sorted_hashes = hashes[order]
    starts = x.ones(order.shape[0], dtype=x.bool_)
    starts[1:] = sorted_hashes[1:] != sorted_hashes[:-1]
    run_start = x.flatnonzero(starts)[x.cumsum(starts) - 1]
    representative = x.empty(kept.shape[0], dtype=x.int64)
    merged = weights.copy()
    if kept.shape[0]:
        launch(merge_kernel, grid(kept.shape[0]), order, run_start, offsets, pins, weights, representative, merged)
    unique = representative == x.arange(kept.shape[0])
    if not bool(unique.all()):
        unique_sizes = new_sizes[unique]
        pins = pins[unique[_net_of(offsets, pins)]]
        offsets = x.zeros(unique_sizes.shape[0] + 1, dtype=x.int64)
        x.cumsum(unique_sizes, out=offsets[1:])
        weights = merged[unique]
    vertex_weights = x.zeros(num_clusters, dtype=x.int64)
    fine_weights = x.asarray(level["vertex_weights"])
    scatter(scatter_add_kernel, cluster, fine_weights, vertex_weights)
    net_ids = _net_of(offsets, pins)
    incidence = x.sort((pins.astype(x.int64) << 32) | net_ids)
    vertex_offsets = x.searchsorted(incidence >> 32, x.arange(num_clusters + 1, dtype=x.int64),
                                       side="left").astype(x.int64)
    return {"net_offsets": offsets, "pin_vertices": pins, "vertex_offsets": vertex_offsets,
            "incident_nets": (incidence & LOW32).astype(x.int32), "vertex_weights": vertex_weights,
            "net_weights": weights}


def _net_of(offsets, pins):
    x = xp()
    return x.searchsorted(offsets, x.arange(pins.shape[0], dtype=x.int64), side="right") - 1


def level_to_device(hypergraph) -> dict:
    """A host Hypergraph as a dict of device arrays (one copy)."""
    return {name: to_device(getattr(hypergraph, name)) for name in
            ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights", "net_weights")}


def level_to_host(level: dict):
    """A device level back as a :class:`~hgpart.hypergraph.Hypergraph`."""
    from ..hypergraph import Hypergraph

    return Hypergraph(*(to_host(level[name]) for name in ("net_offsets", "pin_vertices", "vertex_offsets",
                                                       "incident_nets", "vertex_weights", "net_weights")))
