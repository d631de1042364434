"""All warp-level code: shuffle scans, broadcasts, reductions and the task planners.

The planners are the per-warp task planning with shuffle scans of L. Cheng, H. Cho and P. Yoon, "An
Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015 (Fig. 5, Table I its example).
Written for full warps (mask 0xffffffff, uniform control flow around every shuffle), so that the numpy
model in ``tests/planner_model.py`` and these device functions agree step by step. These functions are
checked by compiling to PTX, by numba's CUDA simulator (which lacks the warp intrinsics; ``tests/cudasim.py``
adds them for full warps) and by the ``gpu`` tests on a real device (``scripts/gpu-check``).
"""

from __future__ import annotations

from numba import cuda, int32, int64

from .primitives import add_halves, halves_value

WARP_SIZE = 32
FULL_MASK = 0xFFFFFFFF


@cuda.jit(device=True, inline=True)
def lane_id():
    return cuda.threadIdx.x % WARP_SIZE


@cuda.jit(device=True, inline=True)
def warp_inclusive_scan(value, lane):
    """Inclusive prefix sum across the warp (Fig. 5 line 6) by ``shfl_up_sync``."""
    offset = 1
    while offset < WARP_SIZE:
        below = cuda.shfl_up_sync(FULL_MASK, value, offset)
        if lane >= offset:
            value += below
        offset *= 2
    return value


@cuda.jit(device=True, inline=True)
def warp_broadcast(value, source_lane):
    """``value`` of ``source_lane`` on every lane (Fig. 5 ``SHFL``)."""
    return cuda.shfl_sync(FULL_MASK, value, source_lane)


@cuda.jit(device=True, inline=True)
def warp_count(flag):
    """How many lanes have ``flag`` set, on every lane (``ballot_sync``)."""
    return cuda.popc(cuda.ballot_sync(FULL_MASK, flag))


@cuda.jit(device=True, inline=True)
def warp_all(flag):
    """Whether every lane has ``flag`` set, on every lane (``all_sync``)."""
    return cuda.all_sync(FULL_MASK, flag)


@cuda.jit(device=True, inline=True)
def warp_sum(value):
    """Sum over the warp, on every lane (butterfly with ``shfl_xor_sync``)."""
    offset = WARP_SIZE // 2
    while offset > 0:
        value += cuda.shfl_xor_sync(FULL_MASK, value, offset)
        offset //= 2
    return value


@cuda.jit(device=True, inline=True)
def warp_argmax(score, priority, candidate, width=WARP_SIZE):
    """The best (score, priority, candidate) of each aligned group of ``width`` lanes (a power of two, 32 =
    the whole warp), on every lane of the group: higher score, then higher priority, then the smaller
    candidate id; candidates < 0 mean "none" and lose to any real one (the CPU's order, see
    :func:`hgpart.coarsening.rules.better_candidate`)."""
    offset = width // 2
    while offset > 0:
        other_score = cuda.shfl_xor_sync(FULL_MASK, score, offset)
        other_priority = cuda.shfl_xor_sync(FULL_MASK, priority, offset)
        other = cuda.shfl_xor_sync(FULL_MASK, candidate, offset)
        if other >= 0 and (candidate < 0 or other_score > score or (other_score == score and (
                other_priority > priority or (other_priority == priority and other < candidate)))):
            score = other_score
            priority = other_priority
            candidate = other
        offset //= 2
    return score, priority, candidate


@cuda.jit(device=True, inline=True)
def warp_argmin(key, item):
    """The smallest (key, item) of the warp, on every lane: the smaller key, of equal keys the smaller item."""
    offset = WARP_SIZE // 2
    while offset > 0:
        other_key = cuda.shfl_xor_sync(FULL_MASK, key, offset)
        other_item = cuda.shfl_xor_sync(FULL_MASK, item, offset)
        if other_key < key or (other_key == key and other_item < item):
            key = other_key
            item = other_item
        offset //= 2
    return key, item


@cuda.jit(device=True, inline=True)
def warp_kth_smallest(value, rank, lane, largest):
    """The ``rank``-th smallest (from 0) of the warp's values, on every lane (of equal values the lower lane's
    counts as smaller); ``largest`` is of ``value``'s type and no smaller than any value (its infinity). Each lane
    counts the values below its own (32 shuffles), then a minimum over the lanes of rank ``rank`` or more (5)."""
    position = 0
    for other in range(WARP_SIZE):
        theirs = cuda.shfl_sync(FULL_MASK, value, other)
        if theirs < value or (theirs == value and other < lane):
            position += 1
    chosen = value if position >= rank else largest
    offset = WARP_SIZE // 2
    while offset > 0:
        chosen = min(chosen, cuda.shfl_xor_sync(FULL_MASK, chosen, offset))
        offset //= 2
    return chosen


@cuda.jit(device=True, inline=True)
def warp_max(value):
    """Maximum over the warp, on every lane."""
    offset = WARP_SIZE // 2
    while offset > 0:
        value = max(value, cuda.shfl_xor_sync(FULL_MASK, value, offset))
        offset //= 2
    return value


