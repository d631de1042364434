"""Maximum flows and minimum cuts (numba): Dinic's algorithm on a residual graph in CSR form.

E. A. Dinic, "Algorithm for solution of a problem of maximum flow in a network with power estimation",
Soviet Math. Doklady 11, 1970. Each phase builds the level graph by a breadth-first search from the source
over arcs with residual capacity, then saturates it with a blocking flow found by iterative depth-first
search (dead ends are removed from the level graph for the rest of the phase). The flow refiner
(:mod:`.flows`) builds one small network per region of a cut, so everything here works on preallocated
arrays and allocates nothing per phase.
"""

from __future__ import annotations

import numba
import numpy as np

INFINITE = np.int64(1) << np.int64(60)  # the capacity of arcs that a minimum cut never cuts


@numba.njit(cache=True, nogil=True)
def residual_graph(num_nodes, tails, heads, capacities):
    """The residual graph of a flow network in CSR form: every arc of the network and its reverse arc (of
    residual capacity 0), each knowing the other's index.

    Parameters
    ----------
    num_nodes : int
    tails, heads : int64[a]
        The arcs, tail -> head.
    capacities : int64[a]

    Returns
    -------
    offsets : int64[num_nodes + 1]
        Node u's arcs are ``offsets[u]:offsets[u + 1]``.
    targets : int64[2a]
        Head of each residual arc.
    residual : int64[2a]
        Its residual capacity (the network's capacity for a forward arc, 0 for a reverse one).
    reverse : int64[2a]
        The index of its reverse arc.
    """
    arcs = tails.shape[0]
    offsets = np.zeros(num_nodes + 1, dtype=np.int64)
    for i in range(arcs):
        offsets[tails[i] + 1] += 1
        offsets[heads[i] + 1] += 1
    for u in range(num_nodes):
        offsets[u + 1] += offsets[u]
    fill = offsets[:-1].copy()
    targets = np.empty(2 * arcs, dtype=np.int64)
    residual = np.empty(2 * arcs, dtype=np.int64)
    reverse = np.empty(2 * arcs, dtype=np.int64)
    for i in range(arcs):
        forward = fill[tails[i]]
        fill[tails[i]] += 1
        backward = fill[heads[i]]
        fill[heads[i]] += 1
        targets[forward] = heads[i]
        residual[forward] = capacities[i]
        targets[backward] = tails[i]
        residual[backward] = 0
        reverse[forward] = backward
        reverse[backward] = forward
    return offsets, targets, residual, reverse


@numba.njit(cache=True, nogil=True)
def _distances(offsets, targets, residual, reverse, start, backward, level, queue):
    """Breadth-first distances from ``start`` over arcs with residual capacity into ``level`` (-1: not
    reached); ``backward``: distances to ``start``, over arcs whose reverse has residual capacity."""
    level[:] = -1
    level[start] = 0
    queue[0] = start
    head, tail = 0, 1
    while head < tail:
        u = queue[head]
        head += 1
        for arc in range(offsets[u], offsets[u + 1]):
            v = targets[arc]
            room = residual[reverse[arc]] if backward else residual[arc]  # backward: the arc v -> u
            if room > 0 and level[v] < 0:
                level[v] = level[u] + 1
                queue[tail] = v
                tail += 1


@numba.njit(cache=True, nogil=True)
def _blocking_flow(offsets, targets, residual, reverse, source, sink, level, next_arc, path):
    """A blocking flow of the level graph, pushed into ``residual``; returns its value."""
    total = 0
    next_arc[:] = offsets[:-1]
    while True:
        depth = 0
        u = source
        while u != sink:  # advance along the level graph; retreat from dead ends
            advanced = False
            while next_arc[u] < offsets[u + 1]:
                arc = next_arc[u]
                v = targets[arc]
                if residual[arc] > 0 and level[v] == level[u] + 1:
                    path[depth] = arc
                    depth += 1
                    u = v
                    advanced = True
                    break
                next_arc[u] += 1
            if not advanced:
                if depth == 0:
                    return total
                level[u] = -1  # a dead end: not entered again in this phase
                depth -= 1
                u = targets[reverse[path[depth]]]
                next_arc[u] += 1
        amount = residual[path[0]]
        for i in range(1, depth):
            amount = min(amount, residual[path[i]])
        for i in range(depth):
            residual[path[i]] -= amount
            residual[reverse[path[i]]] += amount
        total += amount


@numba.njit(cache=True, nogil=True)
def max_flow(offsets, targets, residual, reverse, source, sink):
    """The value of a maximum source-sink flow; ``residual`` (int64[arcs]) is updated in place to the residual
    capacities of that flow. Every source-sink path must cross an arc of finite capacity."""
    n = offsets.shape[0] - 1
    level = np.empty(n, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    next_arc = np.empty(n, dtype=np.int64)
    path = np.empty(n, dtype=np.int64)
    total = 0
    while True:
        # the level graph
        _distances(offsets, targets, residual, reverse, np.int64(source), np.bool_(False), level, queue)
        if level[sink] < 0:
            return total
        total += _blocking_flow(offsets, targets, residual, reverse, source, sink, level, next_arc, path)


@numba.njit(cache=True, nogil=True)
def _reachable(offsets, targets, residual, reverse, start, backward):
    n = offsets.shape[0] - 1
    level = np.empty(n, dtype=np.int64)
    _distances(offsets, targets, residual, reverse, start, backward, level, np.empty(n, dtype=np.int64))
    return level >= 0


@numba.njit(cache=True, nogil=True)
def source_side(offsets, targets, residual, reverse, source):
    """bool[n]: the nodes the source reaches over arcs with residual capacity; after :func:`max_flow`, the
    source side of the minimum cut closest to the source."""
    return _reachable(offsets, targets, residual, reverse, np.int64(source), np.bool_(False))


@numba.njit(cache=True, nogil=True)
def sink_side(offsets, targets, residual, reverse, sink):
    """bool[n]: the nodes that reach the sink over arcs with residual capacity; after :func:`max_flow`, the
    sink side of the minimum cut closest to the sink."""
    return _reachable(offsets, targets, residual, reverse, np.int64(sink), np.bool_(True))
