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


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """Start the child processes of the selected tests that have them (tests/background.py) now, beside the
    whole suite, and move those tests, which wait for them, to the end. Not in the simulator's own processes,
    and not for --collect-only."""
    from hgpart.cuda.arrays import SIMULATED

    from . import background

    waiting = [item for item in items if item.name in background.JOBS]
    if not waiting or SIMULATED or config.option.collectonly:
        return
    items[:] = [item for item in items if item.name not in background.JOBS] + waiting
    for item in waiting:
        if item.name != "test_gpu_code_in_the_simulator" or _imports("numba.cuda"):  # that test skips without it
            background.start(item.name)


def _imports(module: str) -> bool:
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def pytest_sessionfinish(session, exitstatus):
    from . import background

    background.stop()
