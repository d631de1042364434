"""The driver and its policy: the GPU path's decisions (FM on the host after Jet on small inputs' coarser
levels, pairwise FM at the end of large ones), checked through its CPU twin; the GPU path against its twin
(gpu marker)."""

import gc
from dataclasses import replace

import numpy as np
import pytest

from hgpart import generate
from hgpart.backends import HostBackend, backends_for
from hgpart.config import CoarseningConfig, CommunityConfig, FlowConfig, choose_communities, make_config
from hgpart.io import read_hypergraph
from hgpart.metrics import evaluate, max_block_weight
from hgpart.multilevel import Level, final_refinement, gpu_path_on_cpu, partition, v_cycle
from hgpart.policy import HOST, DEVICE, Policy
from hgpart.refinement.jet import jet_refine

from .conftest import DATA, SHARED


def bounds_of(hypergraph, k, epsilon=0.03):
    return np.full(k, max_block_weight(hypergraph.total_vertex_weight, k, epsilon), dtype=np.int64)


def with_policy(config, **settings):
    return replace(config, policy=replace(config.policy, **settings))


def test_the_policy_runs_flows_where_their_levels_say():
    def policy(levels, path="cpu", pins=100):
        return Policy(make_config(8, flows=FlowConfig(levels=levels)), path, pins)

    assert policy("none").final_refiners == () and policy("none").level_refiners(100, True) == ("label propagation + FM",)
    assert policy("last").final_refiners == ("flows",) and "flows" not in policy("last").level_refiners(100, True)
    assert policy("input").level_refiners(100, True)[-1] == "flows" and policy("input").final_refiners == ()
    assert "flows" not in policy("input").level_refiners(100, False)
    assert policy("all").level_refiners(100, False)[-1] == "flows"
    assert policy("none", "gpu", 10_000).final_refiners == ("host FM",)
    assert policy("all", "gpu", 10_000).level_refiners(100) == ("jet", "host FM", "flows")
    assert policy("all", "gpu", 3_000_000).final_refiners == ("pairwise FM",)  # large inputs: no flows
    assert policy("all", "gpu", 3_000_000).level_refiners(100) == ("jet",)
    assert make_config(8, preset="fast").flows.levels == "none" and make_config(8, preset="quality").flows.levels == "all"
    with pytest.raises(ValueError, match="unknown flow levels"):
        FlowConfig(levels="some")


def test_the_policy_places_levels_and_refiners_by_size():
    config = make_config(8)
    small, large = Policy(config, "gpu", 1_000_000), Policy(config, "gpu", 3_000_000)
    assert Policy(config, "cpu", 10**9).coarsened_on(10**9) == HOST
    assert small.coarsened_on(30_000) == HOST and small.coarsened_on(30_001) == DEVICE
    assert Policy(config, "cpu", 1).levels_kept == HOST and small.levels_kept == DEVICE
    assert small.level_refiners(500_000) == ("jet", "host FM", "flows") and small.level_refiners(500_001) == ("jet",)
    assert large.level_refiners(100) == ("jet",)
    assert Policy(config, "cpu", 100).level_refiners(100) == ("label propagation + FM", "flows")
    assert (small.v_cycles, large.v_cycles, Policy(config, "cpu", 10**9).v_cycles) == (0, 0, 0)  # the default
    cycled = with_policy(config, v_cycles=1)
    assert [Policy(cycled, path, pins).v_cycles for path, pins in (("gpu", 1_000_000), ("gpu", 3_000_000),
                                                                     ("cpu", 10**9))] == [1, 0, 1]
    assert (small.final_refiners, large.final_refiners) == (("host FM", "flows"), ("pairwise FM",))
    assert Policy(replace(config, objective="cut"), "gpu", 3_000_000).final_refiners == ()
    assert Policy(config, "cpu", 100).final_refiners == ()  # flows ran on every level, the input's included
    assert large.initial_config(1000).initial.fm_candidates == config.policy.large_input_fm_candidates
    assert small.initial_config(1000) == replace(config, fm=replace(config.fm, fruitless_moves=1000))  # initial's
    bound = config.policy.host_communities_max_nodes
    assert (small.communities_on, Policy(config, "gpu", bound).communities_on) == (DEVICE, HOST)
    # by the vertices and nets: a dense input of many pins but few of them goes to the host's twin
    assert Policy(config, "gpu", 600_000, input_nodes=bound).communities_on == HOST
    assert Policy(config, "gpu", 600_000, input_nodes=bound + 1).communities_on == DEVICE
    assert Policy(config, "cpu", 2_000_000).communities_on == HOST
    assert large.communities_on is None and Policy(config, "cpu", 2_000_001).communities_on is None  # max_pins
    forced = replace(config, communities=choose_communities(config.communities, True))
    assert Policy(forced, "gpu", 10**9).communities_on == DEVICE
    assert Policy(make_config(8, preset="quality"), "cpu", 10**9).communities_on == HOST
    assert Policy(make_config(2), "gpu", 1_000_000).communities_on == DEVICE  # at k = 2 too, by default
    assert Policy(make_config(2, communities=CommunityConfig(min_k=4)), "gpu", 1_000_000).communities_on is None
    assert Policy(make_config(8, communities=CommunityConfig(detect=False)), "cpu", 1).communities_on is None
    assert Policy(config, "cpu", 100, mesh_graph=True).communities_on is None  # as Mt-KaHyPar
    assert Policy(forced, "cpu", 100, mesh_graph=True).communities_on == HOST
    with pytest.raises(ValueError):
        Policy(config, "tpu", 1)


