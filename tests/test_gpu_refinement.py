"""GPU refinement (Jet-style rounds, afterburner, rebalancer) against its numpy model, whose gains are
brute force; the model against the CPU path's gains; the GPU V-cycle against the CPU path."""

import gc
from dataclasses import replace

import numpy as np
import pytest

from hgpart import Hypergraph, generate
from hgpart.metrics import evaluate, max_block_weight
from hgpart.refinement.gains import best_move, compute_pin_counts

from . import jet_model
from .conftest import DATA, SHARED

REFINEMENT_KERNELS = {
    "pin_counts_kernel": "void(int32[:], int32[:], int32[:], int64, int32[:])",
    "rate_moves_kernel": "void(int64[:], int64[:], int32[:], int64[:], int64[:], int32[:], int32[:], int64[:], "
                         "int64[:], int64, int64, boolean, boolean, int8[:], float64, int32[:], int64[:], int64[:])",
    "rate_heavy_chunks_kernel": "void(int32[:], int64[:], int64, int32[:], int64[:], int64[:], int32[:], int64[:], "
                                "int32[:], int32[:], int64, int64, boolean, int8[:], int64[:], int8[:], int64[:])",
    "pick_heavy_moves_kernel": "void(int32[:], int64[:], int32[:], int64[:], int64[:], int64, boolean, int8[:], "
                               "float64, int64[:], int8[:], int64[:], int32[:], int64[:], int64[:])",
    "incidence_keys_kernel": "void(int64[:], int64[:], int32[:], int64, int64[:], int64[:])",
    "afterburner_kernel": "void(int64[:], int64[:], int64[:], int64[:], int32[:], int32[:], int64, boolean, "
                          "int32[:], int64[:])",
    "apply_moves_kernel": "void(int64[:], int32[:], boolean[:], int64[:], int64[:], int64[:], int32[:], int64[:], "
                          "int64, boolean, int64, int32[:], int32[:], int32[:], int64[:], int8[:], int64[:])",
    "apply_kept_kernel": "void(int8[:], int32[:], int64[:], int64[:], int64[:], int32[:], int64[:], int64, boolean, "
                         "int64, int32[:], int32[:], int32[:], int64[:], int8[:], int64[:])",
    "afterburner_scan_kernel": "void(int64[:], int32[:], int64[:], int32[:], int64[:], int32[:], int32[:], int64[:], "
                               "int64, boolean, int64, int32[:], int8[:])",
    "neighbourhood_exceeds_kernel": "void(int64[:], int32[:], int64[:], int64, int64[:])",
    "negated_gains_kernel": "void(int64[:], int64[:], int64[:])",
    "ranked_moves_kernel": "void(int64[:], int64[:], int32[:], int64[:], int64[:], int32[:], int64[:])",
    "rebalance_active_kernel": "void(int32[:], int64[:], boolean[:], int64[:], int64[:], int8[:])",
    "rebalance_keys_kernel": "void(int32[:], int64[:], int64[:], int32[:], int64[:], int64, int64[:], float64[:], "
                             "int32[:])",
    "rebalance_order_kernel": "void(int64[:], int64[:], int64[:], int32[:], int32[:], int64[:], int64[:], int32[:], "
                              "int32[:], int64[:])",
    "rebalance_needed_kernel": "void(int32[:], int64[:], int64[:], int64[:], int64[:], int64[:])",
    "rebalance_accept_kernel": "void(int64[:], int64[:], int32[:], int64[:], int64[:], int64[:], boolean[:])",
}


@pytest.mark.parametrize("name", sorted(REFINEMENT_KERNELS))
def test_refinement_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")
    from hgpart.refinement import gpu

    ptx, _ = cuda.compile_ptx(getattr(gpu, name).py_func, REFINEMENT_KERNELS[name], cc=(9, 0))
    assert ".entry" in ptx
    if name in ("rate_moves_kernel", "pick_heavy_moves_kernel", "afterburner_scan_kernel"):
        assert "shfl.sync.bfly" in ptx  # the warp's argmax over its lanes' blocks, the sum over a warp's nets
    if name in ("rebalance_needed_kernel", "rebalance_accept_kernel"):
        assert "shfl.sync.up" in ptx  # a warp's prefix sum over the moves of a block


def tiny(seed, n=24, nets=30, weighted=True):
    """A random hypergraph of a few hundred pins, with net and vertex weights."""
    rng = np.random.default_rng(seed)
    pin_lists = [rng.choice(n, size=int(rng.integers(1, 6)), replace=False) for _ in range(nets)]
    net_weights = rng.integers(1, 4, size=nets) if weighted else None
    vertex_weights = rng.integers(1, 3, size=n) if weighted else None
    return Hypergraph.from_pin_lists(pin_lists, n, net_weights=net_weights, vertex_weights=vertex_weights)


