"""Apply-coarsening, e'_i = { f(v) : v in e_i }, w'(e'_i) = w(e_i) (Eq. 3-4 of L. Cheng, H. Cho and P. Yoon,
"An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015).

Pins are mapped and merged, nets left with fewer than two pins are dropped (they can never be cut),
identical nets are merged with their weights added, and vertex weights add up. None of this changes
the km1 or cut of any partition projected through f.

Small levels (and the initial partitioning's bisections, on one numba thread each) contract in one njit call
(:func:`_contract_serial`); large levels on numba's threads (:func:`_contract_on_threads`), every pass over the
pins split among them, identical nets found bucket by bucket of their hashes and the incidence transposed per
range of nets, with the same result array for array.
"""

from __future__ import annotations

import numba
import numpy as np

from ..hypergraph import (SEGMENT_CHUNK, Hypergraph, _copy_distinct_range, _sort_count_range, _sort_dedup_segments,
                          scatter_sum, transpose_csr)
from ..parallel import claim_chunk, on_threads, ranges_by_items, runs_serially, thread_cursors
from ..sorting import SHORT, radix_argsort

BUCKET_NETS = 32  # nets per hash bucket, on average, when the threads group identical nets bucket by bucket


@numba.njit(cache=True, nogil=True, inline="always")
def _map_pins_range(pin_vertices, cluster, mapped, first, last):
    for p in range(first, last):
        mapped[p] = cluster[pin_vertices[p]]


@numba.njit(cache=True, nogil=True, inline="always")
def _net_hash(pins, first, last):
    """FNV-1a of the pins ``pins[first:last]`` and their number (uint64)."""
    h = np.uint64(14695981039346656037)
    for p in range(first, last):
        h = (h ^ np.uint64(pins[p])) * np.uint64(1099511628211)
    return h ^ np.uint64(last - first)


@numba.njit(cache=True, nogil=True, inline="always")
def _net_hashes_range(offsets, pins, hashes, first, last):
    for e in range(first, last):
        hashes[e] = _net_hash(pins, offsets[e], offsets[e + 1])


@numba.njit(cache=True, nogil=True)
def _map_pins_serial(pin_vertices, cluster):
    mapped = np.empty(pin_vertices.shape[0], dtype=np.int32)
    _map_pins_range(pin_vertices, cluster, mapped, 0, pin_vertices.shape[0])
    return mapped


@numba.njit(cache=True, nogil=True)
def _net_hashes_serial(offsets, pins):
    hashes = np.empty(offsets.shape[0] - 1, dtype=np.uint64)
    _net_hashes_range(offsets, pins, hashes, 0, hashes.shape[0])
    return hashes


@numba.njit(cache=True, nogil=True)
def _stable_order(hashes):
    """``np.argsort(hashes, kind="stable")`` (int64[m]) of the uint64 hashes by a radix sort
    (:func:`hgpart.sorting.radix_argsort`): about three times faster than numba's mergesort on such keys."""
    return radix_argsort(hashes.copy())


@numba.njit(cache=True, nogil=True)
def _merge_sorted(order, first, last, hashes, offsets, pins, keep, merged):
    """Merge the identical nets among ``order[first:last]`` (nets sorted by hash, equal hashes in id order): of
    each set of identical nets the first in id order keeps ``keep`` and gets the others' ``merged`` weights
    added, the others' ``keep`` is cleared. Nets with ``keep`` already False are not compared with."""
    i = first
    while i < last:
        j = i
        while j < last and hashes[order[j]] == hashes[order[i]]:
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
                    keep[e] = False
                    merged[f] += merged[e]
                    break
        i = j


@numba.njit(cache=True, nogil=True)
def _merge_identical(offsets, pins, weights, order, hashes):
    """Walk nets sorted by hash (:func:`_merge_sorted`); a net equal to an earlier kept one adds its weight there.

    Returns keep (bool[m]) and the merged weights; kept nets keep their relative order.
    """
    m = offsets.shape[0] - 1
    keep = np.ones(m, dtype=np.bool_)
    merged = weights.copy()
    _merge_sorted(order, 0, m, hashes, offsets, pins, keep, merged)
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


