"""Maximum flows and minimum cuts (numba): the algorithm of Y. Boykov and V. Kolmogorov, "An experimental
comparison of min-cut/max-flow algorithms for energy minimization in vision", IEEE TPAMI 26(9), 2004, on a
residual graph in CSR form.

Two search trees grow over arcs with residual capacity, one from the source and one (backwards) from the sink,
breadth first from their active nodes. Where they touch, the path through both trees is augmented by its
bottleneck; the nodes below its saturated arcs are orphans, each adopted by a neighbour of its tree that still
leads to the tree's terminal, or else freed, its neighbours made active again. The trees are kept between
augmentations, so the many short augmenting paths of the flow refiner's region networks (thousands per
network, a few arcs long) each cost a little growth and adoption instead of a search from scratch; the flow is
maximum once neither tree can grow. Each tree node keeps a distance to its terminal, checked at the
augmentation where it was last set (Boykov and Kolmogorov's timestamps): an adoption prefers the neighbour
closest to the terminal and stops its walk up the tree at a node checked since the last augmentation.

The trees stall on networks whose terminal arcs saturate one by one, each saturation cutting a large subtree
off its root to be freed and grown again. Past a budget of arc scans, shortest augmenting paths with
distance labels (R. K. Ahuja and J. B. Orlin, "Distance-directed augmenting path algorithms for maximum flow
and parametric maximum flow problems", Naval Research Logistics 38, 1991) finish from the flow the trees
found. On the flow refiner's networks the two together take 0.8x the time of the distance labels alone, and
0.25-0.4x on several (docs/tuning.md, "Settled pairs; maximum flows by search trees, then distance labels").

Whatever maximum flow an algorithm finds, the nodes the source reaches in its residual graph (and those that
reach the sink) are the same: the minimum cut closest to the source (and to the sink) is unique. The flow
refiner (:mod:`.flows`) builds one small network per region of a cut, so everything here works on
preallocated arrays.
"""

from __future__ import annotations

import numba
import numpy as np