def balanced_random(hypergraph, k, epsilon, seed):
    """A random partition within the bound (greedy by weight into the lightest block), and the bounds."""
    rng = np.random.default_rng(seed)
    bound = max_block_weight(hypergraph.total_vertex_weight, k, epsilon)
    blocks = np.zeros(hypergraph.num_vertices, dtype=np.int32)
    loads = np.zeros(k, dtype=np.int64)
    for v in rng.permutation(hypergraph.num_vertices):
        blocks[v] = int(np.argmin(loads + rng.random(k) * 0.5))
        loads[blocks[v]] += hypergraph.vertex_weights[v]
    if loads.max() > bound:
        blocks = (np.arange(hypergraph.num_vertices) % k).astype(np.int32)
    return blocks, np.full(k, bound, dtype=np.int64)


@pytest.mark.parametrize("cut_objective", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_model_gains_equal_the_cpu_paths_best_move(seed, cut_objective):
    """Two independent gain computations: brute force (the model) and Phi-based (the CPU path)."""
    hypergraph = tiny(seed)
    k = 3
    blocks, bounds = balanced_random(hypergraph, k, 0.2, seed)
    active = np.ones(hypergraph.num_vertices, dtype=bool)
    targets, gains = jet_model.best_moves(hypergraph, blocks, k, bounds, cut_objective, True, active)
    pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, blocks, k)
    block_weights = np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64)
    scratch_gain, scratch_adjacent = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.bool_)
    for v in range(hypergraph.num_vertices):
        target, gain = best_move(v, blocks, hypergraph.net_offsets, hypergraph.vertex_offsets,
                                 hypergraph.incident_nets, hypergraph.net_weights, hypergraph.vertex_weights,
                                 pin_counts, block_weights, bounds, k, cut_objective, True, scratch_gain,
                                 scratch_adjacent)
        assert (targets[v], gains[v] if targets[v] >= 0 else 0) == (target, gain if target >= 0 else 0), v


@pytest.mark.parametrize("cut_objective", [False, True])
def test_model_refinement_improves_and_keeps_balance(cut_objective):
    for seed in range(3):
        hypergraph = tiny(seed, n=40, nets=60)
        k = 4
        blocks, bounds = balanced_random(hypergraph, k, 0.1, seed)
        before = jet_model.objective(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights, blocks,
                                     cut_objective)
        refined = jet_model.refine(hypergraph, blocks, k, bounds, 8, cut_objective)
        after = jet_model.objective(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights, refined,
                                    cut_objective)
        assert after < before
        assert np.bincount(refined, weights=hypergraph.vertex_weights, minlength=k).max() <= bounds[0]


def test_model_rebalancer_restores_balance():
    hypergraph = tiny(7, n=40, nets=60)
    k = 4
    blocks = np.zeros(hypergraph.num_vertices, dtype=np.int32)  # everything in block 0
    bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.05), dtype=np.int64)
    rebalanced, balanced = jet_model.rebalance(hypergraph, blocks, k, bounds)
    assert balanced
    assert np.bincount(rebalanced, weights=hypergraph.vertex_weights, minlength=k).max() <= bounds[0]


# ------------------------------------------------------------------------------------------ on the device
def device_cases(count):
    for seed in range(count):
        hypergraph = tiny(10 + seed, n=30 + 5 * seed, nets=45)
        k = (2, 3, 5, 4)[seed % 4]
        movable = None
        if seed % 2:
            movable = np.ones(hypergraph.num_vertices, dtype=bool)
            movable[::7] = False
        yield hypergraph, k, movable


@pytest.mark.gpu
@pytest.mark.parametrize("cut_objective", [False, True])
def test_device_refinement_equals_the_model(cut_objective):
    """Rating, afterburner, balance rule, rounds and the rebalancer: GPU == model, array for array."""
    
    from hgpart.cuda.arrays import SIMULATED, to_device, to_host
    from hgpart.refinement.gpu import DeviceLevelState, rebalance_device, refine_device

    for hypergraph, k, movable in device_cases(1 if SIMULATED else 8):
        blocks, bounds = balanced_random(hypergraph, k, 0.1, 3)
        level = hypergraph.to_device()
        active = np.ones(hypergraph.num_vertices, dtype=bool) if movable is None else movable
        state = DeviceLevelState(level, to_device(blocks.copy()), k)
        for only_adjacent in (True, False):
            targets, gains, internals = state.rate(to_device(bounds), cut_objective, only_adjacent,
                                        to_device(active.astype(np.int8)))
            expected = jet_model.best_moves(hypergraph, blocks, k, bounds, cut_objective, only_adjacent, active)
            np.testing.assert_array_equal(to_host(targets), expected[0])
            np.testing.assert_array_equal(to_host(gains), expected[1])
            np.testing.assert_array_equal(to_host(internals)[active],
                                          jet_model.internal_weights(hypergraph, blocks)[active])
        assert state.objective(cut_objective) == jet_model.objective(
            hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights, blocks, cut_objective)
        device_movable = None if movable is None else to_device(movable)
        for tolerance in (0.25, 0.75):
            refined = refine_device(level, to_device(blocks.copy()), k, bounds, 6, cut_objective, device_movable,
                                    tolerance)
            np.testing.assert_array_equal(to_host(refined), jet_model.refine(hypergraph, blocks, k, bounds, 6,
                                                                             cut_objective, movable, tolerance))
        tight_blocks, tight_bounds = balanced_random(hypergraph, k, 0.0, 3)  # the rebalancer runs in rounds
        refined = refine_device(level, to_device(tight_blocks.copy()), k, tight_bounds, 6, cut_objective,
                                device_movable, 0.25)
        np.testing.assert_array_equal(to_host(refined), jet_model.refine(hypergraph, tight_blocks, k, tight_bounds,
                                                                         6, cut_objective, movable, 0.25))
        crowded = np.where(np.arange(hypergraph.num_vertices) % 3 == 0, 0, blocks).astype(np.int32)
        got, got_balanced = rebalance_device(level, to_device(crowded), k, bounds, cut_objective, device_movable)
        want, want_balanced = jet_model.rebalance(hypergraph, crowded, k, bounds, cut_objective, movable)
        assert got_balanced == want_balanced
        np.testing.assert_array_equal(to_host(got), want)


