"""The Fig. 5 planner and the rating schedule of L. Cheng, H. Cho and P. Yoon, "An Accelerated Procedure for
Hypergraph Coarsening on the GPU", IEEE HPEC 2015: the numpy models (the paper's Table I); properties; PTX; the GPU."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import cuda, int64

from ..planner_model import entries_of_lane, plan_model, schedule_model

TABLE_I = {  # the paper's Table I: 4 lanes, rows 1, 2, 4, 6 with 1, 6, 3, 2 nonzeros (12 in all)
    "a": [1, 6, 3, 2], "b": [1, 7, 10, 12], "S": [12, 12, 12, 12], "b_exclusive": [0, 1, 7, 10],
    "share": [3, 3, 3, 3], "L": [3, 6, 9, 12], "E_r": [1, 1, 2, 3], "shfl_b_E_r": [1, 1, 7, 10],
    "E_c": [2, 5, 2, 2], "S_r": [0, 1, 1, 2], "S_c": [0, 2, 5, 2],
}


@pytest.mark.parametrize("rule", ["balanced", "figure"])
def test_table_i_exactly(rule):
    plan = plan_model([1, 6, 3, 2], width=4, rule=rule)
    for name, expected in TABLE_I.items():
        assert plan[name].tolist() == expected, name
    # thread 0 takes entries 0-2 (row 0's one entry, row 1's first two), thread 1 entries 3-5, ...
    assert entries_of_lane(plan, 0) == [(0, 0), (1, 0), (1, 1)]
    assert entries_of_lane(plan, 1) == [(1, 2), (1, 3), (1, 4)]
    assert entries_of_lane(plan, 2) == [(1, 5), (2, 0), (2, 1)]
    assert entries_of_lane(plan, 3) == [(2, 2), (3, 0), (3, 1)]


@settings(max_examples=300, deadline=None)
@given(lengths=st.lists(st.integers(0, 200), min_size=1, max_size=32).map(lambda l: l + [0] * (32 - len(l))),
       skew=st.booleans())
def test_every_entry_once_and_shares_differ_by_at_most_one(lengths, skew):
    if skew:
        lengths[0] = lengths[0] * 1000  # one heavy row among light ones
    plan = plan_model(lengths, width=32)
    seen = [pair for lane in range(32) for pair in entries_of_lane(plan, lane)]
    expected = [(row, col) for row, size in enumerate(lengths) for col in range(size)]
    assert seen == expected  # every (row, entry) exactly once, in order
    shares = [len(entries_of_lane(plan, lane)) for lane in range(32)]
    assert max(shares) - min(shares) <= 1
    assert max(shares) == -(-sum(lengths) // 32)


@settings(max_examples=300, deadline=None)
@given(lengths=st.lists(st.integers(0, 200), min_size=1, max_size=32).map(lambda l: l + [0] * (32 - len(l))),
       skew=st.booleans())
def test_the_schedule_takes_every_entry_once(lengths, skew):
    if skew:
        lengths[0] = lengths[0] * 1000
    lanes = schedule_model(lengths, 32)
    assert sorted(position for lane in lanes for position in lane) == list(range(sum(lengths)))
    shares = [len(lane) for lane in lanes]
    assert max(shares) - min(shares) <= 1
    exclusive = np.cumsum(lengths) - lengths
    if sum(lengths) < 32 * np.count_nonzero(lengths):  # short rows: Fig. 5's shares, as flat positions
        plan = plan_model(lengths, width=32)
        assert lanes == [[int(exclusive[row]) + col for row, col in entries_of_lane(plan, lane)] for lane in range(32)]
    else:  # long rows: at each step the warp reads 32 consecutive positions
        assert all(lane == list(range(index, sum(lengths), 32)) for index, lane in enumerate(lanes))


@given(lengths=st.lists(st.integers(0, 40), max_size=30), per_item=st.integers(1, 9))
@settings(max_examples=200, deadline=None)
def test_segment_items_cover_every_entry_once_in_segment_order(lengths, per_item):
    """segment_items (hubs' nets cut into work items) against a plain loop over the segments."""
    from hgpart.cuda.primitives import segment_items

    expected = [(segment, start // per_item) for segment, length in enumerate(lengths)
                for start in range(0, length, per_item)]
    owner, rank = segment_items(np.asarray(lengths, dtype=np.int64), per_item)
    assert owner.dtype == np.int32 and rank.dtype == np.int64
    assert list(zip(owner.tolist(), rank.tolist())) == expected


def test_the_schedule_picks_by_row_length():
    assert schedule_model([40, 30] + [0] * 30, 32)[1] == [1, 33, 65]  # 70 entries, 2 rows: strided
    assert schedule_model([5] * 32, 32)[1] == [5, 6, 7, 8, 9]  # 160 entries, 32 rows: contiguous


def test_the_figures_rule_leaves_lanes_idle():
    lengths = [33] + [0] * 31
    figure = [len(entries_of_lane(plan_model(lengths, 32, "figure"), lane)) for lane in range(32)]
    balanced = [len(entries_of_lane(plan_model(lengths, 32), lane)) for lane in range(32)]
    assert figure.count(0) == 15 and sorted(set(balanced)) == [1, 2]


def _plan_kernel():
    from hgpart.cuda.warp import warp_argmax, warp_next_row, warp_plan, warp_schedule, warp_sum

    @cuda.jit
    def plan_kernel(lengths, out, sums, best, best_of_eight, schedule):
        row_end = cuda.shared.array(32, int64)  # launched a warp per block
        lane = cuda.threadIdx.x % 32
        warp = cuda.grid(1) // 32
        length = lengths[warp * 32 + lane]
        start_row, start_col, end_row, end_col, total = warp_plan(length, lane)
        base = (warp * 32 + lane) * 5
        out[base] = start_row
        out[base + 1] = start_col
        out[base + 2] = end_row
        out[base + 3] = end_col
        out[base + 4] = total
        sums[warp * 32 + lane] = warp_sum(length)
        score, priority, candidate = warp_argmax(float(length % 7), int64(length % 3), lane if length > 0 else -1)
        best[warp * 32 + lane] = candidate
        score, priority, candidate = warp_argmax(float(length % 7), int64(length % 3), lane if length > 0 else -1, 8)
        best_of_eight[warp * 32 + lane] = candidate
        row_first, first, stop, step, start_row = warp_schedule(length, lane, row_end, 0)
        cuda.syncwarp()
        base = (warp * 32 + lane) * 5
        schedule[base] = row_first
        schedule[base + 1] = first
        schedule[base + 2] = stop
        schedule[base + 3] = step
        schedule[base + 4] = warp_next_row(first, start_row, row_end) if first < stop else -1

    return plan_kernel


def test_warp_code_compiles_to_ptx():
    from hgpart.cuda.warp import warp_plan

    kernel = _plan_kernel()
    signature = "void(int64[:], int64[:], int64[:], int32[:], int32[:], int64[:])"
    ptx, _ = cuda.compile_ptx(kernel.py_func, signature, cc=(9, 0))
    assert "shfl.sync.up" in ptx and "shfl.sync.idx" in ptx and "shfl.sync.bfly" in ptx
    assert warp_plan is not None


def _model_argmax(lengths, first_lane=0):
    """Higher score (length % 7), then higher priority (length % 3), then the smaller lane; -1 if none."""
    candidates = [(float(length % 7), length % 3, first_lane + lane) for lane, length in enumerate(lengths)
                  if length > 0]
    return -1 if not candidates else min(candidates, key=lambda item: (-item[0], -item[1], item[2]))[2]


@pytest.mark.gpu
def test_warp_plan_on_the_gpu_matches_the_model():
    from hgpart.cuda.arrays import SIMULATED

    rng = np.random.default_rng(0)
    warps = 6 if SIMULATED else 64
    lengths = rng.integers(0, 50, warps * 32)
    lengths[::97] *= 500  # heavy rows
    lengths[32:64] = 0  # an idle warp
    out = np.zeros(warps * 32 * 5, dtype=np.int64)
    sums = np.zeros(warps * 32, dtype=np.int64)
    best = np.zeros(warps * 32, dtype=np.int32)
    best_of_eight = np.zeros(warps * 32, dtype=np.int32)
    schedule_d = cuda.to_device(np.zeros(warps * 32 * 5, dtype=np.int64))
    _plan_kernel()[warps, 32](cuda.to_device(lengths), out_d := cuda.to_device(out), sums_d := cuda.to_device(sums),
                              best_d := cuda.to_device(best), eight_d := cuda.to_device(best_of_eight), schedule_d)
    schedule = schedule_d.copy_to_host().reshape(-1, 5)
    out, sums, best = out_d.copy_to_host().reshape(-1, 5), sums_d.copy_to_host(), best_d.copy_to_host()
    best_of_eight = eight_d.copy_to_host()
    for warp in range(warps):
        plan = plan_model(lengths[warp * 32:(warp + 1) * 32], width=32)
        rows = out[warp * 32:(warp + 1) * 32]
        for column, name in enumerate(["S_r", "S_c", "E_r", "E_c", "S"]):
            assert rows[:, column].tolist() == plan[name].tolist(), (warp, name)
        assert (sums[warp * 32:(warp + 1) * 32] == lengths[warp * 32:(warp + 1) * 32].sum()).all()
        assert (best[warp * 32:(warp + 1) * 32] == _model_argmax(lengths[warp * 32:(warp + 1) * 32])).all()
        for group in range(warp * 32, (warp + 1) * 32, 8):  # the segmented reduction: groups of 8 lanes
            expected = _model_argmax(lengths[group:group + 8], group - warp * 32)
            assert (best_of_eight[group:group + 8] == expected).all(), (warp, group)
        warp_lengths = lengths[warp * 32:(warp + 1) * 32]
        ends = np.cumsum(warp_lengths)
        for lane, positions in enumerate(schedule_model(warp_lengths, 32)):
            row_first, first, stop, step, row = schedule[warp * 32 + lane]
            assert row_first == ends[lane] - warp_lengths[lane]
            assert list(range(first, stop, step)) == positions, (warp, lane)
            assert row == (np.searchsorted(ends, positions[0], side="right") if positions else -1), (warp, lane)
