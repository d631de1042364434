"""Modularity clustering on the GPU: the steps of :mod:`.agglomeration` as numba.cuda kernels and CuPy
primitives, with the same arguments and the same (integer, exact) results.

Every neighbourhood scan is edge-parallel, so hubs and leaves cost the same per edge: a thread per stored
edge entry (v, u) rates its candidate and folds it into v's best with two atomic passes, first the largest
gain (``atomic.max``), then the smallest id among the entries reaching it (``atomic.min``), which is the
CPU's tie rule. Local moving sums v's links per neighbouring cluster in a hash table of 2 deg(v) slots at
offset 2 offsets[v], each slot cluster << 32 | link in one int64 (claimed by ``atomic.cas``, then
``atomic.add``), after the lanes of a warp holding the same (v, cluster) have summed their weights
(``match_any_sync``); it then rates the slots in the same two passes. Only active vertices fill tables,
and ``mark_touched_kernel`` marks the neighbours of each round's movers (the CPU twin's rule) and updates
the weight inside clusters from the movers' edges. Contraction is seed 002's sort/scan/scatter (π, π⁻¹,
ρ) with CuPy's radix sort and scans.

A level is a dict of device arrays: the keys of :mod:`.agglomeration` plus ``rows`` int32[D], the source
vertex of every entry.
"""

from __future__ import annotations

import numpy as np
from numba import cuda, int32, int64, uint32

from ..cuda.arrays import cached_kernel, grid, kernel_view, launch, scalar, to_device, xp
from ..cuda.arrays import to_host as _array_to_host
from ..cuda.primitives import LOW32, scatter, scatter_add_kernel
from ..cuda.warp import WARP_SIZE, warp_group_sum
from ..errors import InputError
from . import agglomeration
from .agglomeration import PROPOSE, RESPOND, SATELLITE, _candidate_gain, _colour_bit, _move_gain, round_salt
from .modularity import integer_level, weight_scale

candidate_gain_gpu = cuda.jit(device=True, inline=True)(_candidate_gain)
move_gain_gpu = cuda.jit(device=True, inline=True)(_move_gain)
colour_bit_gpu = cuda.jit(device=True, inline=True)(_colour_bit)
HASH_MULTIPLIER = 2654435761


@cached_kernel
def colours_kernel(salt, blue):
    """blue[v] = 1 for blue vertices, 0 for red (seed 002's colouring, hashed)."""
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
    """centre[v] = 1 where cp(v) = ζ(v)² / Σ_{u~v} ζ(u) >= 1 (seed 002)."""
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


EMPTY_SLOT = int64(-1)
PACKED_KEY_BITS = 62  # a contraction key with its weight in the low bits stays positive in an int64
LINK_THREADS = 256  # threads per block of link_kernel and the other kernels launched with _group_total scratch
GROUP_SCRATCH = 2 * LINK_THREADS  # uint32 halves of _group_total's sums, 64 a warp (a plain constant: a shape)


@cuda.jit(device=True, inline=True)
def _uniform_trips(count):
    """(first item, stride, trips) of a grid-stride loop over ``count`` items that makes the same number of
    trips on every thread (items past the end are idle), as the warp votes of ``_group_total`` need."""
    stride = cuda.gridsize(1)
    return cuda.grid(1), stride, (count + stride - 1) // stride


@cuda.jit(device=True, inline=True)
def _warp_scratch():
    """(this warp's scratch for ``_group_total``: 32 uint32 low and 32 high halves of the block's shared
    array, the lane)."""
    partial = cuda.shared.array(GROUP_SCRATCH, uint32)
    lane = cuda.threadIdx.x % WARP_SIZE
    low = 2 * (cuda.threadIdx.x - lane)
    return (partial[low:low + WARP_SIZE], partial[low + WARP_SIZE:low + 2 * WARP_SIZE]), lane


@cuda.jit(device=True, inline=True)
def _group_total(grouped, key, value, scratch, lane):
    """(leader, total) for a lane of a uniform loop: the lanes with ``grouped`` set that hold the same ``key``
    sum their values (``warp_group_sum``) and only the lowest of them leads, so one atomic stands for them
    all (on a hub's entries, atomics to one address would queue)."""
    low, high = scratch
    leader, total = warp_group_sum(key if grouped else EMPTY_SLOT, value, low, high, lane)
    return leader and grouped, total


