"""Flow-based refinement: minimum cuts of regions around the cut between two blocks (numba).

T. Heuer, P. Sanders and S. Schlag, "Network Flow-Based Refinement for Multilevel Hypergraph Partitioning",
SEA 2018 (KaHyPar-MF), and its parallel k-way scheme in L. Gottesbüren, T. Heuer, P. Sanders and S. Schlag,
"Scalable Shared-Memory Hypergraph Partitioning", ALENEX 2021 (Mt-KaHyPar):

* For a pair of blocks (a, b), a **region** grows by breadth-first search from the vertices of the nets cut
  between a and b, inside each block, at most ``max_distance`` hops from the cut and at most as heavy as the
  other block can take: ``(1 + alpha * epsilon) * perfect - c(other block)``.
* The region's **flow network** is Lawler's expansion (E. L. Lawler, "Cutsets and partitions of hypergraphs",
  Networks 3, 1973): a net e becomes two nodes e_in -> e_out joined by an arc of capacity w(e); each region
  pin v has arcs v -> e_in and e_out -> v of infinite capacity; the source stands for block a's vertices
  outside the region (source -> e_in where e has one), the sink for block b's (e_out -> sink). A minimum
  cut then cuts nets, not pins, and its capacity is the weight of the nets it cuts. A net with one region
  pin v is an arc source -> v or v -> sink of capacity w(e) instead, one whose only pins in a and b are two
  region pins an edge of capacity w(e) in both directions (graphs, binary clauses); a net with fewer pins
  in a and b, or with pins outside the region on both sides, is left out.
* Of a chain of minimum cuts from the one closest to the source to the one closest to the sink (the
  strongly connected components of the residual network, as KaHyPar-MF's most balanced minimum cut), the
  most balanced one that keeps both blocks within their bounds replaces the region's sides if it cuts less
  than before; an improvement is followed by another region around the new cut; a better cut that no
  member of the chain can balance halves alpha.

Why a pair's network measures km1 exactly: a net's km1 term counts its blocks; moving vertices between a
and b changes only whether the net has pins in a and in b, which adds 1 to lambda(e) - 1 exactly when it
has both, that is, when the 2-way net on its pins in a and b is cut. For the cut objective a net with a pin
in a third block is cut whatever a and b do, so it is left out.

Pairs of blocks are taken in rounds, heaviest cut first, on parallel threads: a thread takes the next pair
(in batches of disjoint pairs) and starts it once the pairs before it that share one of its blocks are done. Pairs of disjoint blocks never
read what the other changes, so every pair sees what it would see were the pairs taken one after the other,
and the result is the same on any number of threads. A pair is taken again in a later round only once its
cut weight has changed since it last gained nothing. A pair alone in its round (always, with two blocks) has
the threads to itself: beside each region at alpha, those at alpha / 2, alpha / 4, ... that follow it when
its better cuts are all unbalanced are found at the same time.
"""

from __future__ import annotations

import numba
import numpy as np

from ..config import FlowConfig
from ..hypergraph import scatter_sum
from ..parallel import fetch_add, load_acquire, store_release
from .max_flow import INFINITE, max_flow, minimum_cut_ranks, residual_graph

IMPROVED, UNBALANCED, NO_GAIN, NO_REGION = 1, 2, 3, 4  # outcomes of a region (_attempt)