@numba.njit(cache=True, nogil=True)
def _map_sort_count_worker(t, taken, offsets, pin_vertices, cluster, work, counts):
    """Thread t of :func:`_contract_on_threads`: for chunks of ``SEGMENT_CHUNK`` nets from the shared counter
    ``taken``, each net's pins mapped by ``cluster`` into ``work`` and sorted there; counts[e + 1] = net e's
    distinct ones."""
    while True:
        first, last = claim_chunk(taken, SEGMENT_CHUNK, offsets.shape[0] - 1)
        if first == last:
            break
        for p in range(offsets[first], offsets[last]):
            work[p] = cluster[pin_vertices[p]]
        _sort_count_range(offsets, work, counts, first, last)


@numba.njit(cache=True, nogil=True)
def _copy_hash_worker(t, taken, offsets, work, distinct_offsets, distinct, bits, hashes, buckets):
    """Thread t of :func:`_contract_on_threads`, as :func:`_map_sort_count_worker`: each net's distinct pins
    into ``distinct`` at ``distinct_offsets``, and for a net of at least two of them its hash and its bucket
    (the hash's top ``bits`` bits); bucket -1 for a net that is dropped."""
    while True:
        first, last = claim_chunk(taken, SEGMENT_CHUNK, offsets.shape[0] - 1)
        if first == last:
            break
        _copy_distinct_range(offsets, work, distinct_offsets, distinct, first, last)
        for e in range(first, last):
            begin, end = distinct_offsets[e], distinct_offsets[e + 1]
            if end - begin < 2:
                hashes[e], buckets[e] = 0, -1
                continue
            h = _net_hash(distinct, begin, end)
            hashes[e] = h
            buckets[e] = np.int32(h >> np.uint64(64 - bits)) if bits > 0 else 0


@numba.njit(cache=True, nogil=True)
def _order_by_hash(members, begin, end, hashes):
    """Sort the nets ``members[begin:end]`` (in id order) by hash, stably: by insertion up to ``SHORT`` of them,
    else by :func:`hgpart.sorting.radix_argsort`."""
    if end - begin <= SHORT:
        for p in range(begin + 1, end):
            e = members[p]
            key = hashes[e]
            q = p
            while q > begin and hashes[members[q - 1]] > key:
                members[q] = members[q - 1]
                q -= 1
            members[q] = e
        return
    size = end - begin
    digits = np.empty(size, dtype=np.uint64)
    nets = np.empty(size, dtype=np.int64)
    for i in range(size):
        nets[i] = members[begin + i]
        digits[i] = hashes[nets[i]]
    order = radix_argsort(digits)
    for i in range(size):
        members[begin + i] = nets[order[i]]


@numba.njit(cache=True, nogil=True)
def _merge_buckets_worker(t, taken, bucket_offsets, members, hashes, offsets, pins, keep, merged):
    """Thread t of :func:`_contract_on_threads`: buckets of nets from the shared counter ``taken``, 64 at a time,
    each ordered by hash and its identical nets merged (:func:`_merge_sorted`). Identical nets share a hash, so a
    bucket; a thread writes ``keep`` and ``merged`` of its buckets' nets only."""
    while True:
        first, last = claim_chunk(taken, 64, bucket_offsets.shape[0] - 1)
        if first == last:
            break
        for b in range(first, last):
            begin, end = bucket_offsets[b], bucket_offsets[b + 1]
            if end - begin >= 2:
                _order_by_hash(members, begin, end, hashes)
                _merge_sorted(members, begin, end, hashes, offsets, pins, keep, merged)


@numba.njit(cache=True, nogil=True)
def _copy_count_worker(t, firsts, kept, distinct_offsets, distinct, kept_offsets, kept_pins, counts):
    """Thread t of :func:`_contract_on_threads`: the kept nets firsts[t]..firsts[t + 1] - 1 (kept[i] is kept net
    i's old id) copied into ``kept_pins``, and counts[t, v] = their pins on vertex v (for
    :func:`hgpart.parallel.thread_cursors`)."""
    for i in range(firsts[t], firsts[t + 1]):
        q = kept_offsets[i]
        e = kept[i]
        for p in range(distinct_offsets[e], distinct_offsets[e + 1]):
            v = distinct[p]
            kept_pins[q] = v
            q += 1
            counts[t, v] += 1


@numba.njit(cache=True, nogil=True)
def _scatter_incidence_worker(t, firsts, kept_offsets, kept_pins, cursors, incident_nets):
    """Thread t of :func:`_contract_on_threads`: its kept nets into each of their vertices' incident nets."""
    for i in range(firsts[t], firsts[t + 1]):
        for p in range(kept_offsets[i], kept_offsets[i + 1]):
            v = kept_pins[p]
            incident_nets[cursors[t, v]] = i
            cursors[t, v] += 1


