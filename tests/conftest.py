import os
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
SHARED = pathlib.Path(os.environ.get("HGPART_SHARED_DATA", ROOT.parent / "shared" / "data"))


def shared_files(*suffixes):
    """Files of ../shared/data ending in one of ``suffixes`` (empty when the folder is absent)."""
    if not SHARED.is_dir():
        return []
    return sorted(str(p) for p in SHARED.iterdir() if p.name.endswith(suffixes))


def shared_params(*suffixes):
    files = shared_files(*suffixes)
    if not files:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{SHARED} is absent"))]
    return [pytest.param(f, id=pathlib.Path(f).name) for f in files]


def pytest_configure(config):
    """Under NUMBA_ENABLE_CUDASIM=1, give the simulator the warp intrinsics it lacks (tests/cudasim.py)."""
    from hgpart.cuda.arrays import SIMULATED

    if SIMULATED:
        from . import cudasim

        cudasim.install()


SIMULATOR_TEST = "test_gpu_code_in_the_simulator"


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """When the simulator's run of the GPU tests is among the selected tests (and this is not one of its own
    processes), start its processes now, beside the whole suite, and move the test that waits for them to the
    end (tests/simulator_runs.py)."""
    from hgpart.cuda.arrays import SIMULATED

    waiting = [item for item in items if item.name == SIMULATOR_TEST]
    if not waiting or SIMULATED or config.option.collectonly:
        return
    try:
        import numba.cuda  # noqa: F401 - the test skips without it
    except ImportError:
        return
    from . import simulator_runs

    items[:] = [item for item in items if item.name != SIMULATOR_TEST] + waiting
    simulator_runs.start()


def pytest_sessionfinish(session, exitstatus):
    from . import simulator_runs

    simulator_runs.stop()
