"""The public functions of hgpart (re-exported by ``hgpart``): each takes its own types and also
``scipy.sparse`` matrices and ``networkx`` graphs, as the command line takes their file formats.

A hypergraph argument may be a :class:`~hgpart.hypergraph.Hypergraph`, a ``scipy.sparse`` matrix (row-net
model: rows are nets, columns are vertices), a :class:`~hgpart.hypergraph.Graph` or a ``networkx`` graph (each
edge a two-pin net; edge weights, if any, must be integers). A graph argument may be a
:class:`~hgpart.hypergraph.Graph`, a square ``scipy.sparse`` matrix (entry (i, j) is edge {i, j}) or a
``networkx`` graph (nodes numbered in ``G.nodes`` order).

``device`` is ``auto`` (the GPU when numba.cuda sees one and CuPy is installed and the input is large enough
to gain from it, else the CPU: :func:`partition` takes the GPU path from ``policy.auto_gpu_min_pins`` pins, the
graph functions run there from the edges of :class:`hgpart.config.GraphPolicyConfig`), ``cpu`` or ``gpu``.
Clusterings, forests and triangles are the same on both; a partition on the GPU path is that of its CPU twin
(:func:`hgpart.multilevel.gpu_path_on_cpu`), not the CPU path's.
"""

from __future__ import annotations

import numpy as np

from .device import resolve_device
from .errors import InputError
from .hypergraph import Graph, Hypergraph


def as_hypergraph(data) -> Hypergraph:
    """``data`` as a :class:`Hypergraph` (see the module docstring for what it may be)."""
    if isinstance(data, Hypergraph):
        return data
    if isinstance(data, Graph):
        return Hypergraph.from_graph(data)
    if _is_networkx(data):
        return Hypergraph.from_networkx(data)
    if _is_sparse(data):
        return Hypergraph.from_sparse(data)
    raise InputError(f"expected a Hypergraph, a scipy.sparse matrix or a networkx graph, got {type(data).__name__}")


def as_graph(data, merge: str = "sum") -> Graph:
    """``data`` as a :class:`Graph`; ``merge`` combines the weights of parallel edges (a matrix's (i, j) and
    (j, i) are parallel): ``sum``, ``min`` or ``max``."""
    if isinstance(data, Graph):
        return data
    if _is_networkx(data):
        return Graph.from_networkx(data)
    if _is_sparse(data):
        return Graph.from_sparse(data, merge=merge)
    raise InputError(f"expected a Graph, a square scipy.sparse matrix or a networkx graph, got {type(data).__name__}")


def _is_networkx(data) -> bool:
    return type(data).__module__.startswith("networkx.") and hasattr(data, "edges") and hasattr(data, "nodes")


def _is_sparse(data) -> bool:
    try:
        import scipy.sparse as sp
    except ImportError:  # pragma: no cover - scipy is a dependency
        return False
    return sp.issparse(data)


def _device(device: str) -> str:
    return resolve_device(device, gpu_implemented=True)[0]


def _on_graph_device(command: str, run, graph: Graph, device: str, *arguments):
    """``run(graph, *arguments, device)`` on the device that ``device`` names for the graph command ``command``
    (``auto``: by the graph's size, :func:`hgpart.policy.graph_device`), with ``device_reason`` set."""
    from .policy import graph_device

    used, _, reason = graph_device(device, command, graph.num_edges)
    result = run(graph, *arguments, used)
    result.device_reason = reason
    return result


