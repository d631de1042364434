"""Flow-based refinement of one pair of blocks: minimum cuts of regions around the cut between them (numba).

T. Heuer, P. Sanders and S. Schlag, "Network Flow-Based Refinement for Multilevel Hypergraph Partitioning",
SEA 2018 (KaHyPar-MF):

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

A pair reads and writes only its two blocks (their vertices' blocks and weights), which lets
:mod:`.flows` refine pairs of disjoint blocks at once. A pair with the threads to itself
(:func:`refine_pair_speculating`) finds, beside each region at alpha, those at alpha / 2, alpha / 4, ... that
follow it when its better cuts are all unbalanced, at the same time.
"""

from __future__ import annotations

import numba
import numpy as np

from ..parallel import on_threads
from .max_flow import INFINITE, SEARCH_TREE_WORK, max_flow, minimum_cut_ranks, residual_graph

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
    flow = max_flow(offsets, targets, residual, reverse, 0, 1, SEARCH_TREE_WORK, cut_now)
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
    ``partition`` and ``block_weights`` in place: regions around the cut while they improve it, alpha halved
    after one whose better cuts are all unbalanced.

    ``workspace`` is (stamp int64[1], mark int64[n], node_of int64[n], distance int64[n], queue int64[n],
    region int64[n], net_mark int64[m], touched int64[m]), shared by the calls of one thread.

    Returns
    -------
    gained : int
        The objective's improvement (>= 0).
    settled : bool
        Whether the result was reached at the ``alpha`` given (no improvement at a halved alpha), so that
        refining the pair again from it, while its two blocks stay as they are, repeats the same regions and
        changes nothing: :func:`.flows.flow_rounds` then skips the pair."""
    stamp_box, mark = workspace[0], workspace[1]
    result = np.zeros(7, dtype=np.int64)
    gained = 0
    start_alpha = alpha
    settled = True
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
        settled = alpha == start_alpha
        nets = _take_cut(a, b, nets, workspace, result, partition, block_weights)
    return gained, settled


@numba.njit(cache=True, nogil=True)
def _attempt_at_halved_alpha(i, a, b, seeds, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                             vertex_weights, partition, block_weights, max_block_weights, movable, cut_objective,
                             epsilon, alpha, max_distance, max_net_size, stamps, marks, nodes_of, distances, queues,
                             regions, net_marks, touched, results):
    """Thread i of :func:`refine_pair_speculating`: the region at alpha / 2^i, in workspace row i, into
    ``results[i]``."""
    _attempt(a, b, seeds, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, vertex_weights,
             partition, block_weights, max_block_weights, movable, cut_objective, epsilon, alpha / 2.0 ** i,
             max_distance, max_net_size, (stamps[i], marks[i], nodes_of[i], distances[i], queues[i], regions[i],
                                          net_marks[i], touched[i]), results[i])


def refine_pair_speculating(a, b, nets, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights,
                            vertex_weights, partition, block_weights, max_block_weights, movable, cut_objective,
                            epsilon, alpha, max_distance, max_net_size, stamps, marks, nodes_of, distances, queues,
                            regions, net_marks, touched):
    """:func:`refine_pair` on the workspaces' threads (one row each; :func:`hgpart.parallel.on_threads`), with
    the same result: each region at alpha is found beside those at alpha / 2, alpha / 4, ... (as many as there
    are threads and alphas of at least 1) that would follow it were its better cuts all unbalanced; the
    partition is then unchanged, so all start from the same state, and the first that is not unbalanced is
    taken. For a pair that has the threads to itself (alone in its round: always with k = 2, where the others
    would idle). Returns (gained, settled) as :func:`refine_pair`."""
    threads = stamps.shape[0]
    results = np.zeros((threads, 7), dtype=np.int64)
    a, b = np.int64(a), np.int64(b)
    epsilon, max_distance, max_net_size = np.float64(epsilon), np.int64(max_distance), np.int64(max_net_size)
    gained = 0
    start_alpha = alpha
    settled = True
    while alpha >= 1.0:
        stamps[0, 0] += 1
        seeds, nets = _boundary(nets, a, b, net_offsets, pin_vertices, partition, max_net_size, stamps[0, 0],
                                marks[0])
        if nets.shape[0] == 0:
            break
        tries = 1
        while tries < threads and alpha / 2.0 ** tries >= 1.0:
            tries += 1
        on_threads(_attempt_at_halved_alpha, tries, a, b, seeds, net_offsets, pin_vertices, vertex_offsets,
                   incident_nets, net_weights, vertex_weights, partition, block_weights, max_block_weights, movable,
                   cut_objective, epsilon, np.float64(alpha), max_distance, max_net_size, stamps, marks, nodes_of,
                   distances, queues, regions, net_marks, touched, results)
        chosen = 0
        while chosen < tries - 1 and results[chosen, 0] == UNBALANCED:
            chosen += 1
            alpha /= 2.0
        if results[chosen, 0] == UNBALANCED:
            alpha /= 2.0
            continue
        if results[chosen, 0] != IMPROVED:
            break
        gained += int(results[chosen, 1] - results[chosen, 2])
        settled = alpha == start_alpha
        nets = _take_cut(a, b, nets, (stamps[chosen], marks[chosen], nodes_of[chosen], distances[chosen],
                                      queues[chosen], regions[chosen], net_marks[chosen], touched[chosen]),
                         results[chosen], partition, block_weights)
    return gained, settled
