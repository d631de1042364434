"""Pin counts Phi(e, b) and move gains for km1 and cut (numba).

For a vertex v in block a and a target block b:

* km1: gain = sum over nets e of v of w(e) * ([Phi(e, a) = 1] - [Phi(e, b) = 0]);
* cut: gain = sum of w(e) over nets that become uncut ([Phi(e, a) = 1 and Phi(e, b) = |e| - 1])
  minus w(e) over nets that become cut ([Phi(e, a) = |e|]).

Nets with fewer than two pins never count. ``pin_counts`` is int32[num_nets * k], row-major by net.

Callers pass vertex and block ids as int64 (``np.int64(v)`` where ``v`` was read from an int32 array) and k as
a runtime int64, never a literal: numba compiles a function once per argument types, and each int32 or
``Literal[int](2)`` variant of these helpers and their callers added seconds to the first command's
compilation (docs/tuning.md, "Compilation and warm-up").
"""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import pick


@numba.njit(cache=True, inline="always")
def _count_net(e, net_offsets, pin_vertices, partition, k, pin_counts):
    base = e * k
    for p in range(net_offsets[e], net_offsets[e + 1]):
        pin_counts[base + partition[pin_vertices[p]]] += 1


@numba.njit(cache=True, nogil=True)
def pin_counts_serial(net_offsets, pin_vertices, partition, k):
    pin_counts = np.zeros((net_offsets.shape[0] - 1) * k, dtype=np.int32)
    for e in range(net_offsets.shape[0] - 1):
        _count_net(e, net_offsets, pin_vertices, partition, k, pin_counts)
    return pin_counts


@numba.njit(cache=True, parallel=True)
def _pin_counts_parallel(net_offsets, pin_vertices, partition, k):
    pin_counts = np.zeros((net_offsets.shape[0] - 1) * k, dtype=np.int32)
    for e in numba.prange(net_offsets.shape[0] - 1):
        _count_net(e, net_offsets, pin_vertices, partition, k, pin_counts)
    return pin_counts


def compute_pin_counts(net_offsets, pin_vertices, partition, k):
    """Phi(e, b) as int32[num_nets * k]."""
    return pick(pin_vertices.shape[0], pin_counts_serial, _pin_counts_parallel)(net_offsets, pin_vertices,
                                                                               partition, k)


@numba.njit(cache=True, nogil=True)
def objective_from_pin_counts(net_offsets, net_weights, pin_counts, k, cut_objective):
    """km1 (sum of w(e) (lambda(e) - 1)) or cut (sum of w(e) over nets with lambda(e) > 1) from Phi
    (int32[num_nets * k]); nets with fewer than two pins add nothing."""
    total = np.int64(0)
    for e in range(net_offsets.shape[0] - 1):
        if net_offsets[e + 1] - net_offsets[e] < 2:
            continue
        connectivity = 0
        for b in range(k):
            if pin_counts[e * k + b] > 0:
                connectivity += 1
        if cut_objective:
            if connectivity > 1:
                total += net_weights[e]
        else:
            total += net_weights[e] * (connectivity - 1)
    return total


@numba.njit(cache=True)
def move_scratch(k):
    """The scratch of :func:`gains_to_blocks` and :func:`best_move` for ``k`` blocks: ``gain`` int64[k] (zero)
    and ``adjacent`` int64[2 k] (-1: no block listed)."""
    return np.zeros(k, dtype=np.int64), np.full(2 * k, -1, dtype=np.int64)


@numba.njit(cache=True, inline="always")
def _reach(b, e, w, counts, adjacent, gain, count, k):
    """Net e (of weight w, added to gain[b] where ``counts``) reaches block b: b is listed once per vertex and
    counted once per net. Returns the new number of listed blocks."""
    if adjacent[b] == e:
        return count
    if adjacent[b] < 0:
        adjacent[k + count] = b
        count += 1
    adjacent[b] = e
    if counts:
        gain[b] += w
    return count