@pytest.mark.gpu
@pytest.mark.parametrize("cut_objective", [False, True])
def test_both_afterburners_keep_the_models_moves(cut_objective):
    """A Jet round with the afterburner that scans each candidate's nets (levels of small nets; a thread or a
    warp per vertex) and with the one that replays sorted (net, rank) pairs: the same moves as the model's
    replay in rank order, the same blocks, locks and objective; some candidates are dropped."""
    
    from hgpart.cuda.arrays import SIMULATED, to_device, to_host
    from hgpart.refinement import gpu
    from hgpart.refinement.jet import unbounded_weights

    dropped = 0
    for hypergraph, k, movable in device_cases(2 if SIMULATED else 8):
        n = hypergraph.num_vertices
        blocks, _ = balanced_random(hypergraph, k, 0.1, 7)
        unbounded = unbounded_weights(k)
        free = np.ones(n, dtype=bool) if movable is None else movable
        active = free.copy()
        active[::5] = False  # locked: moved in the previous round
        for tolerance in (0.25, 0.75):
            model_blocks = blocks.copy()
            kept, _ = jet_model.jet_round(hypergraph, model_blocks, k, unbounded, cut_objective, active, tolerance,
                                          movable)
            unlocked = free.copy()
            unlocked[kept] = False
            for scans, lanes in ((True, 1), (True, 32), (False, 1)):
                if SIMULATED and lanes > 1:
                    continue  # the warp's sum needs shuffles
                state = gpu.DeviceLevelState(hypergraph.to_device(), to_device(blocks.copy()), k, cut_objective,
                                             unbounded)
                assert state.scans_nets  # nets of at most 5 pins
                state.scans_nets, state.lanes = scans, lanes
                locked = to_device(free.astype(np.int8))
                moves, value = gpu.jet_round(state, to_device(unbounded), cut_objective,
                                             to_device(active.astype(np.int8)), tolerance, locked, to_device(free))
                assert moves == len(kept), (scans, lanes)
                np.testing.assert_array_equal(to_host(state.blocks), model_blocks)
                np.testing.assert_array_equal(to_host(locked), unlocked.astype(np.int8))
                assert value == jet_model.objective(hypergraph.net_offsets, hypergraph.pin_vertices,
                                                    hypergraph.net_weights, model_blocks, cut_objective)
            dropped += int((to_host(state.targets) >= 0).sum()) - len(kept)
    assert dropped > 0


@pytest.mark.gpu
def test_the_scan_afterburner_is_left_to_levels_without_big_neighbourhoods(monkeypatch):
    """A level scans (``scans_nets``) only while no vertex's nets of two or more pins have more than
    SCAN_MAX_PIN_VISITS pins in all: exactly at the largest such sum it scans, one below it it sorts; a hub in
    every net of a tiny hypergraph holds the largest."""
    
    from hgpart.cuda.arrays import to_device
    from hgpart.refinement.gpu import level_state

    plain = tiny(5, n=30, nets=40)
    with_hub = Hypergraph.from_pin_lists([list(plain.pin_vertices[plain.net_offsets[e]:plain.net_offsets[e + 1]]) + [30]
                                          for e in range(plain.num_nets)], 31)
    for hypergraph in (plain, with_hub):
        sizes = np.diff(hypergraph.net_offsets)
        counted = np.where(sizes >= 2, sizes, 0)
        largest = max(int(counted[hypergraph.incident_nets[hypergraph.vertex_offsets[v]:
                                                           hypergraph.vertex_offsets[v + 1]]].sum())
                      for v in range(hypergraph.num_vertices))
        blocks = to_device(np.zeros(hypergraph.num_vertices, dtype=np.int32))
        for limit, scans in ((largest, True), (largest - 1, False)):
            monkeypatch.setattr(level_state, "SCAN_MAX_PIN_VISITS", limit)
            state = level_state.DeviceLevelState(hypergraph.to_device(), blocks, 2)
            assert state.scans_nets == scans, (hypergraph.num_vertices, limit)


