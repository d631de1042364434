import json
import os

import numpy as np
import pytest
from click.testing import CliRunner

from hgpart.cli import cli
from hgpart.io import atomic_output, read_hypergraph

from ..conftest import DATA

IBM01 = str(DATA / "ibm01.hgr")


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


def assert_one_line_error(result, *fragments):
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_version_and_help_examples():
    assert run("--version").stdout.strip() == "hgpart 0.1.0"
    for command in ("info", "evaluate", "convert", "generate", "partition", "coarsen", "bench"):
        help_text = run(command, "--help").stdout
        assert "Example:" in help_text.split("Options:")[-1], command


def test_info_json_is_the_only_stdout():
    result = run("info", IBM01, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["vertices"], summary["nets"], summary["pins"]) == (12752, 14111, 50566)
    assert set(summary["net_size"]) == {"min", "q1", "median", "q3", "max", "mean"}
    assert result.stderr == ""


def test_info_plain_summary_on_stderr_and_quiet():
    result = run("info", str(DATA / "karate.graph"))
    assert result.exit_code == 0 and result.stdout == ""
    assert "vertices: 34" in result.stderr
    assert run("info", str(DATA / "karate.graph"), "-q").stderr == ""


def test_info_reads_stdin():
    result = run("info", "-", "--format", "hgr", "--json", input="2 3\n1 2\n2 3\n")
    assert json.loads(result.stdout)["pins"] == 4


