"""Exact k nearest neighbours of feature vectors on the host, the first step of unsupervised classification by
partitioning a kNN hypergraph (Huang, Liu, Lv, Gong and Metaxas, "Unsupervised image categorization by hypergraph
partition", IEEE TPAMI 33(6), 2011): each sample's net holds the sample and its nearest neighbours.

The search is brute force in blocks of rows: a block's distances to every sample come from one matrix product
(||x||² + ||y||² - 2 x·y for the Euclidean metric, 1 - x·y of unit vectors for the cosine one), so that only
``block_bytes`` of distances are held at a time, never the n x n matrix; each row keeps its ``n_neighbors``
smallest, whose distances are then computed again from the differences (the product's rounding cannot reorder
them) and sorted by distance, then by index.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError

METRICS = ("euclidean", "cosine")
BLOCK_BYTES = 64 << 20  # distances held at a time


def _checked(features, n_neighbors: int, metric: str) -> np.ndarray:
    if metric not in METRICS:
        raise InputError(f"unknown metric {metric!r} (euclidean or cosine)")
    values = np.asarray(features, dtype=np.float64)
    if values.ndim != 2:
        raise InputError(f"expected one sample per row (a 2-D array), got {values.ndim} dimensions")
    if n_neighbors < 1:
        raise InputError(f"the number of neighbours must be at least 1, got {n_neighbors}")
    if values.shape[0] < n_neighbors + 1:
        raise InputError(f"{values.shape[0]} samples: at least n_neighbors + 1 = {n_neighbors + 1} are needed")
    bad = ~np.isfinite(values)
    if bad.any():
        row, column = np.argwhere(bad)[0]
        raise InputError(f"sample {row}, feature {column}: {values[row, column]} is not a finite number")
    return values


def nearest_neighbors(features, n_neighbors: int, metric: str = "euclidean",
                      block_bytes: int = BLOCK_BYTES) -> tuple[np.ndarray, np.ndarray]:
    """The ``n_neighbors`` nearest other samples of every sample, exactly.

    Parameters
    ----------
    features : array_like, shape (n, d)
        One sample per row (any real dtype; computed in float64).
    n_neighbors : int
        Neighbours per sample (a sample is never its own neighbour; a duplicate of it may be).
    metric : {"euclidean", "cosine"}
        The cosine distance is 1 - cos(x, y); a zero vector is at distance 1 from every other sample.
    block_bytes : int
        Bytes of distances held at a time (rows of the n x n matrix, one block after another).

    Returns
    -------
    indices : int64[n, n_neighbors]
        Each row's neighbours, nearest first; of equal distances the smaller index first (also where the
        k-th distance is shared: those of smaller index are kept).
    distances : float64[n, n_neighbors]
        Their distances.
    """
    values = _checked(features, n_neighbors, metric)
    n = values.shape[0]
    if metric == "cosine":
        norms = np.sqrt(np.einsum("ij,ij->i", values, values))
        values = values / np.where(norms > 0, norms, 1.0)[:, None]
    squared = np.einsum("ij,ij->i", values, values) if metric == "euclidean" else None
    rows = max(1, int(block_bytes) // (8 * n))
    indices = np.empty((n, n_neighbors), dtype=np.int64)
    distances = np.empty((n, n_neighbors), dtype=np.float64)
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        block = values[start:stop] @ values.T  # the products, turned into distances in place
        if metric == "euclidean":
            block *= -2.0
            block += squared[start:stop, None]
            block += squared[None, :]
        else:
            np.subtract(1.0, block, out=block)
        block[np.arange(stop - start), np.arange(start, stop)] = np.inf  # never itself
        chosen = _smallest(block, n_neighbors)
        exact = _distances(values[start:stop], values, chosen, metric)
        order = np.lexsort((chosen, exact), axis=1)
        indices[start:stop] = np.take_along_axis(chosen, order, axis=1)
        distances[start:stop] = np.take_along_axis(exact, order, axis=1)
    return indices, distances


def _smallest(block: np.ndarray, k: int) -> np.ndarray:
    """int64[rows, k]: in each row of ``block``, the columns of the k smallest values, of those equal to the
    k-th smallest the first ones (ascending column order)."""
    kth = np.partition(block, k - 1, axis=1)[:, k - 1:k]
    below = block < kth
    equal = block == kth
    needed = k - below.sum(axis=1, keepdims=True)
    taken = below | (equal & (np.cumsum(equal, axis=1) <= needed))
    return np.nonzero(taken)[1].reshape(block.shape[0], k).astype(np.int64)


def _distances(rows: np.ndarray, values: np.ndarray, chosen: np.ndarray, metric: str) -> np.ndarray:
    """float64[len(rows), k]: the distance of each row to its ``chosen`` samples, from the differences
    (Euclidean) or the products of unit vectors (cosine)."""
    if metric == "euclidean":
        differences = values[chosen] - rows[:, None, :]
        return np.sqrt(np.einsum("ijk,ijk->ij", differences, differences))
    return np.clip(1.0 - np.einsum("ijk,ik->ij", values[chosen], rows), 0.0, 2.0)
