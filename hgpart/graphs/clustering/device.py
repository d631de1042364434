"""Modularity clustering on the GPU: the steps of :mod:`.host` as numba.cuda kernels and CuPy primitives, with
the same arguments and the same (integer, exact) results. This module is the GPU's step table for the
driver (:mod:`.driver`); the steps live beside their kernels:

========================  =============================  ========================
step                      GPU                            host twin
========================  =============================  ========================
1-3 matching, centres     :mod:`.device_matching`        :mod:`.host`
4 contraction             :mod:`.device_contraction`     :mod:`.host`
5 local moving            :mod:`.device_moving`          :mod:`.host_moving`
========================  =============================  ========================

The algorithm is that of B. O. Fagginger Auer and R. H. Bisseling, "Graph Coarsening and Clustering on the
GPU", 10th DIMACS Implementation Challenge, 2012, with local moving added.

A level is a dict of device arrays: the keys of a host level (see :mod:`.host`) plus ``rows`` int32[D], the
source vertex of every entry, and ``loops_total``, the sum of ``loops`` (an int on the host).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from ...cuda.arrays import cached_kernel, scalar, to_device, to_host, xp
from ..modularity import integer_level, weight_scale
from . import common
from .device_common import launch_items
from .device_contraction import contract_level
from .device_matching import group_map, match_clusters, satellite_targets
from .device_moving import local_moving, scaled_modularity

__all__ = ["match_clusters", "satellite_targets", "group_map", "contract_level", "local_moving",
           "scaled_modularity", "first_appearance", "graph_level", "identity", "no_targets", "project", "compact",
           "intersect", "to_host", "to_device", "upload_level", "download_level"]


@cached_kernel
def first_vertex_kernel(clusters, first):
    """first[c] = the smallest vertex of cluster c; clusters int32[n], first int32[n] (n beforehand)."""
    for v in range(cuda.grid(1), clusters.shape[0], cuda.gridsize(1)):
        cuda.atomic.min(first, clusters[v], v)


def level_rows(offsets, entries: int):
    """int32[entries]: the row of every entry of a CSR level."""
    array = xp()
    return (array.searchsorted(offsets, array.arange(entries, dtype=np.int64), side="right") - 1).astype(np.int32)


def upload_level(level: dict) -> dict:
    """A host level (see :mod:`.host`) on the device, with its ``rows`` and ``loops_total``."""
    device = {key: to_device(value) for key, value in level.items() if key != "two_omega"}
    device["two_omega"] = int(level["two_omega"])
    device["rows"] = level_rows(device["offsets"], int(level["neighbors"].shape[0]))
    device["loops_total"] = int(level["loops"].sum())
    return device


def download_level(level: dict) -> dict:
    """A device level as a host level (see :mod:`.host`): its arrays copied to the host, without ``rows``."""
    host = {key: to_host(level[key]) for key in ("offsets", "neighbors", "weights", "loops", "zeta")}
    host["two_omega"] = int(level["two_omega"])
    return host


def graph_level(graph) -> tuple[dict, float]:
    """Level 0 of ``graph`` on the device and the weight scale (see
    :func:`hgpart.graphs.modularity.integer_level`). When every weight is 1 only the offsets and neighbours
    travel: the weights (all 1), ζ (the degrees) and the loops (none) are made on the device, the same level
    as the CPU twin's."""
    scale, unit = weight_scale(graph)
    if not unit:
        return upload_level(integer_level(graph, scale)[0]), scale
    array = xp()
    offsets = to_device(np.ascontiguousarray(graph.offsets, dtype=np.int64))
    neighbors = to_device(np.ascontiguousarray(graph.neighbors, dtype=np.int32))
    entries = int(neighbors.shape[0])
    level = {"offsets": offsets, "neighbors": neighbors, "weights": array.ones(entries, dtype=np.int64),
             "loops": array.zeros(graph.num_vertices, dtype=np.int64), "zeta": offsets[1:] - offsets[:-1],
             "two_omega": entries, "rows": level_rows(offsets, entries), "loops_total": 0}
    return level, scale


def identity(n: int):
    return xp().arange(n, dtype=np.int32)


def no_targets(n: int):
    return xp().full(n, -1, dtype=np.int32)


project = common.project  # a gather: the same call on CuPy arrays


def compact(clusters):
    """:func:`.common.compact` on the device."""
    return common.compact(clusters, xp())


def intersect(first, second):
    """:func:`.common.intersect` on the device."""
    return common.intersect(first, second, xp())


def first_appearance(clusters) -> tuple[np.ndarray, int]:
    """:func:`.host.first_appearance` on the device (the smallest vertex of each cluster by atomic minima,
    then a scan): clusters int32[n] on the device -> (int32[n] on the host, count)."""
    array = xp()
    n = int(clusters.shape[0])
    first = array.full(n, n, dtype=np.int32)
    launch_items(first_vertex_kernel, n, clusters, first)
    leader = first[clusters]
    number = array.cumsum(leader == array.arange(n, dtype=np.int32), dtype=np.int32) - 1
    renumbered = number[leader]
    return to_host(renumbered), scalar(number, n - 1) + 1 if n else 0

