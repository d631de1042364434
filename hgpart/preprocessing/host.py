"""The star expansion of a hypergraph as a clustering level on the host (numba njit, parallel over rows): the
CPU twin of :mod:`.device`, running the same per-row steps (:func:`.common.row_steps`). Weights as
:mod:`.common` says."""

from __future__ import annotations

import numba
import numpy as np

from ..hypergraph import Hypergraph
from ..parallel import claim_chunk, on_threads
from . import common

count_row, fill_row = common.row_steps(numba.njit(inline="always"))


ROW_CHUNK = 1024  # rows a thread takes at a time from a shared counter


@numba.njit(cache=True, nogil=True)
def _row_sizes_worker(t, taken, net_offsets, vertex_offsets, incident_nets, net_weights, max_net_size, code, sizes,
                      totals):
    """Thread t of :func:`_row_sizes`: chunks of ``ROW_CHUNK`` rows from the shared counter ``taken``."""
    while True:
        first, last = claim_chunk(taken, ROW_CHUNK, sizes.shape[0])
        if first == last:
            break
        for row in range(first, last):
            sizes[row], totals[row] = count_row(row, net_offsets, vertex_offsets, incident_nets, net_weights,
                                                max_net_size, code)


def _row_sizes(net_offsets, vertex_offsets, incident_nets, net_weights, max_net_size, code):
    """(int64[n + m] kept entries per row, the total of the kept pins' numerators); rows on numba's threads
    (:func:`hgpart.parallel.on_threads`)."""
    rows = vertex_offsets.shape[0] - 1 + net_offsets.shape[0] - 1
    sizes = np.zeros(rows, dtype=np.int64)
    totals = np.zeros(rows, dtype=np.int64)
    on_threads(_row_sizes_worker, numba.get_num_threads(), np.zeros(1, dtype=np.int64), net_offsets, vertex_offsets,
               incident_nets, net_weights, np.int64(max_net_size), np.int64(code), sizes, totals)
    return sizes, int(totals.sum())


@numba.njit(cache=True, nogil=True)
def _fill_worker(t, taken, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size, code,
                 shift, offsets, neighbors, weights, zeta):
    """Thread t of :func:`_fill`: chunks of ``ROW_CHUNK`` rows from the shared counter ``taken``."""
    while True:
        first, last = claim_chunk(taken, ROW_CHUNK, offsets.shape[0] - 1)
        if first == last:
            break
        for row in range(first, last):
            zeta[row] = fill_row(row, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                                 max_net_size, code, shift, offsets, neighbors, weights)


def _fill(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size, code, shift,
          offsets):
    """(int32 neighbours, int64 weights, int64 ζ) of the rows whose starts are ``offsets``; rows on numba's
    threads."""
    rows = offsets.shape[0] - 1
    neighbors = np.empty(offsets[-1], dtype=np.int32)
    weights = np.empty(offsets[-1], dtype=np.int64)
    zeta = np.zeros(rows, dtype=np.int64)
    on_threads(_fill_worker, numba.get_num_threads(), np.zeros(1, dtype=np.int64), net_offsets, pin_vertices,
               vertex_offsets, incident_nets, net_weights, np.int64(max_net_size), np.int64(code), np.int64(shift),
               offsets, neighbors, weights, zeta)
    return neighbors, weights, zeta


def star_expansion(hypergraph: Hypergraph, code: int, max_net_size: int) -> dict:
    """The star expansion of a host ``hypergraph`` as a clustering level (see
    :mod:`hgpart.graphs.clustering.host`) of n + m nodes, weighted by the model ``code`` (:mod:`.common`)."""
    h = hypergraph
    sizes, total = _row_sizes(h.net_offsets, h.vertex_offsets, h.incident_nets, h.net_weights, max_net_size, code)
    offsets = np.zeros(sizes.shape[0] + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    neighbors, weights, zeta = _fill(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights,
                                     max_net_size, code, common.weight_shift(total), offsets)
    return {"offsets": offsets, "neighbors": neighbors, "weights": weights,
            "loops": np.zeros(sizes.shape[0], dtype=np.int64), "zeta": zeta, "two_omega": np.int64(zeta.sum())}
