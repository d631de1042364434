"""Maximum flows and minimum cuts (numba): shortest augmenting paths with distance labels, on a residual graph
in CSR form.

R. K. Ahuja and J. B. Orlin, "Distance-directed augmenting path algorithms for maximum flow and parametric
maximum flow problems", Naval Research Logistics 38, 1991. Every node keeps a distance label, a lower bound on
its residual distance to the sink (exact at the start, by one breadth-first search from the sink); an arc
u -> v is admissible when it has residual capacity and d(u) = d(v) + 1. The search advances from the source
along admissible arcs (each node remembers its current arc), augments on reaching the sink and retreats to
the tail of the first saturated arc; a node without an admissible arc is relabelled to one more than its
least labelled residual neighbour. When a label loses its last node (a gap), the nodes above it, the source
among them, no longer reach the sink and the flow is maximum. Dinic's algorithm, which this replaced,
recomputes every distance by a breadth-first search per phase; on the flow refiner's region networks the
labels, with a global relabelling now and then, find the same cuts much sooner (docs/tuning.md, "Maximum
flows by distance labels").

Whatever maximum flow an algorithm finds, the nodes the source reaches in its residual graph (and those that
reach the sink) are the same: the minimum cut closest to the source (and to the sink) is unique. The flow
refiner (:mod:`.flows`) builds one small network per region of a cut, so everything here works on
preallocated arrays.
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
def _exact_labels(offsets, targets, residual, reverse, sink, label, count, queue):
    """Every node's residual distance to the sink into ``label`` (n where it cannot reach it), and the number
    of nodes per label into ``count`` (int64[n + 1])."""
    n = label.shape[0]
    _distances(offsets, targets, residual, reverse, sink, np.bool_(True), label, queue)
    count[:] = 0
    for v in range(n):
        if label[v] < 0:
            label[v] = n
        count[label[v]] += 1


@numba.njit(cache=True, nogil=True)
def max_flow(offsets, targets, residual, reverse, source, sink):
    """The value of a maximum source-sink flow; ``residual`` (int64[arcs]) is updated in place to the residual
    capacities of that flow. Every source-sink path must cross an arc of finite capacity.

    After every n / 2 relabels the labels are recomputed exactly (a global relabelling, as push-relabel codes
    do): relabels alone let them drift far below the true distances, and the search then wanders."""
    n = offsets.shape[0] - 1
    label = np.empty(n, dtype=np.int64)
    count = np.empty(n + 1, dtype=np.int64)  # nodes per label; n: cannot reach the sink
    queue = np.empty(n, dtype=np.int64)
    _exact_labels(offsets, targets, residual, reverse, np.int64(sink), label, count, queue)
    current = offsets[:-1].copy()
    path = np.empty(n, dtype=np.int64)
    depth = 0
    total = 0
    relabels = 0
    u = source
    while label[source] < n:
        if u == sink:  # augment by the bottleneck, then retreat to the first saturated arc's tail
            first = 0
            amount = residual[path[0]]
            for i in range(1, depth):
                if residual[path[i]] < amount:
                    amount = residual[path[i]]
                    first = i
            for i in range(depth):
                residual[path[i]] -= amount
                residual[reverse[path[i]]] += amount
            total += amount
            depth = first
            u = targets[reverse[path[first]]]
            continue
        arc = current[u]
        while arc < offsets[u + 1] and not (residual[arc] > 0 and label[u] == label[targets[arc]] + 1):
            arc += 1
        current[u] = arc
        if arc < offsets[u + 1]:  # advance
            path[depth] = arc
            depth += 1
            u = targets[arc]
            continue
        relabels += 1
        if relabels >= n // 2:  # global relabelling; the search starts again from the source
            relabels = 0
            _exact_labels(offsets, targets, residual, reverse, np.int64(sink), label, count, queue)
            current[:] = offsets[:-1]
            depth = 0
            u = source
            continue
        lowest = n - 1  # relabel: one more than the least labelled residual neighbour
        for a in range(offsets[u], offsets[u + 1]):
            if residual[a] > 0 and label[targets[a]] < lowest:
                lowest = label[targets[a]]
        count[label[u]] -= 1
        if count[label[u]] == 0:
            break  # a gap: nodes above this label, the source among them, no longer reach the sink
        label[u] = lowest + 1
        count[label[u]] += 1
        current[u] = offsets[u]
        if u != source:  # retreat
            depth -= 1
            u = targets[reverse[path[depth]]]
    return total


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


@numba.njit(cache=True, nogil=True)
def minimum_cut_ranks(offsets, targets, residual, reverse, source, sink):
    """A chain of minimum cuts from the one closest to the source to the one closest to the sink, after
    :func:`max_flow` (J.-C. Picard and M. Queyranne, "On the structure of all minimum cuts in a network and
    applications", Math. Programming Study 13, 1980; the most balanced minimum cut of KaHyPar-MF).

    A node set that holds the source, not the sink, and that no arc with residual capacity leaves is the
    source side of a minimum cut. The nodes neither reached from the source nor reaching the sink form
    strongly connected components over the residual arcs; Tarjan's algorithm finishes each component after
    every component it reaches, so the source's side plus the first j finished components is such a set
    for every j.

    Returns
    -------
    rank : int64[n]
        0 for the nodes the source reaches, 1..count for the components in the order they finish, count + 1
        for the nodes that reach the sink: cut j (0 <= j <= count) has ``rank <= j`` on the source side.
    count : int
        The number of components between the two sides.
    """
    n = offsets.shape[0] - 1
    reached = source_side(offsets, targets, residual, reverse, source)
    reaching = sink_side(offsets, targets, residual, reverse, sink)
    rank = np.zeros(n, dtype=np.int64)
    index = np.full(n, -1, dtype=np.int64)
    low = np.empty(n, dtype=np.int64)
    on_stack = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n, dtype=np.int64)  # Tarjan's stack of visited nodes
    calls = np.empty(n, dtype=np.int64)  # the depth-first search's path, and each node's next arc
    next_arc = np.empty(n, dtype=np.int64)
    visited = 0
    stacked = 0
    count = 0
    for root in range(n):
        if reached[root] or reaching[root] or index[root] >= 0:
            continue
        depth = -1
        w = root  # the node to visit next, -1 none
        while True:
            if w >= 0:
                index[w] = low[w] = visited
                visited += 1
                stack[stacked] = w
                stacked += 1
                on_stack[w] = True
                next_arc[w] = offsets[w]
                depth += 1
                calls[depth] = w
                w = -1
            if depth < 0:
                break
            v = calls[depth]
            while next_arc[v] < offsets[v + 1]:
                arc = next_arc[v]
                next_arc[v] += 1
                u = targets[arc]
                if residual[arc] <= 0 or reached[u] or reaching[u]:
                    continue
                if index[u] < 0:
                    w = u  # descend
                    break
                if on_stack[u]:
                    low[v] = min(low[v], index[u])
            if w >= 0:
                continue
            if low[v] == index[v]:  # v roots a component: every component it reaches has finished
                count += 1
                while True:
                    stacked -= 1
                    u = stack[stacked]
                    on_stack[u] = False
                    rank[u] = count
                    if u == v:
                        break
            depth -= 1
            if depth >= 0:
                parent = calls[depth]
                low[parent] = min(low[parent], low[v])
    for v in range(n):
        if reaching[v]:
            rank[v] = count + 1
    return rank, count
