"""The command line: a thin layer over the library. One function per command, shared option decorators.

Errors reach the user as one line ``Error: FILE:LINE: message`` on stderr with a non-zero exit.
"""

from __future__ import annotations

import functools
import os
import sys
import time

import click

from . import __version__
from .console import Reporter, print_json
from .errors import DeviceError, DeviceMemoryError, InfeasibleError, InputError

FORMAT_CHOICE = click.Choice(["hgr", "mtx", "metis", "gr", "edgelist"])


class HgpartGroup(click.Group):
    """A click group whose every failure is one ``Error:`` line on stderr, never a traceback."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name or "hgpart", complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            click.echo("Error: aborted", err=True)
            sys.exit(130)
        except click.ClickException as error:
            click.echo(f"Error: {error.format_message()}", err=True)
            sys.exit(error.exit_code)
        except (InputError, DeviceError, InfeasibleError) as error:
            click.echo(f"Error: {error}", err=True)
            sys.exit(1)
        except MemoryError:
            click.echo("Error: out of memory", err=True)
            sys.exit(1)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(141)
        except KeyboardInterrupt:
            click.echo("Error: interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


def library_errors(command):
    """Turn library errors into ClickException so CliRunner and the shell see the same one line."""

    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except (InputError, DeviceError, InfeasibleError) as error:
            raise click.ClickException(str(error)) from None

    return wrapper


# ------------------------------------------------------------------------------------ shared options
def json_option(command):
    return click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")(command)


def quiet_option(command):
    return click.option("-q", "--quiet", is_flag=True, help="Print nothing on stderr but errors.")(command)


def format_option(command):
    return click.option("--format", "file_format", type=FORMAT_CHOICE, default=None,
                        help="Input format (default: from the extension; needed for stdin).")(command)


def model_option(command):
    return click.option("--model", type=click.Choice(["row-net", "column-net"]), default="row-net",
                        show_default=True, help="Matrix Market: rows are nets (row-net) or columns are.")(command)


def seed_option(command):
    return click.option("--seed", type=int, default=0, show_default=True, help="Random seed.")(command)


def device_option(command):
    return click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True,
                        help="Where to run: the GPU when usable (auto), the numba CPU path, or the GPU.")(command)


def threads_option(command):
    return click.option("--threads", type=click.IntRange(min=1), default=None,
                        help="CPU threads for numba (default: all cores).")(command)


def set_threads(threads: int | None) -> int:
    import numba

    if threads is not None:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    return numba.get_num_threads()


def coarsening_options(command):
    """--rating and --max-rated-net-size: how coarsening rates neighbours."""
    command = click.option("--max-rated-net-size", type=click.IntRange(min=2), default=1000, show_default=True,
                           help="Nets with more pins are skipped when rating neighbours.")(command)
    return click.option("--rating", default="heavy-edge", show_default=True,
                        help="heavy-edge: shared nets add w(e)/(|e|-1); inner-product: w(e) (seed 000 Eq. 7-8). "
                             "bench takes a comma-separated list and runs each.")(command)


def coarsening_config(rating: str, max_rated_net_size: int):
    from dataclasses import replace

    from .config import CoarseningConfig

    if rating not in ("heavy-edge", "inner-product"):
        raise click.BadParameter(f"unknown rating {rating!r} (heavy-edge or inner-product)", param_hint="--rating")
    return replace(CoarseningConfig(), rating=rating, max_rated_net_size=max_rated_net_size)


def input_options(command):
    """--format and --model: how FILE is read."""
    return format_option(model_option(command))


def job_options(command):
    """--threads, --json, -q and one-line errors, shared by the commands that run a computation."""
    return threads_option(json_option(quiet_option(library_errors(command))))


def bench_output_options(command):
    """--save and --cpu-path/--no-cpu-path, shared by the benches that run a GPU path beside its CPU twin."""
    command = click.option("--cpu-path/--no-cpu-path", default=True, show_default=True,
                           help="With --device gpu: also run the CPU path beside the GPU (off for inputs too "
                                "large for it).")(command)
    return click.option("--save", default=None, help="Also write the JSON report to this file.")(command)


def print_summary(reporter, title: str, summary: dict, as_json: bool) -> None:
    """A command's summary: JSON on stdout with --json; on stderr as key: value lines, seconds per phase
    flattened (lists left out)."""
    if as_json:
        print_json(summary)
    flat = {key: value for key, value in summary.items() if key != "seconds" and not isinstance(value, list)}
    flat.update({f"{phase} s": value for phase, value in summary.get("seconds", {}).items()})
    reporter.mapping(title, flat)


def row_table(reporter, title: str, rows: list[dict]) -> None:
    """A bench's rows as one table: every key any row has is a column (nested dicts, such as per-phase
    seconds, stay in the JSON only); missing values show as '-'."""
    columns = list(dict.fromkeys(key for row in rows for key, value in row.items() if not isinstance(value, dict)))
    reporter.table(title, columns, [["-" if row.get(column) is None else row[column] for column in columns]
                                    for row in rows])


def save_report(report: dict, save: str | None, as_json: bool) -> None:
    """A bench's JSON report: to the --save file (atomically) and, with --json, on stdout."""
    import json

    from .io import atomic_output

    if save:
        with atomic_output(save) as handle:
            handle.write(json.dumps(report, indent=1) + "\n")
    if as_json:
        print_json(report)