def overloaded_cases():
    """Partitions with half the blocks over their bounds (ties in loss per weight are common: unit and
    weighted vertices), some vertices fixed, and bounds that leave the rebalancer one or several rounds; in
    the last, one block must shed more than a warp's worth of vertices (its moves span several chunks of the
    device's per-block warps)."""
    for seed, (k, weighted, epsilon, n) in enumerate(((6, False, 0.05, 48), (5, True, 0.1, 48), (8, True, 0.0, 48),
                                                      (4, False, 0.03, 300))):
        hypergraph = tiny(40 + seed, n=n, nets=n * 3 // 2, weighted=weighted)
        rng = np.random.default_rng(seed)
        blocks = np.where(rng.random(hypergraph.num_vertices) < 0.7, rng.integers(0, k // 2, hypergraph.num_vertices),
                          rng.integers(0, k, hypergraph.num_vertices)).astype(np.int32)
        bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, epsilon), dtype=np.int64)
        movable = None if seed == 0 else rng.random(hypergraph.num_vertices) > 0.15
        yield hypergraph, k, blocks, bounds, movable


@pytest.mark.gpu
@pytest.mark.parametrize("cut_objective", [False, True])
def test_device_rebalancer_equals_the_model_on_many_overloaded_blocks(cut_objective):
    """The rebalancer's device selection (per source, least loss per unit of weight, then id, until the excess
    is gone; per target while it has room) against the model's, when several blocks are over their
    bounds at once."""
    
    from hgpart.cuda.arrays import to_device, to_host
    from hgpart.refinement.gpu import rebalance_device

    overloaded = []
    for hypergraph, k, blocks, bounds, movable in overloaded_cases():
        weights = np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=k)
        overloaded.append(int((weights > bounds).sum()))
        got, got_balanced = rebalance_device(hypergraph.to_device(), to_device(blocks.copy()), k, bounds,
                                             cut_objective, None if movable is None else to_device(movable))
        want, want_balanced = jet_model.rebalance(hypergraph, blocks, k, bounds, cut_objective, movable)
        assert got_balanced == want_balanced
        np.testing.assert_array_equal(to_host(got), want)
        assert (to_host(got) != blocks).any()
    assert min(overloaded) >= 2


def hub_hypergraph(seed, n=300, nets=1200, hubs=3):
    """Nets of 2-5 pins, most of them holding one of a few hubs: the hubs have more than HEAVY_DEGREE nets,
    so blocks of threads rate chunks of their nets (``rate_heavy_chunks_kernel``), a warp picks each one's
    move (``pick_heavy_moves_kernel``) and a warp applies it."""
    rng = np.random.default_rng(seed)
    pin_lists = []
    for _ in range(nets):
        pins = set(int(v) for v in rng.choice(np.arange(hubs, n), size=int(rng.integers(1, 5)), replace=False))
        if rng.random() < 0.9:
            pins.add(int(rng.integers(0, hubs)))
        pin_lists.append(sorted(pins))
    return Hypergraph.from_pin_lists(pin_lists, n, net_weights=rng.integers(1, 4, size=nets),
                                     vertex_weights=rng.integers(1, 3, size=n))


