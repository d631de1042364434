"""The coarsening phase: levels of rate -> match -> join -> contract until the hypergraph is small enough, on
the host or the device (:mod:`.backends`), into one :class:`Hierarchy` of :class:`Level` objects."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..config import CoarseningConfig
from ..hypergraph import Hypergraph


@dataclass(eq=False)
class Level:
    """One level of a hierarchy, on the host or on the device: its hypergraph, the map onto the next coarser
    level and its fixed blocks.

    Attributes
    ----------
    hypergraph : Hypergraph
        Its arrays where ``place`` says.
    cluster : int32[n] or None
        f: vertex -> coarse vertex of the next level (None on the coarsest level).
    fixed : int32[n] or None
        The block each vertex is fixed to, or -1; None when no vertex is fixed.
    seconds : float
        Time to compute this level's map and contraction.
    place : str
        ``host`` (numpy arrays) or ``device`` (GPU arrays).
    host : Hypergraph or None
        A host copy of a device level, once there is one (:meth:`on_host`).
    """

    hypergraph: Hypergraph
    cluster: object = None
    fixed: object = None
    seconds: float = 0.0
    place: str = "host"
    host: Hypergraph | None = None

    def on_host(self) -> Hypergraph:
        """The level's hypergraph on the host (copied once from the device)."""
        if self.place == "host":
            return self.hypergraph
        if self.host is None:
            self.host = self.hypergraph.to_host()
        return self.host


@dataclass(eq=False)
class Hierarchy:
    """The levels of one coarsening: ``levels`` the finer ones, finest (the input) first, each with its map
    onto the next; ``coarsest`` the last contraction; ``communities`` those coarsening stayed inside, when
    :func:`coarsen` detected them (a :class:`hgpart.preprocessing.communities.Communities`)."""

    levels: list = field(default_factory=list)
    coarsest: Level | None = None
    communities: object = None

    def summary(self) -> list[dict]:
        """One row per level: vertices, nets, pins, fraction of vertices merged, seconds."""
        rows = []
        coarser = self.levels[1:] + [self.coarsest]
        for index, (level, coarse) in enumerate(zip(self.levels, coarser)):
            rows.append(_row(index, level.hypergraph, coarse.hypergraph.num_vertices, level.seconds))
        return rows

    def to_host(self) -> "Hierarchy":
        """The same hierarchy with every level on the host (one copy per device array)."""
        from ..cuda.arrays import to_host

        def host(array):
            return None if array is None else to_host(array)

        return Hierarchy([Level(level.on_host(), host(level.cluster), host(level.fixed), level.seconds)
                          for level in self.levels],
                         Level(self.coarsest.on_host(), None, host(self.coarsest.fixed)), self.communities)


def _row(index: int, hypergraph: Hypergraph, coarse_vertices: int, seconds: float) -> dict:
    vertices = hypergraph.num_vertices
    return {"level": index, "vertices": vertices, "nets": hypergraph.num_nets, "pins": hypergraph.num_pins,
            "matched": 1.0 - coarse_vertices / max(1, vertices), "seconds": seconds}


def contraction_limit(k: int, config: CoarseningConfig) -> int:
    return max(2, config.contraction_limit_factor * k)


