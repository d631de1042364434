"""The GPU tests in numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, with the warp intrinsics of
tests/cudasim.py), as two child processes that run beside the rest of the suite.

The simulator runs every CUDA thread as a Python thread on one core and takes minutes; ``conftest.py`` starts
the two processes as soon as the tests are collected and moves ``test_gpu_code_in_the_simulator``, which waits
for them and checks their results, to the end of the run. Run alone, that test starts them itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

from .conftest import ROOT

TINY = "tests/coarsening/test_gpu.py::test_device_path_on_a_tiny_instance_equals_cpu"
REBALANCER = "tests/refinement/test_gpu.py::test_device_rebalancer_equals_the_model_on_many_overloaded_blocks"
AFTERBURNERS = "tests/refinement/test_gpu.py::test_both_afterburners_keep_the_models_moves"
# what each process runs and the count its summary must report; split so that both take about as long
HALVES = {"11 passed": [f"{TINY}[False]", "tests/cuda/test_cudasim.py", f"{REBALANCER}[False]", f"{REBALANCER}[True]",
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
TIMEOUT_SECONDS = 2400

_runs = None   # (log folder, {expected summary: (process, log file)}) once started


def start() -> None:
    """Start the two simulator processes (once per test session)."""
    global _runs
    if _runs is not None:
        return
    folder = tempfile.TemporaryDirectory()
    environment = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu"]
    processes = {}
    for index, (expected, tests) in enumerate(HALVES.items()):
        log = open(os.path.join(folder.name, f"{index}.log"), "w+")
        processes[expected] = (subprocess.Popen(command + tests, cwd=str(ROOT), env=environment, stdout=log,
                                                stderr=subprocess.STDOUT), log)
    _runs = (folder, processes)


def results() -> list[tuple[str, int, str]]:
    """Wait for the processes (starting them if not yet started): (expected summary, exit status, log) of each."""
    start()
    folder, processes = _runs
    finished = []
    for expected, (process, log) in processes.items():
        process.wait(timeout=TIMEOUT_SECONDS)
        log.seek(0)
        finished.append((expected, process.returncode, log.read()))
    return finished


def stop() -> None:
    """End processes still running (the session ended before their test) and remove their logs."""
    global _runs
    if _runs is None:
        return
    folder, processes = _runs
    for process, log in processes.values():
        if process.poll() is None:
            process.kill()
            process.wait()
        log.close()
    folder.cleanup()
    _runs = None
