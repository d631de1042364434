"""The Borůvka steps on the host: numpy with numba loops, the CPU twin of :mod:`.device` (same arguments,
same results).

The steps follow V. Vineet, P. Harish, S. Patidar and P. J. Narayanan, "Fast Minimum Spanning Tree for
Large Graphs on the GPU", High Performance Graphics 2009; :mod:`.driver` describes them. Here each is one
sequential pass: the segmented minimum a loop over the edges, pointer jumping a find with path
compression, the pair reduction a hash set filled in edge order.
"""

from __future__ import annotations

import numba
import numpy as np

from . import common
from .common import NO_EDGE

hook_vertex = numba.njit(inline="always")(common.hook_vertex)
pair_slot = numba.njit(inline="always")(common.pair_slot)


@numba.njit(cache=True)
def least_edges(edges, num_vertices):
    """Step 1: the first (lightest) edge at each supervertex, NO_EDGE where none.

    edges int32[3, E] (source, target, input id) -> int32[num_vertices]."""
    least = np.full(num_vertices, NO_EDGE, dtype=np.int32)
    for edge in range(edges.shape[1]):
        for end in range(2):
            if edge < least[edges[end, edge]]:
                least[edges[end, edge]] = edge
    return least


@numba.njit(cache=True)
def hook(least, edges, in_forest):
    """Step 2: each supervertex's parent. least int32[n], edges int32[3, E], in_forest uint8[m] -> int32[n]."""
    parent = np.empty(least.shape[0], dtype=np.int32)
    for vertex in range(least.shape[0]):
        hook_vertex(least, edges, parent, in_forest, vertex)
    return parent


@numba.njit(cache=True)
def find_roots(parent):
    """Step 3: parent[v] = the root of v's tree, in place (find with path compression)."""
    for vertex in range(parent.shape[0]):
        root = vertex
        while parent[root] != root:
            root = parent[root]
        while parent[vertex] != root:
            above = parent[vertex]
            parent[vertex] = root
            vertex = above


@numba.njit(cache=True)
def contract_edges(edges, label, num_vertices, reduce_pairs):
    """Step 5 on the CPU, one pass in order: the edges relabelled, self edges dropped and, when
    ``reduce_pairs``, every edge whose supervertex pair an earlier (lighter) edge already holds (a hash set
    of pairs, as on the GPU). int32[3, E] -> int32[3, E']."""
    count = edges.shape[1]
    kept = np.empty((3, count), dtype=np.int32)
    bits = 1
    while (1 << bits) < 2 * count:
        bits += 1
    pairs = np.full((1 << bits) if reduce_pairs else 1, -1, dtype=np.int64)
    mask = pairs.shape[0] - 1
    found = 0
    for edge in range(count):
        source, target = label[edges[0, edge]], label[edges[1, edge]]
        if source == target:
            continue
        if reduce_pairs:
            key, slot = pair_slot(source, target, num_vertices, 64 - bits, mask)
            while pairs[slot] != -1 and pairs[slot] != key:
                slot = (slot + 1) & mask
            if pairs[slot] == key:
                continue
            pairs[slot] = key
        kept[0, found], kept[1, found], kept[2, found] = source, target, edges[2, edge]
        found += 1
    return kept[:, :found].copy()


class HostSteps:
    """The array module and steps of the CPU twin (numpy and njit), with the attributes of
    :class:`.device.DeviceSteps`."""

    least_edges = staticmethod(least_edges)
    hook = staticmethod(hook)
    find_roots = staticmethod(find_roots)

    @staticmethod
    def module():
        return np

    @staticmethod
    def to_host(array):
        return array

    @staticmethod
    def to_device(array):
        return array

    @staticmethod
    def argsort(keys):
        return np.argsort(keys, kind="stable")

    @staticmethod
    def synchronize():
        pass

    contract = staticmethod(contract_edges)

