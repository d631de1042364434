"""The GPU nearest neighbours against their CPU twin: compiled to PTX here, run by the CUDA simulator (through
tests/coarsening/test_gpu.py::test_gpu_code_in_the_simulator) and on the device (``gpu`` marker)."""

import numpy as np
import pytest

from hgpart.classification.neighbors import nearest_neighbors


@pytest.mark.parametrize("name", ["select_candidates_kernel", "rerank_kernel"])
def test_neighbour_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")
    from numba import boolean, float32, float64, int64

    from hgpart.classification import gpu

    signatures = {"select_candidates_kernel": (float32[:, ::1], float32[::1], float64, int64, int64, int64, int64,
                                                        int64[:, ::1], float64[::1]),
                  "rerank_kernel": (float64[:, ::1], int64[:, ::1], boolean, int64[:, ::1], float64[:, ::1])}
    ptx, _ = cuda.compile_ptx(getattr(gpu, name).py_func, signatures[name], cc=(9, 0))
    assert name != "select_candidates_kernel" or "shfl.sync" in ptx  # the merge of the threads' lists


def test_the_tf32_split_keeps_float32_precision():
    """The split's products, taken as the tensor cores take them (inputs cut to TF32's 10 stored mantissa bits,
    exact products), stay within the split's share of :func:`split_product_error`'s bound (48u of sum |x_t y_t|),
    where one TF32 product of the unsplit values errs by up to 2^-11."""
    from hgpart.classification.gpu import split_for_tf32
    from hgpart.classification.neighbors import FLOAT32_UNIT

    rng = np.random.default_rng(3)
    single = (rng.normal(size=(300, 40)) * 10.0 ** rng.integers(-3, 4, size=(300, 40))).astype(np.float32)
    left, right = split_for_tf32(single, np)
    high = left[:, :40]
    assert np.array_equal(high.view(np.uint32) & 0x1FFF, np.zeros_like(high, np.uint32))  # exact in TF32
    assert np.array_equal(high + left[:, 80:], single)  # high + low, exactly

    def tensor_core_product(a, b):
        cut = lambda m: (m.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32).astype(np.float64)  # noqa: E731
        return cut(a) @ cut(b).T  # 11-bit by 11-bit products are exact in float64, as on the tensor cores

    exact = single.astype(np.float64) @ single.astype(np.float64).T
    scale = np.abs(single.astype(np.float64)) @ np.abs(single.astype(np.float64)).T
    split_error = np.abs(tensor_core_product(left, right) - exact) / scale
    plain_error = np.abs(tensor_core_product(single, single) - exact) / scale
    assert split_error.max() <= 48 * FLOAT32_UNIT
    assert plain_error.max() > 1000 * FLOAT32_UNIT  # what the split removes


def gpu_inputs(simulated: bool):
    """(name, features, neighbour counts, metrics): a grid with duplicates (many exact ties), a zero vector (the
    cosine's special case), random features (no ties) and, on the device, wider and clustered ones. The simulator
    takes about 0.1 s a shuffle: it gets two small inputs."""
    rng = np.random.default_rng(5)
    grid = np.array([(x, y) for x in range(5) for y in range(4)], dtype=np.float64)
    both = ("euclidean", "cosine")
    if simulated:
        yield "grid", np.concatenate([grid[:9], grid[:2]]), (2,), ("euclidean",)
        yield "zero", np.concatenate([np.zeros((1, 3)), rng.normal(size=(8, 3))]), (2,), ("cosine",)
        return
    yield "grid", np.concatenate([grid, grid[:6]]), (1, 4, 9), both
    yield "zero", np.concatenate([np.zeros((1, 3)), rng.normal(size=(30, 3))]), (3,), both
    yield "random", rng.normal(size=(5000, 7)), (1, 10), both
    yield "wide", rng.normal(size=(3000, 300)).astype(np.float32), (5, 64), both
    yield "ties", rng.integers(0, 4, size=(3000, 3)).astype(np.float64), (1, 10), both  # keys tie at the bound
    yield "blobs", np.repeat(rng.normal(size=(50, 16)), 40, axis=0) + rng.normal(scale=1e-3, size=(2000, 16)), (10,), both


@pytest.mark.gpu
def test_gpu_neighbours_equal_the_cpu_twin():
    from hgpart.classification.gpu import gpu_nearest_neighbors
    from hgpart.cuda.arrays import SIMULATED
    from hgpart.device import gpu_available

    if not SIMULATED and not gpu_available():
        pytest.skip("no GPU")
    for name, features, ks, metrics in gpu_inputs(SIMULATED):
        for k in ks:
            for metric in metrics:
                expected = nearest_neighbors(features, k, metric)
                for block_bytes in (4 * len(features) * 7,) if SIMULATED else (4 * len(features) * 7, 1 << 30):
                    indices, distances = gpu_nearest_neighbors(features, k, metric, block_bytes=block_bytes)
                    assert np.array_equal(indices, expected[0]), (name, k, metric)
                    assert np.allclose(distances, expected[1], rtol=1e-12, atol=1e-12), (name, k, metric)  # FMA
