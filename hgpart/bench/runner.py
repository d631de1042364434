"""Run hgpart and the peers on instances x k, collect km1, imbalance and seconds, medians over repeats."""

from __future__ import annotations

import glob
import os
import statistics
import tempfile
from dataclasses import dataclass, field, replace

import numpy as np

from ..config import CoarseningConfig, choose_communities, make_config
from ..hypergraph import Hypergraph
from ..io import read_hypergraph, strip_gz, write_hypergraph
from ..metrics import evaluate
from ..multilevel import partition
from . import peers as peer_module

SHARED_DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "..",
                           "shared", "data")
DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data")


def suite(name: str) -> list[str]:
    """Instances of a named suite: ``small`` (data/*.hgr*), ``shared`` (../shared/data/*.hgr*), ``default`` (both)."""
    small = sorted(glob.glob(os.path.join(DATA, "*.hgr*")))
    shared_dir = os.environ.get("HGPART_SHARED_DATA", SHARED_DATA)
    shared = sorted(glob.glob(os.path.join(shared_dir, "*.hgr*")))
    if name == "small":
        return small
    if name == "shared":
        return shared
    if name == "default":
        return shared or small
    raise ValueError(f"unknown suite {name!r} (small, shared or default)")


@dataclass
class Record:
    """One (instance, k, tool) cell: medians over repeats; ``runs`` keeps every repeat."""

    instance: str
    k: int
    tool: str
    km1: float | None = None
    cut: float | None = None
    imbalance: float | None = None
    balanced: bool | None = None
    seconds: float | None = None
    phases: dict = field(default_factory=dict)
    runs: list = field(default_factory=list)
    skipped: str | None = None


def _median_record(instance, k, tool, runs) -> Record:
    return Record(instance, k, tool, statistics.median(r["km1"] for r in runs), statistics.median(r["cut"] for r in runs),
                  max(r["imbalance"] for r in runs), all(r["balanced"] for r in runs),
                  statistics.median(r["seconds"] for r in runs),
                  {phase: statistics.median(r["phases"].get(phase, 0.0) for r in runs) for phase in runs[0]["phases"]},
                  runs)


def _without_empty_nets(hypergraph: Hypergraph, sizes: np.ndarray) -> Hypergraph:
    """The same hypergraph without its empty nets (they add nothing to km1 or cut; Mt-KaHyPar rejects them)."""
    if sizes.all():
        return hypergraph
    kept = sizes > 0
    net_offsets = np.zeros(int(kept.sum()) + 1, dtype=np.int64)
    np.cumsum(sizes[kept], out=net_offsets[1:])
    return Hypergraph.from_pins(hypergraph.num_vertices, net_offsets, hypergraph.pin_vertices,
                                hypergraph.vertex_weights, hypergraph.net_weights[kept])


def run_bench(files, ks, epsilon=0.03, objective="km1", repeat=1, peers=("mtkahypar",), threads=1, preset="default",
              kahypar_config=None, progress=None, variants=None, devices=("cpu",), communities=None) -> list[Record]:
    """Every file x k: each hgpart variant on each device (seeds 0..repeat-1) and each peer (same seeds), in
    one run.

    ``variants`` maps a tool name to a CoarseningConfig (default: ``{"hgpart": CoarseningConfig()}``); on the
    devices after the first, a variant's tool name gets the suffix ``:device`` (``hgpart:cpu``).
    ``communities``: community detection on or off (None: the preset's).
    """
    variants = variants or {"hgpart": CoarseningConfig()}
    variants = {(name if index == 0 else f"{name}:{device}"): (coarsening, device)
                for index, device in enumerate(devices) for name, coarsening in variants.items()}
    records = []
    for path in files:
        hypergraph = read_hypergraph(path)
        name = os.path.basename(strip_gz(path))
        with tempfile.TemporaryDirectory(prefix="hgpart-bench-") as folder:
            hgr_path = path
            sizes = hypergraph.net_sizes()
            if not path.endswith(".hgr") or not sizes.all():  # the peers read .hgr and reject empty nets
                hgr_path = os.path.join(folder, name if name.endswith(".hgr") else name + ".hgr")
                write_hypergraph(_without_empty_nets(hypergraph, sizes), hgr_path, "hgr")
            for k in ks:
                for tool, (coarsening, device) in variants.items():
                    runs = []
                    for seed in range(repeat):
                        config = make_config(k, epsilon, objective, seed, preset, coarsening=coarsening)
                        config = replace(config, communities=choose_communities(config.communities, communities))
                        result = partition(hypergraph, k, config=config, device=device)
                        metrics = result.metrics
                        runs.append({"seed": seed, "km1": metrics.km1, "cut": metrics.cut,
                                     "imbalance": metrics.imbalance, "balanced": bool(metrics.balanced),
                                     "seconds": result.seconds["total"], "device": result.device,
                                     "device_memory_bytes": result.device_memory_bytes,
                                     "phases": {p: s for p, s in result.seconds.items() if p != "total"}})
                        if progress:
                            progress()
                    records.append(_median_record(name, k, tool, runs))
                for peer in peers:
                    why = peer_module.available(peer)
                    if peer == "kahypar" and why is None and not kahypar_config:
                        why = "kahypar needs --kahypar-config (a KaHyPar .ini preset such as km1_kKaHyPar_sea20.ini)"
                    if why:
                        records.append(Record(name, k, peer, skipped=why))
                        continue
                    runs = []
                    for seed in range(repeat):
                        try:
                            blocks, seconds = peer_module.run_peer(peer, hgr_path, k, epsilon, objective, seed,
                                                                   threads, kahypar_config)
                        except Exception as error:  # a peer's failure is reported in its cell, not raised
                            why = f"{peer} failed: {' '.join(str(error).split())}"
                            break
                        metrics = evaluate(hypergraph, blocks, k, epsilon)  # measured by hgpart, the same way for all
                        runs.append({"seed": seed, "km1": metrics.km1, "cut": metrics.cut,
                                     "imbalance": metrics.imbalance, "balanced": bool(metrics.balanced),
                                     "seconds": seconds, "phases": {}})
                    records.append(Record(name, k, peer, skipped=why) if why else _median_record(name, k, peer, runs))
    return records


