"""The plan of a triangle count, the same on both devices: vertices ranked by (degree, id), the oriented
graph N+ by rank, and the tasks (chunks of 32 input entries) cut into those for a warp and those for a
block. The functions take numpy or CuPy arrays (``xp``); the orientation itself is a step of each twin
(:func:`.host.orient_cpu`, :meth:`.device.DeviceSteps.orient`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...config import TriangleConfig
from .common import CHUNK, GROUP_CHUNKS


@dataclass
class TrianglePlan:
    """The oriented graph and its tasks, on one device (numpy or CuPy arrays).

    Attributes
    ----------
    offsets, neighbors : int64[n + 1], int32[2m]
        The input graph (symmetric CSR, original ids): a chunk's entries are read from here.
    rank, order : int32[n]
        rank[v] = position of v in the order (degree, id); order = its inverse.
    out_offsets, out_neighbors : int64[n + 1], int32[m]
        N+(x) by rank, members as ranks, ascending.
    chunk_first : int64[n + 1]
        Chunks of rank x are chunk_first[x] .. chunk_first[x + 1] - 1: ceil(d(x) / 32), 32 entries of its
        input row each (the GPU also orients the edges chunk by chunk).
    chunk_vertex : int32[num_chunks]
        The rank each chunk belongs to.
    small_chunks : int64[s]
        Chunks of ranks with in-neighbours and 1 to ``config.small_out`` out-neighbours (a warp each); the
        chunks of ranks without in- or out-neighbours hold no triangle and are left out.
    large_groups : int64[g]
        First chunks of the groups of up to 32 consecutive chunks of the other ranks (a block each).
    config : TriangleConfig
    """

    offsets: object
    neighbors: object
    rank: object
    order: object
    out_offsets: object
    out_neighbors: object
    chunk_first: object
    chunk_vertex: object
    small_chunks: object
    large_groups: object
    config: TriangleConfig

    @property
    def num_chunks(self) -> int:
        return int(self.chunk_vertex.shape[0])


def rank_vertices(degrees, xp=np):
    """(rank, order) as int32 arrays: vertices sorted by (degree, id); numpy or CuPy (``xp``). The degrees
    are sorted as int32 (a degree is below n): half the radix passes of int64 keys."""
    order = xp.argsort(degrees.astype(np.int32), kind="stable").astype(np.int32)
    rank = xp.empty_like(order)
    rank[order] = xp.arange(order.shape[0], dtype=np.int32)
    return rank, order


def plan_chunks(rank_degrees, xp=np):
    """(chunk_first, chunk_vertex) of :class:`TrianglePlan`: ceil(d / 32) chunks per rank, given the degrees
    by rank; numpy or CuPy."""
    n = rank_degrees.shape[0]
    chunk_first = xp.zeros(n + 1, dtype=np.int64)
    chunk_first[1:] = xp.cumsum((rank_degrees + CHUNK - 1) // CHUNK)
    chunks = xp.arange(int(chunk_first[-1]), dtype=np.int64)
    # a binary search per chunk: on the GPU several times faster than a histogram and a scan
    chunk_vertex = (xp.searchsorted(chunk_first, chunks, side="right") - 1).astype(np.int32)
    return chunk_first, chunk_vertex


def plan_tasks(rank_degrees, out_offsets, chunk_first, chunk_vertex, config: TriangleConfig, xp=np):
    """(small_chunks, large_groups) of :class:`TrianglePlan`: the chunks of ranks with both in- and out-
    neighbours, given the degrees by rank; numpy or CuPy."""
    out_degrees = out_offsets[1:] - out_offsets[:-1]
    active = (out_degrees > 0) & (rank_degrees > out_degrees)
    kind = (active * (1 + (out_degrees > config.small_out))).astype(np.int8)[chunk_vertex]  # 0 idle, 1 small, 2 large
    small_chunks = xp.flatnonzero(kind == 1)
    large_chunks = xp.flatnonzero(kind == 2)
    large_groups = large_chunks[(large_chunks - chunk_first[chunk_vertex[large_chunks]]) % GROUP_CHUNKS == 0]
    return small_chunks, large_groups

