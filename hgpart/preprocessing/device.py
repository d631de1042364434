"""The star expansion of a device hypergraph as a clustering level on the GPU, without a trip to the host: the
twin of :mod:`.host` (the same per-row steps, :func:`.common.row_steps`), one thread a row."""

from __future__ import annotations

import numpy as np
from numba import cuda

from ..cuda.arrays import cached_kernel, grid, launch, xp
from ..hypergraph import Hypergraph
from . import common

count_row, fill_row = common.row_steps(cuda.jit(device=True, inline=True))


@cached_kernel
def row_sizes_kernel(net_offsets, vertex_offsets, incident_nets, net_weights, max_net_size, code, sizes, totals):
    """sizes[r] = kept entries of row r, totals[r] = the numerators of its kept pins (int64[n + m] each)."""
    for row in range(cuda.grid(1), sizes.shape[0], cuda.gridsize(1)):
        sizes[row], totals[row] = count_row(row, net_offsets, vertex_offsets, incident_nets, net_weights,
                                            max_net_size, code)


@cached_kernel
def fill_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size, code, shift,
                offsets, neighbors, weights, zeta):
    """The neighbours, weights and ζ of every row (rows start at ``offsets``), as :func:`.host._fill`."""
    for row in range(cuda.grid(1), zeta.shape[0], cuda.gridsize(1)):
        zeta[row] = fill_row(row, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                             max_net_size, code, shift, offsets, neighbors, weights)


def star_expansion(hypergraph: Hypergraph, code: int, max_net_size: int) -> dict:
    """The star expansion of a device ``hypergraph`` as a device clustering level (see
    :mod:`hgpart.graphs.clustering.device`): :func:`.host.star_expansion` on the GPU."""
    from ..graphs.clustering.device import level_rows

    array, h = xp(), hypergraph
    n, m = h.num_vertices, h.num_nets
    sizes = array.zeros(n + m, dtype=np.int64)
    totals = array.zeros(n + m, dtype=np.int64)
    arguments = (h.net_offsets, h.vertex_offsets, h.incident_nets, h.net_weights, np.int64(max_net_size),
                 np.int64(code))
    if n + m:
        launch(row_sizes_kernel, grid(n + m), *arguments, sizes, totals)
    offsets = array.zeros(n + m + 1, dtype=np.int64)
    array.cumsum(sizes, out=offsets[1:])
    entries = int(offsets[-1])
    neighbors = array.empty(entries, dtype=np.int32)
    weights = array.empty(entries, dtype=np.int64)
    zeta = array.zeros(n + m, dtype=np.int64)
    shift = common.weight_shift(int(totals.sum()))
    if n + m:
        launch(fill_kernel, grid(n + m), h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
               h.net_weights, np.int64(max_net_size), np.int64(code), np.int64(shift), offsets, neighbors, weights,
               zeta)
    return {"offsets": offsets, "neighbors": neighbors, "weights": weights,
            "loops": array.zeros(n + m, dtype=np.int64), "zeta": zeta, "two_omega": int(zeta.sum()),
            "rows": level_rows(offsets, entries), "loops_total": 0}
