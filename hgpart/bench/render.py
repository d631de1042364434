"""``docs/benchmarks.md`` from the saved reports (``hgpart bench ... --save FILE.json``).

Each report becomes a section: its provenance (:func:`.report.environment`), its settings and its rows. A
partition bench also gets the geometric means of hgpart's ratios against each other tool, per k and over all
cells, and two performance profiles (Dolan and Moré 2002, as drawn in the KaHyPar and Mt-KaHyPar papers): for
each tool, the fraction of (instance, k) cells on which its objective, or its time, is within a factor tau of
the best tool's on that cell, against tau. A cell a tool skipped counts as never within any tau; for the
objective, so does an imbalanced partition.

The page holds only what the reports hold, and the same reports give the same page and the same SVG files
(sorted files, fixed number formats, matplotlib's ``svg.hashsalt`` set and no date in the SVG).
"""

from __future__ import annotations

import glob
import io
import json
import math
import os

from ..errors import InputError
from ..io import atomic_output
from .runner import cell_table, comparison, phase_shares, records_from_json

TITLES = {"partition": "partitioning against the peers", "coarsen": "one coarsening level, CPU path and GPU",
          "cluster": "modularity clustering", "mst": "minimum spanning forest", "triangles": "triangle counting",
          "classify": "unsupervised classification against scikit-learn"}
TABLE_KEYS = ("records", "comparison", "phase_shares", "instances", "paper_table_iii", "environment", "bench")


class MissingExtraError(ImportError):
    """An optional dependency of the ``bench`` extra is not installed (the message says how to install it)."""


# ---------------------------------------------------------------------------------------- numbers
def number(value) -> str:
    """A table cell: integers with thousands separators, floats to 4 significant digits (no exponent from 1
    up), booleans as yes/no, None as '-'."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.4g}"
    if isinstance(value, (list, tuple)):
        return ", ".join(number(item) for item in value)
    return str(value).replace("|", "\\|").replace("\n", " ")


def code(text: str) -> str:
    """``text`` as a markdown code span."""
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}" if fence == "`" else f"{fence} {text} {fence}"


def markdown_table(columns: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(number(column) for column in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(number(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# -------------------------------------------------------------------------------------- profiles
def profile_ratios(values: dict[str, list]) -> dict[str, list[float]]:
    """For each tool, its value on each cell over the best value any tool has there (values floored at 1e-9;
    None, a missing or failed result, gives inf). ``values``: tool -> one value per cell, cells in the same
    order for every tool."""
    tools = list(values)
    cells = len(values[tools[0]]) if tools else 0
    ratios = {tool: [] for tool in tools}
    for cell in range(cells):
        present = [max(values[tool][cell], 1e-9) for tool in tools if values[tool][cell] is not None]
        best = min(present) if present else None
        for tool in tools:
            value = values[tool][cell]
            ratios[tool].append(math.inf if value is None or best is None else max(value, 1e-9) / best)
    return ratios


def fraction_within(ratios: list[float], tau: float) -> float:
    """The fraction of cells whose ratio is at most tau (rho(tau) of the performance profile)."""
    return sum(ratio <= tau * (1 + 1e-12) for ratio in ratios) / len(ratios) if ratios else 0.0


def profile(values: dict[str, list], taus: list[float]) -> dict[str, list[float]]:
    """Each tool's performance profile at ``taus``: the fraction of cells within a factor tau of the best."""
    ratios = profile_ratios(values)
    return {tool: [fraction_within(tool_ratios, tau) for tau in taus] for tool, tool_ratios in ratios.items()}


def partition_profiles(records, objective: str) -> tuple[dict[str, list], dict[str, list]]:
    """(objective values, seconds) per tool over the (instance, k) cells of a partition bench; None where the
    tool skipped the cell, and for the objective also where its partition is imbalanced. km1 and cut are
    floored at 1, as in the ratios of :func:`.runner.comparison`."""
    tools = list(dict.fromkeys(r.tool for r in records))
    cells = list(dict.fromkeys((r.instance, r.k) for r in records))
    by_cell = {(r.instance, r.k, r.tool): r for r in records}
    quality = {tool: [] for tool in tools}
    seconds = {tool: [] for tool in tools}
    for instance, k in cells:
        for tool in tools:
            r = by_cell.get((instance, k, tool))
            ran = r is not None and not r.skipped
            quality[tool].append(max(getattr(r, objective), 1) if ran and r.balanced else None)
            seconds[tool].append(r.seconds if ran else None)
    return quality, seconds


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise MissingExtraError("matplotlib is not installed; it draws the performance profiles: "
                                "pip install 'hgpart[bench]'") from None
    return Figure