def max_cluster_weight(hypergraph: Hypergraph, k: int, config: CoarseningConfig, epsilon: float = 0.03) -> int:
    """No coarse vertex may outgrow total / contraction limit, nor what a block may hold."""
    total = hypergraph.total_vertex_weight
    limit = contraction_limit(k, config)
    block_bound = int((1 + epsilon) * -(-total // k))
    return int(max(1, min(-(-total // limit), block_bound)))


def merge_key(fixed, communities, k: int):
    """Vertices with different non-negative keys never merge: fixed blocks, and communities if given (host or
    device arrays)."""
    if communities is None:
        return fixed
    key = communities.astype(np.int64) * (k + 1)
    if fixed is not None:
        key += fixed.astype(np.int64) + 1
    return key


def build_hierarchy(hypergraph: Hypergraph, k: int, config: CoarseningConfig, epsilon: float, backends: dict,
                    coarsened_on, fixed=None, communities=None, on_level=None, max_levels: int | None = None,
                    input_level: Level | None = None) -> Hierarchy:
    """Coarsen until at most ``contraction_limit`` vertices remain, a level shrinks by less than
    ``min_shrink``, or ``max_levels`` levels are done.

    Parameters
    ----------
    hypergraph : Hypergraph
        The input, on the host.
    backends : dict
        The coarsening steps of each place, ``host`` and ``device`` (:mod:`.backends`, or the full backends of
        :func:`hgpart.backends.backends_for`). The levels are kept where ``input_level`` is (without it, on the
        host).
    coarsened_on : callable
        ``coarsened_on(pins) -> "host" | "device"``: where a level of that many pins is coarsened
        (:meth:`hgpart.policy.Policy.coarsened_on`); a level coarsened on the host while the hierarchy is
        kept on the device goes there after its contraction.
    fixed : int32[n] or None
        Vertices fixed to different blocks never merge (host or kept-place array).
    communities : int[n] or None
        Vertices of different communities never merge.
    on_level : callable, optional
        Called after each level with its summary row.
    input_level : Level, optional
        The input already in the place where the levels are kept (a V-cycle reuses the first one's).
    """
    keep = backends[input_level.place] if input_level is not None else backends["host"]
    host = backends["host"]
    current = input_level or Level(keep.put_level(hypergraph), place=keep.name, host=hypergraph)
    current = Level(current.hypergraph, place=current.place, host=current.host)
    limit = contraction_limit(k, config)
    max_weight = max_cluster_weight(hypergraph, k, config, epsilon)
    levels_left = config.max_levels if max_levels is None else max_levels
    current_fixed, current_communities = keep.put(fixed), keep.put(communities)
    hierarchy = Hierarchy()
    while len(hierarchy.levels) < levels_left and current.hypergraph.num_vertices > limit:
        started = time.perf_counter()
        n = current.hypergraph.num_vertices
        key = merge_key(current_fixed, current_communities, k)
        if backends[coarsened_on(current.hypergraph.num_pins)] is keep:
            level_map = keep.cluster(current.hypergraph, max_weight, config, key)
            cluster, num_clusters = level_map.cluster, level_map.count
            if num_clusters > (1.0 - config.min_shrink) * n:
                break
            coarse = Level(keep.contract(current.hypergraph, level_map), place=keep.name)
        else:  # a small level of a device hierarchy: on the host, then its coarse level to the device
            level_on_host = current.on_host()
            level_map = host.cluster(level_on_host, max_weight, config, None if key is None else keep.get(key))
            num_clusters = level_map.count
            if num_clusters > (1.0 - config.min_shrink) * n:
                break
            coarse_host = host.contract(level_on_host, level_map)
            cluster = keep.put(level_map.cluster)
            coarse = Level(keep.put_level(coarse_host), place=keep.name, host=coarse_host)
        coarse_fixed = keep.carry(current_fixed, cluster, num_clusters)
        current_communities = keep.carry(current_communities, cluster, num_clusters)
        keep.synchronize()
        current.cluster, current.fixed, current.seconds = cluster, current_fixed, time.perf_counter() - started
        hierarchy.levels.append(current)
        if on_level is not None:
            on_level(_row(len(hierarchy.levels) - 1, current.hypergraph, num_clusters, current.seconds))
        current, current_fixed = coarse, coarse_fixed
    current.fixed = current_fixed
    hierarchy.coarsest = current
    return hierarchy


def coarsen(hypergraph: Hypergraph, k: int, config: CoarseningConfig = CoarseningConfig(), epsilon: float = 0.03,
            fixed: np.ndarray | None = None, max_levels: int | None = None, on_level=None,
            communities: np.ndarray | None = None, device: str = "cpu",
            host_level_max_pins: int | None = None, detect_communities=None) -> Hierarchy:
    """The coarsening hierarchy of ``hypergraph`` for ``k`` blocks, on the host (levels as host arrays).

    Parameters
    ----------
    hypergraph : Hypergraph
    k : int
        Sets the contraction limit (``contraction_limit_factor * k`` vertices) and the cluster weight bound.
    config : CoarseningConfig
    epsilon : float
        The balance bound's slack: no cluster outweighs what a block may hold.
    fixed : int32[n], optional
        Vertices fixed to different blocks never merge.
    max_levels : int, optional
    on_level : callable, optional
        Called after each level with its summary row.
    communities : int[n], optional
        Vertices of different communities never merge.
    device : {"cpu", "gpu"}
        ``gpu`` computes the levels on the GPU (levels of at most ``host_level_max_pins`` pins on the host),
        with the same result, and copies them back.
    host_level_max_pins : int, optional
        Default :attr:`hgpart.config.PolicyConfig.host_level_max_pins`.
    detect_communities : CommunityConfig, optional
        Without ``communities``: detect them first as this says (on ``device``), where it wants them
        (:meth:`~hgpart.config.CommunityConfig.wanted`); they are kept in the hierarchy's ``communities``.
    """
    from ..config import PolicyConfig
    from ..preprocessing.communities import detect_communities as detect, is_mesh_graph
    from .backends import DEVICE_COARSENING, HOST_COARSENING

    found = None
    detect_now = (communities is None and detect_communities is not None
                  and detect_communities.wanted(k, hypergraph.num_pins, is_mesh_graph(hypergraph)))
    if device != "gpu":
        if detect_now:
            found = detect(hypergraph, detect_communities, "cpu")
            communities = found.labels
        hierarchy = build_hierarchy(hypergraph, k, config, epsilon, {"host": HOST_COARSENING}, lambda pins: "host",
                                    fixed, communities, on_level, max_levels)
        hierarchy.communities = found
        return hierarchy
    limit = PolicyConfig().host_level_max_pins if host_level_max_pins is None else host_level_max_pins
    backends = {"host": HOST_COARSENING, "device": DEVICE_COARSENING}
    input_level = Level(DEVICE_COARSENING.put_level(hypergraph), place="device", host=hypergraph)
    if detect_now:
        found = detect(input_level.hypergraph, detect_communities, "gpu")
        communities = found.labels
    hierarchy = build_hierarchy(hypergraph, k, config, epsilon, backends,
                                lambda pins: "host" if pins <= limit else "device", fixed, communities, on_level,
                                max_levels, input_level)
    hierarchy.communities = found
    return hierarchy.to_host()
