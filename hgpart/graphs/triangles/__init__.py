"""Exact triangle counting and enumeration (``hgpart triangles``), per-vertex counts and clustering
coefficients, on the GPU or on its njit CPU twin, which return the same counts and the same list.

Modules, host and GPU steps side by side:

- :mod:`.driver`: :class:`Triangles` (a graph prepared on one device), :func:`count_triangles`,
  :func:`list_triangles`, :func:`warm_up`.
- :mod:`.plan`: ranks, the oriented graph's tasks (:class:`~.plan.TrianglePlan`), the same on both devices.
- :mod:`.common`: what both twins share (task sizes, reading a chunk, runs of N+(u), writing a triangle).
- :mod:`.host`: the CPU steps (njit), :class:`~.host.HostSteps`.
- :mod:`.device` (orientation, :class:`~.device.DeviceSteps`), :mod:`.device_count` (the counting and
  listing kernels): the GPU steps (numba.cuda + CuPy).
"""

from .driver import TriangleResult, Triangles, clustering_coefficients, count_triangles, list_triangles, warm_up
from .plan import TrianglePlan

__all__ = ["TrianglePlan", "TriangleResult", "Triangles", "clustering_coefficients", "count_triangles",
           "list_triangles", "warm_up"]
