"""The placement policy of one partition: where each level of the V-cycle is coarsened, which refiners run on
each level, how the initial partitioning is set up, how many extra V-cycles run and what the host does at the
end. Every size threshold that picks a place or an algorithm lives here (its values in
:class:`~hgpart.config.PolicyConfig`); the driver, :mod:`hgpart.multilevel`, only follows it. Where ``auto``
runs the graph commands (clustering, spanning forests, triangles) is decided here too
(:func:`graph_device`, its values in :class:`~hgpart.config.GraphPolicyConfig`).

Two paths:

- ``cpu``: every level on the host; label propagation and k-way FM on every level, then flow-based refinement
  where ``flows.levels`` asks; ``v_cycles`` extra V-cycles.
- ``gpu``: communities are detected on the device unless the input has few vertices and nets; the hierarchy
  is kept on the device; levels of at most ``host_level_max_pins`` pins are coarsened on the host (launches
  would cost more than the work) and their coarse levels go to the device; Jet-style rounds refine every
  level on the device. On inputs of at most ``device_v_cycle_max_pins`` pins the host's
  k-way FM also refines, after Jet, every coarser level of at most ``host_fm_level_fraction`` of the input's
  pins (Jet's single moves stall on levels of big nets, FM's move sequences do not), then the input at the
  end (each followed by flow-based refinement where ``flows.levels`` asks), and the extra V-cycles run; on
  larger inputs, for km1, pairwise FM ends the run instead, where cut nets span many blocks, and the initial
  portfolio is cut down (``large_input_*``) and coarsening stops at ``device_contraction_limit_factor``
  vertices per block, not ``contraction_limit_factor``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .config import GraphPolicyConfig, PartitionConfig
from .device import resolve_device

HOST, DEVICE = "host", "device"
PATHS = ("cpu", "gpu")

LABEL_PROPAGATION_FM = "label propagation + FM"  # the host's refiners, on host levels
JET = "jet"                                       # Jet-style rounds where the level is kept
HOST_FM = "host FM"                               # k-way FM on the host after Jet (no label propagation)
PAIR_FM = "pairwise FM"                           # 2-way FM on block pairs, on the host, at the end
FLOWS = "flows"                                   # flow-based refinement of block pairs, on the host


def auto_path(input_pins: int, config: PartitionConfig) -> tuple[str, str]:
    """The path ``device="auto"`` takes where a GPU is usable, and why: the GPU path from
    ``policy.auto_gpu_min_pins`` pins on, the CPU path below (the faster one on such inputs)."""
    bound = config.policy.auto_gpu_min_pins
    if input_pins >= bound:
        return "gpu", f"auto: {input_pins:,} pins, at least policy.auto_gpu_min_pins = {bound:,}: the GPU path"
    return "cpu", (f"auto: {input_pins:,} pins, fewer than policy.auto_gpu_min_pins = {bound:,}: the CPU path, "
                   "faster than the GPU path on inputs this small")


GRAPH_COMMANDS = ("cluster", "mst", "triangles")


def auto_graph_device(command: str, num_edges: int, config: GraphPolicyConfig = GraphPolicyConfig()) -> tuple[str, str]:
    """The device ``device="auto"`` runs the graph command ``command`` (``cluster``, ``mst``, ``triangles``) on
    where a GPU is usable, and why: the GPU from ``config.<command>_min_edges`` edges on, the CPU twin below."""
    if command not in GRAPH_COMMANDS:
        raise ValueError(f"unknown graph command {command!r}")
    bound, name = config.min_edges(command), f"graph_policy.{command}_min_edges"
    if num_edges >= bound:
        return "gpu", f"auto: {num_edges:,} edges, at least {name} = {bound:,}: the GPU"
    return "cpu", f"auto: {num_edges:,} edges, fewer than {name} = {bound:,}: the CPU, faster on graphs this small"


def graph_device(requested: str, command: str, num_edges: int,
                 config: GraphPolicyConfig = GraphPolicyConfig()) -> tuple[str, str | None, str | None]:
    """(device, note, reason) for a graph command on a graph of ``num_edges`` edges: ``requested`` as
    :func:`hgpart.device.resolve_device` resolves it (``note``: a fallback to show the user), then for ``auto``
    with a usable GPU the size rule of :func:`auto_graph_device`; ``reason`` says why ``auto`` chose (None for
    ``cpu`` and ``gpu``)."""
    used, note = resolve_device(requested, gpu_implemented=True)
    if requested != "auto":
        return used, note, None
    if used == "gpu":
        used, reason = auto_graph_device(command, num_edges, config)
        return used, note, reason
    return used, note, note or "auto: no usable CUDA GPU: the CPU"


@dataclass(frozen=True)
class Policy:
    """Decisions for one partition of an input of ``input_pins`` pins on ``path`` (``cpu`` or ``gpu``).

    Attributes
    ----------
    config : PartitionConfig
    path : str
    input_pins : int
    mesh_graph : bool
        Whether the input is a mesh graph (:func:`hgpart.preprocessing.communities.is_mesh_graph`).
    input_nodes : int or None
        The input's vertices plus nets (the nodes of its star expansion); None: as many as ``input_pins``.
    """

    config: PartitionConfig
    path: str
    input_pins: int
    mesh_graph: bool = False
    input_nodes: int | None = None

    def __post_init__(self):
        if self.path not in PATHS:
            raise ValueError(f"unknown path {self.path!r} (cpu or gpu)")

    @property
    def levels_kept(self) -> str:
        """Where the hierarchy's levels live and are refined: ``host`` or ``device``."""
        return DEVICE if self.path == "gpu" else HOST

    @property
    def small_input(self) -> bool:
        """GPU path: an input small enough for extra V-cycles and the host's k-way FM."""
        return self.input_pins <= self.config.policy.device_v_cycle_max_pins

    @property
    def contraction_limit_factor(self) -> int:
        """Vertices per block where coarsening stops: ``coarsening.device_contraction_limit_factor`` on the GPU
        path's large inputs, else ``coarsening.contraction_limit_factor`` (the GPU path's small inputs are
        refined by the host's FM and flows level by level, as on the CPU path, and coarsen as far)."""
        coarsening = self.config.coarsening
        if self.path == "gpu" and not self.small_input:
            return coarsening.device_contraction_limit_factor
        return coarsening.contraction_limit_factor

    def with_contraction_limit(self) -> Policy:
        """This policy with ``coarsening.contraction_limit_factor`` set to :attr:`contraction_limit_factor`,
        the value the hierarchy and the initial partitioning read."""
        coarsening = replace(self.config.coarsening, contraction_limit_factor=self.contraction_limit_factor)
        return replace(self, config=replace(self.config, coarsening=coarsening))

    @property
    def communities_on(self) -> str | None:
        """Where the communities are detected: None when they are not (off, k below ``min_k``, an input of more
        than ``max_pins`` pins, a mesh graph); on the GPU path the host for inputs of at most
        ``host_communities_max_nodes`` vertices plus nets (its twin gives the same labels, sooner there), else
        the device."""
        if not self.config.communities.wanted(self.config.k, self.input_pins, self.mesh_graph):
            return None
        nodes = self.input_pins if self.input_nodes is None else self.input_nodes
        if self.path == "gpu" and nodes > self.config.policy.host_communities_max_nodes:
            return DEVICE
        return HOST

    def coarsened_on(self, level_pins: int) -> str:
        """Where a level of ``level_pins`` pins is coarsened (its map and contraction)."""
        if self.path == "gpu" and level_pins > self.config.policy.host_level_max_pins:
            return DEVICE
        return HOST

    def initial_config(self, coarsest_pins: int) -> PartitionConfig:
        """The config of the initial partitioning of a coarsest level of ``coarsest_pins`` pins: FM passes that
        stop after ``initial.fm_fruitless_moves`` fruitless moves; on the GPU path of large inputs, fewer FM
        candidates and shorter FM passes; on a coarsest level of more than
        ``pin_budget / 20`` pins, FM passes that stop once they gain little."""
        config, policy = self.config, self.config.policy
        config = replace(config, fm=replace(config.fm, fruitless_moves=config.initial.fm_fruitless_moves))
        if self.path == "gpu" and not self.small_input:
            config = replace(config, initial=replace(config.initial, fm_candidates=policy.large_input_fm_candidates),
                             fm=replace(config.fm, fruitless_moves=policy.large_input_fm_fruitless_moves))
        if coarsest_pins > config.initial.pin_budget // 20:
            config = replace(config, fm=replace(config.fm, min_improvement=policy.initial_fm_min_improvement))
        return config

    def level_refiners(self, level_pins: int, is_input: bool = False) -> tuple:
        """The refiners of a level of ``level_pins`` pins (``is_input``: the input level of a V-cycle), in
        order (the GPU path's last refiners of the input are :meth:`final_refiners`)."""
        if self.path == "cpu":
            return (LABEL_PROPAGATION_FM, FLOWS) if self.flows_on_level(is_input) else (LABEL_PROPAGATION_FM,)
        if not self.host_fm_on_level(level_pins):
            return (JET,)
        return (JET, HOST_FM, FLOWS) if self.flows_on_level(is_input) else (JET, HOST_FM)

    def flows_on_level(self, is_input: bool) -> bool:
        """Whether flow-based refinement runs on a level (on the GPU path only where the host refines)."""
        levels = self.config.flows.levels
        return levels == "all" or (levels == "input" and is_input)

    def host_fm_on_level(self, level_pins: int) -> bool:
        """GPU path: whether the host's k-way FM refines a coarser level of ``level_pins`` pins after Jet."""
        policy = self.config.policy
        return (self.path == "gpu" and policy.host_fm and self.small_input and level_pins < self.input_pins
                and level_pins <= policy.host_fm_level_fraction * self.input_pins)

    def jet_tolerance(self, is_input: bool) -> float:
        """Jet's c on the input level and on the coarser ones."""
        return self.config.jet.tolerance_fine if is_input else self.config.jet.tolerance_coarse

    @property
    def v_cycles(self) -> int:
        """Extra V-cycles after the first."""
        if self.path == "gpu" and not self.small_input:
            return 0
        return self.config.policy.v_cycles

    @property
    def final_refiners(self) -> tuple:
        """What refines the input once more on the host at the end: k-way FM (GPU path, small inputs) and flows
        (wherever ``flows.levels`` is not ``none``: on the CPU path only for ``last``, the others having run on
        the input level already), pairwise FM (GPU path, large inputs, km1; it checks the connectivity
        itself), or nothing."""
        flows = self.config.flows.levels
        if self.path == "cpu":
            return (FLOWS,) if flows == "last" else ()
        if not self.config.policy.host_fm:
            return ()
        if self.small_input:
            return (HOST_FM,) if flows == "none" else (HOST_FM, FLOWS)
        if self.config.objective == "cut" or not self.config.pair_fm.sweeps:
            return ()
        return (PAIR_FM,)
