"""Initial partitioning: flat bisections against plain models, the portfolio, recursive bisection and its
sub-hypergraphs, the initial phase's threads and budgets."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgpart import Hypergraph, generate
from hgpart.config import make_config
from hgpart.io import read_hypergraph
from hgpart.metrics import max_block_weight
from hgpart.policy import Policy
from hgpart.initial.bisection import greedy_bisection, label_propagation_bisection

from ..conftest import DATA
from ..helpers import IBM01, random_hypergraph
from ..naive import greedy_growing_naive, label_propagation_bisection_naive


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("algorithm", ["greedy", "greedy-max-net", "label-propagation"])
def test_flat_bisections_equal_plain_models(seed, algorithm):
    """Greedy growing with the FM and the max-net gain (delta gains, one heap update per vertex and move)
    and label propagation (per-net counts of assigned pins) against models that recompute every gain and
    connection from the nets; some instances have vertices fixed to a side, some several components (restarts)."""
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
    if algorithm.startswith("greedy"):
        max_net = algorithm == "greedy-max-net"
        got = greedy_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                               h.vertex_weights, fixed_side, target0, seed, False, max_net)
        expected = greedy_growing_naive(*args, max_net=max_net)
    else:
        got = label_propagation_bisection(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                                          h.net_weights, h.vertex_weights, fixed_side, target0, seed)
        expected = label_propagation_bisection_naive(*args)
    assert got.tolist() == expected


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
    for budget, runs, fm_runs in ((10**9, 3 * 5, 6), (hypergraph.num_pins * 5, 5, 5), (1, 5, 1)):
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
    """multilevel_bisect coarsens its sub-problem while a rating round (sum of |e|^2 over rated nets) fits
    InitialConfig.rating_budget or the sub-problem has at most always_coarsen_pins pins; otherwise the
    portfolio runs on the sub-problem itself."""
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
    pins = hypergraph.num_pins
    # 3 bisections: the whole, then its halves (fewer pins each)
    for budget, small, coarsened in ((10**9, 0, 3), (whole - 1, 0, 2), (0, 0, 0), (0, pins, 3), (0, pins - 1, 2)):
        calls.clear()
        budgeted = replace(config, initial=replace(config.initial, rating_budget=budget, always_coarsen_pins=small,
                                                   recursion_threads=1))
        blocks = recursive.initial_partition(hypergraph, 4, 0.03, budgeted, False, 0)
        assert len(calls) == coarsened
        assert np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=4).max() <= bound


def test_initial_phase_caps_threads_and_takes_the_gpu_paths_fm_candidates(monkeypatch):
    """The initial partitioning runs the portfolio on ceil(pins / pins_per_thread) numba threads, restores the
    caller's count, and on the GPU path refines large_input_fm_candidates runs by FM where the input has more
    than device_v_cycle_max_pins pins (else fm_candidates), their FM passes then stopping after
    large_input_fm_fruitless_moves fruitless moves (else initial.fm_fruitless_moves); the partition is the same
    on any number of numba threads and of recursion threads (whose halves run on one numba thread each)."""
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
        assert seen["fruitless"] == {17 if fewer else config.initial.fm_fruitless_moves}
        if not fewer:
            results.append(blocks)
    for blocks in results[1:]:
        np.testing.assert_array_equal(blocks, results[0])


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


def test_the_recursion_hands_off_the_gil_quickly(monkeypatch):
    """The recursion's threads run Python between their njit calls: every bisection runs under
    :func:`hgpart.parallel.quick_handoffs`, and the caller's switch interval comes back afterwards."""
    import sys

    from hgpart.initial import recursive
    from hgpart.parallel import SWITCH_INTERVAL

    hypergraph, _ = random_hypergraph(5, 200, 300, max_size=6)
    intervals = []
    real_bisect = recursive.multilevel_bisect

    def recording(*args, **kwargs):
        intervals.append(sys.getswitchinterval())
        return real_bisect(*args, **kwargs)

    monkeypatch.setattr(recursive, "multilevel_bisect", recording)
    before = sys.getswitchinterval()
    blocks = recursive.initial_partition(hypergraph, 4, 0.03, make_config(4, 0.03, "km1", 0), False, 0, workers=2)
    assert len(intervals) == 3 and all(interval == pytest.approx(SWITCH_INTERVAL) for interval in intervals)
    assert sys.getswitchinterval() == before
    assert sorted(np.unique(blocks)) == [0, 1, 2, 3]
