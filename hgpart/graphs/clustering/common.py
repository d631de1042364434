"""What both twins of the modularity clustering share: the step modes, the colouring of a matching round,
the merge and move gains, and the steps that are the same calls on numpy and CuPy arrays.

The clustering follows B. O. Fagginger Auer and R. H. Bisseling, "Graph Coarsening and Clustering on the
GPU", 10th DIMACS Implementation Challenge, 2012. Gains are modularity scaled by 4Ω² and halved: exact
int64 values (see :mod:`.host` for the levels they are computed on).

:func:`colour_bit`, :func:`candidate_gain` and :func:`move_gain` are plain Python: :mod:`.host` compiles
them with ``numba.njit`` and the GPU modules as CUDA device functions, so both twins run the same
arithmetic. They take scalars, not arrays: an array argument costs reference counting on every call in
the CPU code. numba's disk cache checks only the file of each cached function, so it does not see an edit
here: after changing one of them, remove the ``__pycache__`` of this package (or touch the modules that
compile it).
"""

from __future__ import annotations

import numpy as np
from numba import int64, uint64

PROPOSE, RESPOND, SATELLITE = 0, 1, 2  # the modes of candidate_gain: blue proposals, red responses, satellites
ACTIVE_ROUNDS = 2  # local moving revisits a vertex for this many rounds after it or a neighbour moved


def colour_bit(salt, v):
    """1 (blue) or 0 (red) for vertex v in the matching round with this salt: a splitmix64 hash.

    Parameters
    ----------
    salt : int64
        The round's salt (:func:`round_salt`).
    v : int
        Vertex id.

    Returns
    -------
    int64
    """
    x = uint64(salt) + uint64(v) * uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> uint64(30))) * uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> uint64(27))) * uint64(0x94D049BB133111EB)
    x = x ^ (x >> uint64(31))
    return int64(x & uint64(1))


def candidate_gain(mode, v, u, weight, two_omega, zeta_v, zeta_u, partner_v, partner_u, proposal_u, blue_v, blue_u,
                   centre_v, centre_u):
    """The merge gain 2Ω ω(v, u) − ζ(v) ζ(u) (modularity gain scaled by 4Ω², halved) of v with its neighbour
    u in the step ``mode``, or -1 when u is not a candidate of v there.

    PROPOSE: an unmatched blue v rates an unmatched red u. RESPOND: an unmatched red v rates a u that
    proposed to it. SATELLITE: an unmatched satellite v (not a centre) rates a centre u.

    Parameters
    ----------
    mode : int
        PROPOSE, RESPOND or SATELLITE.
    v, u : int
        The vertex and its neighbour.
    weight, two_omega, zeta_v, zeta_u : int64
        ω(v, u), 2Ω, ζ(v), ζ(u).
    partner_v, partner_u, proposal_u : int32
        Matched partners (-1: none) and the vertex u proposed to.
    blue_v, blue_u, centre_v, centre_u : int8
        Colours (1: blue) and centre flags (1: centre potential at least 1).

    Returns
    -------
    int64
        The gain when positive, else -1.
    """
    if partner_v >= 0 or u == v:
        return int64(-1)
    if mode == PROPOSE:
        if blue_v == 0 or blue_u != 0 or partner_u >= 0:
            return int64(-1)
    elif mode == RESPOND:
        if blue_v != 0 or proposal_u != v or partner_u >= 0:
            return int64(-1)
    else:
        if centre_v != 0 or centre_u == 0:
            return int64(-1)
    gain = two_omega * weight - zeta_v * zeta_u
    return gain if gain > 0 else int64(-1)


def move_gain(two_omega, link, own_link, zeta_v, zeta_target, zeta_own):
    """The gain (modularity scaled by 4Ω², halved) of moving v from its cluster to another.

    Parameters
    ----------
    two_omega : int64
        2Ω.
    link, own_link : int64
        Weight of v's edges into the target cluster and into its own cluster.
    zeta_v, zeta_target, zeta_own : int64
        ζ(v), ζ of the target cluster, ζ of v's own cluster (v included).

    Returns
    -------
    int64
    """
    return two_omega * (link - own_link) - zeta_v * (zeta_target - zeta_own + zeta_v)


def round_salt(seed: int, level: int, round_index: int) -> int:
    """The hash salt (a non-negative int64) of one matching round: the same on both devices."""
    return (seed * 1_000_003 + level * 10_007 + round_index * 101 + 1) & 0x7FFF_FFFF_FFFF_FFFF


def stale_threshold(two_omega: int, min_improvement: float) -> float:
    """4Ω² times ``min_improvement``: a gain of scaled modularity at most this counts as stale (a round of
    local moving, or a cycle of agglomeration and refinement)."""
    return min_improvement * float(two_omega) ** 2


def next_stale(value: int, best_value: int, stale: int, threshold: float) -> tuple[bool, int]:
    """(whether ``value`` is a new best, the count of stale rounds after it): a round that improves by more
    than ``threshold`` resets the count, any other round adds one."""
    if value > best_value:
        return True, 0 if value - best_value > threshold else stale + 1
    return False, stale + 1


def project(coarse_clusters, mapping):
    """Each fine vertex takes the cluster of its coarse vertex: int32[n] from coarse_clusters int32[n'] and
    mapping int32[n] (a gather, the same call on numpy and CuPy arrays)."""
    return coarse_clusters[mapping]


def compact(clusters, array=np) -> tuple[np.ndarray, int]:
    """Cluster ids renumbered 0.. in order of the smallest id in use.

    Parameters
    ----------
    clusters : int32[n]
        Cluster ids in [0, n).
    array : module
        The array module of ``clusters``: numpy, or CuPy for the GPU twin.

    Returns
    -------
    ids : int32[n]
    count : int
    """
    used = array.zeros(clusters.shape[0] + 1, dtype=np.int32)
    used[clusters + 1] = 1
    numbers = array.cumsum(used, dtype=np.int32)
    return numbers[clusters], int(numbers[-1])


def intersect(first, second, array=np):
    """The clusters of vertices that both clusterings (int32[n] each) put together, as int32[n] ids < n;
    ``array`` as for :func:`compact`."""
    n = first.shape[0]
    _, inverse = array.unique(first.astype(np.int64) * n + second, return_inverse=True)
    return inverse.reshape(-1).astype(np.int32)
