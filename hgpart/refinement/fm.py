"""k-way Fiduccia-Mattheyses (C. M. Fiduccia and R. M. Mattheyses, "A linear-time heuristic for improving
network partitions", DAC 1982) for km1 or cut, with rollback to the best prefix.

A pass keeps every movable boundary vertex in a max-heap keyed by its best gain among adjacent blocks
that can take it; it repeatedly moves the top vertex (each vertex at most once per pass, even if the
gain is negative), updates the gains of the pins of its nets, and finally undoes the moves after the
best prefix. Passes repeat while they gain. For k = 2 this is classic 2-way FM.

For km1 with k > 2 a pass keeps a gain cache (as Mt-KaHyPar does): for each vertex v and block b the weight
of v's nets with a pin in b, and the part of v's gains that does not depend on the target. A move updates
it only where a net's pin counts cross the thresholds that change a gain (O(|e|) then, O(1) otherwise),
and rating a vertex reads k entries instead of walking its nets: on hub-heavy levels (a vertex in
thousands of nets, re-rated after every move of a neighbour) that walk dominated the pass. The moves are
the same as without the cache.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from ..parallel import claim_chunk, on_threads, runs_serially
from .fm2 import fm2_pass
from .gains import (apply_move, best_move, is_boundary, move_scratch, net_blocks, objective_from_pin_counts,
                    track_best_prefix)
from .heap import heap_pop, heap_push_or_update, heap_remove


@numba.njit(cache=True, inline="always")
def gains_changed(in_source, in_target, size, cut_objective):
    """Whether moving a pin of a net out of its source block (now ``in_source`` pins there) into the target
    (now ``in_target``) can change any pin's gain or adjacent blocks (the FM delta-gain rule)."""
    if in_source <= 1 or in_target <= 2:
        return True
    return cut_objective and (in_source >= size - 2 or in_target >= size - 1)


# The gain cache takes 12 bytes per vertex and block; above this many entries (768 MB) a pass walks the nets.
GAIN_CACHE_ENTRIES = 1 << 26


@numba.njit(cache=True, inline="always")
def bit_words(k):
    """64-bit words per vertex in the gain cache's ``adjacent_bits``."""
    return (k + 63) >> 6


@numba.njit(cache=True, inline="always")
def _add_adjacent_net(v, b, w, k, connected, adjacent_nets, adjacent_bits):
    """A net of weight w of vertex v has a pin in block b: the cache's entries of (v, b), b's bit set with the
    first such net."""
    connected[v * k + b] += w
    adjacent_nets[v * k + b] += 1
    if adjacent_nets[v * k + b] == 1:
        adjacent_bits[v * bit_words(k) + (b >> 6)] |= np.uint64(1) << np.uint64(b & 63)


@numba.njit(cache=True, nogil=True)
def km1_gain_cache(net_offsets, pin_vertices, net_weights, partition, pin_counts, k, num_vertices):
    """The km1 gain cache of a partition: ``connected`` int64[n * k] (the weight of v's nets with a pin in
    block b, at v * k + b), ``adjacent_nets`` int32[n * k] (how many of v's nets have a pin in b), ``common``
    int64[n] (sum over v's nets of w(e) ([Phi(e, own block) = 1] - 1)) and ``adjacent_bits`` uint64[n *
    :func:`bit_words`] (bit b of v's words set where adjacent_nets[v * k + b] > 0, so that rating v visits its
    adjacent blocks only: at k = 128 most vertices have one to three). Moving v to b gains
    connected[v * k + b] + common[v], as :func:`.gains.best_move` counts it; nets of one pin never count.

    Net by net, each pin adds w(e) for the blocks the net touches (:func:`.gains.net_blocks`), so the work is
    about the sum of |e| lambda(e), not of |e| k: at k = 128 most nets touch one to three blocks."""
    n = num_vertices
    connected = np.zeros(n * k, dtype=np.int64)
    adjacent_nets = np.zeros(n * k, dtype=np.int32)
    common = np.zeros(n, dtype=np.int64)
    adjacent_bits = np.zeros(n * bit_words(k), dtype=np.uint64)
    listed_at = np.full(k, -1, dtype=np.int64)  # the net that listed block b last
    blocks = np.empty(k, dtype=np.int64)
    for e in range(net_offsets.shape[0] - 1):
        first, last = net_offsets[e], net_offsets[e + 1]
        if last - first < 2:
            continue
        w = net_weights[e]
        touched = net_blocks(e, net_offsets, pin_vertices, partition, pin_counts, k, listed_at, e, blocks)
        for p in range(first, last):
            v = pin_vertices[p]
            common[v] += (w if pin_counts[e * k + partition[v]] == 1 else 0) - w
            for i in range(touched):
                _add_adjacent_net(v, blocks[i], w, k, connected, adjacent_nets, adjacent_bits)
    return connected, adjacent_nets, common, adjacent_bits


