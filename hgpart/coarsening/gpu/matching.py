"""The coarsening map of a level on the device: the GPU twin of
:func:`hgpart.coarsening.matching.compute_clustering`.

The parallel suitor matching of L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph
Coarsening on the GPU", IEEE HPEC 2015 (COMPUTE-MATCHING-PARALLEL, Fig. 9): all unmatched vertices propose at
once (:meth:`.plan.DevicePlan.propose`); ``mutual_kernel`` matches mutual proposals; rounds repeat for the
vertices still unmatched, all ``matching_rounds`` of them without a look from the host (the CPU stops after a
round that matched nobody; the rounds after such a round change nothing, so the maps agree, and the host
never waits for the device mid-level). Joining follows (:mod:`.joining`), on the level of the pairs
(:func:`pair_level_device`), as on the CPU.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...cuda.arrays import cached_kernel, grid, launch, to_device, to_host, xp
from ..matching import LevelMap
from ..rules import joins_on_the_pair_level, pair_roots
from .contraction import contract_device
from .joining import finish_clustering_device, number_clusters_device
from .plan import DevicePlan, device_net_ratings
from .rating import KERNEL_LIMITS


@cached_kernel
def mutual_kernel(proposals, partner):
    """Fig. 9 lines 10-15: an unmatched v and u = proposals[v] are matched when u proposed v too."""
    for v in range(cuda.grid(1), proposals.shape[0], cuda.gridDim.x * cuda.blockDim.x):
        u = proposals[v]
        if u >= 0 and partner[v] < 0 and proposals[u] == v:
            partner[v] = u


def compute_clustering_device(level, max_weight: int, config, merge_key=None, limits=KERNEL_LIMITS):
    """The coarsening map of a level held on the device, (cluster device int32[n], n'): the map of
    :func:`map_level_device`."""
    level_map = map_level_device(level, max_weight, config, merge_key, limits)
    return level_map.cluster, level_map.count


def map_level_device(level, max_weight: int, config, merge_key=None, limits=KERNEL_LIMITS) -> LevelMap:
    """The coarsening map of a level held on the device, with the level of the matching's pairs it was joined
    on (:class:`hgpart.coarsening.matching.LevelMap`): matching rounds, then joining on the pair level (or
    on the level itself, by :func:`hgpart.coarsening.rules.joins_on_the_pair_level`, as on the CPU).

    Parameters
    ----------
    level : Hypergraph
        On the device, n vertices.
    max_weight : int
        No cluster may outweigh this.
    config : CoarseningConfig
    merge_key : device int64[n] or None
        Vertices with different keys >= 0 never merge (fixed blocks, communities).
    limits : tuple of 4 ints
        The bins' limits, :data:`.rating.KERNEL_LIMITS` (the defaults suit the kernels; tests lower them).

    Returns
    -------
    LevelMap
        ``cluster`` (device int32[n]: f: V -> V', ids 0..n'-1 in order of each cluster's smallest vertex),
        ``count`` (n'), and the pair level with the joining's map on it.
    """
    x = xp()
    n = level.vertex_offsets.shape[0] - 1
    keyed = merge_key is not None
    merge_key = x.full(n, -1, dtype=x.int64) if merge_key is None else merge_key.astype(x.int64)
    ratings, _ = device_net_ratings(level, config.rating == "heavy-edge", config.max_rated_net_size)
    plan = DevicePlan(level, ratings, max_weight, config.weight_penalty, limits)
    partner = x.full(n, -1, dtype=x.int32)
    proposals = x.full(n, -1, dtype=x.int32)
    for round_index in range(config.matching_rounds):  # no early stop: it would wait for the device each round
        plan.propose(merge_key, level.vertex_weights, partner, proposals, True, round_index > 0)
        launch(mutual_kernel, grid(n), proposals, partner)
    base_budget = n - int(np.ceil(n / config.max_shrink_factor))
    if not joins_on_the_pair_level(config, n, level.pin_vertices.shape[0],
                                   lambda: int(x.count_nonzero(partner >= 0))):
        return LevelMap(*finish_clustering_device(level, plan, max_weight, config, merge_key, partner, proposals,
                                                  base_budget, keyed))
    pair_map, pairs, pair_keys, pair_partner = pair_level_device(level, partner, merge_key)
    count = pairs.vertex_offsets.shape[0] - 1
    pair_ratings, _ = device_net_ratings(pairs, config.rating == "heavy-edge", config.max_rated_net_size)
    pair_plan = DevicePlan(pairs, pair_ratings, max_weight, config.weight_penalty, limits)
    cluster, clusters = finish_clustering_device(pairs, pair_plan, max_weight, config, pair_keys, pair_partner,
                                                 proposals[:count], base_budget - (n - count), keyed)
    return LevelMap(cluster[pair_map], clusters, pairs, cluster)


def pair_level_device(level, partner, merge_key):
    """:func:`hgpart.coarsening.matching.pair_level` on the device: (pair_map device int32[n], the contracted
    level, its merge keys device int64[n'], its partner device int32[n']: v for a pair, -1 for a vertex left
    alone)."""
    from ..backends import DEVICE_COARSENING

    x = xp()
    pair_map, count = number_clusters_device(pair_roots(x, partner))
    pairs = contract_device(level, pair_map, count)
    keys = DEVICE_COARSENING.carry(merge_key, pair_map, count)
    paired = x.bincount(pair_map, minlength=count) > 1
    return pair_map, pairs, keys, x.where(paired, x.arange(count, dtype=x.int32), -1).astype(x.int32)


def compute_clustering_gpu(hypergraph, max_weight: int, config, fixed=None, limits=KERNEL_LIMITS):
    """GPU twin of :func:`hgpart.coarsening.matching.compute_clustering` for a host hypergraph: the same map
    f: V -> V' (host int32[n]) and n'. Copies the hypergraph to the device and the map back; ``fixed`` (int[n]
    or None) is the merge key, ``limits`` as in :func:`compute_clustering_device`."""
    level = hypergraph.to_device()
    merge_key = None if fixed is None else to_device(np.asarray(fixed, dtype=np.int64))
    cluster, count = compute_clustering_device(level, max_weight, config, merge_key, limits)
    return to_host(cluster), count