@pytest.mark.gpu
@pytest.mark.parametrize("cut_objective", [False, True])
def test_heavy_vertices_are_rated_and_moved_as_the_model(cut_objective, monkeypatch):
    """Hubs (more than HEAVY_DEGREE nets) go through the chunked rating kernels and the warp-per-move apply
    kernel: ratings equal the CPU path's best_move (checked against the brute-force model above), rounds
    equal the CPU twin (refinement.jet, checked against the model), the kept objective a recount; groups of
    one lane (k = 2, 7) and of eight (k = 40); at k = 7 and 40 each hub's nets span several chunks, whose
    sums meet by atomics.
    (The brute-force model itself takes minutes on hubs.)"""
    
    from hgpart.cuda.arrays import SIMULATED, to_device, to_host
    from hgpart.refinement.gpu import HEAVY_DEGREE, DeviceLevelState, level_state, refine_device
    from hgpart.refinement.jet import jet_refine

    if SIMULATED:
        pytest.skip("minutes in the simulator (blocks of 128 threads on hubs); runs on the GPU")
    monkeypatch.setattr(level_state, "HEAVY_CHUNK_ROUNDS", 4)  # chunks of 4 nets per group: several per hub
    for seed, (k, nets) in enumerate(((2, 1200), (7, 4000), (40, 1200))):
        hypergraph = hub_hypergraph(seed, nets=nets)
        assert np.diff(hypergraph.vertex_offsets)[:3].min() > HEAVY_DEGREE
        blocks, bounds = balanced_random(hypergraph, k, 0.1, seed)
        level = hypergraph.to_device()
        active = np.ones(hypergraph.num_vertices, dtype=bool)
        active[1] = False
        state = DeviceLevelState(level, to_device(blocks.copy()), k, cut_objective)
        assert to_host(state.heavy).tolist() == [0, 1, 2]
        chunks = to_host(state.chunk_heavy)
        assert chunks.tolist() == sorted(chunks) and set(chunks.tolist()) == {0, 1, 2}
        assert k == 2 or len(chunks) >= 6, (k, len(chunks))
        pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, blocks, k)
        block_weights = np.bincount(blocks, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64)
        scratch_gain, scratch_adjacent = np.zeros(k, dtype=np.int64), np.zeros(k, dtype=np.bool_)
        for only_adjacent in (True, False):
            targets, gains, internals = (to_host(array) for array in state.rate(
                to_device(bounds), cut_objective, only_adjacent, to_device(active.astype(np.int8))))
            for v in range(hypergraph.num_vertices):
                target, gain = best_move(v, blocks, hypergraph.net_offsets, hypergraph.vertex_offsets,
                                         hypergraph.incident_nets, hypergraph.net_weights, hypergraph.vertex_weights,
                                         pin_counts, block_weights, bounds, k, cut_objective, only_adjacent,
                                         scratch_gain, scratch_adjacent)
                expected = (target, gain if target >= 0 else 0) if active[v] else (-1, 0)
                assert (targets[v], gains[v]) == expected, (k, v)
            np.testing.assert_array_equal(internals[active], jet_model.internal_weights(hypergraph, blocks)[active])
        refined = refine_device(level, to_device(blocks.copy()), k, bounds, 6, cut_objective, None, 0.25)
        twin = jet_refine(hypergraph, blocks, k, bounds, 6, cut_objective, None, 0.25)
        assert (twin != blocks).any()
        np.testing.assert_array_equal(to_host(refined), twin)
        moving = np.array([0, 2, 5, 1], dtype=np.int64)
        destinations = ((blocks[moving] + 1) % k).astype(np.int32)
        moves, value = state.apply(to_device(moving), to_device(destinations), to_device(np.ones(4, dtype=bool)))
        blocks[moving] = destinations
        assert moves == 4 and value == jet_model.objective(hypergraph.net_offsets, hypergraph.pin_vertices,
                                                           hypergraph.net_weights, blocks, cut_objective)
        np.testing.assert_array_equal(to_host(state.block_weights), np.bincount(
            blocks, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64))


def twin_partition(hypergraph, k, objective, seed, preset="default", config=None):
    """The GPU path's partition computed on the CPU: CPU coarsening (equal to the GPU's), the same initial
    partition, the njit twin of the GPU refinement on every level (on small inputs with the host's FM after
    it on the coarser levels), the same V-cycles and the host's FM."""
    from hgpart.coarsening import coarsen
    from hgpart.config import make_config
    from hgpart.multilevel import _initial, gpu_v_cycles, host_fm, uncoarsen_jet, v_cycle

    config = config or make_config(k, 0.03, objective, seed, preset)
    bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.03), dtype=np.int64)
    hierarchy = coarsen(hypergraph, k, config.coarsening, 0.03)
    blocks = _initial(hierarchy.coarsest, None, k, 0.03, bounds, config, objective == "cut", "gpu",
                      hypergraph.num_pins)
    blocks = uncoarsen_jet(hierarchy, blocks, k, bounds, config, objective == "cut")
    for _ in range(gpu_v_cycles(hypergraph, config)):
        blocks = v_cycle(hypergraph, blocks, k, 0.03, bounds, config, objective == "cut",
                         uncoarsen_function=uncoarsen_jet)
    return host_fm(hypergraph, blocks, k, bounds, config, objective == "cut")


def test_cpu_twin_of_the_gpu_path_is_balanced_and_close_to_the_cpu_path():
    """The GPU path (Jet refinement, then the host's FM on the input) stays within 10% of the CPU path's km1,
    as a geometric mean over three seeds: one seed's km1 varies by about 5% either way."""
    from hgpart.io import read_hypergraph
    from hgpart.multilevel import partition

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    for k in (2, 8):
        twin_km1, cpu_km1 = [], []
        for seed in (0, 1, 2):
            twin = evaluate(hypergraph, twin_partition(hypergraph, k, "km1", seed), k, 0.03)
            assert twin.balanced, (k, seed)
            twin_km1.append(twin.km1)
            cpu_km1.append(partition(hypergraph, k, seed=seed).metrics.km1)
        ratio = np.exp(np.mean(np.log(twin_km1)) - np.mean(np.log(cpu_km1)))
        assert ratio <= 1.1, (k, twin_km1, cpu_km1)


