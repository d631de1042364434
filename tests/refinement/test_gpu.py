"""GPU refinement (Jet-style rounds, afterburner, rebalancer) against its numpy model, whose gains are
brute force; the model against the CPU path's gains; the CPU twin (refinement.jet) against the model."""

import numpy as np
import pytest

from hgpart import Hypergraph
from hgpart.metrics import max_block_weight
from hgpart.refinement.gains import best_move, compute_pin_counts, move_scratch

from .. import jet_model

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
    scratch_gain, scratch_adjacent = move_scratch(k)
    for v in range(hypergraph.num_vertices):
        target, gain = best_move(v, blocks, hypergraph.net_offsets, hypergraph.pin_vertices,
                                 hypergraph.vertex_offsets, hypergraph.incident_nets, hypergraph.net_weights,
                                 hypergraph.vertex_weights, pin_counts, block_weights, bounds, k, cut_objective, True,
                                 scratch_gain, scratch_adjacent)
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
        scratch_gain, scratch_adjacent = move_scratch(k)
        for only_adjacent in (True, False):
            targets, gains, internals = (to_host(array) for array in state.rate(
                to_device(bounds), cut_objective, only_adjacent, to_device(active.astype(np.int8))))
            for v in range(hypergraph.num_vertices):
                target, gain = best_move(v, blocks, hypergraph.net_offsets, hypergraph.pin_vertices,
                                         hypergraph.vertex_offsets,
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
        got_balanced = rebalance_rounds(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets,
                                        hypergraph.incident_nets, hypergraph.net_weights, hypergraph.vertex_weights,
                                        got, pin_counts, block_weights, bounds, k, free, cut_objective,
                                        REBALANCE_ROUNDS)
        assert got_balanced == want_balanced
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(pin_counts, compute_pin_counts(hypergraph.net_offsets, hypergraph.pin_vertices,
                                                                     got, k))
        balanced_count += got_balanced
    assert balanced_count >= 6
