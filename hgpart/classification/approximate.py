"""Approximate nearest neighbours on the CPU for inputs too large for the exact search: pynndescent's nearest
neighbour descent (W. Dong, M. Charikar and K. Li, "Efficient k-nearest neighbor graph construction for generic
similarity measures", WWW 2011; L. McInnes's implementation), the optional ``ann`` extra.

Its result is shaped as the exact search's: each sample's ``n_neighbors`` others, nearest first, itself left out.
Its recall against the exact search is measured in ``docs/tuning.md``.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from ..errors import DeviceError
from .neighbors import checked_features


def pynndescent_available() -> bool:
    return importlib.util.find_spec("pynndescent") is not None


def approximate_neighbors(features, n_neighbors: int, metric: str = "euclidean",
                          seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """About the ``n_neighbors`` nearest other samples of every sample (int64[n, k], float64[n, k]), by
    pynndescent; the same ``features``, ``metric`` and ``seed`` give the same result.

    Raises
    ------
    DeviceError
        pynndescent is not installed (``pip install 'hgpart[ann]'``).
    """
    values = checked_features(features, n_neighbors, metric, dtype=np.float32)
    if not pynndescent_available():
        raise DeviceError("the approximate search needs pynndescent: pip install 'hgpart[ann]' (or use --search exact)")
    from pynndescent import NNDescent

    index = NNDescent(values, n_neighbors=n_neighbors + 1, metric=metric, random_state=seed, n_jobs=None)
    found, distances = index.neighbor_graph
    return without_self(found, distances.astype(np.float64), n_neighbors)


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
