"""The work plan of one level on the device: the nets' fixed-point ratings, and which kernel rates which
vertex in the level's proposal rounds (:class:`DevicePlan`).

L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015:
the net ratings of the inner-product similarity (Eq. 7-8) and the work of Mondriaan neighbour finding
(Figs. 5 and 8), binned so that each vertex's rating fits the threads that do it.

The work w of a vertex is the pins of its rated nets; its bound b = min(w, rated vertices - 1) caps its
distinct neighbours. Vertices are binned by both (logarithmic binning, chosen at run time from the level's
degree distribution; :data:`.rating.KERNEL_LIMITS` are the limits): the pooled bins 0..4 (b <= 256), the
wide bin (b <= 1024) and the block bin (b <= 4096) rate a vertex within one block
(:mod:`.proposals`); the split bin (w > 8192, b <= 1024) and the global bin (b > 4096) spread a vertex
over many (:mod:`.heavy`).
"""

from __future__ import annotations

import time

import numpy as np
from numba import cuda, int32, int64

from ...cuda.arrays import (SIMULATED, SIMULATED_BLOCKS, SM_COUNT, allow_dynamic_shared, cached_kernel, grid,
                            launch, scalar, to_device, to_host, xp)
from ...cuda.primitives import csr_from_sorted_kernel, lower_bound, segment_items, segment_of, sum_before
from ...cuda.warp import WARP_SIZE
from .heavy import heavy_best_kernel, heavy_listed_kernel, heavy_rate_kernel, split_rate_kernel
from .proposals import block_propose_kernel, pooled_propose_kernel, wide_propose_kernel
from .rating import (BLOCK_BIN, BLOCK_TABLE, GLOBAL_BIN, HEAVY_BLOCK, HEAVY_WARPS, KERNEL_LIMITS, MIN_TABLE, POOL_BINS,
                     POOL_LIMITS, POOL_WARPS, SPLIT_BIN, SPLIT_NETS, TOP_CANDIDATES, WIDE_BIN)

HEAVY_TABLE_BUDGET = 1 << 27   # global table slots for the heavy vertices of one batch (12 bytes each)
TOP_FIELDS = ("top_ids", "top_raws", "top_length", "top_floor", "top_kind")  # a batch's lists of best candidates


def _blocks(count: int, per_sm: int) -> int:
    """Blocks of a grid-stride launch over ``count`` items: at most ``per_sm`` a multiprocessor (a tiny grid in
    the simulator)."""
    blocks = max(1, min(count, SM_COUNT * per_sm))
    return min(blocks, SIMULATED_BLOCKS) if SIMULATED else blocks


@cached_kernel
def rated_degree_kernel(net_offsets, pin_vertices, net_weights, max_net_size, weighted_degree):
    """weighted_degree[u] += w(e) for each pin u of each net e of 2..max_net_size pins: a thread per pin."""
    for p in range(cuda.grid(1), pin_vertices.shape[0], cuda.gridsize(1)):
        e = segment_of(net_offsets, p)
        size = net_offsets[e + 1] - net_offsets[e]
        if 2 <= size <= max_net_size:
            cuda.atomic.add(weighted_degree, pin_vertices[p], net_weights[e])


@cached_kernel
def net_ratings_kernel(net_offsets, net_weights, shift, heavy_edge, max_net_size, ratings):
    """ratings[e] = (w(e) << shift) // (|e| - 1 with ``heavy_edge``, else 1) for nets of 2..max_net_size pins,
    else 0: the CPU's ``_fixed_point_ratings``."""
    for e in range(cuda.grid(1), ratings.shape[0], cuda.gridsize(1)):
        size = net_offsets[e + 1] - net_offsets[e]
        rating = int64(0)
        if 2 <= size <= max_net_size:
            rating = (int64(net_weights[e]) << shift) // (max(size - 1, 1) if heavy_edge else 1)
        ratings[e] = rating


def device_net_ratings(level, heavy_edge: bool, max_net_size: int):
    """:func:`hgpart.coarsening.similarity.net_ratings` on the device.

    Parameters
    ----------
    level : Hypergraph
        On the device (m nets).
    heavy_edge : bool
        Divide each net's weight by |e| - 1 (heavy edge) rather than not (inner product).
    max_net_size : int
        Nets of more pins are not rated (rating 0).

    Returns
    -------
    ratings : device int64[m]
        w(e) << shift, divided as above, rounded down.
    shift : int
        The largest (at most 20) for which no vertex's total overflows int64.
    """
    x = xp()
    offsets = level.net_offsets
    num_vertices = level.vertex_offsets.shape[0] - 1
    weighted_degree = x.zeros(num_vertices, dtype=x.int64)
    pins = level.pin_vertices
    if pins.shape[0]:
        launch(rated_degree_kernel, grid(pins.shape[0]), offsets, pins, level.net_weights, max_net_size,
               weighted_degree)
    largest = float(scalar(weighted_degree.max(keepdims=True))) if num_vertices else 0.0
    bits = int(np.ceil(np.log2(largest + 2.0)))
    shift = max(0, min(20, 62 - bits))
    ratings = x.empty(offsets.shape[0] - 1, dtype=x.int64)
    launch(net_ratings_kernel, grid(ratings.shape[0]), offsets, level.net_weights, shift, bool(heavy_edge),
           max_net_size, ratings)
    return ratings, shift


