"""Exact k nearest neighbours of feature vectors on the host, the first step of unsupervised classification by
partitioning a kNN hypergraph (Huang, Liu, Lv, Gong and Metaxas, "Unsupervised image categorization by hypergraph
partition", IEEE TPAMI 33(6), 2011): each sample's net holds the sample and its nearest neighbours.

The search is brute force in blocks of rows, the same on both devices (:func:`gpu_nearest_neighbors
<hgpart.classification.gpu.gpu_nearest_neighbors>` is the twin):

1. a block's products with every sample come from one matrix product, so that only ``block_bytes`` of them are
   held at a time, never the n x n matrix;
2. each row keeps its ``candidates`` (:func:`candidate_count`) smallest keys ``||y||² - 2 x·y`` (Euclidean; the
   row's own ``||x||²`` does not change the order) or ``-x·y`` of unit vectors (cosine), ties by index;
3. the candidates' distances are computed again from the differences, so that the products' rounding (float32)
   cannot reorder them, and the ``n_neighbors`` smallest kept by (distance, index);
4. :func:`settle` checks each row: if its k-th distance is below the last candidate's key by more than the keys'
   rounding error can reach (a bound from the norms and the dimension), no other sample can be as near, and the
   row is exact; the rows that fail (near-duplicates, ties at the k-th distance) are searched again from every
   sample's exact distance.

So the result is that of exact arithmetic on the float64 differences, on both devices alike.
"""

from __future__ import annotations

import numba
import numpy as np

from ..errors import InputError
from ..io.features import finite_features

METRICS = ("euclidean", "cosine")
FLOAT32_UNIT, FLOAT64_UNIT = 2.0 ** -24, 2.0 ** -53  # unit roundoffs of the keys' arithmetic
BLOCK_BYTES = 64 << 20  # products held at a time


def candidate_count(n_samples: int, n_neighbors: int) -> int:
    """Keys kept per row before the exact distances decide: twice the neighbours and 8 more, at most n - 1."""
    return min(n_samples - 1, 2 * n_neighbors + 8)


def checked_features(features, n_neighbors: int, metric: str, dtype=np.float64):
    """The features as a C-ordered ``dtype`` array (or CSR matrix, for scipy.sparse input), after the checks
    every path shares: a known metric, 2-D, finite, more samples than neighbours."""
    if metric not in METRICS:
        raise InputError(f"unknown metric {metric!r} (euclidean or cosine)")
    if hasattr(features, "tocsr") and hasattr(features, "nnz"):
        values = features.tocsr().astype(dtype)
        values.sum_duplicates()
    else:
        values = np.ascontiguousarray(features, dtype=dtype)
    if values.ndim != 2:
        raise InputError(f"expected one sample per row (a 2-D array), got {values.ndim} dimensions")
    if n_neighbors < 1:
        raise InputError(f"the number of neighbours must be at least 1, got {n_neighbors}")
    if values.shape[0] < n_neighbors + 1:
        raise InputError(f"{values.shape[0]} samples: at least n_neighbors + 1 = {n_neighbors + 1} are needed")
    return finite_features(values)


def unit_rows(values):
    """Rows scaled to length 1 (zero rows stay zero), for the cosine metric."""
    if hasattr(values, "tocsr"):
        import scipy.sparse as sp

        norms = np.sqrt(np.asarray(values.multiply(values).sum(axis=1)).ravel())
        return sp.diags(1.0 / np.where(norms > 0, norms, 1.0)) @ values
    norms = np.sqrt(np.einsum("ij,ij->i", values, values))
    return values / np.where(norms > 0, norms, 1.0).astype(values.dtype)[:, None]


def squared_norms(values) -> np.ndarray:
    if hasattr(values, "tocsr"):
        return np.asarray(values.multiply(values).sum(axis=1), dtype=np.float64).ravel()
    return np.einsum("ij,ij->i", values, values)


