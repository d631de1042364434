"""Peers for the bench: Mt-KaHyPar (python package ``mtkahypar``) and KaHyPar (``kahypar``).

Each peer reads an hMetis file (the bench writes one when the input is in another format or gzipped)
and returns (km1, cut, imbalance, seconds, partition). Missing peers are reported, never fatal.
"""

from __future__ import annotations

import time

import numpy as np

PEERS = ("mtkahypar", "kahypar")
_MTKAHYPAR = {}


def available(peer: str) -> str | None:
    """None if the peer can run, else why not."""
    try:
        __import__(peer)
    except ImportError:
        return f"{peer} is not installed (pip install '.[peers]')"
    return None


def run_mtkahypar(hgr_path: str, k: int, epsilon: float, objective: str, seed: int, threads: int):
    import mtkahypar

    if threads not in _MTKAHYPAR:  # the library may be initialised once per process
        _MTKAHYPAR.clear()
        _MTKAHYPAR[threads] = mtkahypar.initialize(threads, False)
    initializer = _MTKAHYPAR[threads]
    context = initializer.context_from_preset(mtkahypar.PresetType.DEFAULT)
    context.set_partitioning_parameters(k, epsilon, mtkahypar.Objective.KM1 if objective == "km1"
                                        else mtkahypar.Objective.CUT)
    context.logging = False
    mtkahypar.set_seed(seed)
    hypergraph = initializer.hypergraph_from_file(hgr_path, context, mtkahypar.FileFormat.HMETIS)
    started = time.perf_counter()
    partitioned = hypergraph.partition(context)
    seconds = time.perf_counter() - started
    partition = np.array([partitioned.block_id(v) for v in range(hypergraph.num_nodes())], dtype=np.int32)
    return partition, seconds


def run_kahypar(hgr_path: str, k: int, epsilon: float, objective: str, seed: int, threads: int, config_path: str):
    import kahypar

    from ..io import read_hypergraph

    hypergraph = read_hypergraph(hgr_path)
    peer_graph = kahypar.Hypergraph(hypergraph.num_vertices, hypergraph.num_nets,
                                    hypergraph.net_offsets.astype(np.uint64).tolist(),
                                    hypergraph.pin_vertices.astype(np.uint64).tolist(), k,
                                    hypergraph.net_weights.astype(np.int64).tolist(),
                                    hypergraph.vertex_weights.astype(np.int64).tolist())
    context = kahypar.Context()
    context.loadINIconfiguration(config_path)
    context.setK(k)
    context.setEpsilon(epsilon)
    context.setSeed(seed)
    context.suppressOutput(True)
    started = time.perf_counter()
    kahypar.partition(peer_graph, context)
    seconds = time.perf_counter() - started
    partition = np.array([peer_graph.blockID(v) for v in range(hypergraph.num_vertices)], dtype=np.int32)
    return partition, seconds
