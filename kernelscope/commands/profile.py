"""kernelscope profile MODEL.py: run every mode in its own process, analyse, write the reports."""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from kernelscope.capture_record import CAPTURE_FILE, CaptureRecord, write_capture
from kernelscope.errors import ModelFileError, UsageError

# Three processes by default: the across-process interval uses Student's t with P - 1 degrees of freedom (t = 4.30
# at 3, 2.78 at 5), so 5 gives intervals about 1.5x narrower, but on the H200 the seed sample's default run took
# 311 s with 5 processes (15 worker processes of ~20 s: CUDA start, cache load, warm-up) and on the 2-core CPU
# 103 s against 70 s with 3 (benchmarks/RESULTS.md, "--processes"). CI gates on small speedups pass
# --processes 5 or more.
DEFAULT_PROCESSES = 3

STATUS_STYLE = {"ok": "green", "failed": "red", "timeout": "red", "unavailable": "yellow", "interrupted": "yellow"}


def torchrun_options(f: Any) -> Any:
    """``--nproc`` and torchrun's rendezvous options (issue 17), shared by ``profile`` and ``upgrade-check``: the
    command gets nproc, nnodes, node_rank, rdzv_backend, rdzv_endpoint and rdzv_id
    (capture/torchrun.py ``rendezvous_args`` turns them into torchrun's arguments)."""
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
              help="Minimum warm-up calls before timing (more until per-call time is stable).")
@click.option("--repeats", type=click.IntRange(min=3), default=30, show_default=True,
              help="Timed samples per process.")
@click.option("--processes", type=click.IntRange(min=1, max=50), default=DEFAULT_PROCESSES, show_default=True,
              help="Time each mode in N fresh processes, interleaved across modes; later processes reuse the "
                   "first one's Inductor cache. Latency = median of the processes' medians, with an interval "
                   "across processes (1: one process, an interval that covers noise inside it only).")
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
@click.option("--python", "python", metavar="PATH", default=None,
              help="Run the mode workers under this interpreter (e.g. the pre-upgrade venv's bin/python, or an "
                   "executable wrapper script): it needs torch, not kernelscope. Analysis and reports run here.")
