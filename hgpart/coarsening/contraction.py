"""Apply-coarsening, e'_i = { f(v) : v in e_i }, w'(e'_i) = w(e_i) (Eq. 3-4 of L. Cheng, H. Cho and P. Yoon,
"An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015).

Pins are mapped and merged, nets left with fewer than two pins are dropped (they can never be cut),
identical nets are merged with their weights added, and vertex weights add up. None of this changes
the km1 or cut of any partition projected through f.
"""

from __future__ import annotations

import numba
import numpy as np

from ..hypergraph import Hypergraph, _sort_dedup_segments, scatter_sum, sort_dedup_segments_parallel, transpose_csr
from ..parallel import pick, runs_serially
from ..sorting import radix_argsort


@numba.njit(cache=True, nogil=True, inline="always")
def _map_pins_range(pin_vertices, cluster, mapped, first, last):
    for p in range(first, last):
        mapped[p] = cluster[pin_vertices[p]]


@numba.njit(cache=True, nogil=True, inline="always")
def _net_hashes_range(offsets, pins, hashes, first, last):
    for e in range(first, last):
        h = np.uint64(14695981039346656037)
        for p in range(offsets[e], offsets[e + 1]):
            h = (h ^ np.uint64(pins[p])) * np.uint64(1099511628211)
        hashes[e] = h ^ np.uint64(offsets[e + 1] - offsets[e])


@numba.njit(cache=True, nogil=True)
def _map_pins_serial(pin_vertices, cluster):
    mapped = np.empty(pin_vertices.shape[0], dtype=np.int32)
    _map_pins_range(pin_vertices, cluster, mapped, 0, pin_vertices.shape[0])
    return mapped


