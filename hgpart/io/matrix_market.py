"""Matrix Market (coordinate and array; pattern, real, integer; general, symmetric, skew-symmetric).

Parsed by the project's byte scanner rather than ``scipy.io.mmread``: scipy's fast_matrix_market
reader crashes the process on some malformed files (e.g. a last entry ``3 1 -1. `` with no newline),
and every error here names its line. ``scipy.io.mmread`` is the oracle the tests compare against.

A coordinate file's entries are first read on threads (:func:`.lines.read_lines`), each straight into the row,
column and value arrays, the same numbers as the scanner's. Anything it does not take (a malformed entry, an
index out of range, a count that differs from the size line, ...) leaves the file to the scanner, whose checks
name the line.
"""

from __future__ import annotations

import numba
import numpy as np

from ..errors import InputError
from ..hypergraph import INT32_MAX, Graph, Hypergraph
from .files import atomic_output
from .lines import first_words, read_lines
from .text import write_rows
from .tokens import shown, tokenize

BLANK = 32  # the scanner's separator for Matrix Market: blanks only

FORMATS = ("coordinate", "array")
FIELDS = ("real", "integer", "pattern", "double")
SYMMETRIES = ("general", "symmetric", "skew-symmetric")


def _banner(data: bytes, file: str):
    if not data or data.isspace():  # neither copies the data (a file's bytes can be gigabytes)
        raise InputError("empty file: expected a %%MatrixMarket banner", file, 1)
    end = data.find(b"\n")
    first = data if end < 0 else data[:end]
    if not first.lower().startswith(b"%%matrixmarket"):
        raise InputError("bad Matrix Market banner: the first line must start with %%MatrixMarket", file, 1)
    words = first.decode("latin-1").lower().split()
    if len(words) != 5 or words[1] != "matrix":
        raise InputError("bad Matrix Market banner: expected '%%MatrixMarket matrix FORMAT FIELD SYMMETRY'", file, 1)
    layout, field, symmetry = words[2:]
    layout_shown, field_shown, symmetry_shown = (shown(word.encode("latin-1")) for word in words[2:])
    if field in ("complex",) or symmetry == "hermitian":
        raise InputError("complex matrices are not supported", file, 1)
    if layout not in FORMATS:
        raise InputError(f"bad Matrix Market header: unknown format {layout_shown} (coordinate or array)", file, 1)
    if field not in FIELDS:
        raise InputError(f"bad Matrix Market header: unknown field {field_shown} (real, integer or pattern)", file, 1)
    if symmetry not in SYMMETRIES:
        raise InputError(f"bad Matrix Market header: unknown symmetry {symmetry_shown}", file, 1)
    if layout == "array" and field == "pattern":
        raise InputError("bad Matrix Market header: an array cannot be a pattern", file, 1)
    return layout, field, symmetry


def _coordinate_entries(data: bytes, field: str, symmetry: str, threads: int | None = None):
    """(rows, cols, row int64[m], col int64[m], values float64[m]) of a well-formed coordinate file, its entries
    as written (not mirrored); None for anything else, which :func:`parse_matrix`'s checks then name. The file's
    entries are read in ``threads`` pieces (default: see :func:`.lines.read_lines`)."""
    words, begin = first_words(data, b"%")
    if len(words) != 3 or not all(word.isdigit() for word in words):
        return None
    rows, cols, declared = (int(word) for word in words)
    if max(rows, cols) > INT32_MAX or (symmetry != "general" and rows != cols):
        return None
    per_line = 2 if field == "pattern" else 3
    entries = read_lines(data, begin, b"%", BLANK, fewest=per_line, most=per_line, shift=1, first_limit=rows,
                         second_limit=cols, lower=symmetry != "general", integral_third=field == "integer",
                         expected=declared, threads=threads)
    return None if entries is None else (rows, cols, *entries[:3])


def matrix_entries(data: bytes, file: str) -> tuple:
    """(rows, cols, row int64[m], col int64[m], values float64[m], mirror): the entries as written (array format:
    its nonzero ones), 0-based; ``mirror`` is the sign a symmetric (1) or skew-symmetric (-1) matrix's entries
    hold mirrored above the diagonal as well, None for a general one."""
    return _entries(data, file, *_banner(data, file))


