"""kernelscope profile MODEL.py: run every mode in its own process, analyse, write the reports."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from kernelscope.commands import (
    DEFAULT_ADVISE_BUDGET_S,
    DEFAULT_PROCESSES,
    fail,
    invocation,
    raise_fatal,
    torchrun_options,
    verbose_option,
)
from kernelscope.errors import Stopped, UsageError

ADVISE_ONE_SHAPE = "--advise profiles one shape, and this run sweeps several"

if TYPE_CHECKING:  # imported when the command runs: `kernelscope --help` imports every command module
    from kernelscope.result import RunResult
    from kernelscope.run.profile import ModeRuns


@click.command("profile")
@click.argument("model", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--modes", default="eager,default,max-autotune", show_default=True,
              help="Comma-separated: eager, default, max-autotune, reduce-overhead (CUDA), dynamic "
                   "(torch.compile(dynamic=True), one process across the sweep), max-autotune:B1+B2.")
@click.option("--gemm-backends", default=None, metavar="LIST",
              help="Inductor max-autotune GEMM backends, e.g. ATEN,TRITON,NVGEMM (ATEN TRITON CUTLASS NVGEMM CPP).")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True,
              help="auto = cuda when available.")
@click.option("--dtype", type=click.Choice(["float32", "float16", "bfloat16"]), default=None,
              help="Cast the model and floating inputs. Default: the dtypes the model file builds.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a module-level constant of the model file before it is built (repeatable).")
@click.option("--sweep", "sweeps", multiple=True, metavar="NAME=V1,V2,...",
              help="Profile at each value of a module-level constant (repeatable: the Cartesian product). A model "
                   "file's get_input_sweep() adds its own points.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output directory [default: kernelscope-out/<model file stem>].")
@click.option("--force", is_flag=True, help="Write into a non-empty directory kernelscope did not create.")
@click.option("--timeout", type=click.FloatRange(min=1), default=900.0, show_default=True,
              help="Seconds per mode and shape point (compile included); past it the mode is stopped, marked timeout.")
@click.option("--warmup", type=click.IntRange(min=1), default=10, show_default=True,
              help="Minimum warm-up calls before timing (more until per-call time is stable, and for at least "
                   "1 s).")
@click.option("--repeats", type=click.IntRange(min=3), default=30, show_default=True,
              help="Timed samples per process (each of back-to-back calls lasting ~5 ms).")
@click.option("--processes", type=click.IntRange(min=1, max=50), default=DEFAULT_PROCESSES, show_default=True,
              help="Time each mode in N fresh processes, interleaved across modes; later processes reuse the "
                   "first one's Inductor cache. Latency = median of the processes' medians, with an interval "
                   "across processes (1: one process, an interval that covers noise inside it only).")
@click.option("--parallel-setup", type=click.Choice(["auto", "on", "off"]), default="auto", show_default=True,
              help="Every process of the run starts at once and sets up (imports, loading the model) beside the "
                   "others, then waits idle; the first processes then run one at a time, each alone, the later "
                   "ones compile from their mode's cache side by side and time one at a time. auto: at most one "
                   "setting up per two CPUs (one after another under 4 CPUs); on: no limit; off: one process "
                   "after another.")
@click.option("--cpu-pinning", type=click.Choice(["fastest", "off"]), default="fastest", show_default=True,
              help="CUDA: before timing, probe each CPU and pin the launching thread to the one where the model "
                   "ran fastest (on a shared host the CPUs' speeds differ and a process stays on one); off: time "
                   "where the scheduler puts the process.")
@click.option("--steps", type=click.IntRange(min=1, max=50), default=3, show_default=True,
              help="Profiled iterations (after 1 wait + 1 warm-up step).")
@click.option("--freezing/--no-freezing", default=None,
              help="Inductor freezing for compiled modes [default: on for CPU, off for CUDA].")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
              help="Reuse this Inductor cache (default: a fresh cache per mode, so first-call time is a cold compile).")
@click.option("--warm-compile", is_flag=True,
              help="Also time a warm compile: a second process per compiled mode reusing the first one's Inductor "
                   "cache; reports both and the cache hit counters.")
@click.option("--reference/--no-reference", default=True, show_default=True,
              help="Numerics against a float64 copy of the model (same device) as "
                   "well as against eager.")
@click.option("--calibration", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Ceilings from `kernelscope calibrate` for the roofline [default: $KERNELSCOPE_CALIBRATION or "
                   "~/.cache/kernelscope/calibration.json when it exists].")
@click.option("--no-tensorboard", is_flag=True, help="Skip TensorBoard scalars (traces are written regardless).")
@click.option("--advise", is_flag=True,
              help="Fusion advice: for each GEMM group left unfused, derive from why the settings that could fuse "
                   "it and profile each as a mode of its own (its processes interleaved with the others'); the "
                   "reports say which setting fused what and how fast the whole model ran.")
@click.option("--advise-budget", type=click.FloatRange(min=0), default=DEFAULT_ADVISE_BUDGET_S, show_default=True,
              metavar="SECONDS",
              help="With --advise: the time the candidates' first processes may take, spent on the costliest unfused "
                   "epilogues first; what does not fit is listed as not run.")
@click.option("--python", "python", metavar="PATH", default=None,
              help="Run the mode workers under this interpreter (e.g. the pre-upgrade venv's bin/python, or an "
                   "executable wrapper script): it needs torch, not kernelscope. Analysis and reports run here.")
@torchrun_options
@verbose_option
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(model: Path, modes: str, gemm_backends: str | None, device: str, dtype: str | None, sets: tuple[str, ...],
            sweeps: tuple[str, ...], out: Path | None, force: bool, timeout: float, warmup: int, repeats: int,
            processes: int, parallel_setup: str, cpu_pinning: str, steps: int, freezing: bool | None,
            cache_dir: Path | None,
            warm_compile: bool,
            reference: bool, calibration: Path | None, no_tensorboard: bool, advise: bool, advise_budget: float,
            python: str | None,
            nproc: int | None, nnodes: str | None, node_rank: int | None, rdzv_backend: str | None,
            rdzv_endpoint: str | None, rdzv_id: str | None, verbose: bool, debug: bool) -> None:
    """Profile MODEL (a .py file defining get_model()/get_inputs(), or KernelBench's Model/get_init_inputs()/
    get_inputs()) in each mode, each in its own process, and write report.html, summary.md, result.json and
    TensorBoard traces into --out."""

    from kernelscope.capture.interpreter import probe
    from kernelscope.capture.modes import parse_backends, parse_modes
    from kernelscope.capture.runner import CaptureOptions, check_torch_logs
    from kernelscope.capture.torchrun import rendezvous_args
    from kernelscope.outdir import prepare_out_dir
    from kernelscope.report import prepare as prepare_reports
    from kernelscope.report.progress import Progress
    from kernelscope.report.terminal import console_for
    from kernelscope.result_file import write_result
    from kernelscope.run.prepare import input_points, load_calibration, read_model
    from kernelscope.run.profile import ModeRuns, run_result
    from kernelscope.sweep_plan import plan_points

    err = console_for(stderr=True)
    progress = Progress(sys.stderr)
    spec, parsed_sets, parsed_sweeps = read_model(model, sets, sweeps)
    if advise and parsed_sweeps:
        raise UsageError(ADVISE_ONE_SHAPE, "drop --sweep (or pick one point with --set NAME=VALUE) for --advise")
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    torchrun_args = rendezvous_args(nproc, nnodes=nnodes, node_rank=node_rank, rdzv_backend=rdzv_backend,
                                    rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id)
    interp = probe(python) if python else None  # one subprocess: a bad path or a missing/old torch fails here
    check_torch_logs(interp.path if interp else sys.executable)
    cal_path, cal_data = load_calibration(calibration)
    out_dir = prepare_out_dir(out or Path("kernelscope-out") / model.stem, force=force)
    opts = CaptureOptions(model=spec.path, sets=parsed_sets, dtype=dtype, device=device,
                          warmup=warmup, repeats=repeats, profile_steps=steps, timeout_s=timeout, freezing=freezing,
                          cache_dir=str(cache_dir.resolve()) if cache_dir else None, reference=reference,
                          python=interp.path if interp else None, nproc=nproc, torchrun_args=torchrun_args,
                          cpu_pinning=cpu_pinning,
                          share_model=processes > 1 or len(mode_defs) > 1 or warm_compile or advise)
    hook_points = input_points(err, spec.path, opts, out_dir)
    points = plan_points(parsed_sweeps, hook_points) if (parsed_sweeps or hook_points) else []
    if advise and points:
        raise UsageError(ADVISE_ONE_SHAPE, "drop --sweep (or pick one point with --set NAME=VALUE) for --advise")
    command_line = invocation("kernelscope profile")
    err.print(f"[bold]kernelscope[/] profiling {model} -> {out_dir}"
              + (f" at {len(points)} shape points" if points else ""))
    run = ModeRuns(mode_defs, points, opts, out_dir, processes=processes, warm_compile=warm_compile, err=err,
                   progress=progress, dtype=dtype, parallel_setup=parallel_setup)
    asked: dict[str, Any] = {"modes": [m.name for m in mode_defs], "gemm_backends": gemm_backends,
                             "sets": parsed_sets, "warmup": warmup, "repeats": repeats, "processes": processes,
                             "parallel_setup": parallel_setup,
                             "profile_steps": steps,
                             "timeout_s": timeout, "freezing": freezing, "warm_compile": warm_compile,
                             "reference": reference, "python": interp.path if interp else None,
                             "cpu_pinning": cpu_pinning, "dtype": dtype}
    if nproc:
        asked["nproc"] = nproc
        asked["torchrun_args"] = list(torchrun_args)

    advisor = None
    if advise:
        from kernelscope.run.advise import Advisor

        advisor = Advisor(advise_budget, parse_backends(gemm_backends), err, device=device if device != "auto" else "")
        run.after_first = advisor

    def result() -> Any:
        r = run_result(run, asked, interp=interp, device=device, cal_data=cal_data, cal_path=cal_path,
                       model_path=spec.path, sweeps=parsed_sweeps, input_sweep=bool(hook_points),
                       command_line=command_line, model=model)
        return advisor.with_advice(r) if advisor is not None else r

    run.save = lambda: write_result(out_dir, result())
    run.prepare_reports = lambda: prepare_reports(tensorboard=not no_tensorboard)
    run.run()
    _report(run, result(), err, tensorboard=not no_tensorboard, verbose=verbose)


def _report(run: ModeRuns, result: RunResult, err: Any, *, tensorboard: bool, verbose: bool = False) -> None:
    """Write the reports and leave with the run's status: a model file that never loaded or built is one error and
    no report; SIGINT/SIGTERM, a fatal error or a mode that did not finish exit non-zero after the reports."""
    from kernelscope.report import write_reports
    from kernelscope.report.github import publish_profile
    from kernelscope.report.terminal import console_for, render_terminal

    grid, out_dir = run.grid, run.out_dir
    if run.never_ran() and not run.interrupted:
        raise_fatal(run.fatal)  # type: ignore[arg-type]  # no report to read, just the one error
    try:
        paths = write_reports(result, out_dir, tensorboard=tensorboard)
        publish_profile(paths["md"])  # GitHub Actions: the summary on the run's page
        render_terminal(result, console_for(), verbose=verbose)
        err.print(f"report: {paths['html']}\nsummary: {paths['md']}\nresult: {paths['json']}\n"
                  f"traces: tensorboard --logdir {out_dir / 'tb'}")
    except KeyboardInterrupt:  # while the reports were written: result.json was written as the modes finished
        run.stopped()
        raise Stopped(run.interrupted or "SIGINT", f"interrupted ({run.interrupted}) while writing the reports; "
                                                   f"kept {run.kept()} in {out_dir / 'result.json'}") from None
    if run.interrupted:
        during = f" during {run.during}" if run.during else ""
        raise Stopped(run.interrupted, f"interrupted ({run.interrupted}){during}; kept {run.kept()} in "
                                       f"{paths['json']} (report: {paths['html']})")
    if run.fatal:
        raise_fatal(run.fatal, f"every mode's error is in {paths['json']} (report: {paths['html']})")
    # a candidate of --advise that failed is the advice's to report (a setting that does not work here)
    failed = [(m, row_label) for row, row_label in zip(grid, [p.label for p in run.points] or [""])
              for m in row if m.status in ("failed", "timeout") and m.name not in run.added]
    if failed:
        names = ", ".join(f"{m.name}{' @ ' + lbl if lbl else ''} ({m.status})" for m, lbl in failed)
        raise click.exceptions.Exit(fail(f"{len(failed)} mode(s) did not finish: {names}; the other modes' "
                                          f"results are in {paths['html']}"))
