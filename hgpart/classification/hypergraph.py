"""The kNN hypergraph of feature vectors: a net per sample holding the sample and its nearest neighbours
(Huang, Liu, Lv, Gong and Metaxas, "Unsupervised image categorization by hypergraph partition", IEEE TPAMI
33(6), 2011; L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU",
IEEE HPEC 2015, Sec. VII, steps 1-5), with net weights that reflect how compact the members are.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..config import KnnConfig
from ..errors import DeviceError, InputError
from ..hypergraph import Hypergraph
from .neighbors import nearest_neighbors


@dataclass
class KnnHypergraph:
    """A kNN hypergraph and how it was made.

    Attributes
    ----------
    hypergraph : Hypergraph
        Vertex i is sample i; net i holds sample i and its neighbours; unit vertex weights.
    indices : int64[n, n_neighbors]
        Each sample's neighbours, nearest first.
    distances : float64[n, n_neighbors]
    search : str
        ``exact`` or ``approximate``: which search found the neighbours.
    device : str
        Where the search ran (``cpu`` or ``gpu``).
    seconds : dict
        ``neighbors`` and ``hypergraph`` (building it, weights included).
    """

    hypergraph: Hypergraph
    indices: np.ndarray
    distances: np.ndarray
    search: str
    device: str
    seconds: dict = field(default_factory=dict)


def standardized(features):
    """Each feature scaled to unit variance and, for dense features, centred (z-scores); features of zero
    variance are left at 0 (dense) or as they are (sparse, where centring would fill the matrix)."""
    if hasattr(features, "tocsr"):
        import scipy.sparse as sp

        values = features.tocsr().astype(np.float64)
        mean = np.asarray(values.mean(axis=0)).ravel()
        deviation = np.sqrt(np.maximum(np.asarray(values.multiply(values).mean(axis=0)).ravel() - mean * mean, 0.0))
        return values @ sp.diags(1.0 / np.where(deviation > 0, deviation, 1.0))
    values = np.asarray(features, dtype=np.float64)
    deviation = values.std(axis=0)
    return (values - values.mean(axis=0)) / np.where(deviation > 0, deviation, 1.0)


def compactness_weights(distances: np.ndarray, scale: int) -> np.ndarray:
    """int64[n]: each net's heat-kernel weight, 1 + sum over its neighbours of exp(-(d / sigma)^2) with sigma the
    mean of all ``distances`` (float64[n, k]), scaled so that the heaviest net weighs ``scale`` and rounded (a
    net weighs at least scale / (k + 1), so no weight rounds to 0 when scale >= k + 1)."""
    sigma = float(distances.mean()) if distances.size else 0.0
    if sigma <= 0.0:  # every neighbour at distance 0: all nets equally compact
        return np.full(distances.shape[0], scale, dtype=np.int64)
    compactness = 1.0 + np.exp(-np.square(distances / sigma)).sum(axis=1)
    return np.maximum(1, np.rint(compactness * (scale / compactness.max()))).astype(np.int64)


def hypergraph_of_neighbors(indices: np.ndarray, distances: np.ndarray, weights: str = "compactness",
                            scale: int = 1000) -> Hypergraph:
    """The hypergraph whose net i holds sample i and the samples ``indices[i]`` (int[n, k]), weighted by
    ``weights`` (``compactness`` or ``uniform``) from ``distances`` (float64[n, k])."""
    n, k = indices.shape
    pins = np.empty((n, k + 1), dtype=np.int64)
    pins[:, 0] = np.arange(n)
    pins[:, 1:] = indices
    net_weights = compactness_weights(distances, scale) if weights == "compactness" else None
    return Hypergraph.from_pins(n, np.arange(0, n * (k + 1) + 1, k + 1, dtype=np.int64), pins.ravel(),
                                net_weights=net_weights)


def knn_hypergraph(features, config: KnnConfig = KnnConfig(), device: str = "cpu") -> KnnHypergraph:
    """Find every sample's nearest neighbours (:mod:`.neighbors`, :mod:`.gpu` or :mod:`.approximate`, as
    ``config.search`` and ``device`` say) and build their hypergraph.

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (n, d)
        One sample per row.
    config : KnnConfig
    device : {"cpu", "gpu"}
        A resolved device (see :func:`hgpart.device.resolve_device`).
    """
    search = choose_search(config, device, _rows(features))
    started = time.perf_counter()
    if search == "approximate":
        from .approximate import approximate_neighbors

        indices, distances = approximate_neighbors(features, config.n_neighbors, config.metric, config.seed)
    elif device == "gpu":
        from .gpu import gpu_nearest_neighbors

        indices, distances = gpu_nearest_neighbors(features, config.n_neighbors, config.metric)
    else:
        indices, distances = nearest_neighbors(features, config.n_neighbors, config.metric)
    found = time.perf_counter()
    hypergraph = hypergraph_of_neighbors(indices, distances, config.weights, config.weight_scale)
    return KnnHypergraph(hypergraph, indices, distances, search, "cpu" if search == "approximate" else device,
                         {"neighbors": found - started, "hypergraph": time.perf_counter() - found})


def _rows(features) -> int:
    shape = getattr(features, "shape", None)
    if shape is None:
        features = np.asarray(features)
        shape = features.shape
    if len(shape) != 2:
        raise InputError(f"expected one sample per row (a 2-D array), got {len(shape)} dimensions")
    return int(shape[0])


def choose_search(config: KnnConfig, device: str, samples: int) -> str:
    """``exact`` or ``approximate``: ``config.search`` unless ``auto``, which is exact on the GPU and on the CPU up
    to ``config.exact_max_samples`` samples, approximate above when pynndescent is installed."""
    if config.search == "approximate":
        if device == "gpu":
            raise DeviceError("the approximate search runs on the CPU only; use --device cpu or --search exact")
        return "approximate"
    if config.search == "exact" or device == "gpu" or samples <= config.exact_max_samples:
        return "exact"
    from .approximate import pynndescent_available

    return "approximate" if pynndescent_available() else "exact"
