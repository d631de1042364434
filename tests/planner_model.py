"""A plain numpy model of the per-warp task planner (collaborative planning) of L. Cheng, H. Cho and P. Yoon,
"An Accelerated Procedure for Hypergraph Coarsening on the GPU", IEEE HPEC 2015 (Fig. 5).

A warp holds up to ``width`` work rows (lane l owns row l, with ``lengths[l]`` entries). The planner
gives every lane an equal share ceil(S / width) of the S (row, entry) pairs, as the half-open range
(S_r, S_c) - (E_r, E_c) of 2-D coordinates. Each step mirrors a line of Fig. 5, so the model and the
CUDA device function (:func:`hgpart.cuda.warp.warp_plan`) can be compared value by value; Table I of
the paper is its worked example.

One change from the figure: line 9 sets L = ceil(S / w) (l + 1), which runs past S and leaves the last
lanes idle whenever w does not divide S (S = 33 on 32 lanes: 16 lanes take 2, one takes 1, 15 take
none). We use L = floor((l + 1) S / w): the same numbers whenever w divides S (Table I), and otherwise
every lane takes floor(S / w) or ceil(S / w) entries. ``rule="figure"`` computes the figure's L (clamped
to S) for comparison.
"""

from __future__ import annotations

import numpy as np


def plan_model(lengths, width: int | None = None, rule: str = "balanced") -> dict:
    """Every local variable of Fig. 5, lines 5-21, as int64 arrays indexed by lane.

    Parameters
    ----------
    lengths : int[width]
        a(l): entries of lane l's row (lanes without a row pass 0).
    width : int, optional
        Lanes in the warp (32 on the GPU; Table I uses 4). Defaults to ``len(lengths)``.
    rule : {"balanced", "figure"}
        L = floor((l + 1) S / w) (default), or the figure's ceil(S / w) (l + 1) clamped to S.
    """
    a = np.asarray(lengths, dtype=np.int64)
    width = a.shape[0] if width is None else width
    if a.shape != (width,):
        raise ValueError(f"expected {width} lengths, got {a.shape[0]}")
    lanes = np.arange(width, dtype=np.int64)
    b = np.cumsum(a)                                # line 6: inclusive warp scan
    total = np.full(width, b[-1])                   # line 7: S = SHFL(b, w - 1)
    b_exclusive = b - a                             # line 8
    share = -(-total // width)                      # ceil(S / w)
    if rule == "figure":
        limit = np.minimum(share * (lanes + 1), total)  # line 9 as printed, clamped
    elif rule == "balanced":
        limit = (lanes + 1) * total // width            # line 9, balanced
    else:
        raise ValueError(f"unknown rule {rule!r}")
    end_row = np.zeros(width, dtype=np.int64)       # lines 10-14: largest z with b'(z) < L
    for z in range(width):
        end_row = np.where(b_exclusive[z] < limit, z, end_row)
    shuffled = b_exclusive[end_row]                 # SHFL(b', E_r)
    end_col = limit - shuffled                      # line 15
    start_row = np.concatenate([[0], end_row[:-1]])  # lines 16-21: shift up by one lane, lane 0 starts at 0
    start_col = np.concatenate([[0], end_col[:-1]])
    return {"a": a, "b": b, "S": total, "b_exclusive": b_exclusive, "share": share, "L": limit, "E_r": end_row,
            "shfl_b_E_r": shuffled, "E_c": end_col, "S_r": start_row, "S_c": start_col}


def entries_of_lane(plan: dict, lane: int) -> list[tuple[int, int]]:
    """The (row, entry) pairs that ``lane`` processes: from (S_r, S_c) up to, not including, (E_r, E_c)."""
    a = plan["a"]
    row, col = int(plan["S_r"][lane]), int(plan["S_c"][lane])
    end_row, end_col = int(plan["E_r"][lane]), int(plan["E_c"][lane])
    pairs = []
    while (row, col) < (end_row, end_col) and row < a.shape[0]:
        if col < a[row]:
            pairs.append((row, col))
            col += 1
        else:
            row, col = row + 1, 0
    return pairs


def schedule_model(lengths, width: int | None = None) -> list[list[int]]:
    """The positions each lane takes under :func:`hgpart.cuda.warp.warp_schedule`, the rows laid end to end
    (row r's entries at b'(r) .. b(r) - 1): strided (lane, lane + w, ...) when the rows hold w entries or
    more on average (S >= w times the non-empty rows), else Fig. 5's contiguous shares L(l - 1) .. L(l) - 1."""
    a = np.asarray(lengths, dtype=np.int64)
    width = a.shape[0] if width is None else width
    total = int(a.sum())
    if total >= width * int(np.count_nonzero(a)):
        return [list(range(lane, total, width)) for lane in range(width)]
    return [list(range(lane * total // width, (lane + 1) * total // width)) for lane in range(width)]
