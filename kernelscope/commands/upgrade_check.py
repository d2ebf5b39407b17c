"""kernelscope upgrade-check MODEL.py --before PY_OLD [--after PY_NEW] --out DIR: the before/after of an upgrade.

Both sides run here, each mode once per side, the sides' processes interleaved (eager before, eager after,
default after, default before, ...: alternating which side goes first, so drift on the machine over the run,
a warming GPU, a neighbour's job, lands on both sides alike rather than on whichever ran second). DIR/before and
DIR/after are ordinary result directories (report, result.json, traces: `check`, `compare`, `analyze` work on
them); DIR/compare.{json,md,html} is the comparison, whose first lines answer the upgrade question.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from kernelscope.capture_record import CAPTURE_FILE, CaptureRecord, Environment, write_capture
from kernelscope.commands.profile import DEFAULT_PROCESSES, pending, skipped, stop_signal, torchrun_options
from kernelscope.errors import Stopped

SIDES = ("before", "after")


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
    from kernelscope.commands.profile import _calibration, _read_model, invocation
    from kernelscope.report import write_reports
    from kernelscope.result_file import write_result

    err = Console(stderr=True, highlight=False)
    spec, parsed_sets, _ = _read_model(model, sets, ())
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    interp = _interpreters(before_py, after_py)
    cal_path, cal_data = _calibration(calibration)
    top, dirs = _out_dirs(out, force)
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
    run = _SideRuns(mode_defs, opts, dirs, interp, processes=processes, warm_compile=warm_compile, err=err,
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
        return _side_result(run, side, {**asked, "python": interp[side].path, "upgrade_check": side,
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
    _exit_status(run, results, err, html)


def _interpreters(before_py: str, after_py: str | None) -> dict[str, Any]:
    """Both interpreters, checked before anything runs: one subprocess each (and TORCH_LOGS under each)."""
    from kernelscope.capture.interpreter import probe
    from kernelscope.capture.runner import check_torch_logs

    interp = {"before": probe(before_py, "--before"), "after": probe(after_py or sys.executable, "--after")}
    for side in SIDES:
        check_torch_logs(interp[side].path)
    return interp


def _out_dirs(out: Path, force: bool) -> tuple[Path, dict[str, Path]]:
    """DIR and DIR/before, DIR/after, emptied; an earlier comparison's files removed."""
    from kernelscope.outdir import prepare_out_dir

    top = prepare_out_dir(out, force=force)
    dirs = {side: prepare_out_dir(top / side, force=True) for side in SIDES}
    for name in ("compare.json", "compare.md", "compare.html"):
        (top / name).unlink(missing_ok=True)
    return top, dirs