def test_host_fm_refines_the_coarser_levels_of_small_inputs(monkeypatch):
    """On inputs of at most gpu_v_cycle_max_pins pins, the GPU path's twin runs the host's FM after Jet on
    exactly the coarser levels of at most gpu_host_fm_level_fraction of the input's pins (never the input:
    host_fm refines it at the end); on larger inputs, with gpu_host_fm off or a fraction of 0, on none."""
    from hgpart import multilevel
    from hgpart.coarsening import coarsen
    from hgpart.config import make_config
    from hgpart.io import read_hypergraph

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    k = 4
    bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.03), dtype=np.int64)
    refined = []
    original = multilevel._level_fm
    monkeypatch.setattr(multilevel, "_level_fm", lambda level, *rest: refined.append(level.num_pins)
                        or original(level, *rest))
    for fraction, max_pins, host_fm in ((0.5, 2_000_000, True), (0.2, 2_000_000, True), (0.5, 10_000, True),
                                        (0.5, 2_000_000, False), (0.0, 2_000_000, True)):
        config = make_config(k, 0.03, "km1", 0)
        config = replace(config, refinement=replace(config.refinement, gpu_host_fm_level_fraction=fraction,
                                                    gpu_v_cycle_max_pins=max_pins, gpu_host_fm=host_fm))
        hierarchy = coarsen(hypergraph, k, config.coarsening, 0.03)
        blocks = multilevel._initial(hierarchy.coarsest, None, k, 0.03, bounds, config, False, "gpu",
                                     hypergraph.num_pins)
        refined.clear()
        result = multilevel.uncoarsen_jet(hierarchy, blocks, k, bounds, config, False)
        pins = [hierarchy.coarsest.num_pins] + [level.hypergraph.num_pins for level in reversed(hierarchy.levels)]
        small = hypergraph.num_pins <= max_pins and host_fm
        expected = [count for count in pins if small and count <= fraction * hypergraph.num_pins]
        assert refined == expected, (fraction, max_pins, host_fm)
        assert evaluate(hypergraph, result, k, 0.03).balanced
    assert len(set(pins)) > 2 and any(count > 0.5 * hypergraph.num_pins for count in pins[:-1])


@pytest.mark.skipif(not (SHARED / "bundle1.mtx.hgr.gz").exists(), reason="../shared/data is absent")
def test_fm_on_the_coarser_levels_keeps_big_nets_within_reach_of_the_cpu_path():
    """bundle1 k=2 (nets of 73 pins on average): Jet leaves the coarsest level's km1 unchanged on every level;
    without the host's FM on the coarser levels the GPU path's twin ends 11% above the CPU path, with it
    within 5%."""
    from hgpart.config import make_config
    from hgpart.io import read_hypergraph
    from hgpart.multilevel import partition

    hypergraph = read_hypergraph(str(SHARED / "bundle1.mtx.hgr.gz"))
    cpu = partition(hypergraph, 2, seed=0).metrics.km1
    config = make_config(2, 0.03, "km1", 0)
    with_fm = evaluate(hypergraph, twin_partition(hypergraph, 2, "km1", 0, config=config), 2, 0.03)
    without = replace(config, refinement=replace(config.refinement, gpu_host_fm_level_fraction=0.0))
    without_fm = evaluate(hypergraph, twin_partition(hypergraph, 2, "km1", 0, config=without), 2, 0.03)
    assert with_fm.balanced and with_fm.km1 <= 1.05 * cpu, (with_fm.km1, cpu)
    assert without_fm.km1 > 1.05 * cpu, (without_fm.km1, cpu)


@pytest.mark.gpu
def test_gpu_partition_equals_its_cpu_twin():
    """partition(device="gpu") == CPU coarsening + initial partition + refinement.jet on every level + the
    host's FM; balanced;
    deterministic; its quality against the CPU path (LP + FM + V-cycle) printed."""
    from dataclasses import replace

    from hgpart.config import make_config
    from hgpart.io import read_hypergraph
    from hgpart.multilevel import partition

    ibm01 = read_hypergraph(str(DATA / "ibm01.hgr"))
    cases = [(ibm01, "ibm01", (2, 8, 32), ("km1", "cut"), "default"),
             (ibm01, "ibm01", (8,), ("km1",), "quality"),  # two V-cycles on the device
             (generate.evenly(20000, seed=2), "evenly 20k", (8,), ("km1",), "default"),  # initial: seconds
             (generate.long_tailed(5000, seed=2), "long-tailed 5k pairwise", (8, 32), ("km1",), "pairwise")]
    for hypergraph, name, ks, objectives, preset in cases:
        for k in ks:
            for objective in objectives:
                config = make_config(k, 0.03, objective, 1, "default" if preset == "pairwise" else preset)
                if preset == "pairwise":  # the host's last step as above gpu_v_cycle_max_pins: pairwise FM
                    config = replace(config, refinement=replace(config.refinement, gpu_v_cycle_max_pins=0))
                gpu = partition(hypergraph, k, config=config, device="gpu")
                assert gpu.device == "gpu" and gpu.device_memory_bytes > 0
                np.testing.assert_array_equal(gpu.partition, twin_partition(hypergraph, k, objective, 1, config=config),
                                              err_msg=f"{name} k={k} {objective} {preset}")
                check = evaluate(hypergraph, gpu.partition, k, 0.03)
                assert check.balanced, (name, k, objective)
                gc.collect()
                again = partition(hypergraph, k, config=config, device="gpu")
                np.testing.assert_array_equal(again.partition, gpu.partition)  # deterministic
                # the peak counts arrays in use, not the blocks CuPy's pool kept from the run before
                assert again.device_memory_bytes == gpu.device_memory_bytes >= hypergraph.pin_vertices.nbytes
                cpu = partition(hypergraph, k, config=config, device="cpu")
                value = check.km1 if objective == "km1" else check.cut
                reference = cpu.metrics.km1 if objective == "km1" else cpu.metrics.cut
                print(f"{name} k={k} {objective} {preset}: gpu {value} cpu {reference} "
                      f"ratio {value / max(reference, 1):.3f} gpu {gpu.seconds['total']:.3f} s "
                      f"cpu {cpu.seconds['total']:.3f} s")


