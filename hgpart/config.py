"""Configuration: one frozen dataclass per phase, and presets (fast, default, quality)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


@dataclass(frozen=True)
class CoarseningConfig:
    """Coarsening (seed 000 Sec. II-C, IV).

    Attributes
    ----------
    rating : str
        ``inner-product``: the Mondriaan similarity sum of w(e) over shared nets (seed 000 Eq. 7-8);
        ``heavy-edge``: each shared net adds w(e) / (|e| - 1), so big nets pull less.
    weight_penalty : bool
        Divide the rating by c(u) * c(v), which keeps cluster weights even.
    max_rated_net_size : int
        Nets with more pins are skipped when rating (they say little about similarity and cost |e|^2).
    contraction_limit_factor : int
        Stop when the coarsest level has at most this many vertices per block (160 * k).
    min_shrink : float
        Stop when a level removes less than this fraction of the vertices.
    matching_rounds : int
        Rounds of proposals; in each, mutual best proposals are matched (seed 000 Fig. 9).
    join_unmatched : bool
        After matching, an unmatched vertex joins its best neighbour's cluster when weight allows.
    max_shrink_factor : float
        Joining stops once a level has n / max_shrink_factor clusters; 2.5 as in Mt-KaHyPar. Against 1.8
        (the default until 2026-11): on ../shared/data (ibm01, ibm03, ibm06, avqlarge, bundle1, memplus;
        k = 2, 8, 32; seeds 0-1; CPU path) km1 geomean 0.982x in 0.87x the time; on the H100, GPU path,
        grid 1M k = 2 / 8 / 32 / 128 km1 0.998 / 0.984 / 0.997 / 1.016x in 0.73 / 0.89 / 0.88 / 0.96x the
        time, evenly 1M k = 8 km1 0.959x, long-tailed 1M k = 2 the same km1 in 0.94x the time, with 2-3
        fewer levels.
    two_hop : bool
        After joining, vertices still alone that proposed to the same cluster are paired with each other
        (METIS's 2-hop matching, Mt-KaHyPar's two-hop coarsening): on inputs where nearly everyone's best
        neighbour is one of a few hubs, matching and joining leave most vertices alone.
    max_levels : int
        Upper bound on levels.
    communities : bool
        First find Louvain communities of the star expansion and never merge across them (as
        Mt-KaHyPar's preprocessing does).
    gpu_host_max_pins : int
        GPU path: a level of at most this many pins is coarsened on the host (the same map and contraction),
        where the device's launches and reads cost more than the work: on the H100 machine a level of grid
        1M took 10-15 ms on the device whatever its size, while the host's njit code takes about 3 ms at
        25k pins. Since the level's steps became fewer, fused kernels (2026-11-24) a device level takes
        6-7 ms down to 55k pins, and the host 6.9 ms at 25k pins, 3.5 ms at 11k: about even at this size.
    """

    rating: str = "heavy-edge"
    weight_penalty: bool = False
    max_rated_net_size: int = 1000
    contraction_limit_factor: int = 160
    min_shrink: float = 0.01
    matching_rounds: int = 8
    join_unmatched: bool = True
    max_shrink_factor: float = 2.5
    two_hop: bool = True
    max_levels: int = 100
    communities: bool = False
    gpu_host_max_pins: int = 30_000


@dataclass(frozen=True)
class InitialConfig:
    """Initial partitioning of the coarsest hypergraph by recursive bisection with a portfolio.

    Attributes
    ----------
    runs : int
        Runs of each algorithm (random, BFS, greedy growing, label propagation), each followed by label
        propagation.
    fm_candidates : int
        The best this many runs are then refined by FM; the best result wins.
    pin_budget : int
        Caps the portfolio on hypergraphs with many pins (evenly connected inputs keep most pins at the
        coarsest level): runs x algorithms and FM candidates are each cut so that their count times the
        pins stays within this budget, keeping at least one run of each algorithm and one FM candidate.
        Coarsest levels below pin_budget / 20 pins (all of ../shared/data) are not affected.
    gpu_fm_candidates : int
        ``fm_candidates`` on the GPU path, where this phase runs on the host while the device waits: on
        grid 1M (k = 8 and 32, three seeds each; the GPU path's CPU twin) 5 candidates gave as good a final
        km1 as 20 and cut the phase from 0.49 to 0.19 s (k = 8) and 2.2 to 0.8 s (k = 32). Only on inputs of
        more than ``RefinementConfig.gpu_v_cycle_max_pins`` pins: on the small ones (all of ../shared/data)
        the GPU path's twin had 1.085 / 1.090x the CPU path's km1 on avqlarge k = 8 / 32 with 5 candidates
        and 0.955 / 0.978x with 20 (../shared/data table, geometric mean 1.027 -> 1.001; 47 s for its 12
        partitions on a 2-core machine).
    gpu_fm_fruitless_moves : int
        On the same inputs (with ``gpu_fm_candidates``), the FM passes of initial partitioning, on the
        levels of each bisection and on its FM candidates, stop after this many moves without a new best
        (KaHyPar's initial partitioning: i-r-fm-stop-i=50) instead of ``RefinementConfig.fm_fruitless_moves``
        (350, as KaHyPar's main refinement): the sub-problems of a deep recursion have a few hundred
        vertices, and a pass that may make 350 fruitless moves moves nearly all of them, then rolls back.
        On the H100 machine (16 cores) the phase took 0.194 instead of 0.244 s on grid 1M k = 32, 0.487
        instead of 0.631 s at k = 128 and 3.50 instead of 4.93 s on evenly 1M k = 8 (km1 2,236,262 /
        2,233,418); long-tailed 300k kept its km1 at k = 2 and 8 and gained 0.4 / 2.3% at k = 32 / 128. On
        grid 1M (the GPU path's CPU twin, seeds 0-3) the final km1 averaged 7,502 instead of 7,430 at k = 8
        and 17,878 instead of 17,757 at k = 32 (one seed varies by 5%).
    pins_per_thread : int
        The portfolio's parallel loops run on at most ceil(pins / pins_per_thread) of numba's threads: on
        a small coarsest level, starting a parallel loop on many threads costs more than it saves (grid 1M
        k = 8 on the 16-core H100 machine: 1.04 s on 16 threads, 0.83 s on one).
    recursion_threads : int
        Threads on which the portfolio's runs, and the two halves of each bisection, run at once (0: the
        caller's numba thread count, e.g. ``--threads``; 1: one after the other). The partition does not
        depend on it.
    rating_budget : int
        Each bisection coarsens its sub-problem first (multilevel) only while one round of heavy-edge
        rating, the sum of |e|^2 over the rated nets, stays within this many pin visits; above it the
        portfolio runs on the sub-problem itself. Hub-dominated coarsest levels cross it: long-tailed 1M
        keeps 52M pins on 406 vertices (about 2.7e9 visits a round); on long-tailed 30k k = 8 (coarsest
        1,622 vertices, 1.2M pins, 4.9e7 visits; 2-core machine, seeds 0-2) the phase took 2.2 s instead
        of 4.9 s at km1 184,056 / 184,256 / 184,092 instead of 184,854 / 184,848 / 184,502. The coarsest
        levels of grids (2.2e5 visits at 250k k = 32, where coarsening helps) and of ../shared/data (at
        most 3.1e6, bundle1 k = 8, at max_shrink_factor 1.8) stay below: ibm01 and ibm03 (k = 2, 8, 32,
        seeds 0-1) gave the same km1 at 2e7 and 4e6. 4e6, not 2e7 (until 2026-11): the halves of evenly
        connected coarsest levels (1M: 1,563 vertices, 5.7M pins, 4.1e7 visits; each half about 1.2e7)
        lose few pins by coarsening, so a hierarchy there only adds levels to refine; on the H100, GPU path,
        evenly 1M k = 8 took 6.7 instead of 13.1 s in this phase (km1 2,425,868 / 2,425,669), k = 32 12.2
        instead of 22.0 s (km1 4,069,775 / 4,087,487).
    fm_min_improvement : float
        On a coarsest level of more than pin_budget / 20 pins, the FM passes of initial partitioning stop
        after one that improves the objective by less than this fraction (Mt-KaHyPar's relative improvement
        threshold, 0.25%); later passes there gained about 0.01-0.2% each at the full cost of a pass. On
        the GPU path's CPU twin (2-core machine, seeds 0-1) the phase took 13.2 -> 6.5 s on evenly 300k
        k = 8, 18.2 -> 14.9 / 18.3 -> 14.2 s on long-tailed 100k k = 32, 0.41 -> 0.20 s on evenly 50k
        k = 2, with final km1 within the seeds' spread (+-2%). Smaller levels (all of ../shared/data) keep
        every pass: there a threshold changed nothing but ibm03 and memplus at k = 32 (up to 1.8% worse).
    """

    runs: int = 5
    algorithms: tuple = ("random", "bfs", "greedy", "label-propagation")
    fm_candidates: int = 20
    pin_budget: int = 4_000_000
    gpu_fm_candidates: int = 5
    gpu_fm_fruitless_moves: int = 50
    pins_per_thread: int = 50_000
    recursion_threads: int = 0
    rating_budget: int = 4_000_000
    fm_min_improvement: float = 0.0025


@dataclass(frozen=True)
class RefinementConfig:
    """Refinement on every level of uncoarsening.

    Attributes
    ----------
    lp_rounds : int
        Rounds of label propagation (moves with positive gain that keep balance).
    fm_passes : int
        Passes of k-way FM (moves with rollback to the best prefix); a pass that gains nothing stops early.
    fm_fruitless_moves : int
        A pass stops after this many moves without a new best.
    max_update_net_size : int
        Nets with more pins do not trigger neighbour gain updates in FM.
    fm_min_improvement : float
        FM passes also stop after one that improves the objective by less than this fraction of it (0: only
        a pass that gains nothing stops them). Initial partitioning sets it from
        :attr:`InitialConfig.fm_min_improvement`.
    v_cycles : int
        Extra V-cycles after the first: coarsen again inside the blocks, refine back up (on the GPU path
        only up to ``gpu_v_cycle_max_pins``).
    gpu_v_cycle_max_pins : int
        GPU path: the extra V-cycles run only on inputs of at most this many pins. Measured with one: on
        ../shared/data (the GPU path's CPU twin, ibm01, ibm03, avqlarge, bundle1; k = 2, 8, 32) it gained up
        to 19% km1 (bundle1 k=2), on inputs the GPU path partitions in about a second; on the H100 at 5M
        pins and more it gained at most 1.6% and took 1.2-1.7x the time (evenly 1M k=2/8/32/128 km1
        -1.6/0/0/-0.3% for 1.39/-/1.20/1.44x the time, grid 1M k=8 -1.2% for 1.21x, long-tailed 1M k=2
        nothing for 1.71x). Mt-KaHyPar's default makes no V-cycles.
    gpu_host_fm : bool
        GPU path, inputs of at most ``gpu_v_cycle_max_pins`` pins: after the device's last level, k-way FM on
        the host refines the input once more (no LP rounds). Jet's single moves rarely take a vertex off a
        net held in several blocks; FM's move sequences do: long-tailed 30k k=8 (1.28M pins; the GPU path's
        CPU twin, 2-core machine) km1 131,465 -> 120,497 in 1.2 s, against Mt-KaHyPar's 122,040. Not above
        that size: on long-tailed 300k (15.6M pins, H100 machine) it took km1 from 1.109x to 1.009x
        Mt-KaHyPar's at k=8 but the time from 9.3 to 41.8 s (Mt-KaHyPar 53.1 s), and at k=32 from 16.8 to
        104.4 s (Mt-KaHyPar 87.6 s): FM's re-rating of every pin of a changed net, at O(k) each, adds up to
        the sum of |e|^2 over the moves. Above it, pairwise FM (``gpu_pair_fm_*``) takes its place.
    gpu_host_fm_level_fraction : float
        With ``gpu_host_fm``, on inputs of at most ``gpu_v_cycle_max_pins`` pins: after Jet, the host's k-way
        FM also refines every coarser level of at most this fraction of the input's pins (the partition goes
        to the host and back; those levels are small). On levels of big nets Jet can stall where FM's move
        sequences do not: bundle1 k=2 (770k pins, nets of 73 pins on average) stayed at the initial km1
        1,863 through every level with Jet and reached 1,437 after the V-cycle and the final FM; with FM on
        the levels at or below half the input's pins, 1,292, the CPU path's. On ../shared/data (GPU path's
        CPU twin, ibm01, ibm03, avqlarge, bundle1; k = 2, 8, 32) the geometric mean against the CPU path went
        from 1.001 to 0.988, every cell within 1.014 (before: bundle1 k=2 1.112). 0: only the input.
    gpu_pair_fm_sweeps : int
        GPU path, km1, inputs above ``gpu_v_cycle_max_pins`` pins: the host's last step is at most this many
        sweeps of pairwise FM (:mod:`hgpart.refinement.pair_fm`: 2-way FM on disjoint block pairs, in
        parallel), where the device's partition holds its cut nets in many blocks (below). 0: none.
    gpu_pair_fm_min_improvement : float
        Pairwise FM's sweeps stop after one that improves km1 by less than this fraction.
    gpu_pair_fm_fruitless_moves : int
        A pair's FM pass stops after this many moves without a new best.
    gpu_pair_fm_max_degree : int
        Vertices in more nets stay where they are during pairwise FM. A free vertex's gain walks all its nets
        in every round (k - 1 per sweep); on long-tailed 300k (H100 host, k=128, one sweep) the 0.5% of
        vertices above 1000 nets hold over half the pins, never moved, and made the sweep take 29.1 instead
        of 9.5 s for the same gain (284,705).
    gpu_pair_fm_min_connectivity : float
        Pairwise FM runs only where km1 >= this times the cut (its cut nets span this many blocks plus one on
        average): where Jet's single moves leave nets held in several blocks. Device partitions of 1M-vertex
        grids have km1 / cut 1.00-1.01 (one sweep would gain 0.1-0.7% for 0.15-0.37 s, more than a tenth of
        their time), evenly 1M k=8 2.32, long-tailed 300k 4.4 (k=8) to 17.8 (k=128).
    gpu_rounds : int
        GPU path: at most this many Jet-style rounds per level (:mod:`hgpart.refinement.gpu_refiner`).
    gpu_tolerance_fine, gpu_tolerance_coarse : float
        GPU path: Jet's c on the input level and on the coarser levels; a vertex is a candidate when its
        gain is > 0 or >= -floor(c * the weight of its nets with another pin in its block).
    """

    lp_rounds: int = 5
    fm_passes: int = 10
    fm_fruitless_moves: int = 350
    max_update_net_size: int = 1000
    fm_min_improvement: float = 0.0
    v_cycles: int = 1
    gpu_v_cycle_max_pins: int = 2_000_000
    gpu_host_fm: bool = True
    gpu_host_fm_level_fraction: float = 0.5
    gpu_pair_fm_sweeps: int = 3
    gpu_pair_fm_min_improvement: float = 0.01
    gpu_pair_fm_fruitless_moves: int = 100
    gpu_pair_fm_max_degree: int = 1000
    gpu_pair_fm_min_connectivity: float = 3.0
    gpu_rounds: int = 24
    gpu_tolerance_fine: float = 0.0
    gpu_tolerance_coarse: float = 0.25


@dataclass(frozen=True)
class PartitionConfig:
    """Everything the driver needs; build with :func:`make_config`."""

    k: int = 2
    epsilon: float = 0.03
    objective: str = "km1"
    seed: int = 0
    preset: str = "default"
    coarsening: CoarseningConfig = field(default_factory=CoarseningConfig)
    initial: InitialConfig = field(default_factory=InitialConfig)
    refinement: RefinementConfig = field(default_factory=RefinementConfig)


PRESETS = {
    "fast": dict(initial=InitialConfig(runs=1), refinement=RefinementConfig(lp_rounds=3, fm_passes=1,
                                                                             fm_fruitless_moves=100, v_cycles=0,
                                                                             gpu_rounds=8)),
    "default": {},
    "quality": dict(initial=InitialConfig(runs=20, fm_candidates=80, gpu_fm_candidates=20,
                                         gpu_fm_fruitless_moves=1000),
                    refinement=RefinementConfig(lp_rounds=8, fm_passes=20, fm_fruitless_moves=1000, v_cycles=2,
                                                gpu_v_cycle_max_pins=1 << 62, gpu_rounds=48)),
}


def make_config(k: int, epsilon: float = 0.03, objective: str = "km1", seed: int = 0, preset: str = "default",
                **overrides) -> PartitionConfig:
    """A :class:`PartitionConfig` from a preset, with per-phase overrides (dataclass instances)."""
    from .errors import InputError

    if preset not in PRESETS:
        raise InputError(f"unknown preset {preset!r} (fast, default or quality)")
    if objective not in ("km1", "cut"):
        raise InputError(f"unknown objective {objective!r} (km1 or cut)")
    if k < 1:
        raise InputError(f"k must be at least 1, got {k}")
    if not epsilon >= 0:
        raise InputError(f"epsilon must be non-negative, got {epsilon}")
    config = PartitionConfig(k=k, epsilon=epsilon, objective=objective, seed=seed, preset=preset,
                             **PRESETS[preset])
    return replace(config, **overrides) if overrides else config


@dataclass(frozen=True)
class ClusterConfig:
    """Modularity clustering (seed 002 agglomeration, then local moving at every level).

    Attributes
    ----------
    seed : int
        Salts the blue/red colouring of the matching rounds.
    matching_rounds : int
        Blue/red rounds per level (seed 002); a round without a new pair ends the matching.
    satellites : bool
        Unmatched vertices with centre potential below 1 join a neighbouring centre (seed 002's stars).
    max_levels : int
        Upper bound on agglomeration levels per cycle.
    min_shrink : float
        A level that removes less than this fraction of the vertices ends the agglomeration.
    move_rounds : int
        Rounds of local moving per level.
    stale_rounds : int
        Local moving stops after this many rounds in a row that raise modularity by at most
        ``min_improvement``.
    min_improvement : float
        See ``stale_rounds``; a cycle (see ``cycles``) that gains no more than this is the last.
    move_while_agglomerating : bool
        Improve each level's pairs and stars by local moving before contracting them.
    cycles : int
        Agglomerate and refine again, starting from the clusters found, while modularity improves (by more
        than ``min_improvement``).
    tries : int
        Independent runs forming an ensemble (0: by size, see ``clustering.default_tries``).
    ensemble_rounds : int
        Times the core groups of the ensemble are contracted and clustered again.
    """

    seed: int = 0
    matching_rounds: int = 8
    satellites: bool = True
    max_levels: int = 64
    min_shrink: float = 0.01
    move_rounds: int = 32
    stale_rounds: int = 2
    min_improvement: float = 1e-4
    move_while_agglomerating: bool = True
    cycles: int = 8
    tries: int = 0
    ensemble_rounds: int = 4


@dataclass(frozen=True)
class TriangleConfig:
    """Triangle counting (seed 004): how the work is cut into tasks. Both devices cut it the same way, so
    they count the same triangles per task and list them in the same order.

    Attributes
    ----------
    small_out : int
        Vertices with at most this many out-neighbours are hashed by one warp (a table of the next power of
        two at least 4 times as many slots, per warp); those with more by a block of 8 warps.
    piece : int
        A block hashes at most this many out-neighbours at once; a vertex with more is taken in pieces of
        consecutive out-neighbours (one table each).
    """

    small_out: int = 128
    piece: int = 1024

    def __post_init__(self):
        if self.small_out < 1 or self.piece < self.small_out:
            raise ValueError(f"need 1 <= small_out <= piece, got {self.small_out}, {self.piece}")
