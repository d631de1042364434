"""The multilevel V-cycle (seed 000 Fig. 2): coarsen, partition the coarsest level, then project and
refine level by level. Direct k-way: the coarsest level is split by recursive bisection, every level on
the way up is refined k-way for km1 or cut.

Two devices run the same cycle. ``cpu``: numba njit on all cores, label propagation then FM on each level,
plus ``v_cycles`` extra V-cycles. ``gpu``: the input is copied to the device once, every level is coarsened
there and stays there; only the coarsest hypergraph (small) comes back for the CPU's initial-partitioning
portfolio; projection and refinement (Jet-style rounds, :mod:`.refinement.gpu_refiner`) run on the device
level by level, and the partition comes back once (once more per extra V-cycle, which coarsens again on
the device with the partition as fixed blocks; up to ``gpu_v_cycle_max_pins`` pins). On those inputs the
host's k-way FM also refines, after Jet, each coarser level of at most half the input's pins
(``gpu_host_fm_level_fraction``), and the input once more at the end (``gpu_host_fm``); on larger ones, for
km1, pairwise FM on parallel threads (:mod:`.refinement.pair_fm`) where the cut nets span many blocks."""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field, replace

import numba
import numpy as np

from .coarsening import coarsen
from .coarsening.coarsener import project
from .config import PartitionConfig, make_config
from .cuda.arrays import prepare_uploads
from .errors import DeviceMemoryError, InfeasibleError, InputError
from .graphs.louvain import hypergraph_communities
from .hypergraph import Hypergraph, scatter_sum
from .initial import initial_partition
from .metrics import PartitionMetrics, evaluate, max_block_weight
from .parallel import all_parallel, runs_serially
from .refinement import rebalance_partition, refine
from .refinement.pair_fm import pair_fm


@dataclass
class PartitionResult:
    """A partition and how it was made.

    Attributes
    ----------
    partition : int32[num_vertices]
        Block of each vertex in [0, k).
    metrics : PartitionMetrics
    seconds : dict
        Wall time per phase: coarsening, initial, refinement, total.
    levels : list of dict
        One row per coarsening level.
    device : str
        "cpu" or "gpu": where coarsening and refinement ran.
    device_memory_bytes : int
        GPU path: the most device memory CuPy's arrays held at once (the peak); 0 on the CPU path.
    """

    partition: np.ndarray
    metrics: PartitionMetrics
    seconds: dict = field(default_factory=dict)
    levels: list = field(default_factory=list)
    device: str = "cpu"
    device_memory_bytes: int = 0


def _check_fixed(hypergraph: Hypergraph, fixed, k: int) -> np.ndarray | None:
    if fixed is None:
        return None
    fixed = np.asarray(fixed, dtype=np.int64)
    if fixed.shape != (hypergraph.num_vertices,):
        raise InputError(f"fixed-vertex array has {fixed.shape[0]} entries, the hypergraph "
                         f"{hypergraph.num_vertices} vertices")
    if fixed.size and (fixed.min() < -1 or fixed.max() >= k):
        raise InputError(f"fixed block ids must be -1 or in 0..{k - 1}")
    return fixed.astype(np.int32)


