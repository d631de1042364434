"""What both twins of the Borůvka steps share: the sentinel of "no edge", hooking one supervertex, and the
hash slot of a supervertex pair.

The steps follow V. Vineet, P. Harish, S. Patidar and P. J. Narayanan, "Fast Minimum Spanning Tree for
Large Graphs on the GPU", High Performance Graphics 2009 (see :mod:`.driver`).

:func:`hook_vertex` and :func:`pair_slot` are plain Python: :mod:`.host` compiles them with ``numba.njit``
and :mod:`.device` as CUDA device functions, so both devices run the same code. numba's disk cache checks
only the file of each cached function, so it does not see an edit here: after changing one of them, remove
the ``__pycache__`` of this package (or touch the modules that compile it).
"""

from __future__ import annotations

import numba
import numpy as np

NO_EDGE = np.iinfo(np.int32).max  # least edge of a supervertex without edges (larger than any position)
PAIR_HASH = 0x9E3779B97F4A7C15 - (1 << 64)  # golden-ratio multiplicative hash, as a (wrapping) int64


def hook_vertex(least, edges, parent, in_forest, vertex):
    """Step 2 for one supervertex: parent[vertex] = its successor (the other end of its lightest edge; itself
    without one), but itself for the smaller end of a 2-cycle; a non-root marks its edge in ``in_forest``.

    Parameters
    ----------
    least : int32[n]
        Position of each supervertex's lightest edge (step 1), NO_EDGE for none.
    edges : int32[3, E]
        Source, target and input id of each current edge.
    parent : int32[n]
        Written at ``vertex``.
    in_forest : uint8[m]
        Forest flags by input edge id.
    vertex : int
    """
    edge = least[vertex]
    other = vertex if edge == NO_EDGE else edges[0, edge] + edges[1, edge] - vertex
    if other > vertex:  # other has an edge (this one): is its successor vertex?
        back = least[other]
        if edges[0, back] + edges[1, back] - other == vertex:
            other = vertex
    parent[vertex] = other
    if other != vertex:
        in_forest[edges[2, edge]] = 1


def pair_slot(source, target, num_vertices, shift, mask):
    """The int64 key of the supervertex pair {source, target} and its home slot in a table of mask + 1 =
    2^(64 - shift) slots (the top bits of a multiplicative hash): (key, slot)."""
    key = numba.int64(min(source, target)) * num_vertices + max(source, target)
    return key, ((key * PAIR_HASH) >> shift) & mask