def test_evaluate(tmp_path):
    partition = tmp_path / "p"
    partition.write_text("".join(f"{v % 4}\n" for v in range(12752)))
    result = run("evaluate", IBM01, partition, "-k", 4, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["k"] == 4 and summary["km1"] > 0 and summary["balanced"] is True


def test_evaluate_bad_partition(tmp_path):
    partition = tmp_path / "p"
    partition.write_text("0\n1\n")
    assert_one_line_error(run("evaluate", IBM01, partition), f"{partition}:2:", "expected 12752 lines")
    partition.write_text("".join(f"{v % 4}\n" for v in range(12752)))
    assert_one_line_error(run("evaluate", IBM01, partition, "-k", 3), f"{partition}:4:", "block id 3")


@pytest.mark.parametrize("content,fragment", [
    ("", "empty file"),
    ("2 3\n1 2\n", "header says 2 nets"),
    ("1 3\n1 4\n", "pin 4 is out of range"),
    ("1 3 5\n1 2\n", "unknown fmt code 5"),
])
def test_bad_files_give_one_error_line(tmp_path, content, fragment):
    path = tmp_path / "bad.hgr"
    path.write_text(content)
    assert_one_line_error(run("info", path), str(path), fragment)


def test_bad_arguments_give_one_error_line():
    assert_one_line_error(run("info"), "Missing argument")
    assert_one_line_error(run("info", IBM01, "--bogus"), "No such option")
    assert_one_line_error(run("generate", "grid", "-n", "0", "-o", "x.hgr"), "-n")
    assert_one_line_error(run("nonsense"), "No such command")
    assert_one_line_error(run("info", "absent.hgr"), "absent.hgr: no such file")


def test_convert_and_generate(tmp_path):
    target = tmp_path / "ibm01.mtx"
    result = run("convert", IBM01, target, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["pins"] == 50566
    assert read_hypergraph(str(target)).num_pins == 50566
    output = tmp_path / "g.hgr"
    result = run("generate", "evenly", "-n", 2000, "--seed", 3, "-o", output, "--json")
    assert result.exit_code == 0, result.output
    first = output.read_bytes()
    run("generate", "evenly", "-n", 2000, "--seed", 3, "-o", output)
    assert output.read_bytes() == first
    result = run("generate", "rmat", "-n", 256, "--weights", "int", "-o", "-")
    assert result.exit_code == 0 and len(result.stdout.splitlines()) == 16 * 256
    assert oct(os.stat(output).st_mode & 0o777) != oct(0o600)


def test_failed_write_leaves_nothing(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_output(str(target)) as handle:
            handle.write("partial")
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []
    result = run("convert", IBM01, tmp_path / "x.graph")
    assert_one_line_error(result, "two pins")
    assert os.listdir(tmp_path) == []


SAT = str(DATA / "sat14_AProVE07-27.cnf.primal.hgr.gz")


def test_graph_commands_choose_the_device_after_reading(monkeypatch, tmp_path):
    """--device auto on cluster, mst and triangles: the device is chosen by the graph's edges once it is read
    (karate: 78 edges, below every bound: the CPU, even where a GPU is usable), and --json says why."""
    import hgpart.device
    import hgpart.policy

    karate = str(DATA / "karate.graph")
    outputs = {"cluster": ["-o", str(tmp_path / "karate.clusters")], "mst": [], "triangles": []}

    def summary(command, *options):
        result = run(command, karate, *outputs[command], "--json", *options)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: False)
    for command in outputs:
        assert summary(command)["device_reason"] == "auto: no usable CUDA GPU: the CPU"
    monkeypatch.setattr(hgpart.policy, "resolve_device", lambda requested, gpu_implemented=False: (
        "cpu" if requested == "cpu" else "gpu", None))
    for command in outputs:
        chosen = summary(command)
        assert chosen["device"] == "cpu" and chosen["device_reason"].startswith(
            f"auto: 78 edges, fewer than graph_policy.{command}_min_edges = ")
        assert summary(command, "--device", "cpu")["device_reason"] is None


def test_partition_writes_a_balanced_file_and_evaluate_agrees(tmp_path):
    output = tmp_path / "sat.part.4"
    result = run("partition", SAT, "-k", 4, "--seed", 3, "--preset", "fast", "-o", output, "--json")
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["balanced"] and summary["device"] == "cpu" and summary["output"] == str(output)
    assert summary["device_reason"].startswith("auto: ")  # no GPU, or an input below policy.auto_gpu_min_pins
    assert set(summary["seconds"]) >= {"read", "coarsening", "initial", "refinement", "total"}
    checked = json.loads(run("evaluate", SAT, output, "-k", 4, "--json").stdout)
    assert (checked["km1"], checked["cut"], checked["balanced"]) == (summary["km1"], summary["cut"], True)
    again = tmp_path / "again"
    run("partition", SAT, "-k", 4, "--seed", 3, "--preset", "fast", "-o", again)
    assert again.read_bytes() == output.read_bytes()


def test_partition_default_output_name_and_stdout(tmp_path):
    source = tmp_path / "small.hgr"
    source.write_text("4 6\n1 2\n2 3\n4 5\n5 6 1\n")
    result = run("partition", source, "-k", 2, "-q")
    assert result.exit_code == 0 and result.stderr == ""
    assert (tmp_path / "small.hgr.part.2").read_text().count("\n") == 6
    piped = run("partition", "-", "-k", 2, "--format", "hgr", "-q", input=source.read_text())
    assert piped.stdout.split() == (tmp_path / "small.hgr.part.2").read_text().split()


def test_partition_errors(tmp_path):
    fix = tmp_path / "fix"
    fix.write_text("0\n")
    assert_one_line_error(run("partition", IBM01, "-k", 2, "--fixed", fix), f"{fix}:1:", "expected 12752 lines")
    assert_one_line_error(run("partition", IBM01, "-k", 0), "-k")
    assert_one_line_error(run("partition", IBM01, "-k", 2, "--device", "gpu"), "--device gpu")
    weighted = tmp_path / "heavy.hgr"
    weighted.write_text("1 3 10\n1 2\n50\n1\n1\n")
    output = tmp_path / "heavy.part"
    assert_one_line_error(run("partition", weighted, "-k", 2, "-o", output), "exceeds the block bound")
    assert not output.exists()


def test_partition_honours_fixed_vertices(tmp_path):
    fix = tmp_path / "fix"
    fix.write_text("".join("1\n" if v < 50 else "-1\n" for v in range(7729)))
    output = tmp_path / "p"
    result = run("partition", SAT, "-k", 2, "--fixed", fix, "--preset", "fast", "-o", output, "-q")
    assert result.exit_code == 0, result.output
    assert set(output.read_text().split()[:50]) == {"1"}


def test_partition_and_coarsen_report_their_communities(tmp_path):
    """Community detection is on by default (off in the fast preset); --no-communities /
    --communities override the preset and k; the summary and --json give their number and seconds."""
    from hgpart.preprocessing.communities import detect_communities

    expected = detect_communities(read_hypergraph(SAT)).count
    runs = {}
    for options in ((), ("--no-communities",), ("--preset", "fast"), ("--preset", "fast", "--communities")):
        result = run("partition", SAT, "-k", 4, "-o", tmp_path / "p", "--json", *options)
        assert result.exit_code == 0, result.output
        runs[options] = json.loads(result.stdout)
    assert runs[()]["communities"] == runs[("--preset", "fast", "--communities")]["communities"] == expected > 1
    assert runs[("--no-communities",)]["communities"] is None and runs[("--preset", "fast")]["communities"] is None
    assert runs[()]["seconds"]["communities"] > 0 and runs[("--no-communities",)]["seconds"]["communities"] == 0
    plain = run("partition", SAT, "-k", 4, "-o", tmp_path / "p")
    assert f"communities: {expected}" in plain.stderr and plain.stdout == ""
    two = json.loads(run("partition", SAT, "-k", 2, "-o", tmp_path / "p", "--json", "--preset", "fast").stdout)
    forced = json.loads(run("partition", SAT, "-k", 2, "-o", tmp_path / "p", "--json", "--preset", "fast",
                            "--communities").stdout)
    assert two["communities"] is None and forced["communities"] == expected
    coarsened = json.loads(run("coarsen", SAT, "-k", 8, "--json").stdout)
    alone = json.loads(run("coarsen", SAT, "-k", 8, "--json", "--no-communities").stdout)
    assert coarsened["communities"] == expected and coarsened["community_seconds"] > 0
    assert alone["communities"] is None and alone["levels"] != coarsened["levels"]
    assert json.loads(run("coarsen", SAT, "--json").stdout)["communities"] == expected  # k = 2 too


def test_coarsen_levels_and_out_dir(tmp_path):
    result = run("coarsen", IBM01, "--levels", 2, "--out-dir", tmp_path, "--json")
    assert result.exit_code == 0, result.output
    levels = json.loads(result.stdout)["levels"]
    assert [row["level"] for row in levels] == [0, 1, 2]
    assert levels[0]["vertices"] == 12752 and levels[2]["vertices"] < levels[1]["vertices"] < 12752
    coarse = read_hypergraph(str(tmp_path / "level2.hgr"))
    assert coarse.num_vertices == levels[2]["vertices"]
    mapping = (tmp_path / "level1.map").read_text().split()
    assert len(mapping) == 12752 and max(map(int, mapping)) == levels[1]["vertices"] - 1


def test_bench_json_and_save(tmp_path):
    saved = tmp_path / "bench.json"
    result = run("bench", SAT, "-k", "2", "--peers", "none", "--preset", "fast", "--save", saved, "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert json.loads(saved.read_text())["records"] == report["records"]
    (record,) = report["records"]
    assert record["tool"] == "hgpart" and record["balanced"] and record["km1"] > 0
    assert record["runs"][0]["device"] == "cpu"
    assert_one_line_error(run("bench", SAT, "--peers", "metis"), "unknown peer")
    assert_one_line_error(run("bench", SAT, "-k", "2,x"), "comma-separated")


def test_bench_device_auto_runs_each_input_where_auto_puts_it(monkeypatch):
    """bench --device auto on a GPU machine: one hgpart column (no CPU path beside it), each run on the path
    auto picks for its input, recorded per run."""
    import hgpart.bench.report
    import hgpart.compilation
    import hgpart.device

    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: True)
    monkeypatch.setattr(hgpart.device, "cupy_available", lambda: True)
    monkeypatch.setattr(hgpart.compilation, "warm_up", lambda *args, **kwargs: 0.0)
    monkeypatch.setattr(hgpart.bench.report, "device_name", lambda device: f"{device} device")
    result = run("bench", SAT, "-k", "2", "--peers", "none", "--preset", "fast", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["device"] == "auto" and report["environment"]["device"] == "auto device"
    assert [record["tool"] for record in report["records"]] == ["hgpart"]
    assert report["records"][0]["runs"][0]["device"] == "cpu"  # the SAT model's pins are below the bound


def test_bench_with_mtkahypar_when_installed():
    """Both Mt-KaHyPar presets beside hgpart; the comparison gives geometric means per k and overall, the
    worst cell and the cells above 1.10, as the ratios of the records say."""
    pytest.importorskip("mtkahypar")
    result = run("bench", SAT, "-k", "2,4", "--peers", "mtkahypar,mtkahypar-quality", "--preset", "fast", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    cells = {(r["tool"], r["k"]): r for r in report["records"]}
    for peer in ("mtkahypar", "mtkahypar-quality"):
        assert all(cells[(peer, k)]["balanced"] and cells[(peer, k)]["km1"] > 0 for k in (2, 4))
    summary = {c["peer"]: c for c in report["comparison"]}["mtkahypar"]
    ratios = {k: cells[("hgpart", k)]["km1"] / cells[("mtkahypar", k)]["km1"] for k in (2, 4)}
    assert summary["cells"] == 2 and set(summary["by_k"]) == {"2", "4"}
    assert summary["by_k"]["4"]["km1_ratio_geomean"] == pytest.approx(ratios[4])
    assert summary["km1_ratio_geomean"] == pytest.approx((ratios[2] * ratios[4]) ** 0.5)
    assert summary["km1_ratio_max"] == pytest.approx(max(ratios.values()))
    assert summary["cells_above_1.10"] == sum(r > 1.10 for r in ratios.values())
    assert "by k: k=2" in run("bench", SAT, "-k", "2", "--peers", "mtkahypar", "--preset", "fast").stderr


def test_bench_gives_the_peers_no_empty_nets_and_reports_their_failures(tmp_path, monkeypatch):
    pytest.importorskip("mtkahypar")
    import hgpart.bench.peers

    with_empty_net = tmp_path / "empty.hgr"
    with_empty_net.write_text("4 5 1\n1 1 2\n1\n1 3 4\n1 5 1\n")  # net 2 is empty: Mt-KaHyPar rejects it
    result = run("bench", with_empty_net, "-k", "2", "--peers", "mtkahypar", "--preset", "fast", "--json")
    assert result.exit_code == 0, result.output
    tools = {r["tool"]: r for r in json.loads(result.stdout)["records"]}
    assert not tools["mtkahypar"]["skipped"] and tools["mtkahypar"]["balanced"]

    def failing(*args):
        raise RuntimeError("input file (line 3):\n empty hyperedges are not allowed")

    monkeypatch.setattr(hgpart.bench.peers, "run_peer", failing)
    result = run("bench", with_empty_net, "-k", "2", "--peers", "mtkahypar", "--preset", "fast", "--json")
    assert result.exit_code == 0, result.output
    tools = {r["tool"]: r for r in json.loads(result.stdout)["records"]}
    assert tools["mtkahypar"]["skipped"] == "mtkahypar failed: input file (line 3): empty hyperedges are not allowed"
    assert "Traceback" not in result.output


def test_peers_run_in_a_child_process_and_their_errors_come_back_in_one_line(tmp_path):
    pytest.importorskip("mtkahypar")
    from hgpart.bench.peers import run_peer

    blocks, seconds = run_peer("mtkahypar", str(IBM01), 4, 0.03, "km1", 0, 1)
    assert blocks.shape == (12752,) and set(np.unique(blocks)) == {0, 1, 2, 3} and seconds > 0
    with pytest.raises(RuntimeError) as failure:
        run_peer("mtkahypar", str(tmp_path / "missing.hgr"), 2, 0.03, "km1", 0, 1)
    assert "\n" not in str(failure.value) and str(failure.value)


def test_bench_compares_ratings_and_coarsen_takes_rating_options():
    result = run("bench", SAT, "-k", "2", "--peers", "none", "--preset", "fast", "--rating",
                 "heavy-edge,inner-product", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert {r["tool"] for r in report["records"]} == {"hgpart", "hgpart:inner-product"}
    assert report["comparison"][0]["peer"] == "hgpart:inner-product"
    levels = json.loads(run("coarsen", IBM01, "--levels", 1, "--rating", "inner-product", "--max-rated-net-size", 10,
                            "--json").stdout)
    assert levels["rating"] == "inner-product" and len(levels["levels"]) == 2
    assert_one_line_error(run("partition", IBM01, "-k", 2, "--rating", "cosine"), "unknown rating")


def test_coarsen_device_choice_without_a_gpu(monkeypatch):
    import hgpart.device

    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: False)
    assert_one_line_error(run("coarsen", IBM01, "--levels", 1, "--device", "gpu"), "no usable CUDA GPU")
    result = run("coarsen", IBM01, "--levels", 1, "--device", "auto", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["device"] == "cpu"
    assert result.stderr == ""  # no GPU: auto is the CPU, said by the summary
    assert_one_line_error(run("partition", IBM01, "-k", 2, "--device", "gpu"), "no usable CUDA GPU")
    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: True)  # a GPU, but no CuPy
    monkeypatch.setattr(hgpart.device, "cupy_available", lambda: False)
    assert_one_line_error(run("coarsen", IBM01, "--levels", 1, "--device", "gpu"), "CuPy is not installed")
    result = run("coarsen", IBM01, "--levels", 1, "--device", "auto", "--json")
    assert result.exit_code == 0 and json.loads(result.stdout)["device"] == "cpu"
    assert "CuPy is not installed" in result.stderr


@pytest.mark.gpu
def test_coarsen_on_the_gpu_writes_the_cpus_levels(tmp_path):
    for device in ("cpu", "gpu"):
        result = run("coarsen", IBM01, "--levels", 3, "--device", device, "--out-dir", tmp_path / device, "--json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["device"] == device
    for name in ("level1.hgr", "level2.map", "level3.hgr"):
        assert (tmp_path / "gpu" / name).read_bytes() == (tmp_path / "cpu" / name).read_bytes(), name
    result = run("bench", "coarsen", IBM01, "--device", "gpu", "--repeat", 1, "--json")
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout)["instances"]
    assert row["agree"] and row["gpu map s"] > 0 and sum(row["bins"]) == 12752


def test_partition_out_of_gpu_memory(monkeypatch, tmp_path):
    """--device gpu: one line; auto: a note, then the CPU path (the summary says so)."""
    import hgpart.compilation
    import hgpart.device
    import hgpart.multilevel
    import hgpart.policy

    class OutOfMemoryError(MemoryError):  # what CuPy raises, by name
        pass

    real_v_cycles = hgpart.multilevel._v_cycles

    def exhausted(hypergraph, max_weights, policy, *args):
        if policy.path == "gpu":
            raise OutOfMemoryError("Out of memory allocating 8,000,000,000 bytes")
        return real_v_cycles(hypergraph, max_weights, policy, *args)

    monkeypatch.setattr(hgpart.device, "gpu_available", lambda: True)
    monkeypatch.setattr(hgpart.device, "cupy_available", lambda: True)
    monkeypatch.setattr(hgpart.compilation, "warm_up", lambda *args, **kwargs: 0.0)
    monkeypatch.setattr(hgpart.multilevel, "_v_cycles", exhausted)
    on_the_gpu = lambda pins, config: ("gpu", "auto: the GPU path")  # noqa: E731 - ibm01 is below the bound
    monkeypatch.setattr(hgpart.multilevel, "auto_path", on_the_gpu)
    monkeypatch.setattr(hgpart.policy, "auto_path", on_the_gpu)
    monkeypatch.setattr("hgpart.cuda.arrays.free_device_bytes", lambda: None)
    monkeypatch.setattr("hgpart.cuda.arrays.reset_device_memory_peak", lambda: None)
    output = tmp_path / "ibm01.part.2"
    result = run("partition", IBM01, "-k", 2, "--device", "gpu", "-o", output)
    assert_one_line_error(result, "the GPU ran out of memory", "--device cpu")
    assert not output.exists()
    result = run("partition", IBM01, "-k", 2, "--device", "auto", "-o", output, "--json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["device"] == "cpu" and output.exists()
    assert "ran out of memory" in result.stderr and "ran on the CPU" in result.stderr
    monkeypatch.setattr("hgpart.cuda.arrays.free_device_bytes", lambda: 1000)  # Phi alone does not fit
    assert_one_line_error(run("partition", IBM01, "-k", 2, "--device", "gpu", "-o", output), "GB free")


@pytest.mark.parametrize("command, user, sleeps", [
    ("partition", None, "PASSIVE"), ("coarsen", None, "PASSIVE"), ("partition", "ACTIVE", "ACTIVE"),
    ("triangles", None, None), ("cluster", None, None)])
def test_partitioning_commands_let_openmp_threads_sleep_before_numba_starts_them(tmp_path, command, user, sleeps):
    """partition and coarsen set OMP_WAIT_POLICY=PASSIVE (unless the user set it) before numba starts its threads,
    when OpenMP reads it; the graph commands leave OpenMP's default. A missing input ends each command right
    after its start."""
    import subprocess
    import sys

    code = f"""
import os, sys
import numba.np.ufunc.parallel as layer
import hgpart.parallel as parallel
from hgpart.cli import cli as main  # the group: it raises SystemExit where the program would end the process
started = []
real = parallel.let_idle_threads_sleep
def spy():
    started.append(layer._is_initialized)
    real()
parallel.let_idle_threads_sleep = spy
sys.argv = ["hgpart", "{command}", {str(tmp_path / "missing")!r}] + (["-k", "2"] if "{command}" == "partition" else [])
try:
    main()
except SystemExit:
    pass
print(started, os.environ.get("OMP_WAIT_POLICY"), layer._is_initialized)
"""
    env = {name: value for name, value in os.environ.items() if name != "OMP_WAIT_POLICY"}
    if user is not None:
        env["OMP_WAIT_POLICY"] = user
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert "missing" in done.stderr  # the command ran as far as reading its input
    expected = f"{[False] if command in ('partition', 'coarsen') else []} {sleeps} True"
    assert done.stdout.strip().splitlines()[-1] == expected


@pytest.mark.parametrize("code, status, error", [(None, 0, ""), (3, 3, ""), ("Error: gone", 1, "Error: gone")])
def test_the_program_ends_with_its_status_after_flushing_and_its_exit_handlers(tmp_path, code, status, error):
    """The ``hgpart`` program ends its process without the interpreter's teardown (hgpart.cli.end_process): with
    the status given (SystemExit's rules), after what it wrote to stdout and stderr and after the atexit
    handlers (which end the cold warm-up's helpers), and nothing after it runs."""
    import subprocess
    import sys

    marker = tmp_path / "handler-ran"
    program = f"""
import atexit, sys
from hgpart.cli import end_process
atexit.register(lambda: open({str(marker)!r}, "w").write("yes"))
sys.stdout.write("partition")
sys.stderr.write("summary")
end_process({code!r})
print("after")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=300)
    assert done.returncode == status
    assert done.stdout == "partition"
    assert done.stderr.startswith("summary") and error in done.stderr and "Traceback" not in done.stderr
    assert marker.read_text() == "yes"


@pytest.mark.parametrize("args, reader, tiny", [
    (["partition", IBM01, "-k", 2, "--preset", "fast", "-o", "-"], "read_hypergraph", ["tiny.hgr"]),
    (["partition", "-", "--format", "hgr", "-k", 2, "--preset", "fast"], "read_hypergraph", ["tiny.hgr"]),
    (["partition", str(DATA / "west0067.mtx"), "-k", 2, "--preset", "fast", "-o", "-"], "read_hypergraph",
     ["tiny.mtx", "pattern.mtx"]),
    (["cluster", str(DATA / "karate.graph"), "--device", "cpu"], "read_graph", ["tiny.graph"]),
    (["partition", "-", "-k", 2], "read_hypergraph", []),  # no format named: nothing to warm up, the usual error
])
def test_commands_read_a_tiny_file_of_their_inputs_format_before_timing_the_input(monkeypatch, tmp_path, args, reader,
                                                                                 tiny):
    """The summary's read seconds are the reading: a command first reads a tiny file in its input's format (by
    --format or the name) through the same reader, so numba has loaded or compiled that reader by then."""
    import hgpart.io

    calls = []
    real = getattr(hgpart.io, reader)

    def recording(path, *rest, **options):
        calls.append(os.path.basename(path))
        return real(path, *rest, **options)

    monkeypatch.setattr(hgpart.io, reader, recording)
    last = ["--json", "-o", tmp_path / "clusters"] if args[0] == "cluster" else ["-q"]
    result = run(*args, *last, input=open(IBM01).read())
    names = [os.path.basename(str(a)) for a in args[1:2]]
    if tiny:
        assert result.exit_code == 0, result.output
        assert calls == tiny + names
    else:
        assert result.exit_code != 0 and "cannot tell the format" in result.output and calls == names
