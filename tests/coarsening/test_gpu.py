"""GPU coarsening against its CPU twin: PTX compilation everywhere, exact agreement on a real GPU."""

import numpy as np
import pytest
from numba import cuda, int32, uint32  # module globals: the simulator swaps ``cuda`` in a kernel's globals

from hgpart import Hypergraph, generate
from hgpart.coarsening.matching import compute_clustering
from hgpart.config import CoarseningConfig, PolicyConfig
from hgpart.io import read_hypergraph

from ..conftest import DATA

COMMON = ("int64[:], int32[:], int64[:], int32[:], int64[:], int64[:], int64[:], int32[:], int64[:], int64, boolean, "
          "boolean, boolean")
BEST = "int64[:], int64[:], int32[:], int64[:], int64, boolean, boolean, boolean, int32[:]"
TOP = "int32[:], int64[:], int32[:], float64[:], uint8[:]"  # the lists of heavy vertices' best candidates
KERNEL_SIGNATURES = {
    "pooled_propose_kernel": f"void({COMMON}, int32[:], int64[:], int64[:], int32[:])",
    "wide_propose_kernel": f"void({COMMON}, int32[:], int64[:], int32[:])",
    "block_propose_kernel": f"void({COMMON}, int32[:], int64[:], int32[:])",
    "heavy_rate_kernel": "void(int64[:], int32[:], int64[:], int32[:], int64[:], int32[:], int32[:], int64[:], "
                         "int64[:], int32[:], int64[:], int32[:], int64[:], uint8[:])",
    "heavy_best_kernel": f"void({BEST}, int64[:], int32[:], int64[:], int32[:], int64[:], uint8[:], {TOP}, int32[:])",
    "heavy_listed_kernel": f"void({BEST}, {TOP}, uint8[:], int32[:])",
    "mutual_kernel": "void(int32[:], int32[:])",
}
KERNEL_SIGNATURES["split_rate_kernel"] = KERNEL_SIGNATURES["heavy_rate_kernel"]
# the level's set-up and the joining rounds: element-wise, no shuffles
PLAIN_KERNEL_SIGNATURES = {
    "rated_degree_kernel": "void(int64[:], int32[:], int64[:], int64, int64[:])",
    "net_ratings_kernel": "void(int64[:], int64[:], int64, boolean, int64, int64[:])",
    "incident_work_kernel": "void(int64[:], int64[:], int32[:], int64[:])",
    "vertex_work_kernel": "void(int64[:], int64[:], int64[:], int64[:])",
    "vertex_bins_kernel": "void(int64[:], int64[:], int64[:], int64, int64, int64, int64, int64[:], int64[:])",
    "pair_roots_kernel": "void(int32[:], int64[:], int64[:], int64, int32[:], int32[:], int64[:], int64[:], "
                         "int64[:])",
    "root_views_kernel": "void(int32[:], int64[:], int64[:], int64[:], int64[:])",
    "join_keys_kernel": "void(int32[:], int32[:], int64[:], int64[:], int64[:])",
    "joiner_weights_kernel": "void(int64[:], int64[:], int64[:])",
    "join_fits_kernel": "void(int64[:], int64[:], int64[:], int64, int64[:])",
    "apply_joins_kernel": "void(int64[:], int64[:], int32[:], int64[:], int64[:], int64[:], int64, int32[:], "
                          "int32[:], int64[:], int64[:])",
    "first_members_kernel": "void(int32[:], int32[:], int64[:])",
    "cluster_ids_kernel": "void(int32[:], int32[:], int64[:], int32[:])",
    "two_hop_keys_kernel": "void(int32[:], int32[:], int32[:], int64[:], int64[:])",
    "two_hop_pairs_kernel": "void(int64[:], int64[:], int64, int64[:])",
    "two_hop_apply_kernel": "void(int64[:], int64[:], int64[:], int64, int32[:])",
}


def coarsening_kernel(name):
    """The kernel ``name`` of hgpart.coarsening.gpu, from whichever of its modules defines it."""
    import importlib
    import pkgutil

    from hgpart.coarsening import gpu

    for module in pkgutil.iter_modules(gpu.__path__):
        kernel = getattr(importlib.import_module(f"{gpu.__name__}.{module.name}"), name, None)
        if kernel is not None:
            return kernel
    raise LookupError(name)


