"""Compilation: the warm-up that compiles (or loads from numba's cache) the kernels a command will run, on tiny
inputs, so that the phase times it then reports are run time; and the cold warm-up's helper processes, which
share the first command's compilation out over the cores (docs/tuning.md, "Compilation and warm-up")."""

from __future__ import annotations

import os
import time
from contextlib import nullcontext

import numba
import numpy as np

from .config import PartitionConfig, make_config
from .hypergraph import Hypergraph, scatter_sum
from .metrics import max_block_weight
from .multilevel import partition
from .policy import DEVICE, Policy
from .preprocessing.communities import detect_communities
from .refinement import refine
from .refinement.flows import flow_refine
from .refinement.pair_fm import pair_fm


def warm_up(objective: str = "km1", device: str = "cpu", input_pins: int | None = None, flows: bool = True,
            input_nodes: int | None = None) -> float:
    """Compile (or load from numba's cache) the kernels a partition on ``device`` needs, on tiny inputs;
    returns seconds. The CLI calls this first so that the phase times it reports are run time, not JIT time.

    The GPU path also partitions ``long_tailed(5000)``: its hubs reach the kernels for vertices of many nets,
    which a small random input never does. The parallel drivers, which only levels of
    :data:`hgpart.parallel.SERIAL_BELOW` pins and more take (and on the GPU path pairwise FM), are compiled
    only when ``input_pins``, the size of the input to come, needs them (the coarsening's parallel proposals
    always: a coarse level's rating work reaches that bound on inputs of far fewer pins), and flow-based
    refinement only with ``flows`` (a partition whose preset runs it). The GPU path's community detection on
    the device, which only inputs of more than ``policy.host_communities_max_nodes`` vertices plus nets
    (``input_nodes``; None: as many as ``input_pins``) take, likewise.
    """
    from .config import CommunityConfig
    from .parallel import all_parallel, runs_serially

    started = time.perf_counter()
    tiny, tiny_config = _warm_up_input(objective, flows)
    small_levels = tiny_config.coarsening
    parallel_drivers = input_pins is None or not runs_serially(input_pins)
    if _numba_cache_is_cold():
        _compile_beside_helpers(tiny, tiny_config, parallel_drivers)
    for used in ("cpu", "gpu") if device == "gpu" else ("cpu",):
        partition(tiny, config=tiny_config, device=used)
    if parallel_drivers:
        with all_parallel():
            partition(tiny, config=tiny_config, device="cpu")
    else:
        _coarsen_in_parallel(tiny, tiny_config, parallel_drivers=False)
    if device == "gpu":
        from .cuda.arrays import prepare_uploads
        from .generate import long_tailed

        partition(long_tailed(5000, seed=0), config=make_config(2, 0.03, objective, 0, "fast", coarsening=small_levels),
                  device="gpu")
        if parallel_drivers:
            _warm_up_pair_fm(tiny)
        to_come = None if input_pins is None else Policy(make_config(2), "gpu", input_pins, input_nodes=input_nodes)
        if to_come is None or to_come.communities_on == DEVICE:
            detect_communities(tiny.to_device(), CommunityConfig(), "gpu")
        prepare_uploads()
    return time.perf_counter() - started


def warm_up_coarsening(device: str = "cpu", input_pins: int | None = None, communities: bool = True) -> float:
    """Compile (or load from numba's cache) what ``hgpart coarsen`` runs, on :func:`warm_up`'s tiny input:
    community detection (with ``communities``) and coarsening on ``device`` (its levels on the GPU, however
    small, and ``long_tailed(5000)``'s hubs there), the parallel drivers that an input of ``input_pins`` pins
    can take (:func:`_coarsen_in_parallel`); nothing of the initial partitioning or the refiners. Returns
    seconds."""
    from .coarsening.coarsener import coarsen
    from .config import CommunityConfig
    from .parallel import runs_serially

    started = time.perf_counter()
    tiny, config = _warm_up_input("km1", flows=False)
    detect = CommunityConfig() if communities else None
    coarsen(tiny, config.k, config.coarsening, config.epsilon, detect_communities=detect)
    _coarsen_in_parallel(tiny, config, input_pins is None or not runs_serially(input_pins))
    if device == "gpu":
        from .generate import long_tailed

        for hypergraph in (tiny, long_tailed(5000, seed=0)):
            coarsen(hypergraph, config.k, config.coarsening, config.epsilon, device="gpu", host_level_max_pins=0,
                    detect_communities=detect)
    return time.perf_counter() - started


def _warm_up_input(objective: str, flows: bool) -> tuple:
    """The tiny hypergraph (400 vertices, 600 nets) and the config (k=3) that :func:`warm_up` partitions."""
    from .config import CoarseningConfig, CommunityConfig, FlowConfig

    rng = np.random.default_rng(0)
    nets = [rng.choice(400, size=int(rng.integers(2, 6)), replace=False) for _ in range(600)]
    small_levels = CoarseningConfig(contraction_limit_factor=20, device_contraction_limit_factor=20)
    config = make_config(3, 0.03, objective, 0, "fast", coarsening=small_levels,
                         communities=CommunityConfig(), flows=FlowConfig(levels="last" if flows else "none"))
    return Hypergraph.from_pin_lists(nets, 400), config


HELPER_SHARES = ("portfolio", "flows", "refiners")  # a cold warm-up's helper processes, as cores allow