@cached_kernel
def incident_work_kernel(net_offsets, ratings, incident_nets, work_terms):
    """work_terms[i] = |e| for incidence entry i of a rated net e (ratings[e] > 0), else 0."""
    for i in range(cuda.grid(1), incident_nets.shape[0], cuda.gridsize(1)):
        e = incident_nets[i]
        work_terms[i] = net_offsets[e + 1] - net_offsets[e] if ratings[e] > 0 else int64(0)


@cached_kernel
def vertex_work_kernel(vertex_offsets, running, work, rated_count):
    """work[v] = the pins of v's rated nets (``running``: the inclusive prefix sum of ``incident_work_kernel``);
    rated_count[0] (zero on entry) += the vertices with work (counted per block in shared memory)."""
    counted = cuda.shared.array(1, int32)
    if cuda.threadIdx.x == 0:
        counted[0] = 0
    cuda.syncthreads()
    for v in range(cuda.grid(1), work.shape[0], cuda.gridsize(1)):
        start, end = vertex_offsets[v], vertex_offsets[v + 1]
        amount = sum_before(running, end) - sum_before(running, start)
        work[v] = amount
        if amount:
            cuda.atomic.add(counted, 0, 1)
    cuda.syncthreads()
    if cuda.threadIdx.x == 0 and counted[0]:
        cuda.atomic.add(rated_count, 0, counted[0])


@cached_kernel
def vertex_bins_kernel(work, rated_count, pool_limits, wide_limit, block_limit, split_limit, global_limit, bound,
                       keys):
    """bound[v] = min(work[v], max(rated vertices - 1, 1)) (v's distinct neighbours at most) and the kernel that
    rates v, as keys (bin << 32 | v): the global bin above ``global_limit``, the block bin above
    ``block_limit``, the split bin for work above ``split_limit``, the wide bin above ``wide_limit``, else the
    pooled bin of the first POOL_LIMITS entry >= bound."""
    neighbours = max(rated_count[0] - 1, 1)
    for v in range(cuda.grid(1), work.shape[0], cuda.gridsize(1)):
        amount = work[v]
        limit = min(amount, neighbours)
        bound[v] = limit
        if limit > global_limit:
            kind = GLOBAL_BIN
        elif limit > block_limit:
            kind = BLOCK_BIN
        elif amount > split_limit:
            kind = SPLIT_BIN
        elif limit > wide_limit:
            kind = WIDE_BIN
        else:
            kind = lower_bound(pool_limits, limit)
        keys[v] = (int64(kind) << 32) | int64(v)


class _Clock:
    """Seconds per kernel into ``timings`` (a dict) when profiling: each lap synchronises the device."""

    def __init__(self, timings):
        self.timings = timings
        if timings is not None:
            cuda.synchronize()
            self.last = time.perf_counter()

    def lap(self, name):
        if self.timings is not None:
            cuda.synchronize()
            now = time.perf_counter()
            self.timings[name] = self.timings.get(name, 0.0) + now - self.last
            self.last = now


_POOL_LIMITS: list = []


def _pool_limits():
    """POOL_LIMITS on the device, copied once."""
    if not _POOL_LIMITS:
        _POOL_LIMITS.append(to_device(np.array(POOL_LIMITS, dtype=np.int64)))
    return _POOL_LIMITS[0]


