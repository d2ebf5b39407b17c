"""One module per subcommand; each exposes a click command named ``command``. Here: what several of them share
(options, the command line for the report, how a run's failure leaves)."""

from __future__ import annotations

import shlex
import sys
from typing import Any, NoReturn

import click

from kernelscope.errors import ModelFileError, UsageError

# Three processes by default: the across-process interval uses Student's t with P - 1 degrees of freedom (t = 4.30
# at 3, 2.78 at 5), so 5 gives intervals about 1.5x narrower, but on the H200 the seed sample's default run took
# 311 s with 5 processes (15 worker processes of ~20 s: CUDA start, cache load, warm-up) and on the 2-core CPU
# 103 s against 70 s with 3. CI gates on small speedups pass --processes 5 or more.
DEFAULT_PROCESSES = 3

# --advise-budget (profile, advise): five minutes hold a few candidate compiles of a small model, max-autotune's
# included; a large model's candidates take longer each, and the costliest epilogues go first.
DEFAULT_ADVISE_BUDGET_S = 300.0

# The terminal summary prints one line per group of identical layers (its length follows the groups, not the
# layers); --verbose adds every GEMM. Shared by the commands that print it: profile, report, analyze.
verbose_option = click.option(
    "--verbose", is_flag=True,
    help="In the terminal summary, list every GEMM under its group of identical layers with its own why-not "
         "(without it: one line per group, and the layers that differ from their group).")

# A real command line (cli.main() without argv; not a command run inside a test or another program) whose command
# holds nothing left to flush or close when it returns (``analyze``) ends its process without the interpreter's
# teardown: freeing a large trace's records one by one costs ~0.1 s per million events for nothing.
command_line = False  # set by cli.main
skip_teardown = False  # set by the command


def torchrun_options(f: Any) -> Any:
    """``--nproc`` and torchrun's rendezvous options, shared by ``profile`` and ``upgrade-check``: the command gets
    nproc, nnodes, node_rank, rdzv_backend, rdzv_endpoint and rdzv_id (capture/torchrun.py ``rendezvous_args``
    turns them into torchrun's arguments)."""
    options = [
        click.option("--nproc", type=click.IntRange(min=1, max=1024), default=None, metavar="N",
                     help="Run each mode's worker under torchrun with N ranks on this host (NCCL on CUDA, gloo on "
                          "the CPU); the process group is up before the model is built, so the model file can shard "
                          "itself. Every rank is profiled; the mode's figures are the slowest rank's."),
        click.option("--nnodes", default=None, metavar="N|MIN:MAX",
                     help="torchrun --nnodes (multi-host, with --rdzv-*)."),
        click.option("--node-rank", type=int, default=None, help="torchrun --node-rank (static rendezvous)."),
        click.option("--rdzv-backend", default=None, help="torchrun --rdzv-backend (e.g. c10d)."),
        click.option("--rdzv-endpoint", default=None, metavar="HOST:PORT", help="torchrun --rdzv-endpoint."),
        click.option("--rdzv-id", default=None, help="torchrun --rdzv-id (the same on every host)."),
    ]
    for option in reversed(options):
        f = option(f)
    return f


def invocation(default: str) -> str:
    """The command line as the user typed it (for the report), or ``default`` when called without arguments."""
    return "kernelscope " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else default


def fail(message: str) -> int:
    """Print a run's failure as one ``kernelscope: error:`` line; the exit code to leave with."""
    click.echo(f"kernelscope: error: {' '.join(message.split())}", err=True)
    return 1


def raise_fatal(fatal: tuple[str, str], where: str = "") -> NoReturn:
    """Leave with the error that stopped the run: a forward that raised is exit 1 (``where``: the files that
    hold each mode's error), a model file or usage error its own exit code."""
    kind, message = fatal
    if kind == "forward":
        raise click.exceptions.Exit(fail(f"{message}; {where}" if where else message))
    raise (ModelFileError(message) if kind == "model" else UsageError(message))