def partition(hypergraph, k: int | None = None, epsilon: float | None = None, objective: str | None = None,
              seed: int | None = None, preset: str | None = None, *, fixed=None, config=None, device: str = "auto"):
    """Partition a hypergraph into ``k`` blocks of weight at most (1 + epsilon) * ceil(total / k), minimising
    km1 (the sum over nets of w(e) (lambda(e) - 1)) or the cut.

    Parameters
    ----------
    hypergraph : Hypergraph, scipy.sparse matrix, Graph or networkx graph
    k : int
        Number of blocks.
    epsilon : float, default 0.03
        Allowed imbalance.
    objective : {"km1", "cut"}, default "km1"
    seed : int, default 0
        The same input, settings, seed and device give the same partition.
    preset : {"fast", "default", "quality"}, default "default"
    fixed : int[num_vertices], optional
        The block each vertex is fixed to, or -1.
    config : hgpart.config.PartitionConfig, optional
        Every setting at once (:func:`hgpart.config.make_config`); an argument given beside it must agree.
    device : {"auto", "cpu", "gpu"}
        ``auto``: with a usable GPU, the GPU path for inputs of at least ``policy.auto_gpu_min_pins`` pins
        (500,000) and the CPU path below; without one, the CPU path.

    Returns
    -------
    hgpart.multilevel.PartitionResult
        ``partition`` (int32[num_vertices] block ids), ``metrics`` (km1, cut, block weights, imbalance),
        ``seconds`` per phase, ``levels``, ``device`` and, for ``auto``, ``device_reason``.

    Examples
    --------
    >>> import hgpart, scipy.sparse as sp
    >>> matrix = sp.random(300, 200, density=0.02, format="csr", random_state=1)
    >>> result = hgpart.partition(matrix, 4, seed=1, device="cpu")
    >>> result.partition.shape, result.partition.dtype, result.metrics.balanced
    ((200,), dtype('int32'), True)
    >>> int(hgpart.evaluate(hgpart.Hypergraph.from_sparse(matrix), result.partition).km1) == result.km1
    True
    """
    from .multilevel import partition as run

    return run(as_hypergraph(hypergraph), k, epsilon, objective, seed, preset, fixed=fixed, config=config,
               device=device)


def coarsen(hypergraph, k: int = 2, config=None, *, epsilon: float = 0.03, fixed=None, communities: bool | None = None,
            device: str = "auto"):
    """The coarsening hierarchy of a hypergraph, as the partitioner builds it for ``k`` blocks.

    Parameters
    ----------
    hypergraph : Hypergraph, scipy.sparse matrix, Graph or networkx graph
    k : int
        Coarsening stops at ``config.contraction_limit_factor * k`` vertices.
    config : hgpart.config.CoarseningConfig, optional
    epsilon : float
        No cluster outweighs what a block may hold.
    fixed : int[num_vertices], optional
        Vertices fixed to different blocks never merge.
    communities : bool, optional
        Detect communities of the star expansion first and never merge across them (default: as the
        partitioner does, on inputs of at most 2M pins that are not mesh graphs).
    device : {"auto", "cpu", "gpu"}

    Returns
    -------
    hgpart.coarsening.Hierarchy
        ``levels`` (finest first, each with ``hypergraph`` and ``cluster``, the map onto the next level),
        ``coarsest``, ``communities`` (``labels``, ``count``; None without detection) and ``summary()`` rows.

    Examples
    --------
    >>> import hgpart, networkx as nx
    >>> hierarchy = hgpart.coarsen(nx.grid_2d_graph(60, 60), k=2, device="cpu")
    >>> [row["vertices"] for row in hierarchy.summary()]
    [3600, 1440, 576, 270]
    >>> hierarchy.coarsest.hypergraph.num_vertices
    249
    >>> hierarchy.communities is None  # a mesh graph: no communities, as in Mt-KaHyPar
    True
    """
    from .coarsening import coarsen as run
    from .config import CoarseningConfig, CommunityConfig, choose_communities

    hypergraph = as_hypergraph(hypergraph)
    return run(hypergraph, k, config or CoarseningConfig(), epsilon, None if fixed is None else np.asarray(fixed),
               device=_device(device), detect_communities=choose_communities(CommunityConfig(), communities))


