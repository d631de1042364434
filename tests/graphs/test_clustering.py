import json

import numba
import numpy as np
import pytest

from hgpart import Graph
from hgpart.config import ClusterConfig
from hgpart.errors import InputError
from hgpart.graphs.clustering import cluster, host, host_moving
from hgpart.graphs.clustering.common import RESPOND
from hgpart.graphs.modularity import integer_level, modularity, weight_scale
from hgpart.hypergraph import SHORT_SEGMENT
from hgpart.io import read_graph

from ..conftest import DATA, SHARED
from ..helpers import assert_end_to_end
from ..cli.test_cli import assert_one_line_error, run

CLUSTER_KERNELS = {  # kernel: its module in hgpart.graphs.clustering
    **dict.fromkeys(["candidate_gain_kernel", "candidate_choice_kernel", "finish_choice_kernel",
                     "match_kernel", "neighbour_degree_kernel", "centre_kernel", "representative_kernel"],
                    "device_matching"),
    **dict.fromkeys(["link_kernel", "slot_gain_kernel", "slot_choice_kernel", "apply_moves_kernel",
                     "mark_touched_kernel", "inside_weight_kernel", "square_sum_kernel"], "device_moving"),
    **dict.fromkeys(["coarse_key_kernel", "coarse_entry_kernel"], "device_contraction"),
    "first_vertex_kernel": "device",
}
BEST_KNOWN = {"karate.graph": 0.4198, "jazz.graph": 0.4451, "PGPgiantcompo.graph.gz": 0.8861}


def random_graph(seed, n=40, m=90, weighted=True, isolated=3):
    rng = np.random.default_rng(seed)
    sources, targets = rng.integers(0, n - isolated, m), rng.integers(0, n - isolated, m)
    weights = rng.random(m) * 4 + 0.1 if weighted else None
    return Graph.from_edges(n, sources, targets, weights, merge="max")


def networkx_graph(graph):
    nx = pytest.importorskip("networkx")
    nx_graph = nx.Graph()
    nx_graph.add_nodes_from(range(graph.num_vertices))
    sources, targets, weights = graph.edge_list()
    nx_graph.add_weighted_edges_from(zip(sources.tolist(), targets.tolist(), weights.tolist()))
    return nx_graph


def networkx_modularity(graph, clusters):
    from networkx.algorithms.community import modularity as nx_modularity

    groups = {}
    for vertex, cluster_id in enumerate(clusters):
        groups.setdefault(int(cluster_id), set()).add(vertex)
    return nx_modularity(networkx_graph(graph), groups.values())


def louvain_best_of_five(graph):
    from networkx.algorithms.community import louvain_communities
    from networkx.algorithms.community import modularity as nx_modularity

    nx_graph = networkx_graph(graph)
    return max(nx_modularity(nx_graph, louvain_communities(nx_graph, seed=seed)) for seed in range(5))


@pytest.mark.parametrize("seed", range(4))
def test_modularity_equals_networkx(seed):
    graph = random_graph(seed)
    clusters = np.random.default_rng(seed).integers(0, 5, graph.num_vertices)
    assert modularity(graph, clusters) == pytest.approx(networkx_modularity(graph, clusters), abs=1e-12)


def all_partitions(n):
    """Every set partition of 0..n-1 as a list of block ids (restricted growth strings)."""
    if n == 0:
        yield []
        return
    for rest in all_partitions(n - 1):
        for block in range(max(rest, default=-1) + 2):
            yield rest + [block]


