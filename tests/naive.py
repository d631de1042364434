"""Slow, obviously correct oracles that share no code with hgpart."""

from __future__ import annotations

import gzip
import itertools


def open_text(path):
    return gzip.open(path, "rt") if str(path).endswith(".gz") else open(path)


def read_hgr_naive(path):
    """(num_vertices, nets as sorted 0-based pin tuples, net_weights, vertex_weights) by plain Python."""
    with open_text(path) as handle:
        lines = [line.split() for line in handle if line.strip() and not line.lstrip().startswith("%")]
    header = [int(x) for x in lines[0]]
    m, n = header[0], header[1]
    fmt = header[2] if len(header) > 2 else 0
    nets, net_weights = [], []
    for line in lines[1:1 + m]:
        values = [int(x) for x in line]
        if fmt in (1, 11):
            net_weights.append(values[0])
            values = values[1:]
        else:
            net_weights.append(1)
        nets.append(tuple(sorted({v - 1 for v in values})))
    vertex_weights = [int(line[0]) for line in lines[1 + m:1 + m + n]] if fmt in (10, 11) else [1] * n
    return n, nets, net_weights, vertex_weights


def metrics_naive(nets, net_weights, vertex_weights, partition, k):
    km1 = cut = soed = 0
    for pins, weight in zip(nets, net_weights):
        blocks = {partition[v] for v in pins}
        if len(pins) >= 2 and len(blocks) > 1:
            cut += weight
            km1 += weight * (len(blocks) - 1)
            soed += weight * len(blocks)
    weights = [0] * k
    for v, b in enumerate(partition):
        weights[b] += vertex_weights[v]
    return {"km1": km1, "cut": cut, "soed": soed, "block_weights": weights}


