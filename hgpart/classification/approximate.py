"""Approximate nearest neighbours on the CPU for inputs too large for the exact search: pynndescent's nearest
neighbour descent (W. Dong, M. Charikar and K. Li, "Efficient k-nearest neighbor graph construction for generic
similarity measures", WWW 2011; L. McInnes's implementation), the optional ``ann`` extra.

As the exact search does, it keeps 2k + 8 candidates per row (pynndescent's graph of that many neighbours), and
their float64 distances from the differences choose the k (:func:`~hgpart.classification.neighbors.rerank`):
so the distances are exact and the order is the exact search's, and only a neighbour that the graph missed
can differ. A graph of just k neighbours finds far fewer: its recall against the exact search is in
``docs/tuning.md`` ("The approximate search").
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ..errors import DeviceError
from .neighbors import candidate_count, exact_rows, prepared_features, rerank


def pynndescent_available() -> bool:
    return importlib.util.find_spec("pynndescent") is not None


def approximate_neighbors(features, n_neighbors: int, metric: str = "euclidean",
                          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """About the ``n_neighbors`` nearest other samples of every sample (int64[n, k], float64[n, k]): the nearest
    by exact distance of the 2k + 8 that pynndescent's graph gives each sample, ties to the smaller index; the
    same ``features``, ``metric`` and ``seed`` give the same result.

    Raises
    ------
    DeviceError
        pynndescent is not installed (``pip install 'hgpart[ann]'``).
    """
    values = prepared_features(features, n_neighbors, metric)
    if not pynndescent_available():
        raise DeviceError("the approximate search needs pynndescent: pip install 'hgpart[ann]' (or use --search exact)")
    from pynndescent import NNDescent

    n = values.shape[0]
    count = candidate_count(n, n_neighbors)
    index = NNDescent(values.astype(np.float32), n_neighbors=count + 1, metric=metric, random_state=seed,
                      n_jobs=None)
    found, distances = index.neighbor_graph
    candidates, _ = without_self(found, distances.astype(np.float64), count)
    missing = np.flatnonzero((candidates < 0).any(axis=1))  # the graph found too few for these rows
    candidates[missing] = (np.arange(n)[missing, None] + 1 + np.arange(count)) % n  # any others, replaced below
    indices, exact = rerank(values, candidates, n_neighbors, metric)
    if missing.size:
        dense = values.toarray() if hasattr(values, "toarray") else values
        indices[missing], exact[missing] = exact_rows(dense, missing, n_neighbors, metric == "euclidean")
    return indices, exact


def without_self(found: np.ndarray, distances: np.ndarray, n_neighbors: int) -> tuple[np.ndarray, np.ndarray]:
    """Each row's ``n_neighbors`` first entries other than the row itself (int64[n, k], float64[n, k]); a row that
    does not list itself drops its last entry. Rows sorted by (distance, index)."""
    n = found.shape[0]
    own = found == np.arange(n)[:, None]
    drop = np.where(own.any(axis=1), own.argmax(axis=1), found.shape[1] - 1)
    keep = np.ones(found.shape, dtype=bool)
    keep[np.arange(n), drop] = False
    found = found[keep].reshape(n, -1)[:, :n_neighbors].astype(np.int64)
    distances = distances[keep].reshape(n, -1)[:, :n_neighbors]
    order = np.lexsort((found, distances), axis=1)
    return np.take_along_axis(found, order, axis=1), np.take_along_axis(distances, order, axis=1)
