"""Readers and writers: against independent oracles, malformed input, round trips, fuzzing."""

import gzip
import io
import os

import networkx as nx
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hgpart import Graph, Hypergraph, InputError
from hgpart.io import convert, read_edges, read_graph, read_hypergraph, read_partition, write_hypergraph
from hgpart.io import write_graph, write_partition
from hgpart.io.graphs import _edgelist_by_scanner, _edgelist_on_threads, _metis_by_scanner, _metis_on_threads
from hgpart.io.graphs import parse_dimacs, parse_edgelist, parse_metis
from hgpart.io.hmetis import parse_hgr
from hgpart.io.matrix_market import _banner, _checked_entries, _coordinate_entries, parse_matrix
from hgpart.io.partition import parse_block_ids
from hgpart.io.tokens import tokenize

from ..conftest import DATA, shared_params
from ..naive import open_text, read_dimacs_naive, read_hgr_naive, read_metis_naive


def nets_of(hypergraph):
    return [tuple(hypergraph.pin_vertices[hypergraph.net_offsets[e]:hypergraph.net_offsets[e + 1]].tolist())
            for e in range(hypergraph.num_nets)]


def assert_same_hypergraph(left, right):
    assert left.num_vertices == right.num_vertices
    np.testing.assert_array_equal(left.net_offsets, right.net_offsets)
    np.testing.assert_array_equal(left.pin_vertices, right.pin_vertices)
    np.testing.assert_array_equal(left.vertex_offsets, right.vertex_offsets)
    np.testing.assert_array_equal(left.incident_nets, right.incident_nets)
    np.testing.assert_array_equal(left.vertex_weights, right.vertex_weights)
    np.testing.assert_array_equal(left.net_weights, right.net_weights)


# ------------------------------------------------------------------------------------ real files
@pytest.mark.parametrize("path", shared_params(".hgr", ".hgr.gz") + [str(DATA / "ibm01.hgr")])
def test_hgr_matches_naive_reader(path):
    hypergraph = read_hypergraph(path)
    n, nets, net_weights, vertex_weights = read_hgr_naive(path)
    assert hypergraph.num_vertices == n
    assert nets_of(hypergraph) == nets
    assert hypergraph.net_weights.tolist() == net_weights
    assert hypergraph.vertex_weights.tolist() == vertex_weights
    # the transpose lists, for each vertex, exactly the nets holding it
    incidence = hypergraph.to_sparse().tocsc()
    np.testing.assert_array_equal(np.diff(incidence.indptr), hypergraph.vertex_degrees())
    np.testing.assert_array_equal(np.sort(incidence.indices[incidence.indptr[5]:incidence.indptr[6]]),
                                  hypergraph.incident_nets[hypergraph.vertex_offsets[5]:hypergraph.vertex_offsets[6]])


@pytest.mark.parametrize("path", shared_params(".mtx", ".mtx.gz") + [str(DATA / "west0067.mtx")])
def test_mtx_row_net_matches_scipy(path):
    with open_text(path) as handle:
        expected = sp.csr_matrix(scipy.io.mmread(io.BytesIO(handle.read().encode())))
    expected.sum_duplicates()
    hypergraph = read_hypergraph(path)
    pattern = sp.csr_matrix((np.ones(expected.nnz, np.int8), expected.indices, expected.indptr), expected.shape)
    assert (hypergraph.to_sparse() != pattern).nnz == 0
    transposed = read_hypergraph(path, model="column-net")
    assert transposed.num_nets == expected.shape[1] and transposed.num_vertices == expected.shape[0]
    assert (transposed.to_sparse() != pattern.T.tocsr()).nnz == 0


