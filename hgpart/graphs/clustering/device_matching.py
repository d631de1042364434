"""Steps 1 to 3 of the clustering on the GPU (blue/red matching, satellites joining centres, the group map):
the twins of :func:`.host.match_clusters`, :func:`.host.satellite_targets` and :func:`.host.group_map`,
with the same arguments as device arrays and the same results.

The matching and the centre potential are those of B. O. Fagginger Auer and R. H. Bisseling, "Graph
Coarsening and Clustering on the GPU", 10th DIMACS Implementation Challenge, 2012. Every neighbourhood scan
is edge-parallel, so hubs and leaves cost the same per edge: a thread per stored entry (v, u) rates its
candidate and folds it into v's best with two atomic passes, first the largest gain (``atomic.max``), then
the smallest id among the entries reaching it (``atomic.min``), which is the CPU twin's tie rule.

The kernels' arrays: ``rows``, ``neighbors`` int32[D] (the source and target vertex of each stored entry),
``weights`` int32[D] (:func:`.device_common.int32_weights`), ``zeta`` int64[n], ``partner``, ``proposal``,
``response``, ``target``, ``best`` int32[n] (-1: none), ``blue``, ``centre`` int8[n], ``best_gain`` and
``around`` int64[n], ``found`` int64[1]; ``representative``, ``is_representative`` int32[n].
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from ...cuda.arrays import cached_kernel, kernel_view, scalar, xp
from . import common
from .common import PROPOSE, RESPOND, SATELLITE, round_salt
from .device_common import int32_weights, launch_items

candidate_gain_gpu = cuda.jit(device=True, inline=True)(common.candidate_gain)
colour_bit_gpu = cuda.jit(device=True, inline=True)(common.colour_bit)

@cached_kernel
def colours_kernel(salt, blue):
    """blue[v] = 1 for blue vertices, 0 for red (int8[n]): the colouring of a matching round, hashed."""
    for v in range(cuda.grid(1), blue.shape[0], cuda.gridsize(1)):
        blue[v] = colour_bit_gpu(salt, v)


@cached_kernel
def candidate_gain_kernel(mode, rows, neighbors, weights, two_omega, zeta, partner, proposal, blue, centre, best_gain):
    """Pass 1 of the best candidate: best_gain[v] = max over v's entries of the step's merge gain (> 0)."""
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v = rows[entry]
        u = neighbors[entry]
        gain = candidate_gain_gpu(mode, v, u, int64(weights[entry]), two_omega, zeta[v], zeta[u], partner[v],
                                  partner[u], proposal[u], blue[v], blue[u], centre[v], centre[u])
        if gain > 0:
            cuda.atomic.max(best_gain, v, gain)


@cached_kernel
def candidate_choice_kernel(mode, rows, neighbors, weights, two_omega, zeta, partner, proposal, blue, centre,
                            best_gain, best):
    """Pass 2: best[v] = the smallest u whose gain equals best_gain[v]."""
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v = rows[entry]
        u = neighbors[entry]
        gain = candidate_gain_gpu(mode, v, u, int64(weights[entry]), two_omega, zeta[v], zeta[u], partner[v],
                                  partner[u], proposal[u], blue[v], blue[u], centre[v], centre[u])
        if gain > 0 and gain == best_gain[v]:
            cuda.atomic.min(best, v, u)


@cached_kernel
def finish_choice_kernel(best, best_gain, found):
    """Vertices without a candidate get -1; gains are reset for the next pass; found[0] counts the others."""
    none = best.shape[0]
    for v in range(cuda.grid(1), best.shape[0], cuda.gridsize(1)):
        best_gain[v] = 0
        if best[v] == none:
            best[v] = -1
        else:
            cuda.atomic.add(found, 0, 1)


@cached_kernel
def match_kernel(response, partner):
    """Red vertex u and the blue proposer it accepted become a pair."""
    for u in range(cuda.grid(1), response.shape[0], cuda.gridsize(1)):
        v = response[u]
        if v >= 0:
            partner[u] = v
            partner[v] = u


@cached_kernel
def neighbour_degree_kernel(rows, neighbors, zeta, around):
    """around[v] = Σ_{u~v} ζ(u), the denominator of the centre potential."""
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(around, rows[entry], zeta[neighbors[entry]])


@cached_kernel
def centre_kernel(zeta, around, centre):
    """centre[v] = 1 where the centre potential cp(v) = ζ(v)² / Σ_{u~v} ζ(u) is at least 1 (int8[n])."""
    for v in range(cuda.grid(1), zeta.shape[0], cuda.gridsize(1)):
        centre[v] = 1 if zeta[v] * zeta[v] >= around[v] else 0


@cached_kernel
def representative_kernel(partner, target, representative, is_representative):
    """A pair's smaller member represents it; a satellite takes its centre's representative."""
    for v in range(cuda.grid(1), partner.shape[0], cuda.gridsize(1)):
        joined = v
        if partner[v] < 0 and target[v] >= 0:
            joined = target[v]
        mate = partner[joined]
        representative[v] = min(joined, mate) if mate >= 0 else joined
        is_representative[v] = 1 if representative[v] == v else 0


def _best_candidates(mode, level, partner, proposal, blue, centre, best_gain, best) -> int:
    """best[v]: the step's best candidate of every vertex, or -1; returns how many have one."""
    n = partner.shape[0]
    best[:] = n
    found = xp().zeros(1, dtype=np.int64)
    args = (mode, kernel_view(level["rows"]), kernel_view(level["neighbors"]), kernel_view(int32_weights(level)),
            level["two_omega"], kernel_view(level["zeta"]), kernel_view(partner), kernel_view(proposal),
            kernel_view(blue), kernel_view(centre))
    entries = int(level["rows"].shape[0])
    launch_items(candidate_gain_kernel, entries, *args, kernel_view(best_gain))
    launch_items(candidate_choice_kernel, entries, *args, kernel_view(best_gain), kernel_view(best))
    launch_items(finish_choice_kernel, n, kernel_view(best), kernel_view(best_gain), kernel_view(found))
    return scalar(found)