VERTEX_CHUNK = 256  # vertices a thread takes at a time when the gain cache is built in parallel


@numba.njit(cache=True, nogil=True)
def _gain_cache_rows_worker(t, taken, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                            partition, pin_counts, k, connected, adjacent_nets, common, adjacent_bits):
    """Thread t of :func:`gain_cache_parallel`: the cache's rows of chunks of ``VERTEX_CHUNK`` vertices from the
    shared counter ``taken``, each row zeroed and filled by its vertex alone."""
    n = vertex_offsets.shape[0] - 1
    listed_at = np.full(k, -1, dtype=np.int64)  # the visit of a net (by some vertex) that listed block b last
    blocks = np.empty(k, dtype=np.int64)
    visit = 0
    while True:
        first, last = claim_chunk(taken, VERTEX_CHUNK, n)
        if first == last:
            break
        for v in range(first, last):
            row = v * k
            for b in range(k):
                connected[row + b] = 0
                adjacent_nets[row + b] = 0
            for i in range(bit_words(k)):
                adjacent_bits[v * bit_words(k) + i] = 0
            own = partition[v]
            total = np.int64(0)
            for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
                e = incident_nets[q]
                if net_offsets[e + 1] - net_offsets[e] < 2:
                    continue
                w = net_weights[e]
                total += (w if pin_counts[e * k + own] == 1 else 0) - w
                visit += 1
                for i in range(net_blocks(e, net_offsets, pin_vertices, partition, pin_counts, k, listed_at, visit,
                                          blocks)):
                    _add_adjacent_net(v, blocks[i], w, k, connected, adjacent_nets, adjacent_bits)
            common[v] = total


def gain_cache_parallel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, partition, pin_counts,
                        k):
    """:func:`km1_gain_cache` vertex by vertex on numba's threads (:func:`hgpart.parallel.on_threads`): each
    vertex's row from its own nets, so the threads share no entry and the cache is the serial one."""
    n = vertex_offsets.shape[0] - 1
    connected = np.empty(n * k, dtype=np.int64)
    adjacent_nets = np.empty(n * k, dtype=np.int32)
    common = np.empty(n, dtype=np.int64)
    adjacent_bits = np.empty(n * bit_words(k), dtype=np.uint64)
    on_threads(_gain_cache_rows_worker, numba.get_num_threads(), np.zeros(1, dtype=np.int64), net_offsets,
               pin_vertices, vertex_offsets, incident_nets, net_weights, partition, pin_counts, np.int64(k), connected,
               adjacent_nets, common, adjacent_bits)
    return connected, adjacent_nets, common, adjacent_bits


