"""Modularity clustering of graphs (``hgpart cluster``): agglomeration by matching with merge gains, then local
moving, on the GPU or on its njit CPU twin, which return the same clustering.

Modules, host and GPU steps side by side:

- :mod:`.driver`: :func:`cluster` (ensemble, V-cycles), :func:`warm_up`.
- :mod:`.common`: what both twins share (step modes, colouring, merge and move gains, array steps).
- :mod:`.host` (steps 1-4), :mod:`.host_moving` (step 5): the njit CPU steps.
- :mod:`.device` (the GPU step table), :mod:`.device_matching` (steps 1-3), :mod:`.device_contraction`
  (step 4), :mod:`.device_moving` (step 5), :mod:`.device_common`: the GPU steps (numba.cuda + CuPy).

The modularity of a clustering and the integer levels are in :mod:`hgpart.graphs.modularity`.
"""

from .driver import ClusterResult, cluster, default_tries, warm_up

__all__ = ["ClusterResult", "cluster", "default_tries", "warm_up"]