SMALL_MATRICES = {  # explicit zeros stay pins, repeats merge, mirrors of the diagonal do not repeat it
    "general, zeros and repeats": "%%MatrixMarket matrix coordinate real general\n3 4 6\n1 1 0\n1 1 2.5\n"
                                  "3 4 -1\n3 2 0.0\n1 4 1\n3 4 1\n",
    "symmetric": "%%MatrixMarket matrix coordinate integer symmetric\n4 4 4\n1 1 5\n3 1 -2\n4 3 7\n4 2 0\n",
    "skew-symmetric pattern": "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -1\n",
    "symmetric pattern": "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n2 1\n3 3\n3 1\n",
    "empty rows and columns": "%%MatrixMarket matrix coordinate pattern general\n5 3 2\n2 3\n2 1\n",
    "no entries": "%%MatrixMarket matrix coordinate real general\n2 3 0\n",
    "array": "%%MatrixMarket matrix array real general\n2 3\n1\n0\n0\n2.5\n-1\n0\n",
    "symmetric array": "%%MatrixMarket matrix array integer symmetric\n3 3\n1\n2\n0\n0\n4\n5\n",
}


@pytest.mark.parametrize("text", SMALL_MATRICES.values(), ids=SMALL_MATRICES.keys())
@pytest.mark.parametrize("model", ["row-net", "column-net"])
def test_mtx_hypergraph_is_the_pattern_scipy_reads(tmp_path, text, model):
    """Each net (row, or column for column-net) holds the columns (rows) of its stored entries, explicit
    zeros of a coordinate file included, as scipy.io.mmread reads the file."""
    path = tmp_path / "m.mtx"
    path.write_text(text)
    matrix = scipy.io.mmread(str(path))
    if sp.issparse(matrix):
        expected = sp.csr_matrix(matrix)
        expected.sum_duplicates()
        expected = sp.csr_matrix((np.ones(expected.nnz, np.int8), expected.indices, expected.indptr), expected.shape)
    else:
        expected = sp.csr_matrix((np.asarray(matrix) != 0).astype(np.int8))
    if model == "column-net":
        expected = expected.T.tocsr()
    hypergraph = read_hypergraph(str(path), model=model)
    assert (hypergraph.num_nets, hypergraph.num_vertices) == expected.shape
    assert nets_of(hypergraph) == [tuple(expected.indices[expected.indptr[e]:expected.indptr[e + 1]].tolist())
                                   for e in range(expected.shape[0])]
    assert hypergraph.net_weights.tolist() == [1] * expected.shape[0]


@pytest.mark.parametrize("path", shared_params(".graph", ".graph.gz") + [str(DATA / "karate.graph")])
def test_metis_matches_naive_reader(path):
    graph = read_graph(path)
    n, edges = read_metis_naive(path)
    assert graph.num_vertices == n
    sources, targets, weights = graph.edge_list()
    assert dict(zip(zip(sources.tolist(), targets.tolist()), weights.tolist())) == edges


@pytest.mark.parametrize("path", shared_params(".gr", ".gr.gz"))
def test_dimacs_matches_naive_reader(path):
    graph = read_graph(path, merge="min")
    n, edges = read_dimacs_naive(path)
    sources, targets, weights = graph.edge_list()
    assert graph.num_vertices == n
    assert dict(zip(zip(sources.tolist(), targets.tolist()), weights.tolist())) == edges


@pytest.mark.parametrize("path", shared_params(".txt.gz", ".csv.gz", ".txt"))
def test_edgelist_matches_networkx(path):
    with open_text(path) as handle:
        expected = nx.parse_edgelist((line for line in handle if not line.startswith(("#", "%"))),
                                     nodetype=int, data=False, create_using=nx.Graph)
    expected.remove_edges_from(nx.selfloop_edges(expected))
    graph = read_graph(path)
    sources, targets, _ = graph.edge_list()
    assert set(zip(sources.tolist(), targets.tolist())) == {(min(u, v), max(u, v)) for u, v in expected.edges}


