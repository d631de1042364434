"""Mondriaan neighbour finding with the inner-product similarity of L. Cheng, H. Cho and P. Yoon, "An
Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015 (Fig. 3, Eq. 7-8).

For a vertex v the similarity to every neighbour u is accumulated over the incident nets of v:
``S(u) += r(e)`` with the net rating r(e) = w(e) (inner product) or w(e) / (|e| - 1) (heavy edge), and
r(e) = 0 for nets outside [2, max_net_size] pins (skipped). Ratings are fixed-point integers
(r(e) * 2^shift, rounded down), so sums are exact in any order: the GPU, adding with atomics in
whatever order its threads run, gets bit-identical scores to the CPU. Scores live in a dense
per-thread array that is reset through the list of touched entries, so rating one vertex costs the
pins of its nets, never O(n).
"""

from __future__ import annotations

import numba
import numpy as np

from .rules import better_candidate, pair_priority

MAX_SHIFT = 20


def net_ratings(hypergraph, heavy_edge: bool, max_net_size: int):
    """Fixed-point rating of every net and the shift used: (int64[num_nets], shift).

    The shift is the largest (at most 20) for which no vertex's total can overflow int64 (as
    :func:`hgpart.coarsening.gpu.plan.device_net_ratings` on the device).
    """
    largest = _largest_rated_degree(hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.net_weights,
                                    hypergraph.num_vertices, max_net_size)
    bits = int(np.ceil(np.log2(float(largest) + 2.0)))
    shift = max(0, min(MAX_SHIFT, 62 - bits))
    return _fixed_point_ratings(hypergraph.net_offsets, hypergraph.net_weights, shift, heavy_edge, max_net_size), shift


@numba.njit(cache=True, nogil=True)
def _largest_rated_degree(net_offsets, pin_vertices, net_weights, num_vertices, max_net_size):
    """The largest sum of w(e) over a vertex's nets of 2..max_net_size pins (0 without vertices)."""
    degree = np.zeros(num_vertices, dtype=np.int64)
    for e in range(net_offsets.shape[0] - 1):
        size = net_offsets[e + 1] - net_offsets[e]
        if 2 <= size <= max_net_size:
            for p in range(net_offsets[e], net_offsets[e + 1]):
                degree[pin_vertices[p]] += net_weights[e]
    largest = 0
    for v in range(num_vertices):
        largest = max(largest, degree[v])
    return largest


@numba.njit(cache=True, nogil=True)
def _fixed_point_ratings(net_offsets, net_weights, shift, heavy_edge, max_net_size):
    """int64[m]: (w(e) << shift) // (|e| - 1 with ``heavy_edge``, else 1) for nets of 2..max_net_size pins, else 0."""
    ratings = np.zeros(net_offsets.shape[0] - 1, dtype=np.int64)
    for e in range(ratings.shape[0]):
        size = net_offsets[e + 1] - net_offsets[e]
        if 2 <= size <= max_net_size:
            ratings[e] = (np.int64(net_weights[e]) << shift) // (size - 1 if heavy_edge else 1)
    return ratings


def rating_work(hypergraph, max_rated_net_size: int) -> int:
    """Pin visits of one round of heavy-edge rating over all vertices: sum of |e|^2 over the nets of
    2..max_rated_net_size pins (each pin of a rated net scores every other pin)."""
    sizes = hypergraph.net_sizes()
    rated = sizes[(sizes >= 2) & (sizes <= max_rated_net_size)].astype(np.int64)
    return int((rated * rated).sum())


pair_priority_cpu = numba.njit(cache=True, inline="always")(pair_priority)
better_candidate_cpu = numba.njit(cache=True, inline="always")(better_candidate)


@numba.njit(cache=True, nogil=True)
def rate_neighbors(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, ratings, scores, seen, touched):
    """Accumulate the similarity of v to each neighbour into ``scores`` (int64[n], zero on entry).

    ``seen`` (bool[n], False on entry) marks touched neighbours, listed in ``touched`` (int32[n]).
    Returns how many were touched; the caller resets ``scores`` and ``seen`` through the list.
    """
    count = 0
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        contribution = ratings[e]
        if contribution == 0:
            continue
        for p in range(net_offsets[e], net_offsets[e + 1]):
            u = pin_vertices[p]
            if u == v:
                continue
            if not seen[u]:
                seen[u] = True
                touched[count] = u
                count += 1
            scores[u] += contribution
    return count


def similarity(hypergraph, v: int, heavy_edge: bool = False, max_net_size: int = 2**62) -> dict:
    """Similarity of vertex v to each neighbour, as ``{u: score}`` (for inspection and tests)."""
    ratings, shift = net_ratings(hypergraph, heavy_edge, max_net_size)
    scores = np.zeros(hypergraph.num_vertices, dtype=np.int64)
    seen = np.zeros(hypergraph.num_vertices, dtype=np.bool_)
    touched = np.empty(hypergraph.num_vertices, dtype=np.int32)
    count = rate_neighbors(v, hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets,
                           hypergraph.incident_nets, ratings, scores, seen, touched)
    return {int(u): float(scores[u]) / 2**shift for u in touched[:count]}
