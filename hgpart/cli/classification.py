"""Commands on feature vectors: knn (the kNN hypergraph) and classify (partition it into classes)."""

from __future__ import annotations

import os

import click
import numpy as np

from .options import device_option, epilog, job_options, print_summary, seed_option, start_job

FEATURE_FORMAT = click.Choice(["npy", "csv", "tsv", "mtx"])


def knn_options(command):
    """-n, --metric, --weights, --search and --format: how the kNN hypergraph is made from FILE."""
    from ..config import KnnConfig

    defaults = KnnConfig()
    command = click.option("--standardize", is_flag=True,
                           help="Scale every feature to unit variance (and centre dense ones) first: z-scores, for "
                                "features in different units.")(command)
    command = click.option("--format", "feature_format", type=FEATURE_FORMAT, default=None,
                           help="Feature file format (default: from the extension; needed for stdin).")(command)
    command = click.option("--search", type=click.Choice(["auto", "exact", "approximate"]), default=defaults.search,
                           show_default=True,
                           help="exact: brute force (GPU or CPU); approximate: pynndescent on the CPU (pip install "
                                "'hgpart[ann]'); auto: exact, except on the CPU above "
                                f"{defaults.exact_max_samples:,} samples when pynndescent is installed.")(command)
    command = click.option("--weights", type=click.Choice(["compactness", "uniform"]), default=defaults.weights,
                           show_default=True,
                           help="Net weights: compactness (heat kernel of the members' distances to the sample, "
                                f"scaled to at most {defaults.weight_scale}) or uniform (1).")(command)
    command = click.option("--metric", type=click.Choice(["euclidean", "cosine"]), default=defaults.metric,
                           show_default=True, help="Distance between feature vectors (cosine: 1 - cos).")(command)
    return click.option("-n", "--neighbors", "n_neighbors", type=click.IntRange(min=1), default=defaults.n_neighbors,
                        show_default=True, help="Nearest neighbours per sample (a net holds the sample and "
                                                "them).")(command)


def _knn_config(n_neighbors, metric, weights, search, seed=0):
    from ..config import KnnConfig

    return KnnConfig(n_neighbors=n_neighbors, metric=metric, weights=weights, search=search, seed=seed)


def _read(file, feature_format, standardize: bool):
    import time

    from ..classification.hypergraph import standardized
    from ..io.features import read_features

    started = time.perf_counter()
    features = read_features(file, feature_format)
    return standardized(features) if standardize else features, time.perf_counter() - started


# --------------------------------------------------------------------------------------------- knn
@click.command(epilog=epilog("hgpart knn data/iris.csv -n 5 -o iris.hgr && hgpart partition iris.hgr -k 3"))
@click.argument("file")
@knn_options
@click.option("-o", "--output", default=None, help="The hypergraph (.hgr, .mtx; default FILE.hgr; - for stdout).")
@device_option
@job_options
def knn(file, n_neighbors, metric, weights, search, feature_format, standardize, output, device, threads, as_json, quiet):
    """The kNN hypergraph of the feature vectors in FILE: one net per sample, holding it and its nearest neighbours.

    FILE holds one sample a row: .npy, .csv or .tsv (numbers; a header row is skipped; # comments) or Matrix
    Market (dense or coordinate). Vertex i is sample i; net i is sample i's neighbourhood, weighted by how
    compact it is (Huang et al., IEEE TPAMI 2011)."""
    from ..classification.hypergraph import knn_hypergraph
    from ..io import strip_gz, write_hypergraph

    output = output or ("-" if file == "-" else f"{os.path.splitext(strip_gz(file))[0]}.hgr")
    reporter, device_used, _ = start_job(device, threads, quiet, as_json, gpu_implemented=True, output=output)
    features, read_seconds = _read(file, feature_format, standardize)
    result = knn_hypergraph(features, _knn_config(n_neighbors, metric, weights, search), device_used)
    write_hypergraph(result.hypergraph, output)
    weights_used = result.hypergraph.net_weights
    summary = {"file": file, "output": output, "device": result.device, "search": result.search,
               "samples": int(features.shape[0]), "features": int(features.shape[1]), "neighbors": n_neighbors,
               "metric": metric, "weights": weights, "pins": result.hypergraph.num_pins,
               "net_weight_range": [int(weights_used.min()), int(weights_used.max())],
               "seconds": {"read": read_seconds, **result.seconds}}
    print_summary(reporter, f"kNN hypergraph of {file}", summary, as_json)


# ---------------------------------------------------------------------------------------- classify
@click.command(epilog=epilog("hgpart classify data/iris.csv -c 3 --labels data/iris.labels --json"))
@click.argument("file")
@click.option("-c", "--classes", "n_classes", type=click.IntRange(min=1), required=True, help="Number of classes.")
@knn_options
@click.option("-e", "--epsilon", type=click.FloatRange(min=0.0), default=None,
              help="A class may hold up to (1 + EPSILON) * ceil(samples / classes) samples "
                   "[default: 0.1, which lets classes differ in size].")
@click.option("--labels", default=None, help="Known labels (one integer a line): report accuracy (best matching of "
                                             "classes to labels), NMI and ARI.")
@click.option("-o", "--output", default=None, help="Write one class id per sample, a line each (- for stdout).")
@click.option("--preset", type=click.Choice(["fast", "default", "quality"]), default="default", show_default=True,
              help="The partitioner's preset.")
@seed_option
@device_option
@job_options
def classify(file, n_classes, n_neighbors, metric, weights, search, feature_format, standardize, epsilon, labels, output, preset,
             seed, device, threads, as_json, quiet):
    """Classify the samples of FILE without labels: partition their kNN hypergraph into CLASSES blocks.

    Reads features as `knn` does; writes one class id (0-based) per sample with -o. With --labels, the summary
    reports how well the classes match them."""
    from ..classification.classify import DEFAULT_EPSILON
    from ..classification.classify import classify as run_classify
    from ..classification.scores import scores
    from ..io import write_partition
    from ..io.features import read_labels

    reporter, device_used, _ = start_job(device, threads, quiet, as_json, gpu_implemented=True, output=output)
    features, read_seconds = _read(file, feature_format, standardize)
    known = read_labels(labels, int(features.shape[0])) if labels else None
    epsilon = DEFAULT_EPSILON if epsilon is None else epsilon
    result = run_classify(features, n_classes, _knn_config(n_neighbors, metric, weights, search, seed), epsilon, seed,
                          preset, device_used, partition_device=device)
    if output:
        write_partition(result.classes, output)
    sizes = [int(size) for size in np.bincount(result.classes, minlength=n_classes)]
    summary = {"file": file, "output": output, "device": result.knn.device, "partition_device": result.partition.device,
               "search": result.knn.search, "samples": int(features.shape[0]), "features": int(features.shape[1]),
               "classes": n_classes, "neighbors": n_neighbors, "metric": metric, "weights": weights,
               "epsilon": epsilon, "seed": seed, "km1": int(result.partition.km1), "class_sizes": sizes,
               **(scores(known, result.classes) if known is not None else {}),
               "seconds": {"read": read_seconds, **result.seconds}}
    print_summary(reporter, f"classes of {file}", summary, as_json)
