"""``hgpart bench triangles``: exact triangle counting on the GPU and the njit CPU twin, side by side.

Per graph and device: seconds from the file, from a host graph (the upload included) and with the graph on
the device (orienting the edges and counting; :func:`hgpart.bench.end_to_end`), the counting alone, input edges
per second of each, and whether the devices agree (count and every per-vertex count). Medians over repeats.
"""

from __future__ import annotations

import os
import statistics

import numpy as np

from ..graphs.triangles import count_triangles
from . import auto_choice, end_to_end, graph_instance, log_row

SNAP_GRAPHS = ["CA-GrQc.txt.gz", "as20000102.txt.gz", "email-Eu-core.csv.gz", "facebook_combined.txt.gz",
               "p2p-Gnutella05.txt.gz", "wiki-Vote.txt.gz"]


def default_instances(folder: str = os.path.join("..", "shared", "data")) -> list[str]:
    return [os.path.join(folder, name) for name in SNAP_GRAPHS if os.path.exists(os.path.join(folder, name))]


def run_triangle_bench(specs, devices, repeat: int = 3, reporter=None) -> list[dict]:
    rows = []
    for spec in specs:
        name, graph, read = graph_instance(spec)
        row = {"instance": name, "vertices": graph.num_vertices, "edges": graph.num_edges, "read s": read}
        results = {}
        for device in devices:
            if device == "gpu":  # untimed: CuPy compiles its sorts' and reductions' kernels per size at first use
                count_triangles(graph, device)
            runs = [count_triangles(graph, device) for _ in range(repeat)]
            results[device] = runs[-1]
            end_to_end(row, device, statistics.median(r.seconds["orient"] + r.seconds["count"] for r in runs),
                       statistics.median(r.seconds["total"] for r in runs))
            row[f"{device} count s"] = statistics.median(r.seconds["count"] for r in runs)
        auto_choice(row, "triangles")
        first = results[devices[0]]
        row["triangles"] = first.count
        row["average clustering"] = first.average_clustering
        row["transitivity"] = first.transitivity
        if len(devices) > 1:
            row["devices agree"] = all(r.count == first.count and np.array_equal(r.per_vertex, first.per_vertex)
                                       for r in results.values())
            row["gpu / cpu speed-up"] = row["cpu host s"] / max(row["gpu host s"], 1e-12)
        log_row(reporter, name, row)
        rows.append(row)
    return rows