def test_each_path_coarsens_to_its_own_contraction_limit(monkeypatch):
    """The hierarchy and the initial partitioning's bisections coarsen with ``contraction_limit_factor`` on the
    CPU path and on the GPU path's small inputs (its twin here), with ``device_contraction_limit_factor`` on
    the GPU path's inputs above ``policy.device_v_cycle_max_pins``."""
    import hgpart.multilevel as multilevel

    seen = []
    build, initial = multilevel.build_hierarchy, multilevel.initial_partition

    def recording_build(hypergraph, k, config, *args, **kwargs):
        seen.append(("hierarchy", config.contraction_limit_factor))
        return build(hypergraph, k, config, *args, **kwargs)

    def recording_initial(hypergraph, k, epsilon, config, *args, **kwargs):
        seen.append(("initial", config.coarsening.contraction_limit_factor))
        return initial(hypergraph, k, epsilon, config, *args, **kwargs)

    monkeypatch.setattr(multilevel, "build_hierarchy", recording_build)
    monkeypatch.setattr(multilevel, "initial_partition", recording_initial)
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    config = make_config(8, seed=0, coarsening=CoarseningConfig(contraction_limit_factor=70,
                                                                device_contraction_limit_factor=130))
    partition(hypergraph, config=config, device="cpu")
    assert seen == [("hierarchy", 70), ("initial", 70)]
    seen.clear()
    gpu_path_on_cpu(hypergraph, config)
    assert seen == [("hierarchy", 70), ("initial", 70)]
    seen.clear()
    large = replace(config, policy=replace(config.policy, device_v_cycle_max_pins=hypergraph.num_pins - 1))
    gpu_path_on_cpu(hypergraph, large)
    assert seen == [("hierarchy", 130), ("initial", 130)]
    policy = Policy(large, "gpu", hypergraph.num_pins)
    assert (policy.contraction_limit_factor, policy.with_contraction_limit().config.coarsening.contraction_limit_factor,
            Policy(large, "cpu", hypergraph.num_pins).contraction_limit_factor) == (130, 130, 70)


def test_cpu_twin_of_the_gpu_path_is_balanced_and_close_to_the_cpu_path():
    """The GPU path (Jet refinement, then the host's FM on the input) stays within 10% of the CPU path's km1,
    as a geometric mean over three seeds: one seed's km1 varies by about 5% either way."""
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    for k in (2, 8):
        twin_km1, cpu_km1 = [], []
        for seed in (0, 1, 2):
            twin = evaluate(hypergraph, gpu_path_on_cpu(hypergraph, make_config(k, seed=seed)).partition, k, 0.03)
            assert twin.balanced, (k, seed)
            twin_km1.append(twin.km1)
            cpu_km1.append(partition(hypergraph, k, seed=seed, device="cpu").metrics.km1)
        ratio = np.exp(np.mean(np.log(twin_km1)) - np.mean(np.log(cpu_km1)))
        assert ratio <= 1.1, (k, twin_km1, cpu_km1)


