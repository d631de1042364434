"""hgpart: multilevel hypergraph partitioning and sparse graph analytics on NVIDIA GPUs, with a numba CPU path."""

import os

__version__ = "0.1.0"

# The coarsest levels launch grids of a few blocks on purpose; numba-cuda's low-occupancy warning would
# print on stderr for each of them. A user's own setting of the variable wins.
os.environ.setdefault("NUMBA_CUDA_LOW_OCCUPANCY_WARNINGS", "0")

from .errors import DeviceError, InfeasibleError, InputError  # noqa: E402
from .hypergraph import Graph, Hypergraph  # noqa: E402
from .io import convert, read_graph, read_hypergraph, read_partition, write_hypergraph, write_partition  # noqa: E402
from .metrics import evaluate  # noqa: E402

__all__ = [
    "DeviceError", "Graph", "Hypergraph", "InfeasibleError", "InputError", "convert", "evaluate", "read_graph",
    "read_hypergraph", "read_partition", "write_hypergraph", "write_partition",
]
