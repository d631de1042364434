"""Peers for the bench: Mt-KaHyPar (python package ``mtkahypar``) with its default preset (``mtkahypar``) or its
quality preset (``mtkahypar-quality``: adds flow-based refinement), and KaHyPar (``kahypar``).

Each peer reads an hMetis file (the bench writes one when the input is in another format or gzipped)
and returns (partition, seconds). Missing peers are reported, never fatal. :func:`run_peer` runs a peer in
a child process (``python -m hgpart.bench.peers``), so that its thread pool (TBB) and numba's never share
one process, where Mt-KaHyPar's pool slowed hgpart's later runs (measured in docs/tuning.md, "Benchmarks").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

PEERS = ("mtkahypar", "mtkahypar-quality", "kahypar")
_MTKAHYPAR = {}


def available(peer: str) -> str | None:
    """None if the peer can run, else why not."""
    peer = peer.split("-")[0]
    try:
        __import__(peer)
    except ImportError:
        return f"{peer} is not installed (pip install '.[peers]')"
    return None


def run_mtkahypar(hgr_path: str, k: int, epsilon: float, objective: str, seed: int, threads: int,
                  preset: str = "default"):
    import mtkahypar

    if threads not in _MTKAHYPAR:  # the library may be initialised once per process
        _MTKAHYPAR.clear()
        _MTKAHYPAR[threads] = mtkahypar.initialize(threads, False)
    initializer = _MTKAHYPAR[threads]
    context = initializer.context_from_preset(mtkahypar.PresetType.QUALITY if preset == "quality"
                                              else mtkahypar.PresetType.DEFAULT)
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


def run_peer(peer: str, hgr_path: str, k: int, epsilon: float, objective: str, seed: int, threads: int,
             config_path: str | None = None):
    """(partition int32[n], seconds) of ``peer`` (one of :data:`PEERS`) on the hMetis file, run in a child
    process; raises RuntimeError with the child's one-line error when it fails."""
    with tempfile.TemporaryDirectory() as folder:
        output = os.path.join(folder, "partition.npy")
        arguments = [peer, hgr_path, k, epsilon, objective, seed, threads, config_path or "", output]
        child = subprocess.run([sys.executable, "-m", "hgpart.bench.peers", *map(str, arguments)],
                               capture_output=True, text=True)
        if child.returncode != 0:
            lines = [line for line in child.stderr.splitlines() if line.strip()]
            raise RuntimeError(lines[-1].removeprefix("Error: ") if lines else f"exit status {child.returncode}")
        return np.load(output), json.loads(child.stdout.strip().splitlines()[-1])["seconds"]


def _main(argv) -> int:
    peer, hgr_path, k, epsilon, objective, seed, threads, config_path, output = argv
    try:
        if peer.startswith("mtkahypar"):
            partition, seconds = run_mtkahypar(hgr_path, int(k), float(epsilon), objective, int(seed), int(threads),
                                               "quality" if peer == "mtkahypar-quality" else "default")
        else:
            partition, seconds = run_kahypar(hgr_path, int(k), float(epsilon), objective, int(seed), int(threads),
                                             config_path)
    except Exception as error:  # noqa: BLE001 - the parent reports any failure in one line
        print(f"Error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1
    np.save(output, partition)
    print(json.dumps({"seconds": seconds}))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
