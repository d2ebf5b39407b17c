"""kernelscope profile MODEL.py: run every mode in its own process, analyse, write the reports."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from kernelscope.errors import ModelFileError, UsageError

STATUS_STYLE = {"ok": "green", "failed": "red", "timeout": "red", "unavailable": "yellow", "interrupted": "yellow"}


@click.command("profile")
@click.argument("model", type=click.Path(dir_okay=True, path_type=Path))
@click.option("--modes", default="eager,default,max-autotune", show_default=True,
              help="Comma-separated: eager, default, max-autotune, reduce-overhead (CUDA), max-autotune:B1+B2.")
@click.option("--gemm-backends", default=None, metavar="LIST",
              help="Inductor max-autotune GEMM backends, e.g. ATEN,TRITON,NVGEMM (ATEN TRITON CUTLASS NVGEMM CPP).")
@click.option("--device", type=click.Choice(["auto", "cuda", "cpu"]), default="auto", show_default=True,
              help="auto = cuda when available.")
@click.option("--dtype", type=click.Choice(["float32", "float16", "bfloat16"]), default=None,
              help="Cast the model and floating inputs. Default: the dtypes the model file builds.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Override a module-level constant of the model file before it is built (repeatable).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output directory [default: kernelscope-out/<model file stem>].")
@click.option("--force", is_flag=True, help="Write into a non-empty directory kernelscope did not create.")
@click.option("--timeout", type=click.FloatRange(min=1), default=900.0, show_default=True,
              help="Seconds per mode (compile included); a mode past it is stopped and marked timeout.")
@click.option("--warmup", type=click.IntRange(min=1), default=10, show_default=True,
              help="Minimum warm-up calls before timing (more until per-call time is stable).")
@click.option("--repeats", type=click.IntRange(min=3), default=30, show_default=True, help="Timed samples.")
@click.option("--steps", type=click.IntRange(min=1, max=50), default=3, show_default=True,
              help="Profiled iterations (after 1 wait + 1 warm-up step).")
@click.option("--freezing/--no-freezing", default=None,
              help="Inductor freezing for compiled modes [default: on for CPU, off for CUDA].")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
              help="Reuse this Inductor cache (default: a fresh cache per mode, so first-call time is a cold compile).")
@click.option("--no-tensorboard", is_flag=True, help="Skip TensorBoard scalars (traces are written regardless).")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def command(model: Path, modes: str, gemm_backends: str | None, device: str, dtype: str | None, sets: tuple[str, ...],
            out: Path | None, force: bool, timeout: float, warmup: int, repeats: int, steps: int,
            freezing: bool | None, cache_dir: Path | None, no_tensorboard: bool, debug: bool) -> None:
    """Profile MODEL (a .py file defining get_model()/get_inputs(), or KernelBench's Model/get_init_inputs()/
    get_inputs()) in each mode, each in its own process, and write report.html, summary.md, result.json and
    TensorBoard traces into --out."""
    from rich.console import Console

    from kernelscope import modelfile
    from kernelscope.analysis.mode import build_mode_result, build_run_result
    from kernelscope.capture.modes import parse_backends, parse_modes
    from kernelscope.capture.runner import CaptureOptions, run_mode
    from kernelscope.outdir import prepare_out_dir
    from kernelscope.report import write_reports
    from kernelscope.result import ModeResult

    err = Console(stderr=True, highlight=False)
    spec = modelfile.inspect_model_file(model)
    parsed_sets = modelfile.parse_sets(sets)
    modelfile.check_sets(spec, parsed_sets)
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    out_dir = prepare_out_dir(out or Path("kernelscope-out") / model.stem, force=force)
    opts = CaptureOptions(model=spec.path, sets=parsed_sets, dtype=dtype, device=device,
                          warmup=warmup, repeats=repeats, profile_steps=steps, timeout_s=timeout, freezing=freezing,
                          cache_dir=str(cache_dir.resolve()) if cache_dir else None)
    command_line = "kernelscope " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else "kernelscope profile"
    results: list[ModeResult] = []
    environment: dict[str, Any] = {}
    fatal: tuple[str, str] | None = None
    interrupted = False
    run_dtype: str | None = dtype
    err.print(f"[bold]kernelscope[/] profiling {model} -> {out_dir}")
    for i, mode in enumerate(mode_defs):
        if fatal or interrupted:
            why = "interrupted before it ran" if interrupted else f"not run: {fatal[1]}"  # type: ignore[index]
            results.append(ModeResult(name=mode.name, status="interrupted" if interrupted else "failed",
                                      error=why, error_kind="skipped"))
            continue
        label = f"[{i + 1}/{len(mode_defs)}] {mode.name}"
        with err.status(f"{label}: starting") as status:
            def on_progress(name: str, text: str, _label: str = label) -> None:
                status.update(f"{_label}: {text}")

            try:
                rec = run_mode(mode, opts, out_dir, on_progress)
            except KeyboardInterrupt:
                interrupted = True
                from kernelscope.capture.runner import _read_capture

                rec = _read_capture(out_dir / "modes" / mode.dirname / "capture.json") or {
                    "mode": mode.name, "status": "interrupted", "error": "interrupted (Ctrl-C)"}
        if rec.get("environment") and not environment:
            environment = rec["environment"]
        run_dtype = run_dtype or rec.get("dtype")
        mr = build_mode_result(out_dir, rec)
        results.append(mr)
        _print_mode_line(err, label, mr)
        if rec.get("error_kind") in ("model", "usage", "forward"):
            fatal = (rec["error_kind"], rec.get("error", ""))
    resolved_device = environment.get("device") or (device if device != "auto" else "")
    result = build_run_result(
        results, environment=environment, command=command_line, model=str(model), device=resolved_device,
        dtype=run_dtype or "",
        settings={"modes": [m.name for m in mode_defs], "gemm_backends": gemm_backends, "sets": parsed_sets,
                  "warmup": warmup, "repeats": repeats, "profile_steps": steps, "timeout_s": timeout,
                  "freezing": freezing},
    )
    paths = write_reports(result, out_dir, tensorboard=not no_tensorboard)
    from kernelscope.report.terminal import render_terminal

    render_terminal(result, Console(highlight=False, width=None if sys.stdout.isatty() else 150))
    err.print(f"report: {paths['html']}\nsummary: {paths['md']}\nresult: {paths['json']}\n"
              f"traces: tensorboard --logdir {out_dir / 'tb'}")
    if interrupted:
        raise KeyboardInterrupt
    if fatal:
        kind, message = fatal
        if kind == "forward":
            raise click.exceptions.Exit(_fail(err, message))
        raise (ModelFileError(message) if kind == "model" else UsageError(message))
    failed = [m for m in results if m.status in ("failed", "timeout")]
    if failed:
        names = ", ".join(f"{m.name} ({m.status})" for m in failed)
        raise click.exceptions.Exit(_fail(err, f"{len(failed)} mode(s) did not finish: {names}; the other modes' "
                                               f"results are in {paths['html']}"))


def _fail(console: Any, message: str) -> int:
    click.echo(f"kernelscope: error: {' '.join(message.split())}", err=True)
    return 1


def _print_mode_line(console: Any, label: str, m: Any) -> None:
    style = STATUS_STYLE.get(m.status, "white")
    parts = [f"[{style}]{m.status}[/]"]
    if m.first_call_s is not None:
        parts.append(f"first call {m.first_call_s:.2f} s")
    if m.latency_ms is not None:
        parts.append(f"median {m.latency_ms.median:.3f} ms")
    if m.kernels_per_iter is not None:
        parts.append(f"{m.kernels_per_iter:g} kernels/iter")
    if m.gemm_summary:
        parts.append(m.gemm_summary)
    if m.error:
        parts.append(m.error[:200])
    from rich.markup import escape

    console.print(f"{label}: " + " · ".join(p if p.startswith("[") else escape(p) for p in parts))