@pytest.mark.parametrize("text", [
    b"%%MatrixMarket matrix array real general\n2 3\n1\n0\n2.5\n3\n0\n-4\n",
    b"%%MatrixMarket matrix array real symmetric\n3 3\n1\n2\n0\n4\n5\n6\n",
    b"%%MatrixMarket matrix array integer skew-symmetric\n3 3\n1\n2\n3\n",
    b"%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -2\n",
    b"%%MatrixMarket matrix coordinate integer symmetric\n% c\n3 3 3\n1 1 7\n2 1 -3\n3 1 4\n",
    b"%%MatrixMarket matrix coordinate pattern general\n2 4 3\n1 4\n2 1\n1 1\n",
])
def test_mtx_layouts_match_scipy(text):
    ours = parse_matrix(text, "x").toarray()
    np.testing.assert_array_equal(ours, np.asarray(sp.coo_matrix(scipy.io.mmread(io.BytesIO(text))).toarray()))


COORDINATE_FILES = [
    b"%%MatrixMarket matrix coordinate real general\n% c\n\n3 4 5\n1 1 1.5\n  2 3 -2e3 \r\n% mid\n\n3 4 +7.\n"
    b"1 4 .5\n2 2 12345678901234567890.25\n",
    b"%%MatrixMarket matrix coordinate integer symmetric\n4 4 3\n1 1 7\n3 1 -3\n4 2 12",
    b"%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 2\n2 1\n\t3 2\t\n",
    b"%%MatrixMarket matrix coordinate double general\n%%\n2 2 1\n2 2 1e-400\n",
    b"%%MatrixMarket matrix coordinate real general\n3 3 0\n",
]


def _mutated(seed: bytes, position: int, insert: bytes, action: str) -> bytes:
    """``seed`` with ``insert`` written over it, a piece of its length deleted, or inserted at ``position``."""
    position = position % (len(seed) + 1)
    if action == "replace":
        return seed[:position] + insert + seed[position + len(insert):]
    if action == "delete":
        return seed[:position] + seed[position + len(insert):]
    return seed[:position] + insert + seed[position:]


def _entries_agree(data, threads):
    """The threads' reading of a coordinate file equals the scanner's wherever it takes the file, and it never
    takes one that the scanner refuses. Returns whether it took it."""
    try:
        layout, field, symmetry = _banner(data, "x")
    except InputError:
        return False
    fast = _coordinate_entries(data, field, symmetry, threads)
    try:
        checked = _checked_entries(data, "x", layout, field, symmetry)
    except InputError:
        assert fast is None
        return False
    if fast is None:
        return False
    assert fast[:2] == checked[:2]
    for ours, theirs in zip(fast[2:], checked[2:]):
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs)
    return True


@pytest.mark.parametrize("symmetry", ["symmetric", "skew-symmetric", "general"])
@pytest.mark.parametrize("merge", ["min", "max", "sum"])
def test_a_symmetric_files_graph_is_that_of_its_mirrored_entries(tmp_path, symmetry, merge):
    """read_graph merges an entry with its mirror before building the graph; the graph equals the one built
    from every entry listed (read_edges), repeated entries and the diagonal included."""
    path = tmp_path / "m.mtx"
    path.write_bytes(f"%%MatrixMarket matrix coordinate real {symmetry}\n5 5 7\n2 1 3\n3 1 -2.5\n2 1 4\n"
                     f"4 4 9\n5 2 1\n5 3 -6\n3 1 2\n".encode())
    edges = read_edges(str(path))
    expected = Graph.from_edges(5, edges.sources, edges.targets, edges.weights, merge=merge)
    graph = read_graph(str(path), merge=merge)
    for name in ("offsets", "neighbors", "edge_weights"):
        np.testing.assert_array_equal(getattr(graph, name), getattr(expected, name))
    assert edges.sources.shape[0] == (7 if symmetry == "general" else 13)


EDGE_LISTS = [
    b"# c\n0 1 2\n1,2,3.5\n\n% c\n 2\t0 \r\n7 3 -1e2\n",
    b"0 1\n1 2\n2 0",
    b",,3 ,4,\n4 3 1\n",
    b"# only comments\n",
]


