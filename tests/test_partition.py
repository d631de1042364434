"""The multilevel partitioner: brute-force optima, balance, invariants of coarsening, determinism."""


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgpart import Hypergraph, InfeasibleError, generate
from hgpart.coarsening import coarsen
from hgpart.coarsening.contraction import contract
from hgpart.coarsening.matching import compute_clustering, two_hop_pairs
from hgpart.coarsening.similarity import similarity
from hgpart.config import CoarseningConfig, make_config
from hgpart.io import read_hypergraph
from hgpart.metrics import evaluate, max_block_weight
from hgpart.multilevel import partition
from hgpart.policy import Policy
from hgpart.initial.bisection import greedy_bisection, label_propagation_bisection
from hgpart.refinement.fm import fm
from hgpart.hypergraph import scatter_sum
from hgpart.refinement.gains import compute_pin_counts, objective_from_pin_counts

from .conftest import DATA
from .naive import best_partition_naive, greedy_growing_naive, label_propagation_bisection_naive

IBM01 = str(DATA / "ibm01.hgr")


def random_hypergraph(seed, n, m, max_size=4, weighted=False):
    rng = np.random.default_rng(seed)
    nets = [rng.choice(n, size=int(rng.integers(2, max_size + 1)), replace=False) for _ in range(m)]
    vertex_weights = rng.integers(1, 4, n) if weighted else None
    net_weights = rng.integers(1, 5, m) if weighted else None
    return Hypergraph.from_pin_lists(nets, n, vertex_weights, net_weights), nets


# ------------------------------------------------------------------------------------- similarity
def test_similarity_is_the_weighted_inner_product_of_columns():
    hypergraph, _ = random_hypergraph(3, 30, 60, 5, weighted=True)
    incidence = hypergraph.to_sparse().astype(np.int64)
    inner = (incidence.T @ (incidence.multiply(hypergraph.net_weights[:, None]))).toarray()  # Eq. 8
    for v in range(hypergraph.num_vertices):
        scores = similarity(hypergraph, v)
        expected = {u: float(inner[v, u]) for u in range(hypergraph.num_vertices) if u != v and inner[v, u] > 0}
        assert scores == expected


# ------------------------------------------------------------------------------------- coarsening
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