@torchrun_options
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(model: Path, modes: str, gemm_backends: str | None, device: str, dtype: str | None, sets: tuple[str, ...],
            sweeps: tuple[str, ...], out: Path | None, force: bool, timeout: float, warmup: int, repeats: int,
            processes: int, steps: int, freezing: bool | None, cache_dir: Path | None, warm_compile: bool,
            reference: bool, calibration: Path | None, no_tensorboard: bool, python: str | None,
            nproc: int | None, nnodes: str | None, node_rank: int | None, rdzv_backend: str | None,
            rdzv_endpoint: str | None, rdzv_id: str | None, debug: bool) -> None:
    """Profile MODEL (a .py file defining get_model()/get_inputs(), or KernelBench's Model/get_init_inputs()/
    get_inputs()) in each mode, each in its own process, and write report.html, summary.md, result.json and
    TensorBoard traces into --out."""

    from kernelscope import modelfile
    from kernelscope.analysis.mode import build_run_result
    from kernelscope.analysis.ranks import build_any_mode_result
    from kernelscope.analysis.roofline import (
        default_calibration_path,
        peaks_for,
        read_calibration,
        with_roofline,
    )
    from kernelscope.capture.modes import parse_backends, parse_modes
    from kernelscope.capture.runner import (
        CaptureOptions,
        check_torch_logs,
        list_input_points,
        merge_ranks,
        merge_warm,
        read_capture,
        run_mode,
        run_mode_at,
        run_mode_points,
    )
    from kernelscope.capture.sweep import defines_input_sweep, describe_hook_entry, parse_sweeps, plan_points
    from kernelscope.outdir import prepare_out_dir
    from kernelscope.report import write_reports
    from kernelscope.report.progress import Progress
    from kernelscope.report.terminal import console_for
    from kernelscope.result import ModeResult, SweepPoint

    err = console_for(stderr=True)
    progress = Progress(sys.stderr)
    spec = modelfile.inspect_model_file(model)
    parsed_sets = modelfile.parse_sets(sets)
    modelfile.check_sets(spec, parsed_sets)
    parsed_sweeps = parse_sweeps(sweeps)
    unknown = [n for n in parsed_sweeps if n not in spec.constants]
    if unknown:
        known = ", ".join(c for c in spec.constants if not c.startswith("_")) or "none"
        raise UsageError(f"--sweep {unknown[0]}: {model.name} has no module-level constant {unknown[0]!r}",
                         f"use one of: {known}")
    both = [n for n in parsed_sweeps if n in parsed_sets]
    if both:
        raise UsageError(f"{both[0]} is given to both --set and --sweep", "keep it in --sweep only")
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    from kernelscope.capture.torchrun import rendezvous_args

    torchrun_args = rendezvous_args(nproc, nnodes=nnodes, node_rank=node_rank, rdzv_backend=rdzv_backend,
                                    rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id)
    from kernelscope.capture.interpreter import probe

    interp = probe(python) if python else None  # one subprocess: a bad path or a missing/old torch fails here
    check_torch_logs(interp.path if interp else sys.executable)
    cal_path = calibration or default_calibration_path()
    cal_data = read_calibration(cal_path, required=calibration is not None)
    out_dir = prepare_out_dir(out or Path("kernelscope-out") / model.stem, force=force)
    opts = CaptureOptions(model=spec.path, sets=parsed_sets, dtype=dtype, device=device,
                          warmup=warmup, repeats=repeats, profile_steps=steps, timeout_s=timeout, freezing=freezing,
                          cache_dir=str(cache_dir.resolve()) if cache_dir else None, reference=reference,
                          python=interp.path if interp else None, nproc=nproc, torchrun_args=torchrun_args)
    hook_points = None
    if defines_input_sweep(spec.path):
        err.print("reading get_input_sweep() from the model file")
        hook_points = [describe_hook_entry(p["kind"], i, p["detail"])
                       for i, p in enumerate(list_input_points(opts, out_dir / "modes"))]
    points = plan_points(parsed_sweeps, hook_points) if (parsed_sweeps or hook_points) else []
    command_line = ("kernelscope " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:]
                    else "kernelscope profile")
    # results[point index][mode index]; a run without a sweep is one point.
    n_points = max(1, len(points))
    results: list[list[ModeResult | None]] = [[None] * len(mode_defs) for _ in range(n_points)]
    environment: dict[str, Any] = {}
    fatal: tuple[str, str] | None = None
    interrupted = False
    run_dtype: str | None = dtype
    err.print(f"[bold]kernelscope[/] profiling {model} -> {out_dir}"
              + (f" at {len(points)} shape points" if points else ""))
    jobs: list[tuple[int, list[int]]] = []  # (mode index, point indices one worker measures)
    for mi, mode in enumerate(mode_defs):
        if mode.dynamic or not points:
            jobs.append((mi, list(range(n_points))))
        else:
            jobs.extend((mi, [pi]) for pi in range(n_points))
    def finish(j: int, recs: list[CaptureRecord]) -> None:
        """Analyse a job's capture records (every process done) into ModeResults and print their lines."""
        nonlocal run_dtype
        mi, pis = jobs[j]
        for pi, rec in zip(pis, recs):
            run_dtype = run_dtype or rec.dtype
            mr = build_any_mode_result(out_dir, rec)
            results[pi][mi] = mr
            label = job_label(j)
            line = label if len(pis) == 1 else f"{label.split(' @ ')[0]} @ {points[pi].label}"
            print_mode_line(err, line, mr)

    job_recs: dict[int, list[CaptureRecord]] = {}  # job -> one capture record per point (the first process's)
    later: dict[int, list[list[CaptureRecord]]] = {j: [] for j in range(len(jobs))}  # job -> per later process

    def job_label(j: int, process: int = 1) -> str:
        mi, pis = jobs[j]
        where = ""
        if points:
            where = f" @ {points[pis[0]].label}" if len(pis) == 1 else f" @ {len(pis)} shapes"
        head = f"[{j + 1}/{len(jobs)}]" if process == 1 else f"[process {process}/{processes}, {j + 1}/{len(jobs)}]"
        return f"{head} {mode_defs[mi].name}{where}"

    def capture(j: int, warm: bool, process: int = 1) -> list[CaptureRecord]:
        mi, pis = jobs[j]
        mode = mode_defs[mi]
        tag = f"{job_label(j, process)}{' (warm compile)' if warm else ''}"
        with progress.mode(tag) as on_progress:
            kw = {"warm": warm, "process": process}
            if not points:
                return [run_mode(mode, opts, out_dir, on_progress, **kw)]
            if len(pis) > 1 or mode.dynamic:
                return run_mode_points(mode, opts, out_dir, [points[i] for i in pis], on_progress, **kw)
            return [run_mode_at(mode, opts, out_dir, points[pis[0]], on_progress, **kw)]

    def record_dir(mi: int, pi: int) -> Path:
        mode = mode_defs[mi]
        return (out_dir / "modes" / mode.dirname) if not points else (
            out_dir / "points" / points[pi].dirname / "modes" / mode.dirname)

    # Process 1 of every mode (compile, timing, numerics, profile), then each later process of every mode in
    # the same order: eager, default, max-autotune, eager, default, ... so that drift on the machine (clocks,
    # another job) meets every mode alike.
    for j, (mi, pis) in enumerate(jobs):
        mode = mode_defs[mi]
        if fatal or interrupted:
            why = "interrupted before it ran" if interrupted else f"not run: {fatal[1]}"  # type: ignore[index]
            for pi in pis:
                results[pi][mi] = ModeResult(name=mode.name, status="interrupted" if interrupted else "failed",
                                             error=why, error_kind="skipped")
            continue
        try:
            recs = capture(j, False)
            if warm_compile and mode.compiled and any(r.status == "ok" for r in recs):
                warm_recs = capture(j, True)
                recs = [merge_ranks(out_dir, c, [w], lambda a, o: merge_warm(a, o[0]))
                        for c, w in zip(recs, warm_recs)]
                for pi, rec in zip(pis, recs):
                    write_capture(record_dir(mi, pi) / CAPTURE_FILE, rec)
        except KeyboardInterrupt:
            interrupted = True
            recs = []
            for pi in pis:
                recs.append(read_capture(record_dir(mi, pi) / CAPTURE_FILE) or CaptureRecord(
                    mode=mode.name, status="interrupted", error="interrupted (Ctrl-C)"))
        job_recs[j] = recs
        for rec in recs:
            if rec.environment and not environment:
                environment = rec.environment.to_json()
            # A broken model file stops the run; in a sweep a forward that raises at one shape (a size the model
            # does not accept) fails that point only.
            fatal_kinds = ("model", "usage") if points else ("model", "usage", "forward")
            if rec.error_kind in fatal_kinds and not fatal:
                fatal = (rec.error_kind, rec.error)
        if processes == 1:
            finish(j, recs)
        else:
            for pi, rec in zip(pis, recs):
                line = job_label(j) if len(pis) == 1 else f"{job_label(j).split(' @ ')[0]} @ {points[pi].label}"
                _print_first_process_line(err, line, rec)
    for process in range(2, processes + 1):
        if fatal or interrupted:
            break
        for j in range(len(jobs)):
            if not any(r.status == "ok" for r in job_recs.get(j, [])):
                continue  # a mode that failed (or was unavailable) in its first process is not timed again
            try:
                later[j].append(capture(j, False, process))
            except KeyboardInterrupt:
                interrupted = True
                break
        if interrupted:
            break
    if processes > 1:
        from kernelscope.capture.runner import merge_processes

        for j, recs in job_recs.items():
            mi, pis = jobs[j]
            if later[j]:
                recs = [merge_ranks(out_dir, rec, [rnd[q] for rnd in later[j]], merge_processes)
                        for q, rec in enumerate(recs)]
                for pi, rec in zip(pis, recs):
                    write_capture(record_dir(mi, pi) / CAPTURE_FILE, rec)
            finish(j, recs)
    if interp is not None:
        environment = {**environment, "interpreter": interp.as_dict()}
    resolved_device = environment.get("device") or (device if device != "auto" else "")
    peaks = peaks_for(environment, cal_data, str(cal_path)) if environment else {}
    # The roofline needs the device's peaks, known once a worker reported the environment: fill it in now.
    grid = [[dataclasses.replace(m, gemms=with_roofline(m.gemms, peaks)) for m in row if m is not None]
            for row in results]
    sweep_points = [SweepPoint(params=p.params, label=p.label, modes=tuple(grid[p.index])) for p in points]
    settings: dict[str, Any] = {"modes": [m.name for m in mode_defs], "gemm_backends": gemm_backends,
                                "sets": parsed_sets, "warmup": warmup, "repeats": repeats, "processes": processes,
                                "profile_steps": steps,
                                "timeout_s": timeout, "freezing": freezing, "warm_compile": warm_compile,
                                "reference": reference, "python": interp.path if interp else None}
    if nproc:
        settings["nproc"] = nproc
        settings["torchrun_args"] = list(torchrun_args)
    # What `compare` needs to say whether two runs are comparable: the model file's content and the inputs'
    # shapes as the workers built them.
    import hashlib

    settings["model_sha256"] = hashlib.sha256(Path(spec.path).read_bytes()).hexdigest()
    settings["inputs"] = next((r.inputs for recs in job_recs.values() for r in recs if r.inputs), None)
    if points:
        settings["sweep"] = {k: v for k, v in parsed_sweeps.items()}
        settings["input_sweep"] = bool(hook_points)
    if peaks.get("calibrated"):
        settings["calibration"] = str(cal_path)
    result = build_run_result(
        grid[0], environment=environment, command=command_line, model=str(model), device=resolved_device,
        dtype=run_dtype or "", settings=settings, points=sweep_points, peaks=peaks,
    )
    if fatal and not interrupted and not any(m.status == "ok" for row in grid for m in row):
        # The model never ran in any mode: no report to read, just the one error below.
        kind, message = fatal
        if kind == "forward":
            raise click.exceptions.Exit(fail(err, message))
        raise (ModelFileError(message) if kind == "model" else UsageError(message))
    paths = write_reports(result, out_dir, tensorboard=not no_tensorboard)
    from kernelscope.report.github import publish_profile
    from kernelscope.report.terminal import render_terminal

    publish_profile(paths["md"])  # GitHub Actions: the summary on the run's page

    render_terminal(result, console_for())
    err.print(f"report: {paths['html']}\nsummary: {paths['md']}\nresult: {paths['json']}\n"
              f"traces: tensorboard --logdir {out_dir / 'tb'}")
    if interrupted:
        raise KeyboardInterrupt
    if fatal:
        kind, message = fatal
        if kind == "forward":
            raise click.exceptions.Exit(fail(err, message))
        raise (ModelFileError(message) if kind == "model" else UsageError(message))
    failed = [(m, row_label) for row, row_label in zip(grid, [p.label for p in points] or [""])
              for m in row if m.status in ("failed", "timeout")]
    if failed:
        names = ", ".join(f"{m.name}{' @ ' + lbl if lbl else ''} ({m.status})" for m, lbl in failed)
        raise click.exceptions.Exit(fail(err, f"{len(failed)} mode(s) did not finish: {names}; the other modes' "
                                               f"results are in {paths['html']}"))


