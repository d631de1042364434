"""The state of one level and partition on the device (:class:`DeviceLevelState`): Phi, block weights, the
objective and the scratch of the rounds, with the launches of the rating (:mod:`.gains`), the afterburner
(:mod:`.afterburner`) and the moves (:mod:`.moves`) on it.

The level's shape decides how the rounds of M. S. Gilbert, K. Madduri, E. G. Boman and S. Rajamanickam, "Jet:
Multilevel Graph Partitioning on Graphics Processing Units", SIAM Journal on Scientific Computing, 2024, run on
it: which afterburner (``scans_nets``, by the constants below) and how many threads move a vertex
(``lanes``). Tests lower the constants here, in the module that reads them.
"""

from __future__ import annotations

import numpy as np

from ...cuda.arrays import grid, launch, to_host, xp
from ...cuda.primitives import scatter, scatter_add_kernel, segment_items
from ...cuda.warp import WARP_SIZE
from ...hypergraph import ARRAYS
from .afterburner import (afterburner_kernel, afterburner_scan_kernel, incidence_keys_kernel,
                          neighbourhood_exceeds_kernel)
from .gains import (HEAVY_DEGREE, MAX_K, RATE_THREADS, pick_heavy_moves_kernel, pin_counts_kernel,
                    rate_heavy_chunks_kernel, rate_moves_kernel, rating_group)
from .moves import apply_kept_kernel, apply_moves_kernel

HEAVY_CHUNK_ROUNDS = 64       # nets per group of lanes in a chunk: a block rates 64 * RATE_THREADS / group nets
# The afterburner scans each candidate's nets (afterburner_scan_kernel: no sort, no list of candidates, no read
# of the device) on levels whose nets have at most this many pins on average, weighted by pins (the sum of
# |e|^2 over the nets of >= 2 pins, over the pins); levels of bigger nets replay sorted (net, rank) pairs.
SCAN_MEAN_NET_SIZE = 64
# ... and where no vertex's nets have more than this many pins in all (what the scan reads for one candidate): the
# hubs of long-tailed inputs have about a million, and the one thread (or warp) that scans a hub holds up the
# whole round, where the sorted replay spreads a hub's nets over many threads; grid levels stay below a hundred.
SCAN_MAX_PIN_VISITS = 1024