@numba.njit(cache=True, nogil=True)
def _grow_region(net_offsets, pin_vertices, vertex_offsets, incident_nets, vertex_weights, partition, movable,
                 blocks, seeds, limits, max_net_size, max_distance, stamp, mark, distance, queue, region, net_mark):
    """Breadth-first search from ``seeds`` inside each of the two ``blocks`` (int[2]); a vertex joins the
    region while its side's weight stays within ``limits[side]``, and its neighbours are visited while it is
    fewer than ``max_distance`` hops from a seed. Nets of more than ``max_net_size`` pins are not followed;
    fixed vertices never join. Marks members with ``mark[v] = stamp``; returns their count in ``region``.

    A net's pins are visited once per side (``net_mark[e] = -(2 stamp + side)``, never a stamp): the first
    member to follow it queues all of them, at the least distance, so later members would find nothing new."""
    count = 0
    for side in range(2):
        block = blocks[side]
        followed = -(2 * stamp + side)
        head, tail = 0, 0
        for v in seeds:
            if partition[v] == block and mark[v] != stamp and movable[v]:
                mark[v] = -stamp  # queued
                distance[v] = 0
                queue[tail] = v
                tail += 1
        weight = 0
        while head < tail:
            v = queue[head]
            head += 1
            if weight + vertex_weights[v] > limits[side]:
                continue
            weight += vertex_weights[v]
            mark[v] = stamp
            region[count] = v
            count += 1
            if distance[v] >= max_distance:
                continue
            for i in range(vertex_offsets[v], vertex_offsets[v + 1]):
                e = incident_nets[i]
                if net_offsets[e + 1] - net_offsets[e] > max_net_size or net_mark[e] == followed:
                    continue
                net_mark[e] = followed
                for p in range(net_offsets[e], net_offsets[e + 1]):
                    u = pin_vertices[p]
                    if partition[u] == block and mark[u] != stamp and mark[u] != -stamp and movable[u]:
                        mark[u] = -stamp
                        distance[u] = distance[v] + 1
                        queue[tail] = u
                        tail += 1
    return count


@numba.njit(cache=True, inline="always")
def _add_arc(tails, heads, capacities, arc, tail, head, capacity):
    tails[arc], heads[arc], capacities[arc] = tail, head, capacity
    return arc + 1


@numba.njit(cache=True, nogil=True)
def _region_network(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, partition, blocks,
                    region, count, stamp, mark, node_of, net_mark, touched, cut_objective):
    """Lawler's network of a region (see the module's docstring). Returns (num_nodes, tails, heads,
    capacities, the weight of the network's nets cut now, the number of touched nets in ``touched``); node 0
    is the source, 1 the sink, ``node_of[v]`` (2..) each region vertex."""
    a, b = blocks[0], blocks[1]
    for i in range(count):
        node_of[region[i]] = 2 + i
    touched_count = 0
    for i in range(count):
        v = region[i]
        for j in range(vertex_offsets[v], vertex_offsets[v + 1]):
            e = incident_nets[j]
            if net_mark[e] != stamp:
                net_mark[e] = stamp
                touched[touched_count] = e
                touched_count += 1
    arcs = 0
    kept = 0
    flags = np.zeros(touched_count, dtype=np.int64)  # 1 a net's two nodes, 2 a source pin, 4 a sink pin, 8 an edge
    for t in range(touched_count):
        e = touched[t]
        region_pins, source_pins, sink_pins, other = 0, 0, 0, False
        for p in range(net_offsets[e], net_offsets[e + 1]):
            u = pin_vertices[p]
            if mark[u] == stamp:
                region_pins += 1
            elif partition[u] == a:
                source_pins += 1
            elif partition[u] == b:
                sink_pins += 1
            else:
                other = True
        if region_pins + source_pins + sink_pins < 2 or (source_pins > 0 and sink_pins > 0) or (
                cut_objective and other):
            continue  # never cut, or cut whatever the region does
        flags[t] = (2 if source_pins > 0 else 0) | (4 if sink_pins > 0 else 0)
        if region_pins == 1 or (region_pins == 2 and source_pins + sink_pins == 0):  # an arc or an edge
            flags[t] |= 8
            arcs += 2 if region_pins == 2 else 1
        else:
            flags[t] |= 1
            arcs += 1 + 2 * region_pins + (1 if source_pins > 0 else 0) + (1 if sink_pins > 0 else 0)
            kept += 1
    num_nodes = 2 + count + 2 * kept
    tails = np.empty(arcs, dtype=np.int64)
    heads = np.empty(arcs, dtype=np.int64)
    capacities = np.empty(arcs, dtype=np.int64)
    arc = 0
    net_node = 2 + count
    cut_now = 0
    for t in range(touched_count):
        if flags[t] == 0:
            continue
        e = touched[t]
        w = net_weights[e]
        edge = (flags[t] & 8) != 0
        if edge:  # the first region pin stands for the net
            net_in, net_out, terminal_capacity = -1, -1, w
        else:
            net_in, net_out, terminal_capacity = net_node, net_node + 1, INFINITE
            net_node += 2
            arc = _add_arc(tails, heads, capacities, arc, net_in, net_out, w)
        has_a, has_b = (flags[t] & 2) != 0, (flags[t] & 4) != 0
        for p in range(net_offsets[e], net_offsets[e + 1]):
            u = pin_vertices[p]
            if mark[u] != stamp:
                continue
            has_a = has_a or partition[u] == a
            has_b = has_b or partition[u] == b
            v = node_of[u]
            if edge and net_in < 0:
                net_in, net_out = v, v
            elif edge:
                arc = _add_arc(tails, heads, capacities, arc, net_in, v, w)
                arc = _add_arc(tails, heads, capacities, arc, v, net_in, w)
            else:
                arc = _add_arc(tails, heads, capacities, arc, v, net_in, INFINITE)
                arc = _add_arc(tails, heads, capacities, arc, net_out, v, INFINITE)
        if flags[t] & 2:
            arc = _add_arc(tails, heads, capacities, arc, 0, net_in, terminal_capacity)
        if flags[t] & 4:
            arc = _add_arc(tails, heads, capacities, arc, net_out, 1, terminal_capacity)
        if has_a and has_b:
            cut_now += w
    return num_nodes, tails, heads, capacities, cut_now, touched_count


