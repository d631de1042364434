"""hgpart: multilevel hypergraph partitioning and sparse graph analytics on NVIDIA GPUs, with a numba CPU path."""

__version__ = "0.1.0"

from .errors import DeviceError, InfeasibleError, InputError  # noqa: E402
from .hypergraph import Graph, Hypergraph  # noqa: E402
from .io import convert, read_graph, read_hypergraph, read_partition, write_hypergraph, write_partition  # noqa: E402
from .metrics import evaluate  # noqa: E402

__all__ = [
    "DeviceError", "Graph", "Hypergraph", "InfeasibleError", "InputError", "convert", "evaluate", "read_graph",
    "read_hypergraph", "read_partition", "write_hypergraph", "write_partition",
]
