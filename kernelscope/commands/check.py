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
@click.option("--coverage", is_flag=True,
              help="Fail a mode (eager included) in which a GEMM-class op that ran was attributed to no kernel, "
                   "or whose GEMM coverage was not derived.")
@click.option("--advice", is_flag=True,
              help="RESULT_DIR profiled with --advise (or `kernelscope advise`): fail a checked mode for which a "
                   "setting was proven by a run to fuse a GEMM epilogue and make the whole model faster beyond noise, "
                   "since the model does not use it.")
@click.option("--mode", "modes", multiple=True, metavar="M",
              help="Check only mode M (repeatable or comma-separated); default: every mode except eager and the "
                   "candidate modes --advise added.")
@click.option("--max-regression", type=float, metavar="X", default=None,
              help="RESULT_DIR from `kernelscope upgrade-check`: per mode after/before latency at most X (violated "
                   "only when the whole 95% interval is above X), and no new failure, numerics failure or lost "
                   "epilogue fusion after the upgrade. The other rules then check its after/ run.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
@click.pass_context
def command(ctx: click.Context, result_dir: Path, expect_fused: str | None, max_kernels_per_iter: int | None,
            max_slowdown: float | None, min_speedup: float | None, numerics: bool, coverage: bool, advice: bool,
            modes: tuple[str, ...],
            max_regression: float | None, debug: bool) -> None:
    """A CI gate on a run's result (RESULT_DIR holds result.json): exit 0 when every rule holds for the checked
    modes, 1 with one line per violated rule, 2 on usage errors (no rule, a bad option, an unreadable
    RESULT_DIR). A checked mode that failed violates every rule; latency rules allow for timing noise."""
    from kernelscope.analysis.check import Rules, check_result, check_upgrade_dir
    from kernelscope.report.check import format_notes, format_outcome
    from kernelscope.result_file import load_result

    names = tuple(n.strip() for spec in modes for n in spec.split(",") if n.strip())
    if expect_fused is not None and expect_fused.strip().lower() in ("all", "none"):
        expect_fused = expect_fused.strip().lower()  # the keywords in any case: ALL, None
    rules = Rules(expect_fused, max_kernels_per_iter, max_slowdown, min_speedup, names, numerics, coverage, advice)
    outcome = check_upgrade_dir(result_dir, rules, max_regression)  # None: not an upgrade-check directory
    if outcome is None:
        if max_regression is not None:
            from kernelscope.errors import UsageError

            raise UsageError(f"--max-regression needs a directory written by `kernelscope upgrade-check`; "
                             f"{result_dir} has no compare.json with before/ and after/",
                             "pass the upgrade-check --out DIR, or use --max-slowdown on a single run")
        outcome = check_result(load_result(result_dir), rules)
    for line in format_outcome(outcome):
        click.echo(line)
    for note in format_notes(outcome):
        click.echo(f"note: {note}", err=True)
    from kernelscope.report.github import report_check

    report_check(str(result_dir), outcome, format_outcome(outcome))
    ctx.exit(0 if outcome.ok else 1)
