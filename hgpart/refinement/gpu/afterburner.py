"""The afterburner on the device: each Jet candidate's gain recomputed as if every better-ranked candidate
had moved first, so that moves which undo each other's gains are dropped; step 3 of a round of :mod:`.jet`.

The afterburner of M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet: Multilevel Graph
Partitioning on Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, for hyperedges. Two
ways that give the same gains:

- on levels of small nets and no big neighbourhoods (``DeviceLevelState.scans_nets``),
  ``afterburner_scan_kernel`` (a thread or a warp per vertex) reads, for each net of a candidate, which of
  its pins are better-ranked candidates and where they go, which gives the net's row of Phi after their
  moves: no sort and no list of candidates, so the round reads the device once, at its end;
- on other levels the candidates are ranked by a stable sort (``negated_gains_kernel``,
  ``ranked_moves_kernel``), the (net, rank) pairs of their incidences are sorted
  (``incidence_keys_kernel``), and each net replays its moves in rank order on its own row of Phi
  (``afterburner_kernel``, a thread per net), adding each move's exact change of the net's contribution to
  that move's gain.
"""

from __future__ import annotations

from numba import cuda, int8, int64

from ...cuda.arrays import cached_kernel
from ...cuda.primitives import LOW32
from ...cuda.warp import warp_sum