def test_two_hop_coarsening_shrinks_hub_dominated_inputs():
    """On a long-tailed input nearly everyone's best neighbour is a hub: matching and joining alone leave
    most vertices alone; pairing those that proposed to the same cluster shrinks the level far more."""
    hypergraph = generate.long_tailed(3000, seed=2)
    max_weight = -(-hypergraph.total_vertex_weight // 320)
    _, without = compute_clustering(hypergraph, max_weight, CoarseningConfig(two_hop=False))
    cluster, count = compute_clustering(hypergraph, max_weight, CoarseningConfig())
    assert without > 0.9 * 3000 and count < 0.7 * 3000, (without, count)
    weights = np.bincount(cluster, weights=hypergraph.vertex_weights)
    assert weights.max() <= max_weight


def test_isolated_vertices_pair_up_so_coarsening_shrinks():
    """Seed 000's synthetic matrix at 14k: 13,980 of 14,000 vertices are in no net. Pairing the lone
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


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("algorithm", ["greedy", "label-propagation"])
def test_flat_bisections_equal_plain_models(seed, algorithm):
    """Greedy growing (delta gains, one heap update per vertex and move) and label propagation (per-net
    counts of assigned pins) against models that recompute every gain and connection from the nets; some
    instances have vertices fixed to a side, some several components (restarts)."""
    n = 24
    h, nets = random_hypergraph(seed, n, 10 + seed * 3, max_size=6, weighted=seed % 2 == 1)
    rng = np.random.default_rng(seed + 100)
    fixed_side = np.full(n, -1, dtype=np.int8)
    if seed % 4 == 3:
        fixed_side[rng.choice(n, size=4, replace=False)] = [0, 0, 1, 1]
    target0 = int(h.total_vertex_weight // 2)
    order = np.random.RandomState(seed).permutation(n)  # numba's np.random.permutation after seed(seed)
    pins = [sorted(int(v) for v in net) for net in nets]
    args = (n, pins, [int(w) for w in h.net_weights], [int(w) for w in h.vertex_weights], fixed_side, target0, order)
    if algorithm == "greedy":
        got = greedy_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                               h.vertex_weights, fixed_side, target0, seed, False)
        expected = greedy_growing_naive(*args)
    else:
        got = label_propagation_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                                          h.net_weights, h.vertex_weights, fixed_side, target0, seed)
        expected = label_propagation_bisection_naive(*args)
    assert got.tolist() == expected


def test_coarsening_stops_at_the_contraction_limit():
    hypergraph = read_hypergraph(IBM01)
    hierarchy = coarsen(hypergraph, 2)
    sizes = [level.hypergraph.num_vertices for level in hierarchy.levels] + [hierarchy.coarsest.hypergraph.num_vertices]
    assert sizes[0] == 12752 and all(a > b for a, b in zip(sizes, sizes[1:]))
    assert sizes[-1] <= 320 or sizes[-1] > 0.99 * sizes[-2] or sizes[-2] > 320
    assert hierarchy.coarsest.hypergraph.vertex_weights.max() <= -(-12752 // 320)
    for level in hierarchy.levels:
        assert level.cluster.shape[0] == level.hypergraph.num_vertices


# ------------------------------------------------------------------------------------- refinement
def test_fm_gain_matches_the_objective_change():
    hypergraph, _ = random_hypergraph(5, 200, 400, 4, weighted=True)
    for k, cut_objective in ((2, False), (4, False), (4, True)):
        rng = np.random.default_rng(k)
        blocks = rng.integers(0, k, hypergraph.num_vertices).astype(np.int32)
        pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, blocks, k)
        weights = scatter_sum(blocks, hypergraph.vertex_weights, k)
        bound = np.full(k, max(int(weights.max()), max_block_weight(hypergraph.total_vertex_weight, k, 0.1)))
        before = evaluate(hypergraph, blocks, k)
        gained = fm(hypergraph, blocks, pin_counts, weights, bound, k, np.ones(hypergraph.num_vertices, bool),
                    cut_objective, 5, 200, 1000)
        after = evaluate(hypergraph, blocks, k)
        objective = "cut" if cut_objective else "km1"
        assert getattr(before, objective) - getattr(after, objective) == gained > 0
        assert max(after.block_weights) <= bound[0]
        np.testing.assert_array_equal(pin_counts, compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices,
                                                                     blocks, k))


def test_fm_stops_after_a_pass_below_the_relative_improvement():
    """Each pass's gain against min_improvement times the objective the pass started from: the passes run
    with a threshold are the prefix of the passes run without one that ends at the first pass below it."""
    hypergraph, _ = random_hypergraph(7, 300, 600, 4, weighted=True)
    for k, cut_objective in ((2, False), (4, False), (4, True)):
        start = np.random.default_rng(k).integers(0, k, hypergraph.num_vertices).astype(np.int32)
        movable = np.ones(hypergraph.num_vertices, bool)

        def run(passes, min_improvement=0.0):
            blocks = start.copy()
            pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, blocks, k)
            weights = scatter_sum(blocks, hypergraph.vertex_weights, k)
            bound = np.full(k, max(int(weights.max()), max_block_weight(hypergraph.total_vertex_weight, k, 0.1)))
            gained = fm(hypergraph, blocks, pin_counts, weights, bound, k, movable, cut_objective, passes, 200, 1000,
                        min_improvement)
            return gained, blocks

        objective = getattr(evaluate(hypergraph, start, k), "cut" if cut_objective else "km1")
        totals = [run(passes)[0] for passes in range(1, 6)]
        gains = np.diff([0] + totals)
        assert gains[0] > 0 and gains[1] > 0  # the instance needs more than one pass
        before = objective - np.concatenate([[0], np.cumsum(gains)[:-1]])
        for threshold in (0.0, 0.5 * gains[1] / before[1], 1.0):
            expected = next((p for p in range(1, 6) if gains[p - 1] <= threshold * before[p - 1]), 5)
            gained, blocks = run(5, threshold)
            assert gained == totals[expected - 1]
            np.testing.assert_array_equal(blocks, run(expected)[1])


def test_objective_from_pin_counts_is_the_metrics_objective():
    hypergraph, _ = random_hypergraph(3, 100, 200, 5, weighted=True)
    for k in (2, 3, 7):
        blocks = np.random.default_rng(k).integers(0, k, hypergraph.num_vertices).astype(np.int32)
        pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, blocks, k)
        metrics = evaluate(hypergraph, blocks, k)
        for cut_objective, expected in ((False, metrics.km1), (True, metrics.cut)):
            assert objective_from_pin_counts(hypergraph.net_offsets, hypergraph.net_weights, pin_counts, k,
                                             cut_objective) == expected


# -------------------------------------------------------------------------------- whole partitioner
def tiny_instances():
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(6, 13))
        yield seed, random_hypergraph(seed, n, int(rng.integers(n, 2 * n)), 4, weighted=seed % 2 == 1)


def test_reaches_the_brute_force_optimum_on_most_tiny_instances():
    optimal = total = 0
    for seed, (hypergraph, nets) in tiny_instances():
        nets_sorted = [sorted(set(int(v) for v in net)) for net in nets]
        for k in (2, 3):
            if k == 3 and hypergraph.num_vertices > 10:
                continue
            best = best_partition_naive(hypergraph.num_vertices, nets_sorted, hypergraph.net_weights.tolist(),
                                        hypergraph.vertex_weights.tolist(), k, 0.1)
            if best is None:
                continue
            result = partition(hypergraph, k, 0.1, seed=seed)
            assert result.metrics.balanced
            assert result.metrics.km1 >= best
            optimal += result.metrics.km1 == best
            total += 1
    assert total >= 15 and optimal >= 0.8 * total, (optimal, total)


@pytest.mark.parametrize("k", [2, 3, 8])
@pytest.mark.parametrize("objective", ["km1", "cut"])
def test_partitions_are_balanced_and_deterministic(k, objective):
    hypergraph = read_hypergraph(str(DATA / "sat14_AProVE07-27.cnf.primal.hgr.gz"))
    first = partition(hypergraph, k, 0.03, objective, seed=7, preset="fast")
    again = partition(hypergraph, k, 0.03, objective, seed=7, preset="fast")
    np.testing.assert_array_equal(first.partition, again.partition)
    bound = max_block_weight(hypergraph.total_vertex_weight, k, 0.03)
    assert first.metrics.balanced and max(first.metrics.block_weights) <= bound
    assert set(first.partition.tolist()) == set(range(k))
    random_blocks = np.random.default_rng(0).integers(0, k, hypergraph.num_vertices)
    assert getattr(first.metrics, objective) < 0.5 * getattr(evaluate(hypergraph, random_blocks, k), objective)


def test_weighted_vertices_and_fixed_vertices():
    hypergraph, _ = random_hypergraph(21, 300, 500, 4, weighted=True)
    fixed = np.full(300, -1)
    fixed[:10] = 0
    fixed[10:20] = 3
    fixed[20:25] = 1
    result = partition(hypergraph, 4, 0.05, fixed=fixed, seed=1)
    assert (result.partition[:10] == 0).all() and (result.partition[10:20] == 3).all()
    assert (result.partition[20:25] == 1).all()
    assert result.metrics.balanced


def test_infeasible_inputs_raise():
    heavy = Hypergraph.from_pin_lists([[0, 1], [1, 2]], 3, vertex_weights=[10, 1, 1])
    with pytest.raises(InfeasibleError, match="exceeds the block bound"):
        partition(heavy, 2, 0.03)
    hypergraph = Hypergraph.from_pin_lists([[0, 1], [2, 3]], 4)
    with pytest.raises(InfeasibleError, match="fixed to block 0"):
        partition(hypergraph, 2, 0.0, fixed=[0, 0, 0, -1])


def test_k1_and_presets():
    hypergraph = read_hypergraph(IBM01)
    assert partition(hypergraph, 1).metrics.km1 == 0
    fast = partition(hypergraph, 2, preset="fast")
    assert fast.metrics.balanced
    with pytest.raises(Exception, match="unknown preset"):
        make_config(2, preset="slow")


def test_portfolio_pin_budget_caps_runs_and_fm(monkeypatch):
    """Within the budget the portfolio runs in full; over it, one run per algorithm and one FM candidate
    (the arguments of its one-call form, _portfolio_serial: the run seeds and the FM candidates, which the
    njit code takes as given; its equality with the threaded runs is tested below)."""
    from hgpart.config import FMConfig, InitialConfig, LabelPropagationConfig
    from hgpart.initial import portfolio

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    calls = []
    in_one_call = portfolio._portfolio_serial

    def counting(*args):
        calls.append((len(args[1]), min(args[14], len(args[1]))))
        return in_one_call(*args)

    monkeypatch.setattr(portfolio, "_portfolio_serial", counting)
    half = hypergraph.total_vertex_weight // 2
    fixed_side = np.full(hypergraph.num_vertices, -1, dtype=np.int32)
    for budget, runs, fm_runs in ((10**9, 3 * 4, 6), (hypergraph.num_pins * 5, 4, 4), (1, 4, 1)):
        calls.clear()
        config = InitialConfig(runs=3, fm_candidates=6, pin_budget=budget)
        sides = portfolio.bisect(hypergraph, [half + 500, half + 500], half, fixed_side, 0, config,
                                 LabelPropagationConfig(), FMConfig(), False)
        assert calls == [(runs, fm_runs)], budget
        assert np.bincount(sides, weights=hypergraph.vertex_weights, minlength=2).max() <= half + 500


def test_initial_fm_threshold_only_on_coarsest_levels_with_many_pins(monkeypatch):
    """The policy hands the initial partitioning's FM the relative improvement threshold only where the coarsest level has more than
    pin_budget / 20 pins."""
    from dataclasses import replace

    from hgpart import multilevel

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    seen = []
    initial_partition = multilevel.initial_partition

    def recording(coarsest, k, epsilon, config, *args):
        seen.append(config.fm.min_improvement)
        return initial_partition(coarsest, k, epsilon, config, *args)

    monkeypatch.setattr(multilevel, "initial_partition", recording)
    bounds = np.full(2, max_block_weight(hypergraph.total_vertex_weight, 2, 0.03), dtype=np.int64)
    for pin_budget in (hypergraph.num_pins * 20, hypergraph.num_pins * 20 - 20):
        config = make_config(2, 0.03, "km1", 0)
        config = replace(config, initial=replace(config.initial, pin_budget=pin_budget, runs=1))
        multilevel.initial_partitioning(hypergraph, None, bounds, Policy(config, "cpu", hypergraph.num_pins))
    assert seen == [0.0, config.policy.initial_fm_min_improvement] and seen[1] > 0


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans())
def test_sub_hypergraph_of_a_sub_hypergraph_is_the_one_induced_directly(seed, split_nets):
    """Recursive bisection cuts each half from the sub-hypergraph above it: the result equals the
    sub-hypergraph that the half's vertices induce in the whole (checked against pin lists)."""
    from hgpart.initial.recursive import sub_hypergraph

    rng = np.random.default_rng(seed)
    hypergraph, _ = random_hypergraph(int(rng.integers(2**31)), 30, 40, max_size=7, weighted=True)
    nets = [hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]]
            for e in range(hypergraph.num_nets)]
    outer = np.flatnonzero(rng.random(30) < 0.7)
    local = np.flatnonzero(rng.random(outer.shape[0]) < 0.6)
    vertices = outer[local]
    new_id = {int(v): i for i, v in enumerate(vertices)}
    expected = []
    for net, weight in zip(nets, hypergraph.net_weights):
        inside = [new_id[int(v)] for v in net if int(v) in new_id]
        if len(inside) >= 2 and (split_nets or len(inside) == len(net)):
            expected.append((inside, int(weight)))
    for sub in (sub_hypergraph(sub_hypergraph(hypergraph, outer, split_nets), local, split_nets),
                sub_hypergraph(hypergraph, vertices, split_nets)):
        got = [(sub.pin_vertices[sub.net_offsets[e]:sub.net_offsets[e + 1]].tolist(), int(sub.net_weights[e]))
               for e in range(sub.num_nets)]
        assert got == expected
        assert sub.vertex_weights.tolist() == hypergraph.vertex_weights[vertices].tolist()
        rebuilt = Hypergraph.from_pin_lists([pins for pins, _ in expected], vertices.shape[0],
                                            sub.vertex_weights, [weight for _, weight in expected])
        for field in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights",
                      "net_weights"):
            np.testing.assert_array_equal(getattr(sub, field), getattr(rebuilt, field))
            assert getattr(sub, field).dtype == getattr(rebuilt, field).dtype, field