def plot_profile(values: dict[str, list], what: str, path: str) -> None:
    """Draw the performance profile of ``values`` (tool -> value per cell) to the SVG file ``path``: a step
    line per tool, tau on a log axis from 1 to the largest finite ratio."""
    figure_class = _figure_class()
    import matplotlib
    import matplotlib.ticker

    ratios = profile_ratios(values)
    finite = sorted({ratio for tool_ratios in ratios.values() for ratio in tool_ratios if math.isfinite(ratio)})
    right = max(1.1, (finite[-1] if finite else 1.0) * 1.05)
    taus = sorted({1.0, right, *finite})
    settings = {"svg.hashsalt": "hgpart", "svg.fonttype": "none", "font.size": 10}
    with matplotlib.rc_context(settings):
        figure = figure_class(figsize=(6.0, 3.6))
        axes = figure.add_subplot()
        styles = ["-", "--", "-.", ":"]
        for index, (tool, tool_ratios) in enumerate(ratios.items()):
            axes.step(taus, [fraction_within(tool_ratios, tau) for tau in taus], where="post", label=tool,
                      linestyle=styles[index % len(styles)], linewidth=1.6)
        axes.set_xscale("log")
        axes.set_xlim(1.0, right)
        plain = matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}")
        axes.xaxis.set_major_formatter(plain)
        axes.xaxis.set_minor_formatter(plain if right <= 3 else matplotlib.ticker.NullFormatter())
        axes.set_ylim(0.0, 1.02)
        axes.set_xlabel(f"tau ({what} within a factor tau of the best tool's)")
        axes.set_ylabel("fraction of instance-k cells")
        axes.grid(True, which="both", linewidth=0.3)
        axes.legend(loc="lower right")
        figure.tight_layout()
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_output(path, binary=True) as handle:
        handle.write(buffer.getvalue())


# ---------------------------------------------------------------------------------------- sections
def provenance(report: dict) -> str:
    """One line: commit, date, device, CPU, cores and threads, versions, the command."""
    environment = report.get("environment")
    if not environment:
        return "Provenance: not recorded in this report."
    parts = []
    commit = environment.get("commit")
    if commit:
        parts.append(f"commit {code(commit[:12])}" + (" (uncommitted changes)" if environment.get("dirty") else ""))
    else:
        parts.append("commit not recorded")
    parts.append(f"{environment.get('date', '-')}")
    parts.append(f"device {environment.get('device', '-')}")
    parts.append(f"CPU {environment.get('cpu', '-')} ({number(environment.get('cores'))} cores, "
                 f"{number(environment.get('threads'))} threads used)")
    if environment.get("load"):
        parts.append(f"load average {' / '.join(f'{value:.2f}' for value in environment['load'])} (1 / 5 / 15 "
                     f"min) when saved")
    parts.append(", ".join(f"{name} {version}" for name, version in environment.get("versions", {}).items()))
    line = "; ".join(parts) + "."
    if environment.get("command"):
        line += f"\n\nCommand: {code(environment['command'])}"
    return line


def settings(report: dict) -> str:
    """The report's scalar fields (device, threads, epsilon, repeat, ...) as one line."""
    fields = [f"{key} {number(value)}" for key, value in report.items()
              if key not in TABLE_KEYS and not isinstance(value, (dict, list))]
    return "Settings: " + ", ".join(fields) + "." if fields else ""


def partition_section(report: dict, stem: str, image_dir: str, page_dir: str) -> tuple[str, list[str]]:
    """The tables and profiles of a partition bench; returns (markdown, SVG files written)."""
    records = records_from_json(report.get("records", []))
    objective = report.get("objective", "km1")
    tools = list(dict.fromkeys(r.tool for r in records))
    peers = [tool for tool in tools if tool.split(":")[0] != "hgpart"]
    others = [tool for tool in tools if tool != "hgpart"]
    columns, rows = cell_table(records, objective, tools, peers)
    text = "Per instance and k (medians over the repeats; imb: imbalance; ratios: hgpart / peer):\n\n"
    text += markdown_table(columns, rows)
    means = []
    for other in others:
        for k in sorted({r.k for r in records}) + ["all"]:
            chosen = records if k == "all" else [r for r in records if r.k == k]
            summary = comparison(chosen, other)
            if summary:
                means.append([other, k, summary["cells"], summary["km1_ratio_geomean"], summary["km1_ratio_max"],
                              summary["cells_above_1.10"], summary["time_ratio_geomean"],
                              summary["hgpart_imbalanced"], summary["peer_imbalanced"]])
    if means:
        text += ("\nGeometric means of hgpart's ratios against each other tool, per k and over all cells (km1 "
                 "floored at 1):\n\n")
        text += markdown_table(["against", "k", "cells", "km1 ratio", "worst km1 ratio", "cells above 1.10",
                                "time ratio", "hgpart imbalanced", "other imbalanced"], means)
    shares = phase_shares(records)
    if shares:
        phases = [phase for phase in shares["all"] if phase != "cells"]
        text += ("\nhgpart's phases as shares of its time (pooled: a phase's seconds over all runs' seconds; median "
                 "cell: the median over the cells of each cell's median run):\n\n")
        text += markdown_table(["k", "cells"] + [f"{phase} pooled / median cell" for phase in phases],
                               [[k, row["cells"]] + [f"{row[phase]['pooled']:.1%} / {row[phase]['median_cell']:.1%}"
                                                     for phase in phases]
                                for k, row in list(shares["by_k"].items()) + [("all", shares["all"])]])
    written = []
    if len(tools) > 1 and records:
        quality, seconds = partition_profiles(records, objective)
        images = []
        for name, values, label in ((objective, quality, objective), ("time", seconds, "time")):
            path = os.path.join(image_dir, f"{stem}-{name}-profile.svg")
            plot_profile(values, label, path)
            written.append(path)
            images.append(f"![{label} performance profile of {stem}]"
                          f"({os.path.relpath(path, page_dir).replace(os.sep, '/')})")
        text += (f"\nPerformance profiles: for each tool, the fraction of the {len(quality[tools[0]])} instance-k "
                 f"cells on which its {objective} (first figure) or its time (second) is within a factor tau of the "
                 f"best tool's on that cell; a cell the tool skipped never counts, nor, for {objective}, an "
                 f"imbalanced partition.\n\n" + "\n".join(images) + "\n")
    return text, written


