"""Configuration: one frozen dataclass per algorithm, the partition config that groups them, and presets (fast,
default, quality)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace


UNBOUNDED = 1 << 62  # a size bound that never binds


@dataclass(frozen=True)
class CoarseningConfig:
    """Coarsening: rate, match, join and contract level by level (Cheng, Cho and Yoon 2015, Sec. II-C, IV).

    Attributes
    ----------
    rating : str
        ``heavy-edge``: each shared net adds w(e) / (|e| - 1), so big nets pull less; ``inner-product``:
        the Mondriaan similarity, the sum of w(e) over shared nets (Eq. 7-8).
    weight_penalty : bool
        Divide the rating by c(u) * c(v), which keeps cluster weights even.
    max_rated_net_size : int
        Nets with more pins are skipped when rating: they say little about similarity and cost |e|^2.
    contraction_limit_factor : int
        Coarsening stops at this many vertices per block (100 k), and each bisection of the initial
        partitioning coarsens its sub-problem to 2 x this: on the CPU path, and on the GPU path for inputs the
        host refines level by level (``policy.device_v_cycle_max_pins``). The initial partitioning, the CPU
        path's largest phase from k = 8 on, then runs its portfolios on smaller levels, which costs less time
        than the extra level to refine, for the same km1 as Mt-KaHyPar's 160 k (docs/tuning.md,
        "coarsening.contraction_limit_factor = 100 on the CPU path" and "contraction_limit_factor = 100 on the
        GPU path's small inputs too").
    device_contraction_limit_factor : int
        GPU path (and its twin), larger inputs: the same, 160 k (docs/tuning.md,
        "coarsening.contraction_limit_factor = 160").
    min_shrink : float
        Coarsening stops after a level that removes less than this fraction of the vertices.
    matching_rounds : int
        Rounds of proposals; mutual best proposals are matched in each (Fig. 9). One: later rounds pair
        vertices with their second choices, where joining the best neighbour's cluster keeps more of a good
        partition (docs/tuning.md, "coarsening.matching_rounds = 1").
    join_unmatched : bool
        After matching, an unmatched vertex joins its best neighbour's cluster where weight allows, rating
        the matched pairs as wholes (on the level of the pairs: docs/tuning.md, "Joining on the level of
        the pairs").
    pair_level_min_paired : float
        On a level of at least ``pair_level_skip_pins`` pins, the joining runs on the level of the pairs only
        when the matching paired at least this fraction of the vertices; below it, that level is the level
        itself but for a few pairs, and joining there costs more (its proposals cannot reuse the matching's
        lists of best candidates) than it changes: the joining runs on the level (the long-tailed and
        synthetic classes, whose matching pairs almost nobody; docs/tuning.md, "Joining on the level of the
        pairs").
    pair_level_skip_pins : int
        Levels of fewer pins always join on the pair level: where the matching stalls near the contraction
        limit, the pair level's joining keeps more of a good partition.
    max_shrink_factor : float
        Joining stops once a level has n / max_shrink_factor clusters (Mt-KaHyPar's 2.5).
    two_hop : bool
        Vertices still alone after joining that would join the same cluster but for its weight pair up
        (METIS's 2-hop matching).
    max_levels : int
        At most this many levels.
    """

    rating: str = "heavy-edge"
    weight_penalty: bool = False
    max_rated_net_size: int = 1000
    contraction_limit_factor: int = 100
    device_contraction_limit_factor: int = 160
    min_shrink: float = 0.01
    matching_rounds: int = 1
    join_unmatched: bool = True
    pair_level_min_paired: float = 0.01
    pair_level_skip_pins: int = 1 << 20
    max_shrink_factor: float = 2.5
    two_hop: bool = True
    max_levels: int = 100


@dataclass(frozen=True)
class InitialConfig:
    """Initial partitioning of the coarsest level: recursive multilevel bisection with a portfolio of flat
    bipartitioners (random, BFS, greedy growing by the FM and by the max-net gain, label propagation), each
    run refined.

    Attributes
    ----------
    runs : int
        Runs of each algorithm per bisection.
    algorithms : tuple of str
        The portfolio's algorithms (docs/tuning.md, "Greedy growing by the max-net gain").
    fm_candidates : int
        The best this many runs are refined by 2-way FM; the best result wins.
    fm_fruitless_moves : int
        The FM passes of this phase (the candidates' and those of the bisections' levels) stop after this many
        moves without a new best, in place of ``FMConfig.fruitless_moves`` (docs/tuning.md, "The portfolio's
        FM").
    pin_budget : int
        Runs and FM candidates are each cut so that their count times the pins stays within this budget.
    pins_per_thread : int
        Parallel loops of this phase use at most ceil(pins / pins_per_thread) threads; the portfolio of a
        sub-problem with fewer pins runs in one call on one thread, that of a larger one on the workers that
        the recursion gives it (docs/tuning.md, "initial.pins_per_thread").
    recursion_threads : int
        Threads for the portfolio's runs and the two halves of each bisection (0: numba's thread count).
    rating_budget : int
        A bisection coarsens its sub-problem first only while one rating round (the sum of |e|^2) stays within
        this many pin visits, or the sub-problem has at most ``always_coarsen_pins`` pins.
    always_coarsen_pins : int
        Sub-problems of at most this many pins are coarsened whatever their rating costs (docs/tuning.md,
        "initial.rating_budget").
    """

    runs: int = 4
    algorithms: tuple = ("random", "bfs", "greedy", "label-propagation", "greedy-max-net")
    fm_candidates: int = 20
    fm_fruitless_moves: int = 1000
    pin_budget: int = 4_000_000
    pins_per_thread: int = 5_000
    recursion_threads: int = 0
    rating_budget: int = 4_000_000
    always_coarsen_pins: int = 1_000_000


@dataclass(frozen=True)
class LabelPropagationConfig:
    """Label propagation on the host: every vertex moves to its best block where the move keeps the balance.

    Attributes
    ----------
    rounds : int
        Rounds per level (0: none).
    """

    rounds: int = 5


@dataclass(frozen=True)
class FMConfig:
    """k-way Fiduccia-Mattheyses on the host: move sequences with rollback to the best prefix.

    Attributes
    ----------
    passes : int
        Passes per level; a pass that gains nothing stops them.
    fruitless_moves : int
        A pass stops after this many moves without a new best.
    max_update_net_size : int
        Nets with more pins do not update their pins' gains after a move.
    min_improvement : float
        Passes also stop after one that improves the objective by less than this fraction (0: never).
    """

    passes: int = 10
    fruitless_moves: int = 350
    max_update_net_size: int = 1000
    min_improvement: float = 0.0


@dataclass(frozen=True)
class JetConfig:
    """Jet-style rounds on the GPU and their CPU twin (Gilbert, Madduri, Boman and Rajamanickam 2024).

    Attributes
    ----------
    rounds : int
        At most this many rounds per level.
    tolerance_fine : float
        Jet's c on the input level: a vertex is a candidate when its gain is > 0 or >= -floor(c * the weight
        of its nets with another pin in its block).
    tolerance_coarse : float
        Jet's c on the coarser levels.
    """

    rounds: int = 24
    tolerance_fine: float = 0.0
    tolerance_coarse: float = 0.25


@dataclass(frozen=True)
class PairFMConfig:
    """Pairwise FM on the host: 2-way FM between the disjoint block pairs of round-robin rounds, in parallel.

    Attributes
    ----------
    sweeps : int
        At most this many sweeps of k - 1 rounds (0: none).
    min_improvement : float
        Sweeps stop after one that improves km1 by less than this fraction.
    fruitless_moves : int
        A pair's pass stops after this many moves without a new best.
    max_degree : int
        Vertices in more nets stay where they are.
    min_connectivity : float
        Runs only where km1 >= this times the cut (cut nets span many blocks).
    """

    sweeps: int = 3
    min_improvement: float = 0.01
    fruitless_moves: int = 100
    max_degree: int = 1000
    min_connectivity: float = 3.0


@dataclass(frozen=True)
class FlowConfig:
    """Flow-based refinement on the host (:mod:`hgpart.refinement.flows`): minimum cuts of regions around the
    cut between pairs of blocks (Heuer, Sanders and Schlag 2018; Mt-KaHyPar's quality preset).

    Attributes
    ----------
    levels : str
        Where it runs: ``none``; ``last`` (the input, once, at the end); ``input`` (the input level of each
        V-cycle); ``all`` (every level of each V-cycle). The GPU path runs it only where the host refines.
    alpha : float
        A region may be as heavy as (1 + alpha * epsilon) times the perfect block weight less the other
        block's weight; halved when the region's minimum cut is unbalanced. The presets' values trade km1
        for time as docs/tuning.md, "Flow-based refinement", measured.
    max_distance : int
        Region vertices are at most this many hops from a vertex of a cut net (Mt-KaHyPar's 2).
    max_net_size : int
        Nets with more pins neither seed nor grow a region (they are still in its network).
    rounds : int
        At most this many rounds over the pairs of blocks.
    min_improvement : float
        Rounds stop after one that improves the objective by less than this fraction.
    coarse_min_pair_cut : int
        On levels coarser than the input, pairs of blocks whose cut weighs at most this much are skipped
        (Mt-KaHyPar's skip_small_cuts skips those of at most 10).
    coarse_rounds : int
        At most this many rounds on levels coarser than the input (docs/tuning.md, "flows.coarse_rounds = 1").
    coarse_alpha : float
        ``alpha`` on levels coarser than the input when k > 2 (docs/tuning.md, "flows.coarse_alpha = 8"); with
        k = 2 the coarse levels' one pair keeps ``alpha``, whose larger regions cost little time there.
    """

    levels: str = "all"
    alpha: float = 16.0
    max_distance: int = 2
    max_net_size: int = 1000
    rounds: int = 2
    min_improvement: float = 0.001
    coarse_min_pair_cut: int = 10
    coarse_rounds: int = 1
    coarse_alpha: float = 8.0

    def __post_init__(self):
        if self.levels not in ("none", "last", "input", "all"):
            raise ValueError(f"unknown flow levels {self.levels!r} (none, last, input or all)")


@dataclass(frozen=True)
class PolicyConfig:
    """Where each step of the V-cycle runs and which refiners run, by size (:class:`hgpart.policy.Policy`).

    Attributes
    ----------
    v_cycles : int
        Extra V-cycles after the first: coarsen again inside the blocks, refine back up.
    host_communities_max_nodes : int
        GPU path: inputs whose star expansion has at most this many nodes (vertices plus nets) have their
        communities detected by the host's twin (the same labels), which is faster there: the device's
        detection is bound by its launches whatever the size, the host's time grows with the nodes
        (docs/tuning.md, "policy.host_communities_max_nodes").
    host_level_max_pins : int
        GPU path: levels of at most this many pins are coarsened on the host, where launches cost more
        than the work.
    device_v_cycle_max_pins : int
        GPU path: the extra V-cycles and the host's k-way FM run only on inputs of at most this many pins.
    host_fm : bool
        GPU path: the host refines after the device: k-way FM on small inputs, pairwise FM on large ones.
    host_fm_level_fraction : float
        GPU path, small inputs: the host's k-way FM also refines, after Jet, every coarser level of at most
        this fraction of the input's pins (0: only the input).
    large_input_fm_candidates : int
        GPU path, inputs above ``device_v_cycle_max_pins``: the initial portfolio's FM candidates.
    large_input_fm_fruitless_moves : int
        GPU path, the same inputs: the initial partitioning's FM passes stop after this many fruitless moves.
    initial_fm_min_improvement : float
        A coarsest level of more than ``InitialConfig.pin_budget / 20`` pins: the initial partitioning's FM
        passes stop after one that improves the objective by less than this fraction.
    auto_gpu_min_pins : int
        ``device="auto"`` with a usable GPU: inputs of fewer pins take the CPU path, the faster one at those
        sizes; larger ones the GPU path (docs/tuning.md, "policy.auto_gpu_min_pins").
    """

    v_cycles: int = 0
    host_communities_max_nodes: int = 40_000
    host_level_max_pins: int = 30_000
    device_v_cycle_max_pins: int = 2_000_000
    host_fm: bool = True
    host_fm_level_fraction: float = 0.5
    large_input_fm_candidates: int = 5
    large_input_fm_fruitless_moves: int = 50
    initial_fm_min_improvement: float = 0.0025
    auto_gpu_min_pins: int = 500_000


@dataclass(frozen=True)
class GraphPolicyConfig:
    """Where ``device="auto"`` runs a graph command when a GPU is usable: on the GPU for graphs of at least
    ``<command>_min_edges`` edges, on the CPU twin below, where the GPU's fixed costs (launches, the upload,
    reading results back) outweigh its speed (docs/tuning.md, "Where auto runs the graph commands").

    Attributes
    ----------
    cluster_min_edges : int
        Modularity clustering: its ensemble's runs and local-moving rounds cost the GPU 0.1-0.7 s on graphs of
        any size up to about 10^5 edges (more on graphs with many agglomeration levels); graphs with community
        structure of 10^5 edges still run faster on the CPU twin.
    mst_min_edges : int
        Minimum spanning forest: the GPU's Borůvka steps cost about 6-10 ms of launches up to 10^5 edges.
    triangles_min_edges : int
        Triangle counting: about 4-5 ms on the GPU for any graph up to 10^5 edges.
    cluster_host_level_max_size : int
        Clustering on the GPU: coarser levels of at most this many vertices plus edges (the ensemble's
        contracted cores and the coarse levels of each cycle) are copied to the host and clustered by the CPU
        twin, where a level costs no launches (the same clusters); 0 keeps every level on the device. The
        vertices count because the host visits each, isolated ones too (an R-MAT graph's millions of isolated
        vertices stay on every level).
    """

    cluster_min_edges: int = 120_000
    mst_min_edges: int = 40_000
    triangles_min_edges: int = 95_000
    cluster_host_level_max_size: int = 30_000

    def min_edges(self, command: str) -> int:
        """The bound of ``command`` (``cluster``, ``mst`` or ``triangles``)."""
        return getattr(self, f"{command}_min_edges")


@dataclass(frozen=True)
class ClusterConfig:
    """Modularity clustering: the agglomeration of Fagginger Auer and Bisseling (2012), then local moving at
    every level on the way down (or on the input alone, see ``descent``).

    Attributes
    ----------
    seed : int
        Salts the blue/red colouring of the matching rounds.
    matching_rounds : int
        Blue/red rounds per level; a round without a new pair ends the matching.
    satellites : bool
        Unmatched vertices with centre potential below 1 join a neighbouring centre (stars).
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
    descent : bool
        Local moving on every level from the best one down to the input (True), or on the input alone, the
        best level's clusters projected straight down to it (False).
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
    descent: bool = True


@dataclass(frozen=True)
class CommunityConfig:
    """Community detection before coarsening: coarsening never merges vertices of different communities
    (T. Heuer and S. Schlag, "Improving Coarsening Schemes for Hypergraph Partitioning by Exploiting Community
    Structure", SEA 2017), found by hgpart's modularity clustering on the hypergraph's star expansion.

    Attributes
    ----------
    detect : bool
        Detect communities and keep coarsening inside them (for k >= ``min_k``, inputs of at most
        ``max_pins`` pins, and not on mesh graphs where ``skip_mesh_graphs``).
    min_k : int
        Communities only for this many blocks or more (docs/tuning.md, "Community detection": with flows on
        every level they pay at k = 2 as well, as they do in Mt-KaHyPar).
    max_pins : int
        Communities only for inputs of at most this many pins: above, on the large generated classes, they
        cost the GPU path time for no gain in km1 (docs/tuning.md, "communities.max_pins").
    skip_mesh_graphs : bool
        No communities on mesh graphs (:func:`hgpart.preprocessing.communities.is_mesh_graph`: every net has two
        pins and the degrees vary little), as Mt-KaHyPar leaves them out: there a community splits into a
        handful of coarse vertices that a good bisection cannot cut through (docs/tuning.md,
        "communities.skip_mesh_graphs").
    edge_weights : str
        Star-expansion edge weights (:mod:`hgpart.preprocessing.common`): ``hybrid`` (``degree`` below
        ``density_threshold`` nets per vertex, else ``uniform``), ``uniform``, ``non-uniform`` or ``degree``.
    density_threshold : float
        See ``edge_weights``.
    max_net_size : int
        Nets with more pins are left out of the star expansion: a large net's star ties together vertices that
        share little else and merges communities that a good cut separates (docs/tuning.md, "communities.max_net_size
        = 100 (was 1000)").
    clustering : ClusterConfig
        The modularity clustering that finds the communities: one try, one cycle, 8 local-moving rounds, on the
        input level alone (docs/tuning.md, "communities.clustering: local moving on the input level, seeded by
        the partition"). A partition's seed replaces its ``seed``.
    """

    detect: bool = True
    min_k: int = 2
    max_pins: int = 2_000_000
    skip_mesh_graphs: bool = True
    edge_weights: str = "hybrid"
    density_threshold: float = 0.75
    max_net_size: int = 100
    clustering: ClusterConfig = field(default_factory=lambda: ClusterConfig(move_rounds=8, cycles=1, tries=1,
                                                                            ensemble_rounds=0, descent=False))

    def wanted(self, k: int, pins: int, mesh_graph: bool = False) -> bool:
        """Whether communities are detected for ``k`` blocks of an input of ``pins`` pins (``mesh_graph``:
        whether the input is one)."""
        return (self.detect and k >= self.min_k and pins <= self.max_pins
                and not (mesh_graph and self.skip_mesh_graphs))


def choose_communities(communities: CommunityConfig, choice: bool | None) -> CommunityConfig:
    """``communities`` as an explicit choice (``--communities/--no-communities``) makes it: None keeps it,
    True detects them for every k, input size and kind of input, False never."""
    if choice is None:
        return communities
    return replace(communities, detect=choice, min_k=1, max_pins=UNBOUNDED, skip_mesh_graphs=False)


@dataclass(frozen=True)
class PartitionConfig:
    """Everything one partition needs: the problem (k, epsilon, objective, seed) and one config per
    algorithm. Build it with :func:`make_config`."""

    k: int = 2
    epsilon: float = 0.03
    objective: str = "km1"
    seed: int = 0
    preset: str = "default"
    communities: CommunityConfig = field(default_factory=CommunityConfig)
    coarsening: CoarseningConfig = field(default_factory=CoarseningConfig)
    initial: InitialConfig = field(default_factory=InitialConfig)
    label_propagation: LabelPropagationConfig = field(default_factory=LabelPropagationConfig)
    fm: FMConfig = field(default_factory=FMConfig)
    jet: JetConfig = field(default_factory=JetConfig)
    pair_fm: PairFMConfig = field(default_factory=PairFMConfig)
    flows: FlowConfig = field(default_factory=FlowConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)


PRESETS = {
    "fast": dict(communities=CommunityConfig(detect=False), flows=FlowConfig(levels="none"),
                 initial=InitialConfig(runs=1, fm_fruitless_moves=100),
                 label_propagation=LabelPropagationConfig(rounds=3),
                 fm=FMConfig(passes=1, fruitless_moves=100), jet=JetConfig(rounds=8), policy=PolicyConfig(v_cycles=0)),
    "default": {},
    "quality": dict(communities=CommunityConfig(max_pins=UNBOUNDED), initial=InitialConfig(runs=16, fm_candidates=80),
                    flows=FlowConfig(rounds=4, coarse_rounds=4, coarse_alpha=16.0),
                    label_propagation=LabelPropagationConfig(rounds=8),
                    fm=FMConfig(passes=20, fruitless_moves=1000), jet=JetConfig(rounds=48),
                    policy=PolicyConfig(v_cycles=2, device_v_cycle_max_pins=UNBOUNDED, large_input_fm_candidates=20,
                                        large_input_fm_fruitless_moves=1000)),
}


def make_config(k: int, epsilon: float = 0.03, objective: str = "km1", seed: int = 0, preset: str = "default",
                **overrides) -> PartitionConfig:
    """A :class:`PartitionConfig` from a preset (``fast``, ``default``, ``quality``), with per-algorithm
    overrides (e.g. ``communities=CommunityConfig(detect=False)``)."""
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
class TriangleConfig:
    """Triangle counting (after Low et al., HPEC 2017): how the work is cut into tasks. Both devices cut it the
    same way, so they count the same triangles per task and list them in the same order.

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


@dataclass(frozen=True)
class KnnConfig:
    """The kNN hypergraph of feature vectors (Huang, Liu, Lv, Gong and Metaxas, IEEE TPAMI 2011): a net per
    sample holding it and its nearest neighbours, weighted by how compact its members are.

    Attributes
    ----------
    n_neighbors : int
        Neighbours per sample; a net has ``n_neighbors + 1`` pins.
    metric : str
        ``euclidean`` or ``cosine`` (1 - cos).
    weights : str
        ``compactness``: a net weighs the heat kernel of its members' distances to its sample, sum of
        exp(-(d / sigma)^2) with sigma the mean neighbour distance over all samples, the sample itself counting
        1 (the conventional hyperedge weight that Huang, Elgammal and Yang, arXiv 1410.6736, 2014, compare
        theirs against); ``uniform``: every net weighs 1.
    weight_scale : int
        The heaviest net's integer weight; the others are scaled alike and rounded (at least 1), since hMetis
        files and the partitioner take integer weights.
    search : str
        ``exact`` (brute force, on either device), ``approximate`` (pynndescent on the CPU, the ``ann`` extra) or
        ``auto``: exact on the GPU, and on the CPU up to ``exact_max_samples`` samples (approximate above, when
        pynndescent is installed).
    exact_max_samples : int
        See ``search``.
    seed : int
        Seeds the approximate search.
    """

    n_neighbors: int = 5
    metric: str = "euclidean"
    weights: str = "compactness"
    weight_scale: int = 1000
    search: str = "auto"
    exact_max_samples: int = 200_000
    seed: int = 0

    def __post_init__(self):
        from .errors import InputError

        if self.n_neighbors < 1:
            raise InputError(f"the number of neighbours must be at least 1, got {self.n_neighbors}")
        if self.metric not in ("euclidean", "cosine"):
            raise InputError(f"unknown metric {self.metric!r} (euclidean or cosine)")
        if self.weights not in ("compactness", "uniform"):
            raise InputError(f"unknown net weights {self.weights!r} (compactness or uniform)")
        if self.search not in ("auto", "exact", "approximate"):
            raise InputError(f"unknown search {self.search!r} (auto, exact or approximate)")
        if self.weight_scale < 1:
            raise InputError(f"the weight scale must be at least 1, got {self.weight_scale}")

