"""Commands of the multilevel partitioner: partition, coarsen."""

from __future__ import annotations

import os
import time

import click

from ..console import Reporter, print_json
from .options import (coarsening_config, coarsening_options, communities_option, device_option, epilog, input_options,
                      job_options, print_summary, seed_option, start_job, with_communities)


# --------------------------------------------------------------------------------------- partition
@click.command(epilog=epilog("hgpart partition data/ibm01.hgr -k 8 --seed 1 -o ibm01.part.8 --json"))
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
@communities_option
@coarsening_options
@input_options
@job_options
def partition(file, k, epsilon, objective, seed, device, preset, fixed_file, output, communities, rating,
              max_rated_net_size, file_format, model, threads, as_json, quiet):
    """Partition FILE into K blocks (multilevel: coarsen, initial partition, refine); write one block id per line."""
    from ..io import read_fixed, read_hypergraph, strip_gz, write_partition
    from ..io.warm_up import named_input_format, warm_up_reading
    from ..config import make_config
    from ..multilevel import partition as run_partition
    from ..compilation import start_compile_helpers, warm_up
    from ..policy import auto_path

    config = with_communities(make_config(k, epsilon, objective, seed, preset,
                                          coarsening=coarsening_config(rating, max_rated_net_size)), communities)
    output = output or ("-" if file == "-" else f"{strip_gz(file)}.part.{k}")
    reporter, device_used, used_threads = start_job(device, threads, quiet, as_json, gpu_implemented=True,
                                                    output=output, partitions=True)
    start_compile_helpers(objective)  # the first command after an install: beside the reading too
    reader_seconds = warm_up_reading([named_input_format(file, file_format)], model=model)
    started = time.perf_counter()
    hypergraph = read_hypergraph(file, file_format, model)
    fixed = read_fixed(fixed_file, hypergraph.num_vertices, k) if fixed_file else None
    read_seconds = time.perf_counter() - started
    if device == "auto" and device_used == "gpu":  # the path the partition will take: only its kernels compile
        device_used = auto_path(hypergraph.num_pins, config)[0]
    jit_seconds = reader_seconds + warm_up(objective, device_used, hypergraph.num_pins,
                                           config.flows.levels != "none", hypergraph.num_vertices + hypergraph.num_nets)
    result = run_partition(hypergraph, fixed=fixed, config=config, device=device if device == "auto" else device_used)
    if result.device != device_used:  # auto, and the GPU ran out of memory: a warning, silenced only by -q
        Reporter(quiet).log(f"note: {result.note}")
        device_used = result.device
    write_partition(result.partition, output)
    metrics = result.metrics
    summary = {"file": file, "output": output, "k": k, "epsilon": epsilon, "objective": objective, "seed": seed,
               "preset": preset, "rating": rating, "device": device_used, "device_reason": result.device_reason,
               "threads": used_threads,
               "vertices": hypergraph.num_vertices,
               "nets": hypergraph.num_nets, "pins": hypergraph.num_pins, "km1": metrics.km1, "cut": metrics.cut,
               "soed": metrics.soed, "imbalance": metrics.imbalance, "balanced": metrics.balanced,
               "max_block_weight": metrics.max_block_weight, "block_weights": list(metrics.block_weights),
               "communities": result.communities, "levels": len(result.levels),
               "device_memory_bytes": result.device_memory_bytes,
               "seconds": {"read": read_seconds, **result.seconds}, "jit_seconds": jit_seconds}
    print_summary(reporter, f"partition of {file} into {k} blocks", summary, as_json)


# ----------------------------------------------------------------------------------------- coarsen
@click.command(epilog=epilog("hgpart coarsen data/ibm01.hgr --levels 5 --out-dir levels/ --json"))
@click.argument("file")
@click.option("--levels", type=click.IntRange(min=1), default=100, show_default=True,
              help="Levels to run at most (fewer when the stop rule ends coarsening).")
@click.option("-k", "k", type=click.IntRange(min=1), default=2, show_default=True,
              help="Blocks the hierarchy is meant for: stop at about 160 k vertices.")
@click.option("-e", "--epsilon", type=click.FloatRange(min=0), default=0.03, show_default=True,
              help="Imbalance (bounds the weight of a coarse vertex).")
@device_option
@click.option("--out-dir", default=None, help="Write each coarse level as LEVEL.hgr and its map LEVEL.map here.")
@communities_option
@coarsening_options
@input_options
@job_options
def coarsen(file, levels, k, epsilon, device, out_dir, communities, rating, max_rated_net_size, file_format, model,
            threads, as_json, quiet):
    """Coarsen FILE level by level (Mondriaan similarity, matching, contraction) and report each level."""
    from ..coarsening import coarsen as run_coarsen
    from ..config import CommunityConfig, choose_communities
    from ..io import read_hypergraph, write_hypergraph, write_partition
    from ..compilation import warm_up_coarsening

    reporter, device_used, _ = start_job(device, threads, quiet, as_json, gpu_implemented=True, partitions=True)
    hypergraph = read_hypergraph(file, file_format, model)
    config = coarsening_config(rating, max_rated_net_size)
    detect = choose_communities(CommunityConfig(), communities)
    jit_seconds = warm_up_coarsening(device_used, hypergraph.num_pins, detect.detect)
    hierarchy = run_coarsen(hypergraph, k, config, epsilon, max_levels=levels, device=device_used,
                            detect_communities=detect)
    found = hierarchy.communities
    rows = [{"level": 0, "vertices": hypergraph.num_vertices, "nets": hypergraph.num_nets, "pins": hypergraph.num_pins,
             "matched": 0.0, "seconds": 0.0}]
    coarse_levels = [level.hypergraph for level in hierarchy.levels[1:]] + [hierarchy.coarsest.hypergraph]
    for index, (level, coarse) in enumerate(zip(hierarchy.levels, coarse_levels), start=1):
        rows.append({"level": index, "vertices": coarse.num_vertices, "nets": coarse.num_nets, "pins": coarse.num_pins,
                     "matched": 1.0 - coarse.num_vertices / max(1, level.hypergraph.num_vertices),
                     "seconds": level.seconds})
        if out_dir:
            os.makedirs(out_dir, exist_ok=True)
            write_hypergraph(coarse, os.path.join(out_dir, f"level{index}.hgr"))
            write_partition(level.cluster, os.path.join(out_dir, f"level{index}.map"))
    if as_json:
        print_json({"file": file, "device": device_used, "rating": rating, "jit_seconds": jit_seconds,
                    "communities": None if found is None else found.count,
                    "community_seconds": None if found is None else found.seconds, "levels": rows})
    if found is not None:
        reporter.log(f"{found.count} communities (modularity {found.modularity:.4f}) in {found.seconds:.3f} s")
    reporter.table(f"coarsening of {file} ({device_used})", ["level", "vertices", "nets", "pins", "matched", "seconds"],
                   [list(row.values()) for row in rows])


