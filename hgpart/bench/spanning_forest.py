"""``hgpart bench mst``: minimum spanning forests on the GPU, the njit CPU twin and scipy, in one run.

For each graph: seconds per device (medians) from the file, from a host graph (its edge list made and
uploaded) and with the edges already on the device (the sort by weight and the Borůvka loop;
:func:`hgpart.bench.end_to_end`), edges per second of each, scipy's ``minimum_spanning_tree`` seconds from the
host graph's matrix, speed-ups over scipy (from the host graph), and whether the total weights and the forests
agree.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from .. import generate
from . import auto_choice, end_to_end, log_row, read_instance, read_seconds
from ..graphs.spanning_forest import minimum_spanning_forest
from ..hypergraph import Graph


def grid_graph(side: int, seed: int = 0) -> Graph:
    """A side x side 2-D grid with uniform random weights in [0, 1)."""
    ids = np.arange(side * side, dtype=np.int64).reshape(side, side)
    sources = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    targets = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    weights = np.random.default_rng(seed).random(sources.shape[0])
    return Graph.from_edges(side * side, sources, targets, weights, merge="min")


def instance(spec) -> tuple[str, Graph, float]:
    """("file", path) or a generated class: ("gnm", n, m), ("rmat", n, edge factor), ("grid", side); (name,
    graph, seconds to read it from its file; a generated one's from a file of it, see
    :func:`hgpart.bench.read_seconds`)."""
    kind = spec[0]
    if kind == "file":
        return read_instance(spec[1], "min")
    if kind == "gnm":
        num_vertices, sources, targets, weights = generate.gnm(spec[1], seed=1, m=spec[2], weights="float")
        name, graph = f"gnm {spec[1]:,} / {spec[2]:,}", Graph.from_edges(num_vertices, sources, targets, weights,
                                                                          merge="min")
    elif kind == "rmat":
        num_vertices, sources, targets, weights = generate.rmat(spec[1], seed=1, edge_factor=spec[2],
                                                                weights="float")
        name, graph = f"rmat {num_vertices:,}", Graph.from_edges(num_vertices, sources, targets, weights, merge="min")
    elif kind == "grid":
        name, graph = f"grid {spec[1]} x {spec[1]}", grid_graph(spec[1], seed=1)
    else:
        raise ValueError(kind)
    return name, graph, read_seconds(graph, "min")


def run_mst_bench(specs, devices, repeat: int = 1, scipy_peer: bool = True, reporter=None) -> list[dict]:
    rows = []
    for spec in specs:
        name, graph, read = instance(spec)
        row = {"instance": name, "vertices": graph.num_vertices, "edges": graph.num_edges, "read s": read}
        forests = {}
        for device in devices:
            runs = [minimum_spanning_forest(graph, device) for _ in range(repeat)]
            forests[device] = runs[-1]
            end_to_end(row, device, statistics.median(r.seconds["boruvka"] for r in runs),
                       statistics.median(r.seconds["total"] for r in runs))
        auto_choice(row, "mst")
        first = forests[devices[0]]
        row["total weight"] = first.total_weight
        row["components"] = first.num_components
        row["iterations"] = first.iterations
        if len(devices) > 1:
            row["devices agree"] = all(np.array_equal(first.sources, other.sources) and
                                       np.array_equal(first.targets, other.targets) for other in forests.values())
        if scipy_peer:
            from scipy.sparse.csgraph import minimum_spanning_tree

            matrix = graph.to_sparse()
            times = []
            for _ in range(repeat):
                started = time.perf_counter()
                tree = minimum_spanning_tree(matrix)
                times.append(time.perf_counter() - started)
            row["scipy s"] = statistics.median(times)
            row["scipy weight agrees"] = bool(np.isclose(float(tree.sum()), first.total_weight, rtol=1e-9, atol=0))
            for device in devices:
                row[f"{device} vs scipy"] = row["scipy s"] / max(row[f"{device} host s"], 1e-9)
        log_row(reporter, name, row)
        rows.append(row)
    return rows
