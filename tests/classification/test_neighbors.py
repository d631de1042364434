"""Exact nearest neighbours against a brute force that shares no code (every pair's distance from its
differences, one Python sort per sample) and against scikit-learn's NearestNeighbors."""

import numpy as np
import pytest

from hgpart.classification.neighbors import nearest_neighbors
from hgpart.errors import InputError


def brute_force(features, n_neighbors, metric):
    """Every pair's distance, each sample's others sorted by (distance, index)."""
    x = np.asarray(features, dtype=np.float64)
    indices, distances = [], []
    for i in range(len(x)):
        row = []
        for j in range(len(x)):
            if j == i:
                continue
            if metric == "euclidean":
                distance = float(np.sqrt(np.sum((x[i] - x[j]) ** 2)))
            else:
                a, b = np.linalg.norm(x[i]), np.linalg.norm(x[j])
                distance = 1.0 if a == 0 or b == 0 else float(1.0 - x[i] @ x[j] / (a * b))
            row.append((distance, j))
        row.sort()
        indices.append([j for _, j in row[:n_neighbors]])
        distances.append([d for d, _ in row[:n_neighbors]])
    return np.array(indices), np.array(distances)


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
@pytest.mark.parametrize("n, d, k", [(2, 3, 1), (40, 2, 5), (120, 7, 10), (200, 30, 3)])
def test_the_neighbours_are_the_brute_forces(metric, n, d, k):
    """Continuous random features (no ties): the same neighbours in the same order, the same distances; with
    blocks of one row, of a few rows and of all rows."""
    features = np.random.default_rng(n * d + k).normal(size=(n, d))
    expected_indices, expected_distances = brute_force(features, k, metric)
    for block_bytes in (1, 8 * n * 7, 1 << 30):
        indices, distances = nearest_neighbors(features, k, metric, block_bytes=block_bytes)
        assert indices.dtype == np.int64 and distances.dtype == np.float64 and indices.shape == (n, k)
        assert np.array_equal(indices, expected_indices)
        assert np.allclose(distances, expected_distances, rtol=1e-12, atol=1e-12)


def test_ties_go_to_the_smaller_index_and_a_sample_is_never_its_own_neighbour():
    """Points of a grid (many equal distances) and duplicates (distance 0): ties by index, exactly as the brute
    force sorts them; a duplicate may be a neighbour, the sample itself never."""
    grid = np.array([(x, y) for x in range(5) for y in range(4)], dtype=np.float64)
    features = np.concatenate([grid, grid[:6]])  # samples 20-25 duplicate 0-5
    for k in (1, 4, 9):
        indices, distances = nearest_neighbors(features, k, block_bytes=8 * len(features) * 3)
        expected_indices, expected_distances = brute_force(features, k, "euclidean")
        assert np.array_equal(indices, expected_indices) and np.allclose(distances, expected_distances)
        assert not np.any(indices == np.arange(len(features))[:, None])
    assert indices[0, 0] == 20 and distances[0, 0] == 0.0


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_near_duplicates_and_far_offsets_are_exact(metric):
    """Clusters of near-duplicates (distances below the float32 keys' resolution: the candidates cannot be trusted
    and the rows are searched again) and features far from the origin give the brute force's neighbours."""
    rng = np.random.default_rng(4)
    clusters = np.repeat(rng.normal(size=(15, 6)), 12, axis=0) + rng.normal(scale=1e-5, size=(180, 6))
    offset = 1e4 + rng.normal(size=(150, 5))
    for features in (clusters, offset):
        indices, distances = nearest_neighbors(features, 7, metric)
        expected_indices, expected_distances = brute_force(features, 7, metric)
        assert np.array_equal(indices, expected_indices)
        assert np.allclose(distances, expected_distances, rtol=1e-9, atol=1e-12)


def test_cosine_with_a_zero_vector_is_at_distance_one():
    features = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    indices, distances = nearest_neighbors(features, 3, "cosine")
    assert np.allclose(distances[0], [1.0, 1.0, 1.0]) and list(indices[0]) == [1, 2, 3]
    assert list(indices[1]) == [3, 0, 2] and np.allclose(distances[1], [1 - np.sqrt(0.5), 1.0, 1.0])


@pytest.mark.parametrize("metric", ["euclidean", "cosine"])
def test_the_neighbours_are_scikit_learns(metric):
    """scikit-learn's exact (brute-force) NearestNeighbors, whose ``kneighbors()`` without a query leaves each
    sample out, finds the same neighbours at the same distances on float32 features."""
    sklearn_neighbors = pytest.importorskip("sklearn.neighbors")
    features = np.random.default_rng(7).normal(size=(500, 16)).astype(np.float32)
    k = 10
    search = sklearn_neighbors.NearestNeighbors(n_neighbors=k, algorithm="brute", metric=metric)
    their_distances, their_indices = search.fit(features.astype(np.float64)).kneighbors()
    assert their_indices.shape == (500, k)  # kneighbors() without X leaves each sample out
    indices, distances = nearest_neighbors(features, k, metric)
    assert np.array_equal(indices, their_indices)
    assert np.allclose(distances, their_distances, atol=1e-9)


@pytest.mark.parametrize("features, k, metric, message", [
    (np.zeros((3, 2)), 3, "euclidean", "3 samples: at least n_neighbors + 1 = 4"),
    (np.zeros(5), 1, "euclidean", "one sample per row"),
    (np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 1.0]]), 1, "euclidean", "sample 1, feature 0: nan"),
    (np.array([[0.0, 1.0], [1.0, np.inf], [1.0, 1.0]]), 1, "cosine", "sample 1, feature 1: inf"),
    (np.zeros((4, 2)), 0, "euclidean", "at least 1"),
    (np.zeros((4, 2)), 1, "manhattan", "unknown metric 'manhattan'"),
])
def test_bad_input_is_one_input_error(features, k, metric, message):
    with pytest.raises(InputError, match=message.replace("+", r"\+")):
        nearest_neighbors(features, k, metric)
