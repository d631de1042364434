"""The results that a change of structure must not change: partitions, hierarchies, clusterings, forests and
triangles of small inputs, each reduced to a SHA-256 of its arrays. ``python -m tests.same_results`` writes
them to ``tests/same_results.json``; ``tests/test_same_results.py`` recomputes and compares them (on the GPU
too, where the GPU path must equal its CPU twin)."""

from __future__ import annotations

import hashlib
import json
import pathlib
from dataclasses import replace

import numpy as np

from hgpart import generate
from hgpart.io import read_graph, read_hypergraph

DATA = pathlib.Path(__file__).resolve().parent.parent / "data"
RECORDED = pathlib.Path(__file__).resolve().parent / "same_results.json"


def digest(*arrays) -> str:
    """SHA-256 over the arrays' int64 (or float64) values, in order."""
    hasher = hashlib.sha256()
    for array in arrays:
        array = np.ascontiguousarray(array)
        array = array.astype(np.float64 if array.dtype.kind == "f" else np.int64)
        hasher.update(str(array.shape).encode())
        hasher.update(array.tobytes())
    return hasher.hexdigest()


def _hypergraph(name: str):
    if name == "grid 3k":
        return generate.grid(3000, seed=1)
    if name == "long-tailed 2k":
        return generate.long_tailed(2000, seed=1)
    if name == "evenly 5k":
        return generate.evenly(5000, seed=1)
    if name == "evenly 20k":
        return generate.evenly(20000, seed=2)
    return read_hypergraph(str(DATA / name))


def _fixed(hypergraph, k):
    """Every seventh vertex fixed to block v mod k."""
    fixed = np.full(hypergraph.num_vertices, -1, dtype=np.int32)
    fixed[::7] = (np.arange(hypergraph.num_vertices)[::7] % k).astype(np.int32)
    return fixed


# (input, k, objective, seed, preset, variant): variant names a config change or "fixed"
PARTITIONS = [
    ("ibm01.hgr", 2, "km1", 0, "default", ""),
    ("ibm01.hgr", 8, "km1", 0, "default", ""),
    ("ibm01.hgr", 32, "km1", 0, "default", ""),
    ("ibm01.hgr", 8, "cut", 0, "default", ""),
    ("ibm01.hgr", 4, "km1", 1, "fast", ""),
    ("ibm01.hgr", 8, "km1", 0, "quality", ""),
    ("ibm01.hgr", 4, "km1", 0, "default", "fixed"),
    ("ibm01.hgr", 8, "km1", 0, "default", "no-communities"),
    ("ibm01.hgr", 8, "km1", 0, "default", "inner-product"),
    ("sat14_AProVE07-27.cnf.primal.hgr.gz", 8, "km1", 0, "default", ""),
    ("karate.graph", 2, "km1", 0, "default", ""),
    ("chesapeake.mtx", 3, "cut", 0, "default", ""),
    ("west0067.mtx", 4, "km1", 2, "default", ""),
    ("grid 3k", 4, "km1", 0, "default", ""),
    ("long-tailed 2k", 8, "km1", 0, "default", ""),
    ("evenly 5k", 8, "km1", 0, "default", ""),
]

# The GPU path's partitions, computed by its CPU twin (the GPU equals them: tests/test_multilevel.py).
# "large" treats the input as one above the V-cycle limit (pairwise FM at the end, the GPU's initial
# portfolio settings); "pairwise" also lowers the connectivity that pairwise FM needs.
TWIN_PARTITIONS = [
    ("ibm01.hgr", 2, "km1", 1, "default", ""),
    ("ibm01.hgr", 8, "km1", 1, "default", ""),
    ("ibm01.hgr", 32, "km1", 1, "default", ""),
    ("ibm01.hgr", 8, "cut", 1, "default", ""),
    ("ibm01.hgr", 8, "km1", 1, "quality", ""),
    ("ibm01.hgr", 8, "km1", 1, "default", "large"),
    ("ibm01.hgr", 32, "km1", 1, "default", "pairwise"),
    ("evenly 20k", 8, "km1", 1, "default", ""),
    ("long-tailed 2k", 8, "km1", 1, "default", "pairwise"),
]