class DeviceLevelState:
    """Phi, block weights, the objective and the pin -> net map of one level and partition, on the device.

    Parameters
    ----------
    level : Hypergraph
        On the device (:meth:`~hgpart.hypergraph.Hypergraph.to_device`).
    blocks : device int32[n]
        Modified in place by the refinement.
    k : int
    cut_objective : bool
        Which objective :meth:`apply` keeps up to date (``status``).
    max_block_weights : int64[k] (host or device), optional
        The bounds :meth:`overloaded` checks.

    Attributes
    ----------
    status : device int64[2]
        Moves made so far, and the current km1 (or cut).
    block_weights : device int64[k]
    host_block_weights : int64[k]
    host_status : (int, int)
        The moves of the last :meth:`apply` and the objective, as of then; with ``host_block_weights``, the
        block weights (``status`` and ``block_weights`` are one device buffer, read in one copy).
    """

    def __init__(self, level, blocks, k: int, cut_objective: bool = False, max_block_weights=None):
        if k > MAX_K:
            raise ValueError(f"GPU refinement supports k <= {MAX_K}, got {k}")
        x = xp()
        self.level = level
        self.k = k
        self.blocks = blocks
        self.cut_objective = cut_objective
        num_nets = level.net_offsets.shape[0] - 1
        num_pins = level.pin_vertices.shape[0]
        self.sizes = x.diff(level.net_offsets)
        pin_nets = x.searchsorted(level.net_offsets, x.arange(num_pins, dtype=x.int64),
                                  side="right").astype(x.int32) - 1
        self.pin_counts = x.zeros(num_nets * k, dtype=x.int32)
        if num_pins:
            launch(pin_counts_kernel, grid(num_pins), pin_nets, level.pin_vertices, blocks, k, self.pin_counts)
        self._summary = x.zeros(2 + k, dtype=x.int64)
        self.status, self.block_weights = self._summary[:2], self._summary[2:]
        scatter(scatter_add_kernel, blocks, level.vertex_weights, self.block_weights)
        connectivity = self._connectivity()
        self.connectivity = connectivity.astype(x.int32) if cut_objective else x.zeros(1, dtype=x.int32)
        self.status[1] = self._objective(connectivity, cut_objective)
        self._moves_read = 0
        self._read_summary()
        if max_block_weights is not None:
            self.max_block_weights = x.asarray(max_block_weights, dtype=x.int64)
            self.host_bounds = np.asarray(to_host(self.max_block_weights), dtype=np.int64)
        self.no_locks = x.zeros(0, dtype=x.int8)
        n = level.vertex_offsets.shape[0] - 1
        self.targets = x.empty(n, dtype=x.int32)
        self.gains = x.empty(n, dtype=x.int64)
        self.internals = x.empty(n, dtype=x.int64)
        self.kept = x.empty(n, dtype=x.int8)
        counted = x.where(self.sizes >= 2, self.sizes, 0)
        scan_checks = x.zeros(2, dtype=x.int64)  # sum of |e|^2, whether a neighbourhood exceeds the visits
        scan_checks[0] = (counted * counted).sum()
        if n:
            launch(neighbourhood_exceeds_kernel, grid(n), level.vertex_offsets, level.incident_nets, counted,
                   SCAN_MAX_PIN_VISITS, scan_checks[1:])
        squares, exceeds = (int(value) for value in to_host(scan_checks))
        self.scans_nets = squares <= SCAN_MEAN_NET_SIZE * num_pins and not exceeds
        self.heavy = x.flatnonzero(x.diff(level.vertex_offsets) > HEAVY_DEGREE).astype(x.int32)
        self._heavy_chunks(level.vertex_offsets)
        # threads per moved vertex in apply and the afterburner's keys: a warp when the level has hubs (a
        # thread would walk a hub's nets alone), else one (on a grid, 4 nets a vertex, a warp idles 28 lanes)
        self.lanes = WARP_SIZE if self.heavy.shape[0] else 1
        self.arrays = {name: getattr(level, name) for name in ARRAYS}
        self.arrays.update((name, getattr(self, name)) for name in (
            "blocks", "pin_counts", "block_weights", "connectivity", "status", "no_locks", "targets", "gains",
            "internals", "kept", "heavy", "chunk_heavy", "chunk_starts", "heavy_affinity", "heavy_adjacent",
            "heavy_sums"))

    def _heavy_chunks(self, vertex_offsets):
        """The chunks of the heavy vertices' nets (``rate_heavy_chunks_kernel``): HEAVY_CHUNK_ROUNDS nets for
        each group of lanes of a block, and the zeroed sums they meet in (int64[heavy * k] and so on)."""
        x = xp()
        count = self.heavy.shape[0]
        self.chunk_size = HEAVY_CHUNK_ROUNDS * (RATE_THREADS // rating_group(self.k))
        firsts = vertex_offsets[self.heavy]
        self.chunk_heavy, rank = segment_items(vertex_offsets[self.heavy + 1] - firsts, self.chunk_size)
        self.chunk_starts = firsts[self.chunk_heavy] + rank * self.chunk_size
        self.heavy_affinity = x.zeros(count * self.k, dtype=x.int64)
        self.heavy_adjacent = x.zeros(count * self.k, dtype=x.int8)
        self.heavy_sums = x.zeros(2 * count, dtype=x.int64)

    def _connectivity(self):
        k = self.k
        return (self.pin_counts.reshape(-1, k) > 0).sum(axis=1) if k else xp().zeros(0, dtype=xp().int64)

    def _objective(self, connectivity, cut_objective: bool) -> int:
        x = xp()
        counted = self.sizes >= 2
        weights = self.level.net_weights
        if cut_objective:
            return int((weights * (counted & (connectivity > 1))).sum())
        return int((weights * x.where(counted, connectivity - 1, 0)).sum())

    def objective(self, cut_objective: bool) -> int:
        """km1 = sum of w(e) (lambda(e) - 1), or cut = sum of w(e) over nets with lambda(e) > 1, recomputed from
        Phi on the device; nets with fewer than two pins never count."""
        return self._objective(self._connectivity(), cut_objective)

    def rate(self, max_block_weights, cut_objective: bool, only_adjacent: bool, active, tolerance: float = -1.0):
        """(targets int32[n], gains int64[n], internals int64[n]) of ``rate_moves_kernel`` for the vertices
        with active != 0 (with ``tolerance`` >= 0, only Jet's candidates keep their targets). The arrays are
        the state's buffers: the next call overwrites them."""
        n = self.targets.shape[0]
        if n:
            arrays, group, bounds = self.arrays, rating_group(self.k), max_block_weights
            level = [arrays[name] for name in ("net_offsets", "vertex_offsets", "incident_nets", "net_weights")]
            launch(rate_moves_kernel, grid(-(-n // (WARP_SIZE // group)) * WARP_SIZE, RATE_THREADS), *level,
                   arrays["vertex_weights"], arrays["blocks"], arrays["pin_counts"], arrays["block_weights"], bounds,
                   self.k, group, cut_objective, only_adjacent, active, tolerance, arrays["targets"],
                   arrays["gains"], arrays["internals"])
            if self.heavy.shape[0]:
                launch(rate_heavy_chunks_kernel, grid(self.chunk_heavy.shape[0] * RATE_THREADS, RATE_THREADS),
                       arrays["chunk_heavy"], arrays["chunk_starts"], self.chunk_size, arrays["heavy"], *level,
                       arrays["blocks"], arrays["pin_counts"], self.k, group, cut_objective, active,
                       arrays["heavy_affinity"], arrays["heavy_adjacent"], arrays["heavy_sums"])
                launch(pick_heavy_moves_kernel, grid(self.heavy.shape[0] * WARP_SIZE, RATE_THREADS),
                       arrays["heavy"], arrays["vertex_weights"], arrays["blocks"], arrays["block_weights"], bounds,
                       self.k, only_adjacent, active, tolerance, arrays["heavy_affinity"], arrays["heavy_adjacent"],
                       arrays["heavy_sums"], arrays["targets"], arrays["gains"], arrays["internals"])
        return self.targets, self.gains, self.internals

    def apply(self, moving, destinations, accepted, locked=None):
        """Move the vertices ``moving[accepted]`` to ``destinations[accepted]``; Phi, block weights and
        ``status`` follow; moved vertices get locked[v] = 0. Returns (moves made, objective) on the host
        (one read of the device)."""
        if moving.shape[0]:
            arrays = self.arrays
            launch(apply_moves_kernel, grid(moving.shape[0] * self.lanes), moving, destinations, accepted,
                   arrays["net_offsets"], arrays["net_weights"], arrays["vertex_offsets"], arrays["incident_nets"],
                   arrays["vertex_weights"], self.k, self.cut_objective, self.lanes, arrays["blocks"],
                   arrays["pin_counts"], arrays["connectivity"], arrays["block_weights"],
                   arrays["no_locks"] if locked is None else locked, arrays["status"])
        return self._read_summary()

    def apply_kept(self, locked=None):
        """:meth:`apply` for the moves of :meth:`afterburner_scan`: every v with kept[v] != 0 goes to targets[v]."""
        arrays = self.arrays
        n = self.kept.shape[0]
        if n:
            launch(apply_kept_kernel, grid(n * self.lanes), arrays["kept"], arrays["targets"], arrays["net_offsets"],
                   arrays["net_weights"], arrays["vertex_offsets"], arrays["incident_nets"], arrays["vertex_weights"],
                   self.k, self.cut_objective, self.lanes, arrays["blocks"], arrays["pin_counts"],
                   arrays["connectivity"], arrays["block_weights"], arrays["no_locks"] if locked is None else locked,
                   arrays["status"])
        return self._read_summary()

    def _read_summary(self):
        """(moves since the last call, objective) of ``status``, whose moves only grow, with
        ``host_block_weights``: one copy from the device."""
        summary = np.array(to_host(self._summary))
        self.host_block_weights = summary[2:]
        moves = int(summary[0])
        self.host_status = moves - self._moves_read, int(summary[1])
        self._moves_read = moves
        return self.host_status

    def overloaded(self) -> bool:
        """Whether a block weighed more than its bound after the last :meth:`apply` (the state must have been
        given ``max_block_weights``)."""
        return self.overloaded_weight() > 0

    def overloaded_weight(self) -> int:
        """The weight of the blocks over their bounds after the last :meth:`apply` (0: none; bounds are >= 0)."""
        weights = self.host_block_weights
        return int(weights[weights > self.host_bounds].sum())

    def afterburner(self, moving, destinations, degrees, cut_objective: bool):
        """Recomputed gains int64[len(moving)] of the ranked candidates ``moving`` (:mod:`.afterburner`);
        ``degrees`` are their numbers of incident nets."""
        x = xp()
        count = moving.shape[0]
        new_gains = x.zeros(count, dtype=x.int64)
        if count == 0:
            return new_gains
        key_offsets = x.zeros(count + 1, dtype=x.int64)
        x.cumsum(degrees, out=key_offsets[1:])
        total = int(key_offsets[-1])
        if total == 0:
            return new_gains
        keys = x.empty(total, dtype=x.int64)
        arrays = self.arrays
        launch(incidence_keys_kernel, grid(count * self.lanes), moving, arrays["vertex_offsets"],
               arrays["incident_nets"], self.lanes, key_offsets, keys)
        keys = x.sort(keys)
        launch(afterburner_kernel, grid(total), keys, arrays["net_offsets"], arrays["net_weights"], moving,
               arrays["blocks"], destinations, self.k, cut_objective, arrays["pin_counts"], new_gains)
        return new_gains

    def afterburner_scan(self, cut_objective: bool):
        """kept int8[n] (the state's buffer): 1 for the candidates of the last :meth:`rate` (targets >= 0) whose
        gain after every better-ranked candidate's move is >= 0 (``afterburner_scan_kernel``: the same
        moves as :meth:`afterburner` keeps, on levels with ``scans_nets``)."""
        arrays = self.arrays
        n = self.kept.shape[0]
        if n:
            launch(afterburner_scan_kernel, grid(n * self.lanes), arrays["net_offsets"], arrays["pin_vertices"],
                   arrays["vertex_offsets"], arrays["incident_nets"], arrays["net_weights"], arrays["blocks"],
                   arrays["targets"], arrays["gains"], self.k, cut_objective, self.lanes, arrays["pin_counts"],
                   arrays["kept"])
        return self.kept
