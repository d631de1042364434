import json

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph

from hgpart import Graph, generate
from hgpart.graphs.spanning_forest import minimum_spanning_forest
from hgpart.graphs.spanning_forest.common import NO_EDGE
from hgpart.graphs.spanning_forest.host import find_roots, hook, least_edges
from hgpart.io import read_graph

from ..conftest import DATA, SHARED
from ..cli.test_cli import assert_one_line_error, run
from ..helpers import assert_end_to_end

MST_KERNELS = ["least_edge_kernel", "hook_kernel", "jump_kernel", "relabel_kernel", "relabel_pair_kernel",
               "first_of_pair_kernel", "compact_kernel"]


def random_graph(seed, n=200, m=300, integer=True, isolated=20):
    rng = np.random.default_rng(seed)
    sources, targets = rng.integers(0, n - isolated, m), rng.integers(0, n - isolated, m)
    weights = rng.integers(1, 5, m).astype(float) if integer else rng.random(m)
    return Graph.from_edges(n, sources, targets, weights, merge="min")


def kruskal(graph):
    """Kruskal over the order (weight, edge id) with a plain union-find: the unique forest, as edge ids."""
    sources, targets, weights = graph.edge_list()
    parent = list(range(graph.num_vertices))

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    chosen = []
    for edge in sorted(range(len(weights)), key=lambda e: (weights[e], e)):
        a, b = find(int(sources[edge])), find(int(targets[edge]))
        if a != b:
            parent[a] = b
            chosen.append(edge)
    return sorted(chosen)


def check_forest(graph, forest):
    """Total weight equals scipy's; n - c edges; acyclic; components equal scipy's."""
    matrix = graph.to_sparse()
    assert forest.total_weight == pytest.approx(float(csgraph.minimum_spanning_tree(matrix).sum()), rel=1e-12)
    count, labels = csgraph.connected_components(matrix, directed=False)
    assert forest.num_components == count and forest.weights.shape[0] == graph.num_vertices - count
    assert np.all(forest.sources < forest.targets)
    forest_graph = Graph.from_edges(graph.num_vertices, forest.sources, forest.targets)
    assert forest_graph.num_edges == forest.weights.shape[0]  # no parallel edges
    assert csgraph.connected_components(forest_graph.to_sparse(), directed=False)[0] == count  # spans, so acyclic
    pairs = set(zip(forest.components.tolist(), labels.tolist()))
    assert len(pairs) == count  # the same partition into components


@pytest.mark.parametrize("seed", range(6))
def test_forest_is_kruskals_with_the_same_ties(seed):
    graph = random_graph(seed, integer=seed % 2 == 0)
    forest = minimum_spanning_forest(graph)
    check_forest(graph, forest)
    sources, targets, weights = graph.edge_list()
    expected = kruskal(graph)
    got = sorted(zip(forest.sources.tolist(), forest.targets.tolist()))
    assert got == sorted(zip(sources[expected].tolist(), targets[expected].tolist()))


@pytest.mark.parametrize("name", ["karate.graph", "chesapeake.mtx", "west0067.mtx"])
def test_forest_of_small_files(name):
    graph = read_graph(str(DATA / name))
    check_forest(graph, minimum_spanning_forest(graph))


def test_forest_of_rome99():
    path = SHARED / "rome99.gr.gz"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    graph = read_graph(str(path))
    forest = minimum_spanning_forest(graph)
    check_forest(graph, forest)
    assert forest.total_weight == 1186386.0


def test_edge_cases():
    empty = minimum_spanning_forest(Graph.from_edges(4, [], []))
    assert empty.weights.shape == (0,) and empty.num_components == 4 and empty.iterations == 0
    star = Graph.from_edges(5, [0, 0, 0, 0], [1, 2, 3, 4], [4.0, 3.0, 2.0, 1.0])
    assert minimum_spanning_forest(star).total_weight == 10.0


def test_steps_on_a_path():
    """Steps 1-3 on the path 0-1-2-3 plus isolated 4, edges in weight order (1,2), (0,1), (2,3)."""
    edges = np.array([[1, 0, 2], [2, 1, 3], [7, 8, 9]], dtype=np.int32)
    least = least_edges(edges, 5)
    assert least.tolist() == [1, 0, 0, 2, NO_EDGE]
    in_forest = np.zeros(10, dtype=np.uint8)
    parent = hook(least, edges, in_forest)
    assert parent.tolist() == [1, 1, 1, 2, 4]  # 1-2 is a 2-cycle: 1 is the root
    assert np.flatnonzero(in_forest).tolist() == [7, 8, 9]
    find_roots(parent)
    assert parent.tolist() == [1, 1, 1, 1, 4]


def test_general_matrix_keeps_the_lighter_direction(tmp_path):
    matrix = tmp_path / "general.mtx"
    matrix.write_text("%%MatrixMarket matrix coordinate real general\n3 3 4\n1 2 5.0\n2 1 2.0\n2 3 1.5\n3 3 9\n")
    graph = read_graph(str(matrix))
    forest = minimum_spanning_forest(graph)
    assert forest.total_weight == 3.5 and forest.num_components == 1