@pytest.mark.parametrize("seed", range(6))
def test_clustering_of_tiny_graphs_is_optimal(seed):
    """Brute force over all set partitions (n = 7: 877 of them) finds no better clustering."""
    graph = random_graph(seed, n=7, m=10, weighted=seed % 2 == 1, isolated=seed % 2)
    best = max(modularity(graph, np.array(p)) for p in all_partitions(graph.num_vertices))
    result = cluster(graph)
    assert result.modularity == pytest.approx(best, abs=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_contraction_equals_its_numpy_definition(seed):
    """The parallel contraction against numpy: the coarse entries are the distinct (π(v), π(u)) with π(v) !=
    π(u), rows ascending, weights summed; loops gain the weight inside each coarse vertex; ζ is summed."""
    rng = np.random.default_rng(seed)
    graph = random_graph(seed, n=120, m=400, weighted=False, isolated=5)
    level, _ = integer_level(graph)
    level["loops"] = rng.integers(0, 3, graph.num_vertices).astype(np.int64)
    num_coarse = int(rng.integers(1, 60)) if seed % 2 == 0 else 90
    rest = rng.integers(0, num_coarse, graph.num_vertices - num_coarse) if seed % 2 == 0 else np.zeros(30, np.int64)
    mapping = rng.permutation(np.concatenate([np.arange(num_coarse), rest])).astype(np.int32)
    coarse = host.contract_level(level, mapping, num_coarse)
    if seed % 2:  # one coarse vertex of 31 members: a row longer than the insertion sort takes
        assert np.max(np.diff(coarse["offsets"])) > SHORT_SEGMENT
    rows = np.repeat(np.arange(graph.num_vertices), np.diff(level["offsets"]))
    coarse_rows, coarse_neighbors = mapping[rows], mapping[level["neighbors"]]
    across = coarse_rows != coarse_neighbors
    keys, inverse = np.unique(coarse_rows[across].astype(np.int64) * num_coarse + coarse_neighbors[across],
                              return_inverse=True)
    np.testing.assert_array_equal(coarse["neighbors"], keys % num_coarse)
    np.testing.assert_array_equal(coarse["weights"], np.bincount(inverse, level["weights"][across]).astype(np.int64))
    np.testing.assert_array_equal(coarse["offsets"], np.concatenate([[0], np.cumsum(np.bincount(
        keys // num_coarse, minlength=num_coarse))]))
    inside = (~across) & (rows < level["neighbors"])
    inside_weights = np.bincount(coarse_rows[inside], level["weights"][inside], num_coarse).astype(np.int64)
    np.testing.assert_array_equal(coarse["loops"], np.bincount(mapping, level["loops"], num_coarse).astype(np.int64)
                                  + inside_weights)
    np.testing.assert_array_equal(coarse["zeta"], np.bincount(mapping, level["zeta"], num_coarse).astype(np.int64))


def test_threads_follow_the_level_size_and_the_scratch_budget_not_the_results(monkeypatch):
    """The CPU twin runs a level below SERIAL_LEVEL_BELOW vertices plus entries on one thread, larger ones (here forced
    by ``all_parallel``) on all of numba's threads, and on one where no second thread's scratch rows fit: the
    same clustering each time, and numba gets its thread count back."""
    from hgpart.parallel import all_parallel

    threads = numba.get_num_threads()
    for graph in (random_graph(4, n=150, m=500), read_graph(str(DATA / "lesmis.graph"))):
        level, _ = integer_level(graph)
        with host_moving.threads_for_level(level, 8) as used:
            assert used == 1 and numba.get_num_threads() == 1
        serial = cluster(graph, ClusterConfig(tries=2))
        with all_parallel():
            with host_moving.threads_for_level(level, 8) as used:
                assert used == threads and numba.get_num_threads() == threads
            parallel = cluster(graph, ClusterConfig(tries=2))
            with monkeypatch.context() as patch:
                patch.setattr(host_moving, "SCRATCH_BYTES", 1)
                with host_moving.threads_for_level(level, 8) as used:
                    assert used == 1 and numba.get_num_threads() == 1
                single = cluster(graph, ClusterConfig(tries=2))
        for result in (parallel, single):
            assert np.array_equal(result.clusters, serial.clusters) and result.modularity == serial.modularity
        assert numba.get_num_threads() == threads


def test_local_moving_revisits_movers_and_their_neighbours_only():
    """A mover and its neighbours are touched in the round; a vertex untouched for ACTIVE_ROUNDS rounds is
    not looked at (no move, even where one would gain)."""
    path = Graph.from_edges(5, [0, 1, 2, 3], [1, 2, 3, 4])
    level, _ = integer_level(path)
    last_touched = np.full(5, -1, dtype=np.int32)
    unchanged = np.arange(5, dtype=np.int32)
    host_moving._mark_touched(level["offsets"], level["neighbors"], level["weights"], np.array([2], np.int32), 1,
                              np.array([-1, -1, 4, -1, -1], np.int32), unchanged, unchanged, last_touched, 7,
                              np.empty(5, np.int64))
    assert last_touched.tolist() == [-1, 7, 7, 7, -1]
    clusters = np.arange(5, dtype=np.int32)
    cluster_zeta = level["zeta"].astype(np.int64)
    threads = numba.get_num_threads()  # a row of scratch per thread
    arguments = (level["offsets"], level["neighbors"], level["weights"], level["zeta"], int(level["two_omega"]),
                 clusters, cluster_zeta, True, np.empty(5, np.int32), np.zeros((threads, 5), np.int64),
                 np.empty((threads, 5), np.int32))
    targets = arguments[8]
    assert host_moving._move_round(*arguments, np.full(5, -1, np.int32), -1) > 0  # all active: some move
    everyone = targets.copy()
    assert everyone[0] >= 0  # vertex 0 would move when looked at
    assert host_moving._move_round(*arguments, last_touched, 6) == np.count_nonzero(everyone[1:4] >= 0)
    assert targets[0] == -1 and targets[4] == -1 and np.array_equal(targets[1:4], everyone[1:4])


@pytest.mark.parametrize("seed", range(4))
def test_inside_weight_follows_the_movers_edges(seed):
    """The change _mark_touched returns from the movers' edges alone equals the change of the weight inside
    clusters recounted over every edge, with movers next to movers, moves into and out of shared clusters."""
    rng = np.random.default_rng(seed)
    level, _ = integer_level(random_graph(seed, n=120, m=500))
    n = 120
    clusters = rng.integers(0, 12, n).astype(np.int32)
    previous = np.empty(n, dtype=np.int32)
    moved = np.zeros(n, dtype=np.bool_)
    cluster_zeta = np.zeros(n, dtype=np.int64)
    host_moving._fill_cluster_zeta(clusters, level["zeta"], cluster_zeta)
    before = host_moving._inside(level, clusters)
    squares = int(np.sum(cluster_zeta ** 2))
    targets = np.where(rng.random(n) < 0.4, rng.integers(0, 12, n), -1).astype(np.int32)
    targets[targets == clusters] = -1
    movers = np.empty(n, dtype=np.int32)
    count, squares_change = host_moving._apply_moves(clusters, targets, previous, moved, level["zeta"], cluster_zeta,
                                                     movers)
    change = host_moving._mark_touched(level["offsets"], level["neighbors"], level["weights"], movers, count,
                                       targets, previous, clusters, np.full(n, -1, np.int32), 0,
                                       np.empty(n, np.int64))
    assert count == np.count_nonzero(targets >= 0) > 10 and change != 0
    assert before + change == host_moving._inside(level, clusters)
    assert np.array_equal(cluster_zeta, np.bincount(clusters, level["zeta"], n).astype(np.int64))
    assert squares + squares_change == int(np.sum(cluster_zeta ** 2))


def test_no_vertex_moves_straight_back():
    """A vertex whose best move is back to the cluster it left in the round before stays (its target is
    dropped); any other move is taken; previous and moved then describe this round."""
    clusters = np.array([1, 1, 3, 3], dtype=np.int32)
    previous = np.array([3, 3, 3, 1], dtype=np.int32)  # 0 and 1 came from 3 last round, 3 from 1; 2 stayed
    moved = np.array([True, True, False, True])
    targets = np.array([3, 2, 1, 1], dtype=np.int32)  # 0 and 3 straight back, 1 on to 2, 2 to 1
    cluster_zeta = np.array([0, 2, 0, 2], dtype=np.int64)  # ζ(C) of the clusters before, every ζ(v) 1
    movers = np.empty(4, dtype=np.int32)
    count, squares_change = host_moving._apply_moves(clusters, targets, previous, moved, np.ones(4, dtype=np.int64),
                                                     cluster_zeta, movers)
    assert count == 2 and clusters.tolist() == [1, 2, 1, 3] and targets.tolist() == [-1, 2, 1, -1]
    assert movers[:count].tolist() == [1, 2]
    assert previous.tolist() == [1, 1, 3, 3] and moved.tolist() == [False, True, True, False]
    assert cluster_zeta.tolist() == [0, 2, 1, 1] and squares_change == (4 + 1 + 1) - (4 + 4)


@pytest.mark.parametrize("n, ids", [(0, 1), (1, 1), (7, 3), (500, 40), (500, 500)])
def test_host_compact_equals_the_numpy_definition(n, ids):
    """The host's two-pass compaction against :func:`.common.compact` (numpy): the same ids and count."""
    from hgpart.graphs.clustering import common

    clusters = np.random.default_rng(n + ids).integers(0, ids, n).astype(np.int32)
    ours, count = host.compact(clusters)
    expected, expected_count = common.compact(clusters)
    assert ours.dtype == np.int32 and np.array_equal(ours, expected) and count == expected_count


@pytest.mark.parametrize("seed", range(4))
def test_responses_follow_the_proposals_as_the_respond_rating(seed):
    """Each red vertex accepts what rating its own edges in RESPOND mode (the device's step) finds: the
    proposer of largest merge gain, ties to the smaller id; unit weights for seeds 0 and 1 make ties."""
    level, _ = integer_level(random_graph(seed, n=400, m=1600, weighted=seed >= 2))
    n = level["offsets"].shape[0] - 1
    partner = np.full(n, -1, dtype=np.int32)
    args = (level["offsets"], level["neighbors"], level["weights"], level["two_omega"], level["zeta"])
    for round_index in range(3):
        blue = host.colours(round_index + 17 * seed, n)
        before = partner.copy()
        proposal, response = np.empty(n, np.int32), np.empty(n, np.int32)
        gains = np.empty(n, np.int64)
        pairs = host._match_round(*args, partner, blue, proposal, gains, response, np.empty(n, np.int64))
        rated = np.empty(n, dtype=np.int32)
        host._best_candidates(np.int64(RESPOND), *args, before, proposal, blue, blue, rated, np.empty(n, np.int64))
        assert np.array_equal(response, rated) and pairs == np.count_nonzero(rated >= 0) > 0


def test_contraction_keeps_modularity_and_matching_is_valid():
    """Invariants of the steps: a clustering of the coarse level has the modularity of its projection; pairs
    are symmetric edges of positive merge gain; satellites join centres; local moving never loses."""
    graph = random_graph(5, n=300, m=900)
    level, _ = integer_level(graph)
    partner = host.match_clusters(level, seed=3, depth=0, rounds=8)
    matched = np.flatnonzero(partner >= 0)
    assert matched.size > 100 and np.array_equal(partner[partner[matched]], matched)
    dense = graph.to_sparse()
    zeta, two_omega = level["zeta"], int(level["two_omega"])
    for v in matched:
        u = partner[v]
        weight = int(level["weights"][level["offsets"][v] + np.searchsorted(
            level["neighbors"][level["offsets"][v]:level["offsets"][v + 1]], u)])
        assert dense[v, u] > 0 and two_omega * weight - zeta[v] * zeta[u] > 0
    target = host.satellite_targets(level, partner)
    centre = host.centres(level["offsets"], level["neighbors"], zeta)
    joined = np.flatnonzero(target >= 0)
    assert np.all(partner[joined] < 0) and np.all(centre[joined] == 0) and np.all(centre[target[joined]] == 1)
    mapping, count = host.group_map(partner, target)
    assert count == len(np.unique(mapping)) and count < graph.num_vertices
    coarse = host.contract_level(level, mapping, count)
    assert int(coarse["zeta"].sum()) == two_omega
    rng = np.random.default_rng(0)
    for _ in range(5):
        coarse_clusters = rng.integers(0, 7, count).astype(np.int32)
        assert host.scaled_modularity(coarse, coarse_clusters) == host.scaled_modularity(
            level, coarse_clusters[mapping])
    start = mapping.copy()
    moved, value = host.local_moving(level, start, rounds=16, stale_rounds=3)
    assert value == host.scaled_modularity(level, moved) >= host.scaled_modularity(level, start)
    assert modularity(graph, moved) == pytest.approx(value / two_omega**2, abs=1e-6)  # weights scaled by 2^29 / Ω


@pytest.mark.parametrize("name", ["karate.graph", "lesmis.graph"])
def test_clustering_beats_louvain_on_small_graphs(name):
    graph = read_graph(str(DATA / name))
    result = cluster(graph)
    assert result.modularity == pytest.approx(networkx_modularity(graph, result.clusters), abs=1e-12)
    assert result.modularity >= louvain_best_of_five(graph) - 0.005
    if name in BEST_KNOWN:
        assert result.modularity >= BEST_KNOWN[name] - 0.002


SHARED_GRAPHS = ["karate.graph", "jazz.graph", "PGPgiantcompo.graph.gz", "polblogs.graph.gz", "celegans_metabolic.graph",
                 "power.graph", "lesmis.graph", "netscience.mtx"]


@pytest.mark.parametrize("name", SHARED_GRAPHS)
def test_clustering_quality_on_the_shared_graphs(name):
    """The issue's targets: >= networkx Louvain (best of 5) - 0.005; within 0.002 of the best known."""
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    graph = read_graph(str(path), merge="max")
    result = cluster(graph)
    assert result.modularity == pytest.approx(networkx_modularity(graph, result.clusters), abs=1e-9)
    assert result.modularity >= louvain_best_of_five(graph) - 0.005
    if name in BEST_KNOWN:
        assert result.modularity >= BEST_KNOWN[name] - 0.002


def test_clustering_is_deterministic_and_handles_edge_cases():
    graph = random_graph(1, n=80, m=200)
    first, second = cluster(graph, ClusterConfig(seed=4)), cluster(graph, ClusterConfig(seed=4))
    assert np.array_equal(first.clusters, second.clusters)
    isolated = np.flatnonzero(graph.degrees() == 0)
    assert len(set(first.clusters[isolated].tolist())) == len(isolated)  # each alone
    assert first.clusters.max() + 1 == first.num_clusters and first.clusters[0] == 0
    empty = Graph.from_edges(5, [], [])
    assert cluster(empty).clusters.tolist() == [0, 1, 2, 3, 4] and cluster(empty).modularity == 0.0
    single = Graph.from_edges(2, [0], [1])
    assert cluster(single).clusters.tolist() == [0, 0]


@pytest.mark.parametrize("descent", [True, False])
def test_the_descent_moves_on_every_level_or_on_the_input_alone(monkeypatch, descent):
    """descent=False: after agglomerating (without moves), local moving refines the input level only, the best
    level's clusters projected straight down; descent=True refines every level from the best one down."""
    graph = read_graph(str(DATA / "karate.graph"))
    moved_levels = []
    original = host.local_moving

    def recording(level, clusters, *args):
        moved_levels.append(int(level["offsets"].shape[0]) - 1)
        return original(level, clusters, *args)

    monkeypatch.setattr(host, "local_moving", recording)
    config = ClusterConfig(move_while_agglomerating=False, cycles=1, tries=1, ensemble_rounds=0, descent=descent)
    result = cluster(graph, config)
    assert result.modularity == pytest.approx(networkx_modularity(graph, result.clusters), abs=1e-9)
    if descent:
        assert len(moved_levels) > 1 and moved_levels[-1] == graph.num_vertices
        assert moved_levels == sorted(moved_levels)  # from the coarse best level down to the input
    else:
        assert moved_levels == [graph.num_vertices]


def test_cli_cluster(tmp_path):
    output = tmp_path / "karate.clusters"
    result = run("cluster", DATA / "karate.graph", "-o", output, "--json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    clusters = np.loadtxt(output, dtype=np.int64)
    graph = read_graph(str(DATA / "karate.graph"))
    assert summary["modularity"] == pytest.approx(networkx_modularity(graph, clusters), abs=1e-12)
    assert summary["clusters"] == clusters.max() + 1 and summary["device"] == "cpu"
    piped = run("cluster", DATA / "karate.graph", "-o", "-", "-q")
    assert piped.exit_code == 0 and np.array_equal(np.array(piped.stdout.split(), dtype=np.int64), clusters)
    assert piped.stderr == ""
    negative = tmp_path / "negative.txt"
    negative.write_text("0 1 2\n1 2 -1\n")
    target = tmp_path / "never.clusters"
    assert_one_line_error(run("cluster", negative, "-o", target), "non-negative")
    assert not target.exists()
    broken = tmp_path / "broken.graph"
    broken.write_text("3 2\n2 3\n1\n")
    assert_one_line_error(run("cluster", broken), "broken.graph:")
    assert_one_line_error(run("cluster", DATA / "karate.graph", "-o", "-", "--json"), "--json")


def test_bench_cluster_json(tmp_path):
    pytest.importorskip("networkx")
    result = run("bench", "cluster", DATA / "karate.graph", "--louvain-seeds", "1", "--json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["instances"]
    assert row["cpu modularity"] >= 0.41 and row["best known"] == 0.4198 and row["louvain modularity"] > 0.3
    assert_end_to_end(row, "cpu")
    assert row["cpu phases"]["level"] > 0
    generated = run("bench", "cluster", "--rmat", "256", "--rmat", "512", "--louvain-seeds", "0", "--json",
                    "--device", "cpu")  # a sweep of sizes: one row each
    assert generated.exit_code == 0, generated.output
    rows = json.loads(generated.stdout)["instances"]
    assert [row["instance"] for row in rows] == ["rmat 256", "rmat 512"]
    assert 1000 < rows[0]["edges"] < rows[1]["edges"]
    for row in rows:
        assert_end_to_end(row, "cpu")  # read from a Matrix Market file of the generated graph


@pytest.mark.parametrize("name", CLUSTER_KERNELS)
def test_clustering_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")
    import importlib

    from numba import boolean, int8, int32, int64, uint8

    i32, i64, i8, u8 = int32[::1], int64[::1], int8[::1], uint8[::1]
    edge = (i32, i32, i32, int64, i64, i32, i32, int64, i8)  # rows, neighbors, weights (int32), 2Ω, ζ, partner, ...
    signatures = {
        "candidate_gain_kernel": (int64,) + edge + (i64,),
        "candidate_choice_kernel": (int64,) + edge + (i64, i32),
        "finish_choice_kernel": (i32,),
        "match_kernel": (i32, i32, i32, i64, i64, i64, int64),
        "neighbour_degree_kernel": (i32, i32, i64, i64),
        "centre_kernel": (i64, i64, i8),
        "representative_kernel": (i32, i32, i32, i32),
        "link_kernel": (i32, i32, i32, i64, i32, boolean, i32, int64, i64, i64),
        "slot_gain_kernel": (i32, i64, i64, int64, i32, i64, i64, i64),
        "slot_choice_kernel": (i32, i64, i64, int64, i32, i64, i64, i64, i32),
        "coarse_key_kernel": (i32, i32, i64, i32, int64, int64, i64, i64),
        "coarse_entry_kernel": (i64, i64, i64, i64, int64, int64, i32, i32, i64),
        "apply_moves_kernel": (i32, i64, i64, i64, i32, i64, i32, u8, i32, int64, i64, int64),
        "mark_touched_kernel": (i32, i32, i64, u8, i32, i32, i32, int64, i64, int64),
        "inside_weight_kernel": (i32, i32, i64, i32, i64),
        "square_sum_kernel": (i64, i64, int64),
        "first_vertex_kernel": (i32, i32),
    }
    module = importlib.import_module(f"hgpart.graphs.clustering.{CLUSTER_KERNELS[name]}")
    ptx, _ = cuda.compile_ptx(getattr(module, name).py_func, signatures[name], cc=(9, 0))
    assert ".entry" in ptx


def gpu_test_graphs():
    from hgpart.cuda.arrays import SIMULATED

    graphs = [("weighted", random_graph(2, n=40, m=80)),  # float weights, isolated vertices
              ("unweighted", random_graph(3, n=30, m=60, weighted=False))]  # the level made on the device
    if SIMULATED:
        return graphs
    graphs.append(("karate", read_graph(str(DATA / "karate.graph"))))
    from hgpart import generate

    num_vertices, sources, targets, _ = generate.rmat(1 << 16, seed=1, edge_factor=8)
    graphs.append(("rmat 65536", Graph.from_edges(num_vertices, sources, targets, merge="max")))
    graphs += [(name, read_graph(str(SHARED / name), merge="max")) for name in SHARED_GRAPHS
               if (SHARED / name).exists()]
    return graphs


@pytest.mark.gpu
def test_gpu_clustering_equals_the_cpu_twin(monkeypatch):
    """The whole GPU clustering (or the simulator's run of its kernels) equals the njit twin's, vertex by vertex."""
    from hgpart.cuda.arrays import SIMULATED
    from hgpart.device import gpu_available

    if not SIMULATED and not gpu_available():
        pytest.skip("no GPU")
    from hgpart.graphs.clustering import device, device_contraction

    config = ClusterConfig(tries=2, ensemble_rounds=1, cycles=2, move_rounds=8) if SIMULATED else ClusterConfig()
    for name, graph in gpu_test_graphs():
        host_level, host_scale = host.graph_level(graph)
        device_level, device_scale = device.graph_level(graph)
        assert device_scale == host_scale and int(device_level["two_omega"]) == int(host_level["two_omega"]), name
        for key in ("offsets", "neighbors", "weights", "loops", "zeta"):
            np.testing.assert_array_equal(device.to_host(device_level[key]), host_level[key])
        # local moving alone; the GPU updates the inside weight from the movers' edges, the twin recounts it
        host_best, host_value = host.local_moving(host_level, host.identity(graph.num_vertices), 8, 2)
        device_best, device_value = device.local_moving(
            device_level, device.identity(graph.num_vertices), 8, 2)
        assert device_value == host_value == host.scaled_modularity(host_level, host_best), name
        np.testing.assert_array_equal(device.to_host(device_best), host_best)
        mapping, num_coarse = host.compact(host_best)
        host_coarse = host.contract_level(host_level, mapping, num_coarse)
        for packed_key_bits in (device_contraction.PACKED_KEY_BITS, 0):  # weights in the sort keys, then apart
            monkeypatch.setattr(device_contraction, "PACKED_KEY_BITS", packed_key_bits)
            device_coarse = device.contract_level(device_level, device.to_device(mapping),
                                                             num_coarse)
            for key in ("offsets", "neighbors", "weights", "loops", "zeta"):  # both canonical: rows sorted
                np.testing.assert_array_equal(device.to_host(device_coarse[key]), host_coarse[key],
                                              err_msg=f"{key}, {packed_key_bits}")
        monkeypatch.undo()
        cpu = cluster(graph, config, device="cpu")
        # every level on the device, then the coarser levels of at most so many vertices plus edges on the host
        # (the policy's bound); the simulator runs the second alone, with level 0 and some coarse levels on the
        # device (same kernels)
        for host_level_max_size in (40,) if SIMULATED else (0, None):
            gpu = cluster(graph, config, device="gpu", host_level_max_size=host_level_max_size)
            print(f"{name}, host levels up to size {host_level_max_size}: modularity {gpu.modularity:.4f}, "
                  f"{gpu.num_clusters} clusters, gpu {gpu.seconds['total']:.3f} s, cpu {cpu.seconds['total']:.3f} s")
            assert np.array_equal(gpu.clusters, cpu.clusters), (name, host_level_max_size)
            assert gpu.modularity == cpu.modularity
    with pytest.raises(InputError, match="below 2\\^30"):  # a table slot holds a vertex's links in 32 bits
        device.local_moving(dict(device_level, two_omega=1 << 31), device_best, 1, 1)
    with pytest.raises(InputError, match="below 2\\^30"):  # the matching reads the weights as int32
        device.match_clusters(dict(device_level, two_omega=1 << 31), 0, 0, 1)



@pytest.mark.parametrize("weights", ["none", "integer", "float", "large"])
def test_integer_level_is_the_rounded_weights_and_their_row_sums(weights):
    """integer_level against its definition in numpy: whole weights kept while 2Ω < 2^30, otherwise
    rint(w * 2^29 / 2Ω) with positive weights at least 1; ζ the row sums, 2Ω their total."""
    generator = np.random.default_rng(11)
    sources, targets = generator.integers(0, 200, 900), generator.integers(0, 200, 900)
    chosen = {"none": None, "integer": generator.integers(0, 6, 900).astype(float),
              "float": generator.random(900) * 1e-3, "large": generator.integers(1, 10, 900) * 2.0**28}[weights]
    graph = Graph.from_edges(200, sources, targets, chosen, merge="max")
    level, scale = integer_level(graph)
    edge_weights = graph.edge_weights
    whole = edge_weights.sum() < 2**30 and np.all(edge_weights == np.rint(edge_weights))
    assert (scale == 1.0) == whole
    assert weight_scale(graph) == (scale, weights == "none")  # unit: every weight 1 (the GPU builds that level)
    expected = np.rint(edge_weights * scale).astype(np.int64)
    expected[(expected == 0) & (edge_weights > 0)] = 1
    np.testing.assert_array_equal(level["weights"], expected)
    np.testing.assert_array_equal(level["zeta"], np.add.reduceat(expected, graph.offsets[:-1])
                                  * (np.diff(graph.offsets) > 0))
    assert level["two_omega"] == expected.sum()
