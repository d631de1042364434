"""Seeded, reproducible generators for the seed paper's input classes and for graph benchmarks.

Hypergraphs (row-net model: nets are rows, vertices are columns):

* ``long-tailed``: power-law vertex degrees (Pareto, exponent 2, at least 5 nets per vertex), like the
  flickr/wikipedia matrices of Table II of Cheng, Cho and Yoon (IEEE HPEC 2015).
* ``evenly``: evenly connected, log-normal degrees with median 5 and at most 250 (like stanford).
* ``grid``: the row-net hypergraph of a 2-D 5-point stencil on a side x side grid (n = side^2).
* ``uniform``: m = n random nets of ``d`` distinct vertices each.
* ``synthetic``: that paper's synthetic matrix, N x N whose first N/700 columns each hold N/7 random nonzeros
  (N = 700,000: 1,000 columns x 100,000 nonzeros, 100M pins).

Graphs: ``rmat`` (R-MAT, a=0.57 b=c=0.19) and ``gnm`` (G(n, m)), optionally weighted.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from .errors import InputError
from .hypergraph import Hypergraph, transpose_csr

HYPERGRAPH_CLASSES = ("long-tailed", "evenly", "grid", "uniform", "synthetic")
GRAPH_CLASSES = ("rmat", "gnm")
CHUNK = 1 << 20


@numba.njit(cache=True, parallel=True)
def _random_targets(degrees, offsets, num_targets, seed, distinct):
    """For each row r, ``degrees[r]`` random ids in [0, num_targets); distinct within a row if asked.

    Deterministic for a seed whatever the thread count: each block of rows reseeds the generator.
    """
    num_rows = degrees.shape[0]
    targets = np.empty(offsets[-1], dtype=np.int32)
    block = 256
    for b in numba.prange((num_rows + block - 1) // block):
        np.random.seed(seed * 1000003 + b)
        for r in range(b * block, min(num_rows, (b + 1) * block)):
            begin = offsets[r]
            need = degrees[r]
            if not distinct:
                for i in range(need):
                    targets[begin + i] = np.random.randint(0, num_targets)
                continue
            filled = 0
            while filled < need:  # rejection of repeats; rows hold far fewer ids than num_targets
                candidate = np.random.randint(0, num_targets)
                repeat = False
                for q in range(begin, begin + filled):
                    if targets[q] == candidate:
                        repeat = True
                        break
                if not repeat:
                    targets[begin + filled] = candidate
                    filled += 1
    return targets


@numba.njit(cache=True, parallel=True)
def _distinct_large(num_columns, per_column, num_rows, seed):
    """The synthetic matrix's columns: per column ``per_column`` distinct random rows (bitmap rejection)."""
    targets = np.empty(num_columns * per_column, dtype=np.int32)
    for c in numba.prange(num_columns):
        np.random.seed(seed * 1000003 + c)
        seen = np.zeros(num_rows, dtype=np.bool_)
        filled = 0
        while filled < per_column:
            candidate = np.random.randint(0, num_rows)
            if not seen[candidate]:
                seen[candidate] = True
                targets[c * per_column + filled] = candidate
                filled += 1
    return targets


def _from_vertex_lists(num_vertices: int, num_nets: int, degrees: np.ndarray, seed: int, distinct: bool = True,
                       nets: np.ndarray | None = None) -> Hypergraph:
    degrees = np.minimum(degrees.astype(np.int64), num_nets)
    vertex_offsets = np.zeros(num_vertices + 1, dtype=np.int64)
    np.cumsum(degrees, out=vertex_offsets[1:])
    if nets is None:
        nets = _random_targets(degrees, vertex_offsets, num_nets, seed, distinct and bool(degrees.max(initial=0) < 64))
    net_offsets, pins = transpose_csr(vertex_offsets, nets, num_nets)
    return Hypergraph.from_pins(num_vertices, net_offsets, pins)


def long_tailed(n: int, seed: int = 0, exponent: float = 2.0, min_degree: int = 5) -> Hypergraph:
    """n vertices and n nets; vertex degrees ~ Pareto(exponent) from ``min_degree``, capped at n."""
    rng = np.random.default_rng(seed)
    uniform = rng.random(n)
    degrees = np.floor(min_degree * (1.0 - uniform) ** (-1.0 / (exponent - 1.0)))
    degrees = np.minimum(degrees, n).astype(np.int64)
    return _from_vertex_lists(n, n, degrees, seed)


def evenly(n: int, seed: int = 0, median: float = 5.0, max_degree: int = 250) -> Hypergraph:
    """n vertices and n nets; log-normal vertex degrees (median 5, sigma 0.8) in [1, 250]."""
    rng = np.random.default_rng(seed)
    degrees = np.clip(np.rint(rng.lognormal(math.log(median), 0.8, n)), 1, min(max_degree, n)).astype(np.int64)
    return _from_vertex_lists(n, n, degrees, seed)