@cuda.jit(device=True, inline=True)
def warp_row_of(exclusive, position):
    """The largest lane r with ``exclusive`` of lane r at most ``position``, where ``exclusive`` never
    decreases over the lanes (an exclusive scan of row lengths): the row holding entry ``position`` of the
    rows laid end to end (rows of length 0 are passed over). A binary search of 5 shuffles."""
    row = int32(0)
    step = WARP_SIZE // 2
    while step > 0:
        if cuda.shfl_sync(FULL_MASK, exclusive, row + step) <= position:
            row += step
        step //= 2
    return row


@cuda.jit(device=True, inline=True)
def warp_group_sum(key, value, low, high, lane):
    """Sum int64 ``value`` over the lanes that hold the same ``key`` (``match_any_sync``). Returns (leader,
    total): leader is True on the lowest lane of each group, and total is the group's sum on every lane of
    it. ``low`` and ``high`` are this warp's 32 uint32 slots each of shared memory: the sums are added in
    halves (:func:`hgpart.cuda.primitives.add_halves`), so that a large group's lanes queue on one native
    atomic rather than retry a compare-and-swap loop."""
    group = cuda.match_any_sync(FULL_MASK, key)
    leader = cuda.ffs(group) - 1
    low[lane] = 0
    high[lane] = 0
    cuda.syncwarp(FULL_MASK)
    add_halves(low, high, leader, value)
    cuda.syncwarp(FULL_MASK)
    total = halves_value(low, high, leader)
    cuda.syncwarp(FULL_MASK)
    return leader == lane, total


@cuda.jit(device=True, inline=True)
def lanes_below(ballot, lane):
    """How many lanes below ``lane`` have their bit set in ``ballot`` (a ``ballot_sync`` result)."""
    return cuda.popc(ballot & ((1 << lane) - 1))


@cuda.jit(device=True, inline=True)
def warp_plan(length, lane):
    """Fig. 5, lines 5-21: an equal share of the warp's (row, entry) pairs for this lane.

    ``length`` is a(l), the entries of this lane's row (0 if none). Returns (S_r, S_c, E_r, E_c, S): the
    lane processes the pairs from (S_r, S_c) up to, not including, (E_r, E_c) in row-major order, rows
    numbered by lane; S is the warp's total. L = floor((l + 1) S / 32), so shares differ by at most one
    (the figure's ceil(S / 32) (l + 1) agrees whenever 32 divides S; see the numpy model).
    """
    return _plan_from_scan(warp_inclusive_scan(int64(length), lane), length, lane)


@cuda.jit(device=True, inline=True)
def _plan_from_scan(inclusive, length, lane):
    """:func:`warp_plan` from lines 7 on, given the inclusive scan of line 6."""
    total = warp_broadcast(inclusive, WARP_SIZE - 1)
    exclusive = inclusive - length
    limit = (lane + 1) * total // WARP_SIZE
    end_row = warp_row_of(exclusive, limit - 1)  # largest z with b'(z) < L
    end_col = limit - warp_broadcast(exclusive, end_row)
    start_row = cuda.shfl_up_sync(FULL_MASK, end_row, 1)
    start_col = cuda.shfl_up_sync(FULL_MASK, end_col, 1)
    if lane == 0:
        start_row = int32(0)
        start_col = int64(0)
    return start_row, start_col, end_row, end_col, total


@cuda.jit(device=True, inline=True)
def warp_schedule(length, lane, row_end, rows):
    """This lane's share of the warp's rows laid end to end (row r's entries at positions row_end[rows + r]
    - a(r) .. row_end[rows + r] - 1), chosen from the rows' lengths; ``length`` is a(l) of this lane's row.

    * Rows of 32 entries or more on average: strided, the positions lane, lane + 32, ... < S. At each
      step the warp reads 32 consecutive entries of a row (coalesced loads).
    * Shorter rows: Fig. 5's contiguous shares (:func:`warp_plan`), the positions L(l - 1) .. L(l) - 1,
      which cross few rows per lane (the strided order would change row at nearly every entry).

    Either way shares differ by at most one entry. Writes the inclusive scan of the lengths to
    row_end[rows + lane] and returns (this row's first position, first, stop, step, start row): the lane
    takes positions range(first, stop, step), the first of them in row ``start row`` (numbered from 0).
    The caller syncs the warp before :func:`warp_next_row` reads row_end. Called by every lane.
    """
    inclusive = warp_inclusive_scan(int64(length), lane)
    row_end[rows + lane] = inclusive
    total = warp_broadcast(inclusive, WARP_SIZE - 1)
    if total >= WARP_SIZE * cuda.popc(cuda.ballot_sync(FULL_MASK, length > 0)):  # uniform in the warp
        return inclusive - length, int64(lane), total, int64(WARP_SIZE), int32(0)
    start_row, start_col, end_row, end_col, total = _plan_from_scan(inclusive, length, lane)
    return inclusive - length, lane * total // WARP_SIZE, (lane + 1) * total // WARP_SIZE, int64(1), start_row


@cuda.jit(device=True, inline=True)
def warp_next_row(position, row, row_end):
    """The row (an index into ``row_end``) holding entry ``position`` of a :func:`warp_schedule`, searched
    forward from ``row``: a lane's positions only grow, so each row is passed once."""
    while row_end[row] <= position:
        row += 1
    return row