def nearest_neighbors(features, n_neighbors: int, metric: str = "euclidean",
                      block_bytes: int = BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest other samples of every sample, exactly.

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (n, d)
        One sample per row (any real dtype; the distances are float64).
    n_neighbors : int
        Neighbours per sample (a sample is never its own neighbour; a duplicate of it may be).
    metric : {"euclidean", "cosine"}
        The cosine distance is 1 - cos(x, y); a zero vector is at distance 1 from every other sample.
    block_bytes : int
        Bytes of products held at a time (a tile of rows and columns of the n x n matrix).

    Returns
    -------
    indices : int64[n, n_neighbors]
        Each row's neighbours, nearest first; of equal distances the smaller index first (also where the
        k-th distance is shared: those of smaller index are kept).
    distances : float64[n, n_neighbors]
        Their distances.

    Notes
    -----
    Dense features are centred (distances do not change) and their products taken in float32 by
    :func:`dense_candidates`, four rows at a time against each sample, never held (``block_bytes`` bounds the
    products of sparse features only); the candidates' exact float64 distances make the result that of float64
    arithmetic.
    """
    values = prepared_features(features, n_neighbors, metric)
    n = values.shape[0]
    count = candidate_count(n, n_neighbors)
    candidates = np.empty((n, count), dtype=np.int64)
    factor = 2.0 if metric == "euclidean" else 1.0
    if hasattr(values, "tocsr"):  # sparse: float64 products of whole rows, as many as block_bytes holds
        squared = squared_norms(values) if metric == "euclidean" else np.zeros(n)
        keys = np.empty((n, count), dtype=np.float64)
        transposed = values.T.tocsc()
        rows = max(1, int(block_bytes) // (8 * n))
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            products = np.ascontiguousarray((values[start:stop] @ transposed).toarray())
            select_candidates(products, squared, factor, start, keys[start:stop], candidates[start:stop])
        indices, distances = rerank(values, candidates, n_neighbors, metric)
        return settle(values, indices, distances, keys[:, -1], metric, FLOAT64_UNIT)
    squared = squared_norms(values).astype(np.float32) if metric == "euclidean" else np.zeros(n, np.float32)
    single_keys = np.empty((n, count), np.float32)
    dense_candidates(values.astype(np.float32), squared, np.float32(factor), single_keys, candidates)
    indices, distances = rerank(values, candidates, n_neighbors, metric)
    return settle(values, indices, distances, single_keys[:, -1], metric, FLOAT32_UNIT)


def prepared_features(features, n_neighbors: int, metric: str):
    """Checked float64 features, unit rows for the cosine metric, centred dense ones for the Euclidean."""
    values = checked_features(features, n_neighbors, metric)
    if metric == "cosine":
        return unit_rows(values)
    if not hasattr(values, "tocsr"):
        values = values - values.mean(axis=0)
    return values


ROWS_AT_ONCE = 4  # rows of a dense product kernel's register tile


@numba.njit(parallel=True, cache=True, fastmath={"reassoc", "contract"})
def dense_candidates(values, squared, factor, keys, candidates):
    """Every row's candidates from products that are never stored: the dense twin of
    :func:`select_candidates` over all columns at once.

    ``values`` (float32[n, d]) is multiplied four rows at a time with each sample, the four products summed in
    registers (a reduction over d that LLVM vectorises), then each row's key ``squared[j] - factor * product``
    enters its sorted list ``keys``/``candidates`` (float32/int64[n, c]) when smaller than its last, columns in
    ascending order (ties to the smaller sample). Without BLAS, numba's threads do not contend with BLAS's."""
    n, d = values.shape
    count = candidates.shape[1]
    for block in numba.prange((n + ROWS_AT_ONCE - 1) // ROWS_AT_ONCE):
        first = block * ROWS_AT_ONCE
        rows = min(n, first + ROWS_AT_ONCE) - first
        filled = np.zeros(ROWS_AT_ONCE, np.int64)
        row0, row1 = values[first], values[min(first + 1, n - 1)]
        row2, row3 = values[min(first + 2, n - 1)], values[min(first + 3, n - 1)]
        limit0 = limit1 = limit2 = limit3 = np.float32(np.inf)  # each row's last key once its list is full
        for j in range(n):
            other = values[j]
            sum0 = np.float32(0.0)
            sum1 = np.float32(0.0)
            sum2 = np.float32(0.0)
            sum3 = np.float32(0.0)
            for t in range(d):
                value = other[t]
                sum0 += row0[t] * value
                sum1 += row1[t] * value
                sum2 += row2[t] * value
                sum3 += row3[t] * value
            key0 = squared[j] - factor * sum0
            key1 = squared[j] - factor * sum1
            key2 = squared[j] - factor * sum2
            key3 = squared[j] - factor * sum3
            if key0 >= limit0 and key1 >= limit1 and key2 >= limit2 and key3 >= limit3:
                continue  # the common case, decided in registers: no row takes column j
            for r in range(rows):
                key = key0 if r == 0 else (key1 if r == 1 else (key2 if r == 2 else key3))
                limit = limit0 if r == 0 else (limit1 if r == 1 else (limit2 if r == 2 else limit3))
                i = first + r
                if key >= limit or j == i:
                    continue
                filled[r] = _insert(keys[i], candidates[i], filled[r], key, j)
                if filled[r] == count:
                    last = keys[i, count - 1]
                    if r == 0:
                        limit0 = last
                    elif r == 1:
                        limit1 = last
                    elif r == 2:
                        limit2 = last
                    else:
                        limit3 = last


def insert_sorted(keys, items, filled, key, item):
    """Insert (key, item) into the sorted list ``keys``/``items`` of which ``filled`` entries are set, after those
    of equal key; the last entry falls off a full list. Returns the new count. Compiled for the host here and for
    the device in :mod:`.gpu`, so both twins keep their lists alike."""
    count = keys.shape[0]
    position = filled if filled < count else count - 1
    while position > 0 and keys[position - 1] > key:
        keys[position] = keys[position - 1]
        items[position] = items[position - 1]
        position -= 1
    keys[position] = key
    items[position] = item
    return filled + 1 if filled < count else count


_insert = numba.njit(cache=True, inline="always")(insert_sorted)


@numba.njit(parallel=True, cache=True)
def select_candidates(products, squared, factor, first_row, keys, candidates):
    """Each row's candidates from a block of stored products (sparse features): row i of ``products``
    (float64[rows, n]) holds sample ``first_row + i`` against every sample; its ``candidates.shape[1]``
    smallest keys ``squared[j] - factor * products[i, j]``, ties to the smaller sample, its own sample left out,
    go to ``keys``/``candidates`` (float64/int64[rows, c]) in key order."""
    rows, n = products.shape
    count = candidates.shape[1]
    for i in numba.prange(rows):
        own = first_row + i
        filled = 0
        for j in range(n):
            key = squared[j] - factor * products[i, j]
            if j == own or (filled == count and key >= keys[i, count - 1]):
                continue  # columns come in ascending order: an equal key loses to the kept one
            filled = _insert(keys[i], candidates[i], filled, key, j)


def certified(values, distances: np.ndarray, last_keys: np.ndarray, rows: np.ndarray, metric: str,
              unit: float, product_error: float | None = None) -> np.ndarray:
    """bool[len(rows)]: whether the neighbours found for ``rows`` are provably the nearest.

    A sample left out of a row's candidates had a computed key of at least ``last_keys`` (the last candidate's),
    so its true key is at least that minus the keys' error. With ``product_error`` e the bound on a computed
    product's error relative to |x||y| (default (d + 2) u: the inputs rounded to the keys' precision, unit roundoff
    ``unit``, and a dot product of d terms in any order), that is (2e + 2u) |x| max|y| + 3 u max|y|^2 for the
    Euclidean key ``|y|^2 - 2 x.y``, and 2e + 4u for the cosine's ``-x.y`` of unit rows. The row is exact when its
    k-th neighbour's true key (``d_k^2 - |x|^2``, or ``d_k - 1``) is below that by a margin."""
    dimensions = values.shape[1]
    if product_error is None:
        product_error = (dimensions + 2) * unit
    kth = distances[:, -1]
    if metric == "cosine":
        return kth - 1.0 + 1e-9 < last_keys - (2 * product_error + 4 * unit)
    squared = squared_norms(values)
    largest = float(squared.max(initial=0.0))
    own = squared[rows]
    error = ((2 * product_error + 2 * unit) * np.sqrt(own * largest) + 3.0 * unit * largest
             + 1e-9 * (own + largest))
    return kth * kth - own < last_keys - error


