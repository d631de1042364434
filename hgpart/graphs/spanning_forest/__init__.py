"""Minimum spanning forests (``hgpart mst``): Borůvka's algorithm from data-parallel primitives, on the GPU
or on its CPU twin, which return the same forest.

Modules, host and GPU steps side by side:

- :mod:`.driver`: :func:`minimum_spanning_forest` (the Borůvka loop), :func:`warm_up`.
- :mod:`.common`: what both twins share (hooking a supervertex, the hash slot of a supervertex pair).
- :mod:`.host`: the CPU steps (numpy and njit loops), :class:`~.host.HostSteps`.
- :mod:`.device`: the GPU steps (numba.cuda + CuPy), :class:`~.device.DeviceSteps`.
"""

from .driver import ForestResult, minimum_spanning_forest, warm_up

__all__ = ["ForestResult", "minimum_spanning_forest", "warm_up"]