def cluster(graph, *, seed: int = 0, tries: int = 0, config=None, device: str = "auto"):
    """Clusters of a graph's vertices of high modularity: agglomeration by matching and local moving on every
    level (Fagginger Auer and Bisseling, "Graph Coarsening and Clustering on the GPU", 2012), an ensemble of
    runs whose core groups are clustered again.

    Parameters
    ----------
    graph : Graph, square scipy.sparse matrix or networkx graph
        Non-negative weights; parallel edges count once (the heaviest), self loops are dropped.
    seed : int
    tries : int
        Runs of the ensemble (0: by size).
    config : hgpart.config.ClusterConfig, optional
        Every setting (``seed`` and ``tries`` above then must be left at their defaults).
    device : {"auto", "cpu", "gpu"}
        ``auto``: the GPU, where one is usable, for graphs of at least ``GraphPolicyConfig.cluster_min_edges``
        edges, else the CPU (``device_reason`` says which and why).

    Returns
    -------
    hgpart.graphs.clustering.ClusterResult
        ``clusters`` (int32[num_vertices], numbered by their smallest vertex), ``modularity``,
        ``num_clusters``.

    Examples
    --------
    >>> import hgpart, networkx as nx
    >>> result = hgpart.cluster(nx.karate_club_graph(), device="cpu")
    >>> round(result.modularity, 4), result.num_clusters
    (0.4439, 4)
    """
    from dataclasses import replace

    from .config import ClusterConfig
    from .graphs.clustering import cluster as run

    if config is not None and (seed or tries):
        raise InputError("give seed and tries in the config, or leave the config out")
    config = config or replace(ClusterConfig(), seed=seed, tries=tries)
    return _on_graph_device("cluster", run, as_graph(graph, "max"), device, config)


def minimum_spanning_forest(graph, *, device: str = "auto"):
    """The minimum spanning forest of a weighted graph by Borůvka's algorithm from data-parallel primitives
    (Vineet, Harish, Patidar and Narayanan, "Fast Minimum Spanning Tree for Large Graphs on the GPU", 2009).
    Ties are broken by edge order, so the forest is unique and the same on both devices.

    Parameters
    ----------
    graph : Graph, square scipy.sparse matrix or networkx graph
        Parallel edges keep the lightest; self loops are dropped.
    device : {"auto", "cpu", "gpu"}
        ``auto``: the GPU, where one is usable, for graphs of at least ``GraphPolicyConfig.mst_min_edges``
        edges, else the CPU (``device_reason`` says which and why).

    Returns
    -------
    hgpart.graphs.spanning_forest.ForestResult
        ``sources``, ``targets`` (int32, sources < targets), ``weights``, ``total_weight``,
        ``num_components``, ``components``.

    Examples
    --------
    >>> import hgpart, networkx as nx
    >>> G = nx.Graph([(0, 1, {"weight": 4}), (1, 2, {"weight": 1}), (0, 2, {"weight": 2}), (3, 4, {"weight": 5})])
    >>> forest = hgpart.minimum_spanning_forest(G, device="cpu")
    >>> forest.total_weight, forest.num_components
    (8.0, 2)
    """
    from .graphs.spanning_forest import minimum_spanning_forest as run

    return _on_graph_device("mst", run, as_graph(graph, "min"), device)


def count_triangles(graph, *, device: str = "auto"):
    """Triangles of an undirected graph: in total and per vertex, local and average clustering coefficients
    and transitivity (direction, weights, parallel edges and self loops are ignored).

    Parameters
    ----------
    graph : Graph, square scipy.sparse matrix or networkx graph
    device : {"auto", "cpu", "gpu"}
        ``auto``: the GPU, where one is usable, for graphs of at least ``GraphPolicyConfig.triangles_min_edges``
        edges, else the CPU (``device_reason`` says which and why).

    Returns
    -------
    hgpart.graphs.triangles.TriangleResult
        ``count``, ``per_vertex`` (int64[num_vertices]), ``clustering``, ``average_clustering``,
        ``transitivity``.

    Examples
    --------
    >>> import hgpart, networkx as nx
    >>> result = hgpart.count_triangles(nx.karate_club_graph(), device="cpu")
    >>> result.count, round(result.transitivity, 4)
    (45, 0.2557)
    """
    from .graphs.triangles import count_triangles as run

    return _on_graph_device("triangles", run, as_graph(graph, "min"), device)


def list_triangles(graph, *, device: str = "auto") -> np.ndarray:
    """Every triangle of an undirected graph once, as int32[t, 3] rows with ascending ids.

    Examples
    --------
    >>> import hgpart, networkx as nx
    >>> hgpart.list_triangles(nx.complete_graph(4), device="cpu").tolist()
    [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]]
    """
    from .graphs.triangles import list_triangles as run
    from .policy import graph_device

    graph = as_graph(graph, "min")
    return run(graph, graph_device(device, "triangles", graph.num_edges)[0])


