"""Host coarsening: similarity, clustering and two-hop pairs, contraction, the hierarchy, and the serial and
parallel drivers."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgpart import Hypergraph, generate
from hgpart.coarsening import coarsen
from hgpart.coarsening.contraction import contract
from hgpart.coarsening.matching import compute_clustering, map_level, two_hop_pairs
from hgpart.coarsening.rules import join_targets
from hgpart.coarsening.similarity import similarity
from hgpart.config import CoarseningConfig
from hgpart.hypergraph import ARRAYS, _sort_dedup_segments, sort_dedup_segments_parallel
from hgpart.io import read_hypergraph
from hgpart.metrics import evaluate

from ..helpers import IBM01, random_hypergraph


def test_similarity_is_the_weighted_inner_product_of_columns():
    hypergraph, _ = random_hypergraph(3, 30, 60, 5, weighted=True)
    incidence = hypergraph.to_sparse().astype(np.int64)
    inner = (incidence.T @ (incidence.multiply(hypergraph.net_weights[:, None]))).toarray()  # Eq. 8
    for v in range(hypergraph.num_vertices):
        scores = similarity(hypergraph, v)
        expected = {u: float(inner[v, u]) for u in range(hypergraph.num_vertices) if u != v and inner[v, u] > 0}
        assert scores == expected


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), rating=st.sampled_from(["heavy-edge", "inner-product"]),
       join=st.booleans(), penalty=st.booleans())
def test_clustering_respects_weights_and_is_onto(seed, rating, join, penalty):
    hypergraph, _ = random_hypergraph(seed, 60, 90, 5, weighted=True)
    config = CoarseningConfig(rating=rating, join_unmatched=join, weight_penalty=penalty)
    max_weight = 6
    cluster, count = compute_clustering(hypergraph, max_weight, config)
    assert set(cluster.tolist()) == set(range(count))  # onto 0..n'-1
    weights = np.zeros(count, dtype=np.int64)
    np.add.at(weights, cluster, hypergraph.vertex_weights)
    assert weights.max() <= max(max_weight, hypergraph.vertex_weights.max())
    if not join:  # a matching: clusters of at most two vertices
        assert np.bincount(cluster).max() <= 2


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), budget=st.integers(0, 30))
def test_two_hop_pairs_equal_a_plain_model(seed, budget):
    """Lone vertices that proposed to the same cluster (with the same merge key) pair up in vertex order,
    within the weight limit and the budget, in order of (cluster, key, first vertex); lone isolated
    vertices (no proposal possible) pair up with each other first."""
    rng = np.random.default_rng(seed)
    n = 60
    alone = rng.random(n) < 0.7
    isolated = rng.random(n) < 0.2
    proposals = np.where((rng.random(n) < 0.85) & ~isolated, rng.integers(0, n, n), -1).astype(np.int32)
    root = np.minimum(np.arange(n), rng.integers(0, n, n)).astype(np.int32)  # each vertex's cluster
    merge_key = np.where(rng.random(n) < 0.3, rng.integers(0, 2, n), -1).astype(np.int64)
    weights = rng.integers(1, 4, n).astype(np.int64)
    first, second = two_hop_pairs(np, alone, proposals, root, merge_key, weights, 5, budget, isolated)
    groups = {}
    for v in range(n):
        if alone[v] and isolated[v]:
            groups.setdefault((-1, int(merge_key[v])), []).append(v)
        elif alone[v] and proposals[v] >= 0:
            groups.setdefault((int(root[proposals[v]]), int(merge_key[v])), []).append(v)
    expected = []
    for group in sorted(groups):
        members = groups[group]
        expected += [(a, b) for a, b in zip(members[0::2], members[1::2]) if weights[a] + weights[b] <= 5]
    assert list(zip(first.tolist(), second.tolist())) == expected[:budget]


@pytest.mark.parametrize("seed", range(6))
def test_join_targets_equal_a_plain_model_and_never_chain(seed):
    """A free proposer joins its target's cluster unless another free vertex proposes to it (then it stays),
    the larger of a mutual pair with no other suitor joining the smaller: a loop per vertex agrees, and
    every joiner lands on a vertex that stays."""
    rng = np.random.default_rng(seed)
    n = 80
    root = np.minimum(np.arange(n), rng.integers(0, n, n)).astype(np.int32)
    while not np.array_equal(root[root], root):  # a cluster's root is its own root
        root = root[root]
    members = np.bincount(root, minlength=n)
    free = np.where((root != np.arange(n)) | (members > 1), root, -1).astype(np.int32)
    alone = np.flatnonzero(free < 0)
    proposals = np.where(rng.random(n) < 0.8, rng.integers(0, n, n), -1).astype(np.int32)
    for v in alone[:6]:  # a few mutual pairs among the free vertices
        u = int(rng.choice(alone))
        if u != v:
            proposals[v], proposals[u] = u, v
    proposals[proposals == np.arange(n)] = -1
    final = join_targets(np, proposals, root, free)
    expected = root.copy()
    for v in range(n):
        if free[v] >= 0 or proposals[v] < 0:
            continue
        suitors = [u for u in range(n) if u != v and free[u] < 0 and proposals[u] >= 0 and root[proposals[u]] == v]
        u = int(proposals[v])
        if not suitors or (suitors == [u] and proposals[u] == v and u < v):
            expected[v] = root[u]
    np.testing.assert_array_equal(final, expected)
    movers = np.flatnonzero(final != root)
    assert movers.size > 0
    assert np.array_equal(final[final[movers]], final[movers])  # no joiner's target moves


def test_a_lone_vertex_joins_the_pair_it_shares_most_nets_with():
    """v (4) shares a net of weight 3 with each of a (0) and b (1), which are matched, and one of weight 5
    with c (2), matched with d (3): the pair {a, b} as a whole rates 6 against {c, d}'s 5, so v joins a and b
    (rating single vertices, it would join c and d)."""
    nets = [[0, 1], [2, 3], [4, 0], [4, 1], [4, 2]]
    hypergraph = Hypergraph.from_pin_lists(nets, 5, net_weights=[10, 10, 3, 3, 5])
    cluster, count = compute_clustering(hypergraph, 3, CoarseningConfig(two_hop=False))
    assert count == 2
    assert cluster[4] == cluster[0] == cluster[1] != cluster[2] == cluster[3]


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10**6), weighted=st.booleans())
def test_contracting_the_pair_level_gives_the_coarse_level_of_the_map(seed, weighted):
    """The hierarchy contracts the pair level by the joining's map (fewer pins); the result must be the
    coarse level of the level's own map, array for array."""
    hypergraph, _ = random_hypergraph(seed, 80, 120, 6, weighted=weighted)
    level_map = map_level(hypergraph, 6, CoarseningConfig())
    assert level_map.pairs is not None and level_map.pairs.num_vertices < hypergraph.num_vertices
    direct = contract(hypergraph, level_map.cluster, level_map.count)
    via_pairs = contract(*level_map.contraction_input(hypergraph), level_map.count)
    for field in ("net_offsets", "pin_vertices", "net_weights", "vertex_weights", "vertex_offsets", "incident_nets"):
        np.testing.assert_array_equal(getattr(via_pairs, field), getattr(direct, field))