def _entries(data: bytes, file: str, layout: str, field: str, symmetry: str) -> tuple:
    """:func:`matrix_entries` of a file whose banner says ``layout``, ``field`` and ``symmetry``."""
    mirror = {"general": None, "symmetric": 1.0, "skew-symmetric": -1.0}[symmetry]
    if layout == "coordinate":
        entries = _coordinate_entries(data, field, symmetry)
        if entries is not None:
            return (*entries, mirror)
    return (*_checked_entries(data, file, layout, field, symmetry), mirror)


def parse_matrix(data: bytes, file: str) -> "scipy.sparse.coo_matrix":
    """The matrix as COO (array format: its nonzero entries); symmetric halves are mirrored."""
    layout, field, symmetry = _banner(data, file)
    rows, cols, row, col, values, mirror = _entries(data, file, layout, field, symmetry)
    if mirror is not None:
        off = row != col
        row, col = np.concatenate([row, col[off]]), np.concatenate([col, row[off]])
        values = np.concatenate([values, mirror * values[off]])
    dtype = np.int64 if field == "integer" else np.float64
    import scipy.sparse  # slow to import, and only Matrix Market files need it

    return scipy.sparse.coo_matrix((values.astype(dtype), (row, col)), shape=(rows, cols))


def _checked_entries(data: bytes, file: str, layout: str, field: str, symmetry: str) -> tuple:
    """:func:`matrix_entries` by the scanner, every check naming its line."""
    tokens = tokenize(data, file, comment_chars=b"%")
    if tokens.num_lines == 0:
        raise InputError("missing size line", file, 1)
    size_line = int(tokens.line_number[0])
    sizes = tokens.require_int(0, int(tokens.line_first[1]), file, "integers in the size line")
    expected = 3 if layout == "coordinate" else 2
    if sizes.shape[0] != expected:
        raise InputError(f"size line must hold {expected} numbers ({'rows columns entries' if expected == 3 else 'rows columns'})",
                         file, size_line)
    rows, cols = int(sizes[0]), int(sizes[1])
    if min(rows, cols) < 0 or max(rows, cols) > INT32_MAX:
        raise InputError(f"matrix size {rows} x {cols} is out of range", file, size_line)
    if symmetry != "general" and rows != cols:
        raise InputError(f"a {symmetry} matrix must be square, got {rows} x {cols}", file, size_line)
    counts = tokens.counts()[1:]
    per_line = {"coordinate": 2 if field == "pattern" else 3, "array": 1}[layout]
    wrong = np.flatnonzero(counts != per_line)
    if wrong.size:
        raise InputError(f"entry line must hold {per_line} numbers, found {counts[wrong[0]]}", file,
                         int(tokens.line_number[1 + wrong[0]]))
    if layout == "coordinate":
        declared = int(sizes[2])
    elif symmetry == "general":
        declared = rows * cols
    else:
        declared = rows * (rows + 1) // 2 - (rows if symmetry == "skew-symmetric" else 0)
    found = tokens.num_lines - 1
    if found < declared:
        raise InputError(f"fewer entries than the size line declares ({found} of {declared})", file,
                         int(tokens.line_number[-1]))
    if found > declared:
        raise InputError(f"more entries than the size line declares ({declared})", file,
                         int(tokens.line_number[1 + declared]))
    begin = int(tokens.line_first[1]) if found else 0
    if layout == "coordinate":
        starts = tokens.line_first[1:-1]
        positions = np.concatenate([starts, starts + 1])
        bad = np.flatnonzero(~tokens.is_int[positions])
        if bad.size:
            raise InputError("row and column indices must be integers", file, tokens.line_of_token(int(positions[bad[0]])))
        row = tokens.values[starts].astype(np.int64) - 1
        col = tokens.values[starts + 1].astype(np.int64) - 1
        bad = np.flatnonzero((row < 0) | (row >= rows) | (col < 0) | (col >= cols))
        if bad.size:
            raise InputError(f"entry ({row[bad[0]] + 1}, {col[bad[0]] + 1}) is out of range for a {rows} x {cols} matrix",
                             file, int(tokens.line_number[1 + bad[0]]))
        values = np.ones(found) if field == "pattern" else tokens.values[starts + 2]
        value_positions = starts + 2
    else:
        row, col = _array_positions(rows, cols, symmetry)
        values = tokens.values[begin:]
        value_positions = np.arange(begin, begin + found)
    if field == "integer" and found:
        bad = np.flatnonzero(~tokens.is_int[value_positions])
        if bad.size:
            raise InputError("an integer matrix holds a non-integer value", file,
                             tokens.line_of_token(int(value_positions[bad[0]])))
    if symmetry != "general" and layout == "coordinate":
        upper = np.flatnonzero(row < col)
        if upper.size:
            raise InputError(f"entry ({row[upper[0]] + 1}, {col[upper[0]] + 1}) lies above the diagonal of a "
                             f"{symmetry} matrix (only the lower triangle is stored)", file,
                             int(tokens.line_number[1 + upper[0]]))
    if layout == "array":
        keep = values != 0
        row, col, values = row[keep], col[keep], values[keep]
    return rows, cols, row, col, values.astype(np.float64)