@numba.njit(cache=True, inline="always")
def _cached_best_move(v, partition, vertex_weights, block_weights, max_block_weights, k, connected, adjacent_bits,
                      common):
    """:func:`.gains.best_move` (km1, adjacent blocks only) from the gain cache, with the same tie order: the
    adjacent blocks in increasing order, from v's bits."""
    own = partition[v]
    best = -1
    best_gain = np.int64(0)
    weight = vertex_weights[v]
    words = bit_words(k)
    for i in range(words):
        word = adjacent_bits[v * words + i]
        while word != 0:
            b = (i << 6) + np.int64(trailing_zeros(word))
            word &= word - np.uint64(1)
            if b == own or block_weights[b] + weight > max_block_weights[b]:
                continue
            g = connected[v * k + b] + common[v]
            if best < 0 or g > best_gain or (g == best_gain and block_weights[b] < block_weights[best]):
                best = b
                best_gain = g
    return best, best_gain


@numba.njit(cache=True, inline="always")
def _adjacent_elsewhere(v, partition, k, adjacent_bits):
    """Whether a net of v has a pin outside v's block (v is on the boundary), from the gain cache's bits."""
    words = bit_words(k)
    own = partition[v]
    for i in range(words):
        word = adjacent_bits[v * words + i]
        if i == own >> 6:
            word &= ~(np.uint64(1) << np.uint64(own & 63))
        if word != 0:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _move_with_cache(v, target, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                     vertex_weights, pin_counts, block_weights, k, connected, adjacent_nets, common, adjacent_bits):
    """:func:`.gains.apply_move`, keeping the km1 gain cache exact: a net's pins are visited only when its
    count in the target goes 0 -> 1 (b = target becomes adjacent) or 1 -> 2 (that pin's own count leaves 1),
    or in the source 1 -> 0 or 2 -> 1."""
    source = partition[v]
    words = bit_words(k)
    source_bit = np.uint64(1) << np.uint64(source & 63)
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        in_source = pin_counts[e * k + source]
        in_target = pin_counts[e * k + target]
        pin_counts[e * k + source] = in_source - 1
        pin_counts[e * k + target] = in_target + 1
        if net_offsets[e + 1] - net_offsets[e] < 2:
            continue
        w = net_weights[e]
        if in_target <= 1 or in_source <= 2:
            for p in range(net_offsets[e], net_offsets[e + 1]):
                x = pin_vertices[p]
                if in_target == 0:
                    _add_adjacent_net(x, target, w, k, connected, adjacent_nets, adjacent_bits)
                if in_source == 1:
                    connected[x * k + source] -= w
                    adjacent_nets[x * k + source] -= 1
                    if adjacent_nets[x * k + source] == 0:
                        adjacent_bits[x * words + (source >> 6)] &= ~source_bit
                if x != v:
                    if in_source == 2 and partition[x] == source:
                        common[x] += w
                    elif in_target == 1 and partition[x] == target:
                        common[x] -= w
        common[v] += (w if in_target == 0 else 0) - (w if in_source == 1 else 0)
    block_weights[source] -= vertex_weights[v]
    block_weights[target] += vertex_weights[v]
    partition[v] = target


@numba.njit(cache=True, inline="always")
def _best(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
          pin_counts, block_weights, max_block_weights, k, cut_objective, gain, adjacent, connected, adjacent_nets,
          common, adjacent_bits):
    if connected.shape[0]:
        return _cached_best_move(np.int64(v), partition, vertex_weights, block_weights, max_block_weights, k, connected,
                                 adjacent_bits, common)
    return best_move(np.int64(v), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                     vertex_weights, pin_counts, block_weights, max_block_weights, k, cut_objective, np.bool_(True),
                     gain, adjacent)


@numba.njit(cache=True, inline="always")
def _move(v, target, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
          vertex_weights, pin_counts, block_weights, k, connected, adjacent_nets, common, adjacent_bits):
    if connected.shape[0]:
        _move_with_cache(np.int64(v), np.int64(target), partition, net_offsets, pin_vertices, vertex_offsets,
                         incident_nets, net_weights, vertex_weights, pin_counts, block_weights, k, connected,
                         adjacent_nets, common, adjacent_bits)
    else:
        apply_move(np.int64(v), np.int64(target), partition, net_offsets, vertex_offsets, incident_nets, vertex_weights,
                   pin_counts, block_weights, k)


