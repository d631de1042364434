"""``hgpart bench``: hgpart beside its peers and its GPU beside its CPU path, in one run; and ``bench render``,
the markdown page of the saved reports."""

from __future__ import annotations

import os

import click

from ..errors import InputError
from .options import (bench_output_options, coarsening_config, coarsening_options, command_line, communities_option,
                      device_option, epilog, int_list, job_options, library_errors, quiet_option, row_table,
                      save_option, start_job)


class DefaultGroup(click.Group):
    """A group that runs ``default_command`` when the first argument names no subcommand."""

    default_command = "partition"

    def parse_args(self, ctx, args):
        if not args or (args[0] not in self.commands and args[0] not in ("-h", "--help")):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup, epilog=epilog("hgpart bench --suite shared -k 2,8,32 --repeat 3"))
def bench():
    """Measure side by side in one run: partitioning against the peers (default), or coarsening GPU vs CPU."""


def _report(name: str, device_used: str, used_threads: int, **fields) -> dict:
    """A bench's report: which bench, where it came from (:func:`hgpart.bench.report.environment`), its fields."""
    from ..bench.report import environment

    return {"bench": name, "environment": environment(device_used, used_threads, command_line()),
            "device": device_used, "threads": used_threads, **fields}


def rmat_options(minimum: int, default: tuple, help_text: str, edge_factor: int):
    """--rmat N (generated R-MAT graphs, one per --rmat: a sweep of sizes in one report) and --edge-factor, for
    the graph benches; ``rmat_n`` is a tuple."""

    def decorate(command):
        command = click.option("--edge-factor", type=click.IntRange(min=1), default=edge_factor, show_default=True,
                               help="R-MAT edges per vertex.")(command)
        return click.option("--rmat", "rmat_n", type=click.IntRange(min=minimum), multiple=True, default=default,
                            show_default=bool(default), help=f"{help_text} Repeat for several.")(command)

    return decorate


def repeat_option(default: int):
    return click.option("--repeat", type=click.IntRange(min=1), default=default, show_default=True,
                        help="Medians over repeats.")


def _save_and_print(name: str, reporter, device_used: str, used_threads: int, repeat: int, jit_seconds: float,
                    rows: list[dict], save, as_json: bool) -> None:
    """The report of a graph bench (cluster, mst, triangles): saved, and its rows as one table."""
    from ..bench.report import save_report

    save_report(_report(name, device_used, used_threads, repeat=repeat, jit_seconds=jit_seconds, instances=rows),
                save, as_json)
    row_table(reporter, f"hgpart bench {name} ({device_used}, {used_threads} threads, medians of {repeat})", rows)


def _devices(device_used: str, cpu_path: bool) -> list[str]:
    """The GPU and, with --cpu-path, its CPU twin beside it; or the CPU alone."""
    return ["gpu", "cpu"] if device_used == "gpu" and cpu_path else [device_used]


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
              help="Comma-separated peers to run beside hgpart (mtkahypar, mtkahypar-quality, kahypar) or 'none'.")