def test_host_fm_refines_the_coarser_levels_of_small_inputs(monkeypatch):
    """On inputs of at most device_v_cycle_max_pins pins, the GPU path's twin runs the host's FM after Jet on
    exactly the coarser levels of at most host_fm_level_fraction of the input's pins, and at the end on the
    input; on larger inputs, or with host_fm off, on none."""
    from hgpart import multilevel

    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    k = 4
    jet_pins, fm_pins = [], []
    real_jet, real_refine = HostBackend.jet, multilevel.refine

    def jet(level, *args):
        jet_pins.append(level.num_pins)
        return real_jet(level, *args)

    def refine(level, blocks, k, bounds, label_propagation, *args):
        if label_propagation.rounds == 0:
            fm_pins.append(level.num_pins)
        return real_refine(level, blocks, k, bounds, label_propagation, *args)

    monkeypatch.setattr(HostBackend, "jet", staticmethod(jet))
    monkeypatch.setattr(multilevel, "refine", refine)
    for fraction, max_pins, host_fm in ((0.5, 2_000_000, True), (0.2, 2_000_000, True), (0.5, 10_000, True),
                                        (0.5, 2_000_000, False), (0.0, 2_000_000, True)):
        config = with_policy(make_config(k), host_fm_level_fraction=fraction, device_v_cycle_max_pins=max_pins,
                             host_fm=host_fm, v_cycles=0)
        jet_pins.clear()
        fm_pins.clear()
        result = gpu_path_on_cpu(hypergraph, config)
        small = hypergraph.num_pins <= max_pins and host_fm
        expected = [pins for pins in jet_pins if small and pins < hypergraph.num_pins
                    and pins <= fraction * hypergraph.num_pins]
        assert fm_pins == expected + ([hypergraph.num_pins] if small else []), (fraction, max_pins, host_fm)
        assert result.metrics.balanced
    assert len(set(jet_pins)) > 2 and jet_pins[-1] == hypergraph.num_pins
    assert any(pins > 0.5 * hypergraph.num_pins for pins in jet_pins[:-1])


@pytest.mark.skipif(not (SHARED / "bundle1.mtx.hgr.gz").exists(), reason="../shared/data is absent")
def test_the_gpu_path_on_big_nets_stays_within_reach_of_the_cpu_path():
    """bundle1 k=2 (nets of 73 pins on average), where Jet's single moves stall on the coarse levels: the GPU
    path's twin (Jet, the host's FM on the coarser levels and on the input) ends within 5% of the CPU path,
    balanced. Without community detection, which hides the effect (its coarse levels stay inside
    communities, and Jet then finds the CPU path's cut)."""
    hypergraph = read_hypergraph(str(SHARED / "bundle1.mtx.hgr.gz"))
    config = make_config(2, communities=CommunityConfig(detect=False))
    cpu = partition(hypergraph, config=config, device="cpu").metrics.km1
    twin = evaluate(hypergraph, gpu_path_on_cpu(hypergraph, config).partition, 2, 0.03)
    assert twin.balanced and twin.km1 <= 1.05 * cpu, (twin.km1, cpu)


