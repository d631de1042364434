"""Matrix Market through ``scipy.io.mmread`` (coordinate and array; pattern/real/integer; general/symmetric)."""

from __future__ import annotations

import io
import re

import numpy as np
import scipy.io
import scipy.sparse as sp

from ..errors import InputError
from ..hypergraph import Graph, Hypergraph
from .files import atomic_output
from .text import write_rows

_LINE = re.compile(r"^Line (\d+): (.*)$")


def parse_matrix(data: bytes, file: str) -> sp.coo_matrix:
    """The matrix as COO (array format: its nonzero entries)."""
    first = data[:data.find(b"\n")] if b"\n" in data else data
    if not data.strip():
        raise InputError("empty file: expected a %%MatrixMarket banner", file, 1)
    if not first.lower().startswith(b"%%matrixmarket"):
        raise InputError("bad Matrix Market banner: the first line must start with %%MatrixMarket", file, 1)
    words = first.decode("ascii", errors="replace").split()
    if len(words) != 5 or words[1].lower() != "matrix":
        raise InputError("bad Matrix Market banner: expected '%%MatrixMarket matrix FORMAT FIELD SYMMETRY'", file, 1)
    if words[3].lower() == "complex":
        raise InputError("complex matrices are not supported", file, 1)
    try:
        matrix = scipy.io.mmread(io.BytesIO(data))
    except (ValueError, OverflowError, IndexError, UnicodeDecodeError, TypeError) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        match = _LINE.match(message)
        if match:
            raise InputError(match.group(2).rstrip("."), file, int(match.group(1))) from None
        line = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
        if message.lower().startswith("truncated"):
            message = "fewer entries than the size line declares (" + message.rstrip(".") + ")"
        raise InputError(message, file, line) from None
    if isinstance(matrix, np.ndarray):
        matrix = sp.coo_matrix(matrix)
    else:
        matrix = sp.coo_matrix(matrix)
    if matrix.data.dtype.kind == "f" and matrix.nnz and not np.all(np.isfinite(matrix.data)):
        raise InputError("matrix holds a non-finite value", file)
    return matrix


def parse_mtx_hypergraph(data: bytes, file: str, model: str = "row-net") -> Hypergraph:
    """Row-net model by default: rows are nets, columns are vertices (seed 000)."""
    return Hypergraph.from_sparse(parse_matrix(data, file), model=model)


def write_mtx(hypergraph: Hypergraph, path: str) -> None:
    """The row-net incidence matrix as a coordinate pattern file (nets x vertices)."""
    rows = np.repeat(np.arange(hypergraph.num_nets, dtype=np.int64), hypergraph.net_sizes())
    with atomic_output(path, binary=True) as handle:
        handle.write(b"%%MatrixMarket matrix coordinate pattern general\n")
        handle.write(f"{hypergraph.num_nets} {hypergraph.num_vertices} {hypergraph.num_pins}\n".encode())
        pairs = np.empty(2 * hypergraph.num_pins, dtype=np.int64)
        pairs[0::2] = rows + 1
        pairs[1::2] = hypergraph.pin_vertices.astype(np.int64) + 1
        write_rows(handle, np.arange(0, 2 * hypergraph.num_pins + 1, 2, dtype=np.int64), pairs)


def write_mtx_graph(graph: Graph, path: str) -> None:
    """The adjacency matrix as a symmetric coordinate file (lower triangle; integer or real values)."""
    sources, targets, weights = graph.edge_list()
    integral = bool(np.all(weights == np.round(weights)))
    with atomic_output(path, binary=True) as handle:
        field = "integer" if integral else "real"
        handle.write(f"%%MatrixMarket matrix coordinate {field} symmetric\n".encode())
        handle.write(f"{graph.num_vertices} {graph.num_vertices} {sources.shape[0]}\n".encode())
        if integral:
            triples = np.empty(3 * sources.shape[0], dtype=np.int64)
            triples[0::3], triples[1::3], triples[2::3] = targets + 1, sources + 1, weights.astype(np.int64)
            write_rows(handle, np.arange(0, triples.shape[0] + 1, 3, dtype=np.int64), triples)
        else:
            lines = [f"{v + 1} {u + 1} {w!r}\n" for u, v, w in zip(sources.tolist(), targets.tolist(), weights.tolist())]
            handle.write("".join(lines).encode())
