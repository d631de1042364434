"""Initial partitioning of the coarsest hypergraph: recursive bisection with a portfolio of flat
bipartitioners, each followed by 2-way FM."""

from .recursive import initial_partition

__all__ = ["initial_partition"]
