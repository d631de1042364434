"""hMetis ``.hgr`` hypergraphs (fmt 0, 1, 10, 11) and hMetis fix files.

Header ``m n [fmt]``; then m net lines ``[w(e)] pin pin ...`` (1-based pins); with fmt 10/11, n lines
of vertex weights. ``%`` starts a comment line; blank lines are ignored, so an empty net can only be
written with a weight (fmt 1/11).
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..hypergraph import INT32_MAX, Hypergraph
from .files import atomic_output
from .text import write_rows
from .tokens import tokenize

FORMAT_CODES = {0: (False, False), 1: (True, False), 10: (False, True), 11: (True, True)}


def parse_hgr(data: bytes, file: str) -> Hypergraph:
    tokens = tokenize(data, file, comment_chars=b"%")
    if tokens.num_lines == 0:
        raise InputError("empty file: expected the header 'nets vertices [fmt]'", file, 1)
    header = tokens.require_int(0, int(tokens.line_first[1]), file, "integers in the header")
    header_line = int(tokens.line_number[0])
    if header.shape[0] not in (2, 3):
        raise InputError(f"header must be 'nets vertices [fmt]', found {header.shape[0]} numbers", file, header_line)
    num_nets, num_vertices = int(header[0]), int(header[1])
    fmt = int(header[2]) if header.shape[0] == 3 else 0
    if fmt not in FORMAT_CODES:
        raise InputError(f"unknown fmt code {fmt} (expected 0, 1, 10 or 11)", file, header_line)
    for count, what in ((num_nets, "nets"), (num_vertices, "vertices")):
        if count < 0 or count > INT32_MAX:
            raise InputError(f"number of {what} {count} is out of range", file, header_line)
    has_net_weights, has_vertex_weights = FORMAT_CODES[fmt]
    expected_lines = 1 + num_nets + (num_vertices if has_vertex_weights else 0)
    if tokens.num_lines < expected_lines:
        found = tokens.num_lines - 1
        if found < num_nets:
            raise InputError(f"header says {num_nets} nets, found {found} net lines", file,
                             int(tokens.line_number[-1]) if found else header_line)
        raise InputError(f"fmt {fmt} needs {num_vertices} vertex-weight lines, found {found - num_nets}",
                         file, int(tokens.line_number[-1]))
    if tokens.num_lines > expected_lines:
        extra = expected_lines
        what = "net lines" if not has_vertex_weights else "net and vertex-weight lines"
        raise InputError(f"more lines than the header says ({num_nets} nets, fmt {fmt}): unexpected {what[:-1]}",
                         file, int(tokens.line_number[extra]))
    net_begin, net_end = int(tokens.line_first[1]), int(tokens.line_first[1 + num_nets])
    net_values = tokens.require_int(net_begin, net_end, file, "an integer pin id")
    counts = tokens.counts()[1:1 + num_nets]
    if has_net_weights:
        empty = np.flatnonzero(counts == 0)
        if empty.size:
            raise InputError("net line holds no weight", file, int(tokens.line_number[1 + empty[0]]))
    offsets = np.zeros(num_nets + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    if has_net_weights:
        net_weights = net_values[offsets[:-1]]
        bad = np.flatnonzero(net_weights < 0)
        if bad.size:
            raise InputError(f"negative net weight {net_weights[bad[0]]}", file, int(tokens.line_number[1 + bad[0]]))
        keep = np.ones(net_values.shape[0], dtype=np.bool_)
        keep[offsets[:-1]] = False
        pins = net_values[keep]
        offsets = offsets - np.arange(num_nets + 1, dtype=np.int64)
    else:
        net_weights, pins = None, net_values
    bad = np.flatnonzero((pins < 1) | (pins > num_vertices))
    if bad.size:
        net = int(np.searchsorted(offsets, bad[0], side="right")) - 1
        raise InputError(f"pin {pins[bad[0]]} is out of range 1..{num_vertices}", file,
                         int(tokens.line_number[1 + net]))
    vertex_weights = None
    if has_vertex_weights:
        first = 1 + num_nets
        wrong = np.flatnonzero(tokens.counts()[first:] != 1)
        if wrong.size:
            raise InputError("a vertex-weight line must hold exactly one number", file,
                             int(tokens.line_number[first + wrong[0]]))
        vertex_weights = tokens.require_int(int(tokens.line_first[first]), int(tokens.line_first[-1]), file,
                                            "an integer vertex weight")
        bad = np.flatnonzero(vertex_weights < 0)
        if bad.size:
            raise InputError(f"negative vertex weight {vertex_weights[bad[0]]}", file,
                             int(tokens.line_number[first + bad[0]]))
    return Hypergraph.from_pins(num_vertices, offsets, pins, vertex_weights, net_weights, one_based=True)


def write_hgr(hypergraph: Hypergraph, path: str) -> None:
    """Write ``.hgr``; fmt 1/10/11 only where weights differ from one, or where a net is empty (a blank line
    would be skipped by readers; with its weight the line is kept)."""
    has_net_weights = bool(np.any(hypergraph.net_weights != 1)) or bool(np.any(np.diff(hypergraph.net_offsets) == 0))
    has_vertex_weights = bool(np.any(hypergraph.vertex_weights != 1))
    fmt = (1 if has_net_weights else 0) + (10 if has_vertex_weights else 0)
    with atomic_output(path, binary=True) as handle:
        header = f"{hypergraph.num_nets} {hypergraph.num_vertices}" + (f" {fmt}" if fmt else "") + "\n"
        handle.write(header.encode())
        write_rows(handle, hypergraph.net_offsets, hypergraph.pin_vertices, 1,
                   hypergraph.net_weights if has_net_weights else None)
        if has_vertex_weights:
            write_rows(handle, np.arange(hypergraph.num_vertices + 1), hypergraph.vertex_weights)
