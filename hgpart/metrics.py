"""Partition quality (numba, parallel over nets): cut, km1, soed, block weights, imbalance.

For a net e with weight w(e) spanning lambda(e) blocks: cut adds w(e) when lambda(e) > 1, km1 adds
w(e) * (lambda(e) - 1), soed adds w(e) * lambda(e) when lambda(e) > 1. Nets with fewer than two pins
never count.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numba
import numpy as np

from .errors import InputError
from .hypergraph import Hypergraph, scatter_sum
from .parallel import pick


@numba.njit(cache=True, nogil=True)
def _connectivity_chunk(c, chunk, net_offsets, pin_vertices, partition, k, result):
    """lambda(e) for the nets of chunk c, with a bit set of k bits."""
    seen = np.zeros((k + 63) // 64, dtype=np.uint64)
    for e in range(c * chunk, min(net_offsets.shape[0] - 1, (c + 1) * chunk)):
        count = 0
        for p in range(net_offsets[e], net_offsets[e + 1]):
            b = partition[pin_vertices[p]]
            word, bit = b >> 6, np.uint64(1) << np.uint64(b & 63)
            if not seen[word] & bit:
                seen[word] |= bit
                count += 1
        for p in range(net_offsets[e], net_offsets[e + 1]):
            seen[partition[pin_vertices[p]] >> 6] = 0
        result[e] = count


@numba.njit(cache=True, nogil=True)
def _connectivity_serial(net_offsets, pin_vertices, partition, k):
    result = np.zeros(net_offsets.shape[0] - 1, dtype=np.int32)
    _connectivity_chunk(0, net_offsets.shape[0] - 1, net_offsets, pin_vertices, partition, k, result)
    return result


@numba.njit(cache=True, parallel=True)
def _connectivity_parallel(net_offsets, pin_vertices, partition, k):
    num_nets = net_offsets.shape[0] - 1
    result = np.zeros(num_nets, dtype=np.int32)
    chunk = 1024
    for c in numba.prange((num_nets + chunk - 1) // chunk):
        _connectivity_chunk(c, chunk, net_offsets, pin_vertices, partition, k, result)
    return result


def connectivity(net_offsets, pin_vertices, partition, k):
    """lambda(e), the number of blocks each net touches: int32[num_nets]."""
    return pick(pin_vertices.shape[0], _connectivity_serial, _connectivity_parallel)(net_offsets, pin_vertices,
                                                                                   partition, k)


@numba.njit(cache=True, nogil=True)
def _objectives(lambdas, net_weights):
    cut = 0
    km1 = 0
    soed = 0
    for e in range(lambdas.shape[0]):
        if lambdas[e] > 1:
            cut += net_weights[e]
            km1 += net_weights[e] * (lambdas[e] - 1)
            soed += net_weights[e] * lambdas[e]
    return cut, km1, soed


def block_weights(vertex_weights: np.ndarray, partition: np.ndarray, k: int) -> np.ndarray:
    """int64[k]: total vertex weight per block."""
    return scatter_sum(partition, vertex_weights, k)


def max_block_weight(total_weight: int, k: int, epsilon: float) -> int:
    """The balance bound L = floor((1 + eps) * ceil(total / k))."""
    return int(np.floor((1.0 + epsilon) * -(-total_weight // k) + 1e-9))


def imbalance(weights: np.ndarray, total_weight: int, k: int) -> float:
    """max block weight / ceil(total / k) - 1 (0 for a perfectly balanced partition)."""
    perfect = -(-total_weight // k)
    return float(weights.max()) / perfect - 1.0 if perfect > 0 else 0.0


@dataclass(frozen=True)
class PartitionMetrics:
    """Quality of a k-way partition; ``imbalance`` = max block weight / ceil(total / k) - 1."""

    k: int
    km1: int
    cut: int
    soed: int
    imbalance: float
    block_weights: tuple
    max_block_weight: int
    balanced: bool | None = None

    def to_dict(self) -> dict:
        values = asdict(self)
        values["block_weights"] = list(self.block_weights)
        return values


def check_partition(hypergraph: Hypergraph, partition, k: int | None = None) -> tuple[np.ndarray, int]:
    """Validate a partition vector; returns (int32 partition, k). k defaults to max id + 1."""
    partition = np.asarray(partition)
    if partition.shape != (hypergraph.num_vertices,):
        raise InputError(f"partition has {partition.shape[0] if partition.ndim else 0} entries, "
                         f"the hypergraph {hypergraph.num_vertices} vertices")
    if k is None:
        k = int(partition.max()) + 1 if partition.size else 1
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if partition.size and (partition.min() < 0 or partition.max() >= k):
        raise InputError(f"block id {int(partition.max()) if partition.max() >= k else int(partition.min())} "
                         f"is out of range 0..{k - 1}")
    return np.ascontiguousarray(partition, dtype=np.int32), k


def evaluate(hypergraph: Hypergraph, partition, k: int | None = None, epsilon: float | None = None) -> PartitionMetrics:
    """All metrics of ``partition`` (int[num_vertices], blocks in [0, k)).

    With ``epsilon``, ``balanced`` says whether max block weight <= (1 + eps) * ceil(total / k).
    """
    partition, k = check_partition(hypergraph, partition, k)
    lambdas = connectivity(hypergraph.net_offsets, hypergraph.pin_vertices, partition, k)
    cut, km1, soed = _objectives(lambdas, hypergraph.net_weights)
    weights = block_weights(hypergraph.vertex_weights, partition, k)
    total = hypergraph.total_vertex_weight
    balanced = None if epsilon is None else bool(weights.max() <= max_block_weight(total, k, epsilon))
    return PartitionMetrics(k, int(km1), int(cut), int(soed), imbalance(weights, total, k),
                            tuple(int(w) for w in weights), int(weights.max()), balanced)


def km1(hypergraph: Hypergraph, partition, k: int | None = None) -> int:
    return evaluate(hypergraph, partition, k).km1


def cut(hypergraph: Hypergraph, partition, k: int | None = None) -> int:
    return evaluate(hypergraph, partition, k).cut
