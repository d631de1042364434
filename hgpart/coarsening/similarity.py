"""Mondriaan neighbour finding with the inner-product similarity (seed 000 Fig. 3, Eq. 7-8).

For a vertex v the similarity to every neighbour u is accumulated over the incident nets of v:
``S(u) += w(e)`` (inner product) or ``w(e) / (|e| - 1)`` (heavy edge), skipping nets above a size limit.
Scores live in a dense per-thread array that is reset through the list of touched entries, so rating
one vertex costs the pins of its nets, never O(n).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, inline="always")
def better_candidate(score, candidate, best_score, best):
    """Strict total order of candidates: higher score, ties to the smaller vertex id (GPU and CPU agree)."""
    return score > best_score or (score == best_score and best >= 0 and candidate < best) or \
        (score == best_score and best < 0)


@numba.njit(cache=True)
def rate_neighbors(v, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size,
                   heavy_edge, scores, seen, touched):
    """Accumulate the similarity of v to each neighbour into ``scores`` (float64[n], zero on entry).

    ``seen`` (bool[n], False on entry) marks touched neighbours, listed in ``touched`` (int32[n]).
    Returns how many were touched; the caller resets ``scores`` and ``seen`` through the list.
    """
    count = 0
    for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
        e = incident_nets[q]
        size = net_offsets[e + 1] - net_offsets[e]
        if size < 2 or size > max_net_size:
            continue
        contribution = net_weights[e] / (size - 1.0) if heavy_edge else float(net_weights[e])
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
    scores = np.zeros(hypergraph.num_vertices, dtype=np.float64)
    seen = np.zeros(hypergraph.num_vertices, dtype=np.bool_)
    touched = np.empty(hypergraph.num_vertices, dtype=np.int32)
    count = rate_neighbors(v, hypergraph.net_offsets, hypergraph.pin_vertices, hypergraph.vertex_offsets,
                           hypergraph.incident_nets, hypergraph.net_weights, max_net_size, heavy_edge, scores,
                           seen, touched)
    return {int(u): float(scores[u]) for u in touched[:count]}