def fail(console: Any, message: str) -> int:
    """Print a run's failure as one ``kernelscope: error:`` line; the exit code to leave with."""
    click.echo(f"kernelscope: error: {' '.join(message.split())}", err=True)
    return 1


def _print_first_process_line(console: Any, label: str, rec: CaptureRecord) -> None:
    """After a mode's first process (with --processes > 1 the result is built once every process ran)."""
    from rich.markup import escape

    style = STATUS_STYLE.get(rec.status, "white")
    parts = [f"[{style}]{rec.status}[/] (process 1)"]
    if rec.first_call_s is not None:
        parts.append(f"first call {rec.first_call_s:.2f} s")
    if rec.latency_ms is not None:
        parts.append(f"median {rec.latency_ms.median:.3f} ms")
    if rec.error:
        parts.append(rec.error[:200])
    console.print(f"{label}: " + " · ".join(p if p.startswith("[") else escape(p) for p in parts))


def print_mode_line(console: Any, label: str, m: Any) -> None:
    """One line per finished mode (status, first call, median, kernels, GEMMs); errors wait for the summary."""
    style = STATUS_STYLE.get(m.status, "white")
    parts = [f"[{style}]{m.status}[/]"]
    if (m.compile or {}).get("reused"):
        parts.append(f"no recompile (first call {m.first_call_s:.2f} s)")
    elif m.first_call_s is not None:
        parts.append(f"first call {m.first_call_s:.2f} s")
    if m.latency_ms is not None:
        lat = m.latency_ms
        across = f" over {lat.processes} processes" if (lat.processes or 1) > 1 else ""
        iv = f" ({lat.low:.3f}-{lat.high:.3f})" if lat.low is not None and lat.high is not None and across else ""
        parts.append(f"median {lat.median:.3f} ms{across}{iv}")
    if m.kernels_per_iter is not None:
        parts.append(f"{m.kernels_per_iter:g} kernels/iter")
    if m.gemm_summary:
        parts.append(m.gemm_summary)
    if m.error and m.status != "ok":
        # The error itself is printed once, in the summary at the end.
        parts.append(f"{m.error_kind or 'error'}, details at the end" if m.error_kind != "skipped"
                     else "not run")
    from rich.markup import escape

    console.print(f"{label}: " + " · ".join(p if p.startswith("[") else escape(p) for p in parts))
