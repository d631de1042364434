"""Flow-based refinement of a k-way partition: rounds over the pairs of blocks with a cut between them, each
refined by :mod:`.flow_pair` (numba). The parallel k-way scheme of L. Gottesbüren, T. Heuer, P. Sanders and
S. Schlag, "Scalable Shared-Memory Hypergraph Partitioning", ALENEX 2021 (Mt-KaHyPar), after T. Heuer,
P. Sanders and S. Schlag, "Network Flow-Based Refinement for Multilevel Hypergraph Partitioning", SEA 2018.

Pairs of blocks are taken in rounds, heaviest cut first, on parallel threads: a thread takes the next pair
(in batches of disjoint pairs) and starts it once the pairs before it that share one of its blocks are done.
Pairs of disjoint blocks never read what the other changes, so every pair sees what it would see were the
pairs taken one after the other, and the result is the same on any number of threads. A pair is taken again
in a later round only once its cut weight has changed since it last gained nothing. A pair alone in its
round (always, with two blocks) has the threads to itself (:func:`.flow_pair.refine_pair_speculating`).

Each thread works in arrays of the level's size (marks, queues, the region's nodes). Within
:func:`kept_workspaces`, which the partitioner holds around a partition's refinement, every level reuses one
set of them, sized for the input: on 16 threads a level's set is 10^8 bytes, whose pages the kernel would
otherwise map and zero anew on every level.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numba
import numpy as np

from ..config import FlowConfig
from ..hypergraph import scatter_sum
from ..parallel import (fetch_add, load_acquire, on_threads, ranges_by_items, runs_serially, store_release,
                        thread_cursors)
from ..sorting import stable_argsort
from .flow_pair import refine_pair, refine_pair_speculating


_KEPT = threading.local()  # this thread's kept workspaces: capacity (n, m) and the arrays, within kept_workspaces


@contextmanager
def kept_workspaces(num_vertices: int, num_nets: int):
    """Within it, this thread's flow refinements (:func:`flow_rounds`) share one workspace, allocated at their
    first use for at least ``num_vertices`` vertices and ``num_nets`` nets (the input's, so that the coarser
    levels before it fit too) and freed at the end. The marks' stamps go on from one refinement to the next,
    so a mark left by an earlier level never reads as one of this level's: the results are those of fresh
    arrays. Nests (the outermost block's capacity holds)."""
    outer = getattr(_KEPT, "capacity", None)
    if outer is None:
        _KEPT.capacity, _KEPT.arrays = (num_vertices, num_nets), None
    try:
        yield
    finally:
        if outer is None:
            _KEPT.capacity, _KEPT.arrays = None, None


def _workspace(threads: int, n: int, m: int) -> tuple:
    """The per-thread arrays of :func:`flow_rounds` for ``threads`` threads on a level of n vertices and m nets:
    stamps int64[threads, 1], then marks, nodes_of, distances, queues and regions int64[threads, >= n], net
    marks and touched nets int64[threads, >= m]; the kept ones where they fit (:func:`kept_workspaces`)."""
    capacity = getattr(_KEPT, "capacity", None)
    kept = getattr(_KEPT, "arrays", None)
    if kept is not None and kept[0].shape[0] == threads and kept[1].shape[1] >= n and kept[6].shape[1] >= m:
        return kept
    rows_n, rows_m = (n, m) if capacity is None else (max(n, capacity[0]), max(m, capacity[1]))
    arrays = (np.zeros((threads, 1), dtype=np.int64), *(np.zeros((threads, rows_n), dtype=np.int64) for _ in range(5)),
              *(np.zeros((threads, rows_m), dtype=np.int64) for _ in range(2)))
    if capacity is not None:
        _KEPT.arrays = arrays
    return arrays


@numba.njit(cache=True, nogil=True)
def _blocks_of_net(e, net_offsets, pin_vertices, partition, seen, stamp, distinct):
    """The distinct blocks of net e's pins into ``distinct``; returns their count."""
    found = 0
    for p in range(net_offsets[e], net_offsets[e + 1]):
        block = partition[pin_vertices[p]]
        if seen[block] != stamp:
            seen[block] = stamp
            distinct[found] = block
            found += 1
    return found


@numba.njit(cache=True, nogil=True)
def _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, counts, weights, nets,
                     fill, first, last):
    """For each net first..last-1 of at most ``max_net_size`` pins and each pair a * k + b (a < b) of its blocks:
    count it into ``counts[pair]`` and ``weights[pair]`` (``nets`` empty), or store it at ``nets[fill[pair]]``."""
    seen = np.full(k, -1, dtype=np.int64)
    distinct = np.empty(k, dtype=np.int64)
    for e in range(first, last):
        if net_offsets[e + 1] - net_offsets[e] > max_net_size:
            continue
        found = _blocks_of_net(e, net_offsets, pin_vertices, partition, seen, e, distinct)
        for x in range(found):
            for y in range(found):
                if distinct[x] < distinct[y]:
                    pair = distinct[x] * k + distinct[y]
                    if nets.shape[0] == 0:
                        counts[pair] += 1
                        weights[pair] += net_weights[e]
                    else:
                        nets[fill[pair]] = e
                        fill[pair] += 1


