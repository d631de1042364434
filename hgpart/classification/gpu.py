"""Exact k nearest neighbours on the GPU: the twin of :func:`hgpart.classification.neighbors.nearest_neighbors`,
with the same signature and the same result.

The brute force runs in tiles of rows: CuPy's matrix product (cuBLAS; on the tensor cores in TF32 with the error
correction of :func:`split_for_tf32` where the GPU has them, else float32) gives a tile's products with every
sample; :func:`select_candidates_kernel` keeps each row's candidates (a warp per row, a sorted list per lane under a
bound the warp shares, then a merge of the lanes' lists by warp shuffles), so the n x n matrix is never held;
:func:`rerank_kernel` computes the candidates' distances in float64 from the differences and keeps the
``n_neighbors`` smallest by (distance, index), as the CPU does; :func:`~hgpart.classification.neighbors.settle`
proves each row exact, with the products' error bound, or searches it again. For 1M samples of 64 dimensions the
products are about 1.3e14 flops."""

from __future__ import annotations

import math
import os

import numpy as np
from numba import cuda, float32, float64, int64

from ..cuda.arrays import SIMULATED, cached_kernel, grid, launch, to_device, to_host, xp
from ..cuda.warp import WARP_SIZE, warp_argmin, warp_kth_smallest
from ..errors import DeviceError
from .neighbors import FLOAT32_UNIT, candidate_count, insert_sorted, prepared_features, settle, squared_norms

ROWS_PER_BLOCK = 1 if SIMULATED else 8  # a warp per row
MAX_NEIGHBORS = 64            # the GPU path's limit: each thread's list lives in local memory
MAX_CANDIDATES = 2 * MAX_NEIGHBORS + 8
COLUMNS_PER_LANE = 8          # a lane's loads in flight per step of a row's scan
BOUND_STEPS = 64              # steps between refreshes of a row's shared bound, after the first 1, 2, 4, ...
TILE_BYTES = 16 << 30         # float32 products held at a time (at most 40% of the free memory): 4,096 rows of 1M
NO_SAMPLE = np.iinfo(np.int64).max
INFINITY = np.float32(np.inf)  # the keys' type
TF32_UNIT = 2.0 ** -11        # unit roundoff of a TF32 product's inputs (10 stored mantissa bits)
_insert_on_device = cuda.jit(device=True, inline=True)(insert_sorted)


@cached_kernel
def select_candidates_kernel(products, squared, factor, first_row, count, depth, rank, candidates, last_keys):
    """Each row's ``count`` smallest keys ``squared[j] - factor * products[i, j]`` (float32; ties to the smaller
    j, the row's own sample ``first_row + i`` left out), written to ``candidates[first_row + i]`` in key order, the
    last of them to ``last_keys[first_row + i]`` (for :func:`~hgpart.classification.neighbors.settle`).

    A warp per row (grid-stride over the warps). Lane l scans columns l, l + 32, ..., ``COLUMNS_PER_LANE`` of
    them per step loaded together, into its own sorted list, which takes a key only below its last one (a full
    list) and not above ``bound``, shared by the warp: the ``rank``-th smallest (from 0) over the lanes of each
    lane's ``depth``-th key, so that ``rank + 1`` lanes hold ``depth`` keys each, at least ``count`` in all, at or
    below it, and a larger key cannot be among the row's ``count`` smallest (:func:`warp_kth_smallest`, after
    steps 1, 2, 4, ... and every ``BOUND_STEPS``). Then ``count`` rounds of :func:`warp_argmin` take the smallest
    head of the 32 lists and advance the list that held it."""
    keys = cuda.local.array(MAX_CANDIDATES, float32)
    samples = cuda.local.array(MAX_CANDIDATES, int64)
    loaded = cuda.local.array(COLUMNS_PER_LANE, float32)
    lane = cuda.threadIdx.x % WARP_SIZE
    rows, n = products.shape
    scale = float32(factor)
    first_warp = cuda.blockIdx.x * ROWS_PER_BLOCK + cuda.threadIdx.x // WARP_SIZE
    for i in range(first_warp, rows, cuda.gridDim.x * ROWS_PER_BLOCK):
        own = first_row + i
        filled = 0
        last = INFINITY  # this lane's last key once its list is full
        bound = INFINITY
        step = 0
        for start in range(0, n, WARP_SIZE * COLUMNS_PER_LANE):
            for u in range(COLUMNS_PER_LANE):  # loads without branches between them, so that all are in flight
                j = min(start + u * WARP_SIZE + lane, n - 1)
                loaded[u] = squared[j] - scale * products[i, j]
            for u in range(COLUMNS_PER_LANE):
                key = loaded[u]
                j = start + u * WARP_SIZE + lane
                if key < last and key <= bound and j != own and j < n:
                    filled = _insert_on_device(keys[:count], samples[:count], filled, key, j)
                    if filled == count:
                        last = keys[count - 1]
            step += 1
            if step & (step - 1) == 0 or step % BOUND_STEPS == 0:
                bound = min(bound, warp_kth_smallest(keys[depth - 1] if filled >= depth else INFINITY, rank, lane,
                                                     INFINITY))
        head = 0
        for out in range(count):
            key = keys[head] if head < filled else INFINITY
            sample = samples[head] if head < filled else NO_SAMPLE
            key, sample = warp_argmin(key, sample)
            if lane == 0:
                candidates[own, out] = sample
                last_keys[own] = key
            if head < filled and samples[head] == sample:
                head += 1  # a column belongs to one lane's list only