@numba.njit(cache=True, nogil=True)
def _cut_between(e, a, b, net_offsets, pin_vertices, partition):
    """Whether net e has pins in both block a and block b."""
    has_a, has_b = False, False
    for p in range(net_offsets[e], net_offsets[e + 1]):
        block = partition[pin_vertices[p]]
        has_a = has_a or block == a
        has_b = has_b or block == b
        if has_a and has_b:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _boundary(nets, a, b, net_offsets, pin_vertices, partition, max_net_size, stamp, mark):
    """The pins in a or b of ``nets`` cut between a and b (nets of at most ``max_net_size`` pins), in net
    order, each once (``mark`` set to ``stamp``); returns (vertices, the nets still cut)."""
    count = 0
    for e in nets:
        if net_offsets[e + 1] - net_offsets[e] <= max_net_size:
            count += net_offsets[e + 1] - net_offsets[e]
    seeds = np.empty(count, dtype=np.int64)
    still_cut = np.empty(nets.shape[0], dtype=np.int64)
    count, cut = 0, 0
    for e in nets:
        if net_offsets[e + 1] - net_offsets[e] > max_net_size or not _cut_between(e, a, b, net_offsets,
                                                                                  pin_vertices, partition):
            continue
        still_cut[cut] = e
        cut += 1
        for p in range(net_offsets[e], net_offsets[e + 1]):
            v = pin_vertices[p]
            if (partition[v] == a or partition[v] == b) and mark[v] != stamp:
                mark[v] = stamp
                seeds[count] = v
                count += 1
    return seeds[:count], still_cut[:cut]


