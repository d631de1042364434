"""Modularity clustering: the driver shared by the GPU steps (:mod:`.device`) and their njit CPU twin
(:mod:`.host`).

One cycle: agglomerate (match clusters by merge gain, satellites join centres, contract: B. O. Fagginger
Auer and R. H. Bisseling, "Graph Coarsening and Clustering on the GPU", 10th DIMACS Implementation
Challenge, 2012) until a level merges almost nothing; take the level of highest modularity; then, from that
level down to the cycle's finest level, project the clusters and improve them by local moving (the
refinement Fagginger Auer and Bisseling (2012) leave out) on every level, or on the finest alone
(``ClusterConfig.descent``). Further cycles start from the graph contracted by
the clusters found (as Louvain's levels do) and refine all the way down to the input again (a V-cycle),
while modularity improves.

Both devices run the same steps with the same integer arithmetic, so they return the same clustering. On the
GPU, levels of at most ``host_level_max_size`` vertices plus edges (the ensemble's contracted cores, the coarse
levels of each cycle) are copied to the host once and clustered there by the CPU twin, whose launches cost
nothing: the clusters are the same, only where each level runs changes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...config import ClusterConfig, GraphPolicyConfig
from ...hypergraph import Graph
from ..modularity import modularity
from .common import stale_threshold


@dataclass
class ClusterResult:
    """A clustering and how it was made.

    Attributes
    ----------
    clusters : int32[num_vertices]
        Cluster id of each vertex, 0-based and numbered in order of each cluster's smallest vertex.
    modularity : float
        Modularity on the graph's own weights.
    num_clusters : int
    seconds : dict
        Wall time: level (the graph's level 0 built where the clustering runs, the upload to the GPU
        included), agglomeration, refinement, total.
    levels : list of dict
        One row per agglomeration level: cycle, level, vertices, edges, modularity of the level itself.
    device : str
    device_reason : str or None
        Why ``device="auto"`` ran it there (the graph's size, or no usable GPU); None for ``cpu`` and ``gpu``.
    """

    clusters: np.ndarray
    modularity: float
    num_clusters: int
    seconds: dict = field(default_factory=dict)
    levels: list = field(default_factory=list)
    device: str = "cpu"
    device_reason: str | None = None


def _backend(device: str):
    """The step module of ``device``: :mod:`.device` for "gpu", :mod:`.host` otherwise (imported on first
    use: the GPU modules need numba.cuda)."""
    if device == "gpu":
        from . import device as steps
    else:
        from . import host as steps
    return steps


def _num_vertices(level: dict) -> int:
    return int(level["offsets"].shape[0] - 1)


def _on_gpu(level: dict) -> bool:
    """Whether ``level`` is a device level (those carry ``rows``)."""
    return "rows" in level


def _steps_of(level: dict):
    """The step module of the device ``level`` lives on."""
    return _backend("gpu" if _on_gpu(level) else "cpu")


def _placed(level: dict, host_level_max_size: int) -> dict:
    """``level``, copied to the host when it is a device level of at most ``host_level_max_size`` vertices plus
    edges (the vertices count: the host's matching and local moving visit every vertex, isolated ones too)."""
    if host_level_max_size <= 0 or not _on_gpu(level):
        return level
    if _num_vertices(level) + int(level["neighbors"].shape[0]) // 2 > host_level_max_size:
        return level
    return _backend("gpu").download_level(level)


def _on_level(level: dict, array):
    """``array`` (int32 vertex ids) on the device of ``level``."""
    on_host = isinstance(array, np.ndarray)
    if _on_gpu(level):
        return _backend("gpu").to_device(array) if on_host else array
    return array if on_host else _backend("gpu").to_host(array)


def _agglomerate(base: dict, config: ClusterConfig, seed: int, cycle: int, rows: list,
                 host_level_max_size: int) -> tuple[list, list, int]:
    """Levels from ``base`` down to the last agglomerated one, the maps between them (each on the device of
    the finer level), and the index of the level whose own vertices (one cluster each) have the highest
    modularity."""
    levels, maps = [base], []
    steps = _steps_of(base)
    values = [steps.scaled_modularity(base, steps.identity(_num_vertices(base)))]
    while len(levels) <= config.max_levels:
        level = levels[-1]
        steps = _steps_of(level)
        n = _num_vertices(level)
        partner = steps.match_clusters(level, seed + 7919 * cycle, len(levels) - 1, config.matching_rounds)
        target = steps.satellite_targets(level, partner) if config.satellites else steps.no_targets(n)
        mapping, num_coarse = steps.group_map(partner, target)
        if config.move_while_agglomerating:
            moved, _ = steps.local_moving(level, mapping, config.move_rounds, config.stale_rounds,
                                          config.min_improvement)
            mapping, num_coarse = steps.compact(moved)
        if num_coarse >= n * (1.0 - config.min_shrink) or num_coarse == n:
            break
        coarse = _placed(steps.contract_level(level, mapping, num_coarse), host_level_max_size)
        levels.append(coarse)
        maps.append(mapping)
        coarse_steps = _steps_of(coarse)
        values.append(coarse_steps.scaled_modularity(coarse, coarse_steps.identity(num_coarse)))
        two_omega_squared = float(level["two_omega"]) ** 2 or 1.0
        rows.append({"cycle": cycle, "level": len(levels) - 1, "vertices": num_coarse,
                     "edges": int(coarse["neighbors"].shape[0] // 2), "modularity": values[-1] / two_omega_squared})
    return levels, maps, int(np.argmax(values))


def _v_cycles(steps, finest: dict, base: dict, base_map, config: ClusterConfig, seed: int, rows: list,
              seconds: dict, host_level_max_size: int):
    """Cycles of agglomeration and refinement from ``base`` (the finest level, or the finest contracted by
    ``base_map``) while modularity improves by more than ``config.min_improvement``. Returns the clusters
    on the finest level and 4Ω² times their modularity. ``steps`` are those of ``finest``."""
    best_clusters, best_value = None, None
    threshold = stale_threshold(finest["two_omega"], config.min_improvement)  # as local moving's rounds
    for cycle in range(max(1, config.cycles)):
        phase = time.perf_counter()
        levels, maps, best_level = _agglomerate(base, config, seed, cycle, rows, host_level_max_size)
        if base_map is not None:  # refine down to the input: its level and the map to the base go first
            levels, maps, best_level = [finest] + levels, [base_map] + maps, best_level + 1
        seconds["agglomeration"] += time.perf_counter() - phase
        phase = time.perf_counter()
        clusters = _steps_of(levels[best_level]).identity(_num_vertices(levels[best_level]))
        for index in range(best_level, -1, -1):
            level_steps = _steps_of(levels[index])
            if index < best_level:
                clusters = level_steps.project(_on_level(levels[index], clusters), maps[index])
            if config.descent or index == 0:
                clusters, value = level_steps.local_moving(levels[index], clusters, config.move_rounds,
                                                          config.stale_rounds, config.min_improvement)
        seconds["refinement"] += time.perf_counter() - phase
        if best_value is not None and value <= best_value:
            break
        small_gain = best_value is not None and value - best_value <= threshold
        best_clusters, best_value = clusters, value
        if small_gain:  # kept, but another cycle is not worth its contraction and refinement
            break
        base_map, num_clusters = steps.compact(clusters)
        base = _placed(steps.contract_level(finest, base_map, num_clusters), host_level_max_size)
    return best_clusters, best_value


def default_tries(num_edges: int) -> int:
    """Independent runs of the ensemble when not given: 8 on graphs up to 1M edges, 1 above 8M."""
    return int(min(8, max(1, 8_000_000 // max(num_edges, 1))))


def _ensemble(steps, finest: dict, config: ClusterConfig, num_edges: int, rows: list, seconds: dict,
              host_level_max_size: int = 0):
    """The ensemble of :func:`cluster` on the level ``finest``: (the best clusters, 4Ω² times their
    modularity). Coarser device levels of at most ``host_level_max_size`` vertices plus edges run on the
    host."""
    tries = config.tries or default_tries(num_edges)
    best_clusters = steps.identity(_num_vertices(finest))
    best_value = steps.scaled_modularity(finest, best_clusters)
    base, base_map = finest, None
    for ensemble_round in range(config.ensemble_rounds + 1):
        runs = [_v_cycles(steps, finest, base, base_map, config, config.seed + 1009 * ensemble_round + run, rows,
                          seconds, host_level_max_size) for run in range(tries)]
        improved = False
        for clusters, value in runs:
            if value > best_value:
                best_clusters, best_value, improved = clusters, value, True
        if tries == 1 or not improved:
            break
        core = runs[0][0]
        for clusters, _ in runs[1:]:
            core = steps.intersect(core, clusters)
        base_map, num_core = steps.compact(core)
        base = _placed(steps.contract_level(finest, base_map, num_core), host_level_max_size)
    return best_clusters, best_value


def cluster_level(level: dict, config: ClusterConfig, device: str = "cpu"):
    """The clusters of a level already built (a level dict of :mod:`.host`, or of :mod:`.device` on the
    GPU): int32[n] on the level's device, and the level's modularity. :func:`cluster` for callers that make
    their own graph, such as the partitioner's community detection."""
    steps = _backend(device)
    seconds = {"agglomeration": 0.0, "refinement": 0.0}
    clusters, value = _ensemble(steps, level, config, int(level["neighbors"].shape[0]) // 2, [], seconds)
    two_omega = int(level["two_omega"])
    return clusters, (int(value) / two_omega**2 if two_omega else 0.0)


def cluster(graph: Graph, config: ClusterConfig = ClusterConfig(), device: str = "cpu",
            host_level_max_size: int | None = None) -> ClusterResult:
    """Cluster the vertices of ``graph`` for high modularity.

    ``config.tries`` independent runs (seeds seed, seed + 1, ...) form an ensemble; their core groups
    (vertices that every run put together) are contracted and clustered again (core groups graph
    clustering, Ovelgönne and Geyer-Schulz 2012), ``config.ensemble_rounds`` times while modularity
    improves. The best clustering seen is returned.

    Parameters
    ----------
    graph : Graph
        Undirected, non-negative weights; isolated vertices allowed (each stays a cluster of its own).
    config : ClusterConfig
    device : {"cpu", "gpu"}
        ``cpu``: the njit twin; ``gpu``: numba.cuda kernels (needs a GPU and CuPy). Same clustering.
    host_level_max_size : int, optional
        On the GPU, coarser levels of at most this many vertices plus edges run on the host (default:
        ``GraphPolicyConfig.cluster_host_level_max_size``; 0 keeps every level on the device).
    """
    if host_level_max_size is None:
        host_level_max_size = GraphPolicyConfig().cluster_host_level_max_size
    steps = _backend(device)
    started = time.perf_counter()
    finest, scale = steps.graph_level(graph)
    rows: list = []
    seconds = {"level": time.perf_counter() - started, "agglomeration": 0.0, "refinement": 0.0}
    best_clusters, best_value = _ensemble(steps, finest, config, graph.num_edges, rows, seconds, host_level_max_size)
    clusters, num_clusters = steps.first_appearance(best_clusters)
    two_omega = int(finest["two_omega"])
    if scale == 1.0:  # the level's weights are the graph's: its exact value, rounded once
        value = int(best_value) / two_omega**2 if two_omega else 0.0
    else:
        value = modularity(graph, clusters)
    seconds["total"] = time.perf_counter() - started
    return ClusterResult(clusters, value, num_clusters, seconds, rows, device)


def warm_up(device: str = "cpu") -> float:
    """Compile (or load from numba's cache) the clustering kernels on a tiny graph; returns seconds."""
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    sources, targets = rng.integers(0, 60, 200), rng.integers(0, 60, 200)
    tiny = Graph.from_edges(64, sources, targets, merge="max")
    for used in ("cpu", "gpu") if device == "gpu" else ("cpu",):
        cluster(tiny, ClusterConfig(tries=2, ensemble_rounds=1), device=used)
    if device == "gpu":
        from ...cuda.arrays import prepare_uploads  # imports numba.cuda, slow to import: only for the GPU

        prepare_uploads()
    return time.perf_counter() - started