@numba.njit(cache=True, nogil=True)
def _rate_into_heap(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                    pin_counts, block_weights, max_block_weights, k, cut_objective, gain, adjacent, heap, keys,
                    position, size, targets, connected, adjacent_nets, common, adjacent_bits):
    """Rate v's best move among adjacent blocks with room: keyed into the heap, or out of it if it has none."""
    target, g = _best(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                      vertex_weights, pin_counts, block_weights, max_block_weights, k, cut_objective, gain, adjacent,
                      connected, adjacent_nets, common, adjacent_bits)
    if target >= 0:
        targets[v] = target
        heap_push_or_update(heap, keys, position, size, np.int64(v), g)
    else:
        heap_remove(heap, keys, position, size, np.int64(v))


@numba.njit(cache=True, nogil=True)
def fm_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
            pin_counts, block_weights, max_block_weights, k, movable, cut_objective, fruitless_limit,
            max_update_net_size, heap, keys, position, size, targets, connected, adjacent_nets, common,
            adjacent_bits):
    """One FM pass; returns the gain kept (>= 0). Arrays are updated in place, the gain cache
    (:func:`km1_gain_cache`; empty arrays: none) included."""
    n = vertex_offsets.shape[0] - 1
    gain, adjacent = move_scratch(k)
    locked = np.zeros(n, dtype=np.bool_)
    rated_at = np.full(n, -1, dtype=np.int64)  # the move after which a vertex was last re-rated
    size[0] = 0
    for v in range(n):
        position[v] = -1
    for v in range(n):
        if movable[v] and (_adjacent_elsewhere(v, partition, k, adjacent_bits) if connected.shape[0] else
                           is_boundary(v, partition, vertex_offsets, incident_nets, net_offsets, pin_counts, k)):
            _rate_into_heap(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                            vertex_weights, pin_counts, block_weights, max_block_weights, k, cut_objective, gain,
                            adjacent, heap, keys, position, size, targets, connected, adjacent_nets, common,
                            adjacent_bits)
    moved = np.empty(n, dtype=np.int32)
    sources = np.empty(n, dtype=np.int32)
    num_moves = 0
    total = np.int64(0)
    best_total = np.int64(0)
    best_moves = 0
    since_best = 0
    while size[0] > 0:
        v = heap[0]
        # rate the top again: a block may have filled up, or a net above max_update_net_size changed
        target, g = _best(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                          vertex_weights, pin_counts, block_weights, max_block_weights, k, cut_objective, gain,
                          adjacent, connected, adjacent_nets, common, adjacent_bits)
        if target >= 0 and (g != keys[v] or target != targets[v]):
            targets[v] = target
            heap_push_or_update(heap, keys, position, size, np.int64(v), g)
            if heap[0] != v:
                continue
        heap_pop(heap, keys, position, size)
        if target < 0:
            continue
        sources[num_moves] = partition[v]
        moved[num_moves] = v
        num_moves += 1
        _move(v, target, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
              vertex_weights, pin_counts, block_weights, k, connected, adjacent_nets, common, adjacent_bits)
        locked[v] = True
        total += g
        best_total, best_moves, since_best = track_best_prefix(total, num_moves, best_total, best_moves, since_best)
        if since_best >= fruitless_limit:
            break
        source = sources[num_moves - 1]
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            net_size = net_offsets[e + 1] - net_offsets[e]
            if net_size > max_update_net_size or not gains_changed(pin_counts[e * k + source],
                                                                  pin_counts[e * k + target], net_size,
                                                                  cut_objective):
                continue
            for p in range(net_offsets[e], net_offsets[e + 1]):
                u = pin_vertices[p]
                if locked[u] or not movable[u] or rated_at[u] == num_moves:  # once per move: the state is
                    continue                                                     # the same for all its nets
                rated_at[u] = num_moves
                _rate_into_heap(np.int64(u), partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                net_weights, vertex_weights, pin_counts, block_weights, max_block_weights, k,
                                cut_objective, gain, adjacent, heap, keys, position, size, targets, connected,
                                adjacent_nets, common, adjacent_bits)
    for i in range(num_moves - 1, best_moves - 1, -1):  # roll back to the best prefix, newest first
        _move(moved[i], sources[i], partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
              vertex_weights, pin_counts, block_weights, k, connected, adjacent_nets, common, adjacent_bits)
    return best_total


