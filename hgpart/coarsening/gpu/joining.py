"""Cluster joining on the device: the CPU's :func:`hgpart.coarsening.matching.finish_clustering`, step for
step, after the matching of :mod:`hgpart.coarsening.gpu.matching`.

The pairs become clusters; then up to JOIN_ROUNDS rounds in which each free vertex proposes once more (to
any cluster, :meth:`.plan.DevicePlan.propose`), :func:`hgpart.coarsening.rules.join_targets` (on CuPy arrays)
says where each joiner goes, a radix sort by (target, vertex) and a scan admit joiners in vertex order under
the weight limit and the level's shrink budget; the vertices still alone may then pair up by the cluster they
would join without the weight limit (2-hop, :mod:`.two_hop`), and a scan numbers the clusters. Nothing
leaves the device but the budget left after each round (one read a round).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ...config import UNBOUNDED
from ...cuda.arrays import cached_kernel, grid, launch, scalar, to_host, xp
from ...cuda.primitives import LOW32, lower_bound, scatter, scatter_min_kernel, sum_before
from ..rules import JOIN_ROUNDS, join_targets, two_hop_pairs
from .plan import DevicePlan
from .two_hop import _two_hop_unkeyed


@cached_kernel
def pair_roots_kernel(partner, vertex_weights, merge_key, base_budget, root, free, cluster_weight, cluster_key,
                      budgets):
    """The matching's pairs as clusters: root[v] = min(v, partner[v]) (v when unmatched), free = partner, each
    vertex's weight added to its root's cluster_weight (zero on entry) and its key maxed into cluster_key
    (merge_key's copy on entry); budgets[0] (zero on entry) = base_budget - the pairs (counted per block in
    shared memory, one global atomic a block)."""
    pairs = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        pairs[0] = 0
    cuda.syncthreads()
    for v in range(cuda.grid(1), partner.shape[0], cuda.gridsize(1)):
        u = partner[v]
        r = min(v, u) if u >= 0 else v
        root[v] = r
        free[v] = u
        cuda.atomic.add(cluster_weight, r, vertex_weights[v])
        cuda.atomic.max(cluster_key, r, merge_key[v])
        if u > v:
            cuda.atomic.add(pairs, 0, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(budgets, 0, (base_budget if cuda.blockIdx.x == 0 else 0) - pairs[0])


@cached_kernel
def root_views_kernel(root, cluster_key, cluster_weight, root_keys, root_weights):
    """root_keys[v] = cluster_key[root[v]], root_weights[v] = cluster_weight[root[v]]: what a joining round's
    proposals see of each vertex's cluster."""
    for v in range(cuda.grid(1), root.shape[0], cuda.gridsize(1)):
        r = root[v]
        root_keys[v] = cluster_key[r]
        root_weights[v] = cluster_weight[r]


@cached_kernel
def join_keys_kernel(proposals, final, merge_key, cluster_key, keys):
    """keys[v] = final[v] << 32 | v for a joiner (a proposal, a target cluster other than itself, keys that
    agree), else n << 32 | v, which sorts after every joiner."""
    n = proposals.shape[0]
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        target = final[v]
        joiner = proposals[v] >= 0 and target != v and (merge_key[v] < 0 or merge_key[v] == cluster_key[target])
        keys[v] = ((int64(target) if joiner else int64(n)) << 32) | int64(v)


@cached_kernel
def joiner_weights_kernel(keys, vertex_weights, sorted_weights):
    """sorted_weights[i] = the weight of the joiner at sorted position i (0 past the joiners)."""
    n = keys.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        key = keys[i]
        sorted_weights[i] = vertex_weights[key & LOW32] if (key >> 32) < n else int64(0)