def match_clusters(level: dict, seed: int, depth: int, rounds: int):
    """Step 1 on the device: parameters and result as :func:`.host.match_clusters`, arrays on the device."""
    array = xp()
    n = int(level["zeta"].shape[0])
    partner = array.full(n, -1, dtype=np.int32)
    proposal = array.empty(n, dtype=np.int32)
    response = array.empty(n, dtype=np.int32)
    blue = array.empty(n, dtype=np.int8)
    best_gain = array.zeros(n, dtype=np.int64)
    for round_index in range(rounds):
        launch_items(colours_kernel, n, round_salt(seed, depth, round_index), kernel_view(blue))
        _best_candidates(PROPOSE, level, partner, proposal, blue, blue, best_gain, proposal)
        if _best_candidates(RESPOND, level, partner, proposal, blue, blue, best_gain, response) == 0:
            break
        launch_items(match_kernel, n, kernel_view(response), kernel_view(partner))
    return partner


def satellite_targets(level: dict, partner):
    """Step 2 on the device: as :func:`.host.satellite_targets`, arrays on the device."""
    array = xp()
    n = partner.shape[0]
    around = array.zeros(n, dtype=np.int64)
    launch_items(neighbour_degree_kernel, int(level["rows"].shape[0]), kernel_view(level["rows"]),
                 kernel_view(level["neighbors"]), kernel_view(level["zeta"]), kernel_view(around))
    centre = array.empty(n, dtype=np.int8)
    launch_items(centre_kernel, n, kernel_view(level["zeta"]), kernel_view(around), kernel_view(centre))
    target = array.empty(n, dtype=np.int32)
    _best_candidates(SATELLITE, level, partner, target, centre, centre, array.zeros(n, dtype=np.int64), target)
    return target


def group_map(partner, target):
    """Step 3 on the device: as :func:`.host.group_map`, arrays on the device."""
    array = xp()
    n = partner.shape[0]
    representative = array.empty(n, dtype=np.int32)
    is_representative = array.empty(n, dtype=np.int32)
    launch_items(representative_kernel, n, kernel_view(partner), kernel_view(target), kernel_view(representative),
                 kernel_view(is_representative))
    coarse_id = array.cumsum(is_representative, dtype=np.int32) - 1
    count = int(coarse_id[-1]) + 1 if n else 0
    return coarse_id[representative], count