@click.option("--kahypar-config", default=None, help="KaHyPar .ini preset (its Python package ships none).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs per cell with seeds 0..N-1; medians are reported.")
@bench_output_options
@communities_option
@coarsening_options
@job_options
def bench_partition(files, suite, k_list, epsilon, objective, preset, device, peers, kahypar_config, repeat, save,
                    cpu_path, communities, rating, max_rated_net_size, threads, as_json, quiet):
    """Partition instances with hgpart and its peers side by side; km1, imbalance, seconds and ratios."""
    from ..bench.peers import PEERS
    from ..bench.report import save_report
    from ..bench.runner import cell_table, comparison, phase_shares, run_bench
    from ..bench.runner import suite as suite_files
    from ..config import make_config
    from ..compilation import warm_up

    ks = int_list(k_list)
    peer_list = [] if peers.strip() == "none" else [p.strip() for p in peers.split(",") if p.strip()]
    unknown = [p for p in peer_list if p not in PEERS]
    if unknown:
        raise InputError(f"unknown peer {unknown[0]!r} ({', '.join(PEERS)} or none)")
    if files and suite:
        raise InputError("give FILES or --suite, not both")
    paths = list(files) or suite_files(suite or "default")
    if not paths:
        raise InputError("no instances: give FILES, or --suite small (data/) or shared (../shared/data)")
    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True,
                                                    partitions=True)
    jit_seconds = warm_up(objective, device_used, flows=make_config(2, preset=preset).flows.levels != "none")
    variants = {("hgpart" if index == 0 else f"hgpart:{name}"): coarsening_config(name, max_rated_net_size)
                for index, name in enumerate(part.strip() for part in rating.split(","))}
    devices = ["gpu", "cpu"] if device_used == "gpu" else ["cpu"]  # the GPU run is "hgpart", the CPU path beside it
    if not cpu_path:
        devices = devices[:1]
    if device == "auto" and device_used == "gpu":  # each input on the path auto picks for it; runs record which
        devices, device_used = ["auto"], "auto"
    ours = [name if index == 0 else f"{name}:{used}" for index, used in enumerate(devices) for name in variants]
    with reporter.progress(len(paths) * len(ks) * repeat * len(ours), "hgpart bench") as bar:
        records = run_bench(paths, ks, epsilon, objective, repeat, peer_list, used_threads, preset, kahypar_config,
                            bar.advance, variants, devices, communities)
    summaries = [c for c in (comparison(records, other) for other in ours[1:] + peer_list) if c]
    shares = phase_shares(records)
    report = _report("partition", device_used, used_threads, epsilon=epsilon, objective=objective, preset=preset,
                     communities=communities, repeat=repeat, jit_seconds=jit_seconds,
                     records=[{key: value for key, value in vars(r).items() if key != "runs"} | {"runs": r.runs}
                              for r in records], comparison=summaries, phase_shares=shares)
    save_report(report, save, as_json)
    columns, rows = cell_table(records, objective, ours + peer_list, peer_list)
    reporter.table(f"hgpart bench ({device_used}, {used_threads} threads, eps {epsilon}, medians of {repeat})",
                   columns, rows)
    for summary in summaries:
        reporter.log(f"vs {summary['peer']}: {objective} ratio geomean {summary['km1_ratio_geomean']:.3f}, time ratio "
                     f"geomean {summary['time_ratio_geomean']:.2f} over {summary['cells']} cells; imbalanced: hgpart "
                     f"{summary['hgpart_imbalanced']}, {summary['peer']} {summary['peer_imbalanced']}; worst "
                     f"{summary['km1_ratio_max']:.3f} ({summary['km1_ratio_max_cell'][0]} "
                     f"k={summary['km1_ratio_max_cell'][1]}), {summary['cells_above_1.10']} cells above 1.10")
        reporter.log("  by k: " + "; ".join(f"k={k} {objective} {row['km1_ratio_geomean']:.3f} time "
                                            f"{row['time_ratio_geomean']:.2f}" for k, row in summary["by_k"].items()))
    for k, row in (shares.get("by_k", {}) | ({"all": shares["all"]} if shares else {})).items():
        reporter.log(f"hgpart phase shares of its time, k={k} (pooled / median cell): " + ", ".join(
            f"{phase} {share['pooled']:.1%} / {share['median_cell']:.1%}" for phase, share in row.items()
            if phase != "cells"))
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
@rmat_options(2, (), "Also a generated R-MAT graph on this many vertices (rounded up to a power of two).", 16)
@repeat_option(1)
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
    from ..bench import warm_up_reader
    from ..bench.clustering import default_instances, run_cluster_bench
    from ..graphs.clustering import warm_up

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    instances = [("file", path) for path in files or ([] if rmat_n else default_instances())]
    instances += [("rmat", n, edge_factor) for n in rmat_n]
    if not instances:
        raise InputError("no graphs: give FILES or --rmat, or run where ../shared/data or data/ holds them")
    jit_seconds = warm_up(device_used) + warm_up_reader("max")
    rows = run_cluster_bench(instances, _devices(device_used, cpu_path), repeat, louvain_seeds, peer_max_edges, tries,
                             reporter)
    _save_and_print("cluster", reporter, device_used, used_threads, repeat, jit_seconds, rows, save, as_json)


@bench.command("mst", epilog=epilog("hgpart bench mst --device gpu --repeat 3 --save mst.json"))
@click.argument("files", nargs=-1)
@device_option
@click.option("--gnm", default="5000000:30000000", show_default=True,
              help="G(n, m) graphs as n:m pairs, comma-separated ('' for none).")
@rmat_options(0, (4_194_304,), "An R-MAT graph on this many vertices (0 for none).", 8)
@click.option("--grid", "grid_side", type=click.IntRange(min=0), default=2236, show_default=True,
              help="A side x side grid with random weights (0 for none).")
@repeat_option(3)
@click.option("--scipy/--no-scipy", "scipy_peer", default=True, show_default=True,
              help="Run scipy's minimum_spanning_tree beside.")
