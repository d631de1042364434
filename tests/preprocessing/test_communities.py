"""Community detection on the star expansion: the expansion against scipy's bipartite incidence and exact
weights, the communities' modularity against networkx, coarsening kept inside them, the GPU twin, the CLI."""


import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

from hgpart import Hypergraph, generate
from hgpart.coarsening import coarsen
from hgpart.config import CoarseningConfig, CommunityConfig, choose_communities, make_config
from hgpart.io import read_hypergraph
from hgpart import multilevel
from hgpart.multilevel import partition
from hgpart.preprocessing.common import DEGREE, NON_UNIFORM, UNIFORM, weighting_code
from hgpart.preprocessing.communities import detect_communities, is_mesh_graph
from hgpart.preprocessing.host import star_expansion

from ..conftest import DATA


def _random_hypergraph(seed: int, n: int = 60, m: int = 90) -> Hypergraph:
    rng = np.random.default_rng(seed)
    nets = [rng.choice(n, size=int(rng.integers(1, 9)), replace=False) for _ in range(m)]
    return Hypergraph.from_pin_lists(nets, n, net_weights=rng.integers(1, 5, m))


def _exact_weights(hypergraph: Hypergraph, code: int, max_net_size: int) -> sp.csr_matrix:
    """The star expansion with exact (float) weights, built from the incidence matrix by scipy."""
    incidence = hypergraph.to_sparse().tocoo()  # nets x vertices
    nets, vertices = incidence.row, incidence.col
    sizes = hypergraph.net_sizes()[nets].astype(float)
    degrees = hypergraph.vertex_degrees()[vertices].astype(float)
    weight = hypergraph.net_weights[nets].astype(float)
    if code == NON_UNIFORM:
        weight = weight / sizes
    elif code == DEGREE:
        weight = weight * degrees / sizes
    keep = (sizes >= 2) & (sizes <= max_net_size)
    n, m = hypergraph.num_vertices, hypergraph.num_nets
    rows = np.concatenate([vertices[keep], n + nets[keep]])
    cols = np.concatenate([n + nets[keep], vertices[keep]])
    return sp.csr_matrix((np.concatenate([weight[keep]] * 2), (rows, cols)), shape=(n + m, n + m))


@pytest.mark.parametrize("code", [UNIFORM, NON_UNIFORM, DEGREE])
@pytest.mark.parametrize("seed", [0, 1])
def test_star_expansion_is_the_bipartite_incidence_with_scaled_weights(code, seed):
    hypergraph = _random_hypergraph(seed)
    level = star_expansion(hypergraph, code, max_net_size=6)
    exact = _exact_weights(hypergraph, code, 6)
    ours = sp.csr_matrix((level["weights"], level["neighbors"], level["offsets"]), shape=exact.shape)
    np.testing.assert_array_equal(ours.indptr, exact.indptr)
    np.testing.assert_array_equal(ours.indices, exact.indices)  # rows sorted, the same entries
    scale = 2.0 ** np.round(np.log2((ours.data / exact.data).max()))  # 2^shift
    assert scale >= 1 and np.all(np.abs(ours.data - exact.data * scale) <= 1.0)  # floor, at least 1
    assert (ours != ours.T).nnz == 0
    np.testing.assert_array_equal(level["zeta"], np.asarray(ours.sum(axis=1)).ravel())
    assert level["two_omega"] == ours.sum() <= 2**29 + 2 * ours.nnz


def test_hybrid_weights_follow_the_density():
    assert weighting_code("hybrid", 100, 74, 0.75) == DEGREE
    assert weighting_code("hybrid", 100, 75, 0.75) == UNIFORM
    assert weighting_code("non-uniform", 100, 10, 0.75) == NON_UNIFORM