@cached_kernel
def join_fits_kernel(keys, running, cluster_weight, max_weight, fits):
    """fits[v] = 1 for a joiner v whose target, with the joiners before v in vertex order that aim at it
    (``running``: the inclusive prefix sum of the sorted weights; a binary search finds the target's run),
    stays within ``max_weight``; 0 for the others."""
    n = keys.shape[0]
    for i in range(cuda.grid(1), n, cuda.gridsize(1)):
        key = keys[i]
        target = key >> 32
        fit = 0
        if target < n:
            start = lower_bound(keys, target << 32)
            counted = running[i] - sum_before(running, start)
            fit = 1 if cluster_weight[target] + counted <= max_weight else 0
        fits[key & LOW32] = fit


@cached_kernel
def apply_joins_kernel(fits, ranks, final, vertex_weights, merge_key, budgets, round_index, root, free,
                       cluster_weight, cluster_key):
    """The first budgets[round_index] vertices that fit (``ranks``: the inclusive prefix sum of ``fits``) join
    their final cluster: root, free, the cluster's weight and key follow; budgets[round_index + 1] = the
    budget left."""
    n = fits.shape[0]
    budget = budgets[round_index]
    if cuda.grid(1) == 0:
        budgets[round_index + 1] = budget - (min(ranks[n - 1], budget) if n and budget > 0 else 0)
    for v in range(cuda.grid(1), n, cuda.gridsize(1)):
        if fits[v] and ranks[v] <= budget:
            target = final[v]
            root[v] = target
            free[v] = target
            free[target] = target
            cuda.atomic.add(cluster_weight, target, vertex_weights[v])
            cuda.atomic.max(cluster_key, target, merge_key[v])


@cached_kernel
def first_members_kernel(root, smallest, is_first):
    """is_first[v] = 1 when v is the smallest member of its cluster (``smallest``: per root, by scatter-min)."""
    for v in range(cuda.grid(1), root.shape[0], cuda.gridsize(1)):
        is_first[v] = 1 if smallest[root[v]] == v else 0


@cached_kernel
def cluster_ids_kernel(root, smallest, ranks, cluster):
    """cluster[v] = the rank of its cluster's smallest member among the first members, from 0."""
    for v in range(cuda.grid(1), root.shape[0], cuda.gridsize(1)):
        cluster[v] = int32(ranks[smallest[root[v]]] - 1)


def number_clusters_device(root):
    """:func:`hgpart.coarsening.matching.number_clusters` on the device: coarse ids 0..n'-1 in order of each
    cluster's smallest member, for ``root`` (device int32[n], each vertex's cluster named by any member).
    Returns (cluster device int32[n], n')."""
    x = xp()
    n = root.shape[0]
    if n == 0:
        return x.empty(0, dtype=x.int32), 0
    smallest = x.full(n, n, dtype=x.int32)
    scatter(scatter_min_kernel, root, x.arange(n, dtype=x.int32), smallest)
    is_first = x.empty(n, dtype=x.int64)
    launch(first_members_kernel, grid(n), root, smallest, is_first)
    ranks = x.cumsum(is_first)
    cluster = x.empty(n, dtype=x.int32)
    launch(cluster_ids_kernel, grid(n), root, smallest, ranks, cluster)
    return cluster, int(scalar(ranks, n - 1))