def compile_share(share: str, objective: str = "km1") -> None:
    """Compile one helper process's share of a cold warm-up into numba's cache, on :func:`warm_up`'s input:
    ``portfolio``, the bisection portfolio (:func:`hgpart.initial.portfolio.bisect` on one thread) and the
    refiners it calls; ``flows``, flow-based refinement; ``refiners``, label propagation and k-way FM
    (:func:`hgpart.refinement.refine`), which the portfolio calls too: whichever process compiles them first
    saves them, the other loads them. The coarsening that the recursion's bisections also run is the first
    process's."""
    from .initial.portfolio import bisect

    tiny, config = _warm_up_input(objective, flows=share == "flows")
    cut_objective = objective == "cut"
    if share == "portfolio":
        bounds = np.full(2, max_block_weight(tiny.total_vertex_weight, 2, config.epsilon), dtype=np.int64)
        free = np.full(tiny.num_vertices, -1, dtype=np.int32)
        bisect(tiny, bounds, tiny.total_vertex_weight // 2, free, 0, config.initial, config.label_propagation,
               config.fm, cut_objective)
        return
    blocks = (np.arange(tiny.num_vertices) % config.k).astype(np.int32)
    bounds = np.full(config.k, max_block_weight(tiny.total_vertex_weight, config.k, config.epsilon))
    if share == "flows":
        flow_refine(tiny, blocks, config.k, bounds, config.epsilon, config.flows, cut_objective)
    elif share == "refiners":
        refine(tiny, blocks, config.k, bounds, config.label_propagation, config.fm, cut_objective)
    else:
        raise ValueError(f"unknown share {share!r} (one of {', '.join(HELPER_SHARES)})")


def _numba_cache_is_cold() -> bool:
    """Whether numba's cache holds no initial partitioning yet (the first command after an install or an
    upgrade); False where numba's cache is laid out otherwise than this module expects."""
    from .initial.portfolio import _portfolio_serial

    try:
        return not os.path.exists(_portfolio_serial._cache._cache_file._index_path)
    except AttributeError:
        return False


def _cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


_HELPERS: dict = {}  # share -> the cold warm-up's helper process compiling it, while they run


def start_compile_helpers(objective: str = "km1") -> None:
    """Where numba's cache is cold (:func:`_numba_cache_is_cold`), start the helper processes of a cold
    warm-up now, one per core beside this one's, up to one per share of :data:`HELPER_SHARES`
    (:func:`compile_share`), so that they also run while the caller reads its input; :func:`warm_up` waits
    for them, and a process that exits first ends them. Nothing on one core, on a warm cache, or when they run
    already."""
    if _HELPERS or _cores() < 2 or not _numba_cache_is_cold():
        return
    import atexit
    import subprocess
    import sys

    # the helpers import this very package, whatever their working directory holds (`python -c` puts it first on
    # the path, and a source tree there would be another package, whose code numba caches under its own paths)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for share in HELPER_SHARES[:_cores() - 1]:
        code = (f"import sys; sys.path.insert(0, {package_root!r}); from hgpart.compilation import compile_share; "
                f"compile_share({share!r}, {objective!r})")
        try:
            helper = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError:  # no helper: its share compiles in this process, as on a warm cache
            break
        _HELPERS[share] = helper
        atexit.register(helper.kill)  # a no-op once it has ended


def _compile_beside_helpers(tiny: Hypergraph, config: PartitionConfig, parallel_drivers: bool) -> None:
    """A cold warm-up on two cores or more: helper processes (:func:`start_compile_helpers`, unless the caller
    started them earlier) compile the bisection portfolio (and, where there are more cores, flow-based
    refinement and the k-way refiners) into numba's cache while this one compiles community detection,
    coarsening (its parallel drivers as :func:`_coarsen_in_parallel`) and whatever no helper takes: on two
    cores the two processes' shares are about as much work (docs/tuning.md, "Compilation and warm-up"). The
    partitions that follow load everything from the cache. Nothing on a one-core machine."""
    from .coarsening.coarsener import coarsen

    start_compile_helpers(config.objective)
    if not _HELPERS:
        return
    try:
        communities = detect_communities(tiny, config.communities, "cpu")
        coarsen(tiny, config.k, config.coarsening, config.epsilon, communities=communities.labels)
        _coarsen_in_parallel(tiny, config, parallel_drivers, communities.labels)
        if config.flows.levels != "none" and "flows" not in _HELPERS:
            compile_share("flows", config.objective)
    finally:
        while _HELPERS:
            _HELPERS.popitem()[1].wait()


def _coarsen_in_parallel(tiny: Hypergraph, config: PartitionConfig, parallel_drivers: bool,
                         communities=None) -> None:
    """Coarsen ``tiny`` with the parallel drivers (on two numba threads or more): all of them where
    ``parallel_drivers`` (an input of :data:`hgpart.parallel.SERIAL_BELOW` pins or more), else the parallel
    proposals alone, which a level takes where its rating work (the sum of its rated nets' squared sizes)
    reaches that bound, on coarse levels of inputs of far fewer pins too; the contraction's parallel drivers
    take levels of that many pins, which a smaller input never has."""
    from .coarsening.coarsener import coarsen
    from .parallel import PROPOSALS, all_parallel

    if numba.get_num_threads() < 2:
        return
    with all_parallel(None if parallel_drivers else (PROPOSALS,)):
        coarsen(tiny, config.k, config.coarsening, config.epsilon, communities=communities)


def _warm_up_pair_fm(hypergraph: Hypergraph) -> None:
    """Compile pairwise FM, its serial and its parallel rounds, on a small ``hypergraph`` split into four blocks."""
    from .parallel import all_parallel

    k = 4
    blocks = (np.arange(hypergraph.num_vertices) % k).astype(np.int32)
    bounds = np.full(k, hypergraph.total_vertex_weight, dtype=np.int64)
    for parallel in (False, True):
        with all_parallel() if parallel else nullcontext():
            moved = blocks.copy()
            pair_fm(hypergraph, moved, scatter_sum(moved, hypergraph.vertex_weights, k), bounds, k, None, 1, 10)
