"""The public API at the top level: hgpart.partition, coarsen, cluster, minimum_spanning_forest,
count_triangles and list_triangles on their own types, scipy.sparse matrices and networkx graphs, checked
against networkx and scipy; the config and its arguments; the fallback of device="auto"; the doctests."""

import doctest
from dataclasses import replace

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import minimum_spanning_tree

import hgpart
from hgpart import multilevel
from hgpart.config import PolicyConfig, make_config
from hgpart.errors import DeviceMemoryError, InputError


def test_partition_takes_a_scipy_matrix_as_its_row_net_hypergraph():
    matrix = sp.random(400, 300, density=0.02, format="csr", random_state=3)
    result = hgpart.partition(matrix, 4, seed=2, device="cpu")
    direct = multilevel.partition(hgpart.Hypergraph.from_sparse(matrix), 4, seed=2, device="cpu")
    np.testing.assert_array_equal(result.partition, direct.partition)
    assert result.partition.shape == (300,) and result.metrics.balanced
    assert result.km1 == hgpart.evaluate(hgpart.Hypergraph.from_sparse(matrix), result.partition).km1


def test_partition_takes_a_networkx_graph_as_two_pin_nets():
    graph = nx.karate_club_graph()
    result = hgpart.partition(graph, 2, device="cpu")
    cut = sum(w for u, v, w in graph.edges(data="weight", default=1) if result.partition[u] != result.partition[v])
    assert result.cut == result.km1 == cut  # two-pin nets: km1 is the (weighted) cut
    assert np.bincount(result.partition).max() <= 1.03 * 17


def test_partition_config_and_arguments_must_agree():
    hypergraph = hgpart.Hypergraph.from_pin_lists([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]])
    config = hgpart.make_config(2, 0.1, "cut", 5)
    assert hgpart.partition(hypergraph, config=config, device="cpu").partition.shape == (4,)
    assert hgpart.partition(hypergraph, 2, 0.1, "cut", 5, config=config, device="cpu").partition.shape == (4,)
    with pytest.raises(InputError, match="k=3 but config.k=2"):
        hgpart.partition(hypergraph, 3, config=config)
    with pytest.raises(InputError, match="seed=1 but config.seed=5"):
        hgpart.partition(hypergraph, seed=1, config=config)
    with pytest.raises(InputError, match="number of blocks"):
        hgpart.partition(hypergraph)
    with pytest.raises(InputError, match="expected a Hypergraph"):
        hgpart.partition([[0, 1]], 2)


def test_auto_runs_on_the_cpu_when_the_gpu_runs_out_of_memory(monkeypatch):
    """device="auto" on a GPU machine: a DeviceMemoryError makes the library run the CPU path and say so;
    device="gpu" raises it."""
    import hgpart.device

    real = multilevel._partition

    def exhausted(hypergraph, config, fixed, path, on_level, twin=False):
        if path == "gpu":
            raise DeviceMemoryError("the GPU ran out of memory on 4 pins; use --device cpu")
        return real(hypergraph, config, fixed, path, on_level, twin)

    monkeypatch.setattr(hgpart.device, "resolve_device", lambda requested, gpu_implemented=False: ("gpu", None))
    monkeypatch.setattr(multilevel, "_partition", exhausted)
    hypergraph = hgpart.Hypergraph.from_pin_lists([[0, 1], [1, 2], [2, 3]])
    every_size_on_the_gpu = replace(make_config(2), policy=PolicyConfig(auto_gpu_min_pins=0))
    result = hgpart.partition(hypergraph, config=every_size_on_the_gpu)
    assert result.device == "cpu" and result.note == "the GPU ran out of memory on 4 pins; ran on the CPU"
    with pytest.raises(DeviceMemoryError):
        hgpart.partition(hypergraph, config=every_size_on_the_gpu, device="gpu")


def test_auto_picks_the_path_by_the_inputs_pins(monkeypatch):
    """device="auto" with a GPU: the CPU path below policy.auto_gpu_min_pins, the GPU path from there on, and
    device_reason says why; without a GPU the CPU and that reason; cpu and gpu give none."""
    import hgpart.device

    paths = []

    def recording(hypergraph, config, fixed, path, on_level, twin=False):
        paths.append(path)
        return real(hypergraph, config, fixed, "cpu", on_level, twin)

    real = multilevel._partition
    hypergraph = hgpart.Hypergraph.from_pin_lists([[0, 1], [1, 2], [2, 3]])  # 6 pins
    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: False)
    assert hgpart.partition(hypergraph, 2).device_reason == "auto: no usable CUDA GPU: the CPU path"
    assert hgpart.partition(hypergraph, 2, device="cpu").device_reason is None
    monkeypatch.setattr(hgpart.device, "resolve_device", lambda requested, gpu_implemented=False: (
        "cpu" if requested == "cpu" else "gpu", None))
    monkeypatch.setattr(multilevel, "_partition", recording)
    for bound, path in ((7, "cpu"), (6, "gpu"), (0, "gpu")):
        config = replace(make_config(2), policy=PolicyConfig(auto_gpu_min_pins=bound))
        result = hgpart.partition(hypergraph, config=config)
        relation = "fewer than" if path == "cpu" else "at least"
        assert paths[-1] == path and result.device_reason.startswith(
            f"auto: 6 pins, {relation} policy.auto_gpu_min_pins = {bound:,}: the {path.upper()} path")
    hgpart.partition(hypergraph, 2, device="gpu")
    assert paths[-1] == "gpu" and len(paths) == 4


