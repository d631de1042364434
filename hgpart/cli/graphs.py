"""Commands on graphs: cluster (modularity), mst (minimum spanning forest), triangles."""

from __future__ import annotations

import time

import click

from ..errors import InputError
from .options import device_option, epilog, format_option, job_options, print_summary, seed_option, start_graph_job


# ----------------------------------------------------------------------------------------- cluster
@click.command(epilog=epilog("hgpart cluster data/karate.graph -o karate.clusters --json"))
@click.argument("file")
@click.option("-o", "--output", default=None, help="Cluster ids, one per vertex (default FILE.clusters; - for stdout).")
@seed_option
@device_option
@click.option("--tries", type=click.IntRange(min=0), default=0, show_default=True,
              help="Independent runs whose core groups are clustered again (0: 8 up to 1M edges, fewer above).")
@format_option
@job_options
def cluster(file, output, seed, device, tries, file_format, threads, as_json, quiet):
    """Cluster the vertices of the graph FILE for high modularity (Fagginger Auer and Bisseling's agglomeration + local moving).

    Writes one cluster id per line (0-based, vertex order). Reads METIS .graph, Matrix Market, edge lists
    (weighted or not); direction is ignored, parallel edges count once (the heaviest), self loops are dropped."""
    from dataclasses import replace

    from ..config import ClusterConfig
    from ..graphs.clustering import cluster as run_cluster
    from ..graphs.clustering import warm_up
    from ..io import strip_gz, write_partition

    output = output or ("-" if file == "-" else f"{strip_gz(file)}.clusters")
    reporter, device_used, reason, graph, read_seconds, jit_seconds = start_graph_job(
        "cluster", file, file_format, "max", output, device, threads, quiet, as_json, warm_up)
    result = run_cluster(graph, replace(ClusterConfig(), seed=seed, tries=tries), device=device_used)
    write_partition(result.clusters, output)
    summary = {"file": file, "output": output, "device": device_used, "device_reason": reason, "seed": seed,
               "vertices": graph.num_vertices, "edges": graph.num_edges, "clusters": result.num_clusters,
               "modularity": result.modularity, "levels": len(result.levels),
               "seconds": {"read": read_seconds, **result.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"clustering of {file}", summary, as_json)


# --------------------------------------------------------------------------------------------- mst
@click.command(epilog=epilog("hgpart mst ../shared/data/rome99.gr.gz -o rome99.forest --json"))
@click.argument("file")
@click.option("-o", "--output", default=None, help="Write the forest's edges as 'u v w' lines (0-based; - for stdout).")
@device_option
@format_option
@job_options
def mst(file, output, device, file_format, threads, as_json, quiet):
    """Minimum spanning forest of the graph FILE (Borůvka from data-parallel primitives, after Vineet et al. 2009).

    Reports total weight, forest edges and components. Reads DIMACS .gr, METIS .graph, Matrix Market and edge
    lists; direction is ignored, self loops dropped, parallel edges (and a general matrix's (i,j) beside
    (j,i)) reduced to the lightest."""
    from ..graphs.spanning_forest import minimum_spanning_forest, warm_up
    from ..io import write_edgelist

    reporter, device_used, reason, graph, read_seconds, jit_seconds = start_graph_job(
        "mst", file, file_format, "min", output, device, threads, quiet, as_json, warm_up)
    forest = minimum_spanning_forest(graph, device_used)
    if output:
        write_edgelist(forest.sources, forest.targets, forest.weights, output)
    summary = {"file": file, "output": output, "device": device_used, "device_reason": reason,
               "vertices": graph.num_vertices, "edges": graph.num_edges, "total_weight": forest.total_weight,
               "forest_edges": int(forest.weights.shape[0]),
               "components": forest.num_components, "iterations": forest.iterations,
               "seconds": {"read": read_seconds, **forest.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"minimum spanning forest of {file}", summary, as_json)


# ---------------------------------------------------------------------------------------- triangles
@click.command(epilog=epilog("hgpart triangles ../shared/data/facebook_combined.txt.gz --list - -q | head"))
@click.argument("file")
@click.option("--list", "list_output", default=None, help="Write every triangle as 'u v w' (0-based, u < v < w; - for "
                                                         "stdout).")
@click.option("--per-vertex", "per_vertex_output", default=None,
              help="Write 'triangles clustering-coefficient' per vertex, one line each (- for stdout).")
@device_option
@format_option
@job_options
def triangles(file, list_output, per_vertex_output, device, file_format, threads, as_json, quiet):
    """Count triangles of the graph FILE exactly; clustering coefficients; optionally list them (after Low et al. 2017).

    Direction, duplicate edges, weights and self loops are ignored."""
    import numpy as np

    from ..graphs.triangles import Triangles, warm_up
    from ..io import atomic_output
    from ..io.text import write_rows

    if [list_output, per_vertex_output].count("-") > 1 or ("-" in (list_output, per_vertex_output) and as_json):
        raise InputError("only one of --json, --list - and --per-vertex - can write to stdout")
    reporter, device_used, reason, graph, read_seconds, jit_seconds = start_graph_job(
        "triangles", file, file_format, "max", list_output or per_vertex_output, device, threads, quiet, as_json,
        warm_up)
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
    summary = {"file": file, "device": device_used, "device_reason": reason, "vertices": graph.num_vertices,
               "edges": graph.num_edges, "triangles": result.count, "average_clustering": result.average_clustering,
               "transitivity": result.transitivity, "list": list_output, "per_vertex": per_vertex_output,
               "seconds": {"read": read_seconds, **result.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"triangles of {file}", summary, as_json)


