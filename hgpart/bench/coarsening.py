"""``hgpart bench coarsen``: one coarsening level on the CPU path and on the GPU, side by side in one run.

For each instance: seconds to compute the coarsening map (rating + proposal rounds + joining; seed 000
Table III measures this step) and to contract it (Eq. 3-4), medians over repeats, the GPU's effective
bandwidth (bytes of pins and incidence read by one proposal round per second of the map), and whether
both devices produced the same map and coarse hypergraph.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from .. import generate
from ..coarsening.coarsener import max_cluster_weight
from ..coarsening.contraction import contract
from ..coarsening.matching import compute_clustering
from ..io import read_hypergraph, strip_gz

PAPER_TABLE_III = [("flickr", 58.69, 876.51), ("wikipedia", 50.42, 810.60), ("stanford", 145.54, 65.06),
                   ("stanford-berkeley", 625.60, 40.79), ("synthetic 700k", 262.0, 32240.0)]


def _instance(name: str, size: int | None):
    if size is None:
        return os.path.basename(strip_gz(name)), read_hypergraph(name)
    return f"{name} {size:,}", generate.HYPERGRAPH_GENERATORS[name](size, seed=1)


def _median_seconds(function, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def run_coarsen_bench(instances, devices, config, k: int, repeat: int, reporter=None) -> list[dict]:
    """Rows of measurements; ``instances`` holds (path, None) or (generator class, vertices)."""
    if "gpu" in devices:
        from ..coarsening.gpu_contraction import contract_device, level_to_device, level_to_host
        from ..coarsening.gpu_matching import compute_clustering_gpu
        from numba import cuda
    rows = []
    for name, size in instances:
        label, hypergraph = _instance(name, size)
        max_weight = max_cluster_weight(hypergraph, k, config)
        row = {"instance": label, "vertices": hypergraph.num_vertices, "pins": hypergraph.num_pins}
        compute_clustering(hypergraph, max_weight, config)  # compile / warm caches before timing
        row["cpu map s"], (cluster, count) = _median_seconds(
            lambda: compute_clustering(hypergraph, max_weight, config), repeat)
        row["cpu contract s"], coarse = _median_seconds(lambda: contract(hypergraph, cluster, count), repeat)
        if "gpu" in devices:
            compute_clustering_gpu(hypergraph, max_weight, config)

            def gpu_map():
                result = compute_clustering_gpu(hypergraph, max_weight, config)
                cuda.synchronize()
                return result

            row["gpu map s"], (gpu_cluster, gpu_count) = _median_seconds(gpu_map, repeat)
            device_level = level_to_device(hypergraph)

            def gpu_contract():
                result = contract_device(device_level, gpu_cluster, gpu_count)
                cuda.synchronize()
                return result

            row["gpu contract s"], gpu_coarse = _median_seconds(gpu_contract, repeat)
            gpu_coarse = level_to_host(gpu_coarse)
            row["map speedup"] = row["cpu map s"] / row["gpu map s"]
            row["contract speedup"] = row["cpu contract s"] / row["gpu contract s"]
            bytes_read = 4 * 2 * hypergraph.num_pins + 8 * (hypergraph.num_vertices + hypergraph.num_nets)
            row["gpu GB/s"] = bytes_read / row["gpu map s"] / 1e9
            row["agree"] = bool(gpu_count == count and np.array_equal(gpu_cluster, cluster) and
                                np.array_equal(gpu_coarse.pin_vertices, coarse.pin_vertices) and
                                np.array_equal(gpu_coarse.net_weights, coarse.net_weights))
        rows.append(row)
        if reporter is not None:
            reporter.log(f"{label}: " + ", ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                                                  for key, value in row.items() if key != "instance"))
    return rows