@cuda.jit(device=True, inline=True)
def _insert_link(table, base, size, cluster, link):
    """Add ``link`` to ``cluster``'s slot of the table ``table[base:base + size]`` (linear probing). A slot
    is cluster << 32 | summed link (links of a vertex sum to less than 2^32), EMPTY_SLOT when unused: a
    slot showing the cluster takes one atomic add, an empty one is claimed with the link by one
    compare-and-swap."""
    slot = (((int64(cluster) * HASH_MULTIPLIER) & LOW32) * size) >> 32  # a 32-bit hash scaled to [0, size):
    # no 64-bit division (size = 2 deg(v) < 2^31, so the product stays below 2^63)
    while True:
        current = table[base + slot]
        if current == EMPTY_SLOT:
            current = cuda.atomic.cas(table, base + slot, EMPTY_SLOT, (int64(cluster) << 32) | link)
            if current == EMPTY_SLOT:
                return
        if (current >> 32) == cluster:
            cuda.atomic.add(table, base + slot, link)
            return
        slot += 1
        if slot == size:
            slot = 0


@cached_kernel
def link_kernel(rows, neighbors, weights, offsets, clusters, upward, last_touched, first_round, table, own_link):
    """For every entry (v, u) of an active v (touched in ``first_round`` or later): add its weight to
    own_link[v] when u is in v's cluster, else to the slot of u's cluster in v's hash table when that
    cluster is on the round's side of v's own (2 deg(v) slots from 2 offsets[v]); lanes with the same (v,
    cluster) sum first (``_group_total``). ncu on R-MAT 2^23: 63% of its stalls wait on dependent loads.
    Measured slower there and dropped: a list of the claimed slots for slot passes over those alone (its
    reads scatter, its appends cost this kernel 12%), and two entries a trip with all loads first (2.92
    against 2.78 s for the whole clustering)."""
    scratch, lane = _warp_scratch()
    entries = rows.shape[0]
    first, stride, trips = _uniform_trips(entries)
    for trip in range(trips):
        entry = first + trip * stride
        kind = 0  # 1: a link inside v's cluster, 2: a link to a candidate cluster
        v = int32(-1)
        c = int32(-1)
        weight = int64(0)
        if entry < entries:
            v = rows[entry]
            if last_touched[v] >= first_round:
                own = clusters[v]
                c = clusters[neighbors[entry]]
                weight = int64(weights[entry])
                if c == own:
                    kind = 1
                elif (c > own) == upward:
                    kind = 2
        leader, total = _group_total(kind > 0, (int64(v) << 32) | c, weight, scratch, lane)
        if leader:
            if kind == 1:
                cuda.atomic.add(own_link, v, total)
            else:
                _insert_link(table, 2 * offsets[v], 2 * (offsets[v + 1] - offsets[v]), c, total)


@cuda.jit(device=True, inline=True)
def _slot_gain(slot, rows, table, zeta, two_omega, clusters, cluster_zeta, own_link):
    """(v, cluster, gain of moving v there) for a used table slot; cluster and gain -1 for an empty one."""
    packed = table[slot]
    v = rows[slot >> 1]
    if packed == EMPTY_SLOT:
        return v, int32(-1), int64(-1)
    c = int32(packed >> 32)
    return v, c, move_gain_gpu(two_omega, packed & LOW32, own_link[v], zeta[v], cluster_zeta[c],
                               cluster_zeta[clusters[v]])


@cached_kernel
def slot_gain_kernel(rows, table, zeta, two_omega, clusters, cluster_zeta, own_link, best_gain):
    """Pass 1 over table slots: best_gain[v] = the largest positive gain of moving v to a linked cluster."""
    for slot in range(cuda.grid(1), table.shape[0], cuda.gridsize(1)):
        v, c, gain = _slot_gain(slot, rows, table, zeta, two_omega, clusters, cluster_zeta, own_link)
        if gain > 0:
            cuda.atomic.max(best_gain, v, gain)


