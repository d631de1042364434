"""What the commands share: option decorators, one-line library errors, the job's start, summaries and tables.

A command is a thin function over the library: it stacks the decorators below, reads its inputs, calls one
library function and prints with :func:`print_summary` or :func:`row_table`.
"""

from __future__ import annotations

import functools
import shlex
import sys
import time

import click

from ..console import Reporter, print_json
from ..errors import DeviceError, InfeasibleError, InputError

FORMAT_CHOICE = click.Choice(["hgr", "mtx", "metis", "gr", "edgelist"])
ARGV_KEY = "hgpart.argv"  # where the root context's meta keeps the arguments as given (see command_line)


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
    from ..config import GraphPolicyConfig, PolicyConfig

    graphs = GraphPolicyConfig()
    return click.option("--device", type=click.Choice(["auto", "cpu", "gpu"]), default="auto", show_default=True,
                        help=f"Where to run: auto (the GPU when usable and the input large enough: partition from "
                             f"{PolicyConfig().auto_gpu_min_pins:,} pins, cluster from {graphs.cluster_min_edges:,} "
                             f"edges, mst from {graphs.mst_min_edges:,}, triangles from "
                             f"{graphs.triangles_min_edges:,}), the numba CPU path, or the GPU.")(command)


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
                        help="heavy-edge: shared nets add w(e)/(|e|-1); inner-product: w(e) (Mondriaan similarity). "
                             "bench takes a comma-separated list and runs each.")(command)


def communities_option(command):
    """--communities/--no-communities: community detection before coarsening (default: the preset's)."""
    return click.option("--communities/--no-communities", "communities", default=None,
                        help="Find communities of the star expansion (modularity clustering) and never coarsen "
                             "across them. Default: on for inputs of at most 2M pins that are not mesh graphs (off in "
                             "the fast preset, any size in the quality preset).")(command)


def with_communities(config, communities: bool | None):
    """``config`` (a PartitionConfig) with community detection as --communities says
    (:func:`hgpart.config.choose_communities`)."""
    from dataclasses import replace

    from ..config import choose_communities

    return replace(config, communities=choose_communities(config.communities, communities))


def coarsening_config(rating: str, max_rated_net_size: int):
    from dataclasses import replace

    from ..config import CoarseningConfig

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
    return save_option(command)


def save_option(command):
    return click.option("--save", default=None, help="Also write the JSON report to this file.")(command)


def int_list(text: str) -> list[int]:
    """Comma-separated positive integers (-k 2,8,32)."""
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {text!r}") from None
    if not values or min(values) < 1:
        raise click.BadParameter(f"expected positive integers, got {text!r}")
    return values


def epilog(example: str) -> str:
    return "\b\nExample:\n  " + example


# ----------------------------------------------------------------------------------------- output
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


def command_line() -> str:
    """The command being run, as given: ``hgpart`` and its arguments, shell-quoted (for a bench's report)."""
    context = click.get_current_context(silent=True)
    arguments = context.meta.get(ARGV_KEY) if context is not None else None
    if arguments is None:
        arguments = sys.argv[1:]
    return shlex.join(["hgpart", *arguments])


# ------------------------------------------------------------------------------------- job start
def start_job(device: str, threads: int | None, quiet: bool, as_json: bool, gpu_implemented: bool = False,
              output: str | None = None, partitions: bool = False):
    """Refuse ``-o -`` (``output``) with --json, set the thread count and pick the device; returns (reporter,
    device used, threads). A command that ``partitions`` lets numba's idle threads sleep first
    (:func:`hgpart.parallel.let_idle_threads_sleep`)."""
    from ..device import resolve_device
    from ..parallel import let_idle_threads_sleep

    if output == "-" and as_json:
        raise InputError("--json and -o - would both write to stdout; give -o a file")

    if partitions:
        let_idle_threads_sleep()
    reporter = Reporter(quiet or as_json)
    used_threads = set_threads(threads)
    device_used, note = resolve_device(device, gpu_implemented)
    if note:  # a fallback is a warning: on stderr even with --json, silenced only by -q
        Reporter(quiet).log(f"note: {note}")
    return reporter, device_used, used_threads


def start_graph_job(command: str, file: str, file_format, merge: str, output, device: str, threads, quiet: bool,
                    as_json: bool, warm_up):
    """The start shared by the graph commands (``command``: cluster, mst or triangles): check -o against
    --json, read the graph (parallel edges merged by ``merge``; its reader first reads a tiny file of the
    same format, so that the read seconds are the reading), pick the device (``auto``: by the graph's size,
    :func:`hgpart.policy.graph_device`) and compile its kernels alone (``warm_up(device)``). Returns (reporter,
    device used, why auto chose it or None, graph, read seconds, JIT seconds)."""
    from ..io import read_graph
    from ..io.warm_up import named_input_format, warm_up_reading
    from ..policy import graph_device

    reporter, device_used, _ = start_job(device, threads, quiet, as_json, gpu_implemented=True, output=output)
    reader_seconds = warm_up_reading([named_input_format(file, file_format)], merge)
    started = time.perf_counter()
    graph = read_graph(file, file_format, merge=merge)
    read_seconds = time.perf_counter() - started
    reason = None
    if device == "auto":
        device_used, _, reason = graph_device(device, command, graph.num_edges)
    return reporter, device_used, reason, graph, read_seconds, reader_seconds + warm_up(device_used)