def test_bisections_skip_coarsening_above_the_rating_budget(monkeypatch):
    """multilevel_bisect coarsens its sub-problem only while a rating round (sum of |e|^2 over rated nets)
    fits InitialConfig.rating_budget; above it the portfolio runs on the sub-problem itself."""
    from dataclasses import replace

    import hgpart.coarsening as coarsening
    from hgpart.coarsening.similarity import rating_work
    from hgpart.initial import recursive

    hypergraph, nets = random_hypergraph(3, 200, 300, max_size=6)
    sizes = np.array([len(net) for net in nets])
    assert rating_work(hypergraph, 1000) == int((sizes ** 2).sum())
    assert rating_work(hypergraph, 5) == int((sizes[sizes <= 5] ** 2).sum())
    calls = []
    real_coarsen = coarsening.coarsen
    monkeypatch.setattr(coarsening, "coarsen", lambda *args, **kwargs: calls.append(1) or real_coarsen(*args, **kwargs))
    config = make_config(4, 0.03, "km1", 0)
    bound = max_block_weight(hypergraph.total_vertex_weight, 4, 0.03)
    whole = int((sizes ** 2).sum())
    for budget, coarsened in ((10**9, 3), (whole - 1, 2), (0, 0)):  # 3 bisections: the whole, then its halves
        calls.clear()
        budgeted = replace(config, initial=replace(config.initial, rating_budget=budget, recursion_threads=1))
        blocks = recursive.initial_partition(hypergraph, 4, 0.03, budgeted, False, 0)
        assert len(calls) == coarsened
        assert np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=4).max() <= bound


