"""hgpart: multilevel hypergraph partitioning and sparse graph analytics on NVIDIA GPUs (numba.cuda), with a
numba CPU path that is both the fallback and the reference.

>>> import hgpart
>>> hypergraph = hgpart.Hypergraph.from_pin_lists([[0, 1], [1, 2, 3], [3, 4], [4, 5, 0]])
>>> result = hgpart.partition(hypergraph, 2, device="cpu")
>>> result.partition.tolist(), result.km1
([0, 0, 0, 1, 1, 1], 2)
"""

import os

__version__ = "0.1.0"

# The coarsest levels launch grids of a few blocks on purpose; numba-cuda's low-occupancy warning would
# print on stderr for each of them. A user's own setting of the variable wins.
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

from .api import (classify, cluster, coarsen, count_triangles, knn_hypergraph, list_triangles,  # noqa: E402
                  minimum_spanning_forest, partition)
from .config import PartitionConfig, make_config  # noqa: E402
from .errors import DeviceError, InfeasibleError, InputError  # noqa: E402
from .hypergraph import Graph, Hypergraph  # noqa: E402
from .io import (convert, read_graph, read_hypergraph, read_partition, write_graph, write_hypergraph,  # noqa: E402
                 write_partition)
from .io.features import read_features, read_labels  # noqa: E402
from .metrics import evaluate  # noqa: E402

__all__ = [
    "DeviceError", "Graph", "Hypergraph", "InfeasibleError", "InputError", "PartitionConfig", "classify", "cluster",
    "coarsen", "convert", "count_triangles", "evaluate", "knn_hypergraph", "list_triangles", "make_config",
    "minimum_spanning_forest", "partition", "read_features", "read_graph", "read_hypergraph", "read_labels",
    "read_partition", "write_graph", "write_hypergraph", "write_partition",
]
