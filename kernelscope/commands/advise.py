"""kernelscope advise RUN_DIR: profile the settings that could fuse a finished run's unfused GEMM epilogues."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from kernelscope.commands import DEFAULT_ADVISE_BUDGET_S, invocation, verbose_option


@click.command("advise")
@click.argument("run_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Write the candidates' modes and the reports here [default: into RUN_DIR, beside its modes].")
@click.option("--force", is_flag=True, help="Write --out into a non-empty directory kernelscope did not create.")
@click.option("--advise-budget", type=click.FloatRange(min=0), default=DEFAULT_ADVISE_BUDGET_S, show_default=True,
              metavar="SECONDS",
              help="The time the candidates' first processes may take, spent on the costliest unfused epilogues "
                   "first; what does not fit is listed as not run.")
@click.option("--model", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The run's model file, where it is not at the path the run recorded (it must be unchanged).")
@click.option("--timeout", type=click.FloatRange(min=1), default=None,
              help="Seconds per candidate mode [default: the run's --timeout].")
@click.option("--no-tensorboard", is_flag=True, help="Skip TensorBoard scalars.")
@verbose_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(run_dir: Path, out: Path | None, force: bool, advise_budget: float, model: Path | None,
            timeout: float | None, no_tensorboard: bool, verbose: bool, debug: bool) -> None:
    """Fusion advice for a finished run (RUN_DIR holds result.json): for each GEMM group whose epilogue a mode
    left unfused, derive from why the settings that could fuse it, profile each the way the run profiled its
    modes (the same model file, settings and processes), and write the reports again with the advice: which
    setting fused which ops, and the whole model's latency against the mode it improves (between the two runs)."""
    from kernelscope.errors import Stopped
    from kernelscope.outdir import prepare_out_dir
    from kernelscope.report import write_reports
    from kernelscope.report.progress import Progress
    from kernelscope.report.terminal import console_for, render_terminal
    from kernelscope.result_file import write_result
    from kernelscope.run.advise import advise_finished_run, read_finished_run

    err = console_for(stderr=True)
    fin = read_finished_run(run_dir, model, timeout)
    out_dir = prepare_out_dir(out, force=force) if out is not None else run_dir.resolve()
    err.print(f"[bold]kernelscope[/] advising {run_dir} ({fin.model}) -> {out_dir}")
    result, run = advise_finished_run(fin, run_dir, out_dir, budget_s=advise_budget, err=err,
                                      progress=Progress(sys.stderr), command_line=invocation("kernelscope advise"))
    write_result(out_dir, result)
    paths = write_reports(result, out_dir, tensorboard=not no_tensorboard)
    render_terminal(result, console_for(), verbose=verbose)
    err.print(f"report: {paths['html']}\nsummary: {paths['md']}\nresult: {paths['json']}")
    if run.interrupted:
        raise Stopped(run.interrupted, f"interrupted ({run.interrupted}); kept the finished candidates in "
                                       f"{paths['json']}")