def test_initial_phase_caps_threads_and_takes_the_gpu_paths_fm_candidates(monkeypatch):
    """The initial partitioning runs the portfolio on ceil(pins / pins_per_thread) numba threads, restores the
    caller's count, and on the GPU path refines large_input_fm_candidates runs by FM where the input has more
    than device_v_cycle_max_pins pins (else fm_candidates), their FM passes then stopping after
    large_input_fm_fruitless_moves fruitless moves; the partition is the same on any number of numba threads and of recursion threads
    (whose halves run on one numba thread each)."""
    from dataclasses import replace

    import numba

    from hgpart import multilevel
    from hgpart.initial import recursive

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    k = 4
    bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.03), dtype=np.int64)
    seen = {"threads": [], "fm": [], "fruitless": set()}
    bisect = recursive.bisect

    def watching_bisect(*args):  # (hypergraph, max_weights, target0, fixed_side, seed, initial, lp, fm, ...)
        seen["threads"].append(numba.get_num_threads())
        seen["fm"].append(args[5].fm_candidates)
        seen["fruitless"].add(args[7].fruitless_moves)
        return bisect(*args)

    monkeypatch.setattr(recursive, "bisect", watching_bisect)
    before = numba.get_num_threads()
    config = make_config(k, seed=3)
    results = []
    large = config.policy.device_v_cycle_max_pins + 1
    for per_thread, device, workers, input_pins in ((10**9, "cpu", 1, large), (1, "cpu", 1, 0),
                                                    (10**9, "gpu", 1, large), (1, "cpu", 3, 0),
                                                    (10**9, "gpu", 1, large - 1)):
        seen.update(threads=[], fm=[], fruitless=set())
        config = replace(config, initial=replace(config.initial, pins_per_thread=per_thread, fm_candidates=7,
                                                 recursion_threads=workers),
                         policy=replace(config.policy, large_input_fm_candidates=2, large_input_fm_fruitless_moves=17))
        path = "gpu" if device == "gpu" else "cpu"
        blocks = multilevel.initial_partitioning(hypergraph, None, bounds, Policy(config, path, input_pins))
        assert numba.get_num_threads() == before
        # three bisections for k = 4: the first on the caller's (capped) threads, the halves on one each
        # with several workers
        first = 1 if per_thread > 1 else before
        assert seen["threads"] == [first] + [first if workers == 1 else 1] * 2, (per_thread, workers)
        fewer = device == "gpu" and input_pins == large
        assert seen["fm"] == [2 if fewer else 7] * 3
        assert seen["fruitless"] == {17 if fewer else config.fm.fruitless_moves}
        if not fewer:
            results.append(blocks)
    for blocks in results[1:]:
        np.testing.assert_array_equal(blocks, results[0])


