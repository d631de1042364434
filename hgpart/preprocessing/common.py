"""What the host and device builders of the star expansion share: the edge-weight rule and the weight shift.

The star expansion of a hypergraph is the bipartite graph with a node per vertex (ids 0..n-1) and a node per
net (ids n..n+m-1), and an edge (v, n + e) for every pin v of net e. Its edge weights follow one of the
models of Mt-KaHyPar's community detection (T. Heuer and S. Schlag, "Improving Coarsening Schemes for
Hypergraph Partitioning by Exploiting Community Structure", SEA 2017):

``uniform`` : ω(v, e) = w(e)
``non-uniform`` : ω(v, e) = w(e) / |e|
``degree`` : ω(v, e) = w(e) d(v) / |e|
``hybrid`` : ``degree`` when the hypergraph has fewer than 0.75 nets per vertex, else ``uniform``.

The clustering works on integer weights (exact, so the GPU and the CPU twin agree to the bit): ω is
``numerator / |e|`` (or ``numerator`` for ``uniform``) times 2^shift, rounded down, at least 1, where the
integer ``shift`` (of either sign) makes the weights add up to at most 2^28 — computed from integers only,
so that both devices choose the same one.
"""

from __future__ import annotations

UNIFORM, NON_UNIFORM, DEGREE = 0, 1, 2
WEIGHTINGS = ("hybrid", "uniform", "non-uniform", "degree")
TOTAL_BITS = 28


def weighting_code(weighting: str, num_vertices: int, num_nets: int, density_threshold: float) -> int:
    """The model ``weighting`` names (``hybrid`` resolved by the density nets / vertices) as an int code."""
    if weighting == "hybrid":
        return DEGREE if num_nets < density_threshold * max(num_vertices, 1) else UNIFORM
    return {"uniform": UNIFORM, "non-uniform": NON_UNIFORM, "degree": DEGREE}[weighting]


def numerator(code, net_weight, degree):
    """The pin's weight before the division by |e| and the shift: w(e) d(v) for ``degree``, else w(e)."""
    if code == DEGREE:
        return net_weight * degree
    return net_weight


def edge_weight(code, net_weight, net_size, degree, shift):
    """The integer weight of the edge (v, e): see the module docstring. All arguments int64."""
    value = net_weight * degree if code == DEGREE else net_weight  # numerator(), inlined for the kernels
    divisor = net_size if code != UNIFORM else 1
    if shift >= 0:
        value = (value << shift) // divisor
    else:
        value = value // (divisor << -shift)
    return max(value, 1)


def row_steps(jit):
    """The per-row steps of the builders, compiled by ``jit`` (``numba.njit`` for the host, a
    ``cuda.jit(device=True)`` for the device), so that both twins run the same code:

    ``count_row(row, net_offsets, vertex_offsets, incident_nets, net_weights, max_net_size, code)``
        (kept entries of ``row``, the numerators of its kept pins when it is a vertex's row);
    ``fill_row(row, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size, code,
    shift, offsets, neighbors, weights)``
        writes the row's neighbours and weights from ``offsets[row]`` on and returns their sum (ζ).

    Rows 0..n-1 are the vertices' (neighbours n + e), rows n.. the nets' (their pins); nets of fewer than 2
    or more than ``max_net_size`` pins are left out.
    """
    weight_of = jit(edge_weight)
    numerator_of = jit(numerator)

    def kept(net_offsets, e, max_net_size):
        size = net_offsets[e + 1] - net_offsets[e]
        return 2 <= size <= max_net_size

    kept = jit(kept)

    def count_row(row, net_offsets, vertex_offsets, incident_nets, net_weights, max_net_size, code):
        n = vertex_offsets.shape[0] - 1
        count, total = 0, 0
        if row < n:
            degree = vertex_offsets[row + 1] - vertex_offsets[row]
            for position in range(vertex_offsets[row], vertex_offsets[row + 1]):
                e = incident_nets[position]
                if kept(net_offsets, e, max_net_size):
                    count += 1
                    total += numerator_of(code, net_weights[e], degree)
        elif kept(net_offsets, row - n, max_net_size):
            count = net_offsets[row - n + 1] - net_offsets[row - n]
        return count, total

    def fill_row(row, net_offsets, pin_vertices, vertex_offsets, incident_nets, net_weights, max_net_size, code,
                 shift, offsets, neighbors, weights):
        n = vertex_offsets.shape[0] - 1
        cursor = offsets[row]
        total = 0
        if row < n:
            degree = vertex_offsets[row + 1] - vertex_offsets[row]
            for position in range(vertex_offsets[row], vertex_offsets[row + 1]):
                e = incident_nets[position]
                if kept(net_offsets, e, max_net_size):
                    weight = weight_of(code, net_weights[e], net_offsets[e + 1] - net_offsets[e], degree, shift)
                    neighbors[cursor] = n + e
                    weights[cursor] = weight
                    total += weight
                    cursor += 1
        elif kept(net_offsets, row - n, max_net_size):
            e = row - n
            size = net_offsets[e + 1] - net_offsets[e]
            for position in range(net_offsets[e], net_offsets[e + 1]):
                v = pin_vertices[position]
                weight = weight_of(code, net_weights[e], size, vertex_offsets[v + 1] - vertex_offsets[v], shift)
                neighbors[cursor] = v
                weights[cursor] = weight
                total += weight
                cursor += 1
        return total

    return jit(count_row), jit(fill_row)


def weight_shift(numerator_total: int) -> int:
    """The shift for weights whose numerators add up to ``numerator_total`` (an upper bound of their
    unshifted total, as every divisor is at least 1): the largest s with total * 2^s <= 2^TOTAL_BITS."""
    total = max(int(numerator_total), 1)
    return TOTAL_BITS - total.bit_length() + (1 if total & (total - 1) == 0 else 0)
