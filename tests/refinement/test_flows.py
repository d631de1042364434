"""Flow-based refinement: Dinic's maximum flow against scipy's, minimum cuts against brute force, and the km1
and cut accounting of the pairwise networks against an independent evaluation."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import maximum_flow

from hgpart import Hypergraph, read_hypergraph
from hgpart.config import FlowConfig
from hgpart.hypergraph import scatter_sum
from hgpart.metrics import max_block_weight
from hgpart.refinement.flows import flow_refine, flow_rounds
from hgpart.refinement.max_flow import max_flow, residual_graph, sink_side, source_side

from ..helpers import IBM01, random_hypergraph
from ..naive import metrics_naive


def naive_cut(nets, partition, net_weights):
    return metrics_naive(nets, net_weights, np.ones(len(partition)), partition, int(partition.max()) + 1)["cut"]


def naive_km1(nets, partition, net_weights):
    return metrics_naive(nets, net_weights, np.ones(len(partition)), partition, int(partition.max()) + 1)["km1"]

UNLIMITED = FlowConfig(levels="all", alpha=1e6, max_distance=1 << 30, max_net_size=1 << 30, rounds=8,
                       min_improvement=0.0)


@pytest.mark.parametrize("seed", range(12))
def test_max_flow_equals_scipys_and_its_cuts_are_minimum(seed):
    rng = np.random.default_rng(seed)
    nodes = int(rng.integers(2, 30))
    arcs = int(rng.integers(1, 120))
    tails, heads = rng.integers(0, nodes, arcs), rng.integers(0, nodes, arcs)
    keep = tails != heads
    tails, heads = tails[keep].astype(np.int64), heads[keep].astype(np.int64)
    capacities = rng.integers(0, 20, tails.size).astype(np.int64)
    offsets, targets, residual, reverse = residual_graph(nodes, tails, heads, capacities)
    value = max_flow(offsets, targets, residual, reverse, 0, nodes - 1)
    matrix = sp.csr_matrix((capacities.astype(np.int32), (tails, heads)), shape=(nodes, nodes))  # sums duplicates
    assert value == maximum_flow(matrix, 0, nodes - 1).flow_value
    for side in (source_side(offsets, targets, residual, reverse, 0),
                 ~sink_side(offsets, targets, residual, reverse, nodes - 1)):
        assert side[0] and not side[nodes - 1]
        assert capacities[side[tails] & ~side[heads]].sum() == value  # a cut of the flow's value


def brute_force_min_cut(nets, n, net_weights, fixed):
    """The least weight of cut nets over all 2-way assignments that respect ``fixed`` (-1: free)."""
    free = np.flatnonzero(fixed < 0)
    best = None
    for bits in itertools.product((0, 1), repeat=free.size):
        blocks = fixed.copy()
        blocks[free] = bits
        cut = sum(int(w) for net, w in zip(nets, net_weights) if len(set(blocks[net].tolist())) > 1)
        best = cut if best is None else min(best, cut)
    return best


def reached_from_the_cut(nets, n, partition, movable):
    """The free vertices of block 1 that a breadth-first search from the cut reaches inside block 1."""
    reached = {v for net in nets if len({partition[u] for u in net}) > 1 for v in net
               if partition[v] == 1 and movable[v]}
    queue = list(reached)
    while queue:
        v = queue.pop()
        for net in nets:
            if v in net:
                for u in net:
                    if partition[u] == 1 and movable[u] and u not in reached:
                        reached.add(u)
                        queue.append(u)
    return reached


@pytest.mark.parametrize("seed", range(10))
def test_with_a_region_of_every_free_vertex_the_flow_finds_the_minimum_cut(seed):
    # two fixed terminals, every free vertex in the sink's block and connected to the cut inside it, no
    # balance bound that binds: the region is every free vertex, and flows must find the minimum cut
    n = 11
    rng = np.random.default_rng(seed)
    nets = [[0, 2], [1, 3]] + [list(rng.choice(n, size=int(rng.integers(2, 5)), replace=False)) for _ in range(16)]
    nets += [[v, v + 1] for v in range(2, n - 1)]  # a path through the free vertices
    net_weights = rng.integers(1, 6, len(nets))
    h = Hypergraph.from_pin_lists(nets, n, rng.integers(1, 4, n), net_weights)
    fixed = np.full(n, -1)
    fixed[0], fixed[1] = 0, 1
    partition = np.ones(n, dtype=np.int32)
    partition[0] = 0
    assert reached_from_the_cut(nets, n, partition, fixed < 0) == set(range(2, n))
    bounds = np.full(2, h.total_vertex_weight, dtype=np.int64)
    refined = flow_refine(h, partition, 2, bounds, 0.5, UNLIMITED, movable=fixed < 0)
    assert refined[0] == 0 and refined[1] == 1
    assert naive_cut(nets, refined, net_weights) == brute_force_min_cut(nets, n, net_weights, fixed)


@pytest.mark.parametrize("k", [2, 3, 6])
@pytest.mark.parametrize("objective", ["km1", "cut"])
@pytest.mark.parametrize("seed", range(4))
def test_flow_rounds_report_exactly_what_they_gain_and_keep_the_balance(k, objective, seed):
    h, nets = random_hypergraph(seed, 120, 220, max_size=6, weighted=True)
    rng = np.random.default_rng(seed)
    partition = (np.arange(h.num_vertices) % k).astype(np.int32)
    rng.shuffle(partition)
    bound = max_block_weight(h.total_vertex_weight, k, 0.1)
    bounds = np.full(k, bound, dtype=np.int64)
    weights = scatter_sum(partition, h.vertex_weights, k).astype(np.int64)
    if weights.max() > bound:
        pytest.skip("random start out of balance")
    measure = naive_cut if objective == "cut" else naive_km1
    before = measure(nets, partition, h.net_weights)
    movable = rng.random(h.num_vertices) > 0.1
    results = []
    for threads in (1, 3):  # the same partition on any number of threads
        refined = partition.copy()
        weights = scatter_sum(partition, h.vertex_weights, k).astype(np.int64)
        gained = flow_rounds(h.net_offsets, h.pin_vertices, h.vertex_offsets, h.incident_nets,
                             h.net_weights.astype(np.int64), h.vertex_weights.astype(np.int64), refined, weights,
                             bounds, k, movable, objective == "cut", 0.1, 16.0, 2, 1000, 4, 0.0, before, threads, 0)
        results.append(refined)
    assert np.array_equal(results[0], results[1])
    after = measure(nets, refined, h.net_weights)
    assert gained == before - after and gained > 0
    assert np.array_equal(weights, scatter_sum(refined, h.vertex_weights, k))
    assert weights.max() <= bound
    assert np.array_equal(refined[~movable], partition[~movable])


def test_flows_improve_a_real_partition_and_are_deterministic():
    h = read_hypergraph(IBM01)
    k = 4
    partition = (np.arange(h.num_vertices) * k // h.num_vertices).astype(np.int32)  # contiguous id ranges
    bounds = np.full(k, max_block_weight(h.total_vertex_weight, k, 0.03), dtype=np.int64)
    first = flow_refine(h, partition, k, bounds, 0.03, FlowConfig(levels="all"))
    again = flow_refine(h, partition, k, bounds, 0.03, FlowConfig(levels="all"))
    assert np.array_equal(first, again)
    nets = np.split(h.pin_vertices, h.net_offsets[1:-1])
    assert naive_km1(nets, first, h.net_weights) < naive_km1(nets, partition, h.net_weights)
    assert scatter_sum(first, h.vertex_weights, k).max() <= bounds[0]


def test_flow_refine_leaves_a_partition_without_cut_or_nets_alone():
    h = Hypergraph.from_pin_lists([[0, 1], [2, 3]], 4)
    partition = np.array([0, 0, 1, 1], dtype=np.int32)
    bounds = np.full(2, 2, dtype=np.int64)
    assert np.array_equal(flow_refine(h, partition, 2, bounds, 0.03, FlowConfig(levels="all")), partition)
    empty = Hypergraph.from_pin_lists([], 3)
    assert np.array_equal(flow_refine(empty, np.array([0, 1, 0], dtype=np.int32), 2, bounds, 0.03), [0, 1, 0])


def test_coarse_levels_skip_pairs_whose_cut_is_small():
    h = read_hypergraph(IBM01)
    k = 4
    partition = (np.arange(h.num_vertices) * k // h.num_vertices).astype(np.int32)
    bounds = np.full(k, max_block_weight(h.total_vertex_weight, k, 0.03), dtype=np.int64)
    pair_cuts = {}  # the weight of the nets with pins in both blocks of each pair, counted in Python
    for net, w in zip(np.split(h.pin_vertices, h.net_offsets[1:-1]), h.net_weights):
        blocks = sorted(set(partition[net].tolist()))
        for a, b in itertools.combinations(blocks, 2):
            pair_cuts[a, b] = pair_cuts.get((a, b), 0) + int(w)
    everything = FlowConfig(levels="all", coarse_min_pair_cut=max(pair_cuts.values()))
    assert np.array_equal(flow_refine(h, partition, k, bounds, 0.03, everything, input_level=False), partition)
    on_input = flow_refine(h, partition, k, bounds, 0.03, everything, input_level=True)
    assert np.array_equal(on_input, flow_refine(h, partition, k, bounds, 0.03, FlowConfig(coarse_min_pair_cut=0)))
    assert not np.array_equal(on_input, partition)