def test_contraction_serial_and_parallel_drivers_agree():
    """The serial drivers (taken for small levels and on one-thread workers) equal the parallel ones."""
    from hgpart.coarsening import contraction

    rng = np.random.default_rng(3)
    pins = rng.integers(0, 5000, 250_000).astype(np.int32)
    cluster = rng.integers(0, 700, 5000).astype(np.int32)
    offsets = np.concatenate([[0], np.cumsum(rng.integers(1, 9, 60_000))]).astype(np.int64)
    offsets = offsets[offsets <= pins.shape[0]]
    np.testing.assert_array_equal(contraction._map_pins_serial(pins, cluster),
                                  contraction._map_pins_parallel(pins, cluster))
    np.testing.assert_array_equal(contraction._net_hashes_serial(offsets, pins),
                                  contraction._net_hashes_parallel(offsets, pins))



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


def test_portfolio_in_one_serial_call_equals_the_threaded_runs(monkeypatch):
    """bisect on one worker (_portfolio_serial: every run, the ordering and FM in one njit call) returns the
    same sides as the runs and FM candidates on threads (taken from pins_per_thread pins on): with fixed vertices, where no run can balance
    (bounds below half: FM must skip them), on small grids (FM results tie with the best run), for km1
    and cut."""
    from dataclasses import replace

    from hgpart.initial import portfolio
    from hgpart.initial.portfolio import bisect

    rng = np.random.default_rng(4)
    config = make_config(2)
    for hypergraph in (read_hypergraph(IBM01), generate.long_tailed(1200, seed=3), generate.grid(64, seed=1),
                       generate.grid(144, seed=2)):
        total = hypergraph.total_vertex_weight
        for trial, (slack, runs, candidates) in enumerate(((0.9, 1, 3), (1.03, 2, 5), (1.2, 5, 20))):
            bounds = np.full(2, int(total / 2 * slack), dtype=np.int64)
            fixed = np.full(hypergraph.num_vertices, -1, dtype=np.int32)
            if trial == 1:
                chosen = rng.choice(hypergraph.num_vertices, hypergraph.num_vertices // 10, replace=False)
                fixed[chosen] = rng.integers(0, 2, chosen.size)
            initial = replace(config.initial, runs=runs, fm_candidates=candidates, pins_per_thread=1)
            for cut_objective in (False, True):
                with monkeypatch.context() as patch:  # the threads take the runs one by one
                    patch.setattr(portfolio, "_portfolio_serial", None)
                    threaded = bisect(hypergraph, bounds, total // 2, fixed, trial + 1, initial,
                                      config.label_propagation, config.fm, cut_objective, 3)
                one = bisect(hypergraph, bounds, total // 2, fixed, trial + 1, initial, config.label_propagation,
                             config.fm, cut_objective, 1)
                np.testing.assert_array_equal(one, threaded)
                assert np.all(one[fixed >= 0] == fixed[fixed >= 0])


def test_refinement_serial_call_equals_the_parallel_drivers(monkeypatch):
    """refine takes one serial njit call (refine_serial) on small levels and one-thread callers, and the
    parallel drivers (pin counts, label propagation's rating) above SERIAL_BELOW pins: the same partition."""
    import numba

    from hgpart import parallel
    from hgpart.config import FMConfig, LabelPropagationConfig
    from hgpart.refinement import refine
    from hgpart.refinement.label_propagation import _move_order

    rng = np.random.default_rng(5)
    targets = rng.integers(-1, 4, 3000).astype(np.int32)
    gains = rng.integers(-3, 6, 3000).astype(np.int64)  # many ties
    candidates = np.flatnonzero((targets >= 0) & (gains > 0))
    np.testing.assert_array_equal(_move_order(targets, gains),
                                  candidates[np.lexsort((candidates, -gains[candidates]))])

    hypergraph = read_hypergraph(IBM01)
    k = 8
    blocks = (np.arange(hypergraph.num_vertices) * k // hypergraph.num_vertices).astype(np.int32)
    bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.03), dtype=np.int64)
    movable = np.arange(hypergraph.num_vertices) % 11 != 0
    threads = numba.get_num_threads()
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    try:
        for config in ((LabelPropagationConfig(), FMConfig(passes=0)),
                       (LabelPropagationConfig(rounds=2), FMConfig(passes=2))):
            for cut_objective in (False, True):
                serial = refine(hypergraph, blocks, k, bounds, *config, cut_objective, movable)
                with monkeypatch.context() as patch:
                    patch.setattr(parallel, "SERIAL_BELOW", 0)
                    assert parallel.pick(1, "serial", "parallel") == ("parallel" if numba.get_num_threads() > 1
                                                                     else "serial")
                    parallel_result = refine(hypergraph, blocks, k, bounds, *config, cut_objective, movable)
                np.testing.assert_array_equal(serial, parallel_result)
                assert np.all(serial[~movable] == blocks[~movable])
                before, after = evaluate(hypergraph, blocks, k), evaluate(hypergraph, serial, k)
                assert (after.cut if cut_objective else after.km1) < (before.cut if cut_objective else before.km1)
    finally:
        numba.set_num_threads(threads)


