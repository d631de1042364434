"""``hgpart bench``: hgpart and its peers side by side on the same inputs, medians over repeats."""

from __future__ import annotations

import os
import tempfile
import time


def log_row(reporter, name: str, row: dict) -> None:
    """One measured row as a log line on stderr (floats to 4 significant digits, missing values left out)."""
    if reporter:
        reporter.log(f"{name}: " + ", ".join(f"{key} {value:.4g}" if isinstance(value, float) else f"{key} {value}"
                                             for key, value in row.items()
                                             if key != "instance" and value is not None and not isinstance(value, dict)))


def read_instance(path: str, merge: str) -> tuple:
    """(name, graph, read seconds) of a graph file, read as the CLI reads it (:func:`hgpart.io.read_graph`,
    parallel edges merged by ``merge``)."""
    from ..io import read_graph, strip_gz

    started = time.perf_counter()
    graph = read_graph(path, merge=merge)
    return os.path.basename(strip_gz(path)), graph, time.perf_counter() - started


def warm_up_reader(merge: str) -> float:
    """Read a tiny graph of each graph format (:func:`hgpart.io.warm_up.warm_up_reading`) as
    :func:`read_instance` reads, so that the first instance's ``read s`` times its reading, not numba loading or
    compiling the readers; returns seconds. The graph benches add it to their warm-up."""
    from ..io.warm_up import warm_up_reading

    return warm_up_reading(("metis", "mtx", "gr", "edgelist"), merge)


def read_seconds(graph, merge: str) -> float:
    """Seconds to read a generated graph as the CLI would read it: from a Matrix Market file of it (its weights
    may be reals, which METIS files cannot hold) written to a temporary folder first (:func:`read_instance`
    times a graph that has a file as it reads it)."""
    from ..io import write_graph

    with tempfile.TemporaryDirectory() as folder:
        written = os.path.join(folder, "graph.mtx")
        write_graph(graph, written)
        return read_instance(written, merge)[2]


def graph_instance(spec) -> tuple:
    """("file", path) or ("rmat", vertices, edge factor), unweighted, parallel edges merged by ``max`` (the
    cluster and triangles benches): (name, graph, read seconds)."""
    from .. import generate
    from ..hypergraph import Graph

    if spec[0] == "file":
        return read_instance(spec[1], "max")
    num_vertices, sources, targets, _ = generate.rmat(spec[1], seed=1, edge_factor=spec[2])
    graph = Graph.from_edges(num_vertices, sources, targets, merge="max")
    return f"rmat {num_vertices:,}", graph, read_seconds(graph, "max")


def end_to_end(row: dict, device: str, resident: float, from_host: float) -> None:
    """The three times of a graph command on ``device`` and the input edges per second of each, into ``row``
    (which holds ``edges`` and ``read s``, the file's read): ``resident s``, the graph already on the device in
    the command's form; ``host s``, from a host :class:`hgpart.Graph` as the Python API takes it (the upload
    included); ``file s``, from the file as the CLI runs it (``read s`` + ``host s``)."""
    seconds = {"resident": resident, "host": from_host, "file": row["read s"] + from_host}
    for name, value in seconds.items():
        row[f"{device} {name} s"] = value
        row[f"{device} {name} edges/s"] = row["edges"] / max(value, 1e-12)


def auto_choice(row: dict, command: str) -> None:
    """With both devices measured in ``row``: the device ``--device auto`` picks for this graph where a GPU is
    usable (:func:`hgpart.policy.auto_graph_device`) and its time from a host graph over the faster device's
    (1.0 when it picks the faster)."""
    from ..policy import auto_graph_device

    if "gpu host s" not in row or "cpu host s" not in row:
        return
    chosen = auto_graph_device(command, row["edges"])[0]
    row["auto device"] = chosen
    row["auto / faster"] = row[f"{chosen} host s"] / max(min(row["gpu host s"], row["cpu host s"]), 1e-12)