def settle(values, indices: np.ndarray, distances: np.ndarray, last_keys: np.ndarray, metric: str, unit: float,
           rows: np.ndarray | None = None, product_error: float | None = None):
    """``indices``/``distances`` with the rows that :func:`certified` cannot prove searched again exactly
    (:func:`exact_rows`); ``rows`` are the samples of the given rows (default all, in order)."""
    n = values.shape[0]
    rows = np.arange(indices.shape[0]) if rows is None else rows
    if candidate_count(n, indices.shape[1]) >= n - 1:
        return indices, distances  # every sample was a candidate
    doubtful = np.flatnonzero(~certified(values, distances, np.asarray(last_keys, np.float64), rows, metric, unit,
                                         product_error))
    if doubtful.size:
        dense = values.toarray() if hasattr(values, "toarray") else values
        found, found_distances = exact_rows(dense, rows[doubtful], indices.shape[1], metric == "euclidean")
        indices[doubtful], distances[doubtful] = found, found_distances
    return indices, distances


@numba.njit(parallel=True, cache=True)
def exact_rows(values, rows, n_neighbors, euclidean):
    """The ``n_neighbors`` nearest samples of each of ``rows`` by the float64 distance from the differences (or 1
    minus the product of unit rows, clipped to [0, 2]), ties to the smaller sample: (int64[m, k], float64[m, k]).
    O(n d) a row, for the rows whose candidates left a doubt."""
    n, dimensions = values.shape
    indices = np.empty((rows.shape[0], n_neighbors), np.int64)
    distances = np.empty((rows.shape[0], n_neighbors), np.float64)
    for r in numba.prange(rows.shape[0]):
        own = values[rows[r]]
        filled = 0
        for j in range(n):
            if j == rows[r]:
                continue
            other = values[j]
            total = 0.0
            for t in range(dimensions):
                if euclidean:
                    difference = other[t] - own[t]
                    total += difference * difference
                else:
                    total += other[t] * own[t]
            distance = np.sqrt(total) if euclidean else min(max(1.0 - total, 0.0), 2.0)
            if filled == n_neighbors and distance >= distances[r, n_neighbors - 1]:
                continue
            filled = _insert(distances[r], indices[r], filled, distance, j)
    return indices, distances