class _SideRuns:
    """Each mode once per side, the sides' processes interleaved (eager before, eager after, default after,
    default before, ...), then the later, timing-only processes in the same order. A mode is analysed when nothing
    more runs for it and its side's result.json written again (``save``); on SIGINT/SIGTERM the modes that ran
    are kept and the others read ``interrupted``."""

    def __init__(self, mode_defs: list[Any], opts: dict[str, Any], dirs: dict[str, Path], interp: dict[str, Any],
                 *, processes: int, warm_compile: bool, err: Any, dtype: str | None) -> None:
        self.mode_defs, self.opts, self.dirs, self.interp = mode_defs, opts, dirs, interp
        self.processes, self.warm_compile, self.err = processes, warm_compile, err
        self.results: dict[str, list[Any]] = {side: [None] * len(mode_defs) for side in SIDES}
        self.environment: dict[str, Environment | None] = {side: None for side in SIDES}  # each side's first record
        self.run_dtype: dict[str, str | None] = {side: dtype for side in SIDES}
        self.fatal: tuple[str, str] | None = None
        self.interrupted: str | None = None  # the signal that stopped the run
        self.running: str | None = None  # the worker running now; ``during`` once a signal stopped it
        self.during: str | None = None
        self.save: Callable[[str], object] | None = None  # writes a side's result.json
        self.jobs = [(mi, side) for mi in range(len(mode_defs))
                     for side in (SIDES if mi % 2 == 0 else tuple(reversed(SIDES)))]
        self.firsts: dict[int, CaptureRecord] = {}
        self.later: dict[int, list[CaptureRecord]] = {}

    def label(self, j: int) -> str:
        mi, side = self.jobs[j]
        return f"[{j + 1}/{len(self.jobs)}] {self.mode_defs[mi].name} ({side}, torch {self.interp[side].torch})"

    def capture(self, j: int, label: str, *, warm: bool, process: int = 1) -> CaptureRecord:
        from kernelscope.capture.runner import run_mode
        from kernelscope.report.progress import Progress

        mi, side = self.jobs[j]
        tag = f"{label}{' (warm compile)' if warm else ''}"
        self.running = f"{self.mode_defs[mi].name} ({side}{', warm compile' if warm else ''}" + (
            f", process {process})" if process > 1 else ")")
        with Progress(sys.stderr).mode(tag) as on_progress:
            rec = run_mode(self.mode_defs[mi], self.opts[side], self.dirs[side], on_progress, warm=warm,
                           process=process)
        self.running = None
        return rec

    def run(self) -> None:
        """Every mode's processes on both sides; after SIGINT/SIGTERM (or an error that stops the run) the modes
        that ran are analysed with the processes they had, the others marked as not run."""
        try:
            self.first_processes()
            self.later_processes()
        except KeyboardInterrupt:
            self.stopped()
        for j, (mi, side) in enumerate(self.jobs):
            if j in self.firsts and self.results[side][mi] is None:
                self.finish(j)
            elif self.results[side][mi] is None:
                self.results[side][mi] = skipped(self.mode_defs[mi].name, self.fatal, self.interrupted)

    def stopped(self) -> None:
        self.interrupted = self.interrupted or stop_signal()
        self.during = self.during or self.running

    def first_processes(self) -> None:
        for j, (_, side) in enumerate(self.jobs):
            if self.fatal or self.interrupted:
                return
            rec = self._first_process(j, self.label(j))
            if rec.environment and self.environment[side] is None:
                self.environment[side] = rec.environment
            self.run_dtype[side] = self.run_dtype[side] or rec.dtype
            self.firsts[j] = rec
            self.later[j] = []
            if rec.error_kind in ("model", "usage", "forward") and not self.fatal:
                self.fatal = (rec.error_kind, rec.error)
            if self.processes == 1 or rec.status != "ok":
                self.finish(j)  # nothing more runs for it

    def _first_process(self, j: int, label: str) -> CaptureRecord:
        """Process 1 of a mode on one side (and its warm-compile process)."""
        from kernelscope.capture.runner import merge_ranks, merge_warm, read_capture

        mi, side = self.jobs[j]
        mode = self.mode_defs[mi]
        path = self.dirs[side] / "modes" / mode.dirname / CAPTURE_FILE
        try:
            rec = self.capture(j, label, warm=False)
            if self.warm_compile and mode.compiled and rec.status == "ok":
                warm = self.capture(j, label, warm=True)
                rec = merge_ranks(self.dirs[side], rec, [warm], lambda a, o: merge_warm(a, o[0]))
                write_capture(path, rec)
        except KeyboardInterrupt:
            self.stopped()
            rec = read_capture(path) or CaptureRecord(mode=mode.name, status="interrupted", error_kind="interrupted",
                                                      error=f"interrupted ({self.interrupted}) while it ran")
        return rec

    def later_processes(self) -> None:
        """Timing only, on each side's own Inductor cache, in the same interleaved order."""
        for process in range(2, self.processes + 1):
            for j, (mi, side) in enumerate(self.jobs):
                if self.fatal or self.interrupted:
                    return
                if j not in self.firsts or self.results[side][mi] is not None:
                    continue  # not run, or failed in its first process
                label = f"[process {process}/{self.processes}] {self.mode_defs[mi].name} ({side})"
                self.later[j].append(self.capture(j, label, warm=False, process=process))
                if process == self.processes:
                    self.finish(j)

    def finish(self, j: int) -> None:
        """A mode on one side: its processes' timings merged into the first one's record, analysed, its line
        printed, the side's result.json written."""
        from kernelscope.analysis.ranks import build_any_mode_result
        from kernelscope.capture.runner import merge_processes, merge_ranks
        from kernelscope.commands.profile import print_mode_line

        mi, side = self.jobs[j]
        rec = self.firsts[j]
        if self.later[j]:
            rec = merge_ranks(self.dirs[side], rec, self.later[j], merge_processes)
            write_capture(self.dirs[side] / "modes" / self.mode_defs[mi].dirname / CAPTURE_FILE, rec)
        mr = build_any_mode_result(self.dirs[side], rec)
        self.results[side][mi] = mr
        print_mode_line(self.err, self.label(j), mr)
        if self.save is not None:
            self.save(side)

    def kept(self) -> str:
        """The mode runs a stopped run kept (with their status when not ok), or "no finished mode"."""
        names = [f"{m.name} ({side}{'' if m.status == 'ok' else ': ' + m.status})" for mi in range(len(self.mode_defs))
                 for side in SIDES if (m := self.results[side][mi]) is not None and m.status != "interrupted"]
        return ", ".join(names) or "no finished mode"


def _side_result(run: _SideRuns, side: str, settings: dict[str, Any], *, device: str, cal_data: Any,
                 cal_path: Path, command_line: str, model: Path) -> Any:
    """One side's RunResult, with the roofline on its device's peaks; a mode still to run reads as pending."""
    from kernelscope.analysis.mode import build_run_result, run_environment
    from kernelscope.analysis.roofline import peaks_for, with_roofline
    from kernelscope.result import to_json

    env = run_environment(run.environment[side], run.interp[side].as_dict())
    peaks = peaks_for(to_json(env), cal_data, str(cal_path)) if run.environment[side] else {}
    row = [dataclasses.replace(m, gemms=with_roofline(m.gemms, peaks)) if m is not None else pending(d.name)
           for m, d in zip(run.results[side], run.mode_defs)]
    resolved_device = env.device or (device if device != "auto" else "")
    return build_run_result(row, environment=env, command=command_line, model=str(model), device=resolved_device,
                            dtype=run.run_dtype[side] or "", settings=settings, peaks=peaks)


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


def _exit_status(run: _SideRuns, results: dict[str, Any], err: Any, html: Path) -> None:
    """SIGINT/SIGTERM, the error that stopped the run, or the mode runs that did not finish: exit non-zero."""
    from kernelscope.commands.profile import fail, raise_fatal

    if run.interrupted:
        during = f" during {run.during}" if run.during else ""
        raise Stopped(run.interrupted, f"interrupted ({run.interrupted}){during}; kept {run.kept()} in "
                                       f"{run.dirs['before']} and {run.dirs['after']} (comparison: {html})")
    if run.fatal:
        raise_fatal(err, run.fatal)
    failed = [f"{m.name} ({side}: {m.status})" for side in SIDES for m in results[side].modes
              if m.status in ("failed", "timeout")]
    if failed:
        raise click.exceptions.Exit(fail(err, f"{len(failed)} mode run(s) did not finish: {', '.join(failed)}; "
                                               f"everything else is in {html}"))
