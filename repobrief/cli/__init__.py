"""The `repobrief` command: a thin layer over the library API.

One module per command group registers its commands on `app`; domain errors
(`RepobriefError`) become a message on stderr and the error's exit code here,
at the edge.
"""

from __future__ import annotations

import errno
import gc
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer

from ..errors import RepobriefError

app = typer.Typer(
    name="repobrief",
    help="Turn a week of merged pull requests into the weekly report a busy team reads (zh/en; Markdown, JSON, …).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _print_version(value: bool) -> None:
    # An eager callback runs while the options are read, before a command is asked for.
    if value:
        from .. import __version__

        typer.echo(f"repobrief {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True,
                                 callback=_print_version),
) -> None:
    pass


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 PR`, `2 PRs`: what the CLI says on stderr, counted in the right number."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def interrupted(message: str) -> NoReturn:
    """Ctrl-C or SIGTERM stopped a command: say what was done and exit 130 (Typer would
    turn the interrupt into a silent exit 130)."""
    typer.echo(message, err=True)
    raise SystemExit(130)


@contextmanager
def stoppable(stop: Callable[[], None], said: Callable[[], str]) -> Iterator[None]:
    """A command's long work: `stop` (its progress display) runs however the block ends,
    first; then an interrupt says `said()` (what was done, as of then) and exits 130."""
    try:
        try:
            yield
        finally:
            stop()
    except KeyboardInterrupt:
        interrupted(said())


def write_out(text: str, what: str) -> None:
    """Write a command's result (`what`: "the report") to standard output. One that
    cannot take it — closed, on a full disk, in an encoding without the report's
    characters — is a clear error, not a traceback; a
    reader that left (`| head`) ends the command quietly, as it would end `git log`."""
    stream = sys.stdout
    try:
        if stream is None:
            raise OSError(errno.EBADF, "it is closed")
        stream.write(text)
        stream.flush()
    except OSError as e:
        _drop_stdout()
        if e.errno == errno.EPIPE:
            raise SystemExit(141) from None  # 128 + SIGPIPE, as a shell reports a command its reader left
        raise RepobriefError(f"cannot write {what} to standard output: {e.strerror}",
                             "give --out DIR to write files instead, or send standard output where it can be written") from None
    except UnicodeEncodeError as e:  # PYTHONIOENCODING=ascii, a C locale: a zh report has no ASCII form
        _drop_stdout()
        raise RepobriefError(f"cannot write {what} to standard output: its encoding ({e.encoding}) has no "
                             f"{e.object[e.start:e.end]!r}",
                             "use a UTF-8 locale (LANG=C.UTF-8) or PYTHONIOENCODING=utf-8, or give --out DIR") from None


def _drop_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's last flush of what
    is still buffered does not fail again at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):  # no stdout at all: nothing will be flushed
        pass


# Command groups: each module adds its commands to `app` when imported.
from . import backfill, batch, publish, report, run, site, sync  # noqa: E402,F401


def fail(err: RepobriefError) -> None:
    """Print a domain error the way users should see it and exit with its code."""
    typer.echo(f"error: {err.message}", err=True)
    if err.hint:
        typer.echo(f"  hint: {err.hint}", err=True)
    raise SystemExit(err.exit_code)


def main(argv: list[str] | None = None) -> None:
    from ..stopping import sigterm_as_interrupt

    try:
        # SIGTERM (timeout, systemd, CI cancellation) stops workers and writes as Ctrl-C does:
        # exit 130, or the command's own "interrupted" message.
        with sigterm_as_interrupt():
            app(args=argv, standalone_mode=True)
    except RepobriefError as err:
        fail(err)
    except KeyboardInterrupt:
        interrupted("interrupted")


def entry() -> None:
    """The console script: `main` tuned for a process that exits when it is done.

    The collector runs less often (the pipeline allocates many small objects and
    frees them by reference count, not in cycles), and at exit everything is
    frozen, so interpreter shutdown does not walk every object again: that walk
    cost 0.4-0.8 s per run, a third of an offline report. A young generation of 200,000
    objects instead of 50,000: most are gone by the time it is collected (a backfill's
    Python did 0.7 % fewer instructions; larger thresholds saved nothing more)."""
    gc.set_threshold(200_000, 20, 100)
    try:
        main()
    finally:
        gc.freeze()