def _contract_on_threads(hypergraph: Hypergraph, cluster: np.ndarray, num_clusters: int,
                         threads: int | None = None) -> Hypergraph:
    """:func:`contract` for large levels, every pass over the pins on numba's threads
    (:func:`hgpart.parallel.on_threads`): pins mapped, sorted and counted per net; copied without repeats and
    hashed; identical nets merged bucket by bucket (a bucket: the nets whose hashes share their top bits, about
    ``BUCKET_NETS`` of them); the kept nets copied and their pins counted per vertex in contiguous ranges of
    nets, one per thread; the incidence transposed from those counts. The passes in between are over nets or
    vertices. The same arrays as :func:`_contract_serial`, on any number of ``threads`` (default: numba's)."""
    threads = threads or numba.get_num_threads()
    offsets, m = hypergraph.net_offsets, hypergraph.num_nets
    work = np.empty(hypergraph.num_pins, dtype=np.int32)
    counts = np.zeros(m + 1, dtype=np.int64)
    on_threads(_map_sort_count_worker, threads, np.zeros(1, dtype=np.int64), offsets, hypergraph.pin_vertices,
               cluster, work, counts)
    distinct_offsets = np.cumsum(counts)
    distinct = np.empty(int(distinct_offsets[-1]), dtype=np.int32)
    bits = (m // BUCKET_NETS).bit_length()
    hashes = np.empty(m, dtype=np.uint64)
    buckets = np.empty(m, dtype=np.int32)
    on_threads(_copy_hash_worker, threads, np.zeros(1, dtype=np.int64), offsets, work, distinct_offsets, distinct,
               bits, hashes, buckets)
    keep = buckets >= 0
    in_bucket = np.zeros(m + 1, dtype=np.int64)  # net e, in a bucket or not, as a segment of one entry or none
    np.cumsum(keep, out=in_bucket[1:])
    bucket_offsets, members = transpose_csr(in_bucket, buckets[keep], 1 << bits)  # each bucket's nets in id order
    members = members.astype(np.int64)  # the nets' order as the serial driver's merge takes it
    merged = hypergraph.net_weights.copy()
    on_threads(_merge_buckets_worker, threads, np.zeros(1, dtype=np.int64), bucket_offsets, members, hashes,
               distinct_offsets, distinct, keep, merged)
    kept = np.flatnonzero(keep)
    kept_offsets = np.zeros(kept.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.diff(distinct_offsets)[kept], out=kept_offsets[1:])
    num_pins = int(kept_offsets[-1])
    chunks = max(1, min(threads, num_pins // max(num_clusters, 1)))  # counts of chunks x vertices: at most the pins
    firsts = ranges_by_items(kept_offsets, chunks)
    kept_pins = np.empty(num_pins, dtype=np.int32)
    vertex_counts = np.zeros((chunks, num_clusters), dtype=np.int64)
    on_threads(_copy_count_worker, chunks, firsts, kept, distinct_offsets, distinct, kept_offsets, kept_pins,
               vertex_counts)
    vertex_offsets = thread_cursors(vertex_counts)  # each vertex's nets in id order
    incident_nets = np.empty(num_pins, dtype=np.int32)
    on_threads(_scatter_incidence_worker, chunks, firsts, kept_offsets, kept_pins, vertex_counts, incident_nets)
    return Hypergraph(kept_offsets, kept_pins, vertex_offsets, incident_nets,
                      scatter_sum(cluster, hypergraph.vertex_weights, num_clusters), merged[kept])


def contract(hypergraph: Hypergraph, cluster: np.ndarray, num_clusters: int) -> Hypergraph:
    """The coarse hypergraph of the map ``cluster`` (int32[n] -> [0, num_clusters)): in one njit call for a level
    that :func:`hgpart.parallel.runs_serially`, else on numba's threads (:func:`_contract_on_threads`).

    Returns
    -------
    Hypergraph
        num_clusters vertices with summed weights; nets as in Eq. 3 minus single-pin nets, identical
        nets merged with summed weights (Eq. 4); pins sorted within nets.
    """
    if runs_serially(hypergraph.num_pins):
        return Hypergraph(*_contract_serial(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights,
                                            hypergraph.vertex_weights, cluster, num_clusters))
    return _contract_on_threads(hypergraph, cluster, num_clusters)
