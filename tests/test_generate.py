import numpy as np
import pytest

from hgpart import generate


@pytest.mark.parametrize("name", generate.HYPERGRAPH_CLASSES)
def test_hypergraph_generators_are_seeded(name):
    size = 7000 if name == "synthetic" else 3000
    first = generate.HYPERGRAPH_GENERATORS[name](size, seed=5)
    again = generate.HYPERGRAPH_GENERATORS[name](size, seed=5)
    other = generate.HYPERGRAPH_GENERATORS[name](size, seed=6)
    np.testing.assert_array_equal(first.pin_vertices, again.pin_vertices)
    np.testing.assert_array_equal(first.net_offsets, again.net_offsets)
    if name != "grid":
        assert not np.array_equal(first.pin_vertices, other.pin_vertices)


def test_class_shapes():
    synthetic = generate.synthetic(7000, seed=1)
    degrees = synthetic.vertex_degrees()
    assert (degrees[:10] == 1000).all() and (degrees[10:] == 0).all()  # N/700 columns of N/7 nonzeros
    evenly = generate.evenly(20000, seed=1).vertex_degrees()
    assert 4 <= np.median(evenly) <= 6 and evenly.max() <= 250
    long_tailed = generate.long_tailed(20000, seed=1).vertex_degrees()
    assert long_tailed.max() > 50 * np.median(long_tailed)
    grid = generate.grid(100)
    assert grid.num_vertices == 100 and grid.num_pins == 100 + 4 * 90  # centre + 4 neighbours, minus the border
    uniform = generate.uniform(50, seed=1, d=5)
    assert set(uniform.net_sizes().tolist()) == {5}


@pytest.mark.parametrize("name", generate.GRAPH_CLASSES)
def test_graph_generators(name):
    n, sources, targets, weights = generate.GRAPH_GENERATORS[name](1000, seed=2, weights="int")
    again = generate.GRAPH_GENERATORS[name](1000, seed=2, weights="int")
    np.testing.assert_array_equal(sources, again[1])
    np.testing.assert_array_equal(weights, again[3])
    assert sources.max() < n and targets.max() < n and weights.min() >= 1 and weights.max() <= 100
