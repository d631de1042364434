"""Commands on files: info, evaluate, convert, generate."""

from __future__ import annotations

import time

import click

from ..console import Reporter, print_json
from ..errors import InputError
from .options import (FORMAT_CHOICE, epilog, format_option, json_option, library_errors, model_option, quiet_option,
                      seed_option)


# -------------------------------------------------------------------------------------------- info
@click.command(epilog=epilog("hgpart info data/ibm01.hgr --json"))
@click.argument("file")
@format_option
@model_option
@json_option
@quiet_option
@library_errors
def info(file, file_format, model, as_json, quiet):
    """Sizes, weights and degree / net-size statistics (as in Table II of Cheng, Cho and Yoon 2015) of FILE."""
    from ..io import read_hypergraph
    from ..stats import hypergraph_info

    started = time.perf_counter()
    hypergraph = read_hypergraph(file, file_format, model)
    summary = {"file": file, **hypergraph_info(hypergraph), "read_seconds": time.perf_counter() - started}
    if as_json:
        print_json(summary)
    reporter = Reporter(quiet or as_json)
    flat = {k: v for k, v in summary.items() if not isinstance(v, dict)}
    reporter.mapping(f"hypergraph {file}", flat)
    columns = ["statistic", "min", "q1", "median", "q3", "max", "mean"]
    rows = [[name] + list(summary[name].values()) for name in ("vertex_degree", "net_size")]
    reporter.table("distributions", columns, rows)


# ---------------------------------------------------------------------------------------- evaluate
@click.command(epilog=epilog("hgpart evaluate data/ibm01.hgr ibm01.part.8 -k 8 --json"))
@click.argument("file")
@click.argument("partition_file", metavar="PARTITION")
@click.option("-k", "k", type=click.IntRange(min=1), default=None, help="Number of blocks (default: max id + 1).")
@click.option("-e", "--epsilon", type=click.FloatRange(min=0), default=0.03, show_default=True,
              help="Allowed imbalance for the 'balanced' verdict.")
@format_option
@model_option
@json_option
@quiet_option
@library_errors
def evaluate(file, partition_file, k, epsilon, file_format, model, as_json, quiet):
    """km1, cut, soed, block weights and imbalance of a partition (one block id per line)."""
    from ..io import read_hypergraph, read_partition
    from ..metrics import evaluate as evaluate_partition

    if file == "-" and partition_file == "-":
        raise InputError("FILE and PARTITION cannot both be stdin")
    hypergraph = read_hypergraph(file, file_format, model)
    partition = read_partition(partition_file, hypergraph.num_vertices, k)
    metrics = evaluate_partition(hypergraph, partition, k, epsilon)
    summary = {"file": file, "partition": partition_file, "epsilon": epsilon, **metrics.to_dict()}
    if as_json:
        print_json(summary)
    Reporter(quiet or as_json).mapping(f"partition {partition_file}", summary)


# ----------------------------------------------------------------------------------------- convert
@click.command(epilog=epilog("hgpart convert data/karate.graph karate.hgr"))
@click.argument("source")
@click.argument("target")
@click.option("--from", "source_format", type=FORMAT_CHOICE, default=None, help="Format of SOURCE.")
@click.option("--to", "target_format", type=FORMAT_CHOICE, default=None, help="Format of TARGET.")
@model_option
@json_option
@quiet_option
@library_errors
def convert(source, target, source_format, target_format, model, as_json, quiet):
    """Convert SOURCE to TARGET (formats from the extensions); the target is written atomically."""
    from ..hypergraph import Hypergraph
    from ..io import convert as convert_file

    if target == "-" and as_json:
        raise InputError("--json and TARGET '-' would both write to stdout")
    written = convert_file(source, target, source_format, target_format, model)
    if isinstance(written, Hypergraph):
        summary = {"source": source, "target": target, "vertices": written.num_vertices,
                   "nets": written.num_nets, "pins": written.num_pins}
    else:
        summary = {"source": source, "target": target, "vertices": written.num_vertices, "edges": written.num_edges}
    if as_json:
        print_json(summary)
    Reporter(quiet or as_json).mapping("converted", summary)


# ---------------------------------------------------------------------------------------- generate
@click.command(epilog=epilog("hgpart generate long-tailed -n 1000000 --seed 1 -o lt1m.hgr"))
@click.argument("kind", metavar="CLASS", type=click.Choice(["long-tailed", "evenly", "grid", "uniform", "synthetic",
                                                            "rmat", "gnm"]))
@click.option("-n", "n", type=click.IntRange(min=1, max=2**31 - 1), required=True,
              help="Vertices (grid: rounded to a square; rmat: up to a power of two).")
@seed_option
@click.option("-o", "--output", required=True, help="Output file (- for stdout; format from the extension).")
@click.option("--format", "file_format", type=FORMAT_CHOICE, default=None, help="Output format.")
@click.option("-d", "net_size", type=click.IntRange(min=1), default=4, show_default=True,
              help="uniform: pins per net.")
@click.option("-m", "num_edges", type=click.IntRange(min=1), default=None, help="gnm: edges (default 8n).")
@click.option("--edge-factor", type=click.IntRange(min=1), default=16, show_default=True, help="rmat: edges per vertex.")
@click.option("--weights", type=click.Choice(["none", "int", "float"]), default="none", show_default=True,
              help="rmat/gnm: edge weights (int: 1..100, float: uniform in [0, 1)).")
@json_option
@quiet_option
@library_errors
def generate(kind, n, seed, output, file_format, net_size, num_edges, edge_factor, weights, as_json, quiet):
    """Write a seeded random instance of CLASS (the input classes of Cheng, Cho and Yoon 2015, R-MAT, G(n, m))."""
    from .. import generate as generators
    from ..io import detect_format, write_edgelist, write_graph, write_hypergraph
    from ..hypergraph import Graph

    if output == "-" and as_json:
        raise InputError("--json and -o - would both write to stdout")
    started = time.perf_counter()
    if kind in generators.HYPERGRAPH_GENERATORS:
        target = detect_format(output, None, file_format) if (file_format or output != "-") else "hgr"
        if target not in ("hgr", "mtx"):
            raise InputError(f"a hypergraph class is written as hgr or mtx, not {target}", output)
        extra = {"d": net_size} if kind == "uniform" else {}
        hypergraph = generators.HYPERGRAPH_GENERATORS[kind](n, seed=seed, **extra)
        generated = time.perf_counter()
        write_hypergraph(hypergraph, output, target)
        summary = {"class": kind, "vertices": hypergraph.num_vertices, "nets": hypergraph.num_nets,
                   "pins": hypergraph.num_pins}
    else:
        target = detect_format(output, None, file_format) if (file_format or output != "-") else "edgelist"
        weight_kind = None if weights == "none" else weights
        if kind == "rmat":
            num_vertices, sources, targets, edge_weights = generators.rmat(n, seed, edge_factor, weight_kind)
        else:
            num_vertices, sources, targets, edge_weights = generators.gnm(n, seed, num_edges, weight_kind)
        generated = time.perf_counter()
        if target == "edgelist":
            write_edgelist(sources, targets, edge_weights, output)
        else:
            write_graph(Graph.from_edges(num_vertices, sources, targets, edge_weights, merge="min"), output, target)
        summary = {"class": kind, "vertices": num_vertices, "edges": int(sources.shape[0])}
    summary.update({"seed": seed, "output": output, "format": target,
                    "generate_seconds": generated - started, "write_seconds": time.perf_counter() - generated})
    if as_json:
        print_json(summary)
    Reporter(quiet or as_json).mapping(f"generated {kind}", summary)


