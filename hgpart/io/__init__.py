"""Readers and writers. Format from the extension (``.gz`` transparent) or given; ``-`` is stdin/stdout.

========== ======================================= ====================================
format     extensions                              content
========== ======================================= ====================================
hgr        .hgr                                    hMetis hypergraph (fmt 0/1/10/11)
mtx        .mtx .mm                                Matrix Market (row-net by default)
metis      .graph .metis                           METIS graph (fmt 0/1/10/11/100..111)
gr         .gr                                     DIMACS shortest-path graph
edgelist   .txt .edges .el .csv .tsv .edgelist     ``u v [w]`` lines, 0-based (SNAP)
========== ======================================= ====================================
"""

from __future__ import annotations

import os

from ..errors import InputError
from ..hypergraph import Graph, Hypergraph
from .files import atomic_output, named_format, read_bytes, strip_gz
from .graphs import EdgeList, parse_dimacs, parse_edgelist, parse_metis, write_edgelist, write_metis
from .hmetis import parse_hgr, write_hgr
from .matrix_market import matrix_entries, parse_matrix, parse_mtx_hypergraph, write_mtx, write_mtx_graph
from .partition import read_fixed, read_partition, write_partition

FORMATS = ("hgr", "mtx", "metis", "gr", "edgelist")
EXTENSIONS = {
    ".hgr": "hgr", ".mtx": "mtx", ".mm": "mtx", ".graph": "metis", ".metis": "metis", ".gr": "gr",
    ".txt": "edgelist", ".edges": "edgelist", ".el": "edgelist", ".csv": "edgelist", ".tsv": "edgelist",
    ".edgelist": "edgelist",
}

__all__ = [
    "FORMATS", "EdgeList", "atomic_output", "convert", "detect_format", "read_bytes", "read_edges", "read_fixed",
    "read_graph", "read_hypergraph", "read_matrix", "read_partition", "write_edgelist", "write_graph",
    "write_hypergraph", "write_partition",
]


def detect_format(path: str, data: bytes | None = None, given: str | None = None) -> str:
    """The format named by ``given``, else by the extension, else sniffed from the content."""
    named = named_format(path, given, FORMATS, EXTENSIONS)
    if named:
        return named
    if data is not None:
        head = data[:4096].lstrip()
        if head[:14].lower() == b"%%matrixmarket":
            return "mtx"
        if head[:2] in (b"c ", b"p ", b"c\n"):
            return "gr"
    extension = os.path.splitext(strip_gz(path))[1].lower()
    where = "stdin" if path == "-" else f"extension {extension or '(none)'}"
    raise InputError(f"cannot tell the format from the {where}; pass --format ({', '.join(FORMATS)})", path)


GRAPH_FORMATS = ("metis", "gr", "edgelist")


def _hypergraph_from(data: bytes, path: str, kind: str, model: str) -> Hypergraph:
    try:
        if kind == "hgr":
            return parse_hgr(data, path)
        if kind == "mtx":
            return parse_mtx_hypergraph(data, path, model)
        return Hypergraph.from_graph(_edges_from(data, path, kind).to_graph("min"))
    except InputError as error:
        raise error.located(path) from None


def _edges_from(data: bytes, path: str, kind: str) -> EdgeList:
    try:
        if kind == "metis":
            return parse_metis(data, path)
        if kind == "gr":
            return parse_dimacs(data, path)
        if kind == "edgelist":
            return parse_edgelist(data, path)
        if kind == "mtx":
            rows, cols, row, col, values, mirror = matrix_entries(data, path)
            if rows != cols:
                raise InputError(f"a graph needs a square matrix, got {rows} x {cols}", path)
            return EdgeList(rows, row, col, values, None, True, mirror)
        raise InputError(f"a {kind} file holds a hypergraph, not a graph", path)
    except InputError as error:
        raise error.located(path) from None


