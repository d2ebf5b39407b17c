"""kernelscope upgrade-check MODEL.py --before PY_OLD [--after PY_NEW] --out DIR: the before/after of an upgrade.

Both sides run here, each mode once per side, the sides' processes interleaved (eager before, eager after,
default after, default before, ...: alternating which side goes first, so drift on the machine over the run,
a warming GPU, a neighbour's job, lands on both sides alike rather than on whichever ran second). DIR/before and
DIR/after are ordinary result directories (report, result.json, traces: `check`, `compare`, `analyze` work on
them); DIR/compare.{json,md,html} is the comparison, whose first lines answer the upgrade question.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kernelscope.commands import DEFAULT_PROCESSES, fail, invocation, raise_fatal, torchrun_options
from kernelscope.errors import Stopped

if TYPE_CHECKING:  # imported when the command runs: `kernelscope --help` imports every command module
    from kernelscope.result import RunResult
    from kernelscope.run.upgrade import SideRuns


@click.command("upgrade-check")
@click.argument("model", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--before", "before_py", required=True, metavar="PY_OLD",
              help="Interpreter of the install before the upgrade (e.g. the old venv's bin/python, or an executable "
                   "wrapper script that sets PYTHONPATH and execs python). It needs torch, not kernelscope.")
@click.option("--after", "after_py", default=None, metavar="PY_NEW",
              help="Interpreter of the install after the upgrade [default: the one running kernelscope].")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="Directory for before/, after/ and compare.{html,md,json}.")
@click.option("--modes", default="eager,default,max-autotune", show_default=True,
              help="Comma-separated modes, as for `kernelscope profile` (each runs once per side).")
@click.option("--gemm-backends", default=None, metavar="LIST", help="Inductor max-autotune GEMM backends.")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True)
@click.option("--dtype", type=click.Choice(["float32", "float16", "bfloat16"]), default=None,
              help="Cast the model and floating inputs [default: the model file's dtypes].")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a module-level constant of the model file (repeatable).")
@click.option("--force", is_flag=True, help="Write into a non-empty directory kernelscope did not create.")
@click.option("--timeout", type=click.FloatRange(min=1), default=900.0, show_default=True,
              help="Seconds per mode and side (compile included).")
@click.option("--warmup", type=click.IntRange(min=1), default=10, show_default=True)
@click.option("--repeats", type=click.IntRange(min=3), default=30, show_default=True,
              help="Timed samples per process.")
@click.option("--processes", type=click.IntRange(min=1, max=50), default=DEFAULT_PROCESSES, show_default=True,
              help="Time each mode and side in N fresh processes; later processes (timing only, on the first "
                   "one's Inductor cache) interleave both sides and all modes, so machine drift meets each alike.")
@click.option("--cpu-pinning", type=click.Choice(["fastest", "off"]), default="fastest", show_default=True,
              help="CUDA: time with the launching thread pinned to the CPU where the model ran fastest (as profile).")
@click.option("--steps", type=click.IntRange(min=1, max=50), default=3, show_default=True,
              help="Profiled iterations.")
@click.option("--freezing/--no-freezing", default=None, help="Inductor freezing [default: on for CPU, off for CUDA].")
@click.option("--warm-compile", is_flag=True, help="Also time a warm compile per compiled mode and side.")
@click.option("--reference/--no-reference", default=True, show_default=True,
              help="Numerics against a float64 copy of the model too.")
@click.option("--calibration", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Ceilings from `kernelscope calibrate` for the roofline.")
@click.option("--no-tensorboard", is_flag=True, help="Skip TensorBoard scalars.")
@torchrun_options
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(model: Path, before_py: str, after_py: str | None, out: Path, modes: str, gemm_backends: str | None,
            device: str, dtype: str | None, sets: tuple[str, ...], force: bool, timeout: float, warmup: int,
            repeats: int, processes: int, cpu_pinning: str, steps: int, freezing: bool | None, warm_compile: bool,
            reference: bool, calibration: Path | None, no_tensorboard: bool, nproc: int | None, nnodes: str | None,
            node_rank: int | None, rdzv_backend: str | None, rdzv_endpoint: str | None, rdzv_id: str | None,
            debug: bool) -> None:
    """Profile MODEL under the install before an upgrade (--before) and after it (--after, default this
    interpreter), interleaving their mode processes, and compare: per mode latency before/after with intervals,
    compile time, kernels per iteration, peak memory, numerics; per GEMM (matched by module path and shape) the
    backend and epilogue verdict. Writes DIR/before, DIR/after, DIR/compare.html, compare.md and compare.json;
    the summary's first lines answer the upgrade question. Gate on it with `kernelscope check DIR ...`.
    With --nproc N each side's modes run under torchrun with N ranks, compared rank by rank."""
    from rich.console import Console

    from kernelscope.capture.modes import parse_backends, parse_modes
    from kernelscope.capture.runner import CaptureOptions, drop_model_cache
    from kernelscope.capture.torchrun import rendezvous_args
    from kernelscope.report import write_reports
    from kernelscope.result_file import write_result
    from kernelscope.run.prepare import load_calibration, read_model
    from kernelscope.run.upgrade import SIDES, SideRuns, interpreters, out_dirs, side_result

    err = Console(stderr=True, highlight=False)
    spec, parsed_sets, _ = read_model(model, sets, ())
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    interp = interpreters(before_py, after_py)
    cal_path, cal_data = load_calibration(calibration)
    top, dirs = out_dirs(out, force)
    torchrun_args = rendezvous_args(nproc, nnodes=nnodes, node_rank=node_rank, rdzv_backend=rdzv_backend,
                                    rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id)
    base = dict(model=spec.path, sets=parsed_sets, dtype=dtype, device=device, warmup=warmup, repeats=repeats,
                profile_steps=steps, timeout_s=timeout, freezing=freezing, reference=reference,
                cpu_pinning=cpu_pinning, nproc=nproc, torchrun_args=torchrun_args)
    opts = {"before": CaptureOptions(**base, python=interp["before"].path),  # type: ignore[arg-type]
            # the default after side is kernelscope's own interpreter, run exactly as `profile` runs it
            "after": CaptureOptions(**base, python=interp["after"].path if after_py else None)}  # type: ignore[arg-type]
    command_line = invocation("kernelscope upgrade-check")
    err.print(f"[bold]kernelscope[/] upgrade check of {model} -> {top}\n"
              f"  before: {interp['before'].path} (torch {interp['before'].torch})\n"
              f"  after:  {interp['after'].path} (torch {interp['after'].torch})")
    run = SideRuns(mode_defs, opts, dirs, interp, processes=processes, warm_compile=warm_compile, err=err,
                   dtype=dtype)
    asked: dict[str, Any] = {
        "modes": [m.name for m in mode_defs], "gemm_backends": gemm_backends, "sets": parsed_sets,
        "warmup": warmup, "repeats": repeats, "processes": processes, "profile_steps": steps,
        "timeout_s": timeout,
        "freezing": freezing, "warm_compile": warm_compile, "reference": reference,
    }
    if nproc:
        asked["nproc"] = nproc
        asked["torchrun_args"] = list(torchrun_args)

    def result(side: str) -> Any:
        return side_result(run, side, {**asked, "python": interp[side].path, "upgrade_check": side,
                                       "cpu_pinning": cpu_pinning},
                           device=device, cal_data=cal_data, cal_path=cal_path, command_line=command_line,
                           model=model)

    run.save = lambda side: write_result(dirs[side], result(side))  # each side's result.json as modes finish
    try:
        run.run()
    finally:  # the sides' model caches (capture/model_cache.py), also when the run is interrupted
        for d in dirs.values():
            drop_model_cache(d)
    try:
        results = {side: result(side) for side in SIDES}
        for side in SIDES:
            write_reports(results[side], dirs[side], tensorboard=not no_tensorboard)
        html = _write_comparison(top, dirs, results, err)
    except KeyboardInterrupt:  # while the reports were written: each side's result.json was written already
        run.stopped()
        raise Stopped(run.interrupted or "SIGINT", f"interrupted ({run.interrupted}) while writing the reports; "
                                                   f"kept {run.kept()} in {dirs['before']} and {dirs['after']}"
                      ) from None
    _exit_status(run, results, html)


