"""Helpers of the partitioner's tests (coarsening, initial partitioning, refinement, whole partitions)."""

import numpy as np

from hgpart import Hypergraph

from .conftest import DATA

IBM01 = str(DATA / "ibm01.hgr")


def random_hypergraph(seed, n, m, max_size=4, weighted=False):
    rng = np.random.default_rng(seed)
    nets = [rng.choice(n, size=int(rng.integers(2, max_size + 1)), replace=False) for _ in range(m)]
    vertex_weights = rng.integers(1, 4, n) if weighted else None
    net_weights = rng.integers(1, 5, m) if weighted else None
    return Hypergraph.from_pin_lists(nets, n, vertex_weights, net_weights), nets
