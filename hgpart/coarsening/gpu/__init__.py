"""The coarsening on the device (numba.cuda + CuPy): the GPU twin of :mod:`hgpart.coarsening.matching` and
:mod:`hgpart.coarsening.contraction`, one module a step. Levels are :class:`~hgpart.hypergraph.Hypergraph`
objects whose arrays live on the device; the maps and coarse levels equal the CPU's array for array.

After L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC
2015 (Figs. 5, 8, 9; Eq. 3-4 and 7-8):

- :mod:`.rating`: hash tables of scores filled by warps that share their nets' pins (Figs. 5 and 8), the
  table and bin sizes, and the CPU's candidate order on the device;
- :mod:`.proposals`: the kernels that rate a vertex within one block and propose its best candidate;
- :mod:`.heavy`: the same for vertices split over many blocks, with lists of their best candidates;
- :mod:`.plan`: the nets' ratings and :class:`DevicePlan`, which bins the vertices by work and runs a
  proposal round;
- :mod:`.matching`: mutual proposals over rounds (Fig. 9) and :func:`compute_clustering_device`;
- :mod:`.joining` and :mod:`.two_hop`: unmatched vertices join clusters, lone ones pair up, clusters are
  numbered;
- :mod:`.contraction`: the coarse level by sort, scan and scatter (Eq. 3-4).

The rules both twins follow (candidate score and order, joining rounds, 2-hop pairs) are written once, in
:mod:`hgpart.coarsening.rules`.
"""

from .contraction import contract_device
from .joining import finish_clustering_device, number_clusters_device
from .matching import compute_clustering_device, compute_clustering_gpu, map_level_device
from .plan import DevicePlan, device_net_ratings
from .rating import KERNEL_LIMITS

__all__ = ["KERNEL_LIMITS", "DevicePlan", "compute_clustering_device", "compute_clustering_gpu", "contract_device",
           "device_net_ratings", "finish_clustering_device", "map_level_device", "number_clusters_device"]
