"""The coarsening phase: levels of rate -> match -> contract until the hypergraph is small enough."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..config import CoarseningConfig
from ..hypergraph import Hypergraph
from .contraction import contract
from .matching import compute_clustering


@dataclass
class Level:
    """One level: the finer hypergraph and the map onto the next coarser one.

    Attributes
    ----------
    hypergraph : Hypergraph
    cluster : int32[hypergraph.num_vertices]
        f: vertex -> coarse vertex of the next level.
    fixed : int32[hypergraph.num_vertices] or None
    seconds : float
        Time to compute this level's map and contraction.
    """

    hypergraph: Hypergraph
    cluster: np.ndarray
    fixed: np.ndarray | None
    seconds: float


@dataclass
class Hierarchy:
    """levels[0] is the input; ``coarsest`` the last contraction."""

    levels: list = field(default_factory=list)
    coarsest: Hypergraph | None = None
    coarsest_fixed: np.ndarray | None = None

    def summary(self) -> list[dict]:
        """One row per level: vertices, nets, pins, fraction of vertices merged, seconds."""
        rows = []
        for index, level in enumerate(self.levels):
            coarse = self.levels[index + 1].hypergraph if index + 1 < len(self.levels) else self.coarsest
            rows.append({"level": index, "vertices": level.hypergraph.num_vertices, "nets": level.hypergraph.num_nets,
                         "pins": level.hypergraph.num_pins,
                         "matched": 1.0 - coarse.num_vertices / max(1, level.hypergraph.num_vertices),
                         "seconds": level.seconds})
        return rows


def contraction_limit(k: int, config: CoarseningConfig) -> int:
    return max(2, config.contraction_limit_factor * k)


def max_cluster_weight(hypergraph: Hypergraph, k: int, config: CoarseningConfig, epsilon: float = 0.03) -> int:
    """No coarse vertex may outgrow total / contraction limit, nor what a block may hold."""
    total = hypergraph.total_vertex_weight
    limit = contraction_limit(k, config)
    block_bound = int((1 + epsilon) * -(-total // k))
    return int(max(1, min(-(-total // limit), block_bound)))


def project(partition: np.ndarray, cluster: np.ndarray) -> np.ndarray:
    """Seed 000 Eq. 5: a vertex takes the block of its coarse vertex."""
    return partition[cluster]


def _carry(values: np.ndarray | None, cluster: np.ndarray, num_clusters: int) -> np.ndarray | None:
    """Per-vertex labels of a level carried to the coarse vertices (max over each cluster; -1 = none)."""
    if values is None:
        return None
    coarse = np.full(num_clusters, -1, dtype=values.dtype)
    np.maximum.at(coarse, cluster, values)
    return coarse


def _merge_key(fixed: np.ndarray | None, communities: np.ndarray | None, k: int) -> np.ndarray | None:
    """Vertices with different non-negative keys never merge: fixed blocks, and communities if given."""
    if communities is None:
        return fixed
    key = communities.astype(np.int64) * (k + 1)
    if fixed is not None:
        key += fixed.astype(np.int64) + 1
    return key


def coarsen(hypergraph: Hypergraph, k: int, config: CoarseningConfig = CoarseningConfig(), epsilon: float = 0.03,
            fixed: np.ndarray | None = None, max_levels: int | None = None, on_level=None,
            communities: np.ndarray | None = None, device: str = "cpu") -> Hierarchy:
    """Coarsen until at most 160 k vertices remain, a level shrinks by less than ``min_shrink``, or
    ``max_levels`` levels are done.

    ``fixed`` (int32[n], -1 free): vertices fixed to different blocks never merge. ``communities``
    (int[n]): vertices of different communities never merge. ``on_level(row)`` is called after each
    level with its summary row. ``device="gpu"`` computes every level on the GPU with the same result
    (see :func:`coarsen_on_device`).
    """
    if device == "gpu":
        return coarsen_on_device(hypergraph, k, config, epsilon, fixed, max_levels, on_level, communities).to_host()
    hierarchy = Hierarchy()
    current, current_fixed, current_communities = hypergraph, fixed, communities
    limit = contraction_limit(k, config)
    max_weight = max_cluster_weight(hypergraph, k, config, epsilon)
    levels = config.max_levels if max_levels is None else max_levels
    while len(hierarchy.levels) < levels and current.num_vertices > limit:
        started = time.perf_counter()
        cluster, num_clusters = compute_clustering(current, max_weight, config,
                                                   _merge_key(current_fixed, current_communities, k))
        if num_clusters > (1.0 - config.min_shrink) * current.num_vertices:
            break
        coarse = contract(current, cluster, num_clusters)
        coarse_fixed = _carry(current_fixed, cluster, num_clusters)
        current_communities = _carry(current_communities, cluster, num_clusters)
        level = Level(current, cluster, current_fixed, time.perf_counter() - started)
        hierarchy.levels.append(level)
        _report(on_level, len(hierarchy.levels) - 1, current.num_vertices, current.num_nets, current.num_pins,
                num_clusters, level.seconds)
        current, current_fixed = coarse, coarse_fixed
    hierarchy.coarsest = current
    hierarchy.coarsest_fixed = current_fixed
    return hierarchy


def _report(on_level, index, vertices, nets, pins, num_clusters, seconds):
    if on_level is not None:
        on_level({"level": index, "vertices": vertices, "nets": nets, "pins": pins,
                  "matched": 1.0 - num_clusters / max(1, vertices), "seconds": seconds})


@dataclass
class DeviceHierarchy:
    """The hierarchy with every level on the GPU (dicts of device arrays, see ``level_to_device``).

    ``levels`` holds (level, cluster, fixed, seconds) tuples, finest first; ``coarsest`` the last contraction
    and ``coarsest_fixed`` its fixed blocks (or None)."""

    input: Hypergraph
    levels: list = field(default_factory=list)
    coarsest: dict | None = None
    coarsest_fixed: object = None

    def to_host(self) -> Hierarchy:
        """The same hierarchy on the host (one copy per array)."""
        from ..cuda.arrays import to_host
        hierarchy = Hierarchy()
        for index, (level, cluster, level_fixed, seconds) in enumerate(self.levels):
            host = self.input if index == 0 else level.to_host()
            hierarchy.levels.append(Level(host, to_host(cluster), None if level_fixed is None else to_host(level_fixed),
                                          seconds))
        hierarchy.coarsest = self.input if not self.levels else self.coarsest.to_host()
        hierarchy.coarsest_fixed = None if self.coarsest_fixed is None else to_host(self.coarsest_fixed)
        return hierarchy

    def summary(self) -> list[dict]:
        """The rows of :meth:`Hierarchy.summary`, from the arrays' shapes."""
        rows = []
        shapes = [level for level, _, _, _ in self.levels] + [self.coarsest]
        for index, (level, _, _, seconds) in enumerate(self.levels):
            vertices = level.vertex_offsets.shape[0] - 1
            coarse = shapes[index + 1].vertex_offsets.shape[0] - 1
            rows.append({"level": index, "vertices": vertices, "nets": level.net_offsets.shape[0] - 1,
                         "pins": level.pin_vertices.shape[0], "matched": 1.0 - coarse / max(1, vertices),
                         "seconds": seconds})
        return rows


