"""The whole multilevel partitioner: brute-force optima, balance, fixed vertices, determinism, errors, warm-up."""

import numpy as np
import pytest

from hgpart import Hypergraph, InfeasibleError
from hgpart.config import make_config
from hgpart.io import read_hypergraph
from hgpart.metrics import evaluate, max_block_weight
from hgpart.multilevel import partition

from .conftest import DATA
from .helpers import IBM01, random_hypergraph
from .naive import best_partition_naive


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


def test_a_cold_warm_up_compiles_in_helper_processes_and_changes_no_partition():
    """With an empty numba cache (a fresh process, ``NUMBA_CACHE_DIR`` an empty folder) the warm-up sees the
    cache cold and helper processes compile the bisection portfolio into it (this process never compiles the
    portfolio, yet the cache holds it afterwards); a partition in the next process, from that cache, equals
    the one computed here. The processes start once the tests are collected (tests/background.py)."""
    from hgpart.compilation import HELPER_SHARES, compile_share

    from . import background

    for share in HELPER_SHARES:  # each helper's share, in this process: it must simply run
        compile_share(share, "km1")
    with pytest.raises(ValueError, match="unknown share"):
        compile_share("everything")
    warm_up, partitioned = background.result(
        "test_a_cold_warm_up_compiles_in_helper_processes_and_changes_no_partition")
    for status, output in (warm_up, partitioned):
        assert status == 0, output[-3000:]
    assert warm_up[1].split() == ["True", "False", "0"], warm_up[1]
    assert int(partitioned[1]) == partition(read_hypergraph(str(IBM01)), 8, seed=1, device="cpu").km1


def _in_a_fresh_process(code: str):
    """The finished run of the Python ``code`` in a new interpreter (from the repository's root); fails the
    test where it exits with an error."""
    import subprocess
    import sys

    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                            cwd=str(DATA.parent))
    assert output.returncode == 0, output.stderr[-3000:]
    return output


@pytest.mark.gpu
def test_gpu_warm_up_compiles_the_device_community_detection():
    """In a fresh process, ``warm_up(device="gpu")`` leaves the device's clustering kernels alone for an input
    of few vertices and nets, however many pins (the host's twin finds its communities), and compiles them for
    one whose communities the device finds, so that its first partition spends no time compiling them."""
    code = "\n".join([
        "from hgpart.compilation import warm_up",
        "from hgpart.graphs.clustering import device_moving",
        "warm_up(device='gpu', input_pins=600_000, input_nodes=30_000)",
        "print(len(device_moving.link_kernel.overloads))",
        "warm_up(device='gpu', input_pins=600_000, input_nodes=300_000)",
        "print(len(device_moving.link_kernel.overloads))"])
    output = _in_a_fresh_process(code)
    assert output.stdout.split() == ["0", "1"], output.stdout


def test_warm_up_compiles_the_parallel_drivers():
    """In a fresh process, ``warm_up`` for a small input leaves the parallel drivers alone but the coarsening's
    proposals (a coarse level's rating work can need them on any input; the contraction's, which only levels
    of as many pins as the bound take, stay uncompiled); for a large one
    (or any, without ``input_pins``), with the GPU path's pairwise-FM warm-up, it leaves every parallel driver
    of the partitioning compiled (or loaded from numba's cache), though its tiny input would only take the
    serial ones: a large input's first partition then spends no time compiling."""
    import numba

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("one numba thread: the serial drivers run whatever the size")
    drivers = {"hgpart.coarsening.contraction": ["_map_sort_count_worker", "_merge_buckets_worker"],
               "hgpart.coarsening.matching": ["_propose_worker"],
               "hgpart.refinement.flows": ["_count_cut_pairs_worker", "_fill_cut_pairs_worker"],
               "hgpart.refinement.gains": ["_pin_counts_parallel"],
               "hgpart.refinement.label_propagation": ["_rate_chunk"],
               "hgpart.refinement.pair_fm": ["_round_parallel", "_round_serial"]}
    code = "\n".join([
        "import importlib, numpy as np",
        "from hgpart import Hypergraph",
        "from hgpart.compilation import warm_up, _warm_up_pair_fm",
        "from hgpart.coarsening.matching import _propose_worker",
        "from hgpart.coarsening.contraction import _map_sort_count_worker, _merge_buckets_worker",
        "warm_up(input_pins=99_999)",
        "print('small', len(_propose_worker.signatures), len(_map_sort_count_worker.signatures),",
        "      len(_merge_buckets_worker.signatures))",
        "warm_up(input_pins=100_000)",
        "rng = np.random.default_rng(1)",
        "_warm_up_pair_fm(Hypergraph.from_pin_lists([rng.choice(60, 3, replace=False) for _ in range(90)], 60))",
        f"for module, names in {drivers!r}.items():",
        "    for name in names:",
        "        print(module, name, len(getattr(importlib.import_module(module), name).signatures))"])
    output = _in_a_fresh_process(code)
    small, *counts = [line.split() for line in output.stdout.splitlines()]
    assert small == ["small", "1", "0", "0"], output.stdout
    assert len(counts) == sum(len(names) for names in drivers.values())
    assert all(int(count) >= 1 for _, _, count in counts), output.stdout