def test_fm_gain_cache_gives_the_gains_of_plain_km1_and_the_same_moves():
    """k-way FM's km1 gain cache: connected[v, b] + common[v] is the km1 drop of moving v to b (checked by
    recounting km1 in plain Python), it stays exact through a pass and its rollback, and the pass makes the
    same moves as one that walks the nets (on a hub-heavy input with weighted nets and single-pin nets)."""
    from hgpart.refinement.fm import fm_pass, km1_gain_cache

    from .naive import metrics_naive

    hypergraph = generate.long_tailed(400, seed=2)
    rng = np.random.default_rng(1)
    nets = [list(hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]])
            for e in range(hypergraph.num_nets)] + [[v] for v in range(0, hypergraph.num_vertices, 7)]
    net_weights = rng.integers(0, 4, len(nets)).astype(np.int64)  # zero-weight nets too
    h = Hypergraph.from_pin_lists(nets, hypergraph.num_vertices, hypergraph.vertex_weights, net_weights)
    assert np.diff(h.vertex_offsets).max() > 40 and (np.diff(h.net_offsets) == 1).any()
    k = 5
    blocks = rng.integers(0, k, h.num_vertices).astype(np.int32)
    pin_counts = compute_pin_counts(h.net_offsets, h.pin_vertices, blocks, k)
    connected, adjacent_nets, common = km1_gain_cache(h.net_offsets, h.vertex_offsets, h.incident_nets,
                                                      h.net_weights, blocks, pin_counts, k)
    km1 = metrics_naive(nets, net_weights, h.vertex_weights, blocks, k)["km1"]
    for v in rng.choice(h.num_vertices, 40, replace=False):
        for b in range(k):
            if b == blocks[v]:
                continue
            moved = blocks.copy()
            moved[v] = b
            drop = km1 - metrics_naive(nets, net_weights, h.vertex_weights, moved, k)["km1"]
            assert connected[v * k + b] + common[v] == drop, (v, b)
            touching = sum(1 for e in h.incident_nets[h.vertex_offsets[v]:h.vertex_offsets[v + 1]]
                           if len(nets[e]) >= 2 and any(blocks[u] == b for u in nets[e]))
            assert adjacent_nets[v * k + b] == touching

    bounds = np.full(k, max_block_weight(h.total_vertex_weight, k, 0.05), dtype=np.int64)
    results = []
    for cached in (True, False):
        partition_, counts = blocks.copy(), pin_counts.copy()
        weights = scatter_sum(partition_, h.vertex_weights, k)
        cache = km1_gain_cache(h.net_offsets, h.vertex_offsets, h.incident_nets, h.net_weights, partition_, counts,
                               k) if cached else (np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64))
        n = h.num_vertices
        gained = fm_pass(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                         h.vertex_weights, partition_, counts, weights, bounds, k, np.ones(n, np.bool_), False, 60,
                         1000, np.empty(n, np.int64), np.zeros(n, np.int64), np.full(n, -1, np.int64),
                         np.zeros(1, np.int64), np.full(n, -1, np.int32), *cache)
        if cached:
            fresh = km1_gain_cache(h.net_offsets, h.vertex_offsets, h.incident_nets, h.net_weights, partition_,
                                   counts, k)
            for kept, recomputed in zip(cache, fresh):
                np.testing.assert_array_equal(kept, recomputed)
        results.append((gained, partition_))
    assert results[0][0] == results[1][0] > 0
    np.testing.assert_array_equal(results[0][1], results[1][1])
    assert metrics_naive(nets, net_weights, h.vertex_weights, results[0][1], k)["km1"] == km1 - results[0][0]


