"""Fast ASCII output of integer rows (numba), streamed in chunks."""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _digits(value):
    count = 1
    while value >= 10:
        value //= 10
        count += 1
    return count


@numba.njit(cache=True)
def _put_int(buffer, pos, value):
    if value < 0:
        buffer[pos] = 45
        pos += 1
        value = -value
    width = _digits(value)
    for i in range(width - 1, -1, -1):
        buffer[pos + i] = 48 + value % 10
        value //= 10
    return pos + width


@numba.njit(cache=True)
def format_rows(offsets, values, add, leading, has_leading, first_row, last_row):
    """ASCII text: row r is ``[leading[r]] values[offsets[r]:offsets[r+1]] + add`` separated by spaces.

    Rows [first_row, last_row) only, so callers can stream large files in chunks. Returns uint8[].
    """
    size = 0
    for r in range(first_row, last_row):
        count = 0
        if has_leading:
            size += _digits(abs(leading[r])) + (1 if leading[r] < 0 else 0)
            count += 1
        for p in range(offsets[r], offsets[r + 1]):
            size += _digits(abs(values[p] + add)) + (1 if values[p] + add < 0 else 0)
            count += 1
        size += max(count, 1)  # separators and the newline
    buffer = np.empty(size, dtype=np.uint8)
    pos = 0
    for r in range(first_row, last_row):
        first = True
        if has_leading:
            pos = _put_int(buffer, pos, leading[r])
            first = False
        for p in range(offsets[r], offsets[r + 1]):
            if not first:
                buffer[pos] = 32
                pos += 1
            pos = _put_int(buffer, pos, values[p] + add)
            first = False
        buffer[pos] = 10
        pos += 1
    return buffer[:pos]


def write_rows(handle, offsets, values, add=0, leading=None, chunk_entries: int = 1 << 24) -> None:
    """Stream :func:`format_rows` to a binary handle in chunks of about ``chunk_entries`` values."""
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.int64)
    has_leading = leading is not None
    leading = np.ascontiguousarray(leading if has_leading else np.zeros(1), dtype=np.int64)
    num_rows = offsets.shape[0] - 1
    row = 0
    while row < num_rows:
        end = int(np.searchsorted(offsets, offsets[row] + chunk_entries, side="right"))
        end = min(max(end - 1, row + 1), num_rows)
        handle.write(format_rows(offsets, values, add, leading, has_leading, row, end).tobytes())
        row = end
