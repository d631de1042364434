"""``hgpart bench coarsen``: one coarsening level on the CPU path and on the GPU, side by side in one run.

For each instance: seconds to compute the coarsening map (rating + proposal rounds + joining; Table III of
L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015,
measures this step) and to contract it (Eq. 3-4), medians over repeats; the GPU's effective
bandwidth (the bytes one proposal round over all vertices must read, per second of such a round); the
sizes of the work bins; and whether both devices produced the same map and coarse hypergraph.
"""

from __future__ import annotations

import os
import statistics
import time

import numpy as np

from .. import generate
from ..coarsening.coarsener import max_cluster_weight
from ..coarsening.contraction import contract
from ..coarsening.matching import map_level
from ..coarsening.similarity import rating_work
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


def pin_bytes_per_round(hypergraph, config) -> int:
    """Bytes one proposal round over all vertices must read: every incidence (4 B), the pins of every
    rated net once per pin of it (4 B each: sum of |e|^2 over rated nets), offsets and ratings (8 B)."""
    return int(4 * (hypergraph.num_pins + rating_work(hypergraph, config.max_rated_net_size)) +
               8 * (2 * hypergraph.num_vertices + 3 * hypergraph.num_nets))


def run_coarsen_bench(instances, devices, config, k: int, repeat: int, reporter=None, gpu_repeat: int | None = None
                      ) -> list[dict]:
    """Rows of measurements; ``instances`` holds (path, None) or (generator class, vertices). The GPU's
    times are medians of ``gpu_repeat`` runs (default ``repeat``): they take milliseconds where the CPU
    path's take minutes, so more of them steady the medians at no cost.

    GPU times start from the level already on the device (the host-to-device copy of the input is
    reported apart, as ``gpu upload s``) and end when the device is idle again.
    """
    gpu_repeat = gpu_repeat or repeat
    if "gpu" in devices:
        from numba import cuda

        from ..coarsening.gpu import DevicePlan, contract_device, device_net_ratings, map_level_device
        from ..cuda.arrays import to_host, xp
    rows = []
    warmed = False
    for name, size in instances:
        started = time.perf_counter()
        label, hypergraph = _instance(name, size)
        if reporter is not None:
            reporter.log(f"{label}: {hypergraph.num_vertices:,} vertices, {hypergraph.num_pins:,} pins "
                         f"({time.perf_counter() - started:.1f} s to make)")
        max_weight = max_cluster_weight(hypergraph, k, config)
        row = {"instance": label, "vertices": hypergraph.num_vertices, "pins": hypergraph.num_pins}
        if not warmed:  # compile the serial and the parallel CPU kernels before timing (a small instance)
            warm_up = generate.evenly(30000, seed=1)
            warm_map = map_level(warm_up, max_cluster_weight(warm_up, k, config), config)
            contract(*warm_map.contraction_input(warm_up), warm_map.count)
            warmed = True
        row["cpu map s"], level_map = _median_seconds(lambda: map_level(hypergraph, max_weight, config), repeat)
        cluster, count = level_map.cluster, level_map.count
        row["cpu contract s"], coarse = _median_seconds(
            lambda: contract(*level_map.contraction_input(hypergraph), count), repeat)
        if "gpu" in devices:
            def synchronised(function):
                def run():
                    result = function()
                    cuda.synchronize()
                    return result
                return run

            cuda.synchronize()
            row["gpu upload s"], level = _median_seconds(synchronised(lambda: hypergraph.to_device()), 1)
            map_level_device(level, max_weight, config)  # compile and load the kernels
            row["gpu map s"], gpu_map = _median_seconds(
                synchronised(lambda: map_level_device(level, max_weight, config)), gpu_repeat)
            gpu_cluster, gpu_count = gpu_map.cluster, gpu_map.count
            contract_device(*gpu_map.contraction_input(level), gpu_count)
            row["gpu contract s"], gpu_coarse = _median_seconds(
                synchronised(lambda: contract_device(*gpu_map.contraction_input(level), gpu_count)), gpu_repeat)
            ratings, _ = device_net_ratings(level, config.rating == "heavy-edge", config.max_rated_net_size)
            plan = DevicePlan(level, ratings, max_weight, config.weight_penalty)
            x = xp()
            n = hypergraph.num_vertices
            keys, partner, proposals = (x.full(n, -1, dtype=x.int64), x.full(n, -1, dtype=x.int32),
                                        x.full(n, -1, dtype=x.int32))
            row["gpu round s"], _ = _median_seconds(synchronised(
                lambda: plan.propose(keys, level.vertex_weights, partner, proposals, True)), gpu_repeat)
            row["bins"] = [int(c) for c in plan.counts]
            row["map speedup"] = row["cpu map s"] / row["gpu map s"]
            row["contract speedup"] = row["cpu contract s"] / row["gpu contract s"]
            row["level speedup"] = ((row["cpu map s"] + row["cpu contract s"]) /
                                    (row["gpu map s"] + row["gpu contract s"]))
            row["round GB/s"] = pin_bytes_per_round(hypergraph, config) / row["gpu round s"] / 1e9
            gpu_coarse = gpu_coarse.to_host()
            row["agree"] = bool(gpu_count == count and np.array_equal(to_host(gpu_cluster), cluster) and
                                np.array_equal(gpu_coarse.pin_vertices, coarse.pin_vertices) and
                                np.array_equal(gpu_coarse.net_offsets, coarse.net_offsets) and
                                np.array_equal(gpu_coarse.net_weights, coarse.net_weights))
            del level, plan, gpu_coarse, gpu_map
        rows.append(row)
        if reporter is not None:
            reporter.log(f"{label}: " + ", ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                                                  for key, value in row.items() if key != "instance"))
    return rows