def bound_depth(count: int) -> tuple[int, int]:
    """(depth, rank) of :func:`select_candidates_kernel`'s shared bound for ``count`` candidates: each lane's
    ``depth``-th key, the ``rank``-th smallest of those, such that (rank + 1) * depth >= count. Two keys a lane
    for up to 32 candidates: its second key is about as likely to be low as its first is across 16 lanes, and the
    bound is then nearer the row's own count-th key than with one key of 28 lanes."""
    depth = max(1, -(-count // (WARP_SIZE // 2)))
    depth = min(depth, count)
    return depth, -(-count // depth) - 1


@cached_kernel
def rerank_kernel(values, candidates, euclidean, indices, distances):
    """Per row (grid-stride, a thread each): the float64 distance of the sample to each of its candidates (from
    the differences, or 1 - the product of unit rows clipped to [0, 2]), sorted by (distance, sample); the first
    ``indices.shape[1]`` go to ``indices`` and ``distances``."""
    exact = cuda.local.array(MAX_CANDIDATES, float64)
    chosen = cuda.local.array(MAX_CANDIDATES, int64)
    n, count = candidates.shape
    dimensions = values.shape[1]
    start, stride = cuda.grid(1), cuda.gridsize(1)
    for i in range(start, n, stride):
        for c in range(count):
            sample = candidates[i, c]
            total = 0.0
            for t in range(dimensions):
                if euclidean:
                    difference = values[sample, t] - values[i, t]
                    total += difference * difference
                else:
                    total += values[sample, t] * values[i, t]
            distance = math.sqrt(total) if euclidean else min(max(1.0 - total, 0.0), 2.0)
            position = c
            while position > 0 and (exact[position - 1] > distance or (
                    exact[position - 1] == distance and chosen[position - 1] > sample)):
                exact[position] = exact[position - 1]
                chosen[position] = chosen[position - 1]
                position -= 1
            exact[position] = distance
            chosen[position] = sample
        for c in range(indices.shape[1]):
            indices[i, c] = chosen[c]
            distances[i, c] = exact[c]


def gpu_nearest_neighbors(features, n_neighbors: int, metric: str = "euclidean",
                          block_bytes: int = TILE_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest other samples of every sample, exactly, on the GPU; the same parameters and
    result as :func:`~hgpart.classification.neighbors.nearest_neighbors` (sparse features are made dense
    first). ``block_bytes`` bounds the float32 products held on the device at a time.

    Raises
    ------
    DeviceError
        More than ``MAX_NEIGHBORS`` neighbours, or features too large for the device's memory.
    """
    if n_neighbors > MAX_NEIGHBORS:
        raise DeviceError(f"the GPU path finds at most {MAX_NEIGHBORS} neighbours per sample; use --device cpu")
    values = prepared_features(features, n_neighbors, metric)
    if hasattr(values, "toarray"):
        values = values.toarray()
    n = values.shape[0]
    count = candidate_count(n, n_neighbors)
    module = xp()
    try:
        exact_values = to_device(values)
        single = exact_values.astype(np.float32)
        squared = to_device(squared_norms(values).astype(np.float32) if metric == "euclidean"
                            else np.zeros(n, np.float32))
        candidates = module.empty((n, count), dtype=np.int64)
        last_keys = module.empty(n, dtype=np.float64)
        if not SIMULATED:
            block_bytes = min(int(block_bytes), int(0.4 * module.cuda.runtime.memGetInfo()[0]))
        rows = max(1, min(n, int(block_bytes) // (4 * n)))
        factor = 2.0 if metric == "euclidean" else 1.0
        depth, rank = bound_depth(count)
        settings = tensor_core_settings(module, single.nbytes)
        left, right = split_for_tf32(single) if settings is not None else (single, single)
        before = None if settings is None else settings.get_compute_type(np.float32)
        try:
            if settings is not None:
                settings.set_compute_type(np.float32, settings.COMPUTE_TYPE_TF32)
            for start in range(0, n, rows):
                stop = min(n, start + rows)
                products = module.matmul(left[start:stop], right.T)
                blocks = 2 if SIMULATED else (stop - start + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
                launch(select_candidates_kernel, (blocks, ROWS_PER_BLOCK * WARP_SIZE), products, squared, factor,
                       np.int64(start), np.int64(count), np.int64(depth), np.int64(rank), candidates, last_keys)
                del products
        finally:
            if settings is not None:
                settings.set_compute_type(np.float32, before)
        del left, right, single
        indices = module.empty((n, n_neighbors), dtype=np.int64)
        distances = module.empty((n, n_neighbors), dtype=np.float64)
        launch(rerank_kernel, grid(n, 128), exact_values, candidates, metric == "euclidean", indices, distances)
        found, found_distances, last = to_host(indices), to_host(distances), to_host(last_keys)
    except Exception as error:
        if type(error).__name__ == "OutOfMemoryError":
            raise DeviceError(f"the GPU has too little memory for {n} x {values.shape[1]} features; "
                              "use --device cpu") from None
        raise
    dimensions = values.shape[1]
    if settings is not None:
        product_error = split_product_error(dimensions)
    elif os.environ.get("CUPY_TF32") == "1":  # CuPy told to take every float32 product in TF32
        product_error = (dimensions + 2) * TF32_UNIT
    else:
        product_error = None  # float32's
    return settle(values, found, found_distances, last, metric, FLOAT32_UNIT, product_error=product_error)


def tensor_core_settings(module, single_bytes: int):
    """CuPy's switch of the float32 matrix product's compute type where the products can run on the tensor cores
    in TF32 (compute capability 8.0 or more, three times the float32 features fit twice in a quarter of the free
    memory), else None (plain float32 products)."""
    if SIMULATED:
        return None
    try:
        from cupy._core import _routines_linalg as settings

        settings.get_compute_type, settings.set_compute_type, settings.COMPUTE_TYPE_TF32  # noqa: B018
    except (ImportError, AttributeError):
        return None
    if int(module.cuda.Device().compute_capability) < 80:
        return None
    if 6 * single_bytes > 0.25 * module.cuda.runtime.memGetInfo()[0]:
        return None
    return settings


def split_for_tf32(single, module=None):
    """(left, right), float32[n, 3d]: ``left @ right.T`` equals ``single @ single.T`` to about float32's precision
    where each product is taken in TF32 (10 stored mantissa bits) on the tensor cores. Each value is split into
    ``high``, its first 10 mantissa bits (exact in TF32), and ``low`` = value - high (exact in float32), and
    ``[high, high, low] . [high, low, high]`` = high·high + high·low + low·high leaves out low·low, 2^-20 of the
    product: the error-corrected tensor-core product of H. Ootomo and R. Yokota, "Recovering single precision
    accuracy from Tensor Cores while surpassing the FP32 theoretical peak performance", IJHPCA 36(4), 2022, as one
    product with three times the columns (one pass over the products' memory, not three). ``module``: the array
    module of ``single`` (default the device's)."""
    module = module or xp()
    high = (single.view(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
    low = single - high
    return (module.ascontiguousarray(module.concatenate([high, high, low], axis=1)),
            module.ascontiguousarray(module.concatenate([high, low, high], axis=1)))


def split_product_error(dimensions: int) -> float:
    """A bound on a :func:`split_for_tf32` product's error relative to |x||y|: 2u for the inputs rounded to float32,
    48u for the split (|low| < 2^-10 |value|, TF32's reading of ``low`` within 2^-10 of it, and the low·low term
    left out: 3 * 2^-20 = 48u of each term), and 4u per addition of the 3d exact products (the tensor cores may
    truncate, 2u, and align to the largest term, taken as twice that again), u = 2^-24."""
    return (12.1 * dimensions + 50) * FLOAT32_UNIT