@numba.njit(cache=True, nogil=True)
def _pair_cut_nets_serial(net_offsets, pin_vertices, net_weights, partition, k, max_net_size):
    """:func:`pair_cut_nets` in one call."""
    m = net_offsets.shape[0] - 1
    counts = np.zeros(k * k, dtype=np.int64)
    weights = np.zeros(k * k, dtype=np.int64)
    no_nets = np.empty(0, dtype=np.int64)
    _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, counts, weights, no_nets,
                     no_nets, 0, m)
    offsets = np.zeros(k * k + 1, dtype=np.int64)
    for i in range(k * k):
        offsets[i + 1] = offsets[i] + counts[i]
    nets = np.empty(offsets[k * k], dtype=np.int64)
    if nets.shape[0]:
        _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, offsets, weights, nets,
                         offsets[:-1].copy(), 0, m)
    return offsets, nets, weights


@numba.njit(cache=True, nogil=True)
def _count_cut_pairs_worker(t, firsts, net_offsets, pin_vertices, net_weights, partition, k, max_net_size, counts,
                            weights):
    """Thread t of :func:`pair_cut_nets`: the nets firsts[t]..firsts[t + 1] - 1 counted into its rows of
    ``counts`` and ``weights`` (int64[threads, k * k])."""
    _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, counts[t], weights[t],
                     np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), firsts[t], firsts[t + 1])


@numba.njit(cache=True, nogil=True)
def _fill_cut_pairs_worker(t, firsts, net_offsets, pin_vertices, net_weights, partition, k, max_net_size, nets,
                           cursors):
    """Thread t of :func:`pair_cut_nets`: its nets stored from its row of ``cursors``
    (:func:`hgpart.parallel.thread_cursors`; the counting arguments go unused when storing)."""
    _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, cursors[t], cursors[t],
                     nets, cursors[t], firsts[t], firsts[t + 1])


def pair_cut_nets(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, threads=None):
    """The nets cut between each pair of blocks (nets of at most ``max_net_size`` pins), in net order: CSR
    over pairs a * k + b (a < b), offsets int64[k * k + 1] and nets int64[]; and the pairs' cut weights
    int64[k * k]. On ``threads`` threads (default: numba's) for levels of :data:`hgpart.parallel.SERIAL_BELOW`
    pins or more, one contiguous range of nets each (the same result)."""
    pins = pin_vertices.shape[0]
    if runs_serially(pins):
        return _pair_cut_nets_serial(net_offsets, pin_vertices, net_weights, partition, k, max_net_size)
    threads = threads or numba.get_num_threads()
    counts = np.zeros((threads, k * k), dtype=np.int64)
    weights = np.zeros((threads, k * k), dtype=np.int64)
    arguments = (ranges_by_items(net_offsets, threads), net_offsets, pin_vertices, net_weights, partition, k,
                 max_net_size)
    on_threads(_count_cut_pairs_worker, threads, *arguments, counts, weights)
    offsets = thread_cursors(counts)  # each pair's nets in net order
    nets = np.empty(int(offsets[k * k]), dtype=np.int64)
    if nets.shape[0]:
        on_threads(_fill_cut_pairs_worker, threads, *arguments, nets, counts)
    return offsets, nets, weights.sum(axis=0)