def instance_section(report: dict) -> str:
    """The rows of a cluster, mst, triangles or coarsen bench (every scalar key of any row is a column)."""
    rows = report.get("instances", [])
    columns = list(dict.fromkeys(key for row in rows for key, value in row.items()
                                 if not isinstance(value, (dict, list))))
    text = markdown_table(columns, [[row.get(column) for column in columns] for row in rows]) if rows else ""
    if report.get("paper_table_iii"):
        text += "\nCheng, Cho and Yoon 2015, Table III (K20c vs sequential Mondriaan), as the report holds it:\n\n"
        text += markdown_table(["input", "GPU s", "sequential s"], [list(row) for row in report["paper_table_iii"]])
    return text


def bench_kind(report: dict) -> str:
    """The bench that wrote a report (its "bench" key; older reports by their keys)."""
    if "bench" in report:
        return report["bench"]
    if "records" in report:
        return "partition"
    return "coarsen" if "paper_table_iii" in report else "instances"


def load_reports(folder: str) -> list[tuple[str, dict]]:
    """(file, report) for every ``*.json`` under ``folder``, sorted by path."""
    paths = sorted(glob.glob(os.path.join(folder, "**", "*.json"), recursive=True))
    if not paths:
        raise InputError(f"no saved reports (*.json) in {folder}")
    reports = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                report = json.load(handle)
        except (OSError, ValueError) as error:
            raise InputError(f"not a JSON report: {' '.join(str(error).split())}", path) from None
        if not isinstance(report, dict):
            raise InputError("not a JSON report (expected an object)", path)
        reports.append((path, report))
    return reports


def render_markdown(reports: list[tuple[str, dict]], input_dir: str, page_dir: str,
                    image_dir: str) -> tuple[str, list[str]]:
    """The page for ``reports`` and the SVG files it links (written to ``image_dir``)."""
    lines = ["# Benchmarks", "",
             f"Rendered by {code('hgpart bench render')} from the saved reports in {code(input_dir)}, one section "
             f"each; do not edit by hand. Every number below is in those files.", ""]
    written = []
    for path, report in reports:
        stem = os.path.splitext(os.path.relpath(path, input_dir))[0].replace(os.sep, "-")
        kind = bench_kind(report)
        source = os.path.relpath(path, page_dir).replace(os.sep, "/")
        lines += [f"## {stem}", "", f"{code('hgpart bench ' + kind)}: {TITLES.get(kind, kind)}; from "
                  f"[{os.path.basename(path)}]({source}).", "", provenance(report), ""]
        if settings(report):
            lines += [settings(report), ""]
        if kind == "partition":
            text, images = partition_section(report, stem, image_dir, page_dir)
            written += images
        else:
            text = instance_section(report)
        lines += [text.rstrip("\n"), ""]
    return "\n".join(lines).rstrip("\n") + "\n", written


def render(input_dir: str = "benchmarks", output: str = os.path.join("docs", "benchmarks.md"),
           image_dir: str | None = None) -> list[str]:
    """Write the page ``output`` from the reports under ``input_dir``, and the profiles' SVG files to
    ``image_dir`` (default: img/ beside the page); returns the files written."""
    page_dir = os.path.dirname(os.path.abspath(output))
    image_dir = image_dir or os.path.join(os.path.dirname(output), "img")
    reports = load_reports(input_dir)
    page, written = render_markdown(reports, input_dir, page_dir, image_dir)
    os.makedirs(page_dir, exist_ok=True)
    with atomic_output(output) as handle:
        handle.write(page)
    return [output, *written]
