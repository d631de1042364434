"""Tiny files read before a command's input, so that its read time is the reading, not numba loading or
compiling the readers (docs/tuning.md, "Compilation and warm-up")."""

from __future__ import annotations

import os
import tempfile
import time

from ..errors import InputError

# One triangle in each format: three two-pin nets (hMetis), three edges (the graph formats), a Matrix Market
# file with values and one without (the readers take different paths for them).
TINY_FILES = {
    "hgr": {"tiny.hgr": "3 3\n1 2\n2 3\n3 1\n"},
    "mtx": {"tiny.mtx": "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n2 1 1.5\n3 1 1\n3 2 2\n",
            "pattern.mtx": "%%MatrixMarket matrix coordinate pattern general\n3 3 3\n1 2\n2 3\n3 1\n"},
    "metis": {"tiny.graph": "3 3\n2 3\n1 3\n1 2\n"},
    "gr": {"tiny.gr": "p sp 3 3\na 1 2 1\na 2 3 1\na 3 1 1\n"},
    "edgelist": {"tiny.txt": "# SNAP edge list\n0\t1\n1\t2\n2\t0\n"},
}


def named_input_format(path: str, given: str | None) -> str | None:
    """The input's format where ``--format`` or its name tells it, else None (standard input without
    ``--format``, or a name without a known extension: its reading then compiles the reader itself)."""
    from . import detect_format

    try:
        return detect_format(path, None, given)
    except InputError:
        return None


def warm_up_reading(formats, merge: str | None = None, model: str = "row-net") -> float:
    """Read the tiny files of each of ``formats`` (keys of :data:`TINY_FILES`; None entries are skipped) as a
    command reads its input: as a graph, parallel edges merged by ``merge``, or, with ``merge`` None, as a
    hypergraph (Matrix Market by ``model``). Returns seconds."""
    from . import read_graph, read_hypergraph

    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        for kind in filter(None, formats):
            for name, text in TINY_FILES[kind].items():
                path = os.path.join(folder, name)
                with open(path, "w") as out:
                    out.write(text)
                if merge is None:
                    read_hypergraph(path, kind, model)
                else:
                    read_graph(path, kind, merge=merge)
    return time.perf_counter() - started