def _write_comparison(top: Path, dirs: dict[str, Path], results: dict[str, Any], err: Any) -> Path:
    """DIR/compare.{json,md,html}; the summary's lines on stdout. Returns compare.html's path."""
    import json

    from kernelscope.analysis.upgrade import compare_upgrade
    from kernelscope.files import atomic_write_text
    from kernelscope.report.upgrade import render_upgrade_html, render_upgrade_markdown, upgrade_data

    data = upgrade_data(compare_upgrade(results["before"], results["after"]))
    paths = {"json": top / "compare.json", "md": top / "compare.md", "html": top / "compare.html"}
    atomic_write_text(paths["json"], json.dumps(data, indent=1, allow_nan=False) + "\n")
    atomic_write_text(paths["md"], render_upgrade_markdown(data))
    atomic_write_text(paths["html"], render_upgrade_html(data, results["after"].tool_version))
    for line in data["summary"]:
        click.echo(line)
    err.print(f"comparison: {paths['html']}\nsummary: {paths['md']}\ndata: {paths['json']}\n"
              f"reports: {dirs['before'] / 'report.html'}, {dirs['after'] / 'report.html'}")
    return paths["html"]


def _exit_status(run: SideRuns, results: dict[str, RunResult], html: Path) -> None:
    """SIGINT/SIGTERM, the error that stopped the run, or the mode runs that did not finish: exit non-zero."""
    if run.interrupted:
        during = f" during {run.during}" if run.during else ""
        raise Stopped(run.interrupted, f"interrupted ({run.interrupted}){during}; kept {run.kept()} in "
                                       f"{run.dirs['before']} and {run.dirs['after']} (comparison: {html})")
    if run.fatal:
        raise_fatal(run.fatal)
    failed = [f"{m.name} ({side}: {m.status})" for side, result in results.items() for m in result.modes
              if m.status in ("failed", "timeout")]
    if failed:
        raise click.exceptions.Exit(fail(f"{len(failed)} mode run(s) did not finish: {', '.join(failed)}; "
                                          f"everything else is in {html}"))