def partition(hypergraph: Hypergraph, k: int, epsilon: float = 0.03, objective: str = "km1", seed: int = 0,
              preset: str = "default", fixed=None, config: PartitionConfig | None = None,
              on_level=None, device: str = "cpu") -> PartitionResult:
    """Partition ``hypergraph`` into ``k`` blocks of weight at most (1 + epsilon) * ceil(total / k).

    Parameters
    ----------
    hypergraph : Hypergraph
    k : int
    epsilon : float
    objective : {"km1", "cut"}
    seed : int
        Same input, options and seed give the same partition.
    preset : {"fast", "default", "quality"}
    fixed : int[num_vertices], optional
        Block each vertex is fixed to, or -1 (hMetis fix file).
    config : PartitionConfig, optional
        Overrides k, epsilon, objective, seed and preset.
    on_level : callable, optional
        Called with each coarsening level's summary row.
    device : {"cpu", "gpu"}
        Where the V-cycle runs (see the module docstring); "gpu" needs numba.cuda, a GPU and CuPy.

    Raises
    ------
    DeviceMemoryError
        ``device="gpu"`` and the GPU has too little memory for this input.
    InfeasibleError
        When no partition within the balance bound was found (e.g. a vertex heavier than a block may be).
    """
    config = config or make_config(k, epsilon, objective, seed, preset)
    k, epsilon, cut_objective = config.k, config.epsilon, config.objective == "cut"
    fixed = _check_fixed(hypergraph, fixed, k)
    started = time.perf_counter()
    total = hypergraph.total_vertex_weight
    bound = max_block_weight(total, k, epsilon)
    max_weights = np.full(k, bound, dtype=np.int64)
    if hypergraph.num_vertices and hypergraph.vertex_weights.max() > bound:
        raise InfeasibleError(f"vertex weight {int(hypergraph.vertex_weights.max())} exceeds the block bound {bound} "
                              f"= (1 + {epsilon}) * ceil({total} / {k})")
    if fixed is not None:
        fixed_weights = np.zeros(k, dtype=np.int64)
        np.add.at(fixed_weights, fixed[fixed >= 0], hypergraph.vertex_weights[fixed >= 0])
        if fixed_weights.max() > bound:
            raise InfeasibleError(f"the vertices fixed to block {int(fixed_weights.argmax())} weigh "
                                  f"{int(fixed_weights.max())}, more than the block bound {bound}")
    if k == 1 or hypergraph.num_vertices == 0:
        result = np.zeros(hypergraph.num_vertices, dtype=np.int32)
        return PartitionResult(result, evaluate(hypergraph, result, k, epsilon), {"total": 0.0})
    communities = hypergraph_communities(hypergraph, config.coarsening.max_rated_net_size) \
        if config.coarsening.communities else None
    memory = 0
    if device == "gpu":
        blocks, levels, coarsened, initialized, memory = _on_device_or_memory_error(
            hypergraph, k, epsilon, max_weights, config, cut_objective, fixed, communities, on_level)
    else:
        hierarchy = coarsen(hypergraph, k, config.coarsening, epsilon, fixed, on_level=on_level,
                            communities=communities)
        coarsened = time.perf_counter()
        blocks = _initial(hierarchy.coarsest, hierarchy.coarsest_fixed, k, epsilon, max_weights, config, cut_objective)
        initialized = time.perf_counter()
        blocks = uncoarsen(hierarchy, blocks, k, max_weights, config, cut_objective)
        for _ in range(config.refinement.v_cycles):
            blocks = v_cycle(hypergraph, blocks, k, epsilon, max_weights, config, cut_objective, fixed, communities)
        levels = hierarchy.summary()
    metrics = evaluate(hypergraph, blocks, k, epsilon)
    if not metrics.balanced:
        movable = None if fixed is None else fixed < 0
        blocks, balanced = rebalance_partition(hypergraph, blocks, k, max_weights, cut_objective, movable)
        if balanced:
            blocks = refine(hypergraph, blocks, k, max_weights, config.refinement, cut_objective, movable)
        metrics = evaluate(hypergraph, blocks, k, epsilon)
    finished = time.perf_counter()
    if not metrics.balanced:
        raise InfeasibleError(f"could not balance the partition: heaviest block {metrics.max_block_weight} > "
                              f"bound {bound} = (1 + {epsilon}) * ceil({total} / {k})")
    seconds = {"coarsening": coarsened - started, "initial": initialized - coarsened,
               "refinement": finished - initialized, "total": finished - started}
    return PartitionResult(blocks, metrics, seconds, levels, device, memory)