def start_job(device: str, threads: int | None, quiet: bool, as_json: bool, gpu_implemented: bool = False):
    """Set the thread count and pick the device; returns (reporter, device used, threads)."""
    from .device import resolve_device

    reporter = Reporter(quiet or as_json)
    used_threads = set_threads(threads)
    device_used, note = resolve_device(device, gpu_implemented)
    if note:  # a fallback is a warning: on stderr even with --json, silenced only by -q
        Reporter(quiet).log(f"note: {note}")
    return reporter, device_used, used_threads


def start_graph_job(file: str, file_format, merge: str, output, device: str, threads, quiet: bool, as_json: bool,
                    warm_up):
    """The start shared by the graph commands: check -o against --json, pick the device, read the graph
    (parallel edges merged by ``merge``) and compile the kernels (``warm_up(device)``). Returns (reporter,
    device used, graph, read seconds, JIT seconds)."""
    from .io import read_graph

    if output == "-" and as_json:
        raise InputError("--json and -o - would both write to stdout; give -o a file")
    reporter, device_used, _ = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    started = time.perf_counter()
    graph = read_graph(file, file_format, merge=merge)
    read_seconds = time.perf_counter() - started
    return reporter, device_used, graph, read_seconds, warm_up(device_used)


def epilog(example: str) -> str:
    return "\b\nExample:\n  " + example


@click.group(cls=HgpartGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="hgpart", message="%(prog)s %(version)s")
def cli():
    """Partition hypergraphs and analyse sparse graphs on NVIDIA GPUs, with a numba CPU path.

    Files: hMetis .hgr, Matrix Market .mtx, METIS .graph, DIMACS .gr, edge lists (.txt/.csv);
    .gz is read transparently and - means stdin/stdout.
    """


# -------------------------------------------------------------------------------------------- info
@cli.command(epilog=epilog("hgpart info data/ibm01.hgr --json"))
@click.argument("file")
@format_option
@model_option
@json_option
@quiet_option
@library_errors
def info(file, file_format, model, as_json, quiet):
    """Sizes, weights and degree / net-size statistics (seed 000 Table II) of FILE."""
    from .io import read_hypergraph
    from .stats import hypergraph_info

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
@cli.command(epilog=epilog("hgpart evaluate data/ibm01.hgr ibm01.part.8 -k 8 --json"))
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
    from .io import read_hypergraph, read_partition
    from .metrics import evaluate as evaluate_partition

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
@cli.command(epilog=epilog("hgpart convert data/karate.graph karate.hgr"))
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
    from .hypergraph import Hypergraph
    from .io import convert as convert_file

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
@cli.command(epilog=epilog("hgpart generate long-tailed -n 1000000 --seed 1 -o lt1m.hgr"))
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
    """Write a seeded random instance of CLASS (seed 000's input classes, R-MAT, G(n, m))."""
    from . import generate as generators
    from .io import detect_format, write_edgelist, write_graph, write_hypergraph
    from .hypergraph import Graph

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


# --------------------------------------------------------------------------------------- partition
@cli.command(epilog=epilog("hgpart partition data/ibm01.hgr -k 8 --seed 1 -o ibm01.part.8 --json"))
@click.argument("file")
@click.option("-k", "k", type=click.IntRange(min=1), required=True, help="Number of blocks.")
@click.option("-e", "--epsilon", type=click.FloatRange(min=0), default=0.03, show_default=True,
              help="Imbalance: every block weighs at most (1 + eps) * ceil(total / k).")
@click.option("--objective", type=click.Choice(["km1", "cut"]), default="km1", show_default=True,
              help="km1: sum of w(e) (lambda(e) - 1); cut: weight of nets spanning several blocks.")