@numba.njit(cache=True, inline="always")
def net_blocks(e, net_offsets, pin_vertices, partition, pin_counts, k, listed_at, stamp, blocks):
    """The distinct blocks of net e in ``blocks[:count]`` (int64[k]); returns count. Through its pins where it
    has at most k / 2 of them (``partition[]`` read at random, so only for few pins), through its k pin counts
    otherwise. ``listed_at`` (int64[k]) marks a listed block with ``stamp``, which must differ from every stamp
    of an earlier call on that scratch."""
    first, last = net_offsets[e], net_offsets[e + 1]
    count = 0
    if 2 * (last - first) <= k:
        for p in range(first, last):
            b = partition[pin_vertices[p]]
            if listed_at[b] != stamp:
                listed_at[b] = stamp
                blocks[count] = b
                count += 1
    else:
        for b in range(k):
            if pin_counts[e * k + b] > 0:
                blocks[count] = b
                count += 1
    return count


@numba.njit(cache=True, nogil=True)
def gains_to_blocks(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, pin_counts,
                    k, cut_objective, gain, adjacent):
    """Fill ``gain[b]`` (int64[k]) with the part of the gain of moving v from its block a to b that depends on
    b, for the blocks b != a that some net of v has a pin in (v's adjacent blocks), and list those blocks in
    ``adjacent[k:k + count]``; ``adjacent[b]`` (int64[2 k]) is then >= 0 exactly for a listed b.

    Returns (the part of the gain that does not depend on b, count). A net reaches its blocks through its
    pins where it has at most k / 2 of them and through its k pin counts otherwise, so rating a vertex costs
    about the sum over its nets of min(|e|, k) rather than |e| k (at k = 128 most nets have a few pins). The
    scratch is as :func:`move_scratch` makes it on entry; :func:`clear_scratch` restores that.
    """
    a = partition[v]
    common = np.int64(0)
    count = 0
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        first, last = net_offsets[e], net_offsets[e + 1]
        size = last - first
        if size < 2:
            continue
        w = net_weights[e]
        base = e * k
        in_source = pin_counts[base + a]
        if cut_objective:
            if in_source == size:
                common -= w
        else:
            if in_source == 1:
                common += w
            common -= w
        if in_source == size:
            continue  # no pin outside a
        if 2 * size <= k:  # walking the pins reads partition[] at random: worth it only for nets of few pins
            for p in range(first, last):
                b = np.int64(partition[pin_vertices[p]])
                if b != a:
                    counts = not cut_objective or (in_source == 1 and pin_counts[base + b] == size - 1)
                    count = _reach(b, e, w, counts, adjacent, gain, count, k)
        else:
            for b in range(k):
                if b != a and pin_counts[base + b] > 0:
                    counts = not cut_objective or (in_source == 1 and pin_counts[base + b] == size - 1)
                    count = _reach(np.int64(b), e, w, counts, adjacent, gain, count, k)
    return common, count


@numba.njit(cache=True, inline="always")
def clear_scratch(gain, adjacent, count, k):
    """Undo :func:`gains_to_blocks`' marks on its ``count`` listed blocks."""
    for i in range(count):
        b = adjacent[k + i]
        gain[b] = 0
        adjacent[b] = -1


@numba.njit(cache=True, inline="always")
def _better(b, g, best, best_gain, block_weights):
    """Whether target b with gain g beats ``best`` (-1: none yet): more gain, then the lighter block, then the
    smaller id."""
    if best < 0 or g > best_gain:
        return True
    if g < best_gain:
        return False
    return block_weights[b] < block_weights[best] or (block_weights[b] == block_weights[best] and b < best)


@numba.njit(cache=True, inline="always")
def two_way_gain(v, own, other, net_offsets, vertex_offsets, incident_nets, net_weights, pin_counts, net_stride,
                 block_stride):
    """Exact km1 gain (int64) of moving v from block ``own`` to ``other``, sum over its nets e with |e| >= 2
    of w(e) ([Phi(e, own) = 1] - [Phi(e, other) = 0]), with Phi(e, b) at ``e * net_stride + b *
    block_stride`` (net-major: k, 1; block-major: 1, m); and whether one of those nets has a pin in
    ``other`` (v is on the boundary between the two)."""
    gain = np.int64(0)
    touches = False
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        if net_offsets[e + 1] - net_offsets[e] < 2:
            continue
        if pin_counts[e * net_stride + own * block_stride] == 1:
            gain += net_weights[e]
        if pin_counts[e * net_stride + other * block_stride] == 0:
            gain -= net_weights[e]
        else:
            touches = True
    return gain, touches