@numba.njit(cache=True, nogil=True)
def _attempt(a, b, seeds, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
             partition, block_weights, max_block_weights, movable, cut_objective, epsilon, alpha, max_distance,
             max_net_size, workspace, result):
    """One region around the cut between a and b, from ``seeds``, at ``alpha``: grow it, build its network,
    find a maximum flow and the most balanced minimum cut, without changing the partition.

    ``result`` (int64[7]) receives (outcome, the cut weight of the network's nets now, the flow, the region's
    size, the touched nets (in ``workspace``'s touched), a's and b's weights under the cut): outcome
    NO_REGION, NO_GAIN (no smaller cut), UNBALANCED or IMPROVED; with IMPROVED, ``queue[i]`` (workspace) is 1
    where region vertex i goes to a under the cut (the queue is free once the region has grown)."""
    stamp_box, mark, node_of, distance, queue, region, net_mark, touched = workspace
    blocks = np.array([a, b], dtype=np.int64)
    limits = np.zeros(2, dtype=np.int64)
    for side in range(2):
        other = blocks[1 - side]
        perfect = max_block_weights[other] / (1.0 + epsilon)
        limits[side] = max(0, np.int64((1.0 + alpha * epsilon) * perfect) - block_weights[other])
    stamp_box[0] += 1
    stamp = stamp_box[0]
    result[:] = 0
    result[0] = NO_REGION
    count = _grow_region(net_offsets, pin_vertices, vertex_offsets, incident_nets, vertex_weights, partition,
                         movable, blocks, seeds, limits, max_net_size, max_distance, stamp, mark, distance,
                         queue, region, net_mark)
    if count == 0:
        return
    num_nodes, tails, heads, capacities, cut_now, touched_count = _region_network(
        net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, partition, blocks, region, count,
        stamp, mark, node_of, net_mark, touched, cut_objective)
    offsets, targets, residual, reverse = residual_graph(num_nodes, tails, heads, capacities)
    flow = max_flow(offsets, targets, residual, reverse, 0, 1)
    result[1], result[2], result[3], result[4] = cut_now, flow, count, touched_count
    if flow >= cut_now:
        result[0] = NO_GAIN  # a smaller region has no smaller cut
        return
    result[0] = _most_balanced_cut(a, b, region, count, offsets, targets, residual, reverse, vertex_weights,
                                   partition, block_weights, max_block_weights, queue, result)


@numba.njit(cache=True, nogil=True)
def _most_balanced_cut(a, b, region, count, offsets, targets, residual, reverse, vertex_weights, partition,
                       block_weights, max_block_weights, to_a, result):
    """Of the chain of minimum cuts from the one closest to the source to the one closest to the sink
    (:func:`.max_flow.minimum_cut_ranks`), the most balanced one that keeps both blocks within their bounds,
    the one closer to the source on ties: to_a[i] = 1 where region vertex i goes to a under it, and a's and b's
    weights into result[5], result[6]; returns IMPROVED, or UNBALANCED where there is none."""
    rank, cuts = minimum_cut_ranks(offsets, targets, residual, reverse, 0, 1)
    region_a, region_b = 0, 0
    rank_weight = np.zeros(cuts + 2, dtype=np.int64)  # region weight of each rank; then on a's side under cut j
    for i in range(count):
        v = region[i]
        w = vertex_weights[v]
        if partition[v] == a:
            region_a += w
        else:
            region_b += w
        rank_weight[rank[2 + i]] += w
    for j in range(1, cuts + 1):
        rank_weight[j] += rank_weight[j - 1]
    base_a, base_b = block_weights[a] - region_a, block_weights[b] - region_b
    total = region_a + region_b
    best, best_load = -1, np.inf
    for j in range(cuts + 1):
        weight_a = base_a + rank_weight[j]
        weight_b = base_b + total - rank_weight[j]
        if weight_a <= max_block_weights[a] and weight_b <= max_block_weights[b]:
            load = max(weight_a / max(max_block_weights[a], 1), weight_b / max(max_block_weights[b], 1))
            if load < best_load:
                best, best_load = j, load
    if best < 0:
        return UNBALANCED
    for i in range(count):
        to_a[i] = 1 if rank[2 + i] <= best else 0
    result[5] = base_a + rank_weight[best]
    result[6] = base_b + total - rank_weight[best]
    return IMPROVED