@pytest.mark.parametrize("name", sorted(KERNEL_SIGNATURES))
def test_matching_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")

    ptx, _ = cuda.compile_ptx(coarsening_kernel(name).py_func, KERNEL_SIGNATURES[name], cc=(9, 0))
    assert ".entry" in ptx
    if name not in ("mutual_kernel", "heavy_best_kernel", "heavy_listed_kernel"):
        assert "atom" in ptx and "shfl.sync" in ptx  # hash-table atomics and warp shuffles
    if name == "pooled_propose_kernel":
        assert "shfl.sync.bfly" in ptx and "shfl.sync.up" in ptx  # segmented argmax, planner scan
    if name == "block_propose_kernel":
        assert "atom.shared.add.u32" in ptx and ".extern .shared" in ptx  # score halves in dynamic shared memory


@pytest.mark.parametrize("name", sorted(PLAIN_KERNEL_SIGNATURES))
def test_level_set_up_and_joining_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")

    ptx, _ = cuda.compile_ptx(coarsening_kernel(name).py_func, PLAIN_KERNEL_SIGNATURES[name], cc=(9, 0))
    assert ".entry" in ptx
    if name in ("pair_roots_kernel", "vertex_work_kernel"):
        assert "atom.shared.add" in ptx and "bar.sync" in ptx  # counted per block, then one global atomic


def test_contraction_and_primitive_kernels_compile_to_ptx():
    cuda = pytest.importorskip("numba.cuda")
    from hgpart.coarsening.gpu import contraction
    from hgpart.cuda import primitives

    two_rows = "int64[:, ::1]"
    for kernel, signature in ((contraction.pin_keys_kernel, "void(int64[:], int32[:], int32[:], int64[:])"),
                              (contraction.distinct_pins_kernel, "void(int64[:], int64[:])"),
                              (contraction.net_sizes_kernel, f"void(int64[:], int64[:], {two_rows})"),
                              (contraction.write_kept_kernel,
                               f"void(int64[:], int64[:], int64[:], int64[:], {two_rows}, int64[:], int32[:], "
                               "int64[:], int64[:], int64[:])"),
                              (contraction.net_hash_kernel, "void(int64[:], int32[:], uint64[:])"),
                              (contraction.merge_kernel,
                               "void(int64[:], uint64[:], int64[:], int32[:], int64[:], int64[:], int64[:], int64[:])"),
                              (contraction.unique_sizes_kernel, f"void(int64[:], int64[:], {two_rows})"),
                              (contraction.write_unique_kernel,
                               f"void(int64[:], int32[:], int64[:], {two_rows}, int64[:], int32[:], int64[:], "
                               "int64[:])"),
                              (primitives.csr_from_sorted_kernel, "void(int64[:], int64, int64[:], int32[:])"),
                              (primitives.scatter_add_kernel, "void(int32[:], int64[:], int64[:])"),
                              (primitives.scatter_max_kernel, "void(int32[:], int64[:], int64[:])"),
                              (primitives.scatter_min_kernel, "void(int32[:], int32[:], int32[:])"),
                              (primitives.chunk_histogram_kernel, "void(int32[:], int64, int64, int64[:])"),
                              (primitives.chunk_scatter_kernel, "void(int32[:], int64, int64, int64[:], int64[:])")):
        ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
        assert ".entry" in ptx


@pytest.mark.gpu
def test_counting_sort_by_small_key_is_a_stable_argsort(monkeypatch):
    """stable_order_by_small_key == numpy's stable argsort: one chunk, many chunks with a ragged last one, and
    as many keys as the counters allow (fewer, longer chunks); few and many distinct keys."""
    from hgpart.cuda import primitives
    from hgpart.cuda.arrays import to_device, to_host

    rng = np.random.default_rng(8)
    monkeypatch.setattr(primitives, "COUNTING_SORT_ENTRIES", 4096)
    for count, num_keys in ((0, 3), (1, 1), (50, 3), (1000, 7), (777, 1024), (3000, 2)):
        keys = rng.integers(0, num_keys, count).astype(np.int32)
        order = to_host(primitives.stable_order_by_small_key(to_device(keys), num_keys))
        np.testing.assert_array_equal(order, np.argsort(keys, kind="stable"), err_msg=f"{count} {num_keys}")
        assert order.dtype == np.int64


