"""Exact k nearest neighbours on the GPU: the twin of :func:`hgpart.classification.neighbors.nearest_neighbors`,
with the same signature and the same result.

The brute force runs in tiles of rows: CuPy's matrix product (cuBLAS, float32) gives a tile's products with every
sample; :func:`select_candidates_kernel` keeps each row's candidates (a warp per row, a sorted list per lane, then
a merge of the lanes' lists by warp shuffles), so the n x n matrix is never held; :func:`rerank_kernel`
computes the candidates' distances in float64 from the differences and keeps the ``n_neighbors`` smallest by
(distance, index), as the CPU does; :func:`~hgpart.classification.neighbors.settle` proves each row exact or searches
it again. For 1M samples of 64 dimensions the products are about 1.3e14 flops.
"""

from __future__ import annotations

import math
import os

import numpy as np
from numba import cuda, float32, float64, int64

from ..cuda.arrays import SIMULATED, cached_kernel, grid, launch, to_device, to_host, xp
from ..cuda.warp import WARP_SIZE, warp_argmin
from ..errors import DeviceError
from .neighbors import FLOAT32_UNIT, candidate_count, insert_sorted, prepared_features, settle, squared_norms

ROWS_PER_BLOCK = 1 if SIMULATED else 8  # a warp per row
MAX_NEIGHBORS = 64            # the GPU path's limit: each thread's list lives in local memory
MAX_CANDIDATES = 2 * MAX_NEIGHBORS + 8
TILE_BYTES = 16 << 30         # float32 products held at a time (at most 40% of the free memory): 4,096 rows of 1M
NO_SAMPLE = np.iinfo(np.int64).max
_insert_on_device = cuda.jit(device=True, inline=True)(insert_sorted)


@cached_kernel
def select_candidates_kernel(products, squared, factor, first_row, count, candidates, last_keys):
    """Each row's ``count`` smallest keys ``squared[j] - factor * products[i, j]`` (float32; ties to the smaller
    j, the row's own sample ``first_row + i`` left out), written to ``candidates[first_row + i]`` in key order, the
    last of them to ``last_keys[first_row + i]`` (for :func:`~hgpart.classification.neighbors.settle`).

    A warp per row (grid-stride over the warps): lane l scans columns l, l + 32, ... (coalesced) into its own
    sorted list; then ``count`` rounds of :func:`warp_argmin` take the smallest head of the 32 lists and advance
    the list that held it."""
    keys = cuda.local.array(MAX_CANDIDATES, float64)
    samples = cuda.local.array(MAX_CANDIDATES, int64)
    lane = cuda.threadIdx.x % WARP_SIZE
    rows, n = products.shape
    first_warp = cuda.blockIdx.x * ROWS_PER_BLOCK + cuda.threadIdx.x // WARP_SIZE
    for i in range(first_warp, rows, cuda.gridDim.x * ROWS_PER_BLOCK):
        own = first_row + i
        filled = 0
        for j in range(lane, n, WARP_SIZE):
            key = float32(squared[j] - float32(factor) * products[i, j])
            if j == own or (filled == count and key >= keys[count - 1]):
                continue
            filled = _insert_on_device(keys[:count], samples[:count], filled, key, j)
        head = 0
        for out in range(count):
            key = keys[head] if head < filled else math.inf
            sample = samples[head] if head < filled else NO_SAMPLE
            key, sample = warp_argmin(key, sample)
            if lane == 0:
                candidates[own, out] = sample
                last_keys[own] = key
            if head < filled and samples[head] == sample:
                head += 1  # a column belongs to one lane's list only


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
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            products = module.matmul(single[start:stop], single.T)
            blocks = 2 if SIMULATED else (stop - start + ROWS_PER_BLOCK - 1) // ROWS_PER_BLOCK
            launch(select_candidates_kernel, (blocks, ROWS_PER_BLOCK * WARP_SIZE), products, squared, factor,
                   np.int64(start), np.int64(count), candidates, last_keys)
            del products
        indices = module.empty((n, n_neighbors), dtype=np.int64)
        distances = module.empty((n, n_neighbors), dtype=np.float64)
        launch(rerank_kernel, grid(n, 128), exact_values, candidates, metric == "euclidean", indices, distances)
        found, found_distances, last = to_host(indices), to_host(distances), to_host(last_keys)
    except Exception as error:
        if type(error).__name__ == "OutOfMemoryError":
            raise DeviceError(f"the GPU has too little memory for {n} x {values.shape[1]} features; "
                              "use --device cpu") from None
        raise
    # cuBLAS rounds like any float32 dot product, unless CuPy is told to use TF32 (10-bit mantissas)
    unit = 2.0 ** -11 if os.environ.get("CUPY_TF32") == "1" else FLOAT32_UNIT
    return settle(values, found, found_distances, last, metric, unit)