@numba.njit(cache=True, nogil=True)
def _take_cut(a, b, nets, workspace, result, partition, block_weights):
    """Apply an IMPROVED :func:`_attempt` (its ``workspace`` and ``result``) to ``partition`` and
    ``block_weights``; returns the nets to grow the next region from: ``nets`` and the touched ones, where
    the cut can only have moved to."""
    _, _, _, _, queue, region, _, touched = workspace
    for i in range(result[3]):
        partition[region[i]] = a if queue[i] == 1 else b
    block_weights[a] = result[5]
    block_weights[b] = result[6]
    return np.unique(np.concatenate((nets, touched[:result[4]])))


@numba.njit(cache=True, nogil=True)
def refine_pair(a, b, nets, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                partition, block_weights, max_block_weights, movable, cut_objective, epsilon, alpha, max_distance,
                max_net_size, workspace):
    """Flow refinement between blocks a and b, from the nets ``nets`` (int64[]) cut between them; updates
    ``partition`` and ``block_weights`` in place and returns the objective's improvement (>= 0): regions
    around the cut while they improve it, alpha halved after one whose better cuts are all unbalanced.

    ``workspace`` is (stamp int64[1], mark int64[n], node_of int64[n], distance int64[n], queue int64[n],
    region int64[n], net_mark int64[m], touched int64[m]), shared by the calls of one thread."""
    stamp_box, mark = workspace[0], workspace[1]
    result = np.zeros(7, dtype=np.int64)
    gained = 0
    while alpha >= 1.0:
        stamp_box[0] += 1
        seeds, nets = _boundary(nets, a, b, net_offsets, pin_vertices, partition, max_net_size, stamp_box[0],
                                mark)
        if nets.shape[0] == 0:
            break
        _attempt(a, b, seeds, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
                 partition, block_weights, max_block_weights, movable, cut_objective, epsilon, alpha, max_distance,
                 max_net_size, workspace, result)
        if result[0] == UNBALANCED:
            alpha /= 2.0
            continue
        if result[0] != IMPROVED:
            break
        gained += result[1] - result[2]
        nets = _take_cut(a, b, nets, workspace, result, partition, block_weights)
    return gained


@numba.njit(cache=True, parallel=True)
def _refine_pair_speculating(a, b, nets, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                             vertex_weights, partition, block_weights, max_block_weights, movable, cut_objective,
                             epsilon, alpha, max_distance, max_net_size, stamps, marks, nodes_of, distances, queues,
                             regions, net_marks, touched):
    """:func:`refine_pair` on the workspaces' threads (one row each), with the same result: each region at
    alpha is found beside those at alpha / 2, alpha / 4, ... (as many as there are threads and alphas of at
    least 1) that would follow it were its better cuts all unbalanced; the partition is then unchanged, so
    all start from the same state, and the first that is not unbalanced is taken. For a pair that has the
    threads to itself (k = 2, where the one pair's flows would leave the others idle)."""
    threads = stamps.shape[0]
    results = np.zeros((threads, 7), dtype=np.int64)
    gained = 0
    while alpha >= 1.0:
        stamps[0, 0] += 1
        seeds, nets = _boundary(nets, a, b, net_offsets, pin_vertices, partition, max_net_size, stamps[0, 0],
                                marks[0])
        if nets.shape[0] == 0:
            break
        tries = 1
        while tries < threads and alpha / 2.0 ** tries >= 1.0:
            tries += 1
        for i in numba.prange(tries):
            _attempt(a, b, seeds, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                     vertex_weights, partition, block_weights, max_block_weights, movable, cut_objective, epsilon,
                     alpha / 2.0 ** i, max_distance, max_net_size,
                     (stamps[i], marks[i], nodes_of[i], distances[i], queues[i], regions[i], net_marks[i],
                      touched[i]), results[i])
        chosen = 0
        while chosen < tries - 1 and results[chosen, 0] == UNBALANCED:
            chosen += 1
            alpha /= 2.0
        if results[chosen, 0] == UNBALANCED:
            alpha /= 2.0
            continue
        if results[chosen, 0] != IMPROVED:
            break
        gained += results[chosen, 1] - results[chosen, 2]
        nets = _take_cut(a, b, nets, (stamps[chosen], marks[chosen], nodes_of[chosen], distances[chosen],
                                      queues[chosen], regions[chosen], net_marks[chosen], touched[chosen]),
                         results[chosen], partition, block_weights)
    return gained


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
def _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, offsets, weights, nets,
                     fill):
    """For each net of at most ``max_net_size`` pins and each pair a * k + b (a < b) of its blocks: count it
    into ``offsets[pair + 1]`` and ``weights[pair]`` (``nets`` empty), or store it at ``nets[fill[pair]]``."""
    seen = np.full(k, -1, dtype=np.int64)
    distinct = np.empty(k, dtype=np.int64)
    for e in range(net_offsets.shape[0] - 1):
        if net_offsets[e + 1] - net_offsets[e] > max_net_size:
            continue
        found = _blocks_of_net(e, net_offsets, pin_vertices, partition, seen, e, distinct)
        for x in range(found):
            for y in range(found):
                if distinct[x] < distinct[y]:
                    pair = distinct[x] * k + distinct[y]
                    if nets.shape[0] == 0:
                        offsets[pair + 1] += 1
                        weights[pair] += net_weights[e]
                    else:
                        nets[fill[pair]] = e
                        fill[pair] += 1