def instances():
    rng = np.random.default_rng(4)
    for seed in range(3):
        n = 300
        nets = [rng.choice(n, size=int(rng.integers(2, 9)), replace=False) for _ in range(500)]
        yield f"random{seed}", Hypergraph.from_pin_lists(nets, n, rng.integers(1, 4, n), rng.integers(1, 5, 500))
    yield "ibm01", read_hypergraph(str(DATA / "ibm01.hgr"))
    yield "long-tailed", generate.long_tailed(20000, seed=3)  # hubs: wide and heavy bins
    yield "evenly", generate.evenly(50000, seed=3)  # pooled bins
    yield "synthetic", generate.synthetic(14000, seed=3)  # 20 columns of 2,000 pins: split over many warps


CONFIGS = [CoarseningConfig(), CoarseningConfig(rating="inner-product"), CoarseningConfig(weight_penalty=True),
           CoarseningConfig(join_unmatched=False), CoarseningConfig(pair_level_min_paired=1.0, pair_level_skip_pins=0)]


@pytest.mark.gpu
@pytest.mark.parametrize("config", CONFIGS, ids=["default", "inner-product", "penalty", "matching-only",
                                                 "joining-on-the-level"])
def test_gpu_clustering_equals_cpu(config):
    from hgpart.coarsening.gpu import compute_clustering_gpu

    for name, hypergraph in instances():
        max_weight = max(2, -(-hypergraph.total_vertex_weight // 320))
        fixed = np.where(np.arange(hypergraph.num_vertices) % 17 == 0, np.arange(hypergraph.num_vertices) % 3, -1)
        for keys in (None, fixed):
            cpu, cpu_count = compute_clustering(hypergraph, max_weight, config, keys)
            gpu, gpu_count = compute_clustering_gpu(hypergraph, max_weight, config, keys)
            assert gpu_count == cpu_count, name
            np.testing.assert_array_equal(gpu, cpu, err_msg=name)


@pytest.mark.gpu
def test_staged_uploads_arrive_whole():
    """Arrays staged in one piece and in several (odd sizes, each dtype in use) arrive unchanged."""
    from hgpart.cuda.arrays import STAGE_BYTES, SIMULATED, to_device, to_host
    from hgpart.device import gpu_available

    if not SIMULATED and not gpu_available():
        pytest.skip("no GPU")
    generator = np.random.default_rng(5)
    for dtype, pieces in ((np.int32, 2.5), (np.int64, 3.01), (np.float64, 1.0), (np.int32, 0.5)):
        count = int(pieces * STAGE_BYTES) // np.dtype(dtype).itemsize + 3
        array = generator.integers(-2**30, 2**30, count).astype(dtype)
        np.testing.assert_array_equal(to_host(to_device(array)), array)


class _DeviceArray:
    """A device array as :func:`hgpart.cuda.arrays.launch` sees a numba view: its CUDA array interface."""

    def __init__(self, shape, typestr, pointer, strides=None):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (pointer, False),
                                         "strides": strides, "version": 3}


def test_launch_packs_what_numbas_kernel_launch_passes():
    """The parameters :func:`launch` passes for each argument are those of numba's ``_Kernel.launch``
    (arrays: meminfo, parent, size, itemsize, pointer, shape, strides in bytes; integers as c_int64 or their
    numpy type, floats as c_double, booleans as they are), keyed by what numba's typing sees; arrays not in
    C order, host arrays, integers beyond int64 and other scalars are left to numba (no GPU needed)."""
    import ctypes

    from hgpart.cuda.arrays import _pack

    kernel = object()
    key, parameters = _pack(kernel, (_DeviceArray((3, 4), "<i8", 4096), 5, True, 2.5, np.int32(7),
                                     _DeviceArray((0,), "<i4", 0)))
    assert key == (kernel, (np.dtype(np.int64), 2), int, bool, float, np.int32, (np.dtype(np.int32), 1))
    assert parameters[:9] == [0, 0, 12, 8, 4096, 3, 4, 32, 8]
    assert [type(value) for value in parameters[9:13]] == [ctypes.c_int64, bool, ctypes.c_double, ctypes.c_int32]
    assert [getattr(value, "value", value) for value in parameters[9:13]] == [5, True, 2.5, 7]
    assert parameters[13:] == [0, 0, 0, 4, 0, 0, 4]
    assert _pack(kernel, (_DeviceArray((3, 4), "<i8", 4096, (32, 8)),))[0] is not None  # C strides, spelled out
    for argument in (_DeviceArray((3, 4), "<i8", 4096, (8, 24)), np.zeros(3), 2**63, np.bool_(True), "x"):
        assert _pack(kernel, (1, argument)) == (None, None), argument


@cuda.jit
def _affine_kernel(values, steps, scale, offset, flag, out):
    """out[i] = values[i] * scale + offset + steps[i % len(steps)] (+ 1 with ``flag``): arrays of two dtypes
    and three kinds of scalar."""
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        out[i] = values[i] * scale + offset + steps[i % steps.shape[0]] + (1 if flag else 0)


@pytest.mark.gpu
def test_launch_passes_arguments_as_numba_does():
    """:func:`launch` after its first launch of a kind of arguments packs them itself: CuPy arrays (whole,
    sliced, one element with any stride), numba views and scalars of each kind give what numba's own launch
    gives, launch after launch; an array not in C order goes through numba every time."""
    from hgpart.cuda.arrays import _LAUNCHERS, SIMULATED, grid, kernel_view, launch, xp
    from hgpart.device import gpu_available

    if SIMULATED or not gpu_available():
        pytest.skip("no GPU")
    x = xp()
    values = x.arange(1000, dtype=x.int64) * 3
    steps = x.arange(7, dtype=x.int32)
    for rep in range(3):
        for scale, offset, flag in ((2, 5, True), (np.int64(-1), 1.0, False), (3, np.float64(0.5), True)):
            for source in (values, values[100:600], kernel_view(values[:400]), values[5:12:7], values[::2]):
                out = x.zeros(source.shape[0], dtype=x.float64)
                expected = x.zeros_like(out)
                launch(_affine_kernel, grid(out.shape[0]), source, steps, scale, offset, flag, out)
                _affine_kernel[grid(out.shape[0])](kernel_view(source) if hasattr(source, "get") else source,
                                                   kernel_view(steps), scale, offset, flag, kernel_view(expected))
                assert x.array_equal(out, expected)
    packed = [key for key, handle in _LAUNCHERS.items() if key[0] is _affine_kernel and handle]
    assert len(packed) == 3  # one per kind of (scale, offset); values[::2] is never packed

@pytest.mark.gpu
def test_device_contraction_equals_cpu():
    from hgpart.coarsening.contraction import contract
    from hgpart.coarsening.gpu import contract_device

    graph_like = read_hypergraph(str(DATA / "karate.graph"))  # two-pin nets: contraction makes identical nets
    for name, hypergraph in list(instances()) + [("karate", graph_like)]:
        for seed in range(2):
            cluster, count = compute_clustering(hypergraph, 10**9 if seed else 8, CoarseningConfig(), None)
            expected = contract(hypergraph, cluster, count)
            got = contract_device(hypergraph.to_device(), cluster, count).to_host()
            for field in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights",
                          "net_weights"):
                np.testing.assert_array_equal(getattr(got, field), getattr(expected, field), err_msg=f"{name} {field}")


