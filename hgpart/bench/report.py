"""A bench's JSON report and where it came from: the commit, the date, the machine, the versions, the command.

Every ``hgpart bench ... --save FILE`` writes its report through :func:`save_report`, with
:func:`environment` under the key ``environment``, so that a number in ``docs/benchmarks.md``
(:mod:`.render`) can be traced to the code and the machine that produced it.
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import subprocess
import sys

# the distributions whose versions a report records: name in the report -> distribution names to look for
PACKAGES = {
    "numpy": ("numpy",),
    "numba": ("numba",),
    "numba-cuda": ("numba-cuda",),
    "cupy": ("cupy-cuda12x", "cupy-cuda13x", "cupy-cuda11x", "cupy"),
    "scipy": ("scipy",),
    "mtkahypar": ("mtkahypar",),
    "kahypar": ("kahypar",),
}
PROVENANCE_KEYS = ("commit", "dirty", "date", "device", "cpu", "cores", "threads", "load", "versions", "command")


def _run(arguments: list[str], folder: str | None = None) -> str | None:
    """stdout of a short command, or None when it is missing or fails."""
    try:
        done = subprocess.run(arguments, cwd=folder, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def git_state(folder: str | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the checkout hgpart runs from; (None, None) when it is not a git checkout (an
    installed package). Dirty: tracked files differ from the commit (untracked files do not count).
    ``HGPART_COMMIT`` (a commit, and ``+dirty`` when so) names them instead, for a copy of a working tree that
    was sent to another machine without its history."""
    given = os.environ.get("HGPART_COMMIT")
    if given:
        return given.removesuffix("+dirty"), given.endswith("+dirty")
    folder = folder or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    top = _run(["git", "rev-parse", "--show-toplevel"], folder)
    if top is None or os.path.realpath(top.strip()) != os.path.realpath(folder):
        return None, None
    commit = _run(["git", "rev-parse", "HEAD"], folder)
    status = _run(["git", "--no-optional-locks", "status", "--porcelain", "--untracked-files=no"], folder)
    if commit is None:
        return None, None
    return commit.strip(), None if status is None else bool(status.strip())


def device_name(device: str) -> str:
    """The GPU's name when ``device`` is "gpu" or "auto" with a GPU (numba.cuda, else nvidia-smi), else "cpu"."""
    if device not in ("gpu", "auto"):
        return "cpu"
    try:
        from numba import cuda

        name = cuda.get_current_device().name
        return name.decode() if isinstance(name, bytes) else str(name)
    except Exception:  # noqa: BLE001 - any failure falls back to nvidia-smi
        listed = _run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"])
        names = [line.strip() for line in (listed or "").splitlines() if line.strip()]
        return names[0] if names else "gpu"


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo), else platform.processor(), else the machine type."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and value.strip():
                    return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def load_average() -> list[float] | None:
    """The system's load averages over 1, 5 and 15 minutes (None where the platform has none)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def versions() -> dict:
    """python, hgpart and those of PACKAGES that are installed."""
    from .. import __version__

    found = {"python": platform.python_version(), "hgpart": __version__}
    for name, distributions in PACKAGES.items():
        for distribution in distributions:
            try:
                found[name] = importlib.metadata.version(distribution)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
    return found


def environment(device: str = "cpu", threads: int | None = None, command: str | None = None) -> dict:
    """Where a report came from (the keys of PROVENANCE_KEYS): the git commit and whether the tree was dirty,
    the UTC date (ISO 8601), the device ("cpu" or the GPU's name), the CPU model, its cores, the threads
    used, the load averages over 1, 5 and 15 minutes when the report is made (other work on the machine slows
    every tool), the versions and the command (default: this process's arguments, shell-quoted)."""
    import shlex

    commit, dirty = git_state()
    if command is None:
        command = shlex.join(["hgpart", *sys.argv[1:]])
    return {"commit": commit, "dirty": dirty,
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "device": device_name(device), "cpu": cpu_model(), "cores": os.cpu_count(), "threads": threads,
            "load": load_average(), "versions": versions(), "command": command}


def save_report(report: dict, path: str | None, as_json: bool) -> None:
    """A bench's JSON report: to ``path`` (atomically: a failed write leaves no file) and, with ``as_json``, on
    stdout."""
    from ..console import print_json
    from ..io import atomic_output

    if path:
        if path != "-":  # the folder too (benchmarks/ in a fresh checkout)
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with atomic_output(path) as handle:
            handle.write(json.dumps(report, indent=1) + "\n")
    if as_json:
        print_json(report)