@numba.njit(cache=True, nogil=True)
def _in_batch_order(pairs, k):
    """``pairs`` (int64[]) reordered by batches of disjoint pairs, formed greedily in order: a pair joins the
    first batch after the last one that holds one of its blocks. Pairs sharing a block keep their order, so
    the result of taking them one after the other is the same; taken by parallel threads in this order,
    the pairs next to each other can run at once."""
    batch_of = np.empty(pairs.shape[0], dtype=np.int64)
    last_batch = np.full(k, -1, dtype=np.int64)
    for i in range(pairs.shape[0]):
        a, b = pairs[i] // k, pairs[i] % k
        batch_of[i] = max(last_batch[a], last_batch[b]) + 1
        last_batch[a] = batch_of[i]
        last_batch[b] = batch_of[i]
    return pairs[stable_argsort(batch_of)]


@numba.njit(cache=True, nogil=True)
def _predecessors(pairs, k):
    """For each pair of ``pairs`` (int64[], a * k + b), the last pair before it that holds its block a and the
    last one that holds its block b (indices into ``pairs``; -1: none): int64[len(pairs), 2]."""
    before = np.full((pairs.shape[0], 2), -1, dtype=np.int64)
    last = np.full(k, -1, dtype=np.int64)
    for i in range(pairs.shape[0]):
        a, b = pairs[i] // k, pairs[i] % k
        before[i, 0], before[i, 1] = last[a], last[b]
        last[a], last[b] = i, i
    return before


@numba.njit(cache=True, nogil=True)
def _refine_pairs_worker(t, pairs, before, gains, settled, done, taken, offsets, nets, net_offsets, pin_vertices,
                         vertex_offsets, incident_nets, net_weights, vertex_weights, partition, block_weights,
                         max_block_weights, k, movable, cut_objective, epsilon, alpha, max_distance, max_net_size,
                         stamps, marks, nodes_of, distances, queues, regions, net_marks, touched):
    """Thread t of :func:`_refine_pairs_in_order` (workspace row t): takes the next pair in order from the
    shared counter ``taken`` and starts it once the pairs before it that hold one of its blocks are ``done``."""
    workspace = (stamps[t], marks[t], nodes_of[t], distances[t], queues[t], regions[t], net_marks[t], touched[t])
    while True:
        i = fetch_add(taken, 0, 1)
        if i >= pairs.shape[0]:
            break
        for side in range(2):  # the pairs before are taken, by running threads: the wait ends
            if before[i, side] >= 0:
                while load_acquire(done, before[i, side]) == 0:
                    pass
        pair = pairs[i]
        gains[i], settled[i] = refine_pair(pair // k, pair % k, nets[offsets[pair]:offsets[pair + 1]], net_offsets,
                                           pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                                           partition, block_weights, max_block_weights, movable, cut_objective,
                                           epsilon, alpha, max_distance, max_net_size, workspace)
        store_release(done, i, 1)