@pytest.mark.gpu
@pytest.mark.parametrize("cut_objective", [False, True])
def test_applied_moves_keep_objective_and_block_weights_exact(cut_objective):
    """DeviceLevelState.apply keeps km1 (or cut) from the old values its atomics return, and the block
    weights by atomics: after each batch of moves both equal a recount from scratch (the model), with a
    thread or a warp per move."""
    
    from hgpart.cuda.arrays import SIMULATED, to_device, to_host
    from hgpart.refinement.gpu import DeviceLevelState

    rng = np.random.default_rng(5)
    for hypergraph, k, _ in device_cases(2 if SIMULATED else 6):
        n = hypergraph.num_vertices
        blocks, _ = balanced_random(hypergraph, k, 0.1, 4)
        state = DeviceLevelState(hypergraph.to_device(), to_device(blocks.copy()), k, cut_objective)
        for batch in range(3):
            state.lanes = (1, 32, 1)[batch]  # a thread per move, then a warp per move (levels with hubs)
            moving = rng.choice(n, size=n // 2, replace=False).astype(np.int64)
            destinations = ((blocks[moving] + rng.integers(1, k, size=moving.shape[0])) % k).astype(np.int32)
            accepted = rng.random(moving.shape[0]) < 0.7
            locked = np.ones(n, dtype=np.int8)
            device_locked = to_device(locked)
            moves, value = state.apply(to_device(moving), to_device(destinations), to_device(accepted), device_locked)
            blocks[moving[accepted]] = destinations[accepted]
            locked[moving[accepted]] = 0
            assert moves == int(accepted.sum())
            assert value == jet_model.objective(hypergraph.net_offsets, hypergraph.pin_vertices,
                                                hypergraph.net_weights, blocks, cut_objective)
            np.testing.assert_array_equal(to_host(state.blocks), blocks)
            np.testing.assert_array_equal(to_host(device_locked), locked)
            np.testing.assert_array_equal(to_host(state.block_weights), np.bincount(
                blocks, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64))


@pytest.mark.parametrize("cut_objective", [False, True])
def test_cpu_twin_equals_the_model(cut_objective, monkeypatch):
    """refinement.jet (njit, the CPU twin of the GPU rounds) against the brute-force numpy model, with bounds
    loose (epsilon 0.1) and tight (0.0: the Jet moves overload blocks and the rebalancer runs in rounds)."""
    from hgpart.refinement import jet

    rebalanced = []
    rebalance_rounds = jet.rebalance_rounds

    def counting(*arguments):
        rebalanced.append(True)
        return rebalance_rounds(*arguments)

    monkeypatch.setattr(jet, "rebalance_rounds", counting)
    changed = 0
    for hypergraph, k, movable in device_cases(6):
        for epsilon in (0.1, 0.0):
            blocks, bounds = balanced_random(hypergraph, k, epsilon, 3)
            tolerance = (0.25, 0.75)[k % 2]
            refined = jet.jet_refine(hypergraph, blocks, k, bounds, 6, cut_objective, movable, tolerance)
            np.testing.assert_array_equal(refined, jet_model.refine(hypergraph, blocks, k, bounds, 6, cut_objective,
                                                                    movable, tolerance))
            assert np.bincount(refined, weights=hypergraph.vertex_weights, minlength=k).max() <= bounds[0]
            changed += bool((refined != blocks).any())
    assert changed >= 8
    assert len(rebalanced) >= 4


@pytest.mark.parametrize("cut_objective", [False, True])
def test_cpu_twin_rebalancer_equals_the_model(cut_objective):
    """jet.rebalance_rounds (njit, the CPU twin of rebalance_device) against the model's rebalancer, from
    partitions with a third of the vertices piled into block 0, some of them fixed."""
    from hgpart.refinement.jet import REBALANCE_ROUNDS, rebalance_rounds

    balanced_count = 0
    for hypergraph, k, movable in device_cases(8):
        blocks, bounds = balanced_random(hypergraph, k, 0.05, 1)
        crowded = np.where(np.arange(hypergraph.num_vertices) % 3 == 0, 0, blocks).astype(np.int32)
        want, want_balanced = jet_model.rebalance(hypergraph, crowded, k, bounds, cut_objective, movable)
        got = crowded.copy()
        pin_counts = compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices, got, k)
        block_weights = np.bincount(got, weights=hypergraph.vertex_weights, minlength=k).astype(np.int64)
        free = np.ones(hypergraph.num_vertices, dtype=np.bool_) if movable is None else movable
        got_balanced = rebalance_rounds(hypergraph.net_offsets, hypergraph.vertex_offsets, hypergraph.incident_nets,
                                        hypergraph.net_weights, hypergraph.vertex_weights, got, pin_counts,
                                        block_weights, bounds, k, free, cut_objective, REBALANCE_ROUNDS)
        assert got_balanced == want_balanced
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(pin_counts, compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices,
                                                                     got, k))
        balanced_count += got_balanced
    assert balanced_count >= 6


