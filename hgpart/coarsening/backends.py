"""The coarsening steps of one level on the host and on the device, with the same interface: the map
(rating, matching, joining), the contraction, carrying labels to the coarse level, and moving arrays and
levels between the places. :func:`.coarsener.build_hierarchy` runs them; :mod:`hgpart.backends` extends
them with the refinement steps."""

from __future__ import annotations

import numpy as np

from ..config import CoarseningConfig
from ..hypergraph import Hypergraph


class HostCoarsening:
    """A level's coarsening steps on host (numpy) arrays (numba njit)."""

    name = "host"

    @staticmethod
    def put(array):
        """A host array as this backend's array (None stays None)."""
        return None if array is None else np.asarray(array)

    @staticmethod
    def get(array):
        """This backend's array on the host."""
        return array

    @staticmethod
    def put_level(hypergraph: Hypergraph) -> Hypergraph:
        return hypergraph

    @staticmethod
    def cluster(level: Hypergraph, max_weight: int, config: CoarseningConfig, merge_key=None):
        """The coarsening map of :func:`.matching.map_level` (a :class:`.matching.LevelMap`)."""
        from .matching import map_level

        return map_level(level, max_weight, config, merge_key)

    @staticmethod
    def contract(level: Hypergraph, level_map) -> Hypergraph:
        """The coarse level of a :class:`.matching.LevelMap` (from its pair level where it has one)."""
        from .contraction import contract

        return contract(*level_map.contraction_input(level), level_map.count)

    @staticmethod
    def carry(values, cluster, num_clusters: int):
        """Per-vertex labels carried to the coarse vertices: the largest of each cluster (-1 = none)."""
        if values is None:
            return None
        coarse = np.full(num_clusters, -1, dtype=values.dtype)
        np.maximum.at(coarse, cluster, values)
        return coarse

    @staticmethod
    def synchronize() -> None:
        pass


class DeviceCoarsening:
    """A level's coarsening steps on the GPU: CuPy arrays (numpy under numba's CUDA simulator)."""

    name = "device"

    @staticmethod
    def put(array):
        from ..cuda.arrays import to_device

        if array is None or _on_device(array):
            return array
        return to_device(np.asarray(array))

    @staticmethod
    def get(array):
        from ..cuda.arrays import to_host

        return to_host(array)

    @staticmethod
    def put_level(hypergraph: Hypergraph) -> Hypergraph:
        return hypergraph.to_device()

    @staticmethod
    def cluster(level: Hypergraph, max_weight: int, config: CoarseningConfig, merge_key=None):
        from .gpu import map_level_device

        return map_level_device(level, max_weight, config, merge_key)

    @staticmethod
    def contract(level: Hypergraph, level_map) -> Hypergraph:
        from .gpu import contract_device

        return contract_device(*level_map.contraction_input(level), level_map.count)

    @staticmethod
    def carry(values, cluster, num_clusters: int):
        if values is None:
            return None
        from ..cuda.arrays import xp
        from ..cuda.primitives import scatter, scatter_max_kernel

        return scatter(scatter_max_kernel, cluster, values, xp().full(num_clusters, -1, dtype=values.dtype))

    @staticmethod
    def synchronize() -> None:
        from numba import cuda

        cuda.synchronize()


HOST_COARSENING = HostCoarsening()
DEVICE_COARSENING = DeviceCoarsening()


def _on_device(array) -> bool:
    return not isinstance(array, np.ndarray) and hasattr(array, "__cuda_array_interface__")