@cached_kernel
def slot_choice_kernel(rows, table, zeta, two_omega, clusters, cluster_zeta, own_link, best_gain, best):
    """Pass 2: best[v] = the smallest cluster reaching best_gain[v]; every slot is emptied for the next round."""
    for slot in range(cuda.grid(1), table.shape[0], cuda.gridsize(1)):
        v, c, gain = _slot_gain(slot, rows, table, zeta, two_omega, clusters, cluster_zeta, own_link)
        if c >= 0:
            if gain > 0 and gain == best_gain[v]:
                cuda.atomic.min(best, v, c)
            table[slot] = EMPTY_SLOT


@cached_kernel
def coarse_key_kernel(rows, neighbors, weights, mapping, num_coarse, weight_bits, keys, loops):
    """Contraction, pass 1: keys[e] = π(v) num_coarse + π(u) for an entry (v, u) between two coarse vertices,
    shifted left by ``weight_bits`` with the weight in those bits when that is not 0, -1 for an entry inside a
    coarse vertex; those with v < u add their weight to loops[π(v)] (lanes of the same coarse vertex summed
    first)."""
    scratch, lane = _warp_scratch()
    entries = rows.shape[0]
    first, stride, trips = _uniform_trips(entries)
    for trip in range(trips):
        entry = first + trip * stride
        inside = False
        coarse_row = int32(-1)
        weight = int64(0)
        if entry < entries:
            v = rows[entry]
            u = neighbors[entry]
            coarse_row = mapping[v]
            coarse_neighbor = mapping[u]
            if coarse_row == coarse_neighbor:
                keys[entry] = -1
                if v < u:
                    inside = True
                    weight = weights[entry]
            else:
                key = int64(coarse_row) * num_coarse + coarse_neighbor
                keys[entry] = (key << weight_bits) | weights[entry] if weight_bits else key
        leader, total = _group_total(inside, int64(coarse_row), weight, scratch, lane)
        if leader:
            cuda.atomic.add(loops, coarse_row, total)


@cached_kernel
def coarse_entry_kernel(sorted_keys, order, weights, segment, num_coarse, weight_bits, coarse_rows,
                        coarse_neighbors, coarse_weights):
    """Contraction, pass 2, over the sorted keys of the entries between coarse vertices (their weights in the
    low ``weight_bits`` bits, or when that is 0 at weights[order[i]]): the first key of each run (segment s)
    writes coarse row and neighbour s, and every entry adds its weight to coarse_weights[s] (lanes of the
    same run summed first)."""
    scratch, lane = _warp_scratch()
    count = sorted_keys.shape[0]
    first, stride, trips = _uniform_trips(count)
    for trip in range(trips):
        index = first + trip * stride
        run = int64(-1)
        weight = int64(0)
        if index < count:
            run = segment[index]
            key = sorted_keys[index] >> weight_bits
            weight = sorted_keys[index] & ((int64(1) << weight_bits) - 1) if weight_bits else weights[order[index]]
            if index == 0 or key != sorted_keys[index - 1] >> weight_bits:
                coarse_rows[run] = key // num_coarse
                coarse_neighbors[run] = key % num_coarse
        leader, total = _group_total(index < count, run, weight, scratch, lane)
        if leader:
            cuda.atomic.add(coarse_weights, run, total)


@cached_kernel
def apply_moves_kernel(best, best_gain, own_link, clusters, previous, moved, last_touched, round_index, movers):
    """Every vertex with a move takes it (all at once) and is touched in this round, except a move straight
    back to the cluster it left in the round before (dropped, as in the CPU twin); previous[v] and moved[v]
    then hold its cluster before this round and whether it moved; per-vertex scratch is reset; movers[0]
    counts the movers."""
    none = best.shape[0]
    for v in range(cuda.grid(1), best.shape[0], cuda.gridsize(1)):
        target = best[v]
        if target != none and moved[v] and target == previous[v]:
            target = none
        previous[v] = clusters[v]
        moved[v] = target != none
        if target != none:
            clusters[v] = target
            last_touched[v] = round_index
            cuda.atomic.add(movers, 0, 1)
        best[v] = none
        best_gain[v] = 0
        own_link[v] = 0


