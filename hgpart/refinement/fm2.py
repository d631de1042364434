"""2-way FM with the classic Fiduccia-Mattheyses gain updates (O(1) per pin and move).

For k = 2, km1 and cut coincide: the gain of moving x out of its block is
sum over nets e of x of w(e) * ([Phi(e, own) = 1] - [Phi(e, other) = 0]). When v moves from F to T, for
each net e of v with F, T its pin counts before the move:

* before: T = 0 -> every free pin of e gains w(e);  T = 1 -> the free pin already in T loses w(e);
* after (F' = F - 1): F' = 0 -> every free pin loses w(e);  F' = 1 -> the free pin left in F gains w(e).

Each side has its own max-heap of free vertices keyed by gain; a step takes the better of the two tops
whose move keeps its target within bound (ties: out of the heavier side). Moves after the best prefix
are rolled back. A move's gain deltas are summed per vertex before its heap key changes: a vertex that
shares several nets with the moved one changes its key once, not once per net (on the coarse levels of
the initial partitioning a vertex has dozens of nets), and since the heaps
order by (gain, vertex id), which vertex comes out next does not depend on the order of the updates.
"""

from __future__ import annotations

import numba
import numpy as np

from .gains import apply_move, roll_back, track_best_prefix, two_way_gain
from .heap import heap_push_or_update, inlined_heap_pop, inlined_heap_push_or_update


@numba.njit(cache=True, nogil=True)
def initial_gain(v, partition, net_offsets, vertex_offsets, incident_nets, net_weights, pin_counts):
    """Exact gain (int64) of moving v to the other side of a bipartition with pin counts ``pin_counts``
    (int32[2 m]): :func:`two_way_gain`."""
    own = partition[v]
    return two_way_gain(v, own, 1 - own, net_offsets, vertex_offsets, incident_nets, net_weights, pin_counts, 2,
                        1)[0]


@numba.njit(cache=True, inline="always")
def delta_gain(w, in_source, in_target, own, side, target):
    """How the gain of a free pin in block ``own`` changes when a pin of its net (weight w) moves from
    ``side`` to ``target``; ``in_source`` and ``in_target``: the net's pins there before the move. Only
    when in_target <= 1 or in_source <= 2 can it be non-zero (the rules in this module's docstring)."""
    delta = np.int64(0)
    if in_target == 0:
        delta += w
    elif in_target == 1 and own == target:
        delta -= w
    if in_source == 1:  # the moved pin was alone: after the move no pin is left in the source
        delta -= w
    elif in_source == 2 and own == side:
        delta += w
    return delta


@numba.njit(cache=True, inline="always")
def bump(x, delta, a, partition, heap_a, heap_b, keys, positions, size_a, size_b):
    """Add ``delta`` to x's key in the heap of its side (``heap_a`` when x is in block a), inserting it."""
    own = partition[x] == a  # one call site: the heap's operations are inlined, each copy compiles anew
    inlined_heap_push_or_update(heap_a if own else heap_b, keys, positions, size_a if own else size_b,
                                np.int64(x), keys[x] + delta)


@numba.njit(cache=True, inline="always")
def pick_side(a, b, heap_a, size_a, heap_b, size_b, keys, vertex_weights, block_weights, max_block_weights):
    """The block (a or b; -1: neither) whose heap top moves next: of the two tops whose move keeps the other
    block within its bound, the larger gain; ties out of the heavier block."""
    side = -1
    best_key = np.int64(0)
    if size_a[0] > 0 and block_weights[b] + vertex_weights[heap_a[0]] <= max_block_weights[b]:
        side = a
        best_key = keys[heap_a[0]]
    if size_b[0] > 0 and block_weights[a] + vertex_weights[heap_b[0]] <= max_block_weights[a]:
        key_b = keys[heap_b[0]]
        if side < 0 or key_b > best_key or (key_b == best_key and block_weights[b] > block_weights[a]):
            side = b
    return side


@numba.njit(cache=True, nogil=True)
def fm2_pass(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
             pin_counts, block_weights, max_block_weights, movable, fruitless_limit):
    """One 2-way FM pass; returns the gain kept (>= 0). Arrays are updated in place.

    Every net takes part in the updates, however large: a big net only costs a scan when it crosses one
    of the thresholds above, and the gains stay exact."""
    n = vertex_offsets.shape[0] - 1
    heap0 = np.empty(max(n, 1), dtype=np.int64)  # one heap per side, never sliced in the loop (a view
    heap1 = np.empty(max(n, 1), dtype=np.int64)  # costs an atomic reference count per use)
    keys = np.zeros(n, dtype=np.int64)
    positions = np.full(n, -1, dtype=np.int64)
    size0 = np.zeros(1, dtype=np.int64)
    size1 = np.zeros(1, dtype=np.int64)
    free = movable.copy()
    for v in range(n):  # every free vertex gets its gain; boundary vertices start in the heaps, the others
        if free[v]:        # enter on their first gain update
            own = partition[v]
            keys[v], touches = two_way_gain(v, own, 1 - own, net_offsets, vertex_offsets, incident_nets,
                                            net_weights, pin_counts, 2, 1)
            if touches:
                heap_push_or_update(heap0 if own == 0 else heap1, keys, positions, size0 if own == 0 else size1,
                                    np.int64(v), keys[v])  # called: the pass's loop inlines the only copy
    moved = np.empty(n, dtype=np.int32)
    sources = np.empty(n, dtype=np.int32)
    pending = np.zeros(n, dtype=np.int64)  # the move's gain deltas, per vertex
    updated = np.zeros(n, dtype=np.bool_)
    to_update = np.empty(n, dtype=np.int64)
    num_moves = 0
    total = np.int64(0)
    best_total = np.int64(0)
    best_moves = 0
    since_best = 0
    while True:
        side = pick_side(0, 1, heap0, size0, heap1, size1, keys, vertex_weights, block_weights, max_block_weights)
        if side < 0:
            break
        v = inlined_heap_pop(heap0 if side == 0 else heap1, keys, positions, size0 if side == 0 else size1)
        free[v] = False
        target = 1 - side
        count = 0
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            size = net_offsets[e + 1] - net_offsets[e]
            if size < 2:
                continue
            w = net_weights[e]
            in_target = pin_counts[2 * e + target]
            in_source = pin_counts[2 * e + side]
            if in_target == 0 or in_target == 1 or in_source == 1 or in_source == 2:
                for p in range(net_offsets[e], net_offsets[e + 1]):
                    x = pin_vertices[p]
                    if not free[x]:
                        continue
                    delta = delta_gain(w, in_source, in_target, partition[x], side, target)
                    if delta != 0:
                        if not updated[x]:
                            updated[x] = True
                            to_update[count] = x
                            count += 1
                        pending[x] += delta
        for i in range(count):  # a vertex enters its heap on its first nonzero delta, even if they cancel
            x = to_update[i]
            bump(x, pending[x], 0, partition, heap0, heap1, keys, positions, size0, size1)
            pending[x] = 0
            updated[x] = False
        total += keys[v]
        apply_move(np.int64(v), np.int64(target), partition, net_offsets, vertex_offsets, incident_nets, vertex_weights,
                   pin_counts, block_weights, np.int64(2))
        moved[num_moves] = v
        sources[num_moves] = side
        num_moves += 1
        best_total, best_moves, since_best = track_best_prefix(total, num_moves, best_total, best_moves, since_best)
        if since_best >= fruitless_limit:
            break
    roll_back(moved, sources, best_moves, num_moves, partition, net_offsets, vertex_offsets, incident_nets,
              vertex_weights, pin_counts, block_weights, np.int64(2))
    return best_total