def _array_positions(rows: int, cols: int, symmetry: str):
    """Row and column of each value of an array file (column-major; lower triangle when symmetric)."""
    if symmetry == "general":
        col, row = np.divmod(np.arange(rows * cols, dtype=np.int64), rows)
        return row, col
    first = 1 if symmetry == "skew-symmetric" else 0
    row_list, col_list = [], []
    for j in range(cols):
        row_list.append(np.arange(j + first, rows, dtype=np.int64))
        col_list.append(np.full(rows - j - first, j, dtype=np.int64))
    return np.concatenate(row_list or [np.zeros(0, np.int64)]), np.concatenate(col_list or [np.zeros(0, np.int64)])


def parse_mtx_hypergraph(data: bytes, file: str, model: str = "row-net") -> Hypergraph:
    """Row-net model by default: rows are nets, columns are vertices (Cheng, Cho and Yoon 2015); with
    ``column-net`` the other way round. A net's pins are the columns (rows) of its entries, explicit zeros
    included, a (skew-)symmetric matrix's mirrored entries too: the pattern of :func:`parse_matrix`'s matrix,
    built from the entries without it."""
    if model not in ("row-net", "column-net"):
        raise InputError(f"unknown hypergraph model {model!r} (row-net or column-net)")
    rows, cols, row, col, _, mirror = matrix_entries(data, file)
    if model == "column-net":
        rows, cols, row, col = cols, rows, col, row
    offsets, pins = _incidence(rows, row, col, mirror is not None)
    return Hypergraph.from_pins(cols, offsets, pins)


@numba.njit(cache=True, nogil=True)
def _incidence(num_nets, nets, members, mirrored):
    """The net-major pins of the entries (nets[i], members[i]) (int64[m] each, 0-based), with (members[i],
    nets[i]) too for each entry off the diagonal where ``mirrored``: (offsets int64[num_nets + 1], pins int32),
    each net's pins in entry order, repeats kept (:meth:`Hypergraph.from_pins` sorts and merges them)."""
    offsets = np.zeros(num_nets + 1, dtype=np.int64)
    for i in range(nets.shape[0]):
        offsets[nets[i] + 1] += 1
        if mirrored and nets[i] != members[i]:
            offsets[members[i] + 1] += 1
    for net in range(num_nets):
        offsets[net + 1] += offsets[net]
    place = offsets.copy()
    pins = np.empty(offsets[num_nets], dtype=np.int32)
    for i in range(nets.shape[0]):
        pins[place[nets[i]]] = members[i]
        place[nets[i]] += 1
        if mirrored and nets[i] != members[i]:
            pins[place[members[i]]] = nets[i]
            place[members[i]] += 1
    return offsets, pins


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