@cached_kernel
def mark_touched_kernel(rows, neighbors, weights, moved, previous, clusters, last_touched, round_index, change):
    """For every entry (v, u) of a vertex v that moved in this round: last_touched[u] = round_index, and
    change[0] += how the edge's weight inside clusters changed (each edge once: taken from v's side unless
    u moved too and u < v). Each thread sums its share, one atomic. (Warps over a list of the movers' entries
    were slower: building the list took about ten CuPy launches and a host sync a round.)"""
    mine = int64(0)
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v = rows[entry]
        if moved[v]:
            u = neighbors[entry]
            last_touched[u] = round_index
            if v < u or not moved[u]:
                before = previous[v] == previous[u]
                after = clusters[v] == clusters[u]
                if before != after:
                    mine += weights[entry] if after else -weights[entry]
    if mine:
        cuda.atomic.add(change, 0, mine)


@cached_kernel
def inside_weight_kernel(rows, neighbors, weights, clusters, total):
    """total[0] += weight of the entries (v < u) inside a cluster: each thread sums its share, one atomic."""
    mine = int64(0)
    for entry in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        v = rows[entry]
        u = neighbors[entry]
        if v < u and clusters[v] == clusters[u]:
            mine += weights[entry]
    if mine:
        cuda.atomic.add(total, 0, mine)


@cached_kernel
def square_sum_kernel(values, total):
    """total[0] += Σ values², each thread its share, one atomic."""
    mine = int64(0)
    for index in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        mine += values[index] * values[index]
    if mine:
        cuda.atomic.add(total, 0, mine)


@cached_kernel
def first_vertex_kernel(clusters, first):
    """first[c] = the smallest vertex of cluster c (first holds n beforehand)."""
    for v in range(cuda.grid(1), clusters.shape[0], cuda.gridsize(1)):
        cuda.atomic.min(first, clusters[v], v)


def _launch(kernel, count, *args, threads: int = 256):
    if count:
        launch(kernel, grid(count, threads), *args)


def _rows(offsets, entries: int):
    array = xp()
    return (array.searchsorted(offsets, array.arange(entries, dtype=np.int64), side="right") - 1).astype(np.int32)


def upload_level(level: dict) -> dict:
    """A host level (see :func:`.modularity.integer_level`) on the device, with its ``rows``."""
    device = {key: to_device(value) for key, value in level.items() if key != "two_omega"}
    device["two_omega"] = int(level["two_omega"])
    device["rows"] = _rows(device["offsets"], int(level["neighbors"].shape[0]))
    device["loops_total"] = int(level["loops"].sum())
    return device


def graph_level(graph) -> tuple[dict, float]:
    """Level 0 of ``graph`` on the device and the weight scale (see :func:`.modularity.integer_level`). When
    every weight is 1 only the offsets and neighbours travel: the weights (all 1), ζ (the degrees) and the
    loops (none) are made on the device, the same level as the CPU twin's."""
    scale, unit = weight_scale(graph)
    if not unit:
        return upload_level(integer_level(graph, scale)[0]), scale
    array = xp()
    offsets = to_device(np.ascontiguousarray(graph.offsets, dtype=np.int64))
    neighbors = to_device(np.ascontiguousarray(graph.neighbors, dtype=np.int32))
    entries = int(neighbors.shape[0])
    level = {"offsets": offsets, "neighbors": neighbors, "weights": array.ones(entries, dtype=np.int64),
             "loops": array.zeros(graph.num_vertices, dtype=np.int64), "zeta": offsets[1:] - offsets[:-1],
             "two_omega": entries, "rows": _rows(offsets, entries), "loops_total": 0}
    return level, scale


def identity(n: int):
    return xp().arange(n, dtype=np.int32)


def no_targets(n: int):
    return xp().full(n, -1, dtype=np.int32)


project = agglomeration.project  # a gather: the same call on CuPy arrays


def compact(clusters):
    return agglomeration.compact(clusters, xp())


def intersect(first, second):
    return agglomeration.intersect(first, second, xp())


def first_appearance(clusters) -> tuple[np.ndarray, int]:
    """:func:`.agglomeration.first_appearance` on the device (the smallest vertex of each cluster by atomic
    minima, then a scan), the result copied to the host."""
    array = xp()
    n = int(clusters.shape[0])
    first = array.full(n, n, dtype=np.int32)
    _launch(first_vertex_kernel, n, kernel_view(clusters), kernel_view(first))
    leader = first[clusters]
    number = array.cumsum(leader == array.arange(n, dtype=np.int32), dtype=np.int32) - 1
    renumbered = number[leader]
    return to_host(renumbered), scalar(number, n - 1) + 1 if n else 0


