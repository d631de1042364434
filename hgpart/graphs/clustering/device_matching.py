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
``response``, ``target``, ``best`` int32[n] (n while being chosen: none; -1 in the results), ``centre`` int8[n],
``best_gain``, ``proposal_gain``, ``response_gain`` and ``around`` int64[n], ``pairs`` int64[rounds];
``representative``, ``is_representative`` int32[n]. A matching round's colours are not stored: each entry
hashes them (``salt``).
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int64

from ...cuda.arrays import cached_kernel, scalar, xp
from . import common
from .common import PROPOSE, RESPOND, SATELLITE, round_salt
from .device_common import int32_weights, launch_items

candidate_gain_gpu = cuda.jit(device=True, inline=True)(common.candidate_gain)
colour_bit_gpu = cuda.jit(device=True, inline=True)(common.colour_bit)

@cuda.jit(device=True, inline=True)
def _flags(mode, salt, centre, v):
    """v's flag in the step ``mode``: its colour in a matching round (hashed from ``salt``: 1 blue, 0 red), or
    whether it is a centre for SATELLITE."""
    return int64(centre[v]) if mode == SATELLITE else colour_bit_gpu(salt, v)


@cuda.jit(device=True, inline=True)
def _entry_gain(mode, entry, rows, neighbors, weights, two_omega, zeta, partner, proposal, salt, centre):
    """(v, u, merge gain) of the entry (v, u) in the step ``mode`` (:func:`.common.candidate_gain`)."""
    v = rows[entry]
    u = neighbors[entry]
    flag_v = _flags(mode, salt, centre, v)
    flag_u = _flags(mode, salt, centre, u)
    return v, u, candidate_gain_gpu(mode, v, u, int64(weights[entry]), two_omega, zeta[v], zeta[u], partner[v],
                                    partner[u], proposal[u], flag_v, flag_u, flag_v, flag_u)


@cached_kernel
def candidate_gain_kernel(mode, rows, neighbors, weights, two_omega, zeta, partner, proposal, salt, centre,
                          best_gain):
    """Pass 1 of the best candidate: best_gain[v] = max over v's entries of the step's merge gain (> 0)."""
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v, u, gain = _entry_gain(mode, entry, rows, neighbors, weights, two_omega, zeta, partner, proposal, salt,
                                 centre)
        if gain > 0:
            cuda.atomic.max(best_gain, v, gain)


@cached_kernel
def candidate_choice_kernel(mode, rows, neighbors, weights, two_omega, zeta, partner, proposal, salt, centre,
                            best_gain, best):
    """Pass 2: best[v] = the smallest u whose gain equals best_gain[v] (best[v] = n before: none)."""
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v, u, gain = _entry_gain(mode, entry, rows, neighbors, weights, two_omega, zeta, partner, proposal, salt,
                                 centre)
        if gain > 0 and gain == best_gain[v]:
            cuda.atomic.min(best, v, u)


@cached_kernel
def finish_choice_kernel(best):
    """Vertices without a candidate (best[v] = n) get -1."""
    none = best.shape[0]
    for v in range(cuda.grid(1), best.shape[0], cuda.gridsize(1)):
        if best[v] == none:
            best[v] = -1


@cached_kernel
def match_kernel(response, partner, proposal, proposal_gain, response_gain, pairs, round_index):
    """A red vertex u and the blue proposer it accepted (response[u] < n) become a pair; pairs[round_index]
    counts them. Then u's proposal, response and gains are reset for the next round (n: none)."""
    none = response.shape[0]
    for u in range(cuda.grid(1), response.shape[0], cuda.gridsize(1)):
        v = response[u]
        if v != none:
            partner[u] = v
            partner[v] = u
            cuda.atomic.add(pairs, round_index, 1)
        proposal[u] = none
        response[u] = none
        proposal_gain[u] = 0
        response_gain[u] = 0


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


def _candidate_passes(mode, level, partner, proposal, salt, centre, best_gain, best) -> None:
    """best[v]: the step's best candidate of every vertex (best[v] = n beforehand and where there is none)."""
    args = (mode, level["rows"], level["neighbors"], int32_weights(level), level["two_omega"], level["zeta"], partner,
            proposal, salt, centre, best_gain)
    entries = int(level["rows"].shape[0])
    launch_items(candidate_gain_kernel, entries, *args)
    launch_items(candidate_choice_kernel, entries, *args, best)


def match_clusters(level: dict, seed: int, depth: int, rounds: int):
    """Step 1 on the device: parameters and result as :func:`.host.match_clusters`, arrays on the device.

    A round is four passes over the entries (the proposals' gains and choices, then the responses'), the
    match and a read of its count of pairs: the colours are hashed where they are needed, and the match
    resets the round's arrays for the next one."""
    array = xp()
    n = int(level["zeta"].shape[0])
    partner = array.full(n, -1, dtype=np.int32)
    proposal = array.full(n, n, dtype=np.int32)
    response = array.full(n, n, dtype=np.int32)
    proposal_gain = array.zeros(n, dtype=np.int64)
    response_gain = array.zeros(n, dtype=np.int64)
    pairs = array.zeros(max(rounds, 1), dtype=np.int64)
    no_centres = array.zeros(1, dtype=np.int8)  # the matching's flags are colours
    for round_index in range(rounds):
        salt = round_salt(seed, depth, round_index)
        _candidate_passes(PROPOSE, level, partner, proposal, salt, no_centres, proposal_gain, proposal)
        _candidate_passes(RESPOND, level, partner, proposal, salt, no_centres, response_gain, response)
        launch_items(match_kernel, n, response, partner, proposal, proposal_gain, response_gain, pairs, round_index)
        if scalar(pairs, round_index) == 0:
            break
    return partner


def satellite_targets(level: dict, partner):
    """Step 2 on the device: as :func:`.host.satellite_targets`, arrays on the device."""
    array = xp()
    n = partner.shape[0]
    around = array.zeros(n, dtype=np.int64)
    launch_items(neighbour_degree_kernel, int(level["rows"].shape[0]), level["rows"], level["neighbors"],
                 level["zeta"], around)
    centre = array.empty(n, dtype=np.int8)
    launch_items(centre_kernel, n, level["zeta"], around, centre)
    target = array.full(n, n, dtype=np.int32)
    _candidate_passes(SATELLITE, level, partner, target, 0, centre, array.zeros(n, dtype=np.int64), target)
    launch_items(finish_choice_kernel, n, target)
    return target


def group_map(partner, target):
    """Step 3 on the device: as :func:`.host.group_map`, arrays on the device."""
    array = xp()
    n = partner.shape[0]
    representative = array.empty(n, dtype=np.int32)
    is_representative = array.empty(n, dtype=np.int32)
    launch_items(representative_kernel, n, partner, target, representative,
                 is_representative)
    coarse_id = array.cumsum(is_representative, dtype=np.int32) - 1
    count = int(coarse_id[-1]) + 1 if n else 0
    return coarse_id[representative], count