def test_host_fm_refines_small_inputs_only():
    """The GPU path's last step: FM on the host improves a Jet partition of ibm01 (km1 and cut, moves only
    the free vertices) and leaves inputs above gpu_v_cycle_max_pins pins, or gpu_host_fm off, alone."""
    from dataclasses import replace

    from hgpart.config import make_config
    from hgpart.io import read_hypergraph
    from hgpart.multilevel import host_fm
    from hgpart.refinement.jet import jet_refine

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    k = 8
    bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.03), dtype=np.int64)
    start = (np.arange(hypergraph.num_vertices) * k // hypergraph.num_vertices).astype(np.int32)
    fixed = np.where(np.arange(hypergraph.num_vertices) % 9 == 0, start, -1).astype(np.int32)
    for objective in ("km1", "cut"):
        config = make_config(k, 0.03, objective, 0)
        jet = jet_refine(hypergraph, start, k, bounds, 24, objective == "cut", fixed < 0)
        refined = host_fm(hypergraph, jet, k, bounds, config, objective == "cut", fixed)
        before, after = evaluate(hypergraph, jet, k, 0.03), evaluate(hypergraph, refined, k, 0.03)
        assert after.balanced and getattr(after, objective) < getattr(before, objective), objective
        np.testing.assert_array_equal(refined[fixed >= 0], fixed[fixed >= 0])
        for off in (replace(config.refinement, gpu_host_fm=False),
                    replace(config.refinement, gpu_v_cycle_max_pins=hypergraph.num_pins - 1,
                            gpu_pair_fm_sweeps=0)):
            assert host_fm(hypergraph, jet, k, bounds, replace(config, refinement=off), objective == "cut",
                           fixed) is jet


def test_host_fm_above_the_pin_limit_is_pairwise_where_nets_span_many_blocks():
    """Above gpu_v_cycle_max_pins, for km1: pairwise FM improves a Jet partition of a long-tailed input
    (km1 about 5 times the cut) and keeps the fixed vertices; a grid's (km1 / cut about 1), the cut
    objective, and gpu_pair_fm_sweeps = 0 are left alone."""
    from dataclasses import replace

    from hgpart.config import make_config
    from hgpart.multilevel import host_fm
    from hgpart.refinement.jet import jet_refine

    k = 8
    for hypergraph, runs in ((generate.long_tailed(3000, seed=1), True), (generate.grid(3600, seed=1), False)):
        n = hypergraph.num_vertices
        bounds = np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, 0.03), dtype=np.int64)
        start = (np.arange(n) * k // n).astype(np.int32)
        fixed = np.where(np.arange(n) % 9 == 0, start, -1).astype(np.int32)
        jet = jet_refine(hypergraph, start, k, bounds, 24, False, fixed < 0)
        before = evaluate(hypergraph, jet, k, 0.03)
        assert (before.km1 >= 3 * before.cut) == runs
        config = make_config(k, 0.03, "km1", 0)
        large = replace(config, refinement=replace(config.refinement, gpu_v_cycle_max_pins=hypergraph.num_pins - 1))
        refined = host_fm(hypergraph, jet, k, bounds, large, False, fixed)
        if runs:
            after = evaluate(hypergraph, refined, k, 0.03)
            assert after.balanced and after.km1 < 0.98 * before.km1, (before.km1, after.km1)
            np.testing.assert_array_equal(refined[fixed >= 0], fixed[fixed >= 0])
        else:
            assert refined is jet
        for off in (replace(large.refinement, gpu_pair_fm_sweeps=0), large.refinement):
            assert host_fm(hypergraph, jet, k, bounds, replace(config, refinement=off), off is large.refinement,
                           fixed) is jet
