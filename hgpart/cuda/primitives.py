"""Element-wise device kernels shared by the GPU phases: scatters with atomics and pointer doubling.

Every kernel is grid-stride, so any launch shape covers any size (the simulator runs tiny grids).
"""

from __future__ import annotations

from numba import cuda

from .arrays import grid


@cuda.jit
def scatter_add_kernel(targets, values, out):
    """out[targets[i]] += values[i] for every i (int64 atomics)."""
    for i in range(cuda.grid(1), targets.shape[0], cuda.gridsize(1)):
        cuda.atomic.add(out, targets[i], values[i])


@cuda.jit
def scatter_max_kernel(targets, values, out):
    """out[targets[i]] = max(out[targets[i]], values[i]) for every i."""
    for i in range(cuda.grid(1), targets.shape[0], cuda.gridsize(1)):
        cuda.atomic.max(out, targets[i], values[i])


@cuda.jit
def scatter_min_kernel(targets, values, out):
    """out[targets[i]] = min(out[targets[i]], values[i]) for every i."""
    for i in range(cuda.grid(1), targets.shape[0], cuda.gridsize(1)):
        cuda.atomic.min(out, targets[i], values[i])


@cuda.jit
def pointer_double_kernel(jump, smallest, jump_out, smallest_out, changed):
    """One doubling step on a functional graph: jump_out = jump o jump, smallest_out[v] = min(smallest[v],
    smallest[jump[v]]) (the smallest id on the next 2^(k+1) steps from v); changed[0] = 1 if any jump moved."""
    for v in range(cuda.grid(1), jump.shape[0], cuda.gridsize(1)):
        middle = jump[v]
        target = jump[middle]
        jump_out[v] = target
        smallest_out[v] = min(smallest[v], smallest[middle])
        if target != middle:
            changed[0] = 1


def scatter(kernel, targets, values, out):
    if targets.shape[0]:
        kernel[grid(targets.shape[0])](targets, values, out)
    return out
