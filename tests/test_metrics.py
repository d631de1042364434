import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hgpart import Hypergraph, InputError
from hgpart.metrics import evaluate, max_block_weight
from hgpart.stats import distribution

from .naive import metrics_naive


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_metrics_match_brute_force(data):
    n = data.draw(st.integers(1, 25))
    k = data.draw(st.integers(1, 70))  # k above 64 exercises the second bit-set word
    nets = data.draw(st.lists(st.lists(st.integers(0, n - 1), max_size=9), max_size=30))
    net_weights = data.draw(st.lists(st.integers(0, 9), min_size=len(nets), max_size=len(nets)))
    vertex_weights = data.draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    partition = data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    hypergraph = Hypergraph.from_pin_lists(nets, n, vertex_weights, net_weights)
    result = evaluate(hypergraph, np.array(partition), k)
    deduplicated = [sorted(set(net)) for net in nets]
    expected = metrics_naive(deduplicated, net_weights, vertex_weights, partition, k)
    assert (result.km1, result.cut, result.soed) == (expected["km1"], expected["cut"], expected["soed"])
    assert list(result.block_weights) == expected["block_weights"]
    total = sum(vertex_weights)
    perfect = -(-total // k)
    assert result.imbalance == pytest.approx(max(expected["block_weights"]) / perfect - 1 if perfect else 0.0)


def test_balance_bound_and_verdict():
    assert max_block_weight(100, 3, 0.03) == 35  # floor(1.03 * 34)
    assert max_block_weight(100, 2, 0.0) == 50
    hypergraph = Hypergraph.from_pin_lists([[0, 1], [2, 3]], 4)
    assert evaluate(hypergraph, np.array([0, 0, 0, 1]), 2, 0.03).balanced is False
    assert evaluate(hypergraph, np.array([0, 0, 1, 1]), 2, 0.03).balanced is True


def test_bad_partition_vectors():
    hypergraph = Hypergraph.from_pin_lists([[0, 1]], 2)
    with pytest.raises(InputError, match="entries"):
        evaluate(hypergraph, np.array([0]), 2)
    with pytest.raises(InputError, match="out of range"):
        evaluate(hypergraph, np.array([0, 2]), 2)


def test_distribution_matches_numpy():
    values = np.array([1, 2, 2, 3, 10, 40])
    stats = distribution(values)
    assert stats["min"] == 1 and stats["max"] == 40 and stats["median"] == 2.5
    assert stats["q1"] == np.percentile(values, 25) and stats["mean"] == pytest.approx(9.666, abs=1e-3)
