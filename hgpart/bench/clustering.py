"""``hgpart bench cluster``: modularity clustering on the GPU, its CPU twin and networkx's Louvain, side by side.

For each graph: modularity and median seconds of hgpart on each device (the devices must agree) from the file,
from a host graph and with the graph's level already on the device (:func:`hgpart.bench.end_to_end`), edges per
second of each, and networkx's Louvain (best modularity of its seeds, median seconds) where the graph is small
enough for it; the best known modularity where one is published (the table of Fagginger Auer and Bisseling, 2012).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import replace

import numpy as np

from . import auto_choice, end_to_end, graph_instance, log_row
from ..config import ClusterConfig
from ..graphs.clustering import cluster
from ..graphs.modularity import modularity
from ..hypergraph import Graph

CLUSTER_GRAPHS = ["karate.graph", "jazz.graph", "lesmis.graph", "celegans_metabolic.graph", "polblogs.graph.gz",
                  "power.graph", "netscience.mtx", "PGPgiantcompo.graph.gz"]
BEST_KNOWN = {"karate": 0.4198, "jazz": 0.4451, "PGPgiantcompo": 0.8861}  # as Fagginger Auer and Bisseling (2012) quote them


def default_instances(folders=("../shared/data", "data")) -> list[str]:
    """The clustering graphs of ../shared/data (those of data/ when it is absent)."""
    for folder in folders:
        found = [os.path.join(folder, name) for name in CLUSTER_GRAPHS if os.path.exists(os.path.join(folder, name))]
        if found:
            return found
    return []


def louvain_best(graph: Graph, seeds: int) -> tuple[float, float]:
    """networkx Louvain: the best modularity over ``seeds`` seeds (measured by hgpart's own function, on the
    same weights) and the median seconds of a run."""
    import networkx as nx
    from networkx.algorithms.community import louvain_communities

    nx_graph = nx.Graph()
    nx_graph.add_nodes_from(range(graph.num_vertices))
    sources, targets, weights = graph.edge_list()
    nx_graph.add_weighted_edges_from(zip(sources.tolist(), targets.tolist(), weights.tolist()))
    best, times = -1.0, []
    for seed in range(seeds):
        started = time.perf_counter()
        communities = louvain_communities(nx_graph, seed=seed)
        times.append(time.perf_counter() - started)
        clusters = np.empty(graph.num_vertices, dtype=np.int64)
        for index, members in enumerate(communities):
            clusters[list(members)] = index
        best = max(best, modularity(graph, clusters))
    return best, statistics.median(times)


def run_cluster_bench(instances, devices, repeat: int = 1, louvain_seeds: int = 5, peer_max_edges: int = 2_000_000,
                      tries: int = 0, reporter=None) -> list[dict]:
    """Rows of measurements; ``instances`` holds ("file", path) or ("rmat", vertices, edge factor)."""
    rows = []
    for item in instances:
        name, graph, read = graph_instance(item)
        row = {"instance": name, "vertices": graph.num_vertices, "edges": graph.num_edges, "read s": read}
        results = {}
        for device in devices:
            runs = []
            if device == "gpu":  # untimed: CuPy compiles its CUB reductions for each size class at first use
                cluster(graph, replace(ClusterConfig(), tries=tries), device=device)
            for _ in range(repeat):
                result = cluster(graph, replace(ClusterConfig(), tries=tries), device=device)
                runs.append(result.seconds)
            results[device] = result
            row[f"{device} modularity"] = result.modularity
            row[f"{device} clusters"] = result.num_clusters
            end_to_end(row, device, statistics.median(r["total"] - r["level"] for r in runs),
                       statistics.median(r["total"] for r in runs))
            row[f"{device} phases"] = {phase: value for phase, value in result.seconds.items() if phase != "total"}
        auto_choice(row, "cluster")
        if len(results) > 1:
            first, *others = results.values()
            row["devices agree"] = all(np.array_equal(first.clusters, other.clusters) for other in others)
        stem = name.split(".")[0]
        row["best known"] = BEST_KNOWN.get(stem)
        if louvain_seeds and graph.num_edges <= peer_max_edges:
            row["louvain modularity"], row["louvain s"] = louvain_best(graph, louvain_seeds)
        log_row(reporter, name, row)
        rows.append(row)
    return rows