def _agree(on_threads, by_scanner, data, threads, names):
    """A reader's threads (``on_threads(data, threads)``, None where it leaves the file) give the scanner's
    EdgeList (``by_scanner``) wherever they take a file, and never take one the scanner refuses. Returns whether
    they took it."""
    fast = on_threads(data, threads)
    try:
        checked = by_scanner(data, "x")
    except InputError:
        assert fast is None
        return False
    if fast is None:
        return False
    assert (fast.num_vertices, fast.weighted) == (checked.num_vertices, checked.weighted)
    for name in names:
        ours, theirs = getattr(fast, name), getattr(checked, name)
        assert (ours is None) == (theirs is None)
        if ours is not None:
            assert ours.dtype == theirs.dtype
            np.testing.assert_array_equal(ours, theirs)
    return True


def _edges_agree(data, threads):
    return _agree(_edgelist_on_threads, _edgelist_by_scanner, data, threads, ("sources", "targets", "weights"))


METIS_FILES = [
    b"% c\n\n6 4\n3 2\n1 3\n2 1\n% mid\n5\r\n4 \n\n\n",
    b"4 3 011\n7 2 5 3 1\n2 4 9 1 5\n1 1 1\n0 2 9\n\n",
    b"3 2 101\n1 2 4\n2 3 6 1 4\n1 2 6",
    b"3 2 110 1\n2 4 2 3\n1 0 1\n1 1 1\n",
    b"2 0\n\n\n",
]


def _metis_agree(data, threads):
    return _agree(_metis_on_threads, _metis_by_scanner, data, threads,
                  ("sources", "targets", "weights", "vertex_weights"))


THREADED_FILES = ([(_entries_agree, data) for data in COORDINATE_FILES] + [(_edges_agree, data) for data in EDGE_LISTS]
                  + [(_metis_agree, data) for data in METIS_FILES])


@pytest.mark.parametrize("agree,data", THREADED_FILES)
def test_lines_on_threads_equal_the_scanners(agree, data):
    """Matrix Market: comments and blank lines between entries, CR LF, signs, exponents, an underflow, more
    digits than a mantissa keeps, no final newline, an empty matrix; edge lists: commas, tabs, comments of both
    kinds, weighted and unweighted lines mixed, no edges at all; METIS: lists in any order, isolated vertices
    (blank lines), vertex and edge weights, sizes, comments and blank lines after the vertices, CR LF. Read in
    1-4 pieces, the scanner's numbers."""
    for threads in (1, 2, 3, 4):
        assert agree(data, threads)


@settings(max_examples=500, deadline=None)
@given(case=st.sampled_from(THREADED_FILES), position=st.integers(0, 200), insert=st.binary(max_size=4),
       threads=st.integers(1, 3), action=st.sampled_from(["replace", "delete", "insert"]))
def test_lines_on_threads_never_take_what_the_scanner_refuses(case, position, insert, threads, action):
    agree, seed = case
    agree(_mutated(seed, position, insert, action), threads)


def test_zero_with_a_huge_exponent_is_zero():
    """0E309 is 0 (not 0 * inf, a NaN), as Python's float reads it; 1e309 overflows to inf as there."""
    values = tokenize(b"0E309 -0e400 0.000e999 1e309 5e-2\n", "x").values
    assert values.tolist() == [float(text) for text in ("0E309", "-0e400", "0.000e999", "1e309", "5e-2")]
    assert str(values[1]) == "-0.0"


def test_graph_merge_rules():
    data = b"0 1 5\n1 0 3\n1 2 2.5\n2 2 9\n"
    edges = parse_edgelist(data, "x")
    assert edges.to_graph("min").edge_list()[2].tolist() == [3.0, 2.5]
    assert edges.to_graph("max").edge_list()[2].tolist() == [5.0, 2.5]
    assert edges.to_graph("sum").edge_list()[2].tolist() == [8.0, 2.5]