def test_communities_have_the_modularity_networkx_computes():
    hypergraph = generate.grid(3000, seed=1)
    config = CommunityConfig(edge_weights="non-uniform")
    found = detect_communities(hypergraph, config)
    assert found.labels.shape == (hypergraph.num_vertices,) and found.labels.dtype == np.int32
    assert sorted(set(found.labels.tolist())) == list(range(found.count))
    assert 10 < found.count < hypergraph.num_vertices // 20
    # networkx's modularity of the same clustering of the exact star expansion: the nets go with the
    # community most of their weight links them to, as a modularity clustering places them
    exact = _exact_weights(hypergraph, NON_UNIFORM, config.max_net_size)
    graph = nx.from_scipy_sparse_array(exact)
    net_labels = np.full(hypergraph.num_nets, -1)
    for e in range(hypergraph.num_nets):
        pins = hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]]
        net_labels[e] = np.bincount(found.labels[pins]).argmax()
    labels = np.concatenate([found.labels, net_labels])
    groups = [set(np.flatnonzero(labels == c).tolist()) for c in range(found.count)]
    ours = nx.community.modularity(graph, groups, weight="weight")
    assert ours == pytest.approx(found.modularity, abs=0.01)
    louvain = nx.community.modularity(graph, nx.community.louvain_communities(graph, seed=0), weight="weight")
    assert ours >= louvain - 0.02


def test_coarsening_never_merges_across_communities():
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    hierarchy = coarsen(hypergraph, 8, CoarseningConfig(), detect_communities=CommunityConfig())
    communities = hierarchy.communities.labels
    assert 1 < hierarchy.communities.count < hypergraph.num_vertices
    mapping = np.arange(hypergraph.num_vertices)
    for level in hierarchy.levels:
        mapping = level.cluster[mapping]
    per_cluster = np.full(mapping.max() + 1, -1)
    np.maximum.at(per_cluster, mapping, communities)
    np.testing.assert_array_equal(per_cluster[mapping], communities)
    plain = coarsen(hypergraph, 8, CoarseningConfig())
    assert plain.communities is None
    assert coarsen(hypergraph, 2, CoarseningConfig(), detect_communities=CommunityConfig()).communities is not None
    assert coarsen(hypergraph, 2, CoarseningConfig(), detect_communities=CommunityConfig(min_k=4)).communities is None
    assert not np.array_equal(plain.levels[1].hypergraph.vertex_weights, hierarchy.levels[1].hypergraph.vertex_weights)


def test_a_partition_seeds_its_communities(monkeypatch):
    """The partition's seed salts the clustering: the same seed finds the same communities, another seed others
    (and so another hierarchy), and a partition with seed s coarsens inside the communities of seed s."""
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    by_seed = {seed: detect_communities(hypergraph, seed=seed) for seed in (0, 1, 2)}
    np.testing.assert_array_equal(detect_communities(hypergraph, seed=1).labels, by_seed[1].labels)
    np.testing.assert_array_equal(detect_communities(hypergraph).labels, by_seed[0].labels)  # config's seed 0
    assert not np.array_equal(by_seed[0].labels, by_seed[1].labels)
    assert not np.array_equal(by_seed[1].labels, by_seed[2].labels)
    seen = []
    original = multilevel.detect_communities

    def recording(*args, **kwargs):
        found = original(*args, **kwargs)
        seen.append(found.labels)
        return found

    monkeypatch.setattr(multilevel, "detect_communities", recording)
    result = partition(hypergraph, 4, seed=2, device="cpu")
    np.testing.assert_array_equal(seen[0], by_seed[2].labels)
    assert result.communities == by_seed[2].count and result.metrics.balanced


def test_partition_reports_its_communities_and_stays_balanced():
    hypergraph = read_hypergraph(str(DATA / "ibm01.hgr"))
    with_communities = partition(hypergraph, 4, device="cpu")
    without = partition(hypergraph, 4, config=make_config(4, communities=CommunityConfig(detect=False)), device="cpu")
    assert with_communities.communities == detect_communities(hypergraph).count
    assert with_communities.seconds["communities"] > 0
    assert without.communities is None and without.seconds["communities"] == 0
    assert with_communities.metrics.balanced and without.metrics.balanced
    assert not np.array_equal(with_communities.partition, without.partition)
    again = partition(hypergraph, 4, device="cpu")
    np.testing.assert_array_equal(again.partition, with_communities.partition)
    assert partition(hypergraph, 2, device="cpu").communities == with_communities.communities  # min_k = 2
    above = make_config(2, communities=CommunityConfig(min_k=4))
    assert partition(hypergraph, config=above, device="cpu").communities is None


