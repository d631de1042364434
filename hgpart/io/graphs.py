"""Graph formats: METIS ``.graph``, DIMACS ``.gr`` and whitespace/CSV edge lists (SNAP).

Each parser returns an :class:`EdgeList` (every undirected edge once for METIS; as written for the
others); :meth:`EdgeList.to_graph` merges parallel edges by the caller's rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np

from ..adjacency import EDGES_PER_THREAD, balanced_rows, order_row
from ..errors import InputError
from ..hypergraph import INT32_MAX, Graph
from ..parallel import on_threads, threads_for
from .files import atomic_output
from .lines import first_words, read_integer_lines, read_lines
from .text import write_rows
from .tokens import Tokens, tokenize

COMMA = 44  # edge lists separate numbers by blanks or commas
BLANK = 32  # METIS files by blanks


@dataclass
class EdgeList:
    """Edges as read. sources/targets int64[m] (0-based), weights float64[m], vertex_weights int64[n] or None;
    ``mirror``: each edge (u, v, w) also stands for (v, u, mirror * w) (a symmetric Matrix Market file's
    entries, 1.0, or a skew-symmetric one's, -1.0), None when every edge is listed."""

    num_vertices: int
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray
    vertex_weights: np.ndarray | None = None
    weighted: bool = False
    mirror: float | None = None

    def to_graph(self, merge: str = "min") -> Graph:
        """The undirected graph, parallel edges merged by ``merge`` (an edge and its mirror are two parallel
        edges, merged here before the graph is built: the same graph as from the mirrored list)."""
        weights = self.weights
        if self.mirror is not None:  # w merged with mirror * w: w itself under min and max when mirror is 1
            if merge == "sum":
                weights = weights + weights if self.mirror > 0 else weights - weights
            elif self.mirror < 0 and merge in ("min", "max"):
                weights = np.abs(weights) if merge == "max" else -np.abs(weights)
        return Graph.from_edges(self.num_vertices, self.sources, self.targets, weights, self.vertex_weights,
                                merge=merge)

    def mirrored(self) -> "EdgeList":
        """The same edges with every mirror listed after them (as a Matrix Market file's entries read)."""
        if self.mirror is None:
            return self
        off = self.sources != self.targets
        return EdgeList(self.num_vertices, np.concatenate([self.sources, self.targets[off]]),
                        np.concatenate([self.targets, self.sources[off]]),
                        np.concatenate([self.weights, self.mirror * self.weights[off]]), self.vertex_weights,
                        self.weighted)


def _check_count(count: int, what: str, file: str, line: int) -> int:
    if count < 0 or count > INT32_MAX:
        raise InputError(f"number of {what} {count} is out of range", file, line)
    return count


# ---------------------------------------------------------------------------------------------- METIS
FMT_CODES = (0, 1, 10, 11, 100, 101, 110, 111)


def parse_metis(data: bytes, file: str) -> EdgeList:
    """METIS graph: header ``n m [fmt [ncon]]``, then n vertex lines ``[size] [weights] (nbr [ewgt])*``.

    Read on threads (:func:`_metis_on_threads`); a file it does not take goes to the scanner, whose checks name
    the line."""
    edges = _metis_on_threads(data)
    return edges if edges is not None else _metis_by_scanner(data, file)


@numba.njit(cache=True, nogil=True)
def _sorted_metis_rows(thread, ranges, line_first, values, num_vertices, lead, stride, weight_at, entry_first,
                       neighbors, weights, longest, kept, failed):
    """Vertices ranges[thread] .. ranges[thread + 1] - 1 of a METIS file's vertex lines (line_first int64[n + 1],
    values int64: ``lead`` numbers, then neighbours 1..n, each followed by its weight where ``stride`` is 2):
    their lists copied to neighbors int32 (0-based) and weights float64 from entry_first[u] on and ordered there;
    kept[u + 1] = u's neighbours above u. failed[0] = 1 where a vertex weight (at ``weight_at``, -1: none) or an
    edge weight is negative, a neighbour is out of range or u itself, or a list names a neighbour twice."""
    keys = np.empty(longest, dtype=np.int64)
    scratch_weights = np.empty(longest, dtype=np.float64)
    for u in range(ranges[thread], ranges[thread + 1]):
        first = line_first[u]
        if weight_at >= 0 and values[first + weight_at] < 0:
            failed[0] = 1
            return
        place = entry_first[u]
        above = 0
        for p in range(first + lead, line_first[u + 1], stride):
            v = values[p] - 1
            weight = values[p + 1] if stride == 2 else 1
            if v < 0 or v >= num_vertices or v == u or weight < 0:
                failed[0] = 1
                return
            neighbors[place] = v
            weights[place] = weight
            above += v > u
            place += 1
        order_row(neighbors, weights, entry_first[u], place, keys, scratch_weights)
        for p in range(entry_first[u] + 1, place):
            if neighbors[p] == neighbors[p - 1]:
                failed[0] = 1
                return
        kept[u + 1] = above


@numba.njit(cache=True, nogil=True)
def _metis_edges_above(thread, ranges, line_first, values, lead, stride, entry_first, neighbors, weights,
                       kept_first, sources, targets, edge_weights, failed):
    """Each edge once, from its lower end's line, in the file's order: sources, targets int64 (0-based),
    edge_weights float64 (1 without edge weights). failed[0] = 1 where the upper end's ordered list
    (:func:`_sorted_metis_rows`) does not name the lower end with the same weight."""
    for u in range(ranges[thread], ranges[thread + 1]):
        place = kept_first[u]
        for p in range(line_first[u] + lead, line_first[u + 1], stride):
            v = values[p] - 1
            weight = values[p + 1] if stride == 2 else 1
            low = entry_first[v] + np.searchsorted(neighbors[entry_first[v]:entry_first[v + 1]], u)
            if low == entry_first[v + 1] or neighbors[low] != u or weights[low] != weight:
                failed[0] = 1
                return
            if v > u:
                sources[place] = u
                targets[place] = v
                edge_weights[place] = weight
                place += 1


def _metis_on_threads(data: bytes, threads: int | None = None) -> EdgeList | None:
    """:func:`parse_metis` of a well-formed file whose lists name each neighbour once, by
    :func:`.lines.read_integer_lines` and the checks above on threads; None for anything else."""
    words, begin = first_words(data, b"%")
    if not 2 <= len(words) <= 4 or not all(word.isdigit() for word in words):
        return None
    num_vertices, num_edges = int(words[0]), int(words[1])
    fmt = int(words[2]) if len(words) >= 3 else 0
    if num_vertices > INT32_MAX or fmt not in FMT_CODES:
        return None
    has_sizes, has_vertex_weights, has_edge_weights = fmt // 100 == 1, (fmt // 10) % 10 == 1, fmt % 10 == 1
    if len(words) == 4 and (not has_vertex_weights or int(words[3]) != 1):
        return None
    lines = read_integer_lines(data, begin, b"%", BLANK, threads)
    if lines is None or lines[0].shape[0] - 1 < num_vertices or lines[0][-1] != lines[0][num_vertices]:
        return None
    line_first, values = lines[0][:num_vertices + 1], lines[1]
    lead, stride = int(has_sizes) + int(has_vertex_weights), 2 if has_edge_weights else 1
    counts = np.diff(line_first) - lead
    if counts.size and (counts.min() < 0 or np.any(counts % stride)) or int(counts.sum()) != 2 * num_edges * stride:
        return None
    entry_first = np.zeros(num_vertices + 1, dtype=np.int64)
    np.cumsum(counts // stride, out=entry_first[1:])
    parts = threads or threads_for(values.shape[0], EDGES_PER_THREAD)
    ranges = balanced_rows(line_first, parts)
    neighbors = np.empty(entry_first[-1], dtype=np.int32)
    weights = np.empty(entry_first[-1], dtype=np.float64)
    longest = int((counts // stride).max()) if num_vertices else 0
    kept = np.zeros(num_vertices + 1, dtype=np.int64)
    failed = np.zeros(1, dtype=np.int64)
    on_threads(_sorted_metis_rows, parts, ranges, line_first, values, num_vertices, lead, stride,
               int(has_sizes) if has_vertex_weights else -1, entry_first, neighbors, weights, longest, kept, failed)
    if failed[0]:
        return None
    kept_first = np.cumsum(kept)
    sources = np.empty(kept_first[-1], dtype=np.int64)
    targets = np.empty(kept_first[-1], dtype=np.int64)
    edge_weights = np.empty(kept_first[-1], dtype=np.float64)
    on_threads(_metis_edges_above, parts, ranges, line_first, values, lead, stride, entry_first, neighbors, weights,
               kept_first, sources, targets, edge_weights, failed)
    if failed[0]:
        return None
    vertex_weights = values[line_first[:-1] + int(has_sizes)] if has_vertex_weights else None
    return EdgeList(num_vertices, sources, targets, edge_weights, vertex_weights, has_edge_weights)


def _metis_by_scanner(data: bytes, file: str) -> EdgeList:
    """:func:`parse_metis` by the scanner, every check naming its line."""
    tokens = tokenize(data, file, comment_chars=b"%", keep_blank=True)
    counts = tokens.counts()
    first = int(np.argmax(counts > 0)) if np.any(counts > 0) else tokens.num_lines
    if first >= tokens.num_lines:
        raise InputError("empty file: expected the header 'vertices edges [fmt [ncon]]'", file, 1)
    header_line = int(tokens.line_number[first])
    header = tokens.require_int(int(tokens.line_first[first]), int(tokens.line_first[first + 1]), file,
                                "integers in the header")
    if header.shape[0] not in (2, 3, 4):
        raise InputError(f"header must be 'vertices edges [fmt [ncon]]', found {header.shape[0]} numbers",
                         file, header_line)
    num_vertices = _check_count(int(header[0]), "vertices", file, header_line)
    num_edges = int(header[1])
    if num_edges < 0:
        raise InputError(f"number of edges {num_edges} is negative", file, header_line)
    fmt = int(header[2]) if header.shape[0] >= 3 else 0
    if fmt not in FMT_CODES:
        raise InputError(f"unknown fmt code {fmt} (expected 0, 1, 10, 11, 100, 101, 110 or 111)", file, header_line)
    has_sizes, has_vertex_weights, has_edge_weights = fmt // 100 == 1, (fmt // 10) % 10 == 1, fmt % 10 == 1
    ncon = int(header[3]) if header.shape[0] == 4 else (1 if has_vertex_weights else 0)
    if header.shape[0] == 4 and not has_vertex_weights:
        raise InputError("ncon given but fmt declares no vertex weights", file, header_line)
    if ncon > 1:
        raise InputError(f"multi-constraint vertex weights (ncon={ncon}) are not supported", file, header_line)
    lines = np.arange(first + 1, tokens.num_lines)
    if lines.shape[0] < num_vertices:
        raise InputError(f"header says {num_vertices} vertices, found {lines.shape[0]} vertex lines", file,
                         int(tokens.line_number[-1]))
    extra = lines[num_vertices:]
    nonblank_extra = extra[counts[extra] > 0]
    if nonblank_extra.size:
        raise InputError(f"more vertex lines than the header's {num_vertices}", file,
                         int(tokens.line_number[nonblank_extra[0]]))
    lines = lines[:num_vertices]
    begin, end = (int(tokens.line_first[first + 1]), int(tokens.line_first[first + 1 + num_vertices])) \
        if num_vertices else (0, 0)
    values = tokens.require_int(begin, end, file, "an integer")
    line_counts = counts[lines]
    lead = int(has_sizes) + ncon
    stride = 2 if has_edge_weights else 1
    short = np.flatnonzero((line_counts < lead) | ((line_counts - lead) % stride != 0))
    if short.size:
        raise InputError("vertex line has the wrong number of entries for fmt " f"{fmt}", file,
                         int(tokens.line_number[lines[short[0]]]))
    offsets = np.zeros(num_vertices + 1, dtype=np.int64)
    np.cumsum(line_counts, out=offsets[1:])
    is_lead = np.zeros(values.shape[0], dtype=np.bool_)
    row_of = np.repeat(np.arange(num_vertices, dtype=np.int64), line_counts)
    position = np.arange(values.shape[0], dtype=np.int64) - offsets[row_of]
    is_lead[position < lead] = True
    vertex_weights = None
    if has_vertex_weights:
        vertex_weights = values[offsets[:-1] + int(has_sizes)]
        bad = np.flatnonzero(vertex_weights < 0)
        if bad.size:
            raise InputError(f"negative vertex weight {vertex_weights[bad[0]]}", file,
                             int(tokens.line_number[lines[bad[0]]]))
    body = ~is_lead
    body_rows = row_of[body]
    body_values = values[body]
    if has_edge_weights:
        neighbors, weights = body_values[0::2], body_values[1::2].astype(np.float64)
        rows = body_rows[0::2]
        bad = np.flatnonzero(weights < 0)
        if bad.size:
            raise InputError(f"negative edge weight {int(weights[bad[0]])}", file,
                             int(tokens.line_number[lines[rows[bad[0]]]]))
    else:
        neighbors, rows = body_values, body_rows
        weights = np.ones(neighbors.shape[0], dtype=np.float64)
    bad = np.flatnonzero((neighbors < 1) | (neighbors > num_vertices))
    if bad.size:
        raise InputError(f"neighbour {neighbors[bad[0]]} is out of range 1..{num_vertices}", file,
                         int(tokens.line_number[lines[rows[bad[0]]]]))
    neighbors = neighbors - 1
    loops = np.flatnonzero(neighbors == rows)
    if loops.size:
        raise InputError(f"self loop on vertex {rows[loops[0]] + 1}", file, int(tokens.line_number[lines[rows[loops[0]]]]))
    if neighbors.shape[0] != 2 * num_edges:
        raise InputError(f"header says {num_edges} edges, the adjacency lists hold {neighbors.shape[0]} entries "
                         f"(expected {2 * num_edges})", file, header_line)
    _check_symmetric(rows, neighbors, weights, num_vertices, file, tokens, lines)
    keep = rows < neighbors
    return EdgeList(num_vertices, rows[keep], neighbors[keep], weights[keep], vertex_weights, has_edge_weights)


def _check_symmetric(rows, neighbors, weights, num_vertices, file, tokens: Tokens, lines) -> None:
    forward = rows * num_vertices + neighbors
    backward = neighbors * num_vertices + rows
    order_f = np.argsort(forward, kind="stable")
    order_b = np.argsort(backward, kind="stable")
    mismatch = (forward[order_f] != backward[order_b]) | (weights[order_f] != weights[order_b])
    if np.any(mismatch):
        where = order_f[int(np.argmax(mismatch))]
        u, v = int(rows[where]), int(neighbors[where])
        raise InputError(f"edge {u + 1}-{v + 1} is not listed the same way at vertex {v + 1} "
                         "(METIS needs both directions, with equal weights, once each)", file,
                         int(tokens.line_number[lines[u]]))


def write_metis(graph: Graph, path: str) -> None:
    """METIS ``.graph``; edge weights must be integers; fmt chosen by which weights differ from one."""
    weights = graph.edge_weights
    if np.any(weights != np.round(weights)) or np.any(weights < 0):
        raise InputError("METIS .graph needs non-negative integer edge weights", path)
    has_edge_weights = bool(np.any(weights != 1))
    has_vertex_weights = bool(np.any(graph.vertex_weights != 1))
    fmt = (10 if has_vertex_weights else 0) + (1 if has_edge_weights else 0)
    if has_edge_weights:
        entries = np.empty(2 * graph.neighbors.shape[0], dtype=np.int64)
        entries[0::2] = graph.neighbors.astype(np.int64) + 1
        entries[1::2] = weights.astype(np.int64)
        offsets = 2 * graph.offsets
    else:
        entries, offsets = graph.neighbors.astype(np.int64) + 1, graph.offsets
    with atomic_output(path, binary=True) as handle:
        handle.write((f"{graph.num_vertices} {graph.num_edges}" + (f" {fmt:03d}" if fmt else "") + "\n").encode())
        write_rows(handle, offsets, entries, 0, graph.vertex_weights if has_vertex_weights else None)


# --------------------------------------------------------------------------------------------- DIMACS
def parse_dimacs(data: bytes, file: str) -> EdgeList:
    """DIMACS shortest-path ``.gr``: ``c`` comments, ``p sp n m``, then m arcs ``a u v w`` (1-based)."""
    tokens = tokenize(data, file, comment_chars=b"c", allow_tags=True)
    if tokens.num_lines == 0:
        raise InputError("empty file: expected the problem line 'p sp vertices arcs'", file, 1)
    if tokens.line_tag[0] != ord("p"):
        raise InputError("expected the problem line 'p sp vertices arcs' first", file, int(tokens.line_number[0]))
    header = tokens.require_int(0, int(tokens.line_first[1]), file, "integers in the problem line")
    if header.shape[0] != 2:
        raise InputError("problem line must be 'p sp vertices arcs'", file, int(tokens.line_number[0]))
    num_vertices = _check_count(int(header[0]), "vertices", file, int(tokens.line_number[0]))
    num_arcs = int(header[1])
    tags = tokens.line_tag[1:]
    bad = np.flatnonzero(tags != ord("a"))
    if bad.size:
        raise InputError("expected an arc line 'a u v w'", file, int(tokens.line_number[1 + bad[0]]))
    wrong = np.flatnonzero(tokens.counts()[1:] != 3)
    if wrong.size:
        raise InputError("arc line must be 'a u v w'", file, int(tokens.line_number[1 + wrong[0]]))
    if tokens.num_lines - 1 != num_arcs:
        raise InputError(f"problem line says {num_arcs} arcs, found {tokens.num_lines - 1}", file,
                         int(tokens.line_number[-1]))
    starts = tokens.line_first[1:-1]
    sources, targets = _integer_ids(tokens, starts, file)
    ends = np.empty(2 * num_arcs, dtype=np.int64)
    ends[0::2], ends[1::2] = sources, targets
    bad = np.flatnonzero((ends < 1) | (ends > num_vertices))
    if bad.size:
        raise InputError(f"vertex {ends[bad[0]]} is out of range 1..{num_vertices}", file,
                         int(tokens.line_number[1 + bad[0] // 2]))
    return EdgeList(num_vertices, sources - 1, targets - 1, tokens.values[starts + 2].astype(np.float64), None, True)


def _integer_ids(tokens: Tokens, starts: np.ndarray, file: str):
    """The first two tokens of each line at ``starts`` as int64 endpoint ids."""
    positions = np.concatenate([starts, starts + 1])
    bad = np.flatnonzero(~tokens.is_int[positions])
    if bad.size:
        token = int(positions[bad[0]])
        raise InputError(f"vertex id must be an integer, found {tokens.values[token]!r}", file,
                         tokens.line_of_token(token))
    return tokens.values[starts].astype(np.int64), tokens.values[starts + 1].astype(np.int64)


# ---------------------------------------------------------------------------------------- edge lists
def parse_edgelist(data: bytes, file: str) -> EdgeList:
    """``u v [w]`` per line, separated by blanks or commas, ``#``/``%`` comments, 0-based ids.

    Vertices are 0 .. max id; ids never named are isolated vertices. Read on threads
    (:func:`.lines.read_lines`); a file it does not take goes to the scanner, whose checks name the line.
    """
    edges = _edgelist_on_threads(data)
    return edges if edges is not None else _edgelist_by_scanner(data, file)


def _edgelist_on_threads(data: bytes, threads: int | None = None) -> EdgeList | None:
    """:func:`parse_edgelist` of a well-formed file by :func:`.lines.read_lines`, None for anything else."""
    lines = read_lines(data, 0, b"#%", COMMA, fewest=2, most=3, first_limit=INT32_MAX, second_limit=INT32_MAX,
                       threads=threads)
    if lines is None:
        return None
    sources, targets, weights, with_weight = lines
    num_vertices = int(max(sources.max(), targets.max())) + 1 if sources.size else 0
    return EdgeList(num_vertices, sources, targets, weights, None, with_weight > 0)


def _edgelist_by_scanner(data: bytes, file: str) -> EdgeList:
    """:func:`parse_edgelist` by the scanner, every check naming its line."""
    tokens = tokenize(data, file, comment_chars=b"#%", separator=b",")
    counts = tokens.counts()
    wrong = np.flatnonzero((counts < 2) | (counts > 3))
    if wrong.size:
        raise InputError(f"expected 'u v [weight]', found {counts[wrong[0]]} numbers", file,
                         int(tokens.line_number[wrong[0]]))
    starts = tokens.line_first[:-1]
    weighted = bool(np.any(counts == 3))
    sources, targets = _integer_ids(tokens, starts, file)
    ids = np.concatenate([sources, targets])
    if ids.size and ids.min() < 0:
        position = int(np.argmin(ids)) % max(sources.shape[0], 1)
        raise InputError(f"vertex id {ids.min()} is negative", file, int(tokens.line_number[position]))
    if ids.size and ids.max() >= INT32_MAX:
        position = int(np.argmax(ids)) % max(sources.shape[0], 1)
        raise InputError(f"vertex id {ids.max()} is too large", file, int(tokens.line_number[position]))
    weights = np.ones(sources.shape[0], dtype=np.float64)
    if weighted:
        has = counts == 3
        weights[has] = tokens.values[starts[has] + 2]
    num_vertices = int(ids.max()) + 1 if ids.size else 0
    return EdgeList(num_vertices, sources, targets, weights, None, weighted)


def write_edgelist(sources, targets, weights, path: str) -> None:
    """``u v w`` lines, 0-based; integer weights written as integers."""
    sources, targets = np.asarray(sources, np.int64), np.asarray(targets, np.int64)
    with atomic_output(path, binary=True) as handle:
        if weights is None:
            pairs = np.empty(2 * sources.shape[0], dtype=np.int64)
            pairs[0::2], pairs[1::2] = sources, targets
            write_rows(handle, np.arange(0, pairs.shape[0] + 1, 2, dtype=np.int64), pairs)
            return
        weights = np.asarray(weights)
        integral = weights.dtype.kind in "iu" or bool(np.all(weights == np.round(weights)))
        if integral:
            triples = np.empty(3 * sources.shape[0], dtype=np.int64)
            triples[0::3], triples[1::3], triples[2::3] = sources, targets, weights.astype(np.int64)
            write_rows(handle, np.arange(0, triples.shape[0] + 1, 3, dtype=np.int64), triples)
        else:
            for start in range(0, sources.shape[0], 1 << 20):
                stop = start + (1 << 20)
                lines = [f"{u} {v} {w!r}\n" for u, v, w in
                         zip(sources[start:stop].tolist(), targets[start:stop].tolist(), weights[start:stop].tolist())]
                handle.write("".join(lines).encode())
