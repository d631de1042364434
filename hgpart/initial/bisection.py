"""Flat bipartitioning algorithms for the coarsest hypergraph (numba): random, BFS, greedy hypergraph
growing and label propagation. Each returns int32[n] with sides 0/1 that respects ``fixed_side``
(-1 free) and tries to put ``target0`` weight on side 0; FM and the rebalancer do the rest."""

from __future__ import annotations

import numba
import numpy as np

from ..refinement.fm2 import initial_gain
from ..refinement.gains import apply_move, pin_counts_serial
from ..refinement.heap import heap_pop, heap_push_or_update


@numba.njit(cache=True, nogil=True)
def _start(fixed_side, vertex_weights):
    partition = np.ones(fixed_side.shape[0], dtype=np.int32)
    weight0 = np.int64(0)
    for v in range(fixed_side.shape[0]):
        if fixed_side[v] == 0:
            partition[v] = 0
            weight0 += vertex_weights[v]
    return partition, weight0


@numba.njit(cache=True, nogil=True)
def random_bisection(vertex_weights, fixed_side, target0, seed):
    np.random.seed(seed)
    partition, weight0 = _start(fixed_side, vertex_weights)
    for v in np.random.permutation(vertex_weights.shape[0]):
        if weight0 >= target0:
            break
        if fixed_side[v] < 0:
            partition[v] = 0
            weight0 += vertex_weights[v]
    return partition


@numba.njit(cache=True, nogil=True)
def bfs_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, vertex_weights, fixed_side, target0,
                  seed):
    """Grow side 0 breadth-first from a random vertex (restarting in another component when needed)."""
    np.random.seed(seed)
    n = vertex_weights.shape[0]
    partition, weight0 = _start(fixed_side, vertex_weights)
    visited = np.zeros(n, dtype=np.bool_)
    scanned = np.zeros(net_offsets.shape[0] - 1, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int32)
    order = np.random.permutation(n)
    head = 0
    tail = 0
    next_start = 0
    while weight0 < target0:
        if head == tail:
            while next_start < n and (visited[order[next_start]] or fixed_side[order[next_start]] >= 0):
                next_start += 1
            if next_start == n:
                break
            queue[tail] = order[next_start]
            visited[order[next_start]] = True
            tail += 1
        v = queue[head]
        head += 1
        if fixed_side[v] < 0 and partition[v] == 1:
            partition[v] = 0
            weight0 += vertex_weights[v]
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            if scanned[e]:  # its pins were all queued when it was first scanned
                continue
            scanned[e] = True
            for p in range(net_offsets[e], net_offsets[e + 1]):
                u = pin_vertices[p]
                if not visited[u] and fixed_side[u] < 0:
                    visited[u] = True
                    queue[tail] = u
                    tail += 1
    return partition


@numba.njit(cache=True, nogil=True)
def _key_scale(net_weights, vertex_offsets, incident_nets):
    """n when gain * n + n cannot overflow int64 (a gain is at most the weight of the vertex's nets), so
    heap keys gain * n + (n - 1 - v) order by gain, then by the smaller id: a total order, with which the
    growth does not depend on the order of heap updates. Else 1 (keys are the gains)."""
    n = vertex_offsets.shape[0] - 1
    largest = np.int64(0)
    for v in range(n):
        degree_weight = np.int64(0)
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            degree_weight += net_weights[incident_nets[q]]
        largest = max(largest, degree_weight)
    return n if n > 1 and largest < (np.int64(1) << 62) // n - 1 else 1


@numba.njit(cache=True, inline="always")
def _heap_key(gain, v, n, scale):
    return gain * scale + (n - 1 - v if scale > 1 else 0)