def exact_distances(values, rows: np.ndarray, columns: np.ndarray, metric: str) -> np.ndarray:
    """float64[len(rows), c]: the distance of sample ``rows[i]`` to each of ``columns[i]``, from the differences
    (Euclidean) or the products of unit vectors (cosine)."""
    if hasattr(values, "tocsr"):  # sparse rows: the same quantities from the stored entries
        repeated = np.repeat(rows, columns.shape[1])
        products = np.asarray(values[repeated].multiply(values[columns.ravel()]).sum(axis=1)).reshape(columns.shape)
        if metric == "cosine":
            return np.clip(1.0 - products, 0.0, 2.0)
        squared = squared_norms(values)
        return np.sqrt(np.maximum(squared[rows][:, None] + squared[columns] - 2.0 * products, 0.0))
    return _dense_distances(values, rows, columns, metric == "euclidean")


@numba.njit(parallel=True, cache=True)
def _dense_distances(values, rows, columns, euclidean):
    """float64[len(rows), c]: Euclidean distances from the differences, or 1 - the product of unit rows clipped
    to [0, 2], of sample ``rows[i]`` to each sample of ``columns[i]``."""
    result = np.empty(columns.shape, np.float64)
    for i in numba.prange(columns.shape[0]):
        own = values[rows[i]]
        for c in range(columns.shape[1]):
            other = values[columns[i, c]]
            total = 0.0
            if euclidean:
                for t in range(own.shape[0]):
                    difference = other[t] - own[t]
                    total += difference * difference
                result[i, c] = np.sqrt(total)
            else:
                for t in range(own.shape[0]):
                    total += other[t] * own[t]
                result[i, c] = min(max(1.0 - total, 0.0), 2.0)
    return result


def rerank(values, candidates: np.ndarray, n_neighbors: int, metric: str, rows_at_once: int = 1 << 14):
    """The ``n_neighbors`` of each row's candidates nearest by exact distance, ties by index: (int64[n, k],
    float64[n, k])."""
    n = candidates.shape[0]
    indices = np.empty((n, n_neighbors), dtype=np.int64)
    distances = np.empty((n, n_neighbors), dtype=np.float64)
    for start in range(0, n, rows_at_once):
        stop = min(n, start + rows_at_once)
        chosen = candidates[start:stop]
        exact = exact_distances(values, np.arange(start, stop), chosen, metric)
        order = np.lexsort((chosen, exact), axis=1)[:, :n_neighbors]
        indices[start:stop] = np.take_along_axis(chosen, order, axis=1)
        distances[start:stop] = np.take_along_axis(exact, order, axis=1)
    return indices, distances
