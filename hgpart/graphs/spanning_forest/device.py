"""The Borůvka steps on the GPU: numba.cuda kernels for the segmented minimum, hooking, pointer jumping and
contraction; CuPy for the one sort, the scans and the gathers. The twin of :mod:`.host`: same arguments,
same results.

The steps follow V. Vineet, P. Harish, S. Patidar and P. J. Narayanan, "Fast Minimum Spanning Tree for
Large Graphs on the GPU", High Performance Graphics 2009 (see :mod:`.driver`). Few kernels with few
arguments (each array passed costs a launch tens of microseconds): the edges travel as one int32[3, E]
array.

The edges stay in the order (weight, edge id), so an edge's position orders it as its rank does and the
segmented minimum of Vineet et al. (2009) is one edge-parallel pass of ``atomic.min`` on positions (read
first, so a hub's many edges cost few atomics): a supervertex with a million edges costs what a million
supervertices with one edge each cost. Pointer jumping runs in place in one kernel (every write points
further up the same tree, so no round needs the host). Parallel edges are reduced without a sort: each
supervertex pair claims a slot of a hash table (``atomic.cas``) and the least position per slot
(``atomic.min``) survives. The order is total, so every result equals the CPU twin's.

The kernels' arrays: ``edges`` int32[3, E] (source, target, input id); ``least``, ``parent``, ``label``
int32[n] for the n supervertices; ``in_forest`` uint8[m] by input id; ``keep``, ``positions``, ``slots``
int32[E]; ``keys`` int64[2^bits] and ``first`` int32[2^bits] (the pair table); ``kept_edges`` int32[3, E'].
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64

from ...cuda.arrays import cached_kernel, grid, kernel_view, to_device, to_host, xp
from . import common
from .common import NO_EDGE

NO_SLOT = -1

hook_vertex = cuda.jit(device=True, inline=True)(common.hook_vertex)
pair_slot = cuda.jit(device=True, inline=True)(common.pair_slot)


@cached_kernel
def least_edge_kernel(edges, least):
    """least[v] = min position of an edge at v (step 1); edges int32[3, E]."""
    for edge in range(cuda.grid(1), edges.shape[1], cuda.gridsize(1)):
        position = int32(edge)
        for end in range(2):
            vertex = edges[end, edge]
            if position < least[vertex]:
                cuda.atomic.min(least, vertex, position)


@cached_kernel
def hook_kernel(least, edges, parent, in_forest):
    """parent[v] = v's successor, v for the smaller end of a 2-cycle; non-roots mark their edge (step 2)."""
    for vertex in range(cuda.grid(1), least.shape[0], cuda.gridsize(1)):
        hook_vertex(least, edges, parent, in_forest, vertex)


@cached_kernel
def jump_kernel(parent):
    """parent[v] = the root of v's tree, in place (step 3): v's pointer moves to its grandparent until that is
    a root; other threads' writes only shorten the way."""
    for vertex in range(cuda.grid(1), parent.shape[0], cuda.gridsize(1)):
        above = parent[vertex]
        while True:
            top = parent[above]
            if top == above:
                break
            parent[vertex] = top
            above = top


@cached_kernel
def relabel_kernel(edges, label, keep):
    """Edges renamed to supervertices in place; keep[e] = 0 for a self edge (step 5)."""
    for edge in range(cuda.grid(1), edges.shape[1], cuda.gridsize(1)):
        source = label[edges[0, edge]]
        target = label[edges[1, edge]]
        edges[0, edge] = source
        edges[1, edge] = target
        keep[edge] = 1 if source != target else 0


@cached_kernel
def relabel_pair_kernel(edges, label, num_vertices, keys, shift, first, slots):
    """Edges renamed in place; slots[e] = the hash slot of e's supervertex pair (claimed by compare-and-swap,
    linear probing; 2^(64 - shift) slots, the top bits of a multiplicative hash), NO_SLOT for a self edge;
    first[slot] = the least position of the pair's edges."""
    mask = keys.shape[0] - 1
    for edge in range(cuda.grid(1), edges.shape[1], cuda.gridsize(1)):
        source = label[edges[0, edge]]
        target = label[edges[1, edge]]
        edges[0, edge] = source
        edges[1, edge] = target
        if source == target:
            slots[edge] = NO_SLOT
            continue
        key, slot = pair_slot(source, target, num_vertices, shift, mask)
        while True:
            seen = cuda.atomic.cas(keys, slot, int64(-1), key)
            if seen == -1 or seen == key:
                break
            slot = (slot + 1) & mask
        slots[edge] = slot
        cuda.atomic.min(first, slot, int32(edge))


@cached_kernel
def first_of_pair_kernel(slots, first, keep):
    """keep[e] = 1 only for the first edge of its pair."""
    for edge in range(cuda.grid(1), slots.shape[0], cuda.gridsize(1)):
        slot = slots[edge]
        keep[edge] = 1 if slot != NO_SLOT and first[slot] == edge else 0


@cached_kernel
def compact_kernel(positions, edges, kept_edges):
    """The kept edges (where the inclusive scan ``positions`` steps up) at their positions, in order."""
    for edge in range(cuda.grid(1), edges.shape[1], cuda.gridsize(1)):
        at = positions[edge] - 1
        if edge == 0 and at == 0 or edge > 0 and at == positions[edge - 1]:
            for row in range(3):
                kept_edges[row, at] = edges[row, edge]


def _launch(kernel, count, *arguments):
    if count:
        kernel[grid(count)](*[kernel_view(a) if hasattr(a, "shape") else a for a in arguments])


class DeviceSteps:
    """The array module and steps of the GPU path (CuPy; numpy under the CUDA simulator)."""

    @staticmethod
    def module():
        return xp()

    @staticmethod
    def least_edges(edges, num_vertices):
        least = xp().full(num_vertices, NO_EDGE, dtype=np.int32)
        _launch(least_edge_kernel, edges.shape[1], edges, least)
        return least

    @staticmethod
    def hook(least, edges, in_forest):
        parent = xp().empty(least.shape[0], dtype=np.int32)
        _launch(hook_kernel, least.shape[0], least, edges, parent, in_forest)
        return parent

    @staticmethod
    def find_roots(parent):
        _launch(jump_kernel, parent.shape[0], parent)

    @staticmethod
    def contract(edges, label, num_vertices, reduce_pairs):
        """Relabel in place, drop self edges and (when ``reduce_pairs``) all but the first edge of each pair."""
        array = xp()
        count = int(edges.shape[1])
        keep = array.empty(count, dtype=np.int32)
        if reduce_pairs:
            bits = max(1, (2 * count - 1).bit_length())
            keys = array.full(1 << bits, -1, dtype=np.int64)
            first = array.full(1 << bits, NO_EDGE, dtype=np.int32)
            slots = array.empty(count, dtype=np.int32)
            _launch(relabel_pair_kernel, count, edges, label, num_vertices, keys, 64 - bits, first, slots)
            _launch(first_of_pair_kernel, count, slots, first, keep)
        else:
            _launch(relabel_kernel, count, edges, label, keep)
        positions = array.cumsum(keep, dtype=np.int32)
        kept_edges = array.empty((3, int(positions[-1]) if count else 0), dtype=np.int32)
        _launch(compact_kernel, count, positions, edges, kept_edges)
        return kept_edges

    @staticmethod
    def to_host(array):
        return to_host(array)

    @staticmethod
    def to_device(array):
        return to_device(array)

    @staticmethod
    def argsort(keys):
        """Stable."""
        return xp().argsort(keys, kind="stable")

    @staticmethod
    def synchronize():
        if xp() is not np:
            cuda.synchronize()