def test_round_robin_meets_every_pair_of_blocks_once_in_disjoint_rounds():
    from hgpart.refinement.pair_fm import round_robin

    for k in range(2, 12):
        schedule = round_robin(k)
        met = []
        for pairs in schedule:
            kept = [tuple(pair) for pair in pairs if pair[0] >= 0]
            blocks = [b for pair in kept for b in pair]
            assert len(blocks) == len(set(blocks)) and all(0 <= b < k for b in blocks)
            met += kept
        assert sorted(met) == [(x, y) for x in range(k) for y in range(x + 1, k)], k


def _pair_instance(seed, sparse=False):
    """A hub-heavy hypergraph (or, ``sparse``, nets of 2-4 random pins, where many vertices start with no
    net in the other block of a pair) with weighted, zero-weight and single-pin nets, weighted vertices, and
    a balanced random 5-way partition."""
    hypergraph = random_hypergraph(seed, 150, 220)[0] if sparse else generate.long_tailed(150, seed=seed)
    rng = np.random.default_rng(seed)
    nets = [list(hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]])
            for e in range(hypergraph.num_nets)] + [[v] for v in range(0, hypergraph.num_vertices, 11)]
    net_weights = rng.integers(0, 4, len(nets)).astype(np.int64)
    vertex_weights = rng.integers(1, 4, hypergraph.num_vertices).astype(np.int64)
    h = Hypergraph.from_pin_lists(nets, hypergraph.num_vertices, vertex_weights, net_weights)
    k = 5
    blocks = np.empty(h.num_vertices, dtype=np.int32)
    loads = np.zeros(k, dtype=np.int64)
    for v in rng.permutation(h.num_vertices):  # each to the lightest block: a balanced start
        blocks[v] = loads.argmin()
        loads[blocks[v]] += vertex_weights[v]
    assert scatter_sum(blocks, vertex_weights, k).max() <= max_block_weight(h.total_vertex_weight, k, 0.1)
    return h, nets, k, blocks, rng


def test_pair_fm_pass_makes_the_moves_of_a_model_that_recounts_every_gain():
    """One pairwise FM pass (the delta rules on the pair's part of the hypergraph) against a plain-Python
    pass whose gains are recounted from the nets: the same blocks and gain, for several pairs, seeds and
    fixed vertices; the other blocks' pin counts and weights stay as they were."""
    from hgpart.hypergraph import transpose_csr
    from hgpart.refinement.pair_fm import block_pin_counts_of, pair_fm_pass

    from .naive import metrics_naive, pair_fm_pass_naive

    for seed, sparse in ((0, False), (1, False), (2, False), (3, True), (4, True)):
        h, nets, k, blocks, rng = _pair_instance(seed, sparse)
        movable = rng.random(h.num_vertices) > 0.1
        bounds = np.full(k, max_block_weight(h.total_vertex_weight, k, 0.1), dtype=np.int64)
        km1 = metrics_naive(nets, h.net_weights, h.vertex_weights, blocks, k)["km1"]
        for a, b in ((0, 1), (3, 1), (2, 4)):
            want_gain, want = pair_fm_pass_naive(nets, list(h.net_weights), list(h.vertex_weights), blocks, a, b,
                                                 movable, bounds, 12)
            got = blocks.copy()
            weights = scatter_sum(got, h.vertex_weights, k)
            block_offsets, block_members = transpose_csr(np.arange(h.num_vertices + 1), got, k)
            counts = block_pin_counts_of(h.net_offsets, h.pin_vertices, got, k)
            n = h.num_vertices
            free = np.zeros(n, np.bool_)
            gained = pair_fm_pass(a, b, block_offsets, block_members, h.net_offsets, h.pin_vertices,
                                  h.vertex_offsets, h.incident_nets, h.net_weights, h.vertex_weights, got, counts,
                                  weights, bounds, movable, 12, np.zeros(n, np.int64), np.full(n, -1, np.int64), free)
            assert gained == want_gain > 0, (seed, a, b)
            np.testing.assert_array_equal(got, want)
            assert metrics_naive(nets, h.net_weights, h.vertex_weights, got, k)["km1"] == km1 - gained
            np.testing.assert_array_equal(weights, scatter_sum(got, h.vertex_weights, k))
            np.testing.assert_array_equal(counts, compute_pin_counts(h.net_offsets, h.pin_vertices, got, k)
                                          .reshape(-1, k).T.ravel())  # block-major
            assert not free.any()
            assert weights.max() <= bounds[0]


