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