def _refine_pairs_in_order(pairs, offsets, nets, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                           net_weights, vertex_weights, partition, block_weights, max_block_weights, k, movable,
                           cut_objective, epsilon, alpha, max_distance, max_net_size, stamps, marks, nodes_of,
                           distances, queues, regions, net_marks, touched):
    """:func:`refine_pair` on each pair of ``pairs`` (int64[], a * k + b) as if one after the other, on the
    workspaces' threads (one row each; :func:`hgpart.parallel.on_threads`): a thread takes the next pair in
    order and starts it once the pairs before it that hold one of its blocks are done. A pair reads and writes
    only its two blocks, so it sees what it would see in order, whatever ran beside it. Returns the gains
    (int64[len(pairs)]) and whether each pair settled (bool[len(pairs)], see :func:`.flow_pair.refine_pair`)."""
    before = _predecessors(pairs, k)
    gains = np.zeros(pairs.shape[0], dtype=np.int64)
    settled = np.zeros(pairs.shape[0], dtype=np.bool_)
    done = np.zeros(pairs.shape[0], dtype=np.int64)
    taken = np.zeros(1, dtype=np.int64)
    on_threads(_refine_pairs_worker, min(stamps.shape[0], pairs.shape[0]), pairs, before, gains, settled, done,
               taken, offsets, nets, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
               vertex_weights, partition, block_weights, max_block_weights, np.int64(k), movable, cut_objective,
               np.float64(epsilon), np.float64(alpha), np.int64(max_distance), np.int64(max_net_size), stamps,
               marks, nodes_of, distances, queues, regions, net_marks, touched)
    return gains, settled