def test_the_last_refiner_is_fm_on_small_inputs_only():
    """The GPU path's last step: FM on the host improves a Jet partition of ibm01 (km1 and cut, moves only the
    free vertices) and leaves inputs above device_v_cycle_max_pins pins (without pairwise FM), or host_fm off,
    alone; the CPU path's last step, flows with flows.levels last, improves it too and is skipped with the other
    levels (none, or all: the default, which has run them on the input level already)."""
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    k = 8
    bounds = bounds_of(hypergraph, k)
    start = (np.arange(hypergraph.num_vertices) * k // hypergraph.num_vertices).astype(np.int32)
    fixed = np.where(np.arange(hypergraph.num_vertices) % 9 == 0, start, -1).astype(np.int32)
    for objective in ("km1", "cut"):
        config = make_config(k, 0.03, objective, 0)
        jet = jet_refine(hypergraph, start, k, bounds, 24, objective == "cut", fixed < 0)
        refined = final_refinement(hypergraph, jet, bounds, Policy(config, "gpu", hypergraph.num_pins), fixed)
        before, after = evaluate(hypergraph, jet, k, 0.03), evaluate(hypergraph, refined, k, 0.03)
        assert after.balanced and getattr(after, objective) < getattr(before, objective), objective
        np.testing.assert_array_equal(refined[fixed >= 0], fixed[fixed >= 0])
        off = [with_policy(config, host_fm=False),
               replace(with_policy(config, device_v_cycle_max_pins=hypergraph.num_pins - 1),
                       pair_fm=replace(config.pair_fm, sweeps=0))]
        for changed in off:
            assert final_refinement(hypergraph, jet, bounds, Policy(changed, "gpu", hypergraph.num_pins), fixed) is jet
        no_flows = replace(config, flows=FlowConfig(levels="none"))
        assert final_refinement(hypergraph, jet, bounds, Policy(no_flows, "cpu", hypergraph.num_pins), fixed) is jet
        last = replace(config, flows=replace(config.flows, levels="last"))
        assert final_refinement(hypergraph, jet, bounds, Policy(config, "cpu", hypergraph.num_pins), fixed) is jet
        flowed = final_refinement(hypergraph, jet, bounds, Policy(last, "cpu", hypergraph.num_pins), fixed)
        after = evaluate(hypergraph, flowed, k, 0.03)
        assert after.balanced and getattr(after, objective) < getattr(before, objective), objective
        np.testing.assert_array_equal(flowed[fixed >= 0], fixed[fixed >= 0])


def test_the_last_refiner_of_large_inputs_is_pairwise_where_nets_span_many_blocks():
    """Above device_v_cycle_max_pins, for km1: pairwise FM improves a Jet partition of a long-tailed input (km1
    about 5 times the cut) and keeps the fixed vertices; a grid's (km1 / cut about 1), the cut objective and
    pair_fm.sweeps = 0 are left alone."""
    k = 8
    for hypergraph, runs in ((generate.long_tailed(3000, seed=1), True), (generate.grid(3600, seed=1), False)):
        n = hypergraph.num_vertices
        bounds = bounds_of(hypergraph, k)
        start = (np.arange(n) * k // n).astype(np.int32)
        fixed = np.where(np.arange(n) % 9 == 0, start, -1).astype(np.int32)
        jet = jet_refine(hypergraph, start, k, bounds, 24, False, fixed < 0)
        before = evaluate(hypergraph, jet, k, 0.03)
        assert (before.km1 >= 3 * before.cut) == runs
        large = with_policy(make_config(k), device_v_cycle_max_pins=hypergraph.num_pins - 1)
        refined = final_refinement(hypergraph, jet, bounds, Policy(large, "gpu", n and hypergraph.num_pins), fixed)
        if runs:
            after = evaluate(hypergraph, refined, k, 0.03)
            assert after.balanced and after.km1 < 0.98 * before.km1, (before.km1, after.km1)
            np.testing.assert_array_equal(refined[fixed >= 0], fixed[fixed >= 0])
        else:
            assert refined is jet
        for off in (replace(large, pair_fm=replace(large.pair_fm, sweeps=0)), replace(large, objective="cut")):
            assert final_refinement(hypergraph, jet, bounds, Policy(off, "gpu", hypergraph.num_pins), fixed) is jet


def test_a_partition_with_fixed_vertices_on_the_gpu_path_twin_keeps_them():
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    fixed = np.full(hypergraph.num_vertices, -1, dtype=np.int32)
    fixed[::13] = np.arange(hypergraph.num_vertices)[::13] % 4
    result = gpu_path_on_cpu(hypergraph, make_config(4, seed=2), fixed)
    assert result.metrics.balanced
    np.testing.assert_array_equal(result.partition[fixed >= 0], fixed[fixed >= 0])


@pytest.mark.gpu
def test_gpu_partition_equals_its_cpu_twin():
    """partition(device="gpu") == its CPU twin (the same policy on the host backend); balanced;
    deterministic; its quality against the CPU path (LP + FM + V-cycle) printed."""
    ibm01 = read_hypergraph(str(DATA / "ibm01.hgr"))
    cases = [(ibm01, "ibm01", (2, 8, 32), ("km1", "cut"), "default"),
             (ibm01, "ibm01", (8,), ("km1",), "quality"),  # two V-cycles on the device
             (generate.evenly(20000, seed=2), "evenly 20k", (8,), ("km1",), "default"),
             (generate.long_tailed(5000, seed=2), "long-tailed 5k pairwise", (8, 32), ("km1",), "pairwise")]
    for hypergraph, name, ks, objectives, preset in cases:
        for k in ks:
            for objective in objectives:
                config = make_config(k, 0.03, objective, 1, "default" if preset == "pairwise" else preset)
                if preset == "pairwise":  # the policy of a large input: pairwise FM at the end
                    config = with_policy(config, device_v_cycle_max_pins=0)
                gc.collect()  # the peak counts the arrays still alive when it starts: both runs start from none
                gpu = partition(hypergraph, config=config, device="gpu")
                assert gpu.device == "gpu" and gpu.device_memory_bytes > 0
                np.testing.assert_array_equal(gpu.partition, gpu_path_on_cpu(hypergraph, config).partition,
                                              err_msg=f"{name} k={k} {objective} {preset}")
                check = evaluate(hypergraph, gpu.partition, k, 0.03)
                assert check.balanced, (name, k, objective)
                gc.collect()
                again = partition(hypergraph, config=config, device="gpu")
                np.testing.assert_array_equal(again.partition, gpu.partition)  # deterministic
                # the peak counts arrays in use, not the blocks CuPy's pool kept from the run before
                assert again.device_memory_bytes == gpu.device_memory_bytes >= hypergraph.pin_vertices.nbytes
                cpu = partition(hypergraph, config=config, device="cpu")
                value = check.km1 if objective == "km1" else check.cut
                reference = cpu.metrics.km1 if objective == "km1" else cpu.metrics.cut
                print(f"{name} k={k} {objective} {preset}: gpu {value} cpu {reference} "
                      f"ratio {value / max(reference, 1):.3f} gpu {gpu.seconds['total']:.3f} s "
                      f"cpu {cpu.seconds['total']:.3f} s")


@pytest.mark.gpu
def test_the_gpu_driver_on_a_tiny_input_equals_its_cpu_twin():
    """The whole GPU path on a tiny input (levels kept on the device, Jet on every level, the host's FM after
    it, a V-cycle on the device, fixed vertices carried there), against its CPU twin. Runs on a GPU and in CI's
    simulator run (tests/coarsening/test_gpu.py), where _partition is called directly: the simulator has no
    CuPy, which device="gpu" asks for. The km1 run has communities, found by the host (a small input) and
    carried on the device; the device's detection is checked in tests/preprocessing/test_communities.py."""
    from hgpart import Hypergraph
    from hgpart.multilevel import _partition

    rng = np.random.default_rng(0)
    nets = [rng.choice(120, size=int(rng.integers(2, 5)), replace=False) for _ in range(200)]
    hypergraph = Hypergraph.from_pin_lists(nets, 120)
    fixed = np.where(np.arange(120) % 17 == 0, np.arange(120) % 3, -1).astype(np.int32)
    for objective, fixed_vertices in (("km1", None), ("cut", fixed)):
        config = make_config(3, 0.03, objective, 1, communities=CommunityConfig(detect=objective == "km1", min_k=1))
        gpu = _partition(hypergraph, config, fixed_vertices, "gpu", None)
        twin = gpu_path_on_cpu(hypergraph, config, fixed_vertices)
        assert gpu.device == "gpu" and twin.device == "cpu"
        assert gpu.communities == twin.communities and (gpu.communities is None) == (objective == "cut")
        np.testing.assert_array_equal(gpu.partition, twin.partition, err_msg=objective)
        assert gpu.metrics.balanced
        if fixed_vertices is not None:
            np.testing.assert_array_equal(gpu.partition[fixed >= 0], fixed[fixed >= 0])


def test_v_cycle_never_worsens_the_objective():
    hypergraph = read_hypergraph(str(DATA / "sat14_AProVE07-27.cnf.primal.hgr.gz"))
    config = make_config(4, preset="fast")
    start = partition(hypergraph, 4, config=config)
    bound = np.full(4, max_block_weight(hypergraph.total_vertex_weight, 4, 0.03))
    backends = backends_for("cpu")
    input_level = Level(hypergraph, place="host", host=hypergraph)
    improved = v_cycle(input_level, start.partition, bound, Policy(config, "cpu", hypergraph.num_pins), backends)
    after = evaluate(hypergraph, improved, 4, 0.03)
    assert after.balanced and after.km1 <= start.metrics.km1