@numba.njit(cache=True, nogil=True)
def pair_cut_nets(net_offsets, pin_vertices, net_weights, partition, k, max_net_size):
    """The nets cut between each pair of blocks (nets of at most ``max_net_size`` pins), in net order: CSR
    over pairs a * k + b (a < b), offsets int64[k * k + 1] and nets int64[]; and the pairs' cut weights
    int64[k * k]."""
    offsets = np.zeros(k * k + 1, dtype=np.int64)
    weights = np.zeros(k * k, dtype=np.int64)
    no_nets = np.empty(0, dtype=np.int64)
    _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, offsets, weights, no_nets,
                     no_nets)
    for i in range(k * k):
        offsets[i + 1] += offsets[i]
    nets = np.empty(offsets[k * k], dtype=np.int64)
    if nets.shape[0]:
        _visit_cut_pairs(net_offsets, pin_vertices, net_weights, partition, k, max_net_size, offsets, weights, nets,
                         offsets[:-1].copy())
    return offsets, nets, weights


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
    return pairs[np.argsort(batch_of, kind="mergesort")]


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


@numba.njit(cache=True, parallel=True)
def _refine_pairs_in_order(pairs, offsets, nets, net_offsets, pin_vertices, vertex_offsets, incident_nets,
                           net_weights, vertex_weights, partition, block_weights, max_block_weights, k, movable,
                           cut_objective, epsilon, alpha, max_distance, max_net_size, stamps, marks, nodes_of,
                           distances, queues, regions, net_marks, touched):
    """:func:`refine_pair` on each pair of ``pairs`` (int64[], a * k + b) as if one after the other, on the
    workspaces' threads (one row each): a thread takes the next pair in order and starts it once the pairs
    before it that hold one of its blocks are done. A pair reads and writes only its two blocks, so it sees
    what it would see in order, whatever ran beside it. Returns the gains (int64[len(pairs)])."""
    before = _predecessors(pairs, k)
    gains = np.zeros(pairs.shape[0], dtype=np.int64)
    done = np.zeros(pairs.shape[0], dtype=np.int64)
    taken = np.zeros(1, dtype=np.int64)
    for t in numba.prange(stamps.shape[0]):
        workspace = (stamps[t], marks[t], nodes_of[t], distances[t], queues[t], regions[t], net_marks[t],
                     touched[t])
        while True:
            i = fetch_add(taken, 0, 1)
            if i >= pairs.shape[0]:
                break
            for side in range(2):  # the pairs before are taken, by running threads: the wait ends
                if before[i, side] >= 0:
                    while load_acquire(done, before[i, side]) == 0:
                        pass
            pair = pairs[i]
            gains[i] = refine_pair(pair // k, pair % k, nets[offsets[pair]:offsets[pair + 1]], net_offsets,
                                   pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                                   block_weights, max_block_weights, movable, cut_objective, epsilon, alpha,
                                   max_distance, max_net_size, workspace)
            store_release(done, i, 1)
    return gains


