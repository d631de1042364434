"""Descriptive statistics of a hypergraph (min, Q1, median, Q3, max, mean), as in Table II of
L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015."""

from __future__ import annotations

import numpy as np

from .hypergraph import Hypergraph


def distribution(values: np.ndarray) -> dict:
    """min, q1, median, q3, max, mean of an integer array (zeros for an empty one)."""
    if values.size == 0:
        return {"min": 0, "q1": 0.0, "median": 0.0, "q3": 0.0, "max": 0, "mean": 0.0}
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return {"min": int(values.min()), "q1": float(q1), "median": float(median), "q3": float(q3),
            "max": int(values.max()), "mean": float(values.mean())}


def hypergraph_info(hypergraph: Hypergraph) -> dict:
    """Sizes, total weights and the degree / net-size distributions."""
    sizes = hypergraph.net_sizes()
    return {
        "vertices": hypergraph.num_vertices,
        "nets": hypergraph.num_nets,
        "pins": hypergraph.num_pins,
        "total_vertex_weight": hypergraph.total_vertex_weight,
        "total_net_weight": int(hypergraph.net_weights.sum()),
        "empty_nets": int(np.count_nonzero(sizes == 0)),
        "single_pin_nets": int(np.count_nonzero(sizes == 1)),
        "isolated_vertices": int(np.count_nonzero(hypergraph.vertex_degrees() == 0)),
        "vertex_degree": distribution(hypergraph.vertex_degrees()),
        "net_size": distribution(sizes),
    }
