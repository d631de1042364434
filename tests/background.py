"""Tests whose work runs in child processes that start as soon as the tests are collected, so that it runs
beside the rest of the suite rather than after it.

``conftest.py`` starts the job of each such test among the selected ones (a thread that runs its processes)
and moves the test to the end of the run, where it waits for the job and checks what it returns. A test run
alone starts its job itself. Jobs (the test of each in brackets):

- ``simulator_runs`` (``test_gpu_code_in_the_simulator``): the GPU tests in numba's CUDA simulator
  (``NUMBA_ENABLE_CUDASIM=1``, with the warp intrinsics of tests/cudasim.py), in two processes of a core each;
- ``cold_warm_up_runs`` (``test_a_cold_warm_up_compiles_in_helper_processes_and_changes_no_partition``): a
  warm-up with an empty numba cache, then a partition in a fresh process from the cache it filled.
"""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
import sys
import tempfile
import threading

from .conftest import ROOT
from .helpers import IBM01

TIMEOUT_SECONDS = 2400
PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
TINY = "tests/coarsening/test_gpu.py::test_device_path_on_a_tiny_instance_equals_cpu"
REBALANCER = "tests/refinement/test_gpu.py::test_device_rebalancer_equals_the_model_on_many_overloaded_blocks"
AFTERBURNERS = "tests/refinement/test_gpu.py::test_both_afterburners_keep_the_models_moves"
# the simulator's two processes: the count each summary must report, and the tests it runs (split so that
# both take about as long)
SIMULATOR_HALVES = {
    "11 passed": [f"{TINY}[False]", "tests/cuda/test_cudasim.py", f"{REBALANCER}[False]", f"{REBALANCER}[True]",
                  "tests/test_multilevel.py::test_the_gpu_driver_on_a_tiny_input_equals_its_cpu_twin",
                  "tests/refinement/test_gpu.py::test_device_refinement_equals_the_model[False]",
                  "tests/cuda/test_warp_planner.py::test_warp_plan_on_the_gpu_matches_the_model",
                  f"{AFTERBURNERS}[False]",
                  "tests/refinement/test_gpu.py::test_the_scan_afterburner_is_left_to_levels_without_big_"
                  "neighbourhoods",
                  "tests/graphs/test_triangles.py::test_gpu_triangles_equal_the_cpu_twin"],
    "9 passed": [f"{TINY}[True]", "tests/graphs/test_clustering.py::test_gpu_clustering_equals_the_cpu_twin",
                 f"{AFTERBURNERS}[True]",
                 "tests/coarsening/test_gpu.py::test_counting_sort_by_small_key_is_a_stable_argsort",
                 "tests/coarsening/test_gpu.py::test_shared_tables_sum_large_scores_exactly",
                 "tests/refinement/test_gpu.py::test_device_refinement_equals_the_model[True]",
                 "tests/graphs/test_spanning_forest.py::test_gpu_forest_equals_the_cpu_twin",
                 "tests/preprocessing/test_communities.py::test_gpu_communities_equal_the_cpu_twin",
                 "tests/classification/test_gpu.py::test_gpu_neighbours_equal_the_cpu_twin"]}
COLD_WARM_UP = "\n".join([
    "from hgpart.initial.portfolio import _portfolio_serial",
    "from hgpart.compilation import _compile_beside_helpers, _numba_cache_is_cold, _warm_up_input",
    "print(_numba_cache_is_cold())",
    "_compile_beside_helpers(*_warm_up_input('km1', True), True)",
    "print(_numba_cache_is_cold(), len(_portfolio_serial.signatures))"])
PARTITION_FROM_THE_CACHE = "\n".join([
    "from hgpart.io import read_hypergraph",
    "from hgpart.multilevel import partition",
    f"print(partition(read_hypergraph({str(IBM01)!r}), 8, seed=1, device='cpu').km1)"])

_lock = threading.Lock()
_processes: list = []      # every child process started, so that stop() can end those still running
_futures: dict = {}        # job name -> its future
_executor = None


def _run(command: list, environment: dict) -> tuple[int, str]:
    """Run ``command`` from the repository's root: (exit status, stdout and stderr together)."""
    with tempfile.TemporaryFile("w+") as log:
        with _lock:
            process = subprocess.Popen(command, cwd=str(ROOT), env=environment, stdout=log, stderr=subprocess.STDOUT,
                                       text=True)
            _processes.append(process)
        process.wait(timeout=TIMEOUT_SECONDS)
        log.seek(0)
        return process.returncode, log.read()


def simulator_runs() -> list[tuple[str, int, str]]:
    """The simulator's two processes side by side (each uses one core): (expected summary, exit status, log)."""
    environment = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    with concurrent.futures.ThreadPoolExecutor(len(SIMULATOR_HALVES)) as pool:
        runs = {expected: pool.submit(_run, PYTEST + ["-m", "gpu"] + tests, environment)
                for expected, tests in SIMULATOR_HALVES.items()}
        return [(expected, *run.result()) for expected, run in runs.items()]


def cold_warm_up_runs() -> list[tuple[int, str]]:
    """With ``NUMBA_CACHE_DIR`` an empty folder: a process that checks the cache is cold, warms up beside a
    second process and checks it is not; then a fresh one that partitions ibm01 (k = 8, seed 1) from that
    cache. (exit status, output) of each."""
    with tempfile.TemporaryDirectory() as cache:
        environment = dict(os.environ, NUMBA_CACHE_DIR=cache)
        return [_run([sys.executable, "-c", source], environment)
                for source in (COLD_WARM_UP, PARTITION_FROM_THE_CACHE)]


JOBS = {"test_gpu_code_in_the_simulator": simulator_runs,
        "test_a_cold_warm_up_compiles_in_helper_processes_and_changes_no_partition": cold_warm_up_runs}


def start(test: str) -> None:
    """Start the job of ``test`` (once per session)."""
    global _executor
    with _lock:
        if test in _futures:
            return
        if _executor is None:
            _executor = concurrent.futures.ThreadPoolExecutor(len(JOBS))
        _futures[test] = _executor.submit(JOBS[test])


def result(test: str):
    """What the job of ``test`` returns, once it has finished (started now if it was not)."""
    start(test)
    return _futures[test].result()


def stop() -> None:
    """End the child processes still running (the session ended before their tests) and the jobs' threads."""
    global _executor
    with _lock:
        for process in _processes:
            if process.poll() is None:
                process.kill()
        executor, _executor = _executor, None
        _futures.clear()
        _processes.clear()
    if executor is not None:
        executor.shutdown(wait=True)
