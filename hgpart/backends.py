"""The two backends of the V-cycle's per-level steps, with the same interface: :class:`HostBackend` (numba njit
on host arrays) and :class:`DeviceBackend` (numba.cuda kernels and CuPy on device arrays). Each extends the
coarsening steps of its place (:mod:`hgpart.coarsening.backends`: the map, the contraction, carrying labels
to the coarse level, moving arrays) with the refinement steps (the balance check, the rebalancer, the Jet
rounds); both give the same results array for array. The host's label propagation and FM run on host arrays
only. The driver (:mod:`hgpart.multilevel`) asks :mod:`hgpart.policy` which backend runs what.

The GPU path's CPU twin uses :class:`HostBackend` where the GPU path uses the device: the same partition
without a GPU (the tests compare them).
"""

from __future__ import annotations

import numpy as np

from .coarsening.backends import DeviceCoarsening, HostCoarsening
from .errors import DeviceMemoryError, InputError
from .hypergraph import Hypergraph, scatter_sum


class HostBackend(HostCoarsening):
    """Per-level steps on host (numpy) arrays: the coarsening steps, and the refinement steps below."""

    @staticmethod
    def balanced(level: Hypergraph, blocks, k: int, max_block_weights) -> bool:
        return bool((scatter_sum(blocks, level.vertex_weights, k) <= max_block_weights).all())

    @staticmethod
    def rebalance(level: Hypergraph, blocks, k: int, max_block_weights, cut_objective: bool, movable):
        """The GPU rebalancer's CPU twin (:func:`.refinement.jet.rebalance_rounds`): a new partition."""
        from .refinement.gains import compute_pin_counts
        from .refinement.jet import REBALANCE_ROUNDS, rebalance_rounds

        blocks = np.array(blocks, dtype=np.int32)
        movable = np.ones(level.num_vertices, dtype=np.bool_) if movable is None else np.asarray(movable, np.bool_)
        pin_counts = compute_pin_counts(level.net_offsets, level.pin_vertices, blocks, k)
        rebalance_rounds(level.net_offsets, level.pin_vertices, level.vertex_offsets, level.incident_nets,
                         level.net_weights, level.vertex_weights, blocks, pin_counts,
                         scatter_sum(blocks, level.vertex_weights, k), np.asarray(max_block_weights, dtype=np.int64),
                         k, movable, cut_objective, REBALANCE_ROUNDS)
        return blocks

    @staticmethod
    def jet(level: Hypergraph, blocks, k: int, max_block_weights, rounds: int, cut_objective: bool, movable,
            tolerance: float):
        from .refinement.jet import jet_refine

        return jet_refine(level, blocks, k, max_block_weights, rounds, cut_objective, movable, tolerance)


class DeviceBackend(DeviceCoarsening):
    """Per-level steps on the GPU: the coarsening steps, and the refinement steps below."""

    @staticmethod
    def balanced(level: Hypergraph, blocks, k: int, max_block_weights) -> bool:
        from .refinement.gpu import balanced_on_device

        return balanced_on_device(blocks, level.vertex_weights, k, max_block_weights)

    @staticmethod
    def rebalance(level: Hypergraph, blocks, k: int, max_block_weights, cut_objective: bool, movable):
        from .refinement.gpu import rebalance_device

        return rebalance_device(level, blocks, k, max_block_weights, cut_objective, movable)[0]

    @staticmethod
    def jet(level: Hypergraph, blocks, k: int, max_block_weights, rounds: int, cut_objective: bool, movable,
            tolerance: float):
        from .refinement.gpu import refine_device

        return refine_device(level, blocks, k, max_block_weights, rounds, cut_objective, movable, tolerance)


HOST_BACKEND = HostBackend()
DEVICE_BACKEND = DeviceBackend()


def backends_for(path: str, twin: bool = False) -> dict:
    """The backend for each place of :mod:`hgpart.policy` (``host``, ``device``): the GPU path's ``device`` is
    the GPU, or with ``twin`` the host (the GPU path's CPU twin)."""
    device = DEVICE_BACKEND if path == "gpu" and not twin else HOST_BACKEND
    return {"host": HOST_BACKEND, "device": device}


class DeviceMemory:
    """The GPU path's memory: checks at the start that the pin counts Phi(e, b) of the input (4 bytes per net and
    block) fit, turns a failed allocation into one :class:`~hgpart.errors.DeviceMemoryError`, and reports the
    peak of the arrays held at once (``peak``, bytes)."""

    def __init__(self, hypergraph: Hypergraph, k: int):
        from .refinement.gpu import MAX_K

        if k > MAX_K:
            raise InputError(f"-k {k}: the GPU path refines at most {MAX_K} blocks; use --device cpu")
        self.what = f"{hypergraph.num_pins} pins, {hypergraph.num_nets} nets, k={k}"
        self.phi_bytes = 4 * hypergraph.num_nets * k
        self.peak = 0

    def __enter__(self):
        from .cuda.arrays import free_device_bytes, reset_device_memory_peak

        free = free_device_bytes()
        if free is not None and self.phi_bytes > free:
            raise DeviceMemoryError(f"the GPU has {free / 1e9:.1f} GB free, but the pin counts of {self.what} alone "
                                    f"take {self.phi_bytes / 1e9:.1f} GB; use --device cpu")
        reset_device_memory_peak()
        return self

    def __exit__(self, kind, error, traceback):
        from .cuda.arrays import device_memory_peak, is_out_of_memory

        self.peak = device_memory_peak()
        if error is not None and is_out_of_memory(error):
            raise DeviceMemoryError(f"the GPU ran out of memory on {self.what}; use --device cpu") from None
        return False