INFINITE = np.int64(1) << np.int64(60)  # the capacity of arcs that a minimum cut never cuts
TERMINAL, ORPHAN, NONE = -2, -3, -1  # parent arcs that are none: a root, an orphan, a free node
FREE, SOURCE_TREE, SINK_TREE = 0, 1, 2
SEARCH_TREE_WORK = 8  # arc scans per arc before the search trees hand over (docs/tuning.md, as above)


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
def _augment_by_distance_labels(offsets, targets, residual, reverse, source, sink, limit):
    """Augment the flow that ``residual`` holds to a maximum one by shortest augmenting paths with distance
    labels (Ahuja and Orlin 1991), or until it has added ``limit``; returns the amount added. Every node keeps a distance label, a lower bound on
    its residual distance to the sink (exact at the start, by one breadth-first search from the sink); an arc
    u -> v is admissible when it has residual capacity and d(u) = d(v) + 1. The search advances from the source
    along admissible arcs (each node remembers its current arc), augments on reaching the sink and retreats to
    the tail of the first saturated arc; a node without an admissible arc is relabelled to one more than its
    least labelled residual neighbour. When a label loses its last node (a gap), the nodes above it, the source
    among them, no longer reach the sink and the flow is maximum.

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
            if total >= limit:
                break
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
            for w in range(n):  # element by element: a slice copy makes numba compile its shape check's message
                current[w] = offsets[w]
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
def _augment_by_search_trees(offsets, targets, residual, reverse, source, sink, budget, limit):
    """Augment the flow that ``residual`` holds by the search trees of Boykov and Kolmogorov (2004) until it is
    maximum, it has added ``limit`` or the arcs scanned pass ``budget``; returns (the amount added, whether the
    flow is maximum or at the limit).

    A tree node's ``parent`` is the arc of its own list that leads to its parent (TERMINAL for the two roots,
    ORPHAN while it has none); ``stamp`` is the augmentation at which its ``distance`` to the terminal was last
    known to hold. Active nodes and orphans wait in circular first-in, first-out queues of n + 1 slots (a node
    is in each at most once at a time). One function: split into calls, the same steps ran 1.3x slower. The
    budget is checked after each adoption, where the flow is whole."""
    n = offsets.shape[0] - 1
    tree = np.zeros(n, dtype=np.int8)
    parent = np.full(n, NONE, dtype=np.int64)
    stamp = np.zeros(n, dtype=np.int64)
    distance = np.zeros(n, dtype=np.int64)
    queued = np.zeros(n, dtype=np.bool_)
    size = n + 1
    active = np.empty(size, dtype=np.int64)
    orphans = np.empty(size, dtype=np.int64)
    tree[source], tree[sink] = SOURCE_TREE, SINK_TREE
    parent[source], parent[sink] = TERMINAL, TERMINAL
    stamp[source], stamp[sink] = 1, 1
    active[0], active[1] = source, sink
    queued[source], queued[sink] = True, True
    head, tail = 0, 2
    time = 1
    total = 0
    scanned = 0  # arcs scanned, the work the budget bounds
    current, resume = -1, 0  # the node whose scan found the last path, and its arc: the scan goes on there
    while True:
        # growth: from the active nodes until the trees touch at an arc (tail in the source's tree)
        connection = -1
        while True:
            if current >= 0 and tree[current] != FREE:
                p, start = current, resume
            else:
                current = -1
                if head == tail:
                    break
                p = active[head]
                head = head + 1 if head + 1 < size else 0
                queued[p] = False
                if tree[p] == FREE:
                    continue
                start = offsets[p]
            side = tree[p]
            scanned += offsets[p + 1] - start
            for arc in range(start, offsets[p + 1]):  # out of the source's tree, into the sink's
                room = residual[arc] if side == SOURCE_TREE else residual[reverse[arc]]
                if room <= 0:
                    continue
                q = targets[arc]
                if tree[q] == FREE:
                    tree[q] = side
                    parent[q] = reverse[arc]
                    stamp[q] = stamp[p]
                    distance[q] = distance[p] + 1
                    if not queued[q]:
                        queued[q] = True
                        active[tail] = q
                        tail = tail + 1 if tail + 1 < size else 0
                elif tree[q] != side:
                    connection = arc if side == SOURCE_TREE else reverse[arc]
                    resume = arc
                    break
                elif stamp[q] <= stamp[p] and distance[q] > distance[p]:  # a shorter way to q's terminal
                    parent[q] = reverse[arc]
                    stamp[q] = stamp[p]
                    distance[q] = distance[p] + 1
            if connection >= 0:
                current = p
                break
            current = -1
        if connection < 0:
            return total, True  # neither tree can grow: no augmenting path is left
        # augmentation by the path's bottleneck; the nodes below its saturated tree arcs become orphans
        time += 1
        x, y = targets[reverse[connection]], targets[connection]
        amount = residual[connection]
        v = x
        while parent[v] != TERMINAL:  # the source's tree: the flow runs parent -> node, the parent arc's reverse
            amount = min(amount, residual[reverse[parent[v]]])
            v = targets[parent[v]]
        v = y
        while parent[v] != TERMINAL:  # the sink's tree: along the parent arc
            amount = min(amount, residual[parent[v]])
            v = targets[parent[v]]
        residual[connection] -= amount
        residual[reverse[connection]] += amount
        first, last = 0, 0  # the orphans' queue
        v = x
        while parent[v] != TERMINAL:
            up = parent[v]
            residual[reverse[up]] -= amount
            residual[up] += amount
            if residual[reverse[up]] == 0:
                parent[v] = ORPHAN
                orphans[last] = v
                last += 1
            v = targets[up]
        v = y
        while parent[v] != TERMINAL:
            up = parent[v]
            residual[up] -= amount
            residual[reverse[up]] += amount
            if residual[up] == 0:
                parent[v] = ORPHAN
                orphans[last] = v
                last += 1
            v = targets[up]
        total += amount
        if total >= limit:
            return total, True
        # adoption: an orphan takes the neighbour of its tree closest to the terminal, or is freed
        while first != last:
            v = orphans[first]
            first = first + 1 if first + 1 < size else 0
            side = tree[v]
            scanned += 2 * (offsets[v + 1] - offsets[v])
            best, best_distance = -1, np.int64(0)
            for arc in range(offsets[v], offsets[v + 1]):  # a parent q needs room q -> v (source's), v -> q (sink's)
                room = residual[reverse[arc]] if side == SOURCE_TREE else residual[arc]
                q = targets[arc]
                if room <= 0 or tree[q] != side:
                    continue
                d = 0  # q's distance to the terminal, its way up ending at the root or a node checked now
                j = q
                valid = True
                while stamp[j] != time:
                    up = parent[j]
                    if up == TERMINAL:
                        stamp[j], distance[j] = time, 0
                        break
                    if up < 0:  # an orphan above q
                        valid = False
                        break
                    d += 1
                    j = targets[up]
                if not valid:
                    continue
                d += distance[j]
                if best < 0 or d < best_distance:
                    best, best_distance = arc, d
                j = q
                left = d
                while stamp[j] != time:  # the nodes on the way are checked now
                    stamp[j], distance[j] = time, left
                    left -= 1
                    j = targets[parent[j]]
            if best >= 0:
                parent[v] = best
                stamp[v], distance[v] = time, best_distance + 1
                continue
            for arc in range(offsets[v], offsets[v + 1]):
                q = targets[arc]
                if tree[q] != side:
                    continue
                room = residual[reverse[arc]] if side == SOURCE_TREE else residual[arc]
                if room > 0 and not queued[q]:  # q may grow into v again
                    queued[q] = True
                    active[tail] = q
                    tail = tail + 1 if tail + 1 < size else 0
                if parent[q] >= 0 and targets[parent[q]] == v:  # v's children
                    parent[q] = ORPHAN
                    orphans[last] = q
                    last = last + 1 if last + 1 < size else 0
            tree[v] = FREE
            parent[v] = NONE
        if scanned > budget:
            return total, False


@numba.njit(cache=True, nogil=True)
def max_flow(offsets, targets, residual, reverse, source, sink, work_per_arc=SEARCH_TREE_WORK, limit=INFINITE):
    """The value of a maximum source-sink flow, or at least ``limit`` where the maximum reaches it;
    ``residual`` (int64[arcs]) is updated in place to the residual capacities of that flow, a maximum one
    only where the value returned is below ``limit``. Every source-sink path must cross an arc of finite
    capacity.

    The search trees first (:func:`_augment_by_search_trees`), for at most ``work_per_arc`` arc scans per arc;
    where they need more (networks whose terminal arcs saturate one by one, each cutting off a large subtree to
    rebuild), shortest augmenting paths (:func:`_augment_by_distance_labels`) finish from the flow found.
    The flow refiner passes the weight of the cut it has as ``limit``: a flow that reaches it proves that the
    region holds no smaller cut, without the last searches that would show the flow maximal."""
    budget = work_per_arc * targets.shape[0]
    total, finished = _augment_by_search_trees(offsets, targets, residual, reverse, source, sink, budget, limit)
    if not finished:
        total += _augment_by_distance_labels(offsets, targets, residual, reverse, source, sink, limit - total)
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