@numba.njit(cache=True, parallel=True)
def _map_pins_parallel(pin_vertices, cluster):
    mapped = np.empty(pin_vertices.shape[0], dtype=np.int32)
    chunk = 4096
    for c in numba.prange((pin_vertices.shape[0] + chunk - 1) // chunk):
        _map_pins_range(pin_vertices, cluster, mapped, c * chunk, min((c + 1) * chunk, pin_vertices.shape[0]))
    return mapped


@numba.njit(cache=True, nogil=True)
def _net_hashes_serial(offsets, pins):
    hashes = np.empty(offsets.shape[0] - 1, dtype=np.uint64)
    _net_hashes_range(offsets, pins, hashes, 0, hashes.shape[0])
    return hashes


@numba.njit(cache=True, parallel=True)
def _net_hashes_parallel(offsets, pins):
    hashes = np.empty(offsets.shape[0] - 1, dtype=np.uint64)
    chunk = 1024
    for c in numba.prange((hashes.shape[0] + chunk - 1) // chunk):
        _net_hashes_range(offsets, pins, hashes, c * chunk, min((c + 1) * chunk, hashes.shape[0]))
    return hashes


@numba.njit(cache=True, nogil=True)
def _stable_order(hashes):
    """``np.argsort(hashes, kind="stable")`` (int64[m]) of the uint64 hashes by a radix sort
    (:func:`hgpart.sorting.radix_argsort`): about three times faster than numba's mergesort on such keys."""
    return radix_argsort(hashes.copy())


@numba.njit(cache=True, nogil=True)
def _merge_identical(offsets, pins, weights, order, hashes):
    """Walk nets sorted by hash; a net equal to an earlier kept one adds its weight there.

    Returns keep (bool[m]) and the merged weights; kept nets keep their relative order.
    """
    m = offsets.shape[0] - 1
    keep = np.ones(m, dtype=np.bool_)
    merged = weights.copy()
    i = 0
    while i < m:
        j = i
        while j < m and hashes[order[j]] == hashes[order[i]]:
            j += 1
        # nets order[i:j] share a hash: compare each with the kept ones before it
        for a in range(i, j):
            e = order[a]
            for b in range(i, a):
                f = order[b]
                if not keep[f]:
                    continue
                size = offsets[e + 1] - offsets[e]
                if size != offsets[f + 1] - offsets[f]:
                    continue
                same = True
                for t in range(size):
                    if pins[offsets[e] + t] != pins[offsets[f] + t]:
                        same = False
                        break
                if same:
                    first, second = (f, e) if f < e else (e, f)
                    keep[second] = False
                    keep[first] = True
                    merged[first] += merged[second]
                    break
        i = j
    return keep, merged


@numba.njit(cache=True, nogil=True)
def _keep_segments(offsets, values, keep):
    """The segments i with keep[i] of a CSR (offsets int64[s + 1], values): (offsets, values) of those."""
    kept_offsets = np.zeros(offsets.shape[0], dtype=np.int64)
    kept_values = np.empty(values.shape[0], dtype=values.dtype)
    kept = 0
    end = 0
    for s in range(offsets.shape[0] - 1):
        if keep[s]:
            for p in range(offsets[s], offsets[s + 1]):
                kept_values[end] = values[p]
                end += 1
            kept += 1
            kept_offsets[kept] = end
    return kept_offsets[:kept + 1].copy(), kept_values[:end].copy()


@numba.njit(cache=True, nogil=True)
def _contract_nets(offsets, pins, net_weights):
    """Eq. 3 on the mapped pins, each net's already sorted and merged (:func:`..hypergraph._sort_dedup_segments`):
    nets left with fewer than two pins dropped. Returns (offsets int64[m' + 1], pins int32[p'], weights
    int64[m'])."""
    keep = (offsets[1:] - offsets[:-1]) >= 2
    offsets, pins = _keep_segments(offsets, pins, keep)
    return offsets, pins, net_weights[keep]


@numba.njit(cache=True, nogil=True)
def _finish_contraction(offsets, pins, weights, hashes, order, cluster, vertex_weights, num_clusters):
    """Eq. 4 and the coarse vertices: identical nets (``order``: the nets by hash, stably) merged with their
    weights added, the incidence transposed, vertex weights summed. Returns the six arrays of the coarse
    :class:`~hgpart.hypergraph.Hypergraph`."""
    unique, merged_weights = _merge_identical(offsets, pins, weights, order, hashes)
    offsets, pins = _keep_segments(offsets, pins, unique)
    vertex_offsets, incident_nets = transpose_csr(offsets, pins, num_clusters)
    return (offsets, pins, vertex_offsets, incident_nets, scatter_sum(cluster, vertex_weights, num_clusters),
            merged_weights[unique])


@numba.njit(cache=True, nogil=True)
def _contract_serial(net_offsets, pin_vertices, net_weights, vertex_weights, cluster, num_clusters):
    """:func:`contract` in one call without the GIL, for inputs that :func:`..parallel.runs_serially` (the
    initial partitioning's bisections, on many threads at once): the serial drivers."""
    offsets, pins, weights = _contract_nets(*_sort_dedup_segments(net_offsets, _map_pins_serial(pin_vertices, cluster)),
                                            net_weights)
    hashes = _net_hashes_serial(offsets, pins)
    return _finish_contraction(offsets, pins, weights, hashes, _stable_order(hashes), cluster, vertex_weights,
                               num_clusters)


def contract(hypergraph: Hypergraph, cluster: np.ndarray, num_clusters: int) -> Hypergraph:
    """The coarse hypergraph of the map ``cluster`` (int32[n] -> [0, num_clusters)).

    Returns
    -------
    Hypergraph
        num_clusters vertices with summed weights; nets as in Eq. 3 minus single-pin nets, identical
        nets merged with summed weights (Eq. 4); pins sorted within nets.
    """
    if runs_serially(hypergraph.num_pins):
        return Hypergraph(*_contract_serial(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights,
                                            hypergraph.vertex_weights, cluster, num_clusters))
    mapped = _map_pins_parallel(hypergraph.pin_vertices, cluster)
    offsets, pins, weights = _contract_nets(*sort_dedup_segments_parallel(hypergraph.net_offsets, mapped),
                                            hypergraph.net_weights)
    hashes = pick(pins.shape[0], _net_hashes_serial, _net_hashes_parallel)(offsets, pins)
    return Hypergraph(*_finish_contraction(offsets, pins, weights, hashes, _stable_order(hashes), cluster,
                                           hypergraph.vertex_weights, num_clusters))