@seed_option
@device_option
@click.option("--preset", type=click.Choice(["fast", "default", "quality"]), default="default", show_default=True)
@click.option("--fixed", "fixed_file", default=None, help="hMetis fix file: a block id or -1 per vertex.")
@click.option("-o", "--output", default=None, help="Partition file (default FILE.part.K; - for stdout).")
@coarsening_options
@input_options
@job_options
def partition(file, k, epsilon, objective, seed, device, preset, fixed_file, output, rating, max_rated_net_size,
              file_format, model, threads, as_json, quiet):
    """Partition FILE into K blocks (multilevel: coarsen, initial partition, refine); write one block id per line."""
    from .io import read_fixed, read_hypergraph, strip_gz, write_partition
    from .config import make_config
    from .multilevel import partition as run_partition
    from .multilevel import warm_up

    config = make_config(k, epsilon, objective, seed, preset,
                         coarsening=coarsening_config(rating, max_rated_net_size))
    output = output or ("-" if file == "-" else f"{strip_gz(file)}.part.{k}")
    if output == "-" and as_json:
        raise InputError("--json and -o - would both write to stdout; give -o a file")
    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    started = time.perf_counter()
    hypergraph = read_hypergraph(file, file_format, model)
    fixed = read_fixed(fixed_file, hypergraph.num_vertices, k) if fixed_file else None
    read_seconds = time.perf_counter() - started
    jit_seconds = warm_up(objective, device_used, hypergraph.num_pins)
    try:
        result = run_partition(hypergraph, k, fixed=fixed, config=config, device=device_used)
    except DeviceMemoryError as error:
        if device != "auto":
            raise
        Reporter(quiet).log(f"note: {error.args[0].split('; ')[0]}; running on the CPU")
        device_used = "cpu"
        result = run_partition(hypergraph, k, fixed=fixed, config=config, device=device_used)
    write_partition(result.partition, output)
    metrics = result.metrics
    summary = {"file": file, "output": output, "k": k, "epsilon": epsilon, "objective": objective, "seed": seed,
               "preset": preset, "rating": rating, "device": device_used, "threads": used_threads,
               "vertices": hypergraph.num_vertices,
               "nets": hypergraph.num_nets, "pins": hypergraph.num_pins, "km1": metrics.km1, "cut": metrics.cut,
               "soed": metrics.soed, "imbalance": metrics.imbalance, "balanced": metrics.balanced,
               "max_block_weight": metrics.max_block_weight, "block_weights": list(metrics.block_weights),
               "levels": len(result.levels), "device_memory_bytes": result.device_memory_bytes,
               "seconds": {"read": read_seconds, **result.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"partition of {file} into {k} blocks", summary, as_json)


# ----------------------------------------------------------------------------------------- cluster
@cli.command(epilog=epilog("hgpart cluster data/karate.graph -o karate.clusters --json"))
@click.argument("file")
@click.option("-o", "--output", default=None, help="Cluster ids, one per vertex (default FILE.clusters; - for stdout).")
@seed_option
@device_option
@click.option("--tries", type=click.IntRange(min=0), default=0, show_default=True,
              help="Independent runs whose core groups are clustered again (0: 8 up to 1M edges, fewer above).")
@format_option
@job_options
def cluster(file, output, seed, device, tries, file_format, threads, as_json, quiet):
    """Cluster the vertices of the graph FILE for high modularity (seed 002 agglomeration + local moving).

    Writes one cluster id per line (0-based, vertex order). Reads METIS .graph, Matrix Market, edge lists
    (weighted or not); direction is ignored, parallel edges count once (the heaviest), self loops are dropped."""
    from dataclasses import replace

    from .config import ClusterConfig
    from .graphs.clustering import cluster as run_cluster
    from .graphs.clustering import warm_up
    from .io import strip_gz, write_partition

    output = output or ("-" if file == "-" else f"{strip_gz(file)}.clusters")
    reporter, device_used, graph, read_seconds, jit_seconds = start_graph_job(
        file, file_format, "max", output, device, threads, quiet, as_json, warm_up)
    result = run_cluster(graph, replace(ClusterConfig(), seed=seed, tries=tries), device=device_used)
    write_partition(result.clusters, output)
    summary = {"file": file, "output": output, "device": device_used, "seed": seed, "vertices": graph.num_vertices,
               "edges": graph.num_edges, "clusters": result.num_clusters, "modularity": result.modularity,
               "levels": len(result.levels), "seconds": {"read": read_seconds, **result.seconds},
               "jit_seconds": jit_seconds}
    print_summary(reporter, f"clustering of {file}", summary, as_json)


# --------------------------------------------------------------------------------------------- mst
@cli.command(epilog=epilog("hgpart mst ../shared/data/rome99.gr.gz -o rome99.forest --json"))
@click.argument("file")
@click.option("-o", "--output", default=None, help="Write the forest's edges as 'u v w' lines (0-based; - for stdout).")
@device_option
@format_option
@job_options
def mst(file, output, device, file_format, threads, as_json, quiet):
    """Minimum spanning forest of the graph FILE (Borůvka from data-parallel primitives, seed 003).

    Reports total weight, forest edges and components. Reads DIMACS .gr, METIS .graph, Matrix Market and edge
    lists; direction is ignored, self loops dropped, parallel edges (and a general matrix's (i,j) beside
    (j,i)) reduced to the lightest."""
    from .graphs.spanning_forest import minimum_spanning_forest, warm_up
    from .io import write_edgelist

    reporter, device_used, graph, read_seconds, jit_seconds = start_graph_job(
        file, file_format, "min", output, device, threads, quiet, as_json, warm_up)
    forest = minimum_spanning_forest(graph, device_used)
    if output:
        write_edgelist(forest.sources, forest.targets, forest.weights, output)
    summary = {"file": file, "output": output, "device": device_used, "vertices": graph.num_vertices,
               "edges": graph.num_edges, "total_weight": forest.total_weight, "forest_edges": int(forest.weights.shape[0]),
               "components": forest.num_components, "iterations": forest.iterations,
               "seconds": {"read": read_seconds, **forest.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"minimum spanning forest of {file}", summary, as_json)


# ---------------------------------------------------------------------------------------- triangles
@cli.command(epilog=epilog("hgpart triangles ../shared/data/facebook_combined.txt.gz --list - -q | head"))
@click.argument("file")
@click.option("--list", "list_output", default=None, help="Write every triangle as 'u v w' (0-based, u < v < w; - for "
                                                         "stdout).")
@click.option("--per-vertex", "per_vertex_output", default=None,
              help="Write 'triangles clustering-coefficient' per vertex, one line each (- for stdout).")
@device_option
@format_option
@job_options
def triangles(file, list_output, per_vertex_output, device, file_format, threads, as_json, quiet):
    """Count triangles of the graph FILE exactly; clustering coefficients; optionally list them (seed 004).

    Direction, duplicate edges, weights and self loops are ignored."""
    import numpy as np

    from .graphs.triangles import Triangles, warm_up
    from .io import atomic_output
    from .io.text import write_rows

    if [list_output, per_vertex_output].count("-") > 1 or ("-" in (list_output, per_vertex_output) and as_json):
        raise InputError("only one of --json, --list - and --per-vertex - can write to stdout")
    reporter, device_used, graph, read_seconds, jit_seconds = start_graph_job(
        file, file_format, "max", list_output or per_vertex_output, device, threads, quiet, as_json, warm_up)
    prepared = Triangles(graph, device_used)
    result = prepared.count()
    if list_output:
        started = time.perf_counter()
        with atomic_output(list_output, binary=True) as handle:
            for chunk in prepared.chunks():
                write_rows(handle, np.arange(0, 3 * chunk.shape[0] + 1, 3, dtype=np.int64), chunk.ravel())
        result.seconds["list"] = time.perf_counter() - started
    if per_vertex_output:
        with atomic_output(per_vertex_output) as handle:
            handle.write("".join(f"{count} {coefficient!r}\n" for count, coefficient in
                                 zip(result.per_vertex.tolist(), result.clustering.tolist())))
    summary = {"file": file, "device": device_used, "vertices": graph.num_vertices, "edges": graph.num_edges,
               "triangles": result.count, "average_clustering": result.average_clustering,
               "transitivity": result.transitivity, "list": list_output, "per_vertex": per_vertex_output,
               "seconds": {"read": read_seconds, **result.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"triangles of {file}", summary, as_json)


# ----------------------------------------------------------------------------------------- coarsen
@cli.command(epilog=epilog("hgpart coarsen data/ibm01.hgr --levels 5 --out-dir levels/ --json"))
@click.argument("file")
@click.option("--levels", type=click.IntRange(min=1), default=100, show_default=True,
              help="Levels to run at most (fewer when the stop rule ends coarsening).")
@click.option("-k", "k", type=click.IntRange(min=1), default=2, show_default=True,
              help="Blocks the hierarchy is meant for: stop at about 160 k vertices.")
@click.option("-e", "--epsilon", type=click.FloatRange(min=0), default=0.03, show_default=True,
              help="Imbalance (bounds the weight of a coarse vertex).")
@device_option
@click.option("--out-dir", default=None, help="Write each coarse level as LEVEL.hgr and its map LEVEL.map here.")
@coarsening_options
@input_options
@job_options
def coarsen(file, levels, k, epsilon, device, out_dir, rating, max_rated_net_size, file_format, model, threads,
            as_json, quiet):
    """Coarsen FILE level by level (Mondriaan similarity, matching, contraction) and report each level."""
    from .coarsening import coarsen as run_coarsen
    from .io import read_hypergraph, write_hypergraph, write_partition
    from .multilevel import warm_up

    reporter, device_used, _ = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    hypergraph = read_hypergraph(file, file_format, model)
    jit_seconds = warm_up(input_pins=hypergraph.num_pins)
    config = coarsening_config(rating, max_rated_net_size)
    hierarchy = run_coarsen(hypergraph, k, config, epsilon, max_levels=levels, device=device_used)
    rows = [{"level": 0, "vertices": hypergraph.num_vertices, "nets": hypergraph.num_nets, "pins": hypergraph.num_pins,
             "matched": 0.0, "seconds": 0.0}]
    coarse_levels = [level.hypergraph for level in hierarchy.levels[1:]] + [hierarchy.coarsest]
    for index, (level, coarse) in enumerate(zip(hierarchy.levels, coarse_levels), start=1):
        rows.append({"level": index, "vertices": coarse.num_vertices, "nets": coarse.num_nets, "pins": coarse.num_pins,
                     "matched": 1.0 - coarse.num_vertices / max(1, level.hypergraph.num_vertices),
                     "seconds": level.seconds})
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
            write_hypergraph(coarse, os.path.join(out_dir, f"level{index}.hgr"))
            write_partition(level.cluster, os.path.join(out_dir, f"level{index}.map"))
    if as_json:
        print_json({"file": file, "device": device_used, "rating": rating, "jit_seconds": jit_seconds, "levels": rows})
    reporter.table(f"coarsening of {file} ({device_used})", ["level", "vertices", "nets", "pins", "matched", "seconds"],
                   [list(row.values()) for row in rows])


# ------------------------------------------------------------------------------------------- bench
def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"expected positive integers, got {text!r}")
    return values


class DefaultGroup(click.Group):
    """A group that runs ``default_command`` when the first argument names no subcommand."""

    default_command = "partition"

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@cli.group(cls=DefaultGroup, epilog=epilog("hgpart bench --suite shared -k 2,8,32 --repeat 3"))
def bench():
    """Measure side by side in one run: partitioning against the peers (default), or coarsening GPU vs CPU."""


@bench.command("partition", epilog=epilog("hgpart bench --suite shared -k 2,8,32 --peers mtkahypar --repeat 3 "
                                          "--save bench.json"))
@click.argument("files", nargs=-1)
@click.option("--suite", type=click.Choice(["default", "small", "shared"]), default=None,
              help="Named instance set when no FILES are given (default: ../shared/data, else data/).")
@click.option("-k", "k_list", default="2,8,32", show_default=True, help="Comma-separated numbers of blocks.")
@click.option("-e", "--epsilon", type=click.FloatRange(min=0), default=0.03, show_default=True)
@click.option("--objective", type=click.Choice(["km1", "cut"]), default="km1", show_default=True)
@click.option("--preset", type=click.Choice(["fast", "default", "quality"]), default="default", show_default=True)
@device_option
@click.option("--peers", default="mtkahypar", show_default=True,
              help="Comma-separated peers to run beside hgpart (mtkahypar, kahypar) or 'none'.")
@click.option("--kahypar-config", default=None, help="KaHyPar .ini preset (its Python package ships none).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per cell with seeds 0..N-1; medians are reported.")
@bench_output_options
@coarsening_options
@job_options
def bench_partition(files, suite, k_list, epsilon, objective, preset, device, peers, kahypar_config, repeat, save,
                    cpu_path, rating, max_rated_net_size, threads, as_json, quiet):
    """Partition instances with hgpart and its peers side by side; km1, imbalance, seconds and ratios."""
    from .bench.peers import PEERS
    from .bench.runner import comparison, run_bench
    from .bench.runner import suite as suite_files
    from .multilevel import warm_up

    ks = _int_list(k_list)
    peer_list = [] if peers.strip() == "none" else [p.strip() for p in peers.split(",") if p.strip()]
    unknown = [p for p in peer_list if p not in PEERS]
    if unknown:
        raise InputError(f"unknown peer {unknown[0]!r} (mtkahypar, kahypar or none)")
    if files and suite:
        raise InputError("give FILES or --suite, not both")
    paths = list(files) or suite_files(suite or "default")
    if not paths:
        raise InputError("no instances: give FILES, or --suite small (data/) or shared (../shared/data)")
    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    jit_seconds = warm_up(objective, device_used)
    variants = {("hgpart" if index == 0 else f"hgpart:{name}"): coarsening_config(name, max_rated_net_size)
                 for index, name in enumerate(part.strip() for part in rating.split(","))}
    devices = ["gpu", "cpu"] if device_used == "gpu" else ["cpu"]  # the GPU run is "hgpart", the CPU path beside it
    if not cpu_path:
        devices = devices[:1]
    ours = [name if index == 0 else f"{name}:{used}" for index, used in enumerate(devices) for name in variants]
    with reporter.progress(len(paths) * len(ks) * repeat * len(ours), "hgpart bench") as bar:
        records = run_bench(paths, ks, epsilon, objective, repeat, peer_list, used_threads, preset, kahypar_config,
                            bar.advance, variants, devices)
    summaries = [c for c in (comparison(records, other) for other in ours[1:] + peer_list) if c]
    report = {"device": device_used, "threads": used_threads, "epsilon": epsilon, "objective": objective,
              "preset": preset, "repeat": repeat, "jit_seconds": jit_seconds,
              "records": [{key: value for key, value in vars(r).items() if key != "runs"} | {"runs": r.runs}
                          for r in records], "comparison": summaries}
    save_report(report, save, as_json)
    tools = ours + peer_list
    columns = ["instance", "k"] + [f"{tool} {what}" for tool in tools for what in (objective, "s", "imb")]
    columns += [f"{objective} / {peer}" for peer in peer_list] + [f"s / {peer}" for peer in peer_list]
    cells = {(r.instance, r.k, r.tool): r for r in records}
    rows = []
    for instance, k in dict.fromkeys((r.instance, r.k) for r in records):
        row = [instance, k]
        for tool in tools:
            r = cells[(instance, k, tool)]
            row += ["skipped", "-", "-"] if r.skipped else [getattr(r, objective), r.seconds, r.imbalance]
        ours = cells[(instance, k, "hgpart")]
        for attribute in (objective, "seconds"):
            for peer in peer_list:
                theirs = cells[(instance, k, peer)]
                row.append("-" if theirs.skipped else max(getattr(ours, attribute), 1e-9 if attribute == "seconds"
                                                            else 1) / max(getattr(theirs, attribute),
                                                                          1e-9 if attribute == "seconds" else 1))
        rows.append(row)
    reporter.table(f"hgpart bench ({device_used}, {used_threads} threads, eps {epsilon}, medians of {repeat})",
                   columns, rows)
    for summary in summaries:
        reporter.log(f"vs {summary['peer']}: {objective} ratio geomean {summary['km1_ratio_geomean']:.3f}, time ratio "
                     f"geomean {summary['time_ratio_geomean']:.2f} over {summary['cells']} cells; imbalanced: hgpart "
                     f"{summary['hgpart_imbalanced']}, {summary['peer']} {summary['peer_imbalanced']}")
    for r in records:
        if r.tool == "hgpart" and not r.skipped:
            reporter.log(f"hgpart phases on {r.instance} k={r.k}: " + ", ".join(
                f"{phase} {seconds:.2f} s" for phase, seconds in r.phases.items()))
    for r in records:
        if r.skipped:
            reporter.log(f"skipped {r.tool} on {r.instance} k={r.k}: {r.skipped}")
            break


@bench.command("cluster", epilog=epilog("hgpart bench cluster --device gpu --rmat 8388608 --save cluster.json"))
@click.argument("files", nargs=-1)
@device_option
@click.option("--rmat", "rmat_n", type=click.IntRange(min=2), default=None,
              help="Also a generated R-MAT graph on this many vertices (rounded up to a power of two).")
@click.option("--edge-factor", type=click.IntRange(min=1), default=16, show_default=True, help="R-MAT edges per vertex.")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, help="Medians over repeats.")
@click.option("--tries", type=click.IntRange(min=0), default=0, show_default=True,
              help="hgpart's ensemble size (0: by graph size).")
@click.option("--louvain-seeds", type=click.IntRange(min=0), default=5, show_default=True,
              help="networkx Louvain runs per graph (best modularity kept); 0 leaves it out.")
@click.option("--peer-max-edges", type=click.IntRange(min=0), default=2_000_000, show_default=True,
              help="networkx runs only on graphs with at most this many edges.")
@bench_output_options
@job_options
def bench_cluster(files, device, rmat_n, edge_factor, repeat, tries, louvain_seeds, peer_max_edges, save, cpu_path,
                  threads, as_json, quiet):
    """Modularity clustering: hgpart (GPU, its CPU twin) vs networkx Louvain; modularity, seconds, edges/s."""
    from .bench.clustering import default_instances, run_cluster_bench
    from .graphs.clustering import warm_up

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    devices = ["gpu", "cpu"] if device_used == "gpu" and cpu_path else [device_used]
    instances = [(path, None, None) for path in files or ([] if rmat_n else default_instances())]
    if rmat_n:
        instances.append(("rmat", rmat_n, edge_factor))
    if not instances:
        raise InputError("no graphs: give FILES or --rmat, or run where ../shared/data or data/ holds them")
    jit_seconds = warm_up(device_used)
    rows = run_cluster_bench(instances, devices, repeat, louvain_seeds, peer_max_edges, tries, reporter)
    report = {"device": device_used, "threads": used_threads, "repeat": repeat, "jit_seconds": jit_seconds,
              "instances": rows}
    save_report(report, save, as_json)
    row_table(reporter, f"hgpart bench cluster ({device_used}, {used_threads} threads, medians of {repeat})", rows)


@bench.command("mst", epilog=epilog("hgpart bench mst --device gpu --repeat 3 --save mst.json"))
@click.argument("files", nargs=-1)
@device_option
@click.option("--gnm", default="5000000:30000000", show_default=True,
              help="G(n, m) graphs as n:m pairs, comma-separated ('' for none).")
@click.option("--rmat", "rmat_n", type=click.IntRange(min=0), default=4_194_304, show_default=True,
              help="An R-MAT graph on this many vertices (0 for none).")
@click.option("--edge-factor", type=click.IntRange(min=1), default=8, show_default=True, help="R-MAT edges per vertex.")
@click.option("--grid", "grid_side", type=click.IntRange(min=0), default=2236, show_default=True,
              help="A side x side grid with random weights (0 for none).")
@click.option("--repeat", type=click.IntRange(min=1), default=3, show_default=True, help="Medians over repeats.")
@click.option("--scipy/--no-scipy", "scipy_peer", default=True, show_default=True,
              help="Run scipy's minimum_spanning_tree beside.")
@bench_output_options
@job_options
def bench_mst(files, device, gnm, rmat_n, edge_factor, grid_side, repeat, scipy_peer, save, cpu_path, threads,
              as_json, quiet):
    """Minimum spanning forest: GPU vs njit CPU twin vs scipy in one run on FILES (default: rome99 of
    ../shared/data) and the generated graphs."""
    from .bench.spanning_forest import run_mst_bench
    from .graphs.spanning_forest import warm_up

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    devices = ["gpu", "cpu"] if device_used == "gpu" and cpu_path else [device_used]
    shared = os.path.join("..", "shared", "data", "rome99.gr.gz")
    specs = [("file", path) for path in files or ([shared] if os.path.exists(shared) else [])]
    for pair in filter(None, (p.strip() for p in gnm.split(","))):
        n_text, _, m_text = pair.partition(":")
        if not (n_text.isdigit() and m_text.isdigit()):
            raise InputError(f"--gnm takes n:m pairs, got {pair!r}")
        specs.append(("gnm", int(n_text), int(m_text)))
    specs += [("rmat", rmat_n, edge_factor)] if rmat_n else []
    specs += [("grid", grid_side)] if grid_side else []
    jit_seconds = warm_up(device_used)
    rows = run_mst_bench(specs, devices, repeat, scipy_peer, reporter)
    save_report({"device": device_used, "threads": used_threads, "repeat": repeat, "jit_seconds": jit_seconds,
                 "instances": rows}, save, as_json)
    row_table(reporter, f"hgpart bench mst ({device_used}, {used_threads} threads, medians of {repeat})", rows)


@bench.command("triangles", epilog=epilog("hgpart bench triangles --device gpu --rmat 8388608 --repeat 3"))
@click.argument("files", nargs=-1)
@device_option
@click.option("--rmat", "rmat_n", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also an R-MAT graph on this many vertices (0 for none).")
@click.option("--edge-factor", type=click.IntRange(min=1), default=16, show_default=True, help="R-MAT edges per vertex.")
@click.option("--repeat", type=click.IntRange(min=1), default=3, show_default=True, help="Medians over repeats.")
@bench_output_options
@job_options
def bench_triangles(files, device, rmat_n, edge_factor, repeat, save, cpu_path, threads, as_json, quiet):
    """Triangle counting: GPU vs njit CPU twin in one run on FILES (default: the SNAP graphs of ../shared/data)
    and an R-MAT graph; seconds, input edges per second, whether the counts agree."""
    from .bench.triangles import default_instances, run_triangle_bench
    from .graphs.triangles import warm_up

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    devices = ["gpu", "cpu"] if device_used == "gpu" and cpu_path else [device_used]
    specs = [("file", path) for path in files or default_instances()]
    specs += [("rmat", rmat_n, edge_factor)] if rmat_n else []
    if not specs:
        raise InputError("no graphs: give FILES or --rmat, or run where ../shared/data holds the SNAP graphs")
    jit_seconds = warm_up(device_used)
    rows = run_triangle_bench(specs, devices, repeat, reporter)
    save_report({"device": device_used, "threads": used_threads, "repeat": repeat, "jit_seconds": jit_seconds,
                 "instances": rows}, save, as_json)
    row_table(reporter, f"hgpart bench triangles ({device_used}, {used_threads} threads, medians of {repeat})", rows)


@bench.command("coarsen", epilog=epilog("hgpart bench coarsen -n 1000000 --device auto --repeat 3"))
@click.argument("files", nargs=-1)
@click.option("--classes", default="long-tailed,evenly,grid,synthetic", show_default=True,
              help="Generated instances when no FILES are given (synthetic: seed 000's matrix, at --synthetic-n).")
@click.option("-n", "n", type=click.IntRange(min=100), default=1_000_000, show_default=True,
              help="Vertices of each generated class.")
@click.option("--synthetic-n", type=click.IntRange(min=700), default=700_000, show_default=True)
@click.option("-k", "k", type=click.IntRange(min=1), default=2, show_default=True, help="Sets the cluster weight bound.")
@device_option
@click.option("--repeat", type=click.IntRange(min=1), default=3, show_default=True, help="Medians over repeats.")
@click.option("--gpu-repeat", type=click.IntRange(min=1), default=None,
              help="Repeats of the GPU's timings (default: --repeat); they are cheap where the CPU path's are not.")
@click.option("--save", default=None, help="Also write the JSON report to this file.")
@coarsening_options
@job_options
def bench_coarsen(files, classes, n, synthetic_n, k, device, repeat, gpu_repeat, save, rating, max_rated_net_size,
                  threads, as_json, quiet):
    """One coarsening level (the map, seed 000 Table III, and the contraction) on the CPU path and on the GPU."""
    from .bench.coarsening import PAPER_TABLE_III, run_coarsen_bench

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    devices = ["cpu"] + (["gpu"] if device_used == "gpu" else [])
    instances = [(path, None) for path in files] or [
        (name, synthetic_n if name == "synthetic" else n) for name in (c.strip() for c in classes.split(","))]
    config = coarsening_config(rating, max_rated_net_size)
    rows = run_coarsen_bench(instances, devices, config, k, repeat, reporter, gpu_repeat)
    report = {"device": device_used, "threads": used_threads, "repeat": repeat, "gpu repeat": gpu_repeat or repeat,
              "rating": rating, "instances": rows, "paper_table_iii": PAPER_TABLE_III}
    save_report(report, save, as_json)
    columns = ["instance", "vertices", "pins", "cpu map s", "gpu map s", "map speedup", "cpu contract s",
               "gpu contract s", "contract speedup", "level speedup", "gpu round s", "round GB/s", "agree"]
    reporter.table(f"coarsening, one level (CPU {used_threads} threads vs {device_used}; medians of {repeat}, GPU "
                   f"{gpu_repeat or repeat})",
                   columns, [[row.get(column, "-") for column in columns] for row in rows])
    reporter.table("seed 000 Table III (K20c vs sequential Mondriaan)", ["input", "GPU s", "sequential s", "speedup"],
                   [[name, gpu, cpu, cpu / gpu] for name, gpu, cpu in PAPER_TABLE_III])


def main() -> None:
    cli()


if __name__ == "__main__":
    main()