@numba.njit(cache=True, nogil=True)
def best_move(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
              pin_counts, block_weights, max_block_weights, k, cut_objective, only_adjacent, gain, adjacent):
    """Best target block of v that stays within its weight bound: (target or -1, gain); with
    ``only_adjacent`` among the blocks some net of v has a pin in, else among all.

    Ties go to the lighter target, then the smaller block id. ``gain``/``adjacent`` are scratch
    (:func:`move_scratch`), as they were on entry on return.
    """
    a = partition[v]
    if k == 2 and not cut_objective:  # one pass over v's nets, no scratch
        b = 1 - a
        g, touches = two_way_gain(v, a, b, net_offsets, vertex_offsets, incident_nets, net_weights, pin_counts, 2, 1)
        if (only_adjacent and not touches) or block_weights[b] + vertex_weights[v] > max_block_weights[b]:
            return -1, np.int64(0)
        return b, g
    common, count = gains_to_blocks(v, partition, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                                    net_weights, pin_counts, k, cut_objective, gain, adjacent)
    best = -1
    best_gain = np.int64(0)
    weight = vertex_weights[v]
    if only_adjacent:
        for i in range(count):
            b = adjacent[k + i]
            if block_weights[b] + weight <= max_block_weights[b] and _better(b, gain[b] + common, best, best_gain,
                                                                             block_weights):
                best = b
                best_gain = gain[b] + common
    else:
        for b in range(k):
            if b != a and block_weights[b] + weight <= max_block_weights[b] and _better(b, gain[b] + common, best,
                                                                                      best_gain, block_weights):
                best = b
                best_gain = gain[b] + common
    clear_scratch(gain, adjacent, count, k)
    return best, best_gain


@numba.njit(cache=True, inline="always")
def apply_move_strided(v, target, partition, vertex_offsets, incident_nets, vertex_weights, pin_counts,
                       block_weights, net_stride, block_stride):
    """Move v to ``target``: Phi(e, b) at ``e * net_stride + b * block_stride`` (net-major: k, 1; block-major:
    1, m), the block weights and the partition."""
    source = partition[v]
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        pin_counts[e * net_stride + source * block_stride] -= 1
        pin_counts[e * net_stride + target * block_stride] += 1
    block_weights[source] -= vertex_weights[v]
    block_weights[target] += vertex_weights[v]
    partition[v] = target


@numba.njit(cache=True, nogil=True)
def apply_move(v, target, partition, net_offsets, vertex_offsets, incident_nets, vertex_weights, pin_counts,
               block_weights, k):
    apply_move_strided(v, target, partition, vertex_offsets, incident_nets, vertex_weights, pin_counts,
                       block_weights, k, 1)


@numba.njit(cache=True, inline="always")
def track_best_prefix(total, num_moves, best_total, best_moves, since_best):
    """FM bookkeeping after a move: (best total, moves in the best prefix, moves since it)."""
    if total > best_total:
        return total, num_moves, 0
    return best_total, best_moves, since_best + 1


@numba.njit(cache=True, nogil=True)
def roll_back(moved, sources, keep, num_moves, partition, net_offsets, vertex_offsets, incident_nets,
              vertex_weights, pin_counts, block_weights, k):
    """Undo moves keep..num_moves-1 (newest first): vertex ``moved[i]`` returns to ``sources[i]``."""
    for i in range(num_moves - 1, keep - 1, -1):
        apply_move(np.int64(moved[i]), np.int64(sources[i]), partition, net_offsets, vertex_offsets, incident_nets,
                   vertex_weights, pin_counts, block_weights, k)


@numba.njit(cache=True, nogil=True)
def is_boundary(v, partition, vertex_offsets, incident_nets, net_offsets, pin_counts, k):
    a = partition[v]
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        size = net_offsets[e + 1] - net_offsets[e]
        if size >= 2 and pin_counts[e * k + a] < size:
            return True
    return False