def to_host(array) -> np.ndarray:
    return _array_to_host(array)


def _check_total_weight(level: dict) -> None:
    """One error line unless 2Ω < 2^31: then every weight fits an int32 and a vertex's links sum below 2^32
    in a link table slot. (:func:`.modularity.integer_level` keeps 2Ω below 2^30; only a level of unit
    weights with 2^31 entries or more is refused.)"""
    if level["two_omega"] >= 1 << 31:
        raise InputError(f"the GPU clusters graphs of total weight below 2^30, not {level['two_omega'] // 2}")


def _int32_weights(level: dict):
    """The level's weights as int32 (see ``_check_total_weight``), made once and kept in the level under
    ``weights32``: the link and matching kernels read 4 bytes less an entry (R-MAT 2^23 clustering, int32
    weights in the link kernel alone: 1.44 -> 1.34 s, medians of 3)."""
    _check_total_weight(level)
    if "weights32" not in level:
        level["weights32"] = level["weights"].astype(np.int32)
    return level["weights32"]


def _best_candidates(mode, level, partner, proposal, blue, centre, best_gain, best) -> int:
    """best[v]: the step's best candidate of every vertex, or -1; returns how many have one."""
    n = partner.shape[0]
    best[:] = n
    found = xp().zeros(1, dtype=np.int64)
    args = (mode, kernel_view(level["rows"]), kernel_view(level["neighbors"]), kernel_view(_int32_weights(level)),
            level["two_omega"], kernel_view(level["zeta"]), kernel_view(partner), kernel_view(proposal),
            kernel_view(blue), kernel_view(centre))
    entries = int(level["rows"].shape[0])
    _launch(candidate_gain_kernel, entries, *args, kernel_view(best_gain))
    _launch(candidate_choice_kernel, entries, *args, kernel_view(best_gain), kernel_view(best))
    _launch(finish_choice_kernel, n, kernel_view(best), kernel_view(best_gain), kernel_view(found))
    return scalar(found)


def match_clusters(level: dict, seed: int, depth: int, rounds: int):
    """Step 1 on the device (see :func:`.agglomeration.match_clusters`)."""
    array = xp()
    n = int(level["zeta"].shape[0])
    partner = array.full(n, -1, dtype=np.int32)
    proposal = array.empty(n, dtype=np.int32)
    response = array.empty(n, dtype=np.int32)
    blue = array.empty(n, dtype=np.int8)
    best_gain = array.zeros(n, dtype=np.int64)
    for round_index in range(rounds):
        _launch(colours_kernel, n, round_salt(seed, depth, round_index), kernel_view(blue))
        _best_candidates(PROPOSE, level, partner, proposal, blue, blue, best_gain, proposal)
        if _best_candidates(RESPOND, level, partner, proposal, blue, blue, best_gain, response) == 0:
            break
        _launch(match_kernel, n, kernel_view(response), kernel_view(partner))
    return partner


def satellite_targets(level: dict, partner):
    """Step 2 on the device (see :func:`.agglomeration.satellite_targets`)."""
    array = xp()
    n = partner.shape[0]
    around = array.zeros(n, dtype=np.int64)
    _launch(neighbour_degree_kernel, int(level["rows"].shape[0]), kernel_view(level["rows"]),
            kernel_view(level["neighbors"]), kernel_view(level["zeta"]), kernel_view(around))
    centre = array.empty(n, dtype=np.int8)
    _launch(centre_kernel, n, kernel_view(level["zeta"]), kernel_view(around), kernel_view(centre))
    target = array.empty(n, dtype=np.int32)
    _best_candidates(SATELLITE, level, partner, target, centre, centre, array.zeros(n, dtype=np.int64), target)
    return target


def group_map(partner, target):
    """Step 3 on the device (see :func:`.agglomeration.group_map`)."""
    array = xp()
    n = partner.shape[0]
    representative = array.empty(n, dtype=np.int32)
    is_representative = array.empty(n, dtype=np.int32)
    _launch(representative_kernel, n, kernel_view(partner), kernel_view(target), kernel_view(representative),
            kernel_view(is_representative))
    coarse_id = array.cumsum(is_representative, dtype=np.int32) - 1
    count = int(coarse_id[-1]) + 1 if n else 0
    return coarse_id[representative], count