def _initial(coarsest, coarsest_fixed, k, epsilon, max_weights, config, cut_objective, device="cpu",
             input_pins=0) -> np.ndarray:
    """The initial-partitioning portfolio on the coarsest level, then the rebalancer (host arrays): its
    recursion and runs on as many threads as the caller's numba threads (or ``recursion_threads``), its
    parallel loops on at most ceil(pins / ``pins_per_thread``) numba threads; on the GPU path with
    ``gpu_fm_candidates`` and ``gpu_fm_fruitless_moves`` where the input has more than ``gpu_v_cycle_max_pins``
    pins (``input_pins``); FM with ``fm_min_improvement`` where the level has more than pin_budget / 20 pins."""
    if device == "gpu" and input_pins > config.refinement.gpu_v_cycle_max_pins:
        config = replace(config, initial=replace(config.initial, fm_candidates=config.initial.gpu_fm_candidates),
                         refinement=replace(config.refinement,
                                            fm_fruitless_moves=config.initial.gpu_fm_fruitless_moves))
    if coarsest.num_pins > config.initial.pin_budget // 20:
        config = replace(config, refinement=replace(config.refinement,
                                                    fm_min_improvement=config.initial.fm_min_improvement))
    threads = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, -(-coarsest.num_pins // config.initial.pins_per_thread))))
    try:
        blocks = initial_partition(coarsest, k, epsilon, config, cut_objective, config.seed, coarsest_fixed,
                                   config.initial.recursion_threads or threads)
        movable = None if coarsest_fixed is None else coarsest_fixed < 0
        blocks, _ = rebalance_partition(coarsest, blocks, k, max_weights, cut_objective, movable)
    finally:
        numba.set_num_threads(threads)
    return blocks


def _on_device_or_memory_error(hypergraph, k, *args):
    """:func:`_v_cycle_on_device`, with running out of device memory turned into one DeviceMemoryError:
    at once when the pin counts Phi(e, b) of the input alone (4 bytes per net and block) exceed the free
    memory, else when an allocation fails."""
    from .cuda.arrays import free_device_bytes, is_out_of_memory

    what = f"{hypergraph.num_pins} pins, {hypergraph.num_nets} nets, k={k}"
    phi_bytes = 4 * hypergraph.num_nets * k
    free = free_device_bytes()
    if free is not None and phi_bytes > free:
        raise DeviceMemoryError(f"the GPU has {free / 1e9:.1f} GB free, but the pin counts of {what} alone take "
                                f"{phi_bytes / 1e9:.1f} GB; use --device cpu")
    try:
        return _v_cycle_on_device(hypergraph, k, *args)
    except Exception as error:
        if not is_out_of_memory(error):
            raise
        raise DeviceMemoryError(f"the GPU ran out of memory on {what}; use --device cpu") from None


def _v_cycle_on_device(hypergraph, k, epsilon, max_weights, config, cut_objective, fixed, communities, on_level):
    """The GPU path: (blocks, level rows, time coarsened, time initialised, peak device bytes)."""
    from .coarsening.coarsener import coarsen_on_device
    from .cuda.arrays import device_memory_peak, reset_device_memory_peak, to_host
    from .refinement.gpu_refiner import MAX_K

    if k > MAX_K:
        raise InputError(f"-k {k}: the GPU path refines at most {MAX_K} blocks; use --device cpu")
    reset_device_memory_peak()
    hierarchy = coarsen_on_device(hypergraph, k, config.coarsening, epsilon, fixed, on_level=on_level,
                                  communities=communities)
    coarsened = time.perf_counter()
    coarsest = hierarchy.coarsest.to_host() if hierarchy.levels else hypergraph
    coarsest_fixed = None if hierarchy.coarsest_fixed is None else to_host(hierarchy.coarsest_fixed)
    blocks = _initial(coarsest, coarsest_fixed, k, epsilon, max_weights, config, cut_objective, "gpu",
                      hypergraph.num_pins)
    initialized = time.perf_counter()
    blocks = uncoarsen_on_device(hierarchy, blocks, k, max_weights, config, cut_objective)
    input_level = hierarchy.levels[0][0] if hierarchy.levels else hierarchy.coarsest
    for _ in range(gpu_v_cycles(hypergraph, config)):
        blocks = v_cycle_on_device(hypergraph, input_level, blocks, k, epsilon, max_weights, config, cut_objective,
                                   fixed, communities)
    blocks = host_fm(hypergraph, blocks, k, max_weights, config, cut_objective, fixed)
    return blocks, hierarchy.summary(), coarsened, initialized, device_memory_peak()


def host_fm(hypergraph: Hypergraph, blocks, k, max_weights, config: PartitionConfig, cut_objective: bool,
            fixed=None) -> np.ndarray:
    """The GPU path's last step (and its CPU twin's), on the host, over the input's partition ``blocks``
    (int32[n]) where ``gpu_host_fm`` asks for it: k-way FM on inputs of at most ``gpu_v_cycle_max_pins``
    pins; above, for km1, pairwise FM (``gpu_pair_fm_*``; vertices in more than ``gpu_pair_fm_max_degree``
    nets stay put) where km1 is at least ``gpu_pair_fm_min_connectivity`` times the cut. Else ``blocks``
    unchanged."""
    refinement = config.refinement
    if not refinement.gpu_host_fm:
        return blocks
    movable = None if fixed is None else fixed < 0
    if hypergraph.num_pins <= refinement.gpu_v_cycle_max_pins:
        return refine(hypergraph, blocks, k, max_weights, replace(refinement, lp_rounds=0), cut_objective, movable)
    if cut_objective or not refinement.gpu_pair_fm_sweeps:
        return blocks
    metrics = evaluate(hypergraph, blocks, k)  # lambda(e) by bit sets: no pin counts of m * k entries here
    if metrics.cut == 0 or metrics.km1 < refinement.gpu_pair_fm_min_connectivity * metrics.cut:
        return blocks
    blocks = np.array(blocks, dtype=np.int32)
    light = np.diff(hypergraph.vertex_offsets) <= refinement.gpu_pair_fm_max_degree
    movable = light if movable is None else movable & light
    pair_fm(hypergraph, blocks, scatter_sum(blocks, hypergraph.vertex_weights, k), max_weights, k, movable,
            refinement.gpu_pair_fm_sweeps, refinement.gpu_pair_fm_fruitless_moves,
            refinement.gpu_pair_fm_min_improvement, metrics.km1)
    return blocks


def gpu_v_cycles(hypergraph: Hypergraph, config: PartitionConfig) -> int:
    """Extra V-cycles of the GPU path: ``v_cycles`` on inputs of at most ``gpu_v_cycle_max_pins`` pins, else 0."""
    refinement = config.refinement
    return refinement.v_cycles if hypergraph.num_pins <= refinement.gpu_v_cycle_max_pins else 0


def _tolerances(num_levels: int, config: PartitionConfig) -> list:
    """Jet's c for the coarsest level, then for each finer level, finest (the input) last."""
    refinement = config.refinement
    return [refinement.gpu_tolerance_coarse if index else refinement.gpu_tolerance_fine
            for index in range(num_levels, -1, -1)]


def uncoarsen_on_device(hierarchy, blocks, k, max_weights, config: PartitionConfig, cut_objective: bool) -> np.ndarray:
    """GPU twin of :func:`uncoarsen` on a :class:`~.coarsening.coarsener.DeviceHierarchy`: the coarsest
    partition (host) goes to the device, is refined, projected (Eq. 5: a gather) and refined level by level
    (:func:`.refinement.gpu_refiner.refine_device`; a level that is over the bound, which only the
    coarsest can be, is rebalanced on the device first), and comes back once; on small inputs the coarser
    levels also go to the host's FM after Jet (:func:`_host_fm_on_level`). :func:`uncoarsen_jet` is its CPU
    twin."""
    from .cuda.arrays import to_host
    from .refinement.gpu_refiner import balanced_on_device, rebalance_device, refine_device, upload_blocks

    rounds = config.refinement.gpu_rounds
    tolerances = _tolerances(len(hierarchy.levels), config)

    def movable(level_fixed):
        return None if level_fixed is None else level_fixed < 0

    def refine_level(level, device_blocks, level_fixed, tolerance):
        if not balanced_on_device(device_blocks, level.vertex_weights, k, max_weights):
            device_blocks, _ = rebalance_device(level, device_blocks, k, max_weights, cut_objective,
                                                movable(level_fixed))
        device_blocks = refine_device(level, device_blocks, k, max_weights, rounds, cut_objective,
                                      movable(level_fixed), tolerance)
        if not _host_fm_on_level(level.pin_vertices.shape[0], hierarchy.input.num_pins, config):
            return device_blocks
        host_movable = None if level_fixed is None else to_host(level_fixed) < 0
        return upload_blocks(_level_fm(level.to_host(), to_host(device_blocks), k, max_weights, config,
                                       cut_objective, host_movable))

    device_blocks = refine_level(hierarchy.coarsest, upload_blocks(blocks), hierarchy.coarsest_fixed, tolerances[0])
    for (level, cluster, level_fixed, _), tolerance in zip(reversed(hierarchy.levels), tolerances[1:]):
        device_blocks = refine_level(level, device_blocks[cluster], level_fixed, tolerance)
    return to_host(device_blocks)


def uncoarsen_jet(hierarchy, blocks, k, max_weights, config: PartitionConfig, cut_objective: bool) -> np.ndarray:
    """:func:`uncoarsen_on_device` on the CPU (a host :class:`~.coarsening.coarsener.Hierarchy`, the njit
    twin :func:`.refinement.jet.jet_refine`): the same partition, for checking the GPU path, whenever the
    coarsest partition is balanced (the GPU's rebalancer is checked against :mod:`.refinement.jet_model`)."""
    from .refinement.jet import jet_refine

    rounds = config.refinement.gpu_rounds
    tolerances = _tolerances(len(hierarchy.levels), config)
    input_pins = (hierarchy.levels[0].hypergraph if hierarchy.levels else hierarchy.coarsest).num_pins

    def refine_level(hypergraph, blocks, movable, tolerance):
        blocks = jet_refine(hypergraph, blocks, k, max_weights, rounds, cut_objective, movable, tolerance)
        if not _host_fm_on_level(hypergraph.num_pins, input_pins, config):
            return blocks
        return _level_fm(hypergraph, blocks, k, max_weights, config, cut_objective, movable)

    movable = None if hierarchy.coarsest_fixed is None else hierarchy.coarsest_fixed < 0
    blocks = refine_level(hierarchy.coarsest, blocks, movable, tolerances[0])
    for level, tolerance in zip(reversed(hierarchy.levels), tolerances[1:]):
        blocks = project(blocks, level.cluster)
        movable = None if level.fixed is None else level.fixed < 0
        blocks = refine_level(level.hypergraph, blocks, movable, tolerance)
    return blocks


def _host_fm_on_level(level_pins: int, input_pins: int, config: PartitionConfig) -> bool:
    """Whether the GPU path (and its twin) refines a coarser level of ``level_pins`` pins with the host's FM
    after Jet: ``gpu_host_fm``, an input of at most ``gpu_v_cycle_max_pins`` pins, and a level of at most
    ``gpu_host_fm_level_fraction`` of them (the input itself gets :func:`host_fm` at the end)."""
    refinement = config.refinement
    return (refinement.gpu_host_fm and input_pins <= refinement.gpu_v_cycle_max_pins and level_pins < input_pins
            and level_pins <= refinement.gpu_host_fm_level_fraction * input_pins)


def _level_fm(hypergraph, blocks, k, max_weights, config: PartitionConfig, cut_objective: bool, movable):
    """k-way FM (no LP rounds) on the host of a coarser level's partition (``_host_fm_on_level``)."""
    return refine(hypergraph, blocks, k, max_weights, replace(config.refinement, lp_rounds=0), cut_objective,
                  movable)


def uncoarsen(hierarchy, blocks, k, max_weights, config: PartitionConfig, cut_objective: bool) -> np.ndarray:
    """Refine the coarsest level, then project (Eq. 5) and refine every finer level."""
    movable = None if hierarchy.coarsest_fixed is None else hierarchy.coarsest_fixed < 0
    blocks = refine(hierarchy.coarsest, blocks, k, max_weights, config.refinement, cut_objective, movable)
    for level in reversed(hierarchy.levels):
        blocks = project(blocks, level.cluster)
        movable = None if level.fixed is None else level.fixed < 0
        blocks = refine(level.hypergraph, blocks, k, max_weights, config.refinement, cut_objective, movable)
    return blocks


def v_cycle(hypergraph, blocks, k, epsilon, max_weights, config: PartitionConfig, cut_objective: bool, fixed=None,
            communities=None, uncoarsen_function=None):
    """One more V-cycle: coarsen again without merging vertices of different blocks (the partition acts
    as fixed blocks for coarsening only), then refine from the induced coarse partition upward
    (``uncoarsen_function``: :func:`uncoarsen`, or :func:`uncoarsen_jet` for the GPU path's CPU twin). The
    objective never gets worse: the coarse partition has the same km1 and cut as ``blocks``."""
    hierarchy = coarsen(hypergraph, k, config.coarsening, epsilon, blocks, communities=communities)
    coarse_blocks = hierarchy.coarsest_fixed
    for level in hierarchy.levels:  # free the vertices again; the user's fixed vertices stay fixed
        level.fixed = None if fixed is None else _project_fixed(fixed, hierarchy, level)
    hierarchy.coarsest_fixed = None if fixed is None else _project_fixed(fixed, hierarchy, None)
    return (uncoarsen_function or uncoarsen)(hierarchy, coarse_blocks, k, max_weights, config, cut_objective)


def v_cycle_on_device(hypergraph, input_level, blocks, k, epsilon, max_weights, config: PartitionConfig,
                      cut_objective: bool, fixed=None, communities=None) -> np.ndarray:
    """:func:`v_cycle` on the GPU: the input level is already on the device; ``blocks`` (host) goes there,
    acts as fixed blocks for coarsening, and the partition refined by :func:`uncoarsen_on_device` comes back."""
    from .coarsening.coarsener import carry_on_device, coarsen_on_device
    from .cuda.arrays import to_host
    from .refinement.gpu_refiner import upload_blocks

    hierarchy = coarsen_on_device(hypergraph, k, config.coarsening, epsilon, upload_blocks(blocks),
                                  communities=communities, input_level=input_level)
    coarse_blocks = to_host(hierarchy.coarsest_fixed)
    user_fixed = None if fixed is None else upload_blocks(fixed)
    levels = []
    for index, (level, cluster, _, seconds) in enumerate(hierarchy.levels):  # free the vertices again
        levels.append((level, cluster, user_fixed, seconds))
        coarser = hierarchy.levels[index + 1][0] if index + 1 < len(hierarchy.levels) else hierarchy.coarsest
        user_fixed = carry_on_device(user_fixed, cluster, coarser.vertex_offsets.shape[0] - 1)
    hierarchy.levels, hierarchy.coarsest_fixed = levels, user_fixed
    return uncoarsen_on_device(hierarchy, coarse_blocks, k, max_weights, config, cut_objective)


def _project_fixed(fixed, hierarchy, level):
    """The user's fixed blocks carried down to ``level`` (None: the coarsest) of a V-cycle hierarchy."""
    current = fixed
    for candidate in hierarchy.levels:
        if candidate is level:
            return current
        coarse = np.full(int(candidate.cluster.max()) + 1, -1, dtype=np.int32)
        np.maximum.at(coarse, candidate.cluster, current)
        current = coarse
    return current


def warm_up(objective: str = "km1", device: str = "cpu", input_pins: int | None = None) -> float:
    """Compile (or load from numba's cache) every kernel of the CPU path, and with ``device="gpu"`` those of
    the GPU path, on a tiny input; returns seconds.

    The CLI calls this first so that the phase timings it reports are run time, not JIT time. The GPU path
    also partitions ``long_tailed(5000)`` (180k pins): its hubs reach the kernels for vertices of many nets
    (``heavy_rate_kernel`` needs more than 4,096 rated neighbours). Without it, the first long-tailed 300k
    partition on a new H100 machine took 75.6 s (coarsening 63.3 s) against 4.3 s warm; with it, that
    partition compiled no new kernel. It adds about 0.5 s to a warm-up whose kernels are in the cache.

    The parallel drivers, which only levels of SERIAL_BELOW (100k) pins and more take, compile in a second
    tiny partition within :func:`.parallel.all_parallel`, and on the GPU path pairwise FM too, unless
    ``input_pins`` (the size of the input to come) is below that. Before, on the 2-core machine with an empty
    cache, the first grid 250k k=8 partition after the warm-up took 9.7 s (the next 2.3 s): 7.4 s compiling
    them; now 2.3 s, and the warm-up 50.9 s instead of 42.5 s. With the cache they add about 0.2 s to it.
    """
    started = time.perf_counter()
    rng = np.random.default_rng(0)
    nets = [rng.choice(400, size=int(rng.integers(2, 6)), replace=False) for _ in range(600)]
    tiny = Hypergraph.from_pin_lists(nets, 400)
    tiny_config = make_config(3, 0.03, objective, 0, "fast", coarsening=_tiny_coarsening())
    for used in ("cpu", "gpu") if device == "gpu" else ("cpu",):
        partition(tiny, 3, objective=objective, preset="fast", device=used, config=tiny_config)
    parallel_drivers = input_pins is None or not runs_serially(input_pins)
    if parallel_drivers:
        with all_parallel():
            partition(tiny, 3, objective=objective, preset="fast", config=tiny_config)
    if device == "gpu":  # hubs: the kernels for vertices of many nets, which the random input never reaches
        from .generate import long_tailed

        partition(long_tailed(5000, seed=0), 2, objective=objective, device="gpu",
                  config=make_config(2, 0.03, objective, 0, "fast", coarsening=_tiny_coarsening()))
        if parallel_drivers:
            _warm_up_pair_fm(tiny)
        prepare_uploads()
    return time.perf_counter() - started


def _warm_up_pair_fm(hypergraph: Hypergraph) -> None:
    """Compile pairwise FM (the GPU path's last step on inputs above ``gpu_v_cycle_max_pins`` pins), its serial
    and its parallel rounds, on a small ``hypergraph`` split into four blocks."""
    k = 4
    blocks = (np.arange(hypergraph.num_vertices) % k).astype(np.int32)
    bounds = np.full(k, hypergraph.total_vertex_weight, dtype=np.int64)
    for parallel in (False, True):
        with all_parallel() if parallel else nullcontext():
            moved = blocks.copy()
            pair_fm(hypergraph, moved, scatter_sum(moved, hypergraph.vertex_weights, k), bounds, k, None, 1, 10)


def _tiny_coarsening():
    from .config import CoarseningConfig

    return CoarseningConfig(contraction_limit_factor=20)