@numba.njit(cache=True, nogil=True)
def _pairs_to_refine(weights, unchanged_since, changes, settled_at, k, min_pair_cut):
    """The pairs (a * k + b) of a round, in batch order (:func:`_in_batch_order`) from the heaviest cut down: those
    whose cut weighs more than ``min_pair_cut``, has changed since the pair last gained nothing, and that
    have not settled while neither of their blocks has changed."""
    order = stable_argsort(-weights)
    wanted = np.zeros(order.shape[0], dtype=np.bool_)
    for i in range(order.shape[0]):
        pair = order[i]
        unchanged = settled_at[pair, 0] == changes[pair // k] and settled_at[pair, 1] == changes[pair % k]
        wanted[i] = weights[pair] > min_pair_cut and weights[pair] != unchanged_since[pair] and not unchanged
    return _in_batch_order(order[wanted], k)


@numba.njit(cache=True, nogil=True)
def _record_round(pairs, gains, settled, weights, unchanged_since, changes, settled_at, k):
    """The round's bookkeeping, in the order the pairs ran (a later pair's change unsettles an earlier one);
    returns the round's gain."""
    gained = 0
    for j in range(pairs.shape[0]):
        pair = pairs[j]
        gained += gains[j]
        unchanged_since[pair] = weights[pair] if gains[j] == 0 else -1
        if gains[j] > 0:
            changes[pair // k] += 1
            changes[pair % k] += 1
        if settled[j]:
            settled_at[pair, 0], settled_at[pair, 1] = changes[pair // k], changes[pair % k]
    return gained


def flow_rounds(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                block_weights, max_block_weights, k, movable, cut_objective, epsilon, alpha, max_distance,
                max_net_size, rounds, min_improvement, objective, threads, min_pair_cut):
    """Rounds of :func:`refine_pair` over the pairs of blocks with a cut between them, heaviest cut first, on
    ``threads`` threads (:func:`_refine_pairs_in_order`; the result does not depend on their number). A pair is
    taken again only once its cut weight has changed since it last gained nothing, and never while its cut
    weighs at most ``min_pair_cut``; rounds stop once one improves ``objective`` (its value before) by less
    than ``min_improvement`` of it. A pair that settled (:func:`.flow_pair.refine_pair`) is not taken again
    while neither of its blocks has changed since: it would repeat its last regions for nothing (with k = 2,
    the whole second round). ``partition`` and ``block_weights`` are updated in place; returns the total
    improvement."""
    stamps, marks, nodes_of, distances, queues, regions, net_marks, touched = _workspace(
        threads, vertex_offsets.shape[0] - 1, net_offsets.shape[0] - 1)
    unchanged_since = np.full(k * k, -1, dtype=np.int64)  # a pair's cut weight when it last gained nothing
    changes = np.zeros(k, dtype=np.int64)  # how often each block has changed
    settled_at = np.full((k * k, 2), -1, dtype=np.int64)  # a settled pair's blocks' changes when it settled
    total = 0
    for _ in range(rounds):
        offsets, nets, weights = pair_cut_nets(net_offsets, pin_vertices, net_weights, partition, k, max_net_size)
        pairs = _pairs_to_refine(weights, unchanged_since, changes, settled_at, k, min_pair_cut)
        if pairs.shape[0] == 1 and threads >= 2:  # one pair: the threads speculate on its next alpha
            pair = pairs[0]
            gain, settled_one = refine_pair_speculating(
                pair // k, pair % k, nets[offsets[pair]:offsets[pair + 1]], net_offsets, pin_vertices,
                vertex_offsets, incident_nets, net_weights, vertex_weights, partition, block_weights,
                max_block_weights, movable, cut_objective, epsilon, alpha, max_distance, max_net_size, stamps,
                marks, nodes_of, distances, queues, regions, net_marks, touched)
            gains, settled = np.full(1, gain, dtype=np.int64), np.full(1, settled_one, dtype=np.bool_)
        else:
            gains, settled = _refine_pairs_in_order(pairs, offsets, nets, net_offsets, pin_vertices, vertex_offsets,
                                                    incident_nets, net_weights, vertex_weights, partition,
                                                    block_weights, max_block_weights, k, movable, cut_objective,
                                                    epsilon, alpha, max_distance, max_net_size, stamps, marks,
                                                    nodes_of, distances, queues, regions, net_marks, touched)
        gained = int(_record_round(pairs, gains, settled, weights, unchanged_since, changes, settled_at, k))
        total += gained
        if gained <= min_improvement * max(objective - total + gained, 1):
            break
    return total


def flow_refine(hypergraph, partition, k, max_block_weights, epsilon, config: FlowConfig = FlowConfig(),
                cut_objective: bool = False, movable=None, input_level: bool = True) -> np.ndarray:
    """Flow-based refinement of a k-way partition (host arrays); returns the refined partition (a new int32[n]
    array), never worse in the objective and within ``max_block_weights`` where the input was.

    Parameters
    ----------
    hypergraph : Hypergraph
    partition : int32[n]
    k : int
    max_block_weights : int64[k]
    epsilon : float
        The imbalance behind ``max_block_weights`` (it scales the regions).
    config : FlowConfig
    cut_objective : bool
        Minimise the cut instead of km1.
    movable : bool[n] or None
        False for fixed vertices.
    input_level : bool
        Whether this is the input level; on coarser ones pairs with at most ``config.coarse_min_pair_cut`` of
        cut weight are skipped, regions grow to ``config.coarse_alpha`` (k > 2) and rounds stop after
        ``config.coarse_rounds``.
    """
    from ..metrics import evaluate

    h = hypergraph
    partition = np.array(partition, dtype=np.int32)
    if k < 2 or h.num_nets == 0:
        return partition
    movable = np.ones(h.num_vertices, dtype=np.bool_) if movable is None else np.asarray(movable, dtype=np.bool_)
    max_block_weights = np.asarray(max_block_weights, dtype=np.int64)
    block_weights = scatter_sum(partition, h.vertex_weights, k).astype(np.int64)
    metrics = evaluate(h, partition, k)
    objective = metrics.cut if cut_objective else metrics.km1
    if objective == 0:
        return partition
    alpha, rounds, min_pair_cut = ((config.alpha, config.rounds, 0) if input_level else
                                   (config.coarse_alpha if k > 2 else config.alpha, config.coarse_rounds,
                                    config.coarse_min_pair_cut))
    flow_rounds(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets, h.net_weights.astype(np.int64),
                h.vertex_weights.astype(np.int64), partition, block_weights, max_block_weights, k, movable,
                cut_objective, float(epsilon), float(alpha), config.max_distance, config.max_net_size, rounds,
                float(config.min_improvement), int(objective), numba.get_num_threads(), min_pair_cut)
    return partition
