"""kernelscope analyze TRACE: the same analysis and reports for a trace made elsewhere (no GPU, no torch)."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

import click

from kernelscope import commands
from kernelscope.commands import verbose_option


@click.command("analyze")
@click.argument("trace", type=click.Path(path_type=Path))
@click.option("--code", "codes", multiple=True, type=click.Path(path_type=Path),
              help="Inductor output code of the compiled graph(s) in the trace (repeatable).")
@click.option("--log", "log", type=click.Path(path_type=Path), default=None,
              help="The run's stderr with TORCH_LOGS=fusion / autotune output (for the why-not of GEMM verdicts).")
@click.option("--iterations", type=click.IntRange(min=1), default=None,
              help="Iterations the trace holds, when it has no ProfilerStep markers and inference is ambiguous.")
@click.option("--mode", "mode", default="trace", show_default=True, help="Name for this trace's mode in reports.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="Output directory.")
@click.option("--force", is_flag=True, help="Write into a non-empty directory kernelscope did not create.")
@verbose_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(trace: Path, codes: tuple[Path, ...], log: Path | None, iterations: int | None, mode: str, out: Path,
            force: bool, verbose: bool, debug: bool) -> None:
    """Analyse TRACE (a torch.profiler chrome trace, .json or .json.gz) and write result.json, report.html and
    summary.md with one mode. TRACE may be a directory of rank traces (one *.pt.trace.json(.gz) per rank, each
    with distributedInfo.rank, as a torchrun run writes them): the mode then has one result per rank."""
    from kernelscope.analysis.mode import analyze_trace_file
    from kernelscope.errors import UsageError
    from kernelscope.outdir import prepare_out_dir
    from kernelscope.report import write_reports
    from kernelscope.report.terminal import console_for, render_terminal

    if log is not None and not log.is_file():
        raise UsageError(f"log file {log} does not exist", "pass the stderr log of the run, or leave out --log")
    command_line = "kernelscope " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    if trace.is_dir():
        from kernelscope.analysis.ranks import analyze_rank_dir

        if codes or log is not None:
            raise UsageError("--code and --log apply to one trace, and TRACE is a directory of rank traces",
                             "leave them out, or analyse one rank's trace file with them")
        result = analyze_rank_dir(trace, mode=mode, iterations=iterations, command=command_line)
    else:
        result = analyze_trace_file(trace, list(codes), mode=mode, iterations=iterations, log_path=log,
                                    command=command_line, keep=_held if commands.command_line else None)
    # A trace alone has no latency to compare: nothing to recommend (not "no working mode").
    result = dataclasses.replace(result, recommendation=())
    out_dir = prepare_out_dir(out, force=force)
    paths = write_reports(result, out_dir, tensorboard=False)
    render_terminal(result, console_for(), verbose=verbose)
    console_for(stderr=True).print(f"report: {paths['html']}\nresult: {paths['json']}")
    # Every file is written and closed: nothing is left for the interpreter's teardown but freeing the trace (held
    # in _held on a command line), which the command line then skips.
    commands.skip_teardown = True


_held: list[object] = []