def test_duplicate_pins_merge_and_small_nets_are_kept():
    hypergraph = parse_hgr(b"3 4\n1 1 2\n3\n4 4 4\n", "x")
    assert nets_of(hypergraph) == [(0, 1), (2,), (3,)]
    assert hypergraph.num_pins == 4


def test_weighted_hgr_formats():
    hypergraph = parse_hgr(b"% comment\n2 3 11\n7 1 2\n0 2 3\n\n5\n6\n8\n", "x")
    assert hypergraph.net_weights.tolist() == [7, 0]
    assert hypergraph.vertex_weights.tolist() == [5, 6, 8]
    empty_net = parse_hgr(b"2 3 1\n4\n1 1 3\n", "x")
    assert nets_of(empty_net) == [(), (0, 2)]


def test_metis_weighted_formats():
    graph_text = b"3 2 111\n1 4 2 7\n1 5 1 7 3 9\n1 6 2 9\n"
    edges = parse_metis(graph_text, "x")
    assert edges.vertex_weights.tolist() == [4, 5, 6]
    assert sorted(zip(edges.sources.tolist(), edges.targets.tolist(), edges.weights.tolist())) == \
        [(0, 1, 7.0), (1, 2, 9.0)]
    isolated = parse_metis(b"3 1\n2\n1\n\n", "x")
    assert isolated.num_vertices == 3