def test_cli_mst(tmp_path):
    output = tmp_path / "forest.txt"
    result = run("mst", DATA / "karate.graph", "-o", output, "--json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    lines = np.loadtxt(output)
    assert lines.shape == (33, 3) and summary["forest_edges"] == 33 and summary["total_weight"] == lines[:, 2].sum()
    assert summary["components"] == 1 and summary["device"] == "cpu"
    piped = run("mst", DATA / "karate.graph", "-o", "-", "-q")
    assert piped.exit_code == 0 and len(piped.stdout.splitlines()) == 33 and piped.stderr == ""
    broken = tmp_path / "broken.gr"
    broken.write_text("p sp 3 2\na 1 2 5\na 2 7 1\n")
    target = tmp_path / "never.txt"
    assert_one_line_error(run("mst", broken, "-o", target), "broken.gr:3:")
    assert not target.exists()
    assert_one_line_error(run("mst", DATA / "karate.graph", "-o", "-", "--json"), "--json")


def test_bench_mst_json():
    result = run("bench", "mst", DATA / "karate.graph", "--gnm", "", "--rmat", "0", "--grid", "0", "--repeat", "1",
                 "--json", "--device", "cpu")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["instances"]
    assert row["total weight"] == 33.0 and row["scipy weight agrees"]
    assert_end_to_end(row, "cpu")
    assert row["cpu vs scipy"] == row["scipy s"] / row["cpu host s"]
    generated = run("bench", "mst", "--gnm", "200:600", "--rmat", "0", "--grid", "0", "--repeat", "1", "--json",
                    "--device", "cpu")
    assert generated.exit_code == 0, generated.output
    rows = {row["instance"]: row for row in json.loads(generated.stdout)["instances"]}  # rome99 too, if shared
    row = rows["gnm 200 / 600"]
    assert row["scipy weight agrees"]
    assert_end_to_end(row, "cpu")  # read from a Matrix Market file of the generated graph: real weights


@pytest.mark.parametrize("name", MST_KERNELS)
def test_mst_kernels_compile_to_ptx(name):
    cuda = pytest.importorskip("numba.cuda")
    from numba import int32, int64, uint8

    from hgpart.graphs.spanning_forest import device

    vector, edges = int32[::1], int32[:, ::1]
    signatures = {"least_edge_kernel": (edges, vector), "hook_kernel": (vector, edges, vector, uint8[::1]),
                  "jump_kernel": (vector,), "relabel_kernel": (edges, vector, vector),
                  "relabel_pair_kernel": (edges, vector, int64, int64[::1], int64, vector, vector),
                  "first_of_pair_kernel": (vector, vector, vector), "compact_kernel": (vector, edges, edges)}
    ptx, _ = cuda.compile_ptx(getattr(device, name).py_func, signatures[name], cc=(9, 0))
    assert ".entry" in ptx


def gpu_test_graphs(simulated: bool):
    """(name, graph) pairs the GPU's forests are checked on: three small graphs in the simulator, generated
    ones and rome99 of ../shared/data (when there) on a GPU."""
    graphs = [("karate", read_graph(str(DATA / "karate.graph"))), ("ties", random_graph(1, n=60, m=90)),
              ("sparse", random_graph(3, n=400, m=500, isolated=50))]  # steps without the pair reduction
    if simulated:
        return graphs
    from hgpart.bench.spanning_forest import grid_graph

    graphs += [("random float", random_graph(2, n=20000, m=60000, integer=False)), ("grid", grid_graph(300))]
    for name, (num_vertices, sources, targets, weights) in [
            ("rmat 65,536", generate.rmat(1 << 16, seed=1, edge_factor=8, weights="float")),
            ("gnm 200,000", generate.gnm(200_000, seed=1, m=1_200_000, weights="float"))]:
        graphs.append((name, Graph.from_edges(num_vertices, sources, targets, weights, merge="min")))
    if (SHARED / "rome99.gr.gz").exists():
        graphs.append(("rome99", read_graph(str(SHARED / "rome99.gr.gz"))))
    return graphs


@pytest.mark.gpu
def test_gpu_forest_equals_the_cpu_twin():
    from hgpart.cuda.arrays import SIMULATED
    from hgpart.device import gpu_available

    if not SIMULATED and not gpu_available():
        pytest.skip("no GPU")
    for name, graph in gpu_test_graphs(SIMULATED):
        cpu, gpu = minimum_spanning_forest(graph, "cpu"), minimum_spanning_forest(graph, "gpu")
        print(f"{name}: weight {gpu.total_weight}, {gpu.iterations} steps, gpu {gpu.seconds['boruvka']:.4f} s, "
              f"cpu {cpu.seconds['boruvka']:.4f} s")
        check_forest(graph, gpu)
        for field in ("sources", "targets", "weights", "components"):
            np.testing.assert_array_equal(getattr(gpu, field), getattr(cpu, field), err_msg=f"{name} {field}")


def test_the_gpu_tests_graphs_are_built():
    """The GPU test's inputs are made here too, where no GPU runs it, so that a change to what it calls shows."""
    names = [name for name, graph in gpu_test_graphs(False) if graph.num_edges > 0]
    assert names[:7] == ["karate", "ties", "sparse", "random float", "grid", "rmat 65,536", "gnm 200,000"]
