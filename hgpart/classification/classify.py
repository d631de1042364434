"""Unsupervised classification by hypergraph partitioning (L. Cheng, H. Cho and P. Yoon, "An Accelerated
Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015, Sec. VII; Huang, Liu, Lv, Gong and Metaxas,
IEEE TPAMI 2011): the kNN hypergraph of the samples, partitioned into as many blocks as classes, minimising km1.
A block is a class: samples whose neighbourhoods overlap much end up together.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..config import KnnConfig
from .hypergraph import KnnHypergraph, knn_hypergraph

DEFAULT_EPSILON = 0.1  # classes may differ in size: see docs/tuning.md, "Classification"


@dataclass
class ClassifyResult:
    """The classes of the samples and how they were found.

    Attributes
    ----------
    classes : int64[n]
        Each sample's class, 0 .. n_classes - 1 (the partition's blocks).
    knn : KnnHypergraph
        The hypergraph that was partitioned, its neighbours and their distances.
    partition : hgpart.multilevel.PartitionResult
    seconds : dict
        ``neighbors``, ``hypergraph`` and ``partition``.
    """

    classes: np.ndarray
    knn: KnnHypergraph
    partition: object
    seconds: dict = field(default_factory=dict)


def classify(features, n_classes: int, config: KnnConfig = KnnConfig(), epsilon: float = DEFAULT_EPSILON,
             seed: int = 0, preset: str = "default", device: str = "cpu", partition_device: str | None = None
             ) -> ClassifyResult:
    """Classify the samples (rows of ``features``) into ``n_classes`` classes by partitioning their kNN
    hypergraph.

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (n, d)
    n_classes : int
    config : KnnConfig
        The hypergraph: neighbours, metric, net weights, search.
    epsilon : float
        A class may hold up to (1 + epsilon) * ceil(n / n_classes) samples.
    seed : int
        Seeds the partitioner (and the approximate search).
    preset : {"fast", "default", "quality"}
    device : {"cpu", "gpu"}
        Where the neighbours are found (a resolved device).
    partition_device : {"auto", "cpu", "gpu"}, optional
        Where the partitioner runs (default: ``device``).
    """
    from ..multilevel import partition

    knn = knn_hypergraph(features, config, device)
    started = time.perf_counter()
    result = partition(knn.hypergraph, n_classes, epsilon, "km1", seed, preset, device=partition_device or device)
    seconds = {**knn.seconds, "partition": time.perf_counter() - started}
    return ClassifyResult(result.partition.astype(np.int64), knn, result, seconds)