# ---------------------------------------------------------------------------------- bad input
BAD_HGR = [
    (b"", 1, "empty file"),
    (b"% only a comment\n", 1, "empty file"),
    (b"3\n1 2\n", 1, "header must be"),
    (b"1 2 3 4\n1 2\n", 1, "header must be"),
    (b"1 2 7\n1 2\n", 1, "unknown fmt code 7"),
    (b"1 2\n1 x\n", 2, "expected a number"),
    (b"1 2\n1 2.5\n", 2, "expected an integer pin id"),
    (b"2 2\n1 0\n1 2\n", 2, "pin 0 is out of range"),
    (b"2 2\n1 2\n1 3\n", 3, "pin 3 is out of range"),
    (b"3 2\n1 2\n1 2\n", 3, "header says 3 nets, found 2"),
    (b"1 2\n1 2\n2 1\n", 3, "more lines than the header"),
    (b"1 2 10\n1 2\n1\n", 3, "needs 2 vertex-weight lines, found 1"),
    (b"1 2 10\n1 2\n1\n-4\n", 4, "negative vertex weight"),
    (b"1 2 1\n-1 1 2\n", 2, "negative net weight"),
    (b"1 2 10\n1 2\n1 1\n1\n", 3, "exactly one number"),
    (b"1 99999999999999999999\n", 1, "too large"),
    (b"1 4294967296\n1\n", 1, "number of vertices 4294967296 is out of range"),
    (b"1 2\n1 2 99999999999\n", 2, "out of range"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", 1, "expected a number"),
]


@pytest.mark.parametrize("data,line,message", BAD_HGR)
def test_bad_hgr(data, line, message):
    with pytest.raises(InputError) as caught:
        parse_hgr(data, "in.hgr")
    assert caught.value.line == line, caught.value
    assert message in caught.value.message
    assert str(caught.value).startswith(f"in.hgr:{line}: ")


BAD_MTX = [
    (b"", 1, "empty file"),
    (b"3 3 1\n1 1 1\n", 1, "banner"),
    (b"%%MatrixMarket matrix coordinate foo general\n3 3 1\n1 1 1\n", 1, "unknown field"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n", 3, "fewer entries"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2\n", 4, "out of range"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1.0\n1 2 3\n", 4, "more entries"),
    (b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 2\n1 x\n2 1\n", 3, "expected a number"),
    (b"%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n1 2\n", 3, "above the diagonal"),
    (b"%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 0.5\n", 3, "non-integer"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n1 2.0 1\n", 4, "indices must be integers"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n\n% c\n0 1 1\n", 5, "out of range"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 0 1\n", 3, "out of range"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1 % c\n", 3, "expected a number"),
    (b"%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n1 1 1\n", 2, "must be square"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3\n1 1 1\n", 2, "size line must hold 3"),
    (b"%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1\n", 3, "must hold 3 numbers"),
    (b"%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 1\n", 1, "complex"),
    (b"%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5, "fewer entries"),
    # crashed scipy's fast_matrix_market reader (segmentation fault) when it parsed Matrix Market
    (b"%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n2 3 2\n3 1 -1. 7", 5, "must hold 3"),
]


@pytest.mark.parametrize("data,line,message", BAD_MTX)
def test_bad_mtx(data, line, message):
    with pytest.raises(InputError) as caught:
        parse_matrix(data, "in.mtx")
    assert caught.value.line == line, caught.value
    assert message.lower() in caught.value.message.lower()
    if b"coordinate" in data and b"complex" not in data and b"foo" not in data:
        assert not _entries_agree(data, 2)  # the threads' reading leaves it to the scanner


BAD_METIS = [
    (b"", 1, "empty file"),
    (b"2\n2\n1\n", 1, "header must be"),
    (b"2 1 2\n2\n1\n", 1, "unknown fmt code"),
    (b"3 1\n2\n1\n", 3, "header says 3 vertices, found 2"),
    (b"2 1\n2\n1\n2\n", 4, "more vertex lines"),
    (b"2 1\n3\n1\n", 2, "neighbour 3 is out of range"),
    (b"2 2\n2\n1\n", 1, "header says 2 edges"),
    (b"3 1\n2\n3\n\n", 2, "not listed the same way"),
    (b"2 1 1\n2 5\n1 6\n", 2, "not listed the same way"),
    (b"2 1 1\n2\n1 6\n", 2, "wrong number of entries"),
    (b"3 4\n2 2 3\n1 3\n1 2 2\n", 2, "not listed the same way"),
    (b"2 1 10\n-1 2\n1 1\n", 2, "negative vertex weight"),
    (b"2 1\n1\n2\n", 2, "self loop"),
    (b"2 1 11 2\n1 1 2 1\n1 1 1 1\n", 1, "multi-constraint"),
]


@pytest.mark.parametrize("data,line,message", BAD_METIS)
def test_bad_metis(data, line, message):
    with pytest.raises(InputError) as caught:
        parse_metis(data, "in.graph")
    assert caught.value.line == line, caught.value
    assert message in caught.value.message
    assert not _metis_agree(data, 2)  # the threads' reading leaves it to the scanner


BAD_OTHER = [
    (parse_dimacs, b"", 1, "empty file"),
    (parse_dimacs, b"a 1 2 3\n", 1, "problem line"),
    (parse_dimacs, b"p sp 2 1\na 1 3 4\n", 2, "vertex 3 is out of range"),
    (parse_dimacs, b"p sp 2 2\na 1 2 4\n", 2, "says 2 arcs, found 1"),
    (parse_dimacs, b"p sp 2 1\na 1 2\n", 2, "arc line must be"),
    (parse_dimacs, b"p sp 2 1\nx 1 2 3\n", 2, "expected an arc line"),
    (parse_edgelist, b"0 1\n2\n", 2, "expected 'u v [weight]'"),
    (parse_edgelist, b"0 1\n-2 1\n", 2, "negative"),
    (parse_edgelist, b"0 1\n1 -2\n", 2, "negative"),
    (parse_edgelist, b"0 1\n1.5 2\n", 2, "must be an integer"),
    (parse_edgelist, b"0 1\n1 two\n", 2, "expected a number"),
    (parse_edgelist, b"0 1 1 1\n", 1, "found 4 numbers"),
    (parse_edgelist, b"0 1\n# c\n\n1 2147483647\n", 4, "too large"),
    (parse_edgelist, b"0 1\n1 2 x\n", 2, "expected a number"),
]


@pytest.mark.parametrize("parser,data,line,message", BAD_OTHER)
def test_bad_graph_files(parser, data, line, message):
    with pytest.raises(InputError) as caught:
        parser(data, "in")
    assert caught.value.line == line, caught.value
    assert message in caught.value.message
    if parser is parse_edgelist:
        assert not _edges_agree(data, 2)  # the threads' reading leaves it to the scanner


@pytest.mark.parametrize("data,k,line,message", [
    (b"0\n1\n", 2, 2, "expected 3 lines"),
    (b"0\n1\n1\n0\n", 2, 4, "expected 3 lines"),
    (b"0\n2\n1\n", 2, 2, "block id 2 is out of range 0..1"),
    (b"0\n-1\n1\n", 2, 2, "block id -1"),
    (b"0\n1 1\n1\n", 2, 2, "exactly one block id"),
    (b"0\n1.0\n1\n", 2, 2, "integer block id"),
])
def test_bad_partition_files(data, k, line, message):
    with pytest.raises(InputError) as caught:
        parse_block_ids(data, "p", 3, k)
    assert caught.value.line == line
    assert message in caught.value.message


def test_truncated_gzip_and_missing_file(tmp_path):
    path = tmp_path / "cut.hgr.gz"
    path.write_bytes(gzip.compress(b"1 2\n1 2\n" * 100)[:-12])
    with pytest.raises(InputError, match="truncated gzip"):
        read_hypergraph(str(path))
    with pytest.raises(InputError, match="no such file"):
        read_hypergraph(str(tmp_path / "absent.hgr"))
    with pytest.raises(InputError, match="cannot tell the format"):
        read_hypergraph(str(DATA / "SOURCES.md"))


# ---------------------------------------------------------------------------------- round trips
@st.composite
def hypergraphs(draw, max_vertices=30, max_nets=30, empty_nets=False):
    n = draw(st.integers(1, max_vertices))
    nets = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=0, max_size=8), min_size=0, max_size=max_nets))
    weighted_vertices = draw(st.booleans())
    weighted_nets = draw(st.booleans())
    vertex_weights = draw(st.lists(st.integers(0, 1000), min_size=n, max_size=n)) if weighted_vertices else None
    net_weights = draw(st.lists(st.integers(0, 1000), min_size=len(nets), max_size=len(nets))) if weighted_nets else None
    if not weighted_nets and not empty_nets:
        nets = [net for net in nets if net] or [[0]]
    return Hypergraph.from_pin_lists(nets, n, vertex_weights, net_weights[:len(nets)] if net_weights else None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hypergraph=hypergraphs(empty_nets=True), extension=st.sampled_from([".hgr", ".hgr.gz"]))
def test_hgr_round_trip(tmp_path, hypergraph, extension):
    path = str(tmp_path / f"h{extension}")
    write_hypergraph(hypergraph, path)
    assert_same_hypergraph(read_hypergraph(path), hypergraph)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hypergraph=hypergraphs())
def test_mtx_round_trip(tmp_path, hypergraph):
    path = str(tmp_path / "h.mtx")
    write_hypergraph(hypergraph, path)
    back = read_hypergraph(path)
    assert nets_of(back) == nets_of(hypergraph)


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 25))
    edges = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(1, 50)), max_size=60))
    sources = [u for u, _, _ in edges]
    targets = [v for _, v, _ in edges]
    weights = [w for _, _, w in edges]
    return Graph.from_edges(n, sources, targets, weights, merge="min")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(graph=graphs(), extension=st.sampled_from([".graph", ".txt", ".mtx"]))
