"""kernelscope upgrade-check MODEL.py --before PY_OLD [--after PY_NEW] --out DIR: the before/after of an upgrade.

Both sides run here, each mode once per side, the sides' processes interleaved (eager before, eager after,
default after, default before, ...: alternating which side goes first, so drift on the machine over the run,
a warming GPU, a neighbour's job, lands on both sides alike rather than on whichever ran second). DIR/before and
DIR/after are ordinary result directories (report, result.json, traces: `check`, `compare`, `analyze` work on
them); DIR/compare.{json,md,html} is the comparison, whose first lines answer the upgrade question.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from kernelscope.capture_record import CAPTURE_FILE, CaptureRecord, write_capture
from kernelscope.commands.profile import DEFAULT_PROCESSES, torchrun_options
from kernelscope.errors import ModelFileError, UsageError

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
            repeats: int, processes: int, steps: int, freezing: bool | None, warm_compile: bool, reference: bool,
            calibration: Path | None, no_tensorboard: bool, nproc: int | None, nnodes: str | None,
            node_rank: int | None, rdzv_backend: str | None, rdzv_endpoint: str | None, rdzv_id: str | None,
            debug: bool) -> None:
    """Profile MODEL under the install before an upgrade (--before) and after it (--after, default this
    interpreter), interleaving their mode processes, and compare: per mode latency before/after with intervals,
    compile time, kernels per iteration, peak memory, numerics; per GEMM (matched by module path and shape) the
    backend and epilogue verdict. Writes DIR/before, DIR/after, DIR/compare.html, compare.md and compare.json;
    the summary's first lines answer the upgrade question. Gate on it with `kernelscope check DIR ...`.
    With --nproc N each side's modes run under torchrun with N ranks, compared rank by rank."""
    from rich.console import Console

    from kernelscope import modelfile
    from kernelscope.analysis.mode import build_run_result
    from kernelscope.analysis.ranks import build_any_mode_result
    from kernelscope.analysis.roofline import (
        default_calibration_path,
        peaks_for,
        read_calibration,
        with_roofline,
    )
    from kernelscope.capture.interpreter import probe
    from kernelscope.capture.modes import parse_backends, parse_modes
    from kernelscope.capture.runner import (
        CaptureOptions,
        check_torch_logs,
        merge_processes,
        merge_ranks,
        merge_warm,
        run_mode,
    )
    from kernelscope.capture.torchrun import rendezvous_args
    from kernelscope.commands.profile import fail, print_mode_line
    from kernelscope.files import atomic_write_text
    from kernelscope.outdir import prepare_out_dir
    from kernelscope.report import write_reports
    from kernelscope.report.upgrade import (
        compare_upgrade,
        render_upgrade_html,
        render_upgrade_markdown,
        upgrade_data,
    )
    from kernelscope.result import ModeResult

    err = Console(stderr=True, highlight=False)
    spec = modelfile.inspect_model_file(model)
    parsed_sets = modelfile.parse_sets(sets)
    modelfile.check_sets(spec, parsed_sets)
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    torchrun_args = rendezvous_args(nproc, nnodes=nnodes, node_rank=node_rank, rdzv_backend=rdzv_backend,
                                    rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id)
    # Both interpreters checked before anything runs: one subprocess each.
    interp = {"before": probe(before_py, "--before"), "after": probe(after_py or sys.executable, "--after")}
    for side in SIDES:
        check_torch_logs(interp[side].path)
    cal_path = calibration or default_calibration_path()
    cal_data = read_calibration(cal_path, required=calibration is not None)
    top = prepare_out_dir(out, force=force)
    dirs = {side: prepare_out_dir(top / side, force=True) for side in SIDES}
    for name in ("compare.json", "compare.md", "compare.html"):
        (top / name).unlink(missing_ok=True)
    base = dict(model=spec.path, sets=parsed_sets, dtype=dtype, device=device, warmup=warmup, repeats=repeats,
                profile_steps=steps, timeout_s=timeout, freezing=freezing, reference=reference, nproc=nproc,
                torchrun_args=torchrun_args)
    opts = {"before": CaptureOptions(**base, python=interp["before"].path),  # type: ignore[arg-type]
            # the default after side is kernelscope's own interpreter, run exactly as `profile` runs it
            "after": CaptureOptions(**base, python=interp["after"].path if after_py else None)}  # type: ignore[arg-type]
    command_line = "kernelscope " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else \
        "kernelscope upgrade-check"
    results: dict[str, list[ModeResult | None]] = {side: [None] * len(mode_defs) for side in SIDES}
    environment: dict[str, dict[str, Any]] = {side: {} for side in SIDES}
    run_dtype: dict[str, str | None] = {side: dtype for side in SIDES}
    fatal: tuple[str, str] | None = None
    interrupted = False
    err.print(f"[bold]kernelscope[/] upgrade check of {model} -> {top}\n"
              f"  before: {interp['before'].path} (torch {interp['before'].torch})\n"
              f"  after:  {interp['after'].path} (torch {interp['after'].torch})")
    jobs = [(mi, side) for mi in range(len(mode_defs))
            for side in (SIDES if mi % 2 == 0 else tuple(reversed(SIDES)))]
    firsts: dict[int, CaptureRecord] = {}
    for j, (mi, side) in enumerate(jobs):
        mode = mode_defs[mi]
        if fatal or interrupted:
            why = "interrupted before it ran" if interrupted else f"not run: {fatal[1]}"  # type: ignore[index]
            results[side][mi] = ModeResult(name=mode.name, status="interrupted" if interrupted else "failed",
                                           error=why, error_kind="skipped")
            continue
        label = f"[{j + 1}/{len(jobs)}] {mode.name} ({side}, torch {interp[side].torch})"
        try:
            rec = _capture(err, run_mode, mode, opts[side], dirs[side], label, warm=False)
            if warm_compile and mode.compiled and rec.status == "ok":
                warm = _capture(err, run_mode, mode, opts[side], dirs[side], label, warm=True)
                rec = merge_ranks(dirs[side], rec, [warm], lambda a, o: merge_warm(a, o[0]))
                write_capture(dirs[side] / "modes" / mode.dirname / CAPTURE_FILE, rec)
        except KeyboardInterrupt:
            interrupted = True
            rec = CaptureRecord(mode=mode.name, status="interrupted", error="interrupted (Ctrl-C)")
        if rec.environment and not environment[side]:
            environment[side] = rec.environment.to_json()
        run_dtype[side] = run_dtype[side] or rec.dtype
        firsts[j] = rec
        if processes == 1:
            mr = build_any_mode_result(dirs[side], rec)
            results[side][mi] = mr
            print_mode_line(err, label, mr)
        if rec.error_kind in ("model", "usage", "forward") and not fatal:
            fatal = (rec.error_kind, rec.error)
    # Later processes: timing only, on each side's own Inductor cache, in the same interleaved order.
    later: dict[int, list[CaptureRecord]] = {j: [] for j in firsts}
    for process in range(2, processes + 1):
        if fatal or interrupted:
            break
        for j, (mi, side) in enumerate(jobs):
            if j not in firsts or firsts[j].status != "ok":
                continue
            label = f"[process {process}/{processes}] {mode_defs[mi].name} ({side})"
            try:
                later[j].append(_capture(err, run_mode, mode_defs[mi], opts[side], dirs[side], label, warm=False,
                                         process=process))
            except KeyboardInterrupt:
                interrupted = True
                break
    if processes > 1:
        for j, rec in firsts.items():
            mi, side = jobs[j]
            if later.get(j):
                rec = merge_ranks(dirs[side], rec, later[j], merge_processes)
                write_capture(dirs[side] / "modes" / mode_defs[mi].dirname / CAPTURE_FILE, rec)
            mr = build_any_mode_result(dirs[side], rec)
            results[side][mi] = mr
            print_mode_line(err, f"{mode_defs[mi].name} ({side}, torch {interp[side].torch})", mr)
    run: dict[str, Any] = {}
    for side in SIDES:
        env = {**environment[side], "interpreter": interp[side].as_dict()}
        peaks = peaks_for(env, cal_data, str(cal_path)) if environment[side] else {}
        row = [dataclasses.replace(m, gemms=with_roofline(m.gemms, peaks)) for m in results[side] if m is not None]
        settings: dict[str, Any] = {
            "modes": [m.name for m in mode_defs], "gemm_backends": gemm_backends, "sets": parsed_sets,
            "warmup": warmup, "repeats": repeats, "processes": processes, "profile_steps": steps,
            "timeout_s": timeout,
            "freezing": freezing, "warm_compile": warm_compile, "reference": reference,
            "python": interp[side].path, "upgrade_check": side,
        }
        if nproc:
            settings["nproc"] = nproc
            settings["torchrun_args"] = list(torchrun_args)
        resolved_device = env.get("device") or (device if device != "auto" else "")
        run[side] = build_run_result(row, environment=env, command=command_line, model=str(model),
                                     device=resolved_device, dtype=run_dtype[side] or "", settings=settings,
                                     peaks=peaks)
        write_reports(run[side], dirs[side], tensorboard=not no_tensorboard)
    data = upgrade_data(compare_upgrade(run["before"], run["after"]))
    import json

    paths = {"json": top / "compare.json", "md": top / "compare.md", "html": top / "compare.html"}
    atomic_write_text(paths["json"], json.dumps(data, indent=1, allow_nan=False) + "\n")
    atomic_write_text(paths["md"], render_upgrade_markdown(data))
    atomic_write_text(paths["html"], render_upgrade_html(data, run["after"].tool_version))
    for line in data["summary"]:
        click.echo(line)
    err.print(f"comparison: {paths['html']}\nsummary: {paths['md']}\ndata: {paths['json']}\n"
              f"reports: {dirs['before'] / 'report.html'}, {dirs['after'] / 'report.html'}")
    if interrupted:
        raise KeyboardInterrupt
    if fatal:
        kind, message = fatal
        if kind == "forward":
            raise click.exceptions.Exit(fail(err, message))
        raise (ModelFileError(message) if kind == "model" else UsageError(message))
    failed = [f"{m.name} ({side}: {m.status})" for side in SIDES for m in run[side].modes
              if m.status in ("failed", "timeout")]
    if failed:
        raise click.exceptions.Exit(fail(err, f"{len(failed)} mode run(s) did not finish: {', '.join(failed)}; "
                                               f"everything else is in {paths['html']}"))


def _capture(err: Any, run_mode: Any, mode: Any, opts: Any, out_dir: Path, label: str, *, warm: bool,
             process: int = 1) -> CaptureRecord:
    from kernelscope.report.progress import Progress

    tag = f"{label}{' (warm compile)' if warm else ''}"
    with Progress(sys.stderr).mode(tag) as on_progress:
        return run_mode(mode, opts, out_dir, on_progress, warm=warm, process=process)