def grid(n: int, seed: int = 0) -> Hypergraph:
    """Row-net hypergraph of the 5-point stencil on a side x side grid, side = round(sqrt(n))."""
    side = max(1, int(round(math.sqrt(n))))
    ids = np.arange(side * side, dtype=np.int64).reshape(side, side)
    rows, cols = [ids.ravel()], [ids.ravel()]
    for shifted_rows, shifted_cols in (((ids[1:, :], ids[:-1, :])), (ids[:-1, :], ids[1:, :]),
                                       (ids[:, 1:], ids[:, :-1]), (ids[:, :-1], ids[:, 1:])):
        rows.append(shifted_rows.ravel())
        cols.append(shifted_cols.ravel())
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    order = np.lexsort((cols, rows))
    offsets = np.zeros(side * side + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=side * side), out=offsets[1:])
    return Hypergraph.from_pins(side * side, offsets, cols[order].astype(np.int32))


def uniform(n: int, seed: int = 0, d: int = 4, num_nets: int | None = None) -> Hypergraph:
    """``num_nets`` (default n) nets of ``d`` distinct random vertices each."""
    num_nets = n if num_nets is None else num_nets
    if d > n:
        raise InputError(f"net size d={d} exceeds the number of vertices {n}")
    sizes = np.full(num_nets, d, dtype=np.int64)
    offsets = np.zeros(num_nets + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    pins = _random_targets(sizes, offsets, n, seed, True)
    return Hypergraph.from_pins(n, offsets, pins)


def synthetic(n: int = 700_000, seed: int = 0) -> Hypergraph:
    """Cheng, Cho and Yoon's synthetic matrix (Sec. VI): first n // 700 columns each hold n // 7 distinct random rows."""
    heavy = max(1, n // 700)
    per_column = max(1, n // 7)
    nets = _distinct_large(heavy, per_column, n, seed)
    degrees = np.zeros(n, dtype=np.int64)
    degrees[:heavy] = per_column
    return _from_vertex_lists(n, n, degrees, seed, nets=nets)


@numba.njit(cache=True, parallel=True)
def _rmat_edges(scale, num_edges, a, b, c, seed):
    sources = np.empty(num_edges, dtype=np.int64)
    targets = np.empty(num_edges, dtype=np.int64)
    ab, abc = a + b, a + b + c
    for chunk in numba.prange((num_edges + 65535) // 65536):
        np.random.seed(seed * 1000003 + chunk)
        for i in range(chunk * 65536, min(num_edges, (chunk + 1) * 65536)):
            u = 0
            v = 0
            for level in range(scale):
                r = np.random.random()
                u <<= 1
                v <<= 1
                if r < a:
                    pass
                elif r < ab:
                    v |= 1
                elif r < abc:
                    u |= 1
                else:
                    u |= 1
                    v |= 1
            sources[i] = u
            targets[i] = v
    return sources, targets


@numba.njit(cache=True, parallel=True)
def _gnm_edges(n, num_edges, seed):
    sources = np.empty(num_edges, dtype=np.int64)
    targets = np.empty(num_edges, dtype=np.int64)
    for chunk in numba.prange((num_edges + 65535) // 65536):
        np.random.seed(seed * 1000003 + chunk)
        for i in range(chunk * 65536, min(num_edges, (chunk + 1) * 65536)):
            u = np.random.randint(0, n)
            v = (u + 1 + np.random.randint(0, n - 1)) % n
            sources[i] = u
            targets[i] = v
    return sources, targets


def rmat(n: int, seed: int = 0, edge_factor: int = 16, weights: str | None = None,
         probabilities=(0.57, 0.19, 0.19)):
    """R-MAT graph on 2^ceil(log2 n) vertices with ``edge_factor`` * vertices edges.

    Returns (num_vertices, sources int64[m], targets int64[m], weights float64[m] or None). Self loops and
    repeated edges are left in, as R-MAT makes them; readers drop and merge them.
    """
    scale = max(1, int(math.ceil(math.log2(max(n, 2)))))
    num_vertices = 1 << scale
    a, b, c = probabilities
    sources, targets = _rmat_edges(scale, edge_factor * num_vertices, a, b, c, seed)
    return num_vertices, sources, targets, _weights(sources.shape[0], weights, seed)


def gnm(n: int, seed: int = 0, m: int | None = None, weights: str | None = None):
    """G(n, m): m (default 8n) uniform random edges without self loops (repeats are rare, merged on read)."""
    if n < 2:
        raise InputError("G(n, m) needs at least 2 vertices")
    m = 8 * n if m is None else m
    sources, targets = _gnm_edges(n, m, seed)
    return n, sources, targets, _weights(m, weights, seed)


def _weights(count: int, kind: str | None, seed: int):
    if kind is None:
        return None
    rng = np.random.default_rng(seed + 1)
    if kind == "int":
        return rng.integers(1, 101, count).astype(np.float64)
    if kind == "float":
        return rng.random(count)
    raise InputError(f"unknown weight kind {kind!r} (int or float)")


HYPERGRAPH_GENERATORS = {"long-tailed": long_tailed, "evenly": evenly, "grid": grid, "uniform": uniform,
                         "synthetic": synthetic}
GRAPH_GENERATORS = {"rmat": rmat, "gnm": gnm}