def carry_on_device(values, cluster, num_clusters: int):
    """:func:`_carry` on the device: each coarse vertex takes the largest value of its fine vertices
    (fixed blocks, communities; -1 = none)."""
    if values is None:
        return None
    from ..cuda.arrays import xp
    from ..cuda.primitives import scatter, scatter_max_kernel

    return scatter(scatter_max_kernel, cluster, values, xp().full(num_clusters, -1, dtype=values.dtype))


def _on_device(values):
    """A host array on the device; a device array (CuPy, or numpy under the simulator) as it is."""
    from ..cuda.arrays import to_device

    if values is None or (not isinstance(values, np.ndarray) and hasattr(values, "__cuda_array_interface__")):
        return values
    return to_device(np.asarray(values))


def coarsen_on_device(hypergraph, k, config=CoarseningConfig(), epsilon=0.03, fixed=None, max_levels=None,
                      on_level=None, communities=None, input_level=None) -> DeviceHierarchy:
    """``coarsen`` with the levels on the GPU: the input goes to the device once (or not at all:
    ``input_level``, its arrays already there), each level's map and contraction stay there
    (:func:`.gpu_matching.compute_clustering_device`, :func:`.gpu_contraction.contract_device`); the levels
    stay on the device (``DeviceHierarchy.to_host`` copies them back). Levels of at most
    ``config.gpu_host_max_pins`` pins are coarsened on the host (the same map and contraction) and their
    coarse levels copied to the device. ``fixed`` and ``communities`` may
    be host or device arrays."""
    from numba import cuda

    from ..cuda.arrays import to_device, to_host
    from .gpu_contraction import contract_device
    from .gpu_matching import compute_clustering_device

    limit = contraction_limit(k, config)
    max_weight = max_cluster_weight(hypergraph, k, config, epsilon)
    levels = config.max_levels if max_levels is None else max_levels
    current = hypergraph.to_device() if input_level is None else input_level
    current_fixed = _on_device(fixed)
    current_communities = _on_device(communities)
    hierarchy = DeviceHierarchy(hypergraph)
    host_level = hypergraph  # the current level on the host, where it is there
    while len(hierarchy.levels) < levels and current.vertex_offsets.shape[0] - 1 > limit:
        started = time.perf_counter()
        n = current.vertex_offsets.shape[0] - 1
        merge_key = _merge_key(current_fixed, current_communities, k)
        if current.pin_vertices.shape[0] <= config.gpu_host_max_pins:  # small: on the host, then back
            host_level = current.to_host() if host_level is None else host_level
            host_cluster, num_clusters = compute_clustering(host_level, max_weight, config,
                                                            None if merge_key is None else to_host(merge_key))
            if num_clusters > (1.0 - config.min_shrink) * n:
                break
            coarse_host = contract(host_level, host_cluster, num_clusters)
            cluster, coarse = to_device(host_cluster), coarse_host.to_device()
        else:
            cluster, num_clusters = compute_clustering_device(current, max_weight, config, merge_key)
            if num_clusters > (1.0 - config.min_shrink) * n:
                break
            coarse, coarse_host = contract_device(current, cluster, num_clusters), None
        coarse_fixed = carry_on_device(current_fixed, cluster, num_clusters)
        current_communities = carry_on_device(current_communities, cluster, num_clusters)
        cuda.synchronize()
        seconds = time.perf_counter() - started
        hierarchy.levels.append((current, cluster, current_fixed, seconds))
        _report(on_level, len(hierarchy.levels) - 1, n, current.net_offsets.shape[0] - 1,
                current.pin_vertices.shape[0], num_clusters, seconds)
        current, current_fixed, host_level = coarse, coarse_fixed, coarse_host
    hierarchy.coarsest = current
    hierarchy.coarsest_fixed = current_fixed
    return hierarchy