@cached_kernel
def incidence_keys_kernel(moving, vertex_offsets, incident_nets, lanes, key_offsets, keys):
    """keys[key_offsets[i] + t] = (t-th net of moving[i]) << 32 | i: the (net, rank) pairs the afterburner
    sorts; ``lanes`` threads per moving vertex (1, or a warp on levels with hubs), striding over its nets."""
    lane = cuda.threadIdx.x % lanes
    for i in range(cuda.grid(1) // lanes, moving.shape[0], cuda.gridsize(1) // lanes):
        v = moving[i]
        start = vertex_offsets[v]
        for t in range(lane, vertex_offsets[v + 1] - start, lanes):
            keys[key_offsets[i] + t] = (int64(incident_nets[start + t]) << 32) | i


@cached_kernel
def afterburner_kernel(keys, net_offsets, net_weights, moving, blocks, destinations, k, cut_objective, pin_counts,
                       new_gains):
    """For each net (a run of equal nets in ``keys``, sorted by (net, rank)): replay its moves in rank order
    on its row of Phi and add to new_gains[rank] the exact change of the net's km1 or cut contribution that
    each move makes after all earlier ones; then undo the replay. The thread at a run's first key owns the
    row (no races); the others return at once."""
    total = keys.shape[0]
    for first in range(cuda.grid(1), total, cuda.gridsize(1)):
        e = keys[first] >> 32
        if first > 0 and (keys[first - 1] >> 32) == e:
            continue
        last = first + 1
        while last < total and (keys[last] >> 32) == e:
            last += 1
        size = net_offsets[e + 1] - net_offsets[e]
        if size < 2:
            continue
        weight = net_weights[e]
        base = e * k
        for position in range(first, last):
            i = keys[position] & LOW32
            source = blocks[moving[i]]
            target = destinations[i]
            in_source = pin_counts[base + source]
            in_target = pin_counts[base + target]
            if cut_objective:
                change = (weight if in_target == size - 1 else 0) - (weight if in_source == size else 0)
            else:
                change = (weight if in_source == 1 else 0) - (weight if in_target == 0 else 0)
            if change != 0:
                cuda.atomic.add(new_gains, i, change)
            pin_counts[base + source] = in_source - 1
            pin_counts[base + target] = in_target + 1
        for position in range(first, last):
            i = keys[position] & LOW32
            pin_counts[base + blocks[moving[i]]] += 1
            pin_counts[base + destinations[i]] -= 1


@cached_kernel
def neighbourhood_exceeds_kernel(vertex_offsets, incident_nets, counted_sizes, limit, exceeds):
    """exceeds[0] = 1 when some vertex's nets have more than ``limit`` pins in all (``counted_sizes``: |e|, 0
    for nets of fewer than two pins): the pins ``afterburner_scan_kernel`` reads for that vertex. A thread
    per vertex stops adding once past the limit, so a hub costs at most ``limit`` reads."""
    for v in range(cuda.grid(1), vertex_offsets.shape[0] - 1, cuda.gridsize(1)):
        visits = int64(0)
        for q in range(vertex_offsets[v], vertex_offsets[v + 1]):
            visits += counted_sizes[incident_nets[q]]
            if visits > limit:
                exceeds[0] = 1
                break


@cached_kernel
def afterburner_scan_kernel(net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, blocks, targets,
                            gains, k, cut_objective, lanes, pin_counts, kept):
    """The afterburner without sorting, for levels of small nets and neighbourhoods
    (``DeviceLevelState.scans_nets``):
    for each candidate v (targets[v] >= 0, moving from a = blocks[v] to b = targets[v]) and each net e of v,
    the candidates u of e ranked before v (a higher gain, or the same gain and a smaller id) give
    Phi(e, a) and Phi(e, b) after their moves: each that leaves a or b takes one off, each that enters adds
    one. The change of e's contribution that v's move makes there, summed over v's nets, is the gain that
    :func:`afterburner_kernel`'s replay in rank order computes; kept[v] = 1 when it is >= 0, else 0.
    ``lanes`` threads per vertex (1, or a warp on levels with hubs) stride over its nets; a net of |e| pins
    costs |e| reads for each of its candidates."""
    lane = cuda.threadIdx.x % lanes
    for v in range(cuda.grid(1) // lanes, kept.shape[0], cuda.gridsize(1) // lanes):
        target = targets[v]
        if target < 0:  # the same for the whole warp
            if lane == 0:
                kept[v] = int8(0)
            continue
        source = blocks[v]
        gain = gains[v]
        total = int64(0)
        for q in range(vertex_offsets[v] + lane, vertex_offsets[v + 1], lanes):
            e = incident_nets[q]
            start = net_offsets[e]
            size = net_offsets[e + 1] - start
            if size < 2:
                continue
            base = int64(e) * k
            in_source = pin_counts[base + source]
            in_target = pin_counts[base + target]
            for p in range(start, start + size):
                u = pin_vertices[p]
                other_target = targets[u]
                if other_target < 0 or u == v:
                    continue
                other_gain = gains[u]
                if other_gain > gain or (other_gain == gain and u < v):
                    other_source = blocks[u]
                    if other_source == source:
                        in_source -= 1
                    elif other_source == target:
                        in_target -= 1
                    if other_target == source:
                        in_source += 1
                    elif other_target == target:
                        in_target += 1
            weight = net_weights[e]
            if cut_objective:
                total += (weight if in_target == size - 1 else 0) - (weight if in_source == size else 0)
            else:
                total += (weight if in_source == 1 else 0) - (weight if in_target == 0 else 0)
        if lanes > 1:
            total = warp_sum(total)
        if lane == 0:
            kept[v] = int8(1) if total >= 0 else int8(0)


@cached_kernel
def negated_gains_kernel(candidates, gains, ranks):
    """ranks[i] = -gains[candidates[i]]: a stable sort of the ascending candidates by it ranks them by gain
    (descending), then id."""
    for i in range(cuda.grid(1), candidates.shape[0], cuda.gridsize(1)):
        ranks[i] = -gains[candidates[i]]


@cached_kernel
def ranked_moves_kernel(order, candidates, targets, vertex_offsets, moving, destinations, degrees):
    """The candidates in rank order (``order``): their ids, targets and numbers of incident nets."""
    for i in range(cuda.grid(1), order.shape[0], cuda.gridsize(1)):
        v = candidates[order[i]]
        moving[i] = v
        destinations[i] = targets[v]
        degrees[i] = vertex_offsets[v + 1] - vertex_offsets[v]
