import itertools
import json

import numpy as np
import pytest

from hgpart import Graph, generate
from hgpart.config import TriangleConfig
from hgpart.graphs.triangles import Triangles, count_triangles, list_triangles
from hgpart.io import read_graph

from ..conftest import DATA, SHARED
from ..cli.test_cli import assert_one_line_error, run
from ..helpers import assert_end_to_end

SNAP = ["CA-GrQc.txt.gz", "as20000102.txt.gz", "email-Eu-core.csv.gz", "facebook_combined.txt.gz",
        "p2p-Gnutella05.txt.gz", "wiki-Vote.txt.gz"]
nx = pytest.importorskip("networkx")


def networkx_graph(graph):
    nx_graph = nx.Graph()
    nx_graph.add_nodes_from(range(graph.num_vertices))
    sources, targets, _ = graph.edge_list()
    nx_graph.add_edges_from(zip(sources.tolist(), targets.tolist()))
    return nx_graph


def check_against_networkx(graph, result, triangles=None):
    nx_graph = networkx_graph(graph)
    per_vertex = nx.triangles(nx_graph)
    assert result.count == sum(per_vertex.values()) // 3
    assert result.per_vertex.tolist() == [per_vertex[v] for v in range(graph.num_vertices)]
    assert result.transitivity == pytest.approx(nx.transitivity(nx_graph), abs=1e-12)
    if graph.num_edges <= 20_000:  # networkx recounts per call: its slow parts only on small graphs
        assert result.average_clustering == pytest.approx(nx.average_clustering(nx_graph), abs=1e-12)
        clustering = nx.clustering(nx_graph)
        assert np.allclose(result.clustering, [clustering[v] for v in range(graph.num_vertices)], atol=1e-12)
    if triangles is not None:
        assert triangles.shape == (result.count, 3)
        triangles = triangles.astype(np.int64)
        assert np.all(triangles[:, 0] < triangles[:, 1]) and np.all(triangles[:, 1] < triangles[:, 2])
        n = np.int64(graph.num_vertices)
        codes = (triangles[:, 0] * n + triangles[:, 1]) * n + triangles[:, 2]
        assert np.unique(codes).shape[0] == result.count  # no duplicates
        matrix = graph.to_sparse().tocsr()
        for first, second in ((0, 1), (1, 2), (0, 2)):  # every listed triple is a triangle
            assert np.all(np.asarray(matrix[triangles[:, first], triangles[:, second]]).ravel() != 0)


def random_graph(seed, n=60, m=400):
    rng = np.random.default_rng(seed)
    return Graph.from_edges(n, rng.integers(0, n - 5, m), rng.integers(0, n - 5, m))


@pytest.mark.parametrize("seed", range(4))
def test_counts_and_lists_equal_networkx_and_brute_force(seed):
    graph = random_graph(seed)
    result = count_triangles(graph)
    triangles = list_triangles(graph)
    check_against_networkx(graph, result, triangles)
    dense = graph.to_sparse().toarray() > 0
    brute = [t for t in itertools.combinations(range(graph.num_vertices), 3)
             if dense[t[0], t[1]] and dense[t[1], t[2]] and dense[t[0], t[2]]]
    assert sorted(map(tuple, triangles.tolist())) == brute


def test_listing_in_chunks_is_the_whole_list():
    graph = random_graph(7, n=80, m=900)
    prepared = Triangles(graph)
    prepared.count()
    small = np.concatenate(list(prepared.chunks(max_triangles=5)))
    assert np.array_equal(small, list_triangles(graph))


@pytest.mark.parametrize("name", SNAP)
def test_snap_graphs(name):
    path = SHARED / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    graph = read_graph(str(path), merge="max")
    prepared = Triangles(graph)
    result = prepared.count()
    check_against_networkx(graph, result, np.concatenate(list(prepared.chunks())) if result.count else None)


def test_edge_cases():
    assert count_triangles(Graph.from_edges(3, [], [])).count == 0
    assert list_triangles(Graph.from_edges(3, [0], [1])).shape == (0, 3)
    clique = Graph.from_edges(5, *zip(*itertools.combinations(range(5), 2)))
    result = count_triangles(clique)
    assert result.count == 10 and result.per_vertex.tolist() == [6] * 5 and result.transitivity == 1.0


