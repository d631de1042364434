"""The command line: a thin layer over the library. One function per command, shared option decorators
(:mod:`.options`); the commands by family in :mod:`.files`, :mod:`.partitioning`, :mod:`.graphs` and
:mod:`.bench`.

Errors reach the user as one line ``Error: FILE:LINE: message`` on stderr with a non-zero exit.
"""

from __future__ import annotations

import atexit
import os
import sys

import click

from .. import __version__
from ..errors import DeviceError, InfeasibleError, InputError
from . import bench, classification, files, graphs, partitioning
from .options import ARGV_KEY


class HgpartGroup(click.Group):
    """A click group whose every failure is one ``Error:`` line on stderr, never a traceback."""

    def make_context(self, info_name, args, parent=None, **extra):
        given = list(args)  # the arguments as given, for the reports of `bench ... --save` (options.command_line)
        context = super().make_context(info_name, args, parent, **extra)
        context.meta[ARGV_KEY] = given
        return context

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            code = super().main(args, prog_name or "hgpart", complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            click.echo("Error: aborted", err=True)
            sys.exit(130)
        except click.ClickException as error:
            click.echo(f"Error: {error.format_message()}", err=True)
            sys.exit(error.exit_code)
        except (InputError, DeviceError, InfeasibleError) as error:
            click.echo(f"Error: {error}", err=True)
            sys.exit(1)
        except MemoryError:
            click.echo("Error: out of memory", err=True)
            sys.exit(1)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(141)
        except KeyboardInterrupt:
            click.echo("Error: interrupted", err=True)
            sys.exit(130)
        sys.exit(code if isinstance(code, int) else 0)


@click.group(cls=HgpartGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, "--version", prog_name="hgpart", message="%(prog)s %(version)s")
def cli():
    """Partition hypergraphs and analyse sparse graphs on NVIDIA GPUs, with a numba CPU path.

    Files: hMetis .hgr, Matrix Market .mtx, METIS .graph, DIMACS .gr, edge lists (.txt/.csv); feature
    vectors (.npy, .csv, .tsv, .mtx) for knn and classify; .gz is read transparently and - means stdin/stdout.
    """


for _command in (files.info, files.evaluate, files.convert, files.generate, partitioning.partition,
                 partitioning.coarsen, graphs.cluster, graphs.mst, graphs.triangles, classification.knn,
                 classification.classify, bench.bench):
    cli.add_command(_command)


def main() -> None:
    """The ``hgpart`` program (and ``python -m hgpart``): the command, then :func:`end_process`."""
    try:
        cli()
    except SystemExit as done:
        end_process(done.code)
    end_process(0)


def end_process(code) -> None:
    """End the process with the exit status ``code`` (as :class:`SystemExit` takes it) without the interpreter's
    teardown, which after a partition takes 0.2-0.4 s (numba's and LLVM's objects freed one by one), a seventh
    of a warm command, for nothing that outlives the process: stdout and stderr are flushed and the atexit
    handlers run first (they end the cold warm-up's helper processes); every output file is complete by then
    (written to a temporary file and renamed). A final flush to a closed pipe exits 141, as a write to one
    during the command does. Where this Python cannot run the atexit handlers itself, the usual exit."""
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:
        sys.exit(code)
    if code is None:
        status = 0
    elif isinstance(code, int):
        status = code
    else:  # a message, as sys.exit("...") prints it
        print(code, file=sys.stderr)
        status = 1
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        status = 141
    except (OSError, ValueError):  # stdout closed or gone: nothing more can reach it
        pass
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)