@numba.njit(cache=True, nogil=True)
def flow_rounds(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights, partition,
                block_weights, max_block_weights, k, movable, cut_objective, epsilon, alpha, max_distance,
                max_net_size, rounds, min_improvement, objective, threads, min_pair_cut):
    """Rounds of :func:`refine_pair` over the pairs of blocks with a cut between them, heaviest cut first, on
    ``threads`` threads (:func:`_refine_pairs_in_order`; the result does not depend on their number). A pair is
    taken again only once its cut weight has changed since it last gained nothing, and never while its cut
    weighs at most ``min_pair_cut``; rounds stop once one improves ``objective`` (its value before) by less
    than ``min_improvement`` of it. ``partition`` and ``block_weights`` are updated in place; returns the total
    improvement."""
    n = vertex_offsets.shape[0] - 1
    m = net_offsets.shape[0] - 1
    stamps = np.zeros((threads, 1), dtype=np.int64)
    marks, nodes_of = np.zeros((threads, n), dtype=np.int64), np.zeros((threads, n), dtype=np.int64)
    distances, queues = np.zeros((threads, n), dtype=np.int64), np.zeros((threads, n), dtype=np.int64)
    regions = np.zeros((threads, n), dtype=np.int64)
    net_marks, touched = np.zeros((threads, m), dtype=np.int64), np.zeros((threads, m), dtype=np.int64)
    unchanged_since = np.full(k * k, -1, dtype=np.int64)  # a pair's cut weight when it last gained nothing
    total = 0
    for _ in range(rounds):
        offsets, nets, weights = pair_cut_nets(net_offsets, pin_vertices, net_weights, partition, k, max_net_size)
        order = np.argsort(-weights, kind="mergesort")
        wanted = np.zeros(order.shape[0], dtype=np.bool_)
        for i in range(order.shape[0]):
            wanted[i] = weights[order[i]] > min_pair_cut and weights[order[i]] != unchanged_since[order[i]]
        pairs = _in_batch_order(order[wanted], k)
        if pairs.shape[0] == 1 and threads >= 2:  # one pair: the threads speculate on its next alpha
            pair = pairs[0]
            gains = np.full(1, _refine_pair_speculating(
                pair // k, pair % k, nets[offsets[pair]:offsets[pair + 1]], net_offsets, pin_vertices,
                vertex_offsets, incident_nets, net_weights, vertex_weights, partition, block_weights,
                max_block_weights, movable, cut_objective, epsilon, alpha, max_distance, max_net_size, stamps,
                marks, nodes_of, distances, queues, regions, net_marks, touched), dtype=np.int64)
        else:
            gains = _refine_pairs_in_order(pairs, offsets, nets, net_offsets, pin_vertices, vertex_offsets,
                                           incident_nets, net_weights, vertex_weights, partition, block_weights,
                                           max_block_weights, k, movable, cut_objective, epsilon, alpha,
                                           max_distance, max_net_size, stamps, marks, nodes_of, distances, queues,
                                           regions, net_marks, touched)
        gained = 0
        for j in range(pairs.shape[0]):
            gained += gains[j]
            unchanged_since[pairs[j]] = weights[pairs[j]] if gains[j] == 0 else -1
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