def _join_round(state: dict, plan: DevicePlan, round_index: int, max_weight: int, merge_key, proposals):
    """One joining round of :func:`hgpart.coarsening.matching.finish_clustering` on the device (proposals,
    each joiner's target cluster, a radix sort by (target, vertex) and a scan to admit joiners in vertex
    order under the weight limit and the budget); returns the budgets before and after it (one read)."""
    x = xp()
    n = proposals.shape[0]
    root, free, cluster_weight, cluster_key = (state[name] for name in ("root", "free", "cluster_weight",
                                                                         "cluster_key"))
    launch(root_views_kernel, grid(n), root, cluster_key, cluster_weight, state["root_keys"], state["root_weights"])
    plan.propose(state["root_keys"], state["root_weights"], free, proposals, False)
    final = join_targets(x, proposals, root, free)
    keys = state["keys"]
    launch(join_keys_kernel, grid(n), proposals, final, merge_key, cluster_key, keys)
    keys = x.sort(keys)
    sorted_weights = state["sorted_weights"]
    launch(joiner_weights_kernel, grid(n), keys, state["weights"], sorted_weights)
    fits = state["fits"]
    launch(join_fits_kernel, grid(n), keys, x.cumsum(sorted_weights), cluster_weight, max_weight, fits)
    launch(apply_joins_kernel, grid(n), fits, x.cumsum(fits), final, state["weights"], merge_key, state["budgets"],
           round_index, root, free, cluster_weight, cluster_key)
    before, after = (int(budget) for budget in to_host(state["budgets"][round_index:round_index + 2]))
    return before, after


def finish_clustering_device(level, plan: DevicePlan, max_weight: int, config, merge_key, partner, proposals,
                             base_budget: int, keyed: bool = True):
    """:func:`hgpart.coarsening.matching.finish_clustering` on the device, step for step, with one read a
    joining round (the budget left), so that the host does not wait for the device at each step. Unlike the
    CPU it runs the first joining round even when the matching alone spent the budget: that round admits
    nobody (the CPU's loop would not have started), so the map is the same.

    Parameters
    ----------
    level : Hypergraph
        On the device, n vertices.
    plan : DevicePlan
        The level's work plan, for the joining rounds' proposals.
    max_weight : int
    config : CoarseningConfig
    merge_key : device int64[n]
        -1 for none.
    partner : device int32[n]
        The matching (-1 unmatched; v for a vertex of a pair level, as the CPU's).
    proposals : device int32[n]
        Scratch for the joining rounds' proposals.
    base_budget : int
        At most this many vertices minus the pairs join (the shrink cap).
    keyed : bool
        False when no vertex has a merge key: the 2-hop step then sorts one key per vertex
        (:func:`.two_hop._two_hop_unkeyed`).

    Returns
    -------
    cluster : device int32[n]
    n' : int
    """
    x = xp()
    n = partner.shape[0]
    weights = level.vertex_weights
    state = {"root": x.empty(n, dtype=x.int32), "free": x.empty(n, dtype=x.int32),
             "cluster_weight": x.zeros(n, dtype=x.int64), "cluster_key": merge_key.copy(),
             "budgets": x.zeros(JOIN_ROUNDS + 1, dtype=x.int64), "weights": weights}
    launch(pair_roots_kernel, grid(n), partner, weights, merge_key, base_budget, state["root"], state["free"],
           state["cluster_weight"], state["cluster_key"], state["budgets"])
    root = state["root"]
    if config.join_unmatched and n:
        for name, dtype in (("root_keys", x.int64), ("root_weights", x.int64), ("keys", x.int64),
                            ("sorted_weights", x.int64), ("fits", x.int64)):
            state[name] = x.empty(n, dtype=dtype)
        budget = 0
        for round_index in range(JOIN_ROUNDS):
            before, budget = _join_round(state, plan, round_index, max_weight, merge_key, proposals)
            if before == budget or budget <= 0:  # nobody joined, or the budget is spent
                break
        if config.two_hop and budget > 0:  # the cluster each lone vertex would join without the weight limit
            launch(root_views_kernel, grid(n), root, state["cluster_key"], state["cluster_weight"],
                   state["root_keys"], state["root_weights"])
            plan.propose(state["root_keys"], state["root_weights"], state["free"], proposals, False,
                         max_weight=UNBOUNDED)
            if keyed:
                first, second = two_hop_pairs(x, state["free"] < 0, proposals, root, merge_key, weights,
                                              max_weight, budget, x.diff(level.vertex_offsets) == 0)
                root[second] = first
            else:
                _two_hop_unkeyed(state, level, proposals, max_weight, budget)
    return number_clusters_device(root)