def test_the_coarsening_warm_up_compiles_coarsening_alone():
    """In a fresh process, ``warm_up_coarsening`` (``hgpart coarsen``'s) compiles the coarsening, with the
    parallel proposals that a coarse level of a small input can take on two threads, and nothing of the
    initial partitioning or of the contraction's parallel drivers."""
    import numba

    code = "\n".join([
        "from hgpart.compilation import warm_up_coarsening",
        "from hgpart.coarsening.contraction import _contract_serial, _map_sort_count_worker",
        "from hgpart.coarsening.matching import _propose_worker",
        "from hgpart.initial.portfolio import _portfolio_serial",
        "from hgpart.refinement.refiner import refine_serial",
        "warm_up_coarsening(input_pins=99_999)",
        "print(*(len(f.signatures) for f in (_contract_serial, _propose_worker, _map_sort_count_worker,",
        "                                    _portfolio_serial, refine_serial)))"])
    output = _in_a_fresh_process(code)
    proposals = "1" if numba.config.NUMBA_NUM_THREADS >= 2 else "0"
    assert output.stdout.split() == ["1", proposals, "0", "0", "0"], output.stdout


@pytest.mark.gpu
def test_the_coarsening_warm_up_on_the_gpu_compiles_its_device_levels():
    """``warm_up_coarsening("gpu")`` in a fresh process compiles the device's coarsening kernels (its tiny
    input's levels on the GPU too, the hubs' kernel on ``long_tailed(5000)``) and nothing of the portfolio."""
    code = "\n".join([
        "from hgpart.compilation import warm_up_coarsening",
        "from hgpart.coarsening.gpu import contraction, heavy",
        "from hgpart.initial.portfolio import _portfolio_serial",
        "warm_up_coarsening('gpu', input_pins=1_000)",
        "print(*(len(f.overloads) > 0 for f in (contraction.net_hash_kernel, heavy.heavy_rate_kernel)),",
        "      len(_portfolio_serial.signatures))"])
    assert _in_a_fresh_process(code).stdout.split() == ["True", "True", "0"]


def test_helpers_import_this_package_whatever_their_working_directory(monkeypatch, tmp_path):
    """A cold warm-up's helper runs ``python -c``, which puts its working directory first on the path: a
    source tree there (another ``hgpart``, e.g. the clone an installed package came from) must not be the
    package it compiles, or numba caches its code under that tree's paths and this process compiles it
    again."""
    import subprocess
    import sys

    import hgpart
    from hgpart import compilation

    commands = []

    class Recorded:
        def __init__(self, command, **_):
            commands.append(command)

        def kill(self):
            pass

    monkeypatch.setattr(compilation, "_numba_cache_is_cold", lambda: True)
    monkeypatch.setattr(compilation, "_cores", lambda: 2)
    real_popen = subprocess.Popen
    monkeypatch.setattr(subprocess, "Popen", Recorded)
    monkeypatch.setattr(compilation, "_HELPERS", {})
    compilation.start_compile_helpers("km1")
    monkeypatch.setattr(subprocess, "Popen", real_popen)
    assert len(commands) == 1 and commands[0][:2] == [sys.executable, "-c"]
    (tmp_path / "hgpart").mkdir()
    (tmp_path / "hgpart" / "__init__.py").write_text("raise ImportError('another hgpart')\n")
    code = commands[0][2].split("compile_share(", 1)[0] + "\nprint(sys.modules['hgpart'].__file__)"
    imported = subprocess.run([sys.executable, "-c", code], cwd=str(tmp_path),
                              capture_output=True, text=True, timeout=300)
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.stdout.strip() == hgpart.__file__
