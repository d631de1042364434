"""GPU coarsening against its CPU twin: PTX compilation everywhere, exact agreement on a real GPU."""

import numpy as np
import pytest

from hgpart import Hypergraph, generate
from hgpart.coarsening.matching import compute_clustering
from hgpart.config import CoarseningConfig
from hgpart.io import read_hypergraph

from .conftest import DATA

PROPOSE_SIGNATURE = ("void(int64[:], int32[:], int64[:], int32[:], int64[:], int64[:], int64[:], int32[:], int64[:], "
                     "int64, boolean, boolean, int64[:], int32[:], int32[:])")
HEAVY_SIGNATURE = ("void(int64[:], int32[:], int64[:], int32[:], int64[:], int64[:], int64[:], int32[:], int64[:], "
                   "int64, boolean, boolean, int32[:], int64[:], int32[:], int64[:], int32[:])")
MUTUAL_SIGNATURE = "void(int32[:], int32[:], int32[:], int64[:])"


def test_coarsening_kernels_compile_to_ptx():
    cuda = pytest.importorskip("numba.cuda")
    from hgpart.coarsening import gpu_contraction, gpu_matching

    for kernel, signature in ((gpu_contraction.net_hash_kernel, "void(int64[:], int32[:], uint64[:])"),
                              (gpu_contraction.merge_kernel,
                               "void(int64[:], int64[:], int64[:], int32[:], int64[:], int64[:], int64[:])"),
                              (gpu_contraction.scatter_add_kernel, "void(int32[:], int64[:], int64[:])")):
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
        assert ".entry" in ptx

    ptx, _ = cuda.compile_ptx(gpu_matching.propose_kernel.py_func, PROPOSE_SIGNATURE, cc=(9, 0))
    assert "atom.shared.cas" in ptx or "atom.cas" in ptx
    assert "shfl.sync" in ptx
    ptx, _ = cuda.compile_ptx(gpu_matching.heavy_propose_kernel.py_func, HEAVY_SIGNATURE, cc=(9, 0))
    assert "bar.sync" in ptx or "barrier" in ptx
    ptx, _ = cuda.compile_ptx(gpu_matching.mutual_kernel.py_func, MUTUAL_SIGNATURE, cc=(9, 0))
    assert "atom" in ptx


def instances():
    rng = np.random.default_rng(4)
    for seed in range(3):
        n = 300
        nets = [rng.choice(n, size=int(rng.integers(2, 9)), replace=False) for _ in range(500)]
        yield f"random{seed}", Hypergraph.from_pin_lists(nets, n, rng.integers(1, 4, n), rng.integers(1, 5, 500))
    yield "ibm01", read_hypergraph(str(DATA / "ibm01.hgr"))
    yield "long-tailed", generate.long_tailed(20000, seed=3)  # hubs overflow the shared-memory table
    yield "evenly", generate.evenly(50000, seed=3)


CONFIGS = [CoarseningConfig(), CoarseningConfig(rating="inner-product"), CoarseningConfig(weight_penalty=True),
           CoarseningConfig(join_unmatched=False)]


@pytest.mark.gpu
@pytest.mark.parametrize("config", CONFIGS, ids=["default", "inner-product", "penalty", "matching-only"])
def test_gpu_clustering_equals_cpu(config):
    from hgpart.coarsening.gpu_matching import compute_clustering_gpu

    for name, hypergraph in instances():
        max_weight = max(2, -(-hypergraph.total_vertex_weight // 320))
        fixed = np.where(np.arange(hypergraph.num_vertices) % 17 == 0, np.arange(hypergraph.num_vertices) % 3, -1)
        for keys in (None, fixed):
            cpu, cpu_count = compute_clustering(hypergraph, max_weight, config, keys)
            gpu, gpu_count = compute_clustering_gpu(hypergraph, max_weight, config, keys)
            assert gpu_count == cpu_count, name
            np.testing.assert_array_equal(gpu, cpu, err_msg=name)


@pytest.mark.gpu
def test_device_contraction_equals_cpu():
    from hgpart.coarsening.contraction import contract
    from hgpart.coarsening.gpu_contraction import contract_device, level_to_device, level_to_host

    graph_like = read_hypergraph(str(DATA / "karate.graph"))  # two-pin nets: contraction makes identical nets
    for name, hypergraph in list(instances()) + [("karate", graph_like)]:
        for seed in range(2):
            cluster, count = compute_clustering(hypergraph, 10**9 if seed else 8, CoarseningConfig(), None)
            expected = contract(hypergraph, cluster, count)
            got = level_to_host(contract_device(level_to_device(hypergraph), cluster, count))
            for field in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights",
                          "net_weights"):
                np.testing.assert_array_equal(getattr(got, field), getattr(expected, field), err_msg=f"{name} {field}")


@pytest.mark.gpu
def test_gpu_hierarchy_equals_cpu():
    from hgpart.coarsening import coarsen

    for name, hypergraph in instances():
        cpu = coarsen(hypergraph, 2)
        gpu = coarsen(hypergraph, 2, device="gpu")
        assert len(cpu.levels) == len(gpu.levels), name
        for mine, theirs in zip(gpu.levels, cpu.levels):
            np.testing.assert_array_equal(mine.cluster, theirs.cluster, err_msg=name)
        np.testing.assert_array_equal(gpu.coarsest.pin_vertices, cpu.coarsest.pin_vertices, err_msg=name)