@bench_output_options
@job_options
def bench_mst(files, device, gnm, rmat_n, edge_factor, grid_side, repeat, scipy_peer, save, cpu_path, threads,
              as_json, quiet):
    """Minimum spanning forest: GPU vs njit CPU twin vs scipy in one run on FILES (default: rome99 of
    ../shared/data) and the generated graphs."""
    from ..bench import warm_up_reader
    from ..bench.spanning_forest import run_mst_bench
    from ..graphs.spanning_forest import warm_up

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    shared = os.path.join("..", "shared", "data", "rome99.gr.gz")
    specs = [("file", path) for path in files or ([shared] if os.path.exists(shared) else [])]
    for pair in filter(None, (p.strip() for p in gnm.split(","))):
        n_text, _, m_text = pair.partition(":")
        if not (n_text.isdigit() and m_text.isdigit()):
            raise InputError(f"--gnm takes n:m pairs, got {pair!r}")
        specs.append(("gnm", int(n_text), int(m_text)))
    specs += [("rmat", n, edge_factor) for n in rmat_n if n]
    specs += [("grid", grid_side)] if grid_side else []
    jit_seconds = warm_up(device_used) + warm_up_reader("min")
    rows = run_mst_bench(specs, _devices(device_used, cpu_path), repeat, scipy_peer, reporter)
    _save_and_print("mst", reporter, device_used, used_threads, repeat, jit_seconds, rows, save, as_json)


@bench.command("triangles", epilog=epilog("hgpart bench triangles --device gpu --rmat 8388608 --repeat 3"))
@click.argument("files", nargs=-1)
@device_option
@rmat_options(0, (), "Also an R-MAT graph on this many vertices (0 for none).", 16)
@repeat_option(3)
@bench_output_options
@job_options
def bench_triangles(files, device, rmat_n, edge_factor, repeat, save, cpu_path, threads, as_json, quiet):
    """Triangle counting: GPU vs njit CPU twin in one run on FILES (default: the SNAP graphs of ../shared/data)
    and an R-MAT graph; seconds, input edges per second, whether the counts agree."""
    from ..bench import warm_up_reader
    from ..bench.triangles import default_instances, run_triangle_bench
    from ..graphs.triangles import warm_up

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    specs = [("file", path) for path in files or default_instances()]
    specs += [("rmat", n, edge_factor) for n in rmat_n if n]
    if not specs:
        raise InputError("no graphs: give FILES or --rmat, or run where ../shared/data holds the SNAP graphs")
    jit_seconds = warm_up(device_used) + warm_up_reader("max")
    rows = run_triangle_bench(specs, _devices(device_used, cpu_path), repeat, reporter)
    _save_and_print("triangles", reporter, device_used, used_threads, repeat, jit_seconds, rows, save, as_json)


@bench.command("classify", epilog=epilog("hgpart bench classify --data digits,iris --repeat 3"))
@click.option("--data", "names", default="digits,iris", show_default=True,
              help="Comma-separated scikit-learn data sets (z-scored), and 'blobs' for make_blobs of --blobs samples.")
@click.option("--blobs", "blobs_samples", type=click.IntRange(min=10), default=1_000_000, show_default=True,
              help="Samples of the generated blobs (64 dimensions, float32).")
@click.option("--blobs-classes", type=click.IntRange(min=2), default=2, show_default=True)
@click.option("-n", "--neighbors", "n_neighbors", type=click.IntRange(min=1), default=None,
              help="hgpart's neighbours per sample (default: hgpart's default).")
@click.option("-e", "--epsilon", type=click.FloatRange(min=0.0), default=None, help="Default: classify's.")
@click.option("--peers", default="spectral,kmeans", show_default=True,
              help="scikit-learn's tools beside hgpart ('' for none); SpectralClustering takes 10 neighbours.")
@click.option("--peer-max-samples", type=click.IntRange(min=0), default=200_000, show_default=True,
              help="Peers run on data sets of at most this many samples.")
@device_option
@repeat_option(3)
@save_option
@job_options
def bench_classify(names, blobs_samples, blobs_classes, n_neighbors, epsilon, peers, peer_max_samples, device,
                   repeat, save, threads, as_json, quiet):
    """Unsupervised classification: hgpart (kNN hypergraph, partition) vs scikit-learn's SpectralClustering and
    KMeans; NMI, accuracy, ARI and seconds per phase, medians over --repeat seeds (needs scikit-learn)."""
    from dataclasses import replace

    from ..bench.classification import run_classify_bench
    from ..bench.report import save_report
    from ..classification.classify import DEFAULT_EPSILON
    from ..config import KnnConfig

    import importlib.util

    if importlib.util.find_spec("sklearn") is None:
        raise click.ClickException("bench classify needs scikit-learn: pip install 'hgpart[bench]'")
    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True)
    config = KnnConfig() if n_neighbors is None else replace(KnnConfig(), n_neighbors=n_neighbors)
    epsilon = DEFAULT_EPSILON if epsilon is None else epsilon
    rows = run_classify_bench([name.strip() for name in names.split(",") if name.strip()], device_used, config,
                              epsilon, repeat, [peer.strip() for peer in peers.split(",") if peer.strip()],
                              peer_max_samples=peer_max_samples, blobs_samples=blobs_samples,
                              blobs_classes=blobs_classes, reporter=reporter)
    save_report(_report("classify", device_used, used_threads, repeat=repeat, instances=rows), save, as_json)
    row_table(reporter, f"hgpart bench classify ({device_used}, {used_threads} threads, medians of {repeat})", rows)


