"""The provenance of saved bench reports and the page rendered from them (hgpart.bench.report, .render)."""

import json
import os
import re
import sys

import pytest
from click.testing import CliRunner

from hgpart.bench.render import fraction_within, profile, profile_ratios
from hgpart.bench.report import PROVENANCE_KEYS, environment, git_state
from hgpart.bench.runner import Record, phase_shares
from hgpart.cli import cli

from ..conftest import DATA

KARATE = str(DATA / "karate.graph")


def run(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_a_saved_report_records_where_it_came_from(tmp_path):
    saved = tmp_path / "reports" / "karate.json"  # the folder is made
    result = run("bench", "partition", KARATE, "-k", "2", "--peers", "none", "--preset", "fast", "--threads", 1,
                 "--save", saved, "-q")
    assert result.exit_code == 0, result.output
    report = json.loads(saved.read_text())
    assert report["bench"] == "partition" and report["records"][0]["tool"] == "hgpart"
    provenance = report["environment"]
    assert set(PROVENANCE_KEYS) <= set(provenance)
    assert provenance["command"] == (f"hgpart bench partition {KARATE} -k 2 --peers none --preset fast --threads 1 "
                                     f"--save {saved} -q")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", provenance["date"])
    assert provenance["device"] == "cpu" and provenance["threads"] == 1 and provenance["cores"] >= 1
    assert {"python", "hgpart", "numpy", "numba", "scipy"} <= set(provenance["versions"])
    assert provenance["commit"] is None or re.fullmatch(r"[0-9a-f]{40}", provenance["commit"])


def test_outside_a_checkout_the_commit_is_unknown(tmp_path):
    assert git_state(str(tmp_path)) == (None, None)
    assert environment("cpu", 3, "hgpart bench mst")["command"] == "hgpart bench mst"


def test_profile_fractions_on_a_hand_made_example():
    km1 = {"a": [10, 20, 30], "b": [12, 20, 15]}  # ratios to the best: a 1, 1, 2; b 1.2, 1, 1
    assert profile_ratios(km1) == {"a": [1.0, 1.0, 2.0], "b": [1.2, 1.0, 1.0]}
    assert profile(km1, [1.0, 1.1, 1.2, 2.0]) == {"a": [2 / 3, 2 / 3, 2 / 3, 1.0], "b": [2 / 3, 2 / 3, 1.0, 1.0]}
    failed = profile_ratios({"a": [10, None], "b": [None, None]})  # no result: never within any tau
    assert failed == {"a": [1.0, float("inf")], "b": [float("inf"), float("inf")]}
    assert fraction_within(failed["a"], 1e9) == 0.5


def test_phase_shares_pooled_and_per_cell_on_a_hand_made_example():
    def cell(k, runs):  # runs: (seconds, communities, refinement)
        return Record("x.hgr", k, "hgpart", 1, 1, 0.0, True, 1.0, {}, [
            {"seconds": s, "phases": {"communities": c, "refinement": r}} for s, c, r in runs])

    records = [cell(2, [(1.0, 0.1, 0.5), (2.0, 0.4, 1.0), (4.0, 0.4, 2.0)]),  # run shares 0.1, 0.2, 0.1
               cell(2, [(10.0, 5.0, 1.0)]), cell(8, [(1.0, 0.3, 0.2)]),
               Record("x.hgr", 2, "mtkahypar", 1, 1, 0.0, True, 1.0, {}, [{"seconds": 9.0, "phases": {}}])]
    shares = phase_shares(records)
    assert shares["by_k"][2]["cells"] == 2
    assert shares["by_k"][2]["communities"]["pooled"] == pytest.approx(5.9 / 17.0)
    assert shares["by_k"][2]["communities"]["median_cell"] == pytest.approx((0.1 + 0.5) / 2)
    assert shares["by_k"][8]["refinement"] == pytest.approx({"pooled": 0.2, "median_cell": 0.2})
    assert shares["all"]["communities"]["pooled"] == pytest.approx(6.2 / 18.0)
    assert shares["all"]["communities"]["median_cell"] == pytest.approx(0.3)  # cells 0.1, 0.5, 0.3
    assert phase_shares(records[3:]) == {}


def _record(instance, k, tool, km1, seconds, balanced=True, skipped=None):
    return {"instance": instance, "k": k, "tool": tool, "km1": km1, "cut": km1, "imbalance": 0.01,
            "balanced": balanced, "seconds": seconds, "phases": {}, "runs": [], "skipped": skipped}


def _write_reports(folder):
    folder.mkdir()
    records = [_record("a.hgr", 2, "hgpart", 10, 1.0), _record("a.hgr", 2, "mtkahypar", 12, 2.0),
               _record("a.hgr", 8, "hgpart", 20, 2.0), _record("a.hgr", 8, "mtkahypar", 20, 2.0),
               _record("b.hgr", 2, "hgpart", 30, 3.0), _record("b.hgr", 2, "mtkahypar", 15, 1.5)]
    provenance = {"commit": "0123456789abcdef0123456789abcdef01234567", "dirty": False, "date": "2026-01-02T03:04:05Z",
                  "device": "cpu", "cpu": "Test CPU", "cores": 2, "threads": 2,
                  "versions": {"python": "3.11.7", "hgpart": "0.1.0"}, "command": "hgpart bench --suite small"}
    partition = {"bench": "partition", "environment": provenance, "device": "cpu", "threads": 2, "epsilon": 0.03,
                 "objective": "km1", "preset": "default", "repeat": 1, "jit_seconds": 1.5, "records": records,
                 "comparison": []}
    (folder / "partition.json").write_text(json.dumps(partition))
    triangles = {"device": "cpu", "threads": 2, "repeat": 3, "jit_seconds": 0.5,  # an older report: no provenance
                 "instances": [{"instance": "wiki-Vote", "edges": 100762, "triangles": 608389, "cpu s": 0.0123}]}
    (folder / "triangles.json").write_text(json.dumps(triangles))


def test_render_two_reports(tmp_path):
    _write_reports(tmp_path / "reports")
    page = tmp_path / "docs" / "benchmarks.md"
    result = run("bench", "render", "--input", tmp_path / "reports", "--output", page)
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert text.index("## partition") < text.index("## triangles")
    assert "commit `0123456789ab`" in text and "Test CPU (2 cores, 2 threads used)" in text
    assert "Command: `hgpart bench --suite small`" in text
    assert "| instance | k | hgpart km1 | hgpart s | hgpart imb | mtkahypar km1 |" in text
    assert "| b.hgr | 2 | 30 | 3 | 0.01 | 15 | 1.5 | 0.01 | 2 | 2 |" in text
    # k = 2: km1 sqrt(10/12 * 30/15), the worst 30/15, one cell above 1.10; time sqrt(1/2 * 2)
    assert "| mtkahypar | 2 | 2 | 1.291 | 2 | 1 | 1 | 0 | 0 |" in text
    assert "| mtkahypar | all | 3 | 1.186 | 2 | 1 | 1 | 0 | 0 |" in text  # (10/12 * 1 * 2) ** (1/3)
    assert "| wiki-Vote | 100,762 | 608,389 | 0.0123 |" in text and "Provenance: not recorded" in text
    images = sorted(path.name for path in (tmp_path / "docs" / "img").iterdir())
    assert images == ["partition-km1-profile.svg", "partition-time-profile.svg"]
    assert "](img/partition-km1-profile.svg)" in text and "](img/partition-time-profile.svg)" in text
    first = {path: path.read_bytes() for path in [page, *(tmp_path / "docs" / "img").iterdir()]}
    assert b"<svg" in first[tmp_path / "docs" / "img" / "partition-km1-profile.svg"]
    run("bench", "render", "--input", tmp_path / "reports", "--output", page, "-q")
    assert {path: path.read_bytes() for path in first} == first  # the same reports give the same files


def test_render_without_matplotlib_is_one_line(tmp_path, monkeypatch):
    _write_reports(tmp_path / "reports")
    for name in [name for name in sys.modules if name.split(".")[0] == "matplotlib"]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib now raises ImportError
    page = tmp_path / "benchmarks.md"
    result = run("bench", "render", "--input", tmp_path / "reports", "--output", page)
    assert result.exit_code == 1 and not page.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ") and "pip install 'hgpart[bench]'" in lines[0]


def test_render_errors(tmp_path):
    result = run("bench", "render", "--input", tmp_path, "--output", tmp_path / "b.md")
    assert result.exit_code == 1 and "no saved reports" in result.stderr
    (tmp_path / "bad.json").write_text("{")
    result = run("bench", "render", "--input", tmp_path, "--output", tmp_path / "b.md")
    assert result.exit_code == 1 and "bad.json" in result.stderr and "not a JSON report" in result.stderr


def test_docs_benchmarks_is_rendered_from_the_committed_reports(tmp_path, monkeypatch):
    """docs/benchmarks.md and its profiles are exactly what `hgpart bench render` makes of benchmarks/*.json."""
    import shutil

    pytest.importorskip("matplotlib")
    from hgpart.bench.render import render

    from ..conftest import ROOT

    shutil.copytree(ROOT / "benchmarks", tmp_path / "benchmarks")
    monkeypatch.chdir(tmp_path)
    written = render("benchmarks", "docs/benchmarks.md")
    assert (tmp_path / "docs" / "benchmarks.md").read_text() == (ROOT / "docs" / "benchmarks.md").read_text()
    for path in written[1:]:
        assert (tmp_path / path).read_bytes() == (ROOT / path).read_bytes(), path


def test_graph_bench_rows_say_what_auto_picks_and_what_it_costs():
    """auto_choice: the device auto picks by the graph's edges and its host time over the faster device's; no
    entry unless both devices ran."""
    from hgpart.bench import auto_choice
    from hgpart.config import GraphPolicyConfig

    edges = GraphPolicyConfig().triangles_min_edges
    assert GraphPolicyConfig().mst_min_edges <= edges < GraphPolicyConfig().cluster_min_edges
    for command, device, ratio in (("triangles", "gpu", 1.0), ("mst", "gpu", 1.0), ("cluster", "cpu", 4.0)):
        row = {"edges": edges, "gpu host s": 0.5, "cpu host s": 2.0}
        auto_choice(row, command)
        assert row["auto device"] == device and row["auto / faster"] == ratio
    alone = {"edges": edges, "cpu host s": 2.0}
    auto_choice(alone, "cluster")
    assert "auto device" not in alone




@pytest.mark.parametrize("command, merge", [("cluster", "max"), ("triangles", "max"), ("mst", "min")])
def test_graph_benches_read_a_tiny_graph_of_each_format_before_timing_the_first_file(monkeypatch, command, merge):
    """The first file's ``read s`` is its reading: each graph bench first reads a tiny graph (a triangle) in
    every graph reader's format, by the bench's merge rule, so numba has loaded or compiled the readers by then."""
    import hgpart.io

    calls = []
    real = hgpart.io.read_graph

    def recording(path, format=None, merge="min"):
        graph = real(path, format, merge)
        calls.append((os.path.basename(path), hgpart.io.detect_format(path, None, format), graph.num_vertices,
                      graph.num_edges, merge))
        return graph

    monkeypatch.setattr(hgpart.io, "read_graph", recording)
    options = {"cluster": ["--louvain-seeds", 0], "triangles": [],
               "mst": ["--gnm", "", "--grid", 0, "--rmat", 0, "--no-scipy"]}
    result = run("bench", command, KARATE, "--device", "cpu", "--repeat", 1, "-q", *options[command])
    assert result.exit_code == 0, result.output
    *tiny, timed = calls
    assert sorted(call[1] for call in tiny) == ["edgelist", "gr", "metis", "mtx", "mtx"]
    assert all(call[2:] == (3, 3, merge) for call in tiny)
    assert timed == ("karate.graph", "metis", 34, 78, merge)
