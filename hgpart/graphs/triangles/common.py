"""What both twins of the triangle code share: the task sizes and the helpers for reading a chunk, finding a
run of N+(u) and writing a triangle.

The method follows T. M. Low, V. N. Rao, M. Lee, D. Popovici, F. Franchetti and S. McMillan, "First look:
linear algebra-based triangle counting without matrix multiplication", IEEE HPEC 2017, as extended to
enumeration by a report on parallel triangle enumeration (see :mod:`.driver`).

:func:`put_sorted`, :func:`run_bounds` and :func:`chunk_entries` are plain Python: :mod:`.host` compiles
them with ``numba.njit`` and the GPU modules as CUDA device functions, so both devices run the same code.
numba's disk cache checks only the file of each cached function, so it does not see an edit here: after
changing one of them, remove the ``__pycache__`` of this package (or touch the modules that compile it).
"""

from __future__ import annotations

WARP = 32
CHUNK = WARP  # entries of a vertex's row per task: one per lane
GROUP_CHUNKS = 32  # chunks of a vertex with many out-neighbours per block (its warps take them in turn)


def put_sorted(triangles, position, a, b, c):
    """Row ``position`` of triangles (int32[t, 3]) = (a, b, c) in ascending order."""
    if a > b:
        a, b = b, a
    if b > c:
        b, c = c, b
    if a > b:
        a, b = b, a
    triangles[position, 0] = a
    triangles[position, 1] = b
    triangles[position, 2] = c


def run_bounds(out_offsets, out_neighbors, u, low, high):
    """The run of N+(u) (ascending) with members in [low, high], as (start, length), by binary searches;
    out_offsets int64[n + 1], out_neighbors int32[m]. The run's end takes a search only when N+(u)'s last
    member lies above ``high``: mostly it does not (x's out-neighbours reach the top ranks; docs/tuning.md,
    "Triangles"), and a read of that member saves the search's chain of dependent reads."""
    start = out_offsets[u]
    stop = out_offsets[u + 1]
    last = stop
    while start < stop:  # the first member >= low
        middle = (start + stop) >> 1
        if out_neighbors[middle] < low:
            start = middle + 1
        else:
            stop = middle
    if start == last or out_neighbors[last - 1] <= high:
        return start, last - start
    end = start
    stop = last
    while end < stop:  # the first member > high
        middle = (end + stop) >> 1
        if out_neighbors[middle] <= high:
            end = middle + 1
        else:
            stop = middle
    return start, end - start


def chunk_entries(chunk, chunk_vertex, chunk_first, order, offsets):
    """(x, first entry, entry stop) of a chunk: CHUNK entries of the input row of rank x. chunk_vertex
    int32[num_chunks], chunk_first int64[n + 1], order int32[n], offsets int64[n + 1] (see
    :class:`.plan.TrianglePlan`)."""
    x = chunk_vertex[chunk]
    vertex = order[x]
    first = offsets[vertex] + (chunk - chunk_first[x]) * CHUNK
    return x, first, min(first + CHUNK, offsets[vertex + 1])