def _mesh_by_networkx(graph: nx.Graph) -> bool:
    """Mt-KaHyPar's mesh test by its definition, on networkx's degrees."""
    degrees = np.array([d for _, d in graph.degree()], dtype=float)
    mean = degrees.mean()
    return bool(np.sqrt(((degrees - mean) ** 2).mean()) <= mean / 2
                and sum(d > 4 * mean for d in degrees) <= graph.number_of_nodes() // 1000)


@pytest.mark.parametrize("graph, mesh", [
    (nx.grid_2d_graph(30, 40), True),
    (nx.triangular_lattice_graph(20, 30), True),
    (nx.star_graph(50), False),
    (nx.barabasi_albert_graph(2000, 3, seed=1), False),
    (nx.random_regular_graph(4, 3000, seed=2), True),
])
def test_mesh_graphs_are_found_as_mt_kahypar_finds_them(graph, mesh):
    graph = nx.convert_node_labels_to_integers(graph)
    hypergraph = Hypergraph.from_pin_lists([[u, v] for u, v in graph.edges()], graph.number_of_nodes())
    assert is_mesh_graph(hypergraph) == _mesh_by_networkx(graph) == mesh


def test_no_communities_on_mesh_graphs_unless_asked():
    """A grid graph is a mesh graph: partition and coarsen detect no communities there by default, but do when
    asked; a net of three pins makes it a hypergraph, with communities again."""
    grid = nx.convert_node_labels_to_integers(nx.grid_2d_graph(40, 40))
    edges = [[u, v] for u, v in grid.edges()]
    mesh = Hypergraph.from_pin_lists(edges, 1600)
    assert partition(mesh, 4, device="cpu").communities is None
    assert coarsen(mesh, 4, CoarseningConfig(), detect_communities=CommunityConfig()).communities is None
    asked = make_config(4, communities=choose_communities(CommunityConfig(), True))
    assert partition(mesh, config=asked, device="cpu").communities > 1
    not_a_graph = Hypergraph.from_pin_lists(edges + [[0, 1, 2]], 1600)
    assert not is_mesh_graph(not_a_graph) and partition(not_a_graph, 4, device="cpu").communities > 1


def test_isolated_vertices_and_single_pin_nets():
    hypergraph = Hypergraph.from_pin_lists([[0, 1], [1, 2], [3], [4, 5]], 7)  # net 2 has one pin: left out
    found = detect_communities(hypergraph)
    assert found.labels.shape == (7,)
    assert found.labels[4] == found.labels[5]
    assert len({found.labels[0], found.labels[3], found.labels[4], found.labels[6]}) == 4


@pytest.mark.gpu
def test_gpu_communities_equal_the_cpu_twin():
    """The device star expansion and clustering against the host's, on the device hypergraph. Runs on a GPU
    and in CI's simulator run (tests/coarsening/test_gpu.py), which leaves out the clustering: its kernels
    have their own simulator test (tests/graphs/test_clustering.py), and clustering in the simulator is slow."""
    from hgpart.cuda.arrays import SIMULATED, to_host
    from hgpart.preprocessing.device import star_expansion as device_star_expansion

    for seed, code in ((0, UNIFORM), (1, DEGREE), (2, NON_UNIFORM)):
        hypergraph = _random_hypergraph(seed, 80, 100)
        host = star_expansion(hypergraph, code, 6)
        device = device_star_expansion(hypergraph.to_device(), code, 6)
        for key in ("offsets", "neighbors", "weights", "zeta"):
            np.testing.assert_array_equal(to_host(device[key]), host[key], err_msg=key)
        assert int(device["two_omega"]) == int(host["two_omega"])
    if SIMULATED:
        return
    hypergraph = _random_hypergraph(3, 30, 40)
    cpu = detect_communities(hypergraph, CommunityConfig(), "cpu")
    gpu = detect_communities(hypergraph.to_device(), CommunityConfig(), "gpu")
    np.testing.assert_array_equal(to_host(gpu.labels), cpu.labels)
    assert gpu.count == cpu.count and gpu.modularity == cpu.modularity


@pytest.mark.parametrize("name", ["row_sizes_kernel", "fill_kernel"])
def test_star_expansion_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")
    from numba import int32, int64

    from hgpart.preprocessing import device

    i32, i64 = int32[::1], int64[::1]
    hypergraph = (i64, i32, i64, i32, i64)  # net offsets, pins, vertex offsets, incident nets, net weights
    signatures = {"row_sizes_kernel": (i64, i64, i32, i64, int64, int64, i64, i64),
                  "fill_kernel": hypergraph + (int64, int64, int64, i64, i32, i64, i64)}
    ptx, _ = cuda.compile_ptx(getattr(device, name).py_func, signatures[name], cc=(9, 0))
    assert ".entry" in ptx
