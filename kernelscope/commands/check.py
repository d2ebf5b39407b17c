"""kernelscope check RESULT_DIR [rules]: a CI gate on a run's result."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("check")
@click.argument("result_dir", type=click.Path(path_type=Path))
@click.option("--expect-fused", metavar="all|none|PATTERN", default=None,
              help="all: every GEMM's epilogue fully fused (or none to fuse); none: no GEMM fused any op; "
                   "PATTERN: every epilogue op matching this regular expression is fused, and one exists.")
@click.option("--max-kernels-per-iter", type=click.IntRange(min=1), metavar="N", default=None,
              help="At most N kernels per iteration (memsets/memcpys not counted).")
@click.option("--max-slowdown", type=float, metavar="X", default=None,
              help="Mode latency / eager latency at most X (violated only when the whole 95% interval is above X).")
@click.option("--min-speedup", type=float, metavar="X", default=None,
              help="Eager latency / mode latency at least X (violated only when the whole 95% interval is below X).")
@click.option("--numerics", is_flag=True,
              help="Fail a checked mode whose output fails against eager (beyond the dtype's tolerance, new NaN/Inf) "
                   "or against the float64 reference.")
@click.option("--mode", "modes", multiple=True, metavar="M",
              help="Check only mode M (repeatable or comma-separated); default: every mode except eager.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.pass_context
def command(ctx: click.Context, result_dir: Path, expect_fused: str | None, max_kernels_per_iter: int | None,
            max_slowdown: float | None, min_speedup: float | None, numerics: bool, modes: tuple[str, ...],
            debug: bool) -> None:
    """A CI gate on a run's result (RESULT_DIR holds result.json): exit 0 when every rule holds for the checked
    modes, 1 with one line per violated rule, 2 on usage errors (no rule, a bad option, an unreadable
    RESULT_DIR). A checked mode that failed violates every rule; latency rules allow for timing noise."""
    from kernelscope.report.check import Rules, check_result, format_outcome
    from kernelscope.report.io import load_result

    names = tuple(n.strip() for spec in modes for n in spec.split(",") if n.strip())
    rules = Rules(expect_fused, max_kernels_per_iter, max_slowdown, min_speedup, names, numerics)
    outcome = check_result(load_result(result_dir), rules)
    for line in format_outcome(outcome):
        click.echo(line)
    for note in outcome.notes:
        click.echo(f"note: {note}", err=True)
    ctx.exit(0 if outcome.ok else 1)