def test_graph_round_trip(tmp_path, graph, extension):
    path = str(tmp_path / f"g{extension}")
    write_graph(graph, path)
    back = read_graph(path)
    if extension == ".txt":  # an edge list cannot name trailing isolated vertices
        assert back.num_vertices <= graph.num_vertices
    else:
        assert back.num_vertices == graph.num_vertices
    assert [a.tolist() for a in back.edge_list()] == [a.tolist() for a in graph.edge_list()]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blocks=st.lists(st.integers(0, 7), min_size=1, max_size=200))
def test_partition_round_trip(tmp_path, blocks):
    path = str(tmp_path / "p")
    write_partition(np.array(blocks), path)
    assert read_partition(path, len(blocks), 8).tolist() == blocks


def test_convert_between_formats(tmp_path):
    source = str(DATA / "karate.graph")
    for extension in (".hgr", ".mtx", ".txt", ".graph"):
        convert(source, str(tmp_path / f"k{extension}"))
    assert_same_hypergraph(read_hypergraph(str(tmp_path / "k.hgr")), read_hypergraph(source))
    assert nets_of(read_hypergraph(str(tmp_path / "k.mtx"))) == nets_of(read_hypergraph(source))
    assert read_graph(str(tmp_path / "k.txt")).num_edges == 78
    assert read_graph(str(tmp_path / "k.graph")).num_edges == 78
    with pytest.raises(InputError, match="two pins"):
        convert(str(DATA / "ibm01.hgr"), str(tmp_path / "ibm.graph"))
    assert not os.path.exists(tmp_path / "ibm.graph")
    assert [p for p in os.listdir(tmp_path) if p.startswith(".hgpart-")] == []