def test_cli_triangles(tmp_path):
    edges = tmp_path / "graph.txt"
    edges.write_text("# directed, duplicated, a self loop\n0 1\n1 0\n1 2\n2 0\n2 2\n2 3\n3 1\n0 1\n")
    listed, per_vertex = tmp_path / "list.txt", tmp_path / "per_vertex.txt"
    result = run("triangles", edges, "--list", listed, "--per-vertex", per_vertex, "--json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["triangles"] == 2 and summary["edges"] == 5
    assert listed.read_text() == "0 1 2\n1 2 3\n"
    assert per_vertex.read_text().splitlines()[1] == f"2 {2 * 2 / (3 * 2)!r}"
    piped = run("triangles", DATA / "karate.graph", "--list", "-", "-q")
    assert piped.exit_code == 0 and len(piped.stdout.splitlines()) == 45 and piped.stderr == ""
    assert_one_line_error(run("triangles", edges, "--list", "-", "--json"), "stdout")
    broken = tmp_path / "broken.txt"
    broken.write_text("0 1\n1 x\n")
    assert_one_line_error(run("triangles", broken, "--list", tmp_path / "never.txt"), "broken.txt:2:")
    assert not (tmp_path / "never.txt").exists()


def test_bench_triangles_json():
    result = run("bench", "triangles", DATA / "karate.graph", "--repeat", "1", "--json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["instances"]
    assert row["triangles"] == 45 and 0 < row["cpu count s"] < row["cpu resident s"]
    assert_end_to_end(row, "cpu")


@pytest.mark.parametrize("name", ["small_kernel", "large_kernel", "orient_kernel"])
def test_triangle_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")
    from numba import int32, int64

    from hgpart.graphs.triangles import device, device_count

    plan = (int64[::1], int32[::1], int64[::1], int32[::1], int32[::1], int64[::1], int32[::1], int64[::1],
            int32[::1], int64)
    outputs = (int64[::1], int64[::1], int64[::1], int64)
    signatures = {"small_kernel": plan + outputs + (int32[:, ::1], int64),
                  "large_kernel": plan + outputs + (int64, int32[:, ::1], int64),
                  "orient_kernel": plan[1:7] + (int64[::1], int64[::1], int64[::1])}
    ptx, _ = cuda.compile_ptx(getattr(device if name == "orient_kernel" else device_count, name).py_func, signatures[name], cc=(9, 0))
    assert "shfl.sync" in ptx or "vote.sync" in ptx  # warp scans, sums and ballots


@pytest.mark.parametrize("small_out,piece", [(1, 1), (2, 3), (4, 8)])
def test_tasks_in_pieces_find_the_same_triangles(small_out, piece):
    """Out-neighbourhoods hashed in pieces (and vertices sent to the block kernel's tasks) change the order
    of the list, not the triangles."""
    graph = random_graph(11, n=70, m=1200)
    expected = Triangles(graph).count()
    prepared = Triangles(graph, config=TriangleConfig(small_out=small_out, piece=piece))
    result = prepared.count()
    assert result.count == expected.count and np.array_equal(result.per_vertex, expected.per_vertex)
    listed = np.concatenate(list(prepared.chunks()))
    assert sorted(map(tuple, listed.tolist())) == sorted(map(tuple, list_triangles(graph).tolist()))
    assert prepared.plan.large_groups.shape[0] > 0
    with pytest.raises(ValueError):
        TriangleConfig(small_out=4, piece=2)


def gpu_test_graphs(simulated: bool):
    """(name, graph) pairs the GPU's counts are checked on: two small graphs in the simulator, an R-MAT and the
    SNAP graphs of ../shared/data (when there) on a GPU."""
    graphs = [("karate", read_graph(str(DATA / "karate.graph"))), ("random", random_graph(3))]
    if simulated:
        return graphs
    num_vertices, sources, targets, _ = generate.rmat(1 << 16, seed=1, edge_factor=16)
    graphs.append(("rmat 65,536", Graph.from_edges(num_vertices, sources, targets, merge="max")))
    graphs += [(name, read_graph(str(SHARED / name), merge="max")) for name in SNAP if (SHARED / name).exists()]
    return graphs


@pytest.mark.gpu
def test_gpu_triangles_equal_the_cpu_twin():
    from hgpart.cuda.arrays import SIMULATED, to_host
    from hgpart.device import gpu_available

    if not SIMULATED and not gpu_available():
        pytest.skip("no GPU")
    # the default, and smaller tasks: both kernels run, and out-neighbourhoods are hashed in pieces
    configs = [TriangleConfig(), TriangleConfig(small_out=8, piece=32), TriangleConfig(small_out=2, piece=3)]
    for name, graph in gpu_test_graphs(SIMULATED):
        for config in configs if graph.num_edges <= (100 if SIMULATED else 100_000) else configs[:2]:
            cpu, gpu = Triangles(graph, "cpu", config), Triangles(graph, "gpu", config)
            cpu_result, gpu_result = cpu.count(), gpu.count()
            print(f"{name} {config}: {gpu_result.count} triangles, gpu {gpu_result.seconds['count']:.4f} s, "
                  f"cpu {cpu_result.seconds['count']:.4f} s")
            for field in ("out_offsets", "out_neighbors"):  # the oriented graph, each row sorted
                np.testing.assert_array_equal(to_host(getattr(gpu.plan, field)), getattr(cpu.plan, field),
                                              err_msg=f"{name} {field}")
            assert gpu_result.count == cpu_result.count, name
            np.testing.assert_array_equal(gpu_result.per_vertex, cpu_result.per_vertex, err_msg=name)
            empty = [np.zeros((0, 3), np.int32)]
            np.testing.assert_array_equal(np.concatenate(list(gpu.chunks(1 << 20)) or empty),
                                          np.concatenate(list(cpu.chunks(1 << 20)) or empty), err_msg=name)


def test_the_gpu_tests_graphs_are_built():
    """The GPU test's inputs are made here too, where no GPU runs it, so that a change to what it calls shows."""
    names = [name for name, graph in gpu_test_graphs(False) if graph.num_edges > 0]
    assert names[:3] == ["karate", "random", "rmat 65,536"]


def test_run_bounds_finds_the_members_within_the_bounds():
    """The run of a sorted row within [low, high], by its two searches or by the short cut that takes the
    row's end when its last member is within ``high``: the members numpy selects, for bounds below, inside,
    across and above the row, and for empty rows."""
    from hgpart.graphs.triangles.host import run_bounds

    rng = np.random.default_rng(7)
    rows = [np.sort(rng.choice(200, size, replace=False)).astype(np.int32) for size in (0, 1, 2, 5, 40, 150)]
    out_offsets = np.concatenate([[0], np.cumsum([row.shape[0] for row in rows])]).astype(np.int64)
    out_neighbors = np.concatenate(rows).astype(np.int32)
    ends_at_row_end = searched = 0
    for u, row in enumerate(rows):
        for low, high in [(-5, -1), (0, 199), (250, 300), *rng.integers(0, 200, (60, 2)).tolist()]:
            low, high = min(low, high), max(low, high)
            start, length = run_bounds(out_offsets, out_neighbors, np.int64(u), np.int32(low), np.int32(high))
            inside = np.flatnonzero((row >= low) & (row <= high))
            if inside.shape[0]:
                assert (start - out_offsets[u], length) == (inside[0], inside.shape[0])
                ends_at_row_end += row[-1] <= high
                searched += row[-1] > high
            else:
                assert length == 0
    assert ends_at_row_end and searched  # both ways to the run's end were taken


def test_chunk_plan_gives_each_chunk_its_vertex():
    """plan_chunks against the definition, with vertices of degree 0 anywhere (their first chunk is their
    successor's)."""
    from hgpart.graphs.triangles.plan import plan_chunks

    generator = np.random.default_rng(3)
    for _ in range(100):
        size = generator.integers(0, 40)
        degrees = generator.integers(0, 100, size) * (generator.random(size) < 0.6)
        chunk_first, chunk_vertex = plan_chunks(degrees)
        assert chunk_vertex.dtype == np.int32 and chunk_first[-1] == sum(-(-degrees // 32))
        expected = [v for v, degree in enumerate(degrees) for _ in range(-(-degree // 32))]
        np.testing.assert_array_equal(chunk_vertex, expected)
        busy = np.flatnonzero(degrees > 0)
        np.testing.assert_array_equal(chunk_first[busy], np.searchsorted(chunk_vertex, busy))


def test_orientation_equals_its_definition():
    """orient_cpu against numpy: N+(x) = the ranks above x among x's neighbours, ascending; rows both
    shorter and longer than the insertion sort's bound (a clique of 50 gives rows up to 49 long)."""
    from hgpart.graphs.triangles.host import orient_cpu
    from hgpart.graphs.triangles.plan import rank_vertices
    from hgpart.hypergraph import SHORT_SEGMENT

    rng = np.random.default_rng(5)
    n = 400
    clique_sources, clique_targets = np.triu_indices(50, 1)
    graph = Graph.from_edges(n, np.concatenate([rng.integers(0, n, 1500), clique_sources]),
                             np.concatenate([rng.integers(0, n, 1500), clique_targets]))
    rank, order = rank_vertices(np.diff(graph.offsets))
    out_offsets, out_neighbors = orient_cpu(graph.offsets, graph.neighbors, rank, order)
    lengths = []
    for x in range(n):
        row = rank[graph.neighbors[graph.offsets[order[x]]:graph.offsets[order[x] + 1]]]
        expected = np.sort(row[row > x])
        np.testing.assert_array_equal(out_neighbors[out_offsets[x]:out_offsets[x + 1]], expected)
        lengths.append(expected.shape[0])
    assert max(lengths) > SHORT_SEGMENT > 2 and sum(length > 2 for length in lengths) > 50
