"""Thin click commands. KernelscopeError -> one line on stderr and its exit code, here and only here."""

from __future__ import annotations

import os
import sys

import click

from kernelscope import __version__
from kernelscope.capture.signals import handling
from kernelscope.errors import Interrupted, KernelscopeError, Stopped


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.version_option(__version__, prog_name="kernelscope")
def cli() -> None:
    """Profile a PyTorch model in eager and torch.compile modes: kernels per iteration, GEMM epilogue fusion,
    latency, memory and numerics, with HTML/Markdown/JSON reports and TensorBoard traces."""


_COMMANDS = {"profile": "profile", "analyze": "analyze", "report": "report", "compare": "compare", "check": "check",
             "calibrate": "calibrate", "upgrade-check": "upgrade_check", "advise": "advise"}


def _register(only: str | None = None) -> None:
    """Add the commands to the group: only ``only`` when it names one (a command line imports what it runs, not
    profile's capture code for an ``analyze``), else all of them (help, a mistyped name, tests)."""
    import importlib

    names = [only] if only in _COMMANDS else list(_COMMANDS)
    for name in names:
        cli.add_command(importlib.import_module(f"kernelscope.commands.{_COMMANDS[name]}").command)


def _debug(argv: list[str]) -> bool:
    return "--debug" in argv or os.environ.get("KERNELSCOPE_DEBUG") == "1"


def main(argv: list[str] | None = None) -> None:
    from kernelscope import commands

    commands.command_line = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    _register(argv[0] if argv else None)
    debug = _debug(argv)
    try:
        with handling():  # SIGINT/SIGTERM: keep what finished, one line, exit 130/143 (capture/signals.py)
            rc = cli.main(args=argv, prog_name="kernelscope", standalone_mode=False)
    except KernelscopeError as exc:
        if debug and not isinstance(exc, Stopped):
            raise
        click.echo(exc.line, err=True)
        sys.exit(exc.exit_code)
    except click.exceptions.UsageError as exc:
        # click prints three lines (usage, hint, error); a user gets one.
        cmd = exc.ctx.command_path if exc.ctx else "kernelscope"
        click.echo(f"kernelscope: error: {exc.format_message()}; see '{cmd} --help'", err=True)
        sys.exit(2)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except (click.exceptions.Abort, KeyboardInterrupt) as exc:  # before a run had anything to keep
        # click turns a KeyboardInterrupt (Interrupted: SIGINT or SIGTERM) into Abort; the signal is its cause
        cause = exc.__cause__ if isinstance(exc, click.exceptions.Abort) else exc
        stop = cause if isinstance(cause, Interrupted) else Interrupted()
        click.echo(f"kernelscope: interrupted ({stop.name})", err=True)
        sys.exit(stop.exit_code)
    except click.ClickException as exc:
        click.echo(f"kernelscope: error: {exc.format_message()}", err=True)
        sys.exit(exc.exit_code)
    except Exception as exc:  # a bug in kernelscope: still one line, the traceback with --debug
        if debug:
            raise
        first = str(exc).strip().splitlines()
        click.echo(
            f"kernelscope: internal error: {type(exc).__name__}: {first[0] if first else ''}; rerun with --debug "
            "for the traceback",
            err=True,
        )
        sys.exit(1)
    # standalone_mode=False hands back ctx.exit(N) codes instead of exiting.
    code = rc if isinstance(rc, int) else 0
    if commands.command_line and commands.skip_teardown:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe or stream: what sys.exit would meet as well
                pass
        os._exit(code)
    sys.exit(code)