@numba.njit(cache=True)
def wants_gain_cache(n, k, cut_objective):
    """Whether k-way FM keeps a gain cache: km1, k > 2, at most ``GAIN_CACHE_ENTRIES`` entries."""
    return k > 2 and not cut_objective and n * k <= GAIN_CACHE_ENTRIES


@numba.njit(cache=True, nogil=True)
def fm_passes(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
              pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes, fruitless_limit,
              max_update_net_size, min_improvement):
    """Up to ``passes`` FM passes (2-way FM for k = 2) in one call; returns the total gain. Passes stop after
    one that gains nothing, or (with ``min_improvement`` > 0) less than that fraction of the objective it
    started from (Mt-KaHyPar's relative improvement threshold). k-way km1 builds the gain cache first (up to
    ``GAIN_CACHE_ENTRIES`` entries)."""
    n = vertex_offsets.shape[0] - 1
    if wants_gain_cache(n, k, cut_objective):
        connected, adjacent_nets, common, adjacent_bits = km1_gain_cache(net_offsets, pin_vertices, net_weights,
                                                                         partition, pin_counts, k, n)
    else:
        connected, adjacent_nets = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        common, adjacent_bits = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.uint64)
    return fm_passes_cached(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                            partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective,
                            passes, fruitless_limit, max_update_net_size, min_improvement, connected, adjacent_nets,
                            common, adjacent_bits)


@numba.njit(cache=True, nogil=True)
def fm_passes_cached(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                     partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes,
                     fruitless_limit, max_update_net_size, min_improvement, connected, adjacent_nets, common,
                     adjacent_bits):
    """:func:`fm_passes` with the gain cache given (:func:`km1_gain_cache` or :func:`gain_cache_parallel` of
    ``partition``; empty arrays: none)."""
    n = vertex_offsets.shape[0] - 1
    heap = np.empty(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    targets = np.full(n, -1, dtype=np.int32)
    objective = objective_from_pin_counts(net_offsets, net_weights, pin_counts, k, cut_objective) \
        if min_improvement > 0 else np.int64(0)
    total = np.int64(0)
    for _ in range(passes):
        if k == 2:  # classic FM with O(1) gain updates
            gained = fm2_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                              partition, pin_counts, block_weights, max_block_weights, movable, fruitless_limit)
        else:
            gained = fm_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                             partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective,
                             fruitless_limit, max_update_net_size, heap, keys, position, size, targets, connected,
                             adjacent_nets, common, adjacent_bits)
        total += gained
        if gained <= min_improvement * objective:
            break
        objective -= gained
    return total


def fm(hypergraph, partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes,
       fruitless_limit, max_update_net_size, min_improvement: float = 0.0) -> int:
    """:func:`fm_passes` on a :class:`~hgpart.hypergraph.Hypergraph`; ``partition``, ``pin_counts`` and
    ``block_weights`` are updated in place. On inputs large enough for numba's threads the gain cache is built
    on them (:func:`gain_cache_parallel`, the same cache); the passes are one thread's."""
    h = hypergraph
    arguments = (h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights, h.vertex_weights,
                 partition, pin_counts, block_weights, max_block_weights, k, movable, cut_objective, passes,
                 fruitless_limit, max_update_net_size, float(min_improvement))
    if runs_serially(h.num_pins) or not wants_gain_cache(h.num_vertices, k, cut_objective):
        return int(fm_passes(*arguments))
    cache = gain_cache_parallel(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                                partition, pin_counts, k)
    return int(fm_passes_cached(*arguments, *cache))