@numba.njit(cache=True, nogil=True)
def greedy_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                     fixed_side, target0, seed, cut_objective, max_net=False):
    """Greedy hypergraph growing: move the vertex of the frontier (the free side-1 pins of nets that side 0
    has reached) with the best gain from side 1 to side 0, ties to the smaller id, until side 0 reaches its
    target weight; starts from a random vertex (and again after a component is used up).

    The gains of moving to side 0 are kept exact by FM's delta rule (:mod:`..refinement.fm2`): a move scans
    a net's pins only when the net is reached for the first time or its counts cross the thresholds that
    change a free side-1 pin's gain (Phi(e, 0) = 0, Phi(e, 1) = 2), so a growth costs O(pins), not a rescan of
    every neighbour's nets at every move. For k = 2, km1 and cut coincide (``cut_objective`` is not used).

    With ``max_net`` the gain is instead the weight of the vertex's nets that side 0 already holds (the
    max-net gain of greedy hypergraph growing in KaHyPar's initial partitioning, S. Schlag et al., "k-way
    Hypergraph Partitioning via n-Level Recursive Bisection", ALENEX 2016, which Mt-KaHyPar's portfolio runs
    beside the FM gain): growth follows the nets side 0 has entered, whatever it costs on side 1. A net adds
    its weight to its side-1 pins when side 0 first reaches it.
    """
    np.random.seed(seed)
    n = vertex_weights.shape[0]
    partition, weight0 = _start(fixed_side, vertex_weights)
    pin_counts = pin_counts_serial(net_offsets, pin_vertices, partition, np.int64(2))
    block_weights = np.zeros(2, dtype=np.int64)
    for v in range(n):
        block_weights[partition[v]] += vertex_weights[v]
    gains = np.zeros(n, dtype=np.int64)  # exact gain of moving each free side-1 vertex to side 0
    for v in range(n):
        if partition[v] == 1 and fixed_side[v] < 0:
            if max_net:
                for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
                    if pin_counts[2 * incident_nets[q]] > 0:
                        gains[v] += net_weights[incident_nets[q]]
            else:
                gains[v] = initial_gain(v, partition, net_offsets, vertex_offsets, incident_nets, net_weights,
                                        pin_counts)
    scale = _key_scale(net_weights, vertex_offsets, incident_nets)
    heap = np.empty(max(n, 1), dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    reached = np.zeros(net_offsets.shape[0] - 1, dtype=np.bool_)
    touched = np.empty(n, dtype=np.int64)        # vertices whose gain or frontier state the move changed
    touched_by = np.full(n, -1, dtype=np.int64)
    num_touched = 0
    order = np.random.permutation(n)
    next_start = 0
    while block_weights[0] < target0:
        if size[0] == 0:
            while next_start < n and (partition[order[next_start]] == 0 or fixed_side[order[next_start]] >= 0):
                next_start += 1
            if next_start == n:
                break
            v = order[next_start]
            heap_push_or_update(heap, keys, position, size, np.int64(v), _heap_key(gains[v], v, n, scale))
        v = heap_pop(heap, keys, position, size)
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            first_reach = not reached[e]
            reached[e] = True
            in_target = pin_counts[2 * e]
            in_source = pin_counts[2 * e + 1]
            counted = net_offsets[e + 1] - net_offsets[e] >= 2
            if not (first_reach or (counted and (in_target == 0 or in_source == 2))):
                continue
            delta = np.int64(0)   # the same for every other free pin of e, all of them on side 1
            if counted and in_target == 0:
                delta += net_weights[e]
            if counted and in_source == 2 and not max_net:  # the one left on side 1 would take e off that side
                delta += net_weights[e]
            for p in range(net_offsets[e], net_offsets[e + 1]):
                x = pin_vertices[p]
                if x == v or partition[x] != 1 or fixed_side[x] >= 0:
                    continue
                gains[x] += delta
                if (first_reach or delta != 0) and touched_by[x] != v:
                    touched_by[x] = v
                    touched[num_touched] = x
                    num_touched += 1
        for i in range(num_touched):  # one heap update per vertex and move
            x = touched[i]
            heap_push_or_update(heap, keys, position, size, np.int64(x), _heap_key(gains[x], x, n, scale))
        num_touched = 0
        apply_move(np.int64(v), np.int64(0), partition, net_offsets, vertex_offsets, incident_nets, vertex_weights,
                   pin_counts, block_weights, np.int64(2))
    return partition


@numba.njit(cache=True, inline="always")
def _assign(v, side, partition, weights, assigned, vertex_offsets, incident_nets, vertex_weights):
    partition[v] = side
    weights[side] += vertex_weights[v]
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        assigned[2 * incident_nets[q] + side] += 1


@numba.njit(cache=True, nogil=True)
def label_propagation_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                vertex_weights, fixed_side, target0, seed):
    """Two random seeds (plus fixed vertices) spread their side to unassigned neighbours by connectivity
    w(e) / (|e| - 1), while the side has room; leftovers go to the lighter side. A vertex's connectivity to
    a side is sum over its nets e of w(e) / (|e| - 1) times the pins of e assigned to that side, counted per
    net as vertices are assigned (O(degree) per rating, not O(pins of its nets))."""
    np.random.seed(seed)
    n = vertex_weights.shape[0]
    total = np.int64(0)
    for v in range(n):
        total += vertex_weights[v]
    targets = np.array([target0, total - target0], dtype=np.int64)
    partition = np.full(n, -1, dtype=np.int32)
    weights = np.zeros(2, dtype=np.int64)
    assigned = np.zeros(2 * (net_offsets.shape[0] - 1), dtype=np.int64)  # pins of net e on side b: [2e + b]
    for v in range(n):
        if fixed_side[v] >= 0:
            _assign(v, fixed_side[v], partition, weights, assigned, vertex_offsets, incident_nets, vertex_weights)
    order = np.random.permutation(n)
    side = 0
    for v in order:
        if side == 2:
            break
        if partition[v] < 0:
            _assign(v, side, partition, weights, assigned, vertex_offsets, incident_nets, vertex_weights)
            side += 1
    connection = np.zeros(2, dtype=np.float64)
    changed = True
    while changed:
        changed = False
        for v in order:
            if partition[v] >= 0:
                continue
            connection[0] = 0.0
            connection[1] = 0.0
            for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
                e = incident_nets[q]
                size = net_offsets[e + 1] - net_offsets[e]
                if size < 2:
                    continue
                share = net_weights[e] / (size - 1.0)
                connection[0] += share * assigned[2 * e]
                connection[1] += share * assigned[2 * e + 1]
            best = -1
            if connection[0] > 0.0 or connection[1] > 0.0:
                best = 0 if connection[0] >= connection[1] else 1
                if weights[best] + vertex_weights[v] > targets[best]:
                    best = 1 - best if weights[1 - best] + vertex_weights[v] <= targets[1 - best] else -1
            if best >= 0:
                _assign(v, best, partition, weights, assigned, vertex_offsets, incident_nets, vertex_weights)
                changed = True
    for v in order:
        if partition[v] < 0:
            lighter = 0 if weights[0] * targets[1] <= weights[1] * targets[0] else 1
            partition[v] = lighter
            weights[lighter] += vertex_weights[v]
    return partition