def best_partition_naive(num_vertices, nets, net_weights, vertex_weights, k, epsilon, objective="km1"):
    """Exhaustive optimum over all balanced k-way partitions (tiny inputs only); None if none is balanced."""
    total = sum(vertex_weights)
    limit = int((1 + epsilon) * -(-total // k) + 1e-9)
    best = None
    for assignment in itertools.product(range(k), repeat=num_vertices - 1):
        partition = (0,) + assignment  # symmetry: vertex 0 in block 0
        result = metrics_naive(nets, net_weights, vertex_weights, partition, k)
        if max(result["block_weights"]) > limit:
            continue
        if best is None or result[objective] < best:
            best = result[objective]
    return best


def greedy_growing_naive(num_vertices, nets, net_weights, vertex_weights, fixed_side, target0, order, max_net=False):
    """Greedy hypergraph growing by its definition: side 0 starts with the vertices fixed there; while it
    weighs less than target0, move to it the frontier vertex (a free side-1 pin of a net of a moved vertex)
    of the largest gain, ties to the smaller id; an empty frontier takes the next free side-1 vertex of
    ``order``. Gains are recomputed from scratch: sum over nets e of v with |e| >= 2 of
    w(e) ([e has no other pin on side 1] - [e has no pin on side 0]); with ``max_net``, of w(e) [e has a pin
    on side 0]."""
    side = [0 if fixed == 0 else 1 for fixed in fixed_side]
    weight0 = sum(w for v, w in enumerate(vertex_weights) if side[v] == 0)
    nets_of = [[] for _ in range(num_vertices)]
    for e, pins in enumerate(nets):
        for v in pins:
            nets_of[v].append(e)

    def gain(v):
        total = 0
        for e in nets_of[v]:
            pins = nets[e]
            if len(pins) < 2:
                continue
            on_one = sum(1 for u in pins if side[u] == 1)
            on_zero = len(pins) - on_one
            if max_net:
                total += net_weights[e] * (on_zero > 0)
            else:
                total += net_weights[e] * ((on_one == 1) - (on_zero == 0))
        return total

    frontier, next_start = set(), 0
    while weight0 < target0:
        if not frontier:
            while next_start < num_vertices and (side[order[next_start]] == 0 or fixed_side[order[next_start]] >= 0):
                next_start += 1
            if next_start == num_vertices:
                break
            frontier.add(int(order[next_start]))
        v = max(frontier, key=lambda u: (gain(u), -u))
        frontier.remove(v)
        side[v] = 0
        weight0 += vertex_weights[v]
        for e in nets_of[v]:
            frontier.update(u for u in nets[e] if side[u] == 1 and fixed_side[u] < 0)
    return side


def label_propagation_bisection_naive(num_vertices, nets, net_weights, vertex_weights, fixed_side, target0, order):
    """Label propagation bisection by its definition: fixed vertices, then the first two free vertices of
    ``order`` seed sides 0 and 1; sweeps in ``order`` give each unassigned vertex the side it is more
    connected to (sum over its nets e, by increasing id, with |e| >= 2 of w(e) / (|e| - 1) times the pins of
    e on that side; ties to side 0) if that side has room, else the other side if it has room, until a sweep
    assigns nothing; the rest go to the lighter side relative to its target."""
    total = sum(vertex_weights)
    targets = [target0, total - target0]
    side = [int(fixed) if fixed >= 0 else -1 for fixed in fixed_side]
    weights = [sum(w for v, w in enumerate(vertex_weights) if side[v] == b) for b in (0, 1)]
    nets_of = [[] for _ in range(num_vertices)]
    for e, pins in enumerate(nets):
        for v in pins:
            nets_of[v].append(e)
    for seed_side, v in zip((0, 1), [u for u in order if side[u] < 0]):
        side[v] = seed_side
        weights[seed_side] += vertex_weights[v]
    sweep_assigned = True
    while sweep_assigned:
        sweep_assigned = False
        for v in (u for u in order if side[u] < 0):
            connection = [0.0, 0.0]
            for e in nets_of[v]:
                pins = nets[e]
                if len(pins) < 2:
                    continue
                share = net_weights[e] / (len(pins) - 1.0)
                for b in (0, 1):
                    connection[b] += share * sum(1 for u in pins if side[u] == b)
            preferred = (0, 1) if connection[0] >= connection[1] else (1, 0)
            with_room = [b for b in preferred if weights[b] + vertex_weights[v] <= targets[b]]
            if max(connection) > 0.0 and with_room:
                side[v] = with_room[0]
                weights[with_room[0]] += vertex_weights[v]
                sweep_assigned = True
    for v in (u for u in order if side[u] < 0):
        side[v] = min((0, 1), key=lambda b: weights[b] * targets[1 - b])  # lighter relative to its target
        weights[side[v]] += vertex_weights[v]
    return side


def read_metis_naive(path):
    """Set of undirected edges (u < v, 0-based) -> weight, and n."""
    with open_text(path) as handle:
        lines = [line for line in handle if not line.lstrip().startswith("%")]
    while not lines[0].strip():
        lines.pop(0)
    header = [int(x) for x in lines[0].split()]
    n = header[0]
    fmt = f"{header[2]:03d}" if len(header) > 2 else "000"
    edges = {}
    for u, line in enumerate(lines[1:1 + n]):
        values = [int(x) for x in line.split()]
        skip = (fmt[0] == "1") + (fmt[1] == "1")
        values = values[skip:]
        step = 2 if fmt[2] == "1" else 1
        for i in range(0, len(values), step):
            v = values[i] - 1
            w = values[i + 1] if step == 2 else 1
            edges[(min(u, v), max(u, v))] = w
    return n, edges


def read_dimacs_naive(path):
    """n and {(u, v): lightest weight} over arcs, undirected, 0-based, self loops dropped."""
    edges, n = {}, 0
    with open_text(path) as handle:
        for line in handle:
            words = line.split()
            if not words or words[0] == "c":
                continue
            if words[0] == "p":
                n = int(words[2])
            elif words[0] == "a":
                u, v, w = int(words[1]) - 1, int(words[2]) - 1, float(words[3])
                if u != v:
                    key = (min(u, v), max(u, v))
                    edges[key] = min(edges.get(key, w), w)
    return n, edges


def pair_fm_pass_naive(nets, net_weights, vertex_weights, blocks, a, b, movable, bounds, fruitless_limit):
    """One 2-way FM pass between blocks a and b, every gain recounted from the nets: a vertex of a or b
    may move when it has a net with a pin in the other block, or once a move changed what one of its nets
    adds to its gain. The best vertex of each side (gain, then smaller id) is the candidate; the side whose
    candidate fits (the better gain; ties out of the heavier block) moves. Rolls back to the best prefix.
    Returns (gain kept, blocks after)."""
    blocks = list(blocks)
    incident = [[] for _ in blocks]
    for e, pins in enumerate(nets):
        if len(pins) >= 2:
            for v in pins:
                incident[v].append(e)
    weights = {a: sum(w for v, w in enumerate(vertex_weights) if blocks[v] == a),
               b: sum(w for v, w in enumerate(vertex_weights) if blocks[v] == b)}

    def share(e, x):  # what net e adds to x's gain of moving to the other block of the pair
        own = blocks[x]
        other = b if own == a else a
        in_own = sum(1 for u in nets[e] if blocks[u] == own)
        in_other = sum(1 for u in nets[e] if blocks[u] == other)
        return net_weights[e] * ((in_own == 1) - (in_other == 0))

    def gain(x):
        return sum(share(e, x) for e in incident[x])

    free = {v for v in range(len(blocks)) if blocks[v] in (a, b) and movable[v]}
    eligible = {v for v in free if any(any(blocks[u] == (b if blocks[v] == a else a) for u in nets[e])
                                       for e in incident[v])}
    moves, total, best_total, best_moves, since_best = [], 0, 0, 0, 0
    while True:
        tops = {}
        for side in (a, b):
            candidates = [v for v in eligible if blocks[v] == side]
            if candidates:
                tops[side] = max(candidates, key=lambda v: (gain(v), -v))
        fits = {side: v for side, v in tops.items()
                if weights[b if side == a else a] + vertex_weights[v] <= bounds[b if side == a else a]}
        if not fits:
            break
        side = a if a in fits else b
        if a in fits and b in fits:
            gain_a, gain_b = gain(fits[a]), gain(fits[b])
            if gain_b > gain_a or (gain_b == gain_a and weights[b] > weights[a]):
                side = b
        v = fits[side]
        target = b if side == a else a
        total += gain(v)
        shares = {(e, x): share(e, x) for e in incident[v] for x in nets[e] if x in free and x != v}
        blocks[v] = target
        weights[side] -= vertex_weights[v]
        weights[target] += vertex_weights[v]
        free.discard(v)
        eligible.discard(v)
        eligible.update(x for (e, x), before in shares.items() if x in free and share(e, x) != before)
        moves.append((v, side))
        if total > best_total:
            best_total, best_moves, since_best = total, len(moves), 0
        else:
            since_best += 1
        if since_best >= fruitless_limit:
            break
    for v, side in moves[best_moves:]:
        blocks[v] = side
    return best_total, blocks