def comparison(records: list[Record], peer: str) -> dict:
    """Geometric means of the hgpart / other-tool ratios of km1 (each floored at 1) and of seconds, over the cells
    both ran, and how many cells of each were imbalanced."""
    ours = {(r.instance, r.k): r for r in records if r.tool == "hgpart"}
    theirs = {(r.instance, r.k): r for r in records if r.tool == peer and not r.skipped}
    keys = sorted(set(ours) & set(theirs))
    if not keys:
        return {}
    km1_ratios = np.array([max(ours[key].km1, 1) / max(theirs[key].km1, 1) for key in keys])
    time_ratios = np.array([ours[key].seconds / max(theirs[key].seconds, 1e-9) for key in keys])
    ks = np.array([key[1] for key in keys])
    worst = int(np.argmax(km1_ratios))
    return {"peer": peer, "cells": len(keys),
            "km1_ratio_geomean": float(np.exp(np.mean(np.log(km1_ratios)))),
            "time_ratio_geomean": float(np.exp(np.mean(np.log(time_ratios)))),
            "km1_ratio_max": float(km1_ratios[worst]), "km1_ratio_max_cell": [keys[worst][0], int(keys[worst][1])],
            "cells_above_1.10": int(np.sum(km1_ratios > 1.10)),
            "by_k": {int(k): {"cells": int(np.sum(ks == k)),
                              "km1_ratio_geomean": float(np.exp(np.mean(np.log(km1_ratios[ks == k])))),
                              "time_ratio_geomean": float(np.exp(np.mean(np.log(time_ratios[ks == k]))))}
                     for k in sorted(set(ks.tolist()))},
            "hgpart_imbalanced": sum(not ours[key].balanced for key in keys),
            "peer_imbalanced": sum(not theirs[key].balanced for key in keys)}


def phase_shares(records: list[Record], tool: str = "hgpart") -> dict:
    """Each phase's share of ``tool``'s time, per k and over all cells: ``pooled``, the phase's seconds over all
    runs divided by all runs' seconds, and ``median_cell``, the median over the cells of each cell's median run
    share. Cells without phases (a peer's) are left out; {} when none has any."""
    cells = [r for r in records if r.tool == tool and not r.skipped and r.runs and r.runs[0].get("phases")]
    if not cells:
        return {}
    phases = list(dict.fromkeys(phase for r in cells for phase in r.runs[0]["phases"]))

    def shares(chosen: list[Record]) -> dict:
        total = sum(run["seconds"] for r in chosen for run in r.runs) or 1e-9
        return {"cells": len(chosen), **{phase: {
            "pooled": sum(run["phases"].get(phase, 0.0) for r in chosen for run in r.runs) / total,
            "median_cell": statistics.median(statistics.median(run["phases"].get(phase, 0.0) / max(run["seconds"], 1e-9)
                                                               for run in r.runs) for r in chosen)}
            for phase in phases}}

    by_k = {int(k): shares([r for r in cells if r.k == k]) for k in sorted({r.k for r in cells})}
    return {"tool": tool, "all": shares(cells), "by_k": by_k}


def ratio(ours: Record, theirs: Record, attribute: str) -> float:
    """ours / theirs of ``attribute`` (km1 and cut floored at 1, seconds at 1e-9)."""
    floor = 1e-9 if attribute == "seconds" else 1
    return max(getattr(ours, attribute), floor) / max(getattr(theirs, attribute), floor)


def cell_table(records: list[Record], objective: str, tools: list[str], peers: list[str]):
    """(columns, rows) of a partition bench, a row per (instance, k): each tool's objective, seconds and
    imbalance ("skipped" where it did not run), then hgpart's objective and time ratios against each peer."""
    columns = ["instance", "k"] + [f"{tool} {what}" for tool in tools for what in (objective, "s", "imb")]
    columns += [f"{objective} / {peer}" for peer in peers] + [f"s / {peer}" for peer in peers]
    cells = {(r.instance, r.k, r.tool): r for r in records}
    rows = []
    for instance, k in dict.fromkeys((r.instance, r.k) for r in records):
        row = [instance, k]
        for tool in tools:
            r = cells[(instance, k, tool)]
            row += ["skipped", "-", "-"] if r.skipped else [getattr(r, objective), r.seconds, r.imbalance]
        ours = cells[(instance, k, "hgpart")]
        for attribute in (objective, "seconds"):
            for peer in peers:
                theirs = cells[(instance, k, peer)]
                row.append("-" if theirs.skipped else ratio(ours, theirs, attribute))
        rows.append(row)
    return columns, rows


def records_from_json(rows: list[dict]) -> list[Record]:
    """The records of a saved report (``report["records"]``) as Record objects."""
    return [Record(**row) for row in rows]