def knn_hypergraph(features, n_neighbors: int = 5, *, metric: str = "euclidean", weights: str = "compactness",
                   search: str = "auto", seed: int = 0, device: str = "auto") -> Hypergraph:
    """The kNN hypergraph of feature vectors: vertex i is sample i, net i holds sample i and its ``n_neighbors``
    nearest other samples (Huang et al., IEEE TPAMI 2011).

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (n, d)
        One sample per row, finite numbers.
    n_neighbors : int
    metric : {"euclidean", "cosine"}
    weights : {"compactness", "uniform"}
        ``compactness``: net i weighs 1 + sum of exp(-(d / sigma)^2) over its neighbours' distances d to sample
        i (sigma: the mean of all those distances), scaled to integers of at most 1000; ``uniform``: 1.
    search : {"auto", "exact", "approximate"}
        ``approximate`` is pynndescent's (the ``ann`` extra) on the CPU; ``auto`` takes it on the CPU above
        200,000 samples when it is installed, the exact brute force otherwise.
    seed : int
        Seeds the approximate search.
    device : {"auto", "cpu", "gpu"}
        Where the exact search runs (the GPU's is a tiled brute force, the same neighbours as the CPU's).

    Returns
    -------
    Hypergraph
        n vertices of weight 1, n nets of ``n_neighbors + 1`` pins.

    Examples
    --------
    >>> import hgpart, numpy as np
    >>> points = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [9.0, 9.0], [9.0, 8.0], [8.0, 9.0]])
    >>> hypergraph = hgpart.knn_hypergraph(points, n_neighbors=2, weights="uniform", device="cpu")
    >>> hypergraph.num_nets, hypergraph.num_pins
    (6, 18)
    """
    from .classification.hypergraph import knn_hypergraph as run
    from .config import KnnConfig

    config = KnnConfig(n_neighbors=n_neighbors, metric=metric, weights=weights, search=search, seed=seed)
    return run(features, config, _device(device)).hypergraph


def classify(features, n_classes: int, *, n_neighbors: int = 5, epsilon: float | None = None,
             metric: str = "euclidean", weights: str = "compactness", search: str = "auto", seed: int = 0,
             preset: str = "default", device: str = "auto") -> np.ndarray:
    """Classify samples without labels: partition their kNN hypergraph (:func:`knn_hypergraph`) into
    ``n_classes`` blocks, minimising km1 (L. Cheng, H. Cho and P. Yoon, IEEE HPEC 2015, Sec. VII).

    Parameters
    ----------
    features : array_like or scipy.sparse matrix, shape (n, d)
        One sample per row; scale the features first where their units differ (z-scores).
    n_classes : int
    n_neighbors, metric, weights, search, seed
        As for :func:`knn_hypergraph` (``seed`` also seeds the partitioner).
    epsilon : float, default 0.1
        A class holds at most (1 + epsilon) * ceil(n / n_classes) samples.
    preset : {"fast", "default", "quality"}
    device : {"auto", "cpu", "gpu"}
        The neighbours' search on the GPU when there is one; the partition on the GPU path for large
        hypergraphs only (as :func:`partition` decides for ``auto``).

    Returns
    -------
    int64[n]
        Each sample's class, 0 .. n_classes - 1.

    Examples
    --------
    >>> import hgpart, numpy as np
    >>> points = np.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [9.0, 9.0], [9.0, 8.0], [8.0, 9.0]])
    >>> hgpart.classify(points, 2, n_neighbors=2, device="cpu").tolist()
    [0, 0, 0, 1, 1, 1]
    """
    from .classification.classify import DEFAULT_EPSILON
    from .classification.classify import classify as run
    from .config import KnnConfig

    config = KnnConfig(n_neighbors=n_neighbors, metric=metric, weights=weights, search=search, seed=seed)
    epsilon = DEFAULT_EPSILON if epsilon is None else epsilon
    return run(features, n_classes, config, epsilon, seed, preset, _device(device), partition_device=device).classes

