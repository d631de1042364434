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


def assert_end_to_end(row, device):
    """A graph bench row's three times on ``device`` (hgpart.bench.end_to_end): the file's read added to the time
    from a host graph, which holds the device-resident time, and the edges per second of each."""
    resident, host, file = (row[f"{device} {name} s"] for name in ("resident", "host", "file"))
    assert 0 < resident <= host < file and row["read s"] > 0
    assert abs(file - (row["read s"] + host)) <= 1e-9 * file
    for name, seconds in (("resident", resident), ("host", host), ("file", file)):
        assert abs(row[f"{device} {name} edges/s"] * seconds - row["edges"]) <= 1e-6 * row["edges"]
