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
