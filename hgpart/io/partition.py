"""Partition files and hMetis fix files: one 0-based block id per line, in vertex order."""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..hypergraph import INT32_MAX
from .files import atomic_output, read_bytes
from .text import write_rows
from .tokens import tokenize


def parse_block_ids(data: bytes, file: str, num_vertices: int, k: int | None, allow_free: bool = False) -> np.ndarray:
    """Parse one block id per line. ``k`` None accepts any non-negative id; ``allow_free`` accepts -1.

    Returns
    -------
    int32[num_vertices]
    """
    tokens = tokenize(data, file, comment_chars=b"%#")
    wrong = np.flatnonzero(tokens.counts() != 1)
    if wrong.size:
        raise InputError("each line must hold exactly one block id", file, int(tokens.line_number[wrong[0]]))
    if tokens.num_lines != num_vertices:
        line = int(tokens.line_number[num_vertices]) if tokens.num_lines > num_vertices else (
            int(tokens.line_number[-1]) if tokens.num_lines else 1)
        raise InputError(f"expected {num_vertices} lines (one per vertex), found {tokens.num_lines}", file, line)
    blocks = tokens.require_int(0, tokens.values.shape[0], file, "an integer block id")
    low = -1 if allow_free else 0
    high = k - 1 if k is not None else INT32_MAX
    bad = np.flatnonzero((blocks < low) | (blocks > high))
    if bad.size:
        raise InputError(f"block id {blocks[bad[0]]} is out of range {low}..{high}", file,
                         int(tokens.line_number[bad[0]]))
    return blocks.astype(np.int32)


def read_partition(path: str, num_vertices: int, k: int | None = None) -> np.ndarray:
    """Read a partition file (``-`` for stdin) of ``num_vertices`` lines; ids in [0, k)."""
    return parse_block_ids(read_bytes(path), path, num_vertices, k)


def read_fixed(path: str, num_vertices: int, k: int) -> np.ndarray:
    """Read an hMetis fix file: per vertex a block in [0, k) or -1 for free. int32[num_vertices]."""
    return parse_block_ids(read_bytes(path), path, num_vertices, k, allow_free=True)


def write_partition(partition: np.ndarray, path: str) -> None:
    """Write one block id per line, atomically (``-`` is stdout)."""
    partition = np.ascontiguousarray(partition, dtype=np.int64)
    with atomic_output(path, binary=True) as handle:
        write_rows(handle, np.arange(partition.shape[0] + 1, dtype=np.int64), partition)
