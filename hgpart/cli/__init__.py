"""The command line: a thin layer over the library. One function per command, shared option decorators
(:mod:`.options`); the commands by family in :mod:`.files`, :mod:`.partitioning`, :mod:`.graphs` and
:mod:`.bench`.

Errors reach the user as one line ``Error: FILE:LINE: message`` on stderr with a non-zero exit.
"""

from __future__ import annotations

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
    cli()

