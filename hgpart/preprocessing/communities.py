"""Community detection before coarsening: the communities of the hypergraph's star expansion, found by
hgpart's own modularity clustering (:mod:`hgpart.graphs.clustering`) on the device that holds the levels.

Coarsening then never merges vertices of different communities, which keeps the coarse levels true to the
structure of the input (T. Heuer and S. Schlag, "Improving Coarsening Schemes for Hypergraph Partitioning by
Exploiting Community Structure", SEA 2017; Mt-KaHyPar runs Louvain there). The clustering is that of
B. O. Fagginger Auer and R. H. Bisseling, "Graph Coarsening and Clustering on the GPU", 2012, with local
moving: on the GPU path it runs on the device, on the CPU path its njit twin runs, with the same result.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from ..config import CommunityConfig
from ..hypergraph import Hypergraph
from .common import WEIGHTINGS, weighting_code


def is_mesh_graph(hypergraph: Hypergraph) -> bool:
    """Whether ``hypergraph`` is a mesh graph in Mt-KaHyPar's sense (its preprocessing skips community detection
    there): every net has two pins, the vertex degrees' standard deviation is at most half their mean, and at
    most one vertex in a thousand has more than four times the mean degree. The two graphs of ``../shared/data``
    (4elt, fe_body) are; its SAT, circuit and matrix hypergraphs are not."""
    if hypergraph.num_nets == 0 or hypergraph.num_vertices == 0 or hypergraph.num_pins != 2 * hypergraph.num_nets:
        return False  # not a graph, told in O(1): most inputs pay nothing for the test
    if not np.all(hypergraph.net_sizes() == 2):
        return False
    degrees = hypergraph.vertex_degrees().astype(np.float64)
    mean = degrees.mean()
    if degrees.std() > mean / 2:
        return False
    return int(np.count_nonzero(degrees > 4 * mean)) <= hypergraph.num_vertices // 1000


@dataclass
class Communities:
    """The communities of a hypergraph's vertices.

    Attributes
    ----------
    labels : int32[num_vertices]
        Community of each vertex, 0..count-1; a numpy array, or a device array when found on the GPU.
    count : int
    modularity : float
        Of the clustering of the star expansion (nets included).
    seconds : float
    """

    labels: object
    count: int
    modularity: float
    seconds: float


def detect_communities(hypergraph: Hypergraph, config: CommunityConfig = CommunityConfig(),
                       device: str = "cpu", seed: int | None = None) -> Communities:
    """The communities of ``hypergraph``'s vertices (see the module docstring).

    Parameters
    ----------
    hypergraph : Hypergraph
        On the host for ``device="cpu"``, on the device (:meth:`Hypergraph.to_device`) for ``"gpu"``.
    config : CommunityConfig
    device : {"cpu", "gpu"}
        Where the star expansion is built and clustered; both give the same labels.
    seed : int, optional
        Salts the clustering in place of ``config.clustering.seed``: a partition passes its own, so that its
        seeds find different communities, and with them different hierarchies, as Mt-KaHyPar's runs do.
    """
    from ..graphs.clustering.driver import cluster_level

    started = time.perf_counter()
    if config.edge_weights not in WEIGHTINGS:
        raise ValueError(f"unknown community edge weights {config.edge_weights!r}")
    code = weighting_code(config.edge_weights, hypergraph.num_vertices, hypergraph.num_nets, config.density_threshold)
    if device == "gpu":
        from ..cuda.arrays import xp
        from .device import star_expansion

        array = xp()
    else:
        from .host import star_expansion

        array = np
    level = star_expansion(hypergraph, code, config.max_net_size)
    clustering = config.clustering if seed is None else replace(config.clustering, seed=seed)
    clusters, modularity = cluster_level(level, clustering, device)
    labels = clusters[:hypergraph.num_vertices]
    used = array.zeros(int(clusters.shape[0]) + 1, dtype=np.int32)
    used[labels] = 1
    numbers = array.cumsum(used, dtype=np.int32) - 1
    count = int(numbers[-1]) + 1
    return Communities(numbers[labels].astype(np.int32), count, modularity, time.perf_counter() - started)