def test_the_joining_skips_the_pair_level_on_large_levels_where_the_matching_paired_almost_nobody():
    """On a long-tailed input the matching pairs almost nobody (everyone's best neighbour is a hub): on a
    level of at least ``pair_level_skip_pins`` pins the joining then runs on the level itself; on smaller
    levels, and where the matching paired enough (a random input), on the pair level. Every map respects the
    weight limit."""
    long_tailed = generate.long_tailed(3000, seed=2)
    random_input = random_hypergraph(3, 300, 500, 6)[0]
    large = CoarseningConfig(pair_level_skip_pins=0)
    for hypergraph, max_weight, config, on_pairs in (
            (long_tailed, -(-long_tailed.total_vertex_weight // 320), large, False),
            (long_tailed, -(-long_tailed.total_vertex_weight // 320), CoarseningConfig(), True),
            (random_input, 6, large, True),
            (random_input, 6, replace(large, pair_level_min_paired=1.0), False)):
        level_map = map_level(hypergraph, max_weight, config)
        assert (level_map.pairs is not None) == on_pairs
        assert np.bincount(level_map.cluster, weights=hypergraph.vertex_weights).max() <= max_weight


def test_two_hop_coarsening_shrinks_hub_dominated_inputs():
    """On a long-tailed input nearly everyone's best neighbour is a hub, whose clusters fill up: matching and
    joining alone leave many vertices alone; pairing those that would join the same cluster but for its
    weight shrinks the level to the cap (n / max_shrink_factor clusters)."""
    hypergraph = generate.long_tailed(3000, seed=2)
    max_weight = -(-hypergraph.total_vertex_weight // 320)
    _, without = compute_clustering(hypergraph, max_weight, CoarseningConfig(two_hop=False))
    cluster, count = compute_clustering(hypergraph, max_weight, CoarseningConfig())
    assert without > 1.15 * count and count == 3000 / CoarseningConfig().max_shrink_factor, (without, count)
    weights = np.bincount(cluster, weights=hypergraph.vertex_weights)
    assert weights.max() <= max_weight


def test_isolated_vertices_pair_up_so_coarsening_shrinks():
    """Cheng, Cho and Yoon's synthetic matrix at 14k: 13,980 of 14,000 vertices are in no net. Pairing the lone
    isolated vertices lets every level shrink; the hubs (in almost every net) end up in few clusters."""
    hypergraph = generate.synthetic(14_000, seed=1)
    assert int((np.diff(hypergraph.vertex_offsets) == 0).sum()) == 14_000 - 20
    max_weight = -(-hypergraph.total_vertex_weight // 320)
    cluster, count = compute_clustering(hypergraph, max_weight, CoarseningConfig())
    assert count < 0.6 * 14_000, count
    assert np.bincount(cluster, weights=hypergraph.vertex_weights).max() <= max_weight
    hierarchy = coarsen(hypergraph, 2, CoarseningConfig(), 0.03, None)
    coarsest = hierarchy.coarsest.hypergraph
    assert coarsest.num_vertices < 2_000, coarsest.num_vertices


def test_matching_pairs_are_mutual_best_choices():
    """Without joining, every pair holds two vertices that are each other's best candidate at some round."""
    hypergraph, _ = random_hypergraph(11, 40, 80, 3)
    config = CoarseningConfig(join_unmatched=False, weight_penalty=False, rating="inner-product")
    cluster, _ = compute_clustering(hypergraph, 10**9, config)
    for c in np.flatnonzero(np.bincount(cluster) == 2):
        u, v = np.flatnonzero(cluster == c)
        assert similarity(hypergraph, u)[v] > 0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_contraction_preserves_km1_and_weights(seed):
    hypergraph, _ = random_hypergraph(seed, 50, 80, 6, weighted=True)
    cluster, count = compute_clustering(hypergraph, 8, CoarseningConfig())
    coarse = contract(hypergraph, cluster, count)
    assert coarse.total_vertex_weight == hypergraph.total_vertex_weight
    assert coarse.net_sizes().min(initial=2) >= 2
    nets = {tuple(coarse.pin_vertices[coarse.net_offsets[e]:coarse.net_offsets[e + 1]]) for e in range(coarse.num_nets)}
    assert len(nets) == coarse.num_nets  # identical nets merged
    rng = np.random.default_rng(seed)
    for k in (2, 3, 5):
        coarse_partition = rng.integers(0, k, count)
        projected = coarse_partition[cluster]  # Eq. 5
        assert projected.shape[0] == hypergraph.num_vertices
        fine, small = evaluate(hypergraph, projected, k), evaluate(coarse, coarse_partition, k)
        assert (fine.km1, fine.cut, fine.block_weights) == (small.km1, small.cut, small.block_weights)


def test_coarsening_stops_at_the_contraction_limit():
    hypergraph = read_hypergraph(IBM01)
    hierarchy = coarsen(hypergraph, 2)
    limit = 2 * CoarseningConfig().contraction_limit_factor
    sizes = [level.hypergraph.num_vertices for level in hierarchy.levels] + [hierarchy.coarsest.hypergraph.num_vertices]
    assert sizes[0] == 12752 and all(a > b for a, b in zip(sizes, sizes[1:]))
    assert sizes[-1] <= limit or sizes[-1] > 0.99 * sizes[-2] or sizes[-2] > limit
    assert hierarchy.coarsest.hypergraph.vertex_weights.max() <= -(-12752 // limit)
    for level in hierarchy.levels:
        assert level.cluster.shape[0] == level.hypergraph.num_vertices


def test_sort_dedup_serial_and_parallel_drivers_agree():
    """The serial driver of the per-segment sort without repeats (the hypergraph's construction) equals the
    parallel one, and both equal numpy's unique per segment."""
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 9, 30_000) + (rng.random(30_000) < 0.01) * 200  # some longer than an insertion sort's
    long_offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = rng.integers(0, 60, long_offsets[-1]).astype(np.int32)  # repeats within segments
    serial = _sort_dedup_segments(long_offsets, values)
    parallel = sort_dedup_segments_parallel(long_offsets, values)
    for ours, theirs in zip(serial, parallel):
        np.testing.assert_array_equal(ours, theirs)
    expected = [np.unique(values[a:b]) for a, b in zip(long_offsets[:-1], long_offsets[1:])]
    np.testing.assert_array_equal(np.diff(serial[0]), [row.shape[0] for row in expected])
    np.testing.assert_array_equal(serial[1], np.concatenate(expected))


def _contraction_by_definition(hypergraph, cluster, count):
    """Eq. 3-4 in plain Python: each net's mapped pins without repeats, nets of fewer than two dropped, identical
    ones merged into the first with their weights added, vertex weights summed; the six arrays of the result."""
    first_of, nets, weights = {}, [], []
    for e in range(hypergraph.num_nets):
        pins = hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]]
        pins = tuple(sorted({int(cluster[v]) for v in pins}))
        if len(pins) < 2:
            continue
        if pins in first_of:
            weights[first_of[pins]] += int(hypergraph.net_weights[e])
            continue
        first_of[pins] = len(nets)
        nets.append(pins)
        weights.append(int(hypergraph.net_weights[e]))
    incident = [[] for _ in range(count)]
    for e, pins in enumerate(nets):
        for v in pins:
            incident[v].append(e)
    vertex_weights = np.zeros(count, dtype=np.int64)
    np.add.at(vertex_weights, cluster, hypergraph.vertex_weights)
    return (np.cumsum([0] + [len(pins) for pins in nets]), [v for pins in nets for v in pins],
            np.cumsum([0] + [len(nets) for nets in incident]), [e for nets in incident for e in nets], vertex_weights,
            weights)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_contraction_on_threads_equals_its_definition_and_the_serial_driver(seed):
    """Large levels contract on numba's threads (their nets merged bucket by bucket, the incidence transposed per
    range of nets): array for array the serial driver's result and Eq. 3-4 computed in plain Python, on an input
    with many identical nets (copies, and nets that a map makes equal), nets that lose all but one pin, hubs,
    vertices that no net keeps and a few long nets."""
    from hgpart.coarsening import contraction

    rng = np.random.default_rng(seed)
    n, count = 6_000, 900
    nets = [rng.choice(n, size=int(rng.integers(1, 7)), replace=False) for _ in range(20_000)]
    nets += [nets[int(i)] for i in rng.integers(0, len(nets), 4_000)]  # copies
    nets += [rng.choice(60, size=int(rng.integers(2, 4)), replace=False) for _ in range(3_000)]  # hubs' nets
    nets += [rng.choice(n, size=300, replace=False) for _ in range(20)]
    hypergraph = Hypergraph.from_pin_lists(nets, n, rng.integers(1, 5, n), rng.integers(1, 9, len(nets)))
    cluster = rng.integers(0, count, n).astype(np.int32)
    cluster[rng.random(n) < 0.05] = count - 1
    serial = contraction._contract_serial(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights,
                                          hypergraph.vertex_weights, cluster, count)
    expected = _contraction_by_definition(hypergraph, cluster, count)
    for threads in (1, 2, 5):
        threaded = contraction._contract_on_threads(hypergraph, cluster, count, threads)
        assert threaded.num_nets < 0.9 * len(nets)  # the input has merges and drops to make
        for field, ours, by_definition in zip(ARRAYS, serial, expected):
            theirs = getattr(threaded, field)
            assert theirs.dtype == ours.dtype, field
            np.testing.assert_array_equal(theirs, ours)
            np.testing.assert_array_equal(theirs, np.asarray(by_definition, dtype=theirs.dtype))


def test_identical_nets_merge_into_the_first_whatever_their_hashes_share():
    """The merge walks nets sorted by hash and compares those of equal hash (a collision is possible): only nets
    with the same pins merge, each into the first of them, also where different nets share a hash."""
    from hgpart.coarsening.contraction import _merge_sorted

    offsets = np.array([0, 2, 4, 6, 8, 10, 13], dtype=np.int64)
    pins = np.array([1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 1, 2, 3], dtype=np.int32)  # nets 0 = 2 = 4, 1 = 3, 5 apart
    hashes = np.array([7, 7, 7, 7, 7, 7], dtype=np.uint64)  # all collide
    keep = np.ones(6, dtype=np.bool_)
    merged = np.array([1, 10, 100, 1000, 10000, 100000], dtype=np.int64)
    _merge_sorted(np.arange(6), 0, 6, hashes, offsets, pins, keep, merged)
    np.testing.assert_array_equal(keep, [True, True, False, False, False, True])
    np.testing.assert_array_equal(merged[keep], [10101, 1010, 100000])


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), clusters=st.integers(1, 40))
def test_contraction_in_one_serial_call_equals_the_stepwise_one(seed, clusters):
    """contract's single njit call (small levels: the bisections' coarsening) against its step-by-step path
    (large levels), array for array: maps that merge pins, drop nets and make identical nets."""
    from hgpart.coarsening import contraction

    hypergraph, _ = random_hypergraph(seed, 50, 80, 6, weighted=True)
    cluster = np.random.default_rng(seed).integers(0, clusters, 50).astype(np.int32)
    count = int(cluster.max()) + 1
    one_call = contract(hypergraph, cluster, count)
    stepwise = contraction.runs_serially
    try:
        contraction.runs_serially = lambda work: False
        steps = contract(hypergraph, cluster, count)
    finally:
        contraction.runs_serially = stepwise
    for field in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights", "net_weights"):
        np.testing.assert_array_equal(getattr(one_call, field), getattr(steps, field))
        assert getattr(one_call, field).dtype == getattr(steps, field).dtype, field


@settings(max_examples=60, deadline=None)
@given(hashes=st.lists(st.one_of(st.integers(0, 2**64 - 1), st.sampled_from([0, 255, 256, 2**63, 2**64 - 1])),
                       max_size=600))
def test_radix_order_of_net_hashes_is_a_stable_argsort(hashes):
    """contract orders the nets by hash with an LSD radix sort: the permutation of numpy's stable argsort,
    ties (identical nets) in id order; digits at the ends of each byte and of the word."""
    from hgpart.coarsening.contraction import _stable_order

    keys = np.array(hashes, dtype=np.uint64)
    order = _stable_order(keys)
    np.testing.assert_array_equal(order, np.argsort(keys, kind="stable"))
    assert order.dtype == np.int64


def test_matching_in_one_serial_call_equals_the_parallel_rounds(monkeypatch):
    """compute_clustering's matching rounds in one serial njit call (_match_serial, on small levels and
    one-thread callers) give the same map as the rounds driven from Python with the parallel proposals,
    with and without merge keys, on unit and skewed vertex weights."""
    import numba

    from hgpart import parallel
    from hgpart.coarsening import matching

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("the parallel drivers need two numba threads")

    rng = np.random.default_rng(8)
    hypergraphs = [read_hypergraph(IBM01), generate.grid(2500, seed=1), generate.long_tailed(1500, seed=2)]
    weighted = hypergraphs[1]
    hypergraphs.append(Hypergraph.from_pins(weighted.num_vertices, weighted.net_offsets, weighted.pin_vertices,
                                            vertex_weights=rng.integers(1, 9, weighted.num_vertices)))
    threads = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        for hypergraph in hypergraphs:
            for keys in (None, rng.integers(-1, 3, hypergraph.num_vertices)):
                max_weight = max(2, 3 * hypergraph.total_vertex_weight // hypergraph.num_vertices)
                serial = compute_clustering(hypergraph, max_weight, CoarseningConfig(), keys, threads=1)
                with parallel.all_parallel(), monkeypatch.context() as patch:
                    patch.setattr(matching, "_match_serial", None)  # the rounds must not take it
                    rounds = compute_clustering(hypergraph, max_weight, CoarseningConfig(), keys, threads=2)
                np.testing.assert_array_equal(serial[0], rounds[0])
                assert serial[1] == rounds[1] < hypergraph.num_vertices
    finally:
        numba.set_num_threads(threads)
