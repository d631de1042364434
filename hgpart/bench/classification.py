"""``hgpart bench classify``: unsupervised classification by hgpart (kNN hypergraph + partition) beside
scikit-learn's SpectralClustering (``nearest_neighbors`` affinity) and KMeans, on scikit-learn's bundled data sets
(z-scored) and on generated blobs.

Per data set and tool: NMI, accuracy under the best matching of classes to labels and ARI against the known
labels, and seconds (for hgpart per phase: the neighbours, building the hypergraph, the partition); medians over
``repeat`` seeds.
"""

from __future__ import annotations

import statistics
import time

import numpy as np

from ..classification.classify import DEFAULT_EPSILON, classify
from ..classification.hypergraph import standardized
from ..classification.scores import scores
from ..config import KnnConfig
from . import log_row

BUNDLED = ("digits", "iris")


def data_set(name: str, blobs_samples: int, blobs_features: int, blobs_classes: int):
    """(features, labels) of a bundled scikit-learn data set (z-scored) or ``blobs`` (float32, make_blobs with
    seed 0: ``blobs_samples`` x ``blobs_features`` in ``blobs_classes`` clusters)."""
    from sklearn import datasets

    if name == "blobs":
        features, labels = datasets.make_blobs(blobs_samples, blobs_features, centers=blobs_classes, random_state=0)
        return features.astype(np.float32), labels
    features, labels = getattr(datasets, f"load_{name}")(return_X_y=True)
    return standardized(features), labels


def _median_row(runs: list[dict]) -> dict:
    row = {key: statistics.median(run[key] for run in runs) for key in runs[0] if key != "seconds"}
    phases = runs[0].get("seconds", {})
    row["seconds"] = {phase: statistics.median(run["seconds"][phase] for run in runs) for phase in phases}
    return row


def run_hgpart(features, labels, classes: int, config: KnnConfig, epsilon: float, device: str, repeat: int) -> dict:
    runs = []
    for seed in range(repeat):
        started = time.perf_counter()
        result = classify(features, classes, config, epsilon, seed, device=device,
                          partition_device="gpu" if device == "gpu" else "cpu")
        total = time.perf_counter() - started
        runs.append({**scores(labels, result.classes), "seconds total": total, "knn s": result.seconds["neighbors"],
                     "hypergraph s": result.seconds["hypergraph"], "partition s": result.seconds["partition"],
                     "balanced": float(result.partition.metrics.balanced), "seconds": result.seconds})
    row = _median_row(runs)
    row["balanced"] = bool(row["balanced"])
    return {"tool": f"hgpart {device}", "neighbors": config.n_neighbors, "epsilon": epsilon, **row}


def run_peer(tool: str, features, labels, classes: int, neighbors: int, repeat: int) -> dict:
    from sklearn.cluster import KMeans, SpectralClustering

    runs = []
    for seed in range(repeat):
        if tool == "spectral":
            model = SpectralClustering(classes, affinity="nearest_neighbors", n_neighbors=neighbors, random_state=seed)
        else:
            model = KMeans(classes, n_init=10, random_state=seed)
        started = time.perf_counter()
        found = model.fit_predict(features)
        runs.append({**scores(labels, found), "seconds total": time.perf_counter() - started})
    return {"tool": f"sklearn {tool}", "neighbors": neighbors if tool == "spectral" else None, **_median_row(runs)}


def run_classify_bench(names, device: str, config: KnnConfig = KnnConfig(), epsilon: float = DEFAULT_EPSILON,
                       repeat: int = 3, peers=("spectral", "kmeans"), peer_neighbors: int = 10,
                       peer_max_samples: int = 200_000, blobs_samples: int = 1_000_000, blobs_features: int = 64,
                       blobs_classes: int = 2, reporter=None) -> list[dict]:
    """Rows of the bench: for each data set in ``names`` (``digits``, ``iris``, ``blobs``, ...) hgpart on
    ``device`` and the ``peers`` (on data sets of at most ``peer_max_samples`` samples)."""
    rows = []
    for name in names:
        features, labels = data_set(name, blobs_samples, blobs_features, blobs_classes)
        classes = len(np.unique(labels))
        shape = {"instance": name, "samples": int(features.shape[0]), "features": int(features.shape[1]),
                 "classes": classes}
        rows.append({**shape, **run_hgpart(features, labels, classes, config, epsilon, device, repeat)})
        log_row(reporter, name, rows[-1])
        if features.shape[0] <= peer_max_samples:
            for peer in peers:
                rows.append({**shape, **run_peer(peer, features, labels, classes, peer_neighbors, repeat)})
                log_row(reporter, name, rows[-1])
    return rows
