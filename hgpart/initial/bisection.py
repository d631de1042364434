"""Flat bipartitioning algorithms for the coarsest hypergraph (numba): random, BFS, greedy hypergraph
growing and label propagation. Each returns int32[n] with sides 0/1 that respects ``fixed_side``
(-1 free) and tries to put ``target0`` weight on side 0; FM and the rebalancer do the rest."""

from __future__ import annotations

import numba
import numpy as np

from ..refinement.gains import apply_move, gains_to_blocks, pin_counts_serial
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
            for p in range(net_offsets[e], net_offsets[e + 1]):
                u = pin_vertices[p]
                if not visited[u] and fixed_side[u] < 0:
                    visited[u] = True
                    queue[tail] = u
                    tail += 1
    return partition


@numba.njit(cache=True, nogil=True)
def greedy_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                     fixed_side, target0, seed, cut_objective):
    """Greedy hypergraph growing: move the vertex with the best gain from side 1 to side 0 until side 0
    reaches its target weight; starts from a random vertex (and again after a component is used up)."""
    np.random.seed(seed)
    n = vertex_weights.shape[0]
    partition, weight0 = _start(fixed_side, vertex_weights)
    pin_counts = pin_counts_serial(net_offsets, pin_vertices, partition, 2)
    block_weights = np.zeros(2, dtype=np.int64)
    for v in range(n):
        block_weights[partition[v]] += vertex_weights[v]
    heap = np.empty(n, dtype=np.int64)
    keys = np.zeros(n, dtype=np.int64)
    position = np.full(n, -1, dtype=np.int64)
    size = np.zeros(1, dtype=np.int64)
    gain = np.zeros(2, dtype=np.int64)
    adjacent = np.zeros(2, dtype=np.bool_)
    order = np.random.permutation(n)
    updated = np.full(n, -1, dtype=np.int64)  # the move that last re-rated each vertex: once per move
    moves = 0
    next_start = 0
    while block_weights[0] < target0:
        if size[0] == 0:
            while next_start < n and (partition[order[next_start]] == 0 or fixed_side[order[next_start]] >= 0):
                next_start += 1
            if next_start == n:
                break
            heap_push_or_update(heap, keys, position, size, order[next_start], 0)
        v = heap_pop(heap, keys, position, size)
        if partition[v] == 0:
            continue
        apply_move(v, 0, partition, net_offsets, vertex_offsets, incident_nets, vertex_weights, pin_counts,
                   block_weights, 2)
        moves += 1
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[q]
            for p in range(net_offsets[e], net_offsets[e + 1]):
                u = pin_vertices[p]
                if partition[u] == 1 and fixed_side[u] < 0 and updated[u] != moves:
                    updated[u] = moves
                    common = gains_to_blocks(u, 1, net_offsets, vertex_offsets, incident_nets, net_weights,
                                             pin_counts, 2, cut_objective, gain, adjacent)
                    heap_push_or_update(heap, keys, position, size, u, common + gain[0])
                    gain[0] = 0
                    gain[1] = 0
                    adjacent[0] = False
                    adjacent[1] = False
    return partition


@numba.njit(cache=True, nogil=True)
def label_propagation_bisection(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                vertex_weights, fixed_side, target0, seed):
    """Two random seeds (plus fixed vertices) spread their side to unassigned neighbours by connectivity
    w(e) / (|e| - 1), while the side has room; leftovers go to the lighter side."""
    np.random.seed(seed)
    n = vertex_weights.shape[0]
    total = np.int64(0)
    for v in range(n):
        total += vertex_weights[v]
    targets = np.array([target0, total - target0], dtype=np.int64)
    partition = np.full(n, -1, dtype=np.int32)
    weights = np.zeros(2, dtype=np.int64)
    for v in range(n):
        if fixed_side[v] >= 0:
            partition[v] = fixed_side[v]
            weights[fixed_side[v]] += vertex_weights[v]
    order = np.random.permutation(n)
    side = 0
    for v in order:
        if side == 2:
            break
        if partition[v] < 0:
            partition[v] = side
            weights[side] += vertex_weights[v]
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
                for p in range(net_offsets[e], net_offsets[e + 1]):
                    b = partition[pin_vertices[p]]
                    if b >= 0:
                        connection[b] += share
            best = -1
            if connection[0] > 0.0 or connection[1] > 0.0:
                best = 0 if connection[0] >= connection[1] else 1
                if weights[best] + vertex_weights[v] > targets[best]:
                    best = 1 - best if weights[1 - best] + vertex_weights[v] <= targets[1 - best] else -1
            if best >= 0:
                partition[v] = best
                weights[best] += vertex_weights[v]
                changed = True
    for v in order:
        if partition[v] < 0:
            lighter = 0 if weights[0] * targets[1] <= weights[1] * targets[0] else 1
            partition[v] = lighter
            weights[lighter] += vertex_weights[v]
    return partition