COARSENINGS = [("ibm01.hgr", 8), ("long-tailed 2k", 2), ("evenly 5k", 32)]
GRAPHS = ["karate.graph", "lesmis.graph", "chesapeake.mtx", "west0067.mtx"]
CLUSTER_GRAPHS = GRAPHS[:3]  # modularity needs non-negative weights; west0067's are not


def case_name(kind: str, case) -> str:
    return f"{kind} " + " ".join(str(part) for part in case if part != "")


def partition_case(case, device: str = "cpu") -> str:
    from hgpart.config import CoarseningConfig, CommunityConfig, make_config
    from hgpart.multilevel import partition

    name, k, objective, seed, preset, variant = case
    hypergraph = _hypergraph(name)
    overrides = {}
    if variant == "no-communities":
        overrides["communities"] = CommunityConfig(detect=False)
    if variant == "inner-product":
        overrides["coarsening"] = replace(CoarseningConfig(), rating="inner-product")
    config = make_config(k, 0.03, objective, seed, preset, **overrides)
    fixed = _fixed(hypergraph, k) if variant == "fixed" else None
    result = partition(hypergraph, k, config=config, fixed=fixed, device=device)
    return digest(result.partition)


def _twin_config(case):
    from hgpart.config import make_config

    name, k, objective, seed, preset, variant = case
    config = make_config(k, 0.03, objective, seed, preset)
    if variant in ("large", "pairwise"):
        config = replace(config, policy=replace(config.policy, device_v_cycle_max_pins=0))
    if variant == "pairwise":
        config = replace(config, pair_fm=replace(config.pair_fm, min_connectivity=1.0))
    return config


def twin_case(case) -> str:
    from hgpart.multilevel import gpu_path_on_cpu

    return digest(gpu_path_on_cpu(_hypergraph(case[0]), _twin_config(case)).partition)


def gpu_partition_case(case) -> str:
    from hgpart.multilevel import partition

    name, k, _, _, _, _ = case
    return digest(partition(_hypergraph(name), k, config=_twin_config(case), device="gpu").partition)


def coarsening_case(case, device: str = "cpu") -> str:
    from hgpart.coarsening import coarsen

    name, k = case
    hierarchy = coarsen(_hypergraph(name), k, device=device)
    coarsest = hierarchy.coarsest.hypergraph
    return digest(*[level.cluster for level in hierarchy.levels], coarsest.net_offsets, coarsest.pin_vertices,
                  coarsest.vertex_weights, coarsest.net_weights)


def cluster_case(name: str, device: str = "cpu") -> str:
    from hgpart.graphs.clustering import cluster

    result = cluster(read_graph(str(DATA / name), merge="max"), device=device)
    return digest(result.clusters, np.array([result.modularity]))


def forest_case(name: str, device: str = "cpu") -> str:
    from hgpart.graphs.spanning_forest import minimum_spanning_forest

    forest = minimum_spanning_forest(read_graph(str(DATA / name), merge="min"), device)
    return digest(forest.sources, forest.targets, forest.weights, forest.components)


def triangle_case(name: str, device: str = "cpu") -> str:
    from hgpart.graphs.triangles import count_triangles, list_triangles

    graph = read_graph(str(DATA / name), merge="min")
    counted = count_triangles(graph, device)
    return digest(np.array([counted.count]), counted.per_vertex, list_triangles(graph, device))


def compute_all() -> dict:
    results = {}
    for case in PARTITIONS:
        results[case_name("partition", case)] = partition_case(case)
    for case in TWIN_PARTITIONS:
        results[case_name("twin", case)] = twin_case(case)
    for case in COARSENINGS:
        results[case_name("coarsen", case)] = coarsening_case(case)
    for name in CLUSTER_GRAPHS:
        results[f"cluster {name}"] = cluster_case(name)
    for name in GRAPHS:
        results[f"forest {name}"] = forest_case(name)
        results[f"triangles {name}"] = triangle_case(name)
    return results


def recorded() -> dict:
    return json.loads(RECORDED.read_text())


if __name__ == "__main__":
    RECORDED.write_text(json.dumps(compute_all(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {RECORDED}")
