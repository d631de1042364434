"""The multilevel V-cycle, one driver for every device: coarsen, partition the coarsest level, then project
and refine level by level (L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for Hypergraph Coarsening
on the GPU", IEEE HPEC 2015, Fig. 2). Direct k-way: the coarsest level is split by recursive bisection, every
level on the way up is refined k-way for km1 or cut.

The driver reads like the figure; what runs where is not its business. :class:`hgpart.policy.Policy` decides
where each level is coarsened, which refiners run on it, how many extra V-cycles follow and what the host does
at the end; :mod:`hgpart.backends` holds the steps on the host and on the device with one interface; a level is
one :class:`~hgpart.coarsening.coarsener.Level` type wherever its arrays are.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field

import numba
import numpy as np

from .backends import DeviceMemory, backends_for
from .coarsening.coarsener import Hierarchy, Level, build_hierarchy
from .config import LabelPropagationConfig, PartitionConfig, make_config
from .errors import DeviceMemoryError, InfeasibleError, InputError
from .hypergraph import Hypergraph, scatter_sum
from .initial import initial_partition
from .metrics import PartitionMetrics, evaluate, max_block_weight
from .preprocessing.communities import detect_communities, is_mesh_graph
from .policy import DEVICE, FLOWS, HOST_FM, JET, LABEL_PROPAGATION_FM, PAIR_FM, Policy, auto_path
from .refinement import rebalance_partition, refine
from .refinement.flows import flow_refine, kept_workspaces
from .refinement.pair_fm import pair_fm

NO_LABEL_PROPAGATION = LabelPropagationConfig(rounds=0)


@dataclass
class PartitionResult:
    """A partition and how it was made.

    Attributes
    ----------
    partition : int32[num_vertices]
        Block of each vertex in [0, k).
    metrics : PartitionMetrics
        km1, cut, soed, block weights, imbalance.
    seconds : dict
        Wall time per phase: communities (their detection), coarsening, initial, refinement, total.
    levels : list of dict
        One row per coarsening level.
    device : str
        ``cpu`` or ``gpu``: where coarsening and refinement ran.
    device_memory_bytes : int
        GPU path: the most device memory the partition's arrays held at once; 0 on the CPU path.
    note : str or None
        Why the partition ran elsewhere than asked (``device="auto"`` and the GPU ran out of memory).
    device_reason : str or None
        Why ``device="auto"`` took this path (no usable GPU, or the input's size); None for ``cpu`` and ``gpu``.
    communities : int or None
        How many communities coarsening stayed inside (None: no community detection).
    """

    partition: np.ndarray
    metrics: PartitionMetrics
    seconds: dict = field(default_factory=dict)
    levels: list = field(default_factory=list)
    device: str = "cpu"
    device_memory_bytes: int = 0
    note: str | None = None
    communities: int | None = None
    device_reason: str | None = None

    @property
    def km1(self) -> int:
        """The connectivity objective: sum of w(e) * (lambda(e) - 1)."""
        return self.metrics.km1

    @property
    def cut(self) -> int:
        """The weight of the nets in more than one block."""
        return self.metrics.cut


def resolve_config(k=None, epsilon=None, objective=None, seed=None, preset=None,
                   config: PartitionConfig | None = None) -> PartitionConfig:
    """The partition's config: ``config`` as given (any argument given too must agree with it), or one made
    from the arguments (defaults: epsilon 0.03, km1, seed 0, the default preset)."""
    given = {"k": k, "epsilon": epsilon, "objective": objective, "seed": seed, "preset": preset}
    if config is None:
        if k is None:
            raise InputError("give the number of blocks k (or a config)")
        return make_config(k, 0.03 if epsilon is None else epsilon, objective or "km1", seed or 0,
                           preset or "default")
    disagree = [f"{name}={value!r} but config.{name}={getattr(config, name)!r}" for name, value in given.items()
                if value is not None and value != getattr(config, name)]
    if disagree:
        raise InputError("the arguments disagree with the config: " + ", ".join(disagree)
                         + "; give each setting once")
    return config


def partition(hypergraph: Hypergraph, k: int | None = None, epsilon: float | None = None,
              objective: str | None = None, seed: int | None = None, preset: str | None = None, *, fixed=None,
              config: PartitionConfig | None = None, device: str = "auto", on_level=None) -> PartitionResult:
    """Partition ``hypergraph`` into ``k`` blocks of weight at most (1 + epsilon) * ceil(total / k).

    Parameters
    ----------
    hypergraph : Hypergraph
    k : int
        Number of blocks.
    epsilon : float, default 0.03
    objective : {"km1", "cut"}, default "km1"
    seed : int, default 0
        Same input, options, seed and device give the same partition.
    preset : {"fast", "default", "quality"}, default "default"
    fixed : int[num_vertices], optional
        The block each vertex is fixed to, or -1 (an hMetis fix file).
    config : PartitionConfig, optional
        Every setting (:func:`hgpart.config.make_config`); arguments given beside it must agree with it.
    device : {"auto", "cpu", "gpu"}
        ``auto``: where numba.cuda sees a GPU and CuPy is installed, the GPU path for inputs of at least
        ``policy.auto_gpu_min_pins`` pins and the CPU path below (``device_reason`` says which); without
        them the CPU. Out of GPU memory it runs again on the CPU and says so in ``note``.
    on_level : callable, optional
        Called with each coarsening level's summary row.

    Raises
    ------
    InputError
        Bad arguments (or arguments that disagree with ``config``).
    DeviceError
        ``device="gpu"`` without a usable GPU, or (``DeviceMemoryError``) with too little memory.
    InfeasibleError
        No partition within the balance bound was found (e.g. a vertex heavier than a block may be).
    """
    from .device import resolve_device

    config = resolve_config(k, epsilon, objective, seed, preset, config)
    used, note = resolve_device(device, gpu_implemented=True)
    reason = None
    if device == "auto":
        used, reason = auto_path(hypergraph.num_pins, config) if used == "gpu" else (
            used, note or "auto: no usable CUDA GPU: the CPU path")
    try:
        result = _partition(hypergraph, config, fixed, used, on_level)
    except DeviceMemoryError as error:
        if device != "auto":
            raise
        result = _partition(hypergraph, config, fixed, "cpu", on_level)
        note = f"{error.args[0].split('; ')[0]}; ran on the CPU"
    result.note, result.device_reason = note, reason
    return result


def gpu_path_on_cpu(hypergraph: Hypergraph, config: PartitionConfig, fixed=None) -> PartitionResult:
    """The GPU path's partition computed without a GPU: its policy with every device step done by its CPU twin
    (the same partition as ``partition(..., device="gpu")``)."""
    return _partition(hypergraph, config, fixed, "gpu", None, twin=True)


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


def _partition(hypergraph: Hypergraph, config: PartitionConfig, fixed, path: str, on_level,
               twin: bool = False) -> PartitionResult:
    """The partition on ``path`` (``cpu`` or ``gpu``; ``twin``: the GPU path's steps on the CPU)."""
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
    policy = Policy(config, path, hypergraph.num_pins, is_mesh_graph(hypergraph),
                    hypergraph.num_vertices + hypergraph.num_nets).with_contraction_limit()
    config = policy.config
    on_device = path == "gpu" and not twin
    memory = DeviceMemory(hypergraph, k) if on_device else nullcontext()
    with memory, kept_workspaces(hypergraph.num_vertices, hypergraph.num_nets):
        blocks, levels, communities, coarsened, initialized = _v_cycles(hypergraph, max_weights, policy,
                                                                        backends_for(path, twin), fixed, on_level)
    metrics = evaluate(hypergraph, blocks, k, epsilon)
    if not metrics.balanced:
        movable = None if fixed is None else fixed < 0
        blocks, balanced = rebalance_partition(hypergraph, blocks, k, max_weights, cut_objective, movable)
        if balanced:
            blocks = refine(hypergraph, blocks, k, max_weights, config.label_propagation, config.fm, cut_objective,
                            movable)
        metrics = evaluate(hypergraph, blocks, k, epsilon)
    finished = time.perf_counter()
    if not metrics.balanced:
        raise InfeasibleError(f"could not balance the partition: heaviest block {metrics.max_block_weight} > "
                              f"bound {bound} = (1 + {epsilon}) * ceil({total} / {k})")
    detection = communities.seconds if communities is not None else 0.0
    seconds = {"communities": detection, "coarsening": coarsened - started - detection,
               "initial": initialized - coarsened,
               "refinement": finished - initialized, "total": finished - started}
    return PartitionResult(blocks, metrics, seconds, levels, "gpu" if on_device else "cpu",
                           memory.peak if on_device else 0, communities=None if communities is None else communities.count)


def _v_cycles(hypergraph: Hypergraph, max_weights, policy: Policy, backends: dict, fixed, on_level):
    """Detect communities (if the config asks), coarsen inside them, partition the coarsest level, uncoarsen;
    then the policy's extra V-cycles and last refiner. Returns (host int32[n] blocks, level rows,
    :class:`~hgpart.preprocessing.communities.Communities` or None, time coarsened, time initialised)."""
    config = policy.config
    keep = backends[policy.levels_kept]
    input_level = Level(keep.put_level(hypergraph), place=keep.name, host=hypergraph)
    found, communities = None, None
    if policy.communities_on == DEVICE and keep.name == DEVICE:
        found = detect_communities(input_level.hypergraph, config.communities, "gpu", config.seed)
    elif policy.communities_on is not None:  # on the host, the labels then where the levels are
        found = detect_communities(hypergraph, config.communities, "cpu", config.seed)
        found.labels = keep.put(found.labels)
    if found is not None:
        communities = found.labels
    hierarchy = build_hierarchy(hypergraph, config.k, config.coarsening, config.epsilon, backends,
                                policy.coarsened_on, fixed, communities, on_level, input_level=input_level)
    coarsened = time.perf_counter()
    coarsest = hierarchy.coarsest
    coarsest_fixed = None if coarsest.fixed is None else keep.get(coarsest.fixed)
    blocks = initial_partitioning(coarsest.on_host(), coarsest_fixed, max_weights, policy)
    initialized = time.perf_counter()
    blocks = uncoarsen(hierarchy, keep.put(blocks), max_weights, policy, keep)
    for _ in range(policy.v_cycles):
        blocks = v_cycle(input_level, blocks, max_weights, policy, backends, fixed, communities)
    blocks = final_refinement(hypergraph, keep.get(blocks), max_weights, policy, fixed)
    return blocks, hierarchy.summary(), found, coarsened, initialized


def initial_partitioning(coarsest: Hypergraph, coarsest_fixed, max_weights, policy: Policy) -> np.ndarray:
    """The initial-partitioning portfolio on the coarsest level (host arrays), then the rebalancer: its
    recursion on as many threads as the caller's numba threads (or ``recursion_threads``), its parallel loops
    on at most ceil(pins / ``pins_per_thread``) of them."""
    config = policy.initial_config(coarsest.num_pins)
    k, cut_objective = config.k, config.objective == "cut"
    threads = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, -(-coarsest.num_pins // config.initial.pins_per_thread))))
    try:
        blocks = initial_partition(coarsest, k, config.epsilon, config, cut_objective, config.seed, coarsest_fixed,
                                   config.initial.recursion_threads or threads)
        movable = None if coarsest_fixed is None else coarsest_fixed < 0
        blocks, _ = rebalance_partition(coarsest, blocks, k, max_weights, cut_objective, movable)
    finally:
        numba.set_num_threads(threads)
    return blocks


def uncoarsen(hierarchy: Hierarchy, blocks, max_weights, policy: Policy, keep):
    """Refine the coarsest level, then project (Eq. 5: a vertex takes its coarse vertex's block, a gather) and
    refine every finer level; ``blocks`` and the result are arrays of the backend ``keep`` that holds the
    levels."""
    levels = hierarchy.levels + [hierarchy.coarsest]
    for index in range(len(levels) - 1, -1, -1):
        level = levels[index]
        if level.cluster is not None:
            blocks = blocks[level.cluster]
        blocks = refine_level(level, blocks, index == 0, max_weights, policy, keep)
    return blocks


def refine_level(level: Level, blocks, is_input: bool, max_weights, policy: Policy, keep):
    """The policy's refiners on one level, in order: label propagation and FM (host levels), Jet-style rounds
    where the level is kept (a level over the bound is rebalanced first), then the host's FM and flows after
    Jet, which take the blocks to the host once for both."""
    config = policy.config
    k, cut_objective = config.k, config.objective == "cut"
    movable = None if level.fixed is None else level.fixed < 0
    host_blocks = None  # the blocks on the host while host refiners run after Jet
    for refiner in policy.level_refiners(level.hypergraph.num_pins, is_input):
        if refiner == LABEL_PROPAGATION_FM:
            blocks = refine(level.hypergraph, blocks, k, max_weights, config.label_propagation, config.fm,
                            cut_objective, movable)
        elif refiner == JET:
            if not keep.balanced(level.hypergraph, blocks, k, max_weights):
                blocks = keep.rebalance(level.hypergraph, blocks, k, max_weights, cut_objective, movable)
            blocks = keep.jet(level.hypergraph, blocks, k, max_weights, config.jet.rounds, cut_objective, movable,
                              policy.jet_tolerance(is_input))
        else:
            if host_blocks is None:
                host_blocks = keep.get(blocks)
                host_movable = None if level.fixed is None else keep.get(level.fixed) < 0
            if refiner == HOST_FM:
                host_blocks = refine(level.on_host(), host_blocks, k, max_weights, NO_LABEL_PROPAGATION, config.fm,
                                     cut_objective, host_movable)
            elif refiner == FLOWS:
                host_blocks = flow_refine(level.on_host(), host_blocks, k, max_weights, config.epsilon, config.flows,
                                          cut_objective, host_movable, is_input)
    return blocks if host_blocks is None else keep.put(host_blocks)


def v_cycle(input_level: Level, blocks, max_weights, policy: Policy, backends: dict, fixed=None, communities=None):
    """One more V-cycle: coarsen again without merging vertices of different blocks (the partition acts as
    fixed blocks for coarsening only), then refine from the induced coarse partition upward. The coarse
    partition has the same km1 and cut as ``blocks``, so refinement starts where the last cycle ended.
    ``blocks`` and the result are arrays where ``input_level`` is."""
    config = policy.config
    keep = backends[input_level.place]
    hierarchy = build_hierarchy(input_level.on_host(), config.k, config.coarsening, config.epsilon, backends,
                                policy.coarsened_on, blocks, communities, input_level=input_level)
    coarse_blocks = hierarchy.coarsest.fixed
    levels = hierarchy.levels + [hierarchy.coarsest]
    user_fixed = keep.put(fixed)
    for level, coarser in zip(levels, levels[1:] + [None]):  # free the vertices; the user's fixed ones stay
        level.fixed = user_fixed
        if coarser is not None:
            user_fixed = keep.carry(user_fixed, level.cluster, coarser.hypergraph.num_vertices)
    return uncoarsen(hierarchy, coarse_blocks, max_weights, policy, keep)


def final_refinement(hypergraph: Hypergraph, blocks: np.ndarray, max_weights, policy: Policy, fixed=None):
    """The policy's last refiners of the input on the host: k-way FM (no label propagation) and flows, or
    pairwise FM where km1 is at least ``pair_fm.min_connectivity`` times the cut (vertices in more than
    ``pair_fm.max_degree`` nets stay put); else ``blocks`` unchanged."""
    config = policy.config
    k, cut_objective = config.k, config.objective == "cut"
    movable = None if fixed is None else fixed < 0
    for refiner in policy.final_refiners:
        if refiner == HOST_FM:
            blocks = refine(hypergraph, blocks, k, max_weights, NO_LABEL_PROPAGATION, config.fm, cut_objective,
                            movable)
        elif refiner == FLOWS:
            blocks = flow_refine(hypergraph, blocks, k, max_weights, config.epsilon, config.flows, cut_objective,
                                 movable)
        elif refiner == PAIR_FM:
            blocks = _pairwise_fm(hypergraph, blocks, max_weights, config, movable)
    return blocks


def _pairwise_fm(hypergraph: Hypergraph, blocks: np.ndarray, max_weights, config: PartitionConfig, movable):
    """Pairwise FM of the input where km1 is at least ``pair_fm.min_connectivity`` times the cut."""
    k, settings = config.k, config.pair_fm
    metrics = evaluate(hypergraph, blocks, k)  # lambda(e) by bit sets: no pin counts of m * k entries here
    if metrics.cut == 0 or metrics.km1 < settings.min_connectivity * metrics.cut:
        return blocks
    blocks = np.array(blocks, dtype=np.int32)
    light = np.diff(hypergraph.vertex_offsets) <= settings.max_degree
    movable = light if movable is None else movable & light
    pair_fm(hypergraph, blocks, scatter_sum(blocks, hypergraph.vertex_weights, k), max_weights, k, movable,
            settings.sweeps, settings.fruitless_moves, settings.min_improvement, metrics.km1)
    return blocks