def read_hypergraph(path: str, format: str | None = None, model: str = "row-net") -> Hypergraph:
    """Read any supported file as a hypergraph.

    Graph formats become one two-pin net per undirected edge (edge weights as net weights); Matrix
    Market uses the row-net model (rows are nets) unless ``model="column-net"``.
    """
    data = read_bytes(path)
    return _hypergraph_from(data, path, detect_format(path, data, format), model)


def read_edges(path: str, format: str | None = None) -> EdgeList:
    """The edges of a graph file as written (Matrix Market: its entries)."""
    data = read_bytes(path)
    return _edges_from(data, path, detect_format(path, data, format)).mirrored()


def read_graph(path: str, format: str | None = None, merge: str = "min") -> Graph:
    """Read a graph file as an undirected :class:`Graph`.

    Direction is ignored; self loops are dropped; parallel edges, (u, v) beside (v, u) included, are
    merged by ``merge`` (``min`` keeps the lightest, ``max`` and ``sum`` as named).
    """
    data = read_bytes(path)
    edges = _edges_from(data, path, detect_format(path, data, format))
    try:
        return edges.to_graph(merge)
    except InputError as error:
        raise error.located(path) from None


def read_matrix(path: str):
    """A Matrix Market file as ``scipy.sparse.coo_matrix``."""
    return parse_matrix(read_bytes(path), path)


def write_hypergraph(hypergraph: Hypergraph, path: str, format: str | None = None) -> None:
    """Write ``.hgr``, ``.mtx`` (row-net pattern) or, when every net has two pins, a METIS ``.graph``."""
    kind = detect_format(path, None, format) if (format or path != "-") else "hgr"
    if kind == "hgr":
        write_hgr(hypergraph, path)
    elif kind == "mtx":
        write_mtx(hypergraph, path)
    elif kind in ("metis", "edgelist"):
        write_graph(_graph_of(hypergraph, path), path, kind)
    else:
        raise InputError(f"cannot write a hypergraph as {kind}", path)


def write_graph(graph: Graph, path: str, format: str | None = None) -> None:
    kind = detect_format(path, None, format) if (format or path != "-") else "metis"
    if kind == "metis":
        write_metis(graph, path)
    elif kind == "edgelist":
        sources, targets, weights = graph.edge_list()
        write_edgelist(sources, targets, weights, path)
    elif kind == "mtx":
        write_mtx_graph(graph, path)
    elif kind == "hgr":
        write_hypergraph(Hypergraph.from_graph(graph), path, kind)
    else:
        raise InputError(f"cannot write a graph as {kind}", path)


def _graph_of(hypergraph: Hypergraph, path: str) -> Graph:
    sizes = hypergraph.net_sizes()
    if sizes.size and (sizes.min() != 2 or sizes.max() != 2):
        raise InputError("only a hypergraph whose nets all have two pins can be written as a graph", path)
    pins = hypergraph.pin_vertices
    return Graph.from_edges(hypergraph.num_vertices, pins[0::2], pins[1::2], hypergraph.net_weights.astype(float),
                            hypergraph.vertex_weights, merge="sum")


def convert(source: str, target: str, source_format: str | None = None, target_format: str | None = None,
            model: str = "row-net") -> Hypergraph | Graph:
    """Read ``source`` and write it to ``target`` in the target's format; returns what was written.

    Graph to graph keeps real-valued edge weights; anything else goes through the hypergraph model.
    """
    data = read_bytes(source)
    kind = detect_format(source, data, source_format)
    target_kind = detect_format(target, None, target_format) if (target_format or target != "-") else kind
    if kind in GRAPH_FORMATS and target_kind in GRAPH_FORMATS:
        graph = _edges_from(data, source, kind).to_graph("min")
        write_graph(graph, target, target_kind)
        return graph
    hypergraph = _hypergraph_from(data, source, kind, model)
    write_hypergraph(hypergraph, target, target_kind)
    return hypergraph
