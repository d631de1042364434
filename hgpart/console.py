"""What the CLI prints besides data: summaries (rich on a terminal, plain lines otherwise) on stderr.

stdout carries only data (partitions, JSON); everything here goes to stderr and is silenced by ``-q``.
"""

from __future__ import annotations

import json
import sys

import numpy as np


def _plain(value):
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating,)):
        return float(value)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def print_json(data) -> None:
    """One JSON document on stdout."""
    sys.stdout.write(json.dumps(_plain(data), indent=None, separators=(", ", ": ")) + "\n")
    sys.stdout.flush()


def _format(value) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, (list, tuple)) and len(value) > 12:
        return f"[{', '.join(_format(v) for v in value[:12])}, ... ({len(value)} in all)]"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format(v) for v in value) + "]"
    return str(value)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


class Reporter:
    """Human-readable output on stderr: rich tables on a terminal, ``key: value`` lines otherwise."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self.rich = stderr_is_terminal()
        self._console = None

    @property
    def console(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True)
        return self._console

    def log(self, message: str) -> None:
        if self.quiet:
            return
        if self.rich:
            self.console.print(message, highlight=False)
        else:
            sys.stderr.write(message + "\n")

    def mapping(self, title: str, values: dict) -> None:
        """A two-column table of a flat mapping."""
        if self.quiet:
            return
        if self.rich:
            from rich.table import Table

            table = Table(title=title, show_header=False, title_justify="left")
            table.add_column(style="bold")
            table.add_column()
            for key, value in values.items():
                table.add_row(str(key), _format(value))
            self.console.print(table)
        else:
            sys.stderr.write(f"# {title}\n" + "".join(f"{k}: {_format(v)}\n" for k, v in values.items()))

    def table(self, title: str, columns: list[str], rows: list[list]) -> None:
        if self.quiet:
            return
        if self.rich:
            from rich.table import Table

            table = Table(title=title, title_justify="left")
            for column in columns:
                table.add_column(column, justify="right")
            for row in rows:
                table.add_row(*[_format(v) for v in row])
            self.console.print(table)
        else:
            lines = [f"# {title}", "\t".join(columns)] + ["\t".join(_format(v) for v in row) for row in rows]
            sys.stderr.write("\n".join(lines) + "\n")

    def progress(self, total: int, description: str):
        """A context manager with ``advance()``; a rich bar on a terminal, silent otherwise."""
        return _Progress(self, total, description)


class _Progress:
    def __init__(self, reporter: Reporter, total: int, description: str):
        self.reporter, self.total, self.description = reporter, total, description
        self._bar = None

    def __enter__(self):
        if self.reporter.rich and not self.reporter.quiet:
            from rich.progress import Progress

            self._bar = Progress(console=self.reporter.console, transient=True)
            self._bar.__enter__()
            self._task = self._bar.add_task(self.description, total=self.total)
        return self

    def advance(self, step: int = 1) -> None:
        if self._bar is not None:
            self._bar.advance(self._task, step)

    def __exit__(self, *exc):
        if self._bar is not None:
            self._bar.__exit__(*exc)
        return False