def contract_level(level: dict, mapping, num_coarse: int) -> dict:
    """Step 4 on the device: key every entry by (π(v), π(u)) (``coarse_key_kernel``), sort the keys, mark the
    first of each run, scan, scatter (``coarse_entry_kernel``); the row offsets by a binary search of the
    sorted coarse rows."""
    array = xp()
    rows, neighbors, weights = level["rows"], level["neighbors"], level["weights"]
    entries = int(rows.shape[0])
    loops = array.zeros(num_coarse, dtype=np.int64)
    scatter(scatter_add_kernel, mapping, level["loops"], loops)
    zeta = array.zeros(num_coarse, dtype=np.int64)
    scatter(scatter_add_kernel, mapping, level["zeta"], zeta)
    # each weight rides in the low bits of its key when both fit in PACKED_KEY_BITS: a sort of the keys alone
    # then replaces the argsort and its two gathers (R-MAT 2^23 level 0: 16.8 against 29.4 ms, then 2.7 and ~4)
    weight_bits = int(weights.max()).bit_length() if entries else 0
    if max(num_coarse * num_coarse - 1, 1).bit_length() + weight_bits > PACKED_KEY_BITS:
        weight_bits = 0
    keys = array.empty(entries, dtype=np.int64)
    _launch(coarse_key_kernel, entries, kernel_view(rows), kernel_view(neighbors), kernel_view(weights),
            kernel_view(mapping), num_coarse, weight_bits, kernel_view(keys), kernel_view(loops), threads=LINK_THREADS)
    if weight_bits:
        sorted_keys = array.sort(keys)
        order = sorted_keys[:1]  # not read
    else:
        order = array.argsort(keys, kind="stable")
        sorted_keys = keys[order]
    inside = int(array.searchsorted(sorted_keys, 0))  # their key -1 sorts first
    sorted_keys = sorted_keys[inside:]
    if not weight_bits:
        order = order[inside:]
    across = int(sorted_keys.shape[0])
    run_keys = sorted_keys >> weight_bits if weight_bits else sorted_keys
    first = array.ones(across, dtype=np.int32)
    first[1:] = run_keys[1:] != run_keys[:-1]
    del run_keys
    segment = array.cumsum(first, dtype=np.int64) - 1
    distinct = int(segment[-1]) + 1 if across else 0
    coarse_rows = array.empty(distinct, dtype=np.int32)
    coarse_neighbors = array.empty(distinct, dtype=np.int32)
    coarse_weights = array.zeros(distinct, dtype=np.int64)
    _launch(coarse_entry_kernel, across, kernel_view(sorted_keys), kernel_view(order), kernel_view(weights),
            kernel_view(segment), num_coarse, weight_bits, kernel_view(coarse_rows), kernel_view(coarse_neighbors),
            kernel_view(coarse_weights), threads=LINK_THREADS)
    offsets = array.searchsorted(coarse_rows, array.arange(num_coarse + 1, dtype=np.int32)).astype(np.int64)
    return {"offsets": offsets, "neighbors": coarse_neighbors, "weights": coarse_weights, "loops": loops, "zeta": zeta,
            "two_omega": level["two_omega"], "rows": coarse_rows, "loops_total": int(loops.sum())}


def _cluster_zeta(level: dict, clusters):
    cluster_zeta = xp().zeros(clusters.shape[0], dtype=np.int64)
    return scatter(scatter_add_kernel, clusters, level["zeta"], cluster_zeta)


def _modularity_sums(level: dict, clusters, cluster_zeta) -> tuple[int, int]:
    """(weight of the edges inside clusters, Σ ζ(C)²) on this level."""
    totals = xp().zeros(2, dtype=np.int64)
    _launch(inside_weight_kernel, int(level["rows"].shape[0]), kernel_view(level["rows"]),
            kernel_view(level["neighbors"]), kernel_view(level["weights"]), kernel_view(clusters), kernel_view(totals))
    _launch(square_sum_kernel, int(clusters.shape[0]), kernel_view(cluster_zeta), kernel_view(totals[1:]))
    inside, squares = (int(value) for value in to_host(totals))
    return inside, squares


