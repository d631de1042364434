"""The symmetric CSR builder behind Graph.from_edges, against a plain-Python oracle that merges each pair's
edges in edge order (no shared code)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgpart.adjacency import MAX, MIN, SHORT_ROW, SUM, symmetric_csr
from hgpart.hypergraph import Graph


def oracle(num_vertices, sources, targets, weights, rule):
    """Rows as sorted lists of (neighbour, weight), parallel edges merged in edge order."""
    rows = [dict() for _ in range(num_vertices)]
    for u, v, w in zip(sources, targets, weights):
        if u == v:
            continue
        for a, b in ((u, v), (v, u)):
            if b not in rows[a]:
                rows[a][b] = w
            elif rule == MIN:
                rows[a][b] = min(rows[a][b], w)
            elif rule == MAX:
                rows[a][b] = max(rows[a][b], w)
            else:
                rows[a][b] = rows[a][b] + w
    return [sorted(row.items()) for row in rows]


def as_rows(offsets, neighbors, weights):
    return [list(zip(neighbors[offsets[u]:offsets[u + 1]].tolist(), weights[offsets[u]:offsets[u + 1]].tolist()))
            for u in range(offsets.shape[0] - 1)]


@settings(max_examples=150, deadline=None)
@given(num_vertices=st.integers(1, 40), data=st.data(), rule=st.sampled_from([SUM, MIN, MAX]),
       threads=st.integers(1, 4))
def test_rows_match_the_oracle(num_vertices, data, rule, threads):
    """Self loops, parallel edges both ways and repeated, rows short and long (a hub), on 1-4 threads."""
    m = data.draw(st.integers(0, 120))
    hub = data.draw(st.booleans())
    ends = st.integers(0, num_vertices - 1)
    sources = np.array(data.draw(st.lists(st.just(0) if hub else ends, min_size=m, max_size=m)), dtype=np.int64)
    targets = np.array(data.draw(st.lists(ends, min_size=m, max_size=m)), dtype=np.int64)
    weights = np.array(data.draw(st.lists(st.integers(-5, 9), min_size=m, max_size=m)), dtype=np.float64) / 4
    offsets, neighbors, edge_weights = symmetric_csr(num_vertices, sources, targets, weights, rule, threads)
    assert offsets.dtype == np.int64 and neighbors.dtype == np.int32 and edge_weights.dtype == np.float64
    assert as_rows(offsets, neighbors, edge_weights) == oracle(num_vertices, sources, targets, weights, rule)


@pytest.mark.parametrize("order", ["random", "ascending", "descending"])
def test_long_rows_and_threads_give_the_same_csr(order):
    """Rows far longer than SHORT_ROW (the sort of (neighbour, place) keys), rows already ascending (kept as
    they are) and descending ones, on 1-5 threads: all equal the oracle, repeated edges merged in edge order."""
    rng = np.random.default_rng(3)
    n = 300
    sources = np.concatenate([np.zeros(2000, np.int64), rng.integers(0, n, 3000)])
    targets = np.concatenate([rng.integers(0, 60, 2000), rng.integers(0, n, 3000)])
    if order != "random":
        pairs = sorted(zip(sources.tolist(), targets.tolist()), reverse=order == "descending")
        sources, targets = (np.array(column, dtype=np.int64) for column in zip(*pairs))
    weights = rng.integers(1, 100, sources.shape[0]).astype(np.float64)
    expected = oracle(n, sources, targets, weights, SUM)
    assert max(len(row) for row in expected) > 4 * SHORT_ROW
    for threads in range(1, 6):
        assert as_rows(*symmetric_csr(n, sources, targets, weights, SUM, threads)) == expected


def test_from_edges_builds_with_the_merge_rule():
    graph = Graph.from_edges(4, [0, 1, 1, 2, 3], [1, 0, 2, 2, 0], [5.0, 3.0, 2.5, 9.0, 1.0], merge="sum")
    assert graph.offsets.tolist() == [0, 2, 4, 5, 6]
    assert graph.neighbors.tolist() == [1, 3, 0, 2, 1, 0]
    assert graph.edge_weights.tolist() == [8.0, 1.0, 8.0, 2.5, 2.5, 1.0]
