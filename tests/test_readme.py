"""The README's examples run: every `hgpart` command of its shell blocks and of its command table, and its
Python block, in a scratch folder that holds the repository's data/ (so that they cannot rot)."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from .conftest import ROOT

README = (ROOT / "README.md").read_text()


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def shell_examples() -> list[str]:
    """The hgpart command lines of the bash blocks, then the examples column of the command table."""
    lines = [line.strip() for block in _blocks("bash") for line in block.splitlines()
             if line.strip().startswith("hgpart ")]
    table = re.findall(r"^\| `[^|]+` \|.*\| `(hgpart [^`]+)` \|$", README, flags=re.M)
    return lines + table


def test_the_readme_is_short_and_names_only_files_of_the_repository():
    assert len(README.splitlines()) <= 250
    assert "../shared" not in README
    for path in set(re.findall(r"\bdata/[\w.\-]+", README)):
        assert (ROOT / path).exists(), path


def test_the_readme_has_examples():
    assert len(shell_examples()) >= 15 and len(_blocks("python")) == 1


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    """A folder with data/ and benchmarks/ of the repository and an `hgpart` on PATH that runs this Python."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "data", folder / "data")
    if (ROOT / "benchmarks").is_dir():
        shutil.copytree(ROOT / "benchmarks", folder / "benchmarks")
    tools = folder / "bin"
    tools.mkdir()
    launcher = tools / "hgpart"
    launcher.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m hgpart "$@"\n')
    launcher.chmod(0o755)
    environment = dict(os.environ, PATH=f"{tools}{os.pathsep}{os.environ['PATH']}",
                       PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return folder, environment


@pytest.mark.parametrize("command", shell_examples())
def test_shell_example(scratch, command):
    folder, environment = scratch
    if "bench partition" in command:
        pytest.importorskip("mtkahypar")  # its peer
    if "bench render" in command:
        pytest.importorskip("matplotlib")
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (command, done.stderr[-3000:])
    assert "Traceback" not in done.stderr


def test_python_example(scratch):
    folder, environment = scratch
    done = subprocess.run([sys.executable, "-c", _blocks("python")[0]], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