class DevicePlan:
    """The binned work of one level on the device: which kernel rates which vertex, fixed for the level's
    proposal rounds (:meth:`propose`).

    Parameters
    ----------
    level : Hypergraph
        On the device: n vertices, m nets.
    ratings : device int64[m]
        The nets' fixed-point ratings (:func:`device_net_ratings`).
    max_weight : int
        No cluster may outweigh this.
    weight_penalty : bool
        Divide scores by c(u) c(v).
    limits : tuple of 4 ints
        :data:`.rating.KERNEL_LIMITS` (tests lower them to fill every bin on tiny inputs).

    Attributes
    ----------
    counts : int64[9]
        Vertices per bin: pooled 0..4 (with those that have nothing to rate), wide, block, split, global.
    timings : dict or None
        Set to a dict to collect seconds per kernel (synchronising after each; for profiling).
    """

    timings = None

    def __init__(self, level, ratings, max_weight: int, weight_penalty: bool, limits=KERNEL_LIMITS):
        x = xp()
        self.level = level
        self.ratings = ratings
        self.max_weight = int(max_weight)
        self.weight_penalty = bool(weight_penalty)
        offsets, vertex_offsets, incident_nets = level.net_offsets, level.vertex_offsets, level.incident_nets
        n = vertex_offsets.shape[0] - 1
        running = x.empty(incident_nets.shape[0], dtype=x.int64)
        launch(incident_work_kernel, grid(running.shape[0]), offsets, ratings, incident_nets, running)
        running = x.cumsum(running)
        work, rated_count = x.empty(n, dtype=x.int64), x.zeros(1, dtype=x.int64)
        launch(vertex_work_kernel, grid(n), vertex_offsets, running, work, rated_count)  # only they can be neighbours
        self.bound, keys = x.empty(n, dtype=x.int64), x.empty(n, dtype=x.int64)
        launch(vertex_bins_kernel, grid(n), work, rated_count, _pool_limits(), *(int(limit) for limit in limits),
               self.bound, keys)
        self.order, device_starts = x.empty(n, dtype=x.int32), x.empty(GLOBAL_BIN + 2, dtype=x.int64)
        launch(csr_from_sorted_kernel, grid(max(n, 1)), x.sort(keys), GLOBAL_BIN + 1, device_starts, self.order)
        bin_starts = to_host(device_starts)
        counts = np.diff(bin_starts)
        groups = [-(-int(counts[k]) // (16 >> k)) for k in range(POOL_BINS)]
        self.pool_groups = int(sum(groups))
        self.bin_starts = device_starts[:POOL_BINS + 1]
        self.group_starts = to_device(np.concatenate([[0], np.cumsum(groups)]).astype(np.int64))
        self.counts = counts

        def members(bin_index):
            return self.order[int(bin_starts[bin_index]):int(bin_starts[bin_index + 1])]

        self.wide = members(WIDE_BIN)
        self.block = members(BLOCK_BIN)
        self.split_batches = self._heavy_batches(members(SPLIT_BIN), SPLIT_NETS)
        self.heavy_batches = self._heavy_batches(members(GLOBAL_BIN), WARP_SIZE)
        self.arrays = {"ratings": ratings, "order": self.order, "bin_starts": self.bin_starts,
                       "group_starts": self.group_starts, "wide": self.wide, "block": self.block, "bound": self.bound,
                       **{name: getattr(level, name) for name in ("net_offsets", "pin_vertices", "vertex_offsets",
                                                                  "incident_nets", "vertex_weights")}}

    def _heavy_batches(self, heavy, nets_per_item: int) -> list:
        """Vertices rated by many warps, in batches whose global tables fit HEAVY_TABLE_BUDGET slots, with
        their work items (``nets_per_item`` incident nets each): item_vertex (index into the batch) and
        item_first (first net). The table arrays are shared by the batches (emptied after each use)."""
        x = xp()
        batches = []
        if heavy.shape[0] == 0:
            return batches
        vertex_offsets = self.level.vertex_offsets
        bounds, degrees = to_host(self.bound[heavy]), to_host(vertex_offsets[heavy + 1] - vertex_offsets[heavy])
        sizes = np.left_shift(np.int64(1), np.ceil(np.log2(np.maximum(2 * bounds, MIN_TABLE))).astype(np.int64))
        start = 0
        while start < heavy.shape[0]:
            count = max(1, int(np.searchsorted(np.cumsum(sizes[start:]), HEAVY_TABLE_BUDGET, side="right")))
            stop = start + count
            table_offsets = np.concatenate([[0], np.cumsum(sizes[start:stop])]).astype(np.int64)
            item_vertex, rank = segment_items(np.asarray(degrees[start:stop], dtype=np.int64), nets_per_item)
            # Item r of every vertex before item r + 1 of any: incident nets are sorted, so the blocks that run at
            # once read the pins of nearby nets, which L2 then holds.
            order = np.argsort(rank, kind="stable")
            item_vertex, rank = item_vertex[order], rank[order]
            vertices = heavy[start:stop]
            item_vertex_d = to_device(item_vertex)
            item_first = self.level.vertex_offsets[vertices[item_vertex_d]] + to_device(rank * nets_per_item)
            batches.append({"vertices": vertices, "table_offsets": to_device(table_offsets),
                            "item_vertex": item_vertex_d, "item_first": item_first.astype(x.int64),
                            "slots": int(table_offsets[-1])})
            start = stop
        largest = max(batch["slots"] for batch in batches)
        keys = x.full(largest, -1, dtype=x.int32)  # shared by the batches: emptied by heavy_best_kernel
        values = x.zeros(largest, dtype=x.int64)
        used = x.empty(largest, dtype=x.int32)
        fill = x.zeros(max(batch["vertices"].shape[0] for batch in batches), dtype=x.int64)
        for batch in batches:
            count = batch["vertices"].shape[0]
            batch["keys"], batch["values"], batch["used"], batch["fill"] = keys, values, used, fill
            batch["skip"] = x.zeros(count, dtype=x.uint8)
            batch["top_ids"] = x.empty(count * TOP_CANDIDATES, dtype=x.int32)
            batch["top_raws"] = x.empty(count * TOP_CANDIDATES, dtype=x.int64)
            batch["top_length"] = x.zeros(count, dtype=x.int32)
            batch["top_floor"] = x.zeros(count, dtype=x.float64)
            batch["top_kind"] = x.zeros(count, dtype=x.uint8)  # no list yet
        return batches

    def propose(self, merge_key, cluster_weight, partner, proposals, only_unmatched: bool, rerate_only: bool = False,
                max_weight: int | None = None):
        """One proposal round: proposals[v] for every vertex (-1 for the matched and those with no candidate).

        Parameters
        ----------
        merge_key : device int64[n]
            Vertices with different keys >= 0 never merge (-1: none).
        cluster_weight : device int64[n]
            The weight of each vertex's cluster (its own weight when matching).
        partner : device int32[n]
            -1 for the vertices that propose (unmatched, or free when joining).
        proposals : device int32[n]
            Written; in rounds with ``rerate_only`` also read (the previous round's proposals).
        only_unmatched : bool
            Only unmatched vertices are candidates (matching), else any (joining).
        rerate_only : bool
            Matching rounds after the first: only vertices whose target got matched are rated again.
        max_weight : int, optional
            Candidates' clusters must stay within this weight (default: the level's limit). Another limit
            drops the heavy vertices' lists of best candidates, which hold only candidates within the level's
            limit: they are rated again.

        Returns
        -------
        proposals : device int32[n]
        """
        static = self.arrays
        if max_weight is not None and max_weight != self.max_weight:
            for batches in (self.split_batches, self.heavy_batches):
                for batch in batches:
                    batch["top_kind"][...] = 0  # no list
        tables = [static[name] for name in ("net_offsets", "pin_vertices", "vertex_offsets", "incident_nets")]
        ratings = static["ratings"]
        arguments = (*tables, ratings, static["vertex_weights"], merge_key, partner, cluster_weight,
                     self.max_weight if max_weight is None else int(max_weight),
                     self.weight_penalty, only_unmatched, rerate_only)
        clock = _Clock(self.timings)
        if self.pool_groups:
            blocks = _blocks(-(-self.pool_groups // POOL_WARPS), 8)
            launch(pooled_propose_kernel, (blocks, POOL_WARPS * WARP_SIZE), *arguments, static["order"],
                   static["bin_starts"], static["group_starts"], proposals)
            clock.lap("pooled")
        if self.wide.shape[0]:
            launch(wide_propose_kernel, (_blocks(self.wide.shape[0], 9), WARP_SIZE), *arguments, static["wide"],
                   static["bound"], proposals)
            clock.lap("wide")
        if self.block.shape[0]:
            block_arguments = (*arguments, static["block"], static["bound"], proposals)
            allow_dynamic_shared(block_propose_kernel, block_arguments, BLOCK_TABLE * 8)
            launch(block_propose_kernel, (_blocks(self.block.shape[0], 2), HEAVY_BLOCK, 0, BLOCK_TABLE * 8),
                   *block_arguments)
            clock.lap("block")
        for kernel, batches, per_block in ((split_rate_kernel, self.split_batches, 1),
                                           (heavy_rate_kernel, self.heavy_batches, HEAVY_WARPS)):
            for batch in batches:
                table = (batch["table_offsets"], batch["keys"], batch["values"], batch["used"], batch["fill"])
                top = tuple(batch[name] for name in TOP_FIELDS)
                launch(heavy_listed_kernel, grid(batch["vertices"].shape[0]), *arguments[5:], batch["vertices"],
                       *top, batch["skip"], proposals)
                clock.lap("listed")
                launch(kernel, (_blocks(-(-batch["item_vertex"].shape[0] // per_block), 8), HEAVY_BLOCK),
                       *tables, ratings, batch["vertices"], batch["item_vertex"], batch["item_first"], *table,
                       batch["skip"])
                clock.lap("split" if kernel is split_rate_kernel else "global")
                launch(heavy_best_kernel, (_blocks(batch["vertices"].shape[0], 8), HEAVY_BLOCK), *arguments[5:],
                       batch["vertices"], *table, batch["skip"], *top, proposals)
                clock.lap("best")
        return proposals
