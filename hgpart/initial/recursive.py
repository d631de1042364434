"""k-way initial partition by recursive multilevel bisection with the adapted epsilon of KaHyPar:

    eps' = ((1 + eps) * ceil(c(V) / k) * k' / c(V'))^(1 / ceil(log2 k')) - 1

for a sub-hypergraph V' that still has to be split into k' blocks. For km1, cut nets are split (each side
keeps its own pins); for cut, they are dropped, since they already count in full.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np

from ..config import PartitionConfig
from ..hypergraph import Hypergraph, transpose_csr
from ..parallel import on_one_numba_thread, quick_handoffs
from .portfolio import bisect


def sub_hypergraph(hypergraph: Hypergraph, vertices: np.ndarray, split_nets: bool) -> Hypergraph:
    """Induced sub-hypergraph on ``vertices`` (sorted ids); nets keep the pins inside (or are dropped
    unless entirely inside, with ``split_nets`` False); nets left with fewer than two pins are dropped."""
    h = hypergraph
    return Hypergraph(*_induced(h.net_offsets, h.pin_vertices, h.net_weights, h.vertex_weights,
                                np.ascontiguousarray(vertices, dtype=np.int64), split_nets))


@numba.njit(cache=True, nogil=True)
def _induced(net_offsets, pin_vertices, net_weights, vertex_weights, vertices, split_nets):
    """The arrays of :func:`sub_hypergraph` in one call without the GIL (the recursion's threads build
    their halves at once): net_offsets int64[m' + 1], pin_vertices int32[p'] (sorted within each net, as
    the ids keep their order), vertex_offsets int64[n' + 1], incident_nets int32[p'], vertex_weights
    int64[n'], net_weights int64[m']."""
    new_id = np.full(vertex_weights.shape[0], -1, dtype=np.int64)
    for i in range(vertices.shape[0]):
        new_id[vertices[i]] = i
    num_nets = net_offsets.shape[0] - 1
    offsets = np.zeros(num_nets + 1, dtype=np.int64)
    pins = np.empty(pin_vertices.shape[0], dtype=np.int32)
    weights = np.empty(num_nets, dtype=np.int64)
    kept = 0
    end = 0
    for e in range(num_nets):
        start = end
        for p in range(net_offsets[e], net_offsets[e + 1]):
            mapped = new_id[pin_vertices[p]]
            if mapped >= 0:
                pins[end] = mapped
                end += 1
        inside = end - start
        if inside >= 2 and (split_nets or inside == net_offsets[e + 1] - net_offsets[e]):
            weights[kept] = net_weights[e]
            kept += 1
            offsets[kept] = end
        else:
            end = start
    offsets, pins, weights = offsets[:kept + 1].copy(), pins[:end].copy(), weights[:kept].copy()
    vertex_offsets, incident_nets = transpose_csr(offsets, pins, vertices.shape[0])
    return offsets, pins, vertex_offsets, incident_nets, vertex_weights[vertices], weights


def initial_partition(hypergraph: Hypergraph, k: int, epsilon: float, config: PartitionConfig, cut_objective: bool,
                      seed: int, fixed=None, workers: int | None = None) -> np.ndarray:
    """int32[n] blocks in [0, k) of the (coarsest) hypergraph, by recursive multilevel bisection on
    ``workers`` threads (default: ``config.initial.recursion_threads``, else numba's thread count)."""
    n = hypergraph.num_vertices
    partition = np.zeros(n, dtype=np.int32)
    fixed = np.full(n, -1, dtype=np.int32) if fixed is None else np.asarray(fixed, dtype=np.int32)
    total = hypergraph.total_vertex_weight
    perfect = -(-total // k)
    workers = workers or config.initial.recursion_threads or numba.get_num_threads()
    with quick_handoffs():
        _split(hypergraph, None, np.arange(n), 0, k, partition, fixed, epsilon, perfect, config, cut_objective,
               seed, workers)
    return partition


def multilevel_bisect(hypergraph: Hypergraph, max_weights, target0: int, fixed_side, seed: int,
                      config: PartitionConfig, cut_objective: bool, workers: int = 1) -> np.ndarray:
    """Bisection of a sub-problem the multilevel way: coarsen it to 2 * ``config.coarsening.contraction_limit_factor``
    vertices, run the portfolio there (on ``workers`` threads), then project and refine (label propagation, 2-way
    FM) level by level.
    A sub-problem of more than ``config.initial.always_coarsen_pins`` pins whose rating would cost more than
    ``config.initial.rating_budget`` pin visits (:func:`..coarsening.similarity.rating_work`) is not
    coarsened. int32[n] sides."""
    from ..coarsening import coarsen
    from ..coarsening.similarity import rating_work
    from ..refinement import refine

    if (hypergraph.num_pins > config.initial.always_coarsen_pins
            and rating_work(hypergraph, config.coarsening.max_rated_net_size) > config.initial.rating_budget):
        return bisect(hypergraph, max_weights, target0, fixed_side, seed, config.initial, config.label_propagation,
                      config.fm, cut_objective, workers)
    total = hypergraph.total_vertex_weight
    slack = float(max_weights.max()) * 2 / max(total, 1) - 1.0
    hierarchy = coarsen(hypergraph, 2, config.coarsening, max(slack, 0.0), fixed_side)
    coarsest = hierarchy.coarsest
    coarsest_fixed = coarsest.fixed if coarsest.fixed is not None else \
        np.full(coarsest.hypergraph.num_vertices, -1, dtype=np.int32)
    sides = bisect(hierarchy.coarsest.hypergraph, max_weights, target0, coarsest_fixed, seed, config.initial,
                   config.label_propagation, config.fm, cut_objective, workers)
    for level in reversed(hierarchy.levels):
        sides = sides[level.cluster]
        sides = refine(level.hypergraph, sides, 2, max_weights, config.label_propagation, config.fm, cut_objective,
                       level.fixed < 0)
    return sides


def _split(parent, local, vertices, first_block, blocks, partition, fixed, epsilon, perfect, config,
           cut_objective, seed, workers=1):
    """Split ``vertices`` (sorted ids of the coarsest level) into blocks first_block .. first_block + blocks - 1
    of ``partition``. They induce the sub-hypergraph of ``parent`` on its vertices ``local`` (sorted; None:
    all of ``parent``), vertex i of it being ``vertices[i]``. Cutting each half from the sub-hypergraph of
    the bisection above, not from the whole level, gives the same hypergraph (a net dropped above has fewer
    than two pins, or for cut a pin outside, in the half too) at the cost of that one's pins.

    With ``workers`` > 1 the two halves of a bisection recurse at once, the first on a new thread, the
    second on this one, sharing the workers, each with one numba thread (their njit kernels release the GIL
    and run serially, so numba's worker threads do not compete with the other half's for the cores); each
    half depends only on its vertices and its seed, so the partition is the same with any number of
    workers."""
    if blocks == 1 or vertices.shape[0] == 0:
        partition[vertices] = first_block
        return
    sub = parent if local is None else sub_hypergraph(parent, local, not cut_objective)
    sub_total = sub.total_vertex_weight
    blocks0 = (blocks + 1) // 2
    if sub_total > 0:
        ratio = (1.0 + epsilon) * perfect * blocks / sub_total
        adapted = max(0.0, ratio ** (1.0 / math.ceil(math.log2(blocks))) - 1.0)
    else:
        adapted = epsilon
    target0 = sub_total * blocks0 // blocks
    max_weights = np.array([math.floor((1.0 + adapted) * sub_total * blocks0 / blocks),
                            math.floor((1.0 + adapted) * sub_total * (blocks - blocks0) / blocks)], dtype=np.int64)
    sub_fixed = fixed[vertices]
    fixed_side = np.where(sub_fixed < 0, -1, (sub_fixed >= first_block + blocks0).astype(np.int32)).astype(np.int32)
    sides = multilevel_bisect(sub, max_weights, target0, fixed_side, seed + first_block * 31 + blocks, config,
                              cut_objective, workers)
    common = (partition, fixed, epsilon, perfect, config, cut_objective, seed)
    local0, local1 = np.flatnonzero(sides == 0), np.flatnonzero(sides == 1)
    first = (sub, local0, vertices[local0], first_block, blocks0, *common)
    second = (sub, local1, vertices[local1], first_block + blocks0, blocks - blocks0, *common)
    if workers > 1 and blocks0 > 1:
        with ThreadPoolExecutor(max_workers=1) as pool:
            half = pool.submit(on_one_numba_thread, _split, *first, workers // 2)
            on_one_numba_thread(_split, *second, workers - workers // 2)
            half.result()
    else:
        _split(*first, 1)
        _split(*second, 1)