def test_pair_fm_sweeps_give_the_same_partition_on_any_number_of_threads(monkeypatch):
    """Sweeps of pairwise FM: km1 drops by the gain they report, balance and fixed vertices hold, and the
    parallel driver (several lanes) gives the bytes of the serial one."""
    import numba

    from hgpart import parallel
    from hgpart.refinement.pair_fm import pair_fm

    from .naive import metrics_naive

    h, nets, k, blocks, rng = _pair_instance(7)
    movable = rng.random(h.num_vertices) > 0.1
    bounds = np.full(k, max_block_weight(h.total_vertex_weight, k, 0.1), dtype=np.int64)
    km1 = metrics_naive(nets, h.net_weights, h.vertex_weights, blocks, k)["km1"]
    results = []
    for serial_below in (10 ** 9, 0):
        monkeypatch.setattr(parallel, "SERIAL_BELOW", serial_below)
        threads = numba.get_num_threads()
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        try:
            got = blocks.copy()
            gained = pair_fm(h, got, scatter_sum(got, h.vertex_weights, k), bounds, k, movable, 3, 20)
        finally:
            numba.set_num_threads(threads)
        assert gained > 0 and metrics_naive(nets, h.net_weights, h.vertex_weights, got, k)["km1"] == km1 - gained
        assert scatter_sum(got, h.vertex_weights, k).max() <= bounds[0]
        np.testing.assert_array_equal(got[~movable], blocks[~movable])
        results.append(got)
    np.testing.assert_array_equal(results[0], results[1])


def test_warm_up_compiles_the_parallel_drivers():
    """In a fresh process, ``warm_up`` for a small input leaves the parallel drivers alone; for a large one
    (or any, without ``input_pins``), with the GPU path's pairwise-FM warm-up, it leaves every parallel driver
    of the partitioning compiled (or loaded from numba's cache), though its tiny input would only take the
    serial ones: a large input's first partition then spends no time compiling."""
    import subprocess
    import sys

    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread: the serial drivers run whatever the size")
    drivers = {"hgpart.coarsening.contraction": ["_map_pins_parallel", "_net_hashes_parallel"],
               "hgpart.coarsening.matching": ["_propose_parallel"],
               "hgpart.refinement.gains": ["_pin_counts_parallel"],
               "hgpart.refinement.label_propagation": ["_rate_parallel"],
               "hgpart.refinement.pair_fm": ["_round_parallel", "_round_serial"]}
    code = "\n".join([
        "import importlib, numpy as np",
        "from hgpart import Hypergraph",
        "from hgpart.multilevel import warm_up, _warm_up_pair_fm",
        "from hgpart.coarsening.matching import _propose_parallel",
        "warm_up(input_pins=99_999)",
        "print('small', len(_propose_parallel.signatures))",
        "warm_up(input_pins=100_000)",
        "rng = np.random.default_rng(1)",
        "_warm_up_pair_fm(Hypergraph.from_pin_lists([rng.choice(60, 3, replace=False) for _ in range(90)], 60))",
        f"for module, names in {drivers!r}.items():",
        "    for name in names:",
        "        print(module, name, len(getattr(importlib.import_module(module), name).signatures))"])
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                            cwd=str(DATA.parent))
    assert output.returncode == 0, output.stderr[-3000:]
    small, *counts = [line.split() for line in output.stdout.splitlines()]
    assert small == ["small", "0"], output.stdout
    assert len(counts) == sum(len(names) for names in drivers.values())
    assert all(int(count) >= 1 for _, _, count in counts), output.stdout