@pytest.mark.gpu
@pytest.mark.parametrize("host_max_pins", [0, PolicyConfig().host_level_max_pins])
def test_gpu_hierarchy_equals_cpu(host_max_pins):
    """Every level on the device, then (the default) the small ones on the host: the CPU's hierarchy."""
    from hgpart.coarsening import coarsen

    for name, hypergraph in instances():
        n = hypergraph.num_vertices
        fixed = np.where(np.arange(n) % 29 == 0, np.arange(n) % 2, -1).astype(np.int32)
        communities = (np.arange(n) * 7 // n).astype(np.int32)
        for options in ({}, {"fixed": fixed}, {"communities": communities, "fixed": fixed}):
            cpu = coarsen(hypergraph, 2, **options)
            gpu = coarsen(hypergraph, 2, device="gpu", host_level_max_pins=host_max_pins, **options)
            assert len(cpu.levels) == len(gpu.levels), name
            for mine, theirs in zip(gpu.levels, cpu.levels):
                np.testing.assert_array_equal(mine.cluster, theirs.cluster, err_msg=name)
                np.testing.assert_array_equal(mine.hypergraph.pin_vertices, theirs.hypergraph.pin_vertices)
            for field in ("pin_vertices", "net_weights"):
                np.testing.assert_array_equal(getattr(gpu.coarsest.hypergraph, field),
                                              getattr(cpu.coarsest.hypergraph, field), err_msg=name)
            if "fixed" in options:
                np.testing.assert_array_equal(gpu.coarsest.fixed, cpu.coarsest.fixed, err_msg=name)


def tiny_instance_with_every_bin():
    """100 vertices: 0-47 in 30 nets of 36 pins (global bin at lowered limits), 48 and 49 in two of them
    (block bin), 48-95 in small random nets (pooled, wide and split bins at lowered limits), 96-99 in no net
    (the 2-hop step pairs such vertices while the level's shrink cap allows; with 4 matching rounds and
    fixed keys it pairs 96 and 97). Small enough for the CUDA simulator."""
    rng = np.random.default_rng(11)
    nets = [np.concatenate([np.arange(4), 4 + rng.choice(44, size=32, replace=False), [48 + i // 2] if i < 4 else []])
            for i in range(30)]
    nets += [48 + rng.choice(48, size=int(rng.integers(2, 6)), replace=False) for _ in range(70)]
    nets += [np.array([5, 50]), np.array([6, 60, 61])]
    return Hypergraph.from_pin_lists(nets, 100, rng.integers(1, 3, 100), rng.integers(1, 4, len(nets)))


@pytest.mark.gpu
@pytest.mark.parametrize("fixed_keys", [False, True])
def test_device_path_on_a_tiny_instance_equals_cpu(fixed_keys):
    """Runs on a GPU (scripts/gpu-check) and under the simulator in CI (test_gpu_code_in_the_simulator), there
    with 4 matching rounds instead of 8 (the warp shuffles of tests/cudasim.py cost a barrier each)."""
    from hgpart.coarsening.contraction import contract
    from hgpart.coarsening.gpu import DevicePlan, compute_clustering_gpu, contract_device, device_net_ratings
    from hgpart.cuda.arrays import SIMULATED, to_device

    hypergraph = tiny_instance_with_every_bin()
    config = CoarseningConfig(matching_rounds=4) if SIMULATED else CoarseningConfig()
    level = hypergraph.to_device()
    limits = (16, 64, 32, 90)  # kernel limits lowered so that 96 vertices fill every kind of bin
    counts = DevicePlan(level, device_net_ratings(level, True, 1000)[0], 10**6, False, limits).counts
    assert counts[:5].sum() > 0 and counts[5:].min() > 0, counts  # pooled, wide, block, split and global bins
    max_weight, fixed = (4, np.where(np.arange(100) % 13 == 0, np.arange(100) % 2, -1)) if fixed_keys else (6, None)
    cpu, cpu_count = compute_clustering(hypergraph, max_weight, config, fixed)
    gpu, gpu_count = compute_clustering_gpu(hypergraph, max_weight, config, fixed, limits)
    assert gpu_count == cpu_count < 96
    np.testing.assert_array_equal(gpu, cpu)
    expected = contract(hypergraph, cpu, cpu_count)
    got = contract_device(level, to_device(gpu), gpu_count).to_host()
    for field in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets", "vertex_weights", "net_weights"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field), err_msg=field)


@pytest.mark.gpu
def test_shared_tables_sum_large_scores_exactly():
    """The uint32 halves of a shared table: amounts whose low halves overflow, and amounts of 2^32 and more,
    added by many threads into a few keys, read back exactly. (The comparisons with the CPU above never
    leave 32 bits, so they would not see a lost carry.)"""
    from hgpart.coarsening.gpu.rating import _table_add
    from hgpart.cuda.primitives import halves_value

    @cuda.jit
    def add_kernel(vertices, amounts, slot_keys, slot_scores):
        keys = cuda.shared.array(64, int32)
        low = cuda.shared.array(64, uint32)
        high = cuda.shared.array(64, uint32)
        for slot in range(cuda.threadIdx.x, 64, cuda.blockDim.x):
            keys[slot] = -1
            low[slot] = 0
            high[slot] = 0
        cuda.syncthreads()
        for index in range(cuda.threadIdx.x, vertices.shape[0], cuda.blockDim.x):
            _table_add(keys, low, high, 0, 63, vertices[index], amounts[index], keys, keys, -1)
        cuda.syncthreads()
        for slot in range(cuda.threadIdx.x, 64, cuda.blockDim.x):
            slot_keys[slot] = keys[slot]
            slot_scores[slot] = halves_value(low, high, slot)

    rng = np.random.default_rng(0)
    vertices = rng.integers(0, 20, 2000).astype(np.int32)
    amounts = rng.choice(np.array([2**32 - 2**20, 2**32 - 1, 3 * 2**33 + 12345, 7], dtype=np.int64), 2000)
    slot_keys, slot_scores = cuda.device_array(64, np.int32), cuda.device_array(64, np.int64)
    add_kernel[1, 64](cuda.to_device(vertices), cuda.to_device(amounts), slot_keys, slot_scores)
    slot_keys, slot_scores = slot_keys.copy_to_host(), slot_scores.copy_to_host()
    got = {int(key): int(score) for key, score in zip(slot_keys, slot_scores) if key >= 0}
    expected = {}
    for vertex, amount in zip(vertices.tolist(), amounts.tolist()):
        expected[vertex] = expected.get(vertex, 0) + amount
    assert got == expected
    assert max(expected.values()) > 2**39


def test_every_kernel_is_kept_in_numbas_disk_cache():
    """Each kernel of hgpart is compiled with cache=True (hgpart.cuda.arrays.cached_kernel): without the cache
    every process compiles every kernel again, which costs over a minute before a partition starts. The
    modules are found by walking the package, so a kernel in a new or moved module is checked too."""
    import importlib
    import pkgutil

    from numba.cuda.dispatcher import CUDADispatcher

    import hgpart
    from hgpart.cuda.arrays import SIMULATED

    if SIMULATED:
        pytest.skip("the simulator's kernels have no cache")
    kernels = {}
    for module in pkgutil.walk_packages(hgpart.__path__, "hgpart."):
        if module.name.rpartition(".")[2] == "__main__":
            continue  # the command line's entry point: importing it runs the program
        for attribute, value in vars(importlib.import_module(module.name)).items():
            if isinstance(value, CUDADispatcher) and not value.targetoptions.get("device"):
                kernels.setdefault(id(value), (f"{module.name}.{attribute}", value))
    assert len(kernels) > 40
    uncached = sorted(name for name, kernel in kernels.values() if type(kernel._cache).__name__ == "NullCache")
    assert not uncached


def test_gpu_code_in_the_simulator():
    """The GPU kernels, run by numba's CUDA simulator with the warp intrinsics of tests/cudasim.py: the Fig. 5
    planner and reductions against the numpy model, the whole device coarsening against the CPU, the
    GPU refinement against its model, the whole GPU partitioning driver on a tiny input, and the GPU modularity
    clustering, spanning forest and triangle counts against their CPU twins. Two processes that start
    once the tests are collected run them (tests/background.py); this test, moved to the end, checks what
    they report."""
    pytest.importorskip("numba.cuda")
    from .. import background

    for expected, status, log in background.result("test_gpu_code_in_the_simulator"):
        assert status == 0, log[-6000:]
        assert expected in log, log[-3000:]