def test_read_edges_keeps_direction_and_weights():
    edges = read_edges(str(DATA / "lesmis.graph"))
    assert edges.weighted and edges.weights.max() > 1


# -------------------------------------------------------------------------------------- fuzzing
SEEDS = {
    "hgr": (parse_hgr, b"4 5 11\n3 1 2\n1 2 3 4\n2 5 1\n7 4\n1\n2\n3\n4\n5\n"),
    "metis": (parse_metis, b"4 4 11\n1 2 3 3 2\n1 1 3 4 1\n1 1 2 3 5\n1 2 1 3 2\n"),
    "gr": (parse_dimacs, b"c x\np sp 3 3\na 1 2 4\na 2 3 1\na 3 1 9\n"),
    "edgelist": (parse_edgelist, b"# c\n0 1 2\n1 2 3.5\n2 0 1\n"),
    "mtx": (parse_matrix, b"%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n2 3 2\n3 1 -1\n"),
}


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(sorted(SEEDS)), position=st.integers(0, 200), length=st.integers(0, 5),
       insert=st.binary(max_size=5), action=st.sampled_from(["replace", "delete", "truncate", "insert"]))
def test_fuzzed_files_give_a_result_or_one_clean_error(kind, position, length, insert, action):
    parser, valid = SEEDS[kind]
    position = position % (len(valid) + 1)
    if action == "replace":
        data = valid[:position] + insert + valid[position + len(insert):]
    elif action == "delete":
        data = valid[:position] + valid[position + length:]
    elif action == "truncate":
        data = valid[:position]
    else:
        data = valid[:position] + insert + valid[position:]
    try:
        result = parser(data, "fuzz")
    except InputError as error:
        text = str(error)
        assert text.startswith("fuzz") and "\n" not in text
        return
    assert result is not None


@pytest.mark.parametrize("junk", [b"\x00\x1b[2J\xff\xfe" * 60, b"%%MatrixMarket matrix coordinate \x1b[2J\xff" + b"x" * 300
                                  + b" general\n1 1 1\n1 1 1\n"])
def test_binary_junk_is_quoted_escaped_and_cut_short(tmp_path, junk):
    """What an error message quotes from the input is escaped (no raw control or non-ASCII bytes reach the
    terminal) and cut short."""
    path = tmp_path / ("junk.mtx" if junk.startswith(b"%%") else "junk.hgr")
    path.write_bytes(junk)
    with pytest.raises(InputError) as error:
        read_hypergraph(str(path))
    message = str(error.value)
    assert message.isascii() and message.isprintable(), message
    assert "\\x1b" in message and "..." in message, message
    assert len(message) < len(str(path)) + 120, message