@bench.command("coarsen", epilog=epilog("hgpart bench coarsen -n 1000000 --device auto --repeat 3"))
@click.argument("files", nargs=-1)
@click.option("--classes", default="long-tailed,evenly,grid,synthetic", show_default=True,
              help="Generated instances when no FILES are given (synthetic: Cheng, Cho and Yoon's matrix, at --synthetic-n).")
@click.option("-n", "n", type=click.IntRange(min=100), default=1_000_000, show_default=True,
              help="Vertices of each generated class.")
@click.option("--synthetic-n", type=click.IntRange(min=700), default=700_000, show_default=True)
@click.option("-k", "k", type=click.IntRange(min=1), default=2, show_default=True, help="Sets the cluster weight bound.")
@device_option
@repeat_option(3)
@click.option("--gpu-repeat", type=click.IntRange(min=1), default=None,
              help="Repeats of the GPU's timings (default: --repeat); they are cheap where the CPU path's are not.")
@save_option
@coarsening_options
@job_options
def bench_coarsen(files, classes, n, synthetic_n, k, device, repeat, gpu_repeat, save, rating, max_rated_net_size,
                  threads, as_json, quiet):
    """One coarsening level (the map, as in Table III of Cheng, Cho and Yoon 2015, and the contraction) on the CPU path and on the GPU."""
    from ..bench.coarsening import PAPER_TABLE_III, run_coarsen_bench
    from ..bench.report import save_report

    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True,
                                                    partitions=True)
    devices = ["cpu"] + (["gpu"] if device_used == "gpu" else [])
    instances = [(path, None) for path in files] or [
        (name, synthetic_n if name == "synthetic" else n) for name in (c.strip() for c in classes.split(","))]
    config = coarsening_config(rating, max_rated_net_size)
    rows = run_coarsen_bench(instances, devices, config, k, repeat, reporter, gpu_repeat)
    report = _report("coarsen", device_used, used_threads, repeat=repeat, **{"gpu repeat": gpu_repeat or repeat},
                     rating=rating, instances=rows, paper_table_iii=PAPER_TABLE_III)
    save_report(report, save, as_json)
    columns = ["instance", "vertices", "pins", "cpu map s", "gpu map s", "map speedup", "cpu contract s",
               "gpu contract s", "contract speedup", "level speedup", "gpu round s", "round GB/s", "agree"]
    reporter.table(f"coarsening, one level (CPU {used_threads} threads vs {device_used}; medians of {repeat}, GPU "
                   f"{gpu_repeat or repeat})",
                   columns, [[row.get(column, "-") for column in columns] for row in rows])
    reporter.table("Cheng, Cho and Yoon 2015, Table III (K20c vs sequential Mondriaan)", ["input", "GPU s", "sequential s", "speedup"],
                   [[name, gpu, cpu, cpu / gpu] for name, gpu, cpu in PAPER_TABLE_III])


@bench.command("render", epilog=epilog("hgpart bench render --input benchmarks --output docs/benchmarks.md"))
@click.option("--input", "input_dir", default="benchmarks", show_default=True,
              help="Folder of saved reports (bench ... --save FILE.json).")
@click.option("--output", default=os.path.join("docs", "benchmarks.md"), show_default=True,
              help="The markdown page; its performance profiles go to img/ beside it, as SVG.")
@quiet_option
@library_errors
def bench_render(input_dir, output, quiet):
    """Render the saved reports as one markdown page: each report's provenance and tables, and for partition
    benches the performance profiles of km1 and time (needs matplotlib: pip install 'hgpart[bench]')."""
    from ..bench.render import MissingExtraError, render
    from ..console import Reporter

    try:
        written = render(input_dir, output)
    except MissingExtraError as error:
        raise click.ClickException(str(error)) from None
    Reporter(quiet).log(f"wrote {', '.join(written)}")
