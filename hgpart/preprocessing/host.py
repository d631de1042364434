"""The star expansion of a hypergraph as a clustering level on the host (numba njit, parallel over rows): the
CPU twin of :mod:`.device`, running the same per-row steps (:func:`.common.row_steps`). Weights as
:mod:`.common` says."""

from __future__ import annotations

import numba
import numpy as np

from ..hypergraph import Hypergraph
from . import common

count_row, fill_row = common.row_steps(numba.njit(inline="always"))


@numba.njit(parallel=True, cache=True)
def _row_sizes(net_offsets, vertex_offsets, incident_nets, net_weights, max_net_size, code):
    """(int64[n + m] kept entries per row, the total of the kept pins' numerators)."""
    rows = vertex_offsets.shape[0] - 1 + net_offsets.shape[0] - 1
    sizes = np.zeros(rows, dtype=np.int64)
    totals = np.zeros(rows, dtype=np.int64)
    for row in numba.prange(rows):
        sizes[row], totals[row] = count_row(row, net_offsets, vertex_offsets, incident_nets, net_weights,
                                            max_net_size, code)
    return sizes, totals.sum()


@numba.njit(parallel=True, cache=True)
def _fill(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size, code, shift,
          offsets):
    """(int32 neighbours, int64 weights, int64 ζ) of the rows whose starts are ``offsets``."""
    rows = offsets.shape[0] - 1
    neighbors = np.empty(offsets[-1], dtype=np.int32)
    weights = np.empty(offsets[-1], dtype=np.int64)
    zeta = np.zeros(rows, dtype=np.int64)
    for row in numba.prange(rows):
        zeta[row] = fill_row(row, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                             max_net_size, code, shift, offsets, neighbors, weights)
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