def test_graph_functions_pick_the_device_by_edges(monkeypatch):
    """device="auto" for cluster, minimum_spanning_forest and count_triangles: without a GPU the CPU and that
    reason; with one, the CPU below the command's GraphPolicyConfig bound (karate: 78 edges) and the reason
    naming it; cpu gives no reason. The bounds themselves: at least the bound is the GPU."""
    import hgpart.device
    import hgpart.policy
    from hgpart.config import GraphPolicyConfig
    from hgpart.policy import auto_graph_device

    karate = nx.karate_club_graph()
    functions = {"cluster": hgpart.cluster, "mst": hgpart.minimum_spanning_forest, "triangles": hgpart.count_triangles}
    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: False)
    for function in functions.values():
        assert function(karate).device_reason == "auto: no usable CUDA GPU: the CPU"
        assert function(karate, device="cpu").device_reason is None
    monkeypatch.setattr(hgpart.policy, "resolve_device", lambda requested, gpu_implemented=False: (
        "cpu" if requested == "cpu" else "gpu", None))
    for command, function in functions.items():
        result = function(karate)
        bound = GraphPolicyConfig().min_edges(command)
        assert result.device == "cpu" and result.device_reason == (
            f"auto: 78 edges, fewer than graph_policy.{command}_min_edges = {bound:,}: the CPU, faster on graphs "
            "this small")
    assert hgpart.list_triangles(karate).shape == (45, 3)
    bounds = GraphPolicyConfig(cluster_min_edges=78, mst_min_edges=79, triangles_min_edges=0)
    assert auto_graph_device("cluster", 78, bounds) == (
        "gpu", "auto: 78 edges, at least graph_policy.cluster_min_edges = 78: the GPU")
    assert auto_graph_device("mst", 78, bounds)[0] == "cpu" and auto_graph_device("triangles", 0, bounds)[0] == "gpu"
    with pytest.raises(ValueError, match="partition"):
        auto_graph_device("partition", 78)


def test_coarsen_takes_scipy_and_networkx():
    grid = nx.grid_2d_graph(20, 20)
    hierarchy = hgpart.coarsen(grid, 2, device="cpu")
    assert hierarchy.levels[0].hypergraph.num_vertices == 400
    assert hierarchy.coarsest.hypergraph.num_vertices < 400
    matrix = nx.to_scipy_sparse_array(grid, format="csr")
    assert hgpart.coarsen(matrix, 2, device="cpu").summary()[0]["vertices"] == 400


def test_cluster_on_networkx_and_scipy_has_networkx_modularity():
    graph = nx.les_miserables_graph()
    result = hgpart.cluster(graph, device="cpu")
    nodes = list(graph.nodes)
    communities = [{nodes[v] for v in np.flatnonzero(result.clusters == c)} for c in range(result.num_clusters)]
    assert result.modularity == pytest.approx(nx.community.modularity(graph, communities, weight="weight"))
    matrix = nx.to_scipy_sparse_array(graph, nodelist=nodes, weight="weight", format="csr")
    np.testing.assert_array_equal(hgpart.cluster(matrix, device="cpu").clusters, result.clusters)
    with pytest.raises(InputError, match="in the config"):
        hgpart.cluster(graph, seed=1, config=hgpart.config.ClusterConfig())


def test_spanning_forest_matches_scipy_and_networkx():
    rng = np.random.default_rng(7)
    graph = nx.gnm_random_graph(60, 150, seed=7)
    for u, v in graph.edges:
        graph[u][v]["weight"] = float(rng.integers(1, 50))
    forest = hgpart.minimum_spanning_forest(graph, device="cpu")
    assert forest.total_weight == pytest.approx(sum(d["weight"] for _, _, d in nx.minimum_spanning_edges(graph, data=True)))
    matrix = nx.to_scipy_sparse_array(graph, format="csr")  # symmetric: (i, j) and (j, i) are one edge
    from_matrix = hgpart.minimum_spanning_forest(matrix, device="cpu")
    assert from_matrix.total_weight == pytest.approx(minimum_spanning_tree(matrix).sum())
    np.testing.assert_array_equal(from_matrix.sources, forest.sources)


def test_triangles_match_networkx():
    graph = nx.gnm_random_graph(80, 400, seed=3)
    counted = hgpart.count_triangles(graph, device="cpu")
    expected = nx.triangles(graph)
    assert counted.count == sum(expected.values()) // 3
    assert counted.per_vertex.tolist() == [expected[v] for v in graph.nodes]
    assert counted.transitivity == pytest.approx(nx.transitivity(graph))
    listed = hgpart.list_triangles(nx.to_scipy_sparse_array(graph, format="csr"), device="cpu")
    cliques = sorted(tuple(sorted(c)) for c in nx.enumerate_all_cliques(graph) if len(c) == 3)
    assert sorted(map(tuple, listed.tolist())) == cliques


def test_doctests():
    import hgpart.api

    for module in (hgpart, hgpart.api):
        failures, tried = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert tried > 0 and failures == 0, module.__name__