def _scaled_value(level: dict, inside: int, squares: int) -> int:
    """4Ω² times the modularity from the weight inside clusters (loops aside) and Σ ζ(C)²."""
    return 2 * level["two_omega"] * (inside + level["loops_total"]) - squares


def scaled_modularity(level: dict, clusters) -> int:
    """4Ω² times the modularity of ``clusters`` on this level; exact (int64 sums)."""
    return _scaled_value(level, *_modularity_sums(level, clusters, _cluster_zeta(level, clusters)))


def local_moving(level: dict, clusters, rounds: int, stale_rounds: int, min_improvement: float = 0.0):
    """Step 5 on the device (see :func:`.agglomeration.local_moving`). After each round, the weight inside
    clusters is updated from the movers' edges alone (``mark_touched_kernel``): the value stays exact."""
    array = xp()
    n = clusters.shape[0]
    entries = int(level["rows"].shape[0])
    link_weights = kernel_view(_int32_weights(level))  # checks 2Ω < 2^31 first (``_check_total_weight``)
    clusters = clusters.astype(np.int32, copy=True)
    two_omega = level["two_omega"]
    cluster_zeta = _cluster_zeta(level, clusters)
    inside, squares = _modularity_sums(level, clusters, cluster_zeta)
    best, best_value = clusters.copy(), _scaled_value(level, inside, squares)
    table = array.full(2 * entries, -1, dtype=np.int64)
    own_link = array.zeros(n, dtype=np.int64)
    best_gain = array.zeros(n, dtype=np.int64)
    target = array.full(n, n, dtype=np.int32)
    movers = array.zeros(1, dtype=np.int64)
    totals = array.zeros(2, dtype=np.int64)  # the round's change of the inside weight, Σ ζ(C)²
    previous = array.empty(n, dtype=np.int32)
    moved = array.zeros(n, dtype=np.uint8)
    last_touched = array.full(n, -1, dtype=np.int32)  # every vertex is active in the first two rounds
    rows, neighbors, weights, zeta = (kernel_view(level[key]) for key in ("rows", "neighbors", "weights", "zeta"))
    views = [kernel_view(a) for a in (table, own_link, best_gain, target, movers, totals, previous, moved, last_touched,
                                      clusters)]
    table_view, own_view, gain_view, target_view, movers_view, totals_view, previous_view, moved_view, touched_view, \
        clusters_view = views
    stale = idle = 0
    threshold = agglomeration.stale_threshold(two_omega, min_improvement)
    for round_index in range(rounds):
        first_round = round_index - agglomeration.ACTIVE_ROUNDS
        _launch(link_kernel, entries, rows, neighbors, link_weights, kernel_view(level["offsets"]), clusters_view,
                round_index % 2 == 0, touched_view, first_round, table_view, own_view, threads=LINK_THREADS)
        slot_args = (rows, table_view, zeta, two_omega, clusters_view, kernel_view(cluster_zeta), own_view, gain_view)
        _launch(slot_gain_kernel, 2 * entries, *slot_args)
        _launch(slot_choice_kernel, 2 * entries, *slot_args, target_view)
        movers[0] = 0
        _launch(apply_moves_kernel, n, target_view, gain_view, own_view, clusters_view, previous_view, moved_view,
                touched_view, round_index, movers_view)
        if scalar(movers) == 0:
            idle += 1
            if idle == 2:
                break
            continue
        idle = 0
        totals[:] = 0
        _launch(mark_touched_kernel, entries, rows, neighbors, weights, moved_view, previous_view, clusters_view,
                touched_view, round_index, totals_view)
        cluster_zeta = _cluster_zeta(level, clusters)
        _launch(square_sum_kernel, n, kernel_view(cluster_zeta), kernel_view(totals[1:]))
        change, squares = (int(value) for value in to_host(totals))
        inside += change
        value = _scaled_value(level, inside, squares)
        improved, stale = agglomeration.next_stale(value, best_value, stale, threshold)
        if improved:
            best_value = value
            best = clusters.copy()
        if stale >= stale_rounds:
            break
    return best, best_value
