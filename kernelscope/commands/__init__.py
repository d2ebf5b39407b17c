"""One module per subcommand; each exposes a click command named ``command``."""

from __future__ import annotations

import click

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
