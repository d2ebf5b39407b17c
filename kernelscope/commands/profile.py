"""kernelscope profile MODEL.py: run every mode in its own process, analyse, write the reports."""

from __future__ import annotations

import dataclasses
import os
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

from kernelscope.capture_record import CAPTURE_FILE, CaptureRecord, Environment, write_capture
from kernelscope.commands import verbose_option
from kernelscope.errors import ModelFileError, Stopped, UsageError

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
            reference: bool, calibration: Path | None, no_tensorboard: bool, python: str | None,
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
    from kernelscope.sweep_plan import plan_points

    err = console_for(stderr=True)
    progress = Progress(sys.stderr)
    spec, parsed_sets, parsed_sweeps = _read_model(model, sets, sweeps)
    mode_defs = parse_modes(modes, parse_backends(gemm_backends))
    torchrun_args = rendezvous_args(nproc, nnodes=nnodes, node_rank=node_rank, rdzv_backend=rdzv_backend,
                                    rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id)
    interp = probe(python) if python else None  # one subprocess: a bad path or a missing/old torch fails here
    check_torch_logs(interp.path if interp else sys.executable)
    cal_path, cal_data = _calibration(calibration)
    out_dir = prepare_out_dir(out or Path("kernelscope-out") / model.stem, force=force)
    opts = CaptureOptions(model=spec.path, sets=parsed_sets, dtype=dtype, device=device,
                          warmup=warmup, repeats=repeats, profile_steps=steps, timeout_s=timeout, freezing=freezing,
                          cache_dir=str(cache_dir.resolve()) if cache_dir else None, reference=reference,
                          python=interp.path if interp else None, nproc=nproc, torchrun_args=torchrun_args,
                          cpu_pinning=cpu_pinning,
                          share_model=processes > 1 or len(mode_defs) > 1 or warm_compile)
    hook_points = _input_points(err, spec.path, opts, out_dir)
    points = plan_points(parsed_sweeps, hook_points) if (parsed_sweeps or hook_points) else []
    command_line = invocation("kernelscope profile")
    err.print(f"[bold]kernelscope[/] profiling {model} -> {out_dir}"
              + (f" at {len(points)} shape points" if points else ""))
    run = _ModeRuns(mode_defs, points, opts, out_dir, processes=processes, warm_compile=warm_compile, err=err,
                    progress=progress, dtype=dtype, parallel_setup=parallel_setup)
    asked: dict[str, Any] = {"modes": [m.name for m in mode_defs], "gemm_backends": gemm_backends,
                             "sets": parsed_sets, "warmup": warmup, "repeats": repeats, "processes": processes,
                             "parallel_setup": parallel_setup,
                             "profile_steps": steps,
                             "timeout_s": timeout, "freezing": freezing, "warm_compile": warm_compile,
                             "reference": reference, "python": interp.path if interp else None,
                             "cpu_pinning": cpu_pinning}
    if nproc:
        asked["nproc"] = nproc
        asked["torchrun_args"] = list(torchrun_args)

    def result() -> Any:
        return _run_result(run, asked, interp=interp, device=device, cal_data=cal_data, cal_path=cal_path,
                           model_path=spec.path, sweeps=parsed_sweeps, input_sweep=bool(hook_points),
                           command_line=command_line, model=model)

    run.save = lambda: write_result(out_dir, result())
    run.prepare_reports = lambda: prepare_reports(tensorboard=not no_tensorboard)
    run.run()
    _report(run, result(), err, tensorboard=not no_tensorboard, verbose=verbose)


# ------------------------------------------------------------------------------------------------ before the run
def _read_model(model: Path, sets: tuple[str, ...], sweeps: tuple[str, ...]) -> tuple[Any, dict[str, Any],
                                                                                      dict[str, list[Any]]]:
    """The model file's spec, the --set values and the --sweep axes, checked against its constants."""
    from kernelscope import modelfile
    from kernelscope.sweep_plan import parse_sweeps

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
    return spec, parsed_sets, parsed_sweeps


def _calibration(calibration: Path | None) -> tuple[Path, Any]:
    """The calibration file's path and its ceilings (required when --calibration names it)."""
    from kernelscope.analysis.roofline import default_calibration_path, read_calibration

    cal_path = calibration or default_calibration_path()
    return cal_path, read_calibration(cal_path, required=calibration is not None)


def _input_points(err: Any, model_path: str, opts: Any, out_dir: Path) -> list[dict[str, Any]] | None:
    """The model file's get_input_sweep() points, asked of a worker; None when it defines none."""
    from kernelscope.capture.runner import list_input_points
    from kernelscope.sweep_plan import defines_input_sweep, describe_hook_entry

    if not defines_input_sweep(model_path):
        return None
    err.print("reading get_input_sweep() from the model file")
    return [describe_hook_entry(p["kind"], i, p["detail"])
            for i, p in enumerate(list_input_points(opts, out_dir / "modes"))]


def invocation(default: str) -> str:
    """The command line as the user typed it (for the report), or ``default`` when called without arguments."""
    return "kernelscope " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if sys.argv[1:] else default


# ---------------------------------------------------------------------------------------------------- the run
class _ModeRuns:
    """The run's jobs (a mode at one shape point, or the dynamic mode at all of them, in one worker each) and what
    they produced: process 1 of every job (compile, timing, numerics, profile), then each later process of every
    job in the same order (eager, default, max-autotune, eager, default, ...) so that drift on the machine (clocks,
    another job) meets every mode alike. A job is analysed as soon as nothing more runs for it (after its last
    process, or its first when that failed), and result.json is written again then (``save``), so a run that
    dies keeps every mode that finished; on SIGINT/SIGTERM the rest read ``interrupted``."""

    def __init__(self, mode_defs: list[Any], points: list[Any], opts: Any, out_dir: Path, *, processes: int,
                 warm_compile: bool, err: Any, progress: Any, dtype: str | None, parallel_setup: str = "off") -> None:
        self.mode_defs, self.points, self.opts, self.out_dir = mode_defs, points, opts, out_dir
        self.processes, self.warm_compile, self.err, self.progress = processes, warm_compile, err, progress
        self.parallel_setup = parallel_setup
        # results[point index][mode index]; a run without a sweep is one point.
        n_points = max(1, len(points))
        self.results: list[list[Any]] = [[None] * len(mode_defs) for _ in range(n_points)]
        self.grid: list[list[Any]] = []  # the results with the roofline, a job still to come as pending: _run_result
        self.environment: Environment | None = None  # the first worker's record of the environment
        self.fatal: tuple[str, str] | None = None
        self.interrupted: str | None = None  # the signal that stopped the run ("SIGTERM")
        self.running: str | None = None  # the worker running now; ``during`` once a signal stopped it
        self.during: str | None = None
        self.save: Callable[[], object] | None = None  # writes result.json
        # imports the reports' code ahead (report.prepare), once, while later processes compile
        self.prepare_reports: Callable[[], object] | None = None
        self.run_dtype: str | None = dtype
        self.jobs: list[tuple[int, list[int]]] = []  # (mode index, point indices one worker measures)
        for mi, mode in enumerate(mode_defs):
            if mode.dynamic or not points:
                self.jobs.append((mi, list(range(n_points))))
            else:
                self.jobs.extend((mi, [pi]) for pi in range(n_points))
        self.job_recs: dict[int, list[CaptureRecord]] = {}  # job -> one capture record per point (first process)
        self.later: dict[int, list[list[CaptureRecord]]] = {j: [] for j in range(len(self.jobs))}  # per later process
        self.done: set[int] = set()  # jobs analysed
        # job -> its first process's files analysed ahead (one per point), while its later processes compile
        self.traced: dict[int, list[Any]] = {}

    def label(self, j: int, process: int = 1) -> str:
        mi, pis = self.jobs[j]
        where = ""
        if self.points:
            where = f" @ {self.points[pis[0]].label}" if len(pis) == 1 else f" @ {len(pis)} shapes"
        n = len(self.jobs)
        head = f"[{j + 1}/{n}]" if process == 1 else f"[process {process}/{self.processes}, {j + 1}/{n}]"
        return f"{head} {self.mode_defs[mi].name}{where}"

    def point_label(self, j: int, pi: int) -> str:
        """A job's line for one of its points (the dynamic mode's job measures several)."""
        label = self.label(j)
        return label if len(self.jobs[j][1]) == 1 else f"{label.split(' @ ')[0]} @ {self.points[pi].label}"

    def record_dir(self, mi: int, pi: int) -> Path:
        mode = self.mode_defs[mi]
        return (self.out_dir / "modes" / mode.dirname) if not self.points else (
            self.out_dir / "points" / self.points[pi].dirname / "modes" / mode.dirname)

    def capture(self, j: int, warm: bool, process: int = 1, hold: Any = None) -> list[CaptureRecord]:
        """Run one worker of job j (``hold``: a later process held before its warm-up, capture/rounds.py)."""
        from kernelscope.capture.runner import run_mode, run_mode_at, run_mode_points

        mi, pis = self.jobs[j]
        mode, points = self.mode_defs[mi], self.points
        tag = f"{self.label(j, process)}{' (warm compile)' if warm else ''}"
        staged = hold is not None and hold.pre is not None  # started ahead of its turn: the parent says who runs
        if not staged:
            self.running = self._running(j, process)
        with self.progress.mode(tag) as on_progress:
            kw = {"warm": warm, "process": process}
            if not points:
                recs = [run_mode(mode, self.opts, self.out_dir, on_progress, hold=hold, **kw)]
            elif len(pis) > 1 or mode.dynamic:
                recs = run_mode_points(mode, self.opts, self.out_dir, [points[i] for i in pis], on_progress, **kw)
            else:
                recs = [run_mode_at(mode, self.opts, self.out_dir, points[pis[0]], on_progress, hold=hold, **kw)]
        if not staged:
            self.running = None
        return recs

    def _running(self, j: int, process: int = 1) -> str:
        """How an interrupted run names the worker it stopped ("default", "default (process 2)")."""
        return self.label(j, process).split("] ", 1)[1] + (f" (process {process})" if process > 1 else "")

    def run(self) -> None:
        """Every job's processes; after SIGINT/SIGTERM (or an error that stops the run) the jobs that ran are
        analysed with the processes they had, and the others marked as not run."""
        from kernelscope.capture.runner import drop_model_cache

        try:
            if not self.staged():
                self.first_processes()
                self.later_processes()
        except KeyboardInterrupt:
            self.stopped()
        finally:
            drop_model_cache(self.out_dir)  # the model built once for the run (capture/model_cache.py)
        for j in range(len(self.jobs)):
            if j in self.job_recs and j not in self.done:
                self.finish(j)
            elif j not in self.job_recs:
                mi, pis = self.jobs[j]
                for pi in pis:
                    self.results[pi][mi] = skipped(self.mode_defs[mi].name, self.fatal, self.interrupted)

    def stopped(self) -> None:
        self.interrupted = self.interrupted or stop_signal()
        self.during = self.during or self.running

    def first_processes(self) -> None:
        for j in range(len(self.jobs)):
            if self.fatal or self.interrupted:
                return
            recs = self._first_process(j)
            self.job_recs[j] = recs
            self._note(recs)
            if self.processes == 1 or not any(r.status == "ok" for r in recs):
                self.finish(j)  # nothing more runs for it: a mode that failed is not timed again
            else:
                for pi, rec in zip(self.jobs[j][1], recs):
                    _print_first_process_line(self.err, self.point_label(j, pi), rec)

    def _first_process(self, j: int) -> list[CaptureRecord]:
        """Process 1 of a job (and its warm-compile process): one capture record per point."""
        from kernelscope.capture.runner import merge_ranks, merge_warm

        mi, pis = self.jobs[j]
        mode = self.mode_defs[mi]
        try:
            recs = self.capture(j, False)
            if self.warm_compile and mode.compiled and any(r.status == "ok" for r in recs):
                warm_recs = self.capture(j, True)
                recs = [merge_ranks(self.out_dir, c, [w], lambda a, o: merge_warm(a, o[0]))
                        for c, w in zip(recs, warm_recs)]
                for pi, rec in zip(pis, recs):
                    write_capture(self.record_dir(mi, pi) / CAPTURE_FILE, rec)
        except KeyboardInterrupt:
            recs = self._stopped_recs(j)
        return recs

    def _stopped_recs(self, j: int) -> list[CaptureRecord]:
        """A first process stopped by SIGINT/SIGTERM: what the worker (or the runner, for it) wrote (a finished
        cold process when the warm one was stopped), else an interrupted record."""
        from kernelscope.capture.runner import read_capture

        self.stopped()
        mi, pis = self.jobs[j]
        return [read_capture(self.record_dir(mi, pi) / CAPTURE_FILE) or CaptureRecord(
            mode=self.mode_defs[mi].name, status="interrupted", error_kind="interrupted",
            error=f"interrupted ({self.interrupted}) while it ran") for pi in pis]

    def _note(self, recs: list[CaptureRecord]) -> None:
        """The first environment a worker reported, and the first error that stops the run."""
        for rec in recs:
            if rec.environment and self.environment is None:
                self.environment = rec.environment
            # A broken model file stops the run; in a sweep a forward that raises at one shape (a size the model
            # does not accept) fails that point only.
            fatal_kinds = ("model", "usage") if self.points else ("model", "usage", "forward")
            if rec.error_kind in fatal_kinds and not self.fatal:
                self.fatal = (rec.error_kind, rec.error)

    def later_processes(self) -> None:
        """Processes 2..N of every job whose first process ran, in the order (process 2 of every job, then process
        3 of every job, ...), in groups that set up side by side and time one at a time (capture/rounds.py): with
        room for them, every later process of the run is one group (one setting up instead of one per round);
        a job is analysed after its last one."""
        # a job analysed already (its first process failed: it is not timed again) has no later process
        todo = [(process, j) for process in range(2, self.processes + 1)
                for j in range(len(self.jobs)) if j in self.job_recs and j not in self.done]
        for group in self._groups(todo):
            if self.fatal or self.interrupted:
                return
            try:
                for (_, j), recs in zip(group, self._group(group)):
                    self.later[j].append(recs)
            except KeyboardInterrupt as stop:
                finished = stop.args[0] if stop.args and isinstance(stop.args[0], list) else []
                for (_, j), recs in zip(group, finished):
                    self.later[j].append(recs)  # the processes of the group that finished
                raise
            for process, j in group:
                if process == self.processes:
                    self.finish(j)

    def _most(self) -> int | None:
        """How many processes may set up side by side: any number with --parallel-setup on, else one per two
        CPUs (on the 2-core VM two setups side by side took as long as one after the other)."""
        return None if self.parallel_setup == "on" else max(1, len(os.sched_getaffinity(0)) // 2)

    def staged(self) -> bool:
        """Every process of the run started at once, ahead of its turn (capture/rounds.py ``Staged``): each sets
        up (imports, environment, the model file, loading the model the first process built) beside the others,
        then waits, idle, with its model on the CPU; the first processes then run one at a time in the run's order
        (reference, compile, timing, profile), each with the machine to itself; then the later processes compile
        from their mode's cache side by side (in groups that fit in memory) and time one at a time, as in
        ``later_processes``. On the H200 the setting up of a 1B Llama's later processes (~35 s) and of the
        compiled modes' first processes (~10 s each) had each been on the run's critical path. False (nothing
        started) where it does not apply: --parallel-setup off or auto with under 4 CPUs, torchrun, a multi-point
        (dynamic) job, --warm-compile, or an output folder that cannot hold a FIFO; the run then goes process by
        process as before."""
        from kernelscope.capture.rounds import Hold, Staged, make_gate

        most = self._most()
        if self.parallel_setup == "off" or most == 1 or self.opts.nproc or self.warm_compile or any(
                len(pis) > 1 or self.mode_defs[mi].dynamic for mi, pis in self.jobs):
            return False
        later = [(process, j) for process in range(2, self.processes + 1) for j in range(len(self.jobs))]
        if self.parallel_setup == "auto" and not _room_for(len(self.jobs) + len(later)):
            return False
        dirs = {}
        for process, j in [(1, j) for j in range(len(self.jobs))] + later:
            mi, (pi,) = self.jobs[j]
            d = self.record_dir(mi, pi) / (f"process-{process}" if process > 1 else "")
            d.mkdir(parents=True, exist_ok=True)
            dirs[process, j] = d
        gates = [d / name for (process, _), d in dirs.items() for name in (("pre-gate", "gate") if process > 1
                                                                             else ("pre-gate",))]
        if not all(make_gate(g) for g in gates):
            for g in gates:
                g.unlink(missing_ok=True)
            return False
        # The model at each shape point is built by the first job there; every other worker at that point waits
        # for its file, or for that worker to end (then builds it too, with a note)
        builder: dict[int, int] = {}
        for j, (_, (pi,)) in enumerate(self.jobs):
            builder.setdefault(pi, j)
        ended = {j: dirs[1, j] / "builder-ended" for j in builder.values()}
        for f in ended.values():
            f.unlink(missing_ok=True)
        st = Staged(most)
        n = len(dirs)
        index: dict[tuple[int, int], int] = {}
        for process, j in [(1, j) for j in range(len(self.jobs))] + later:
            pi = self.jobs[j][1][0]
            b = builder[pi]
            hold = Hold(gate=dirs[process, j] / "gate" if process > 1 else None, waits_for=n,
                        pre=dirs[process, j] / "pre-gate", model_from=None if (process, j) == (1, b) else ended[b])
            on_end = (lambda f=ended[b]: f.touch()) if (process, j) == (1, b) else None
            index[process, j] = st.add(lambda h, j=j, process=process: self.capture(j, False, process, h), hold,
                                       on_end)
        try:
            self._staged_run(st, index, later)
        finally:
            st.stop()
            for g in gates:
                g.unlink(missing_ok=True)
            for f in ended.values():
                f.unlink(missing_ok=True)
        return True

    def _staged_run(self, st: Any, index: dict[tuple[int, int], int], later: list[tuple[int, int]]) -> None:
        for j in range(len(self.jobs)):
            st.settle()  # every process started and waiting (or ended) before this one goes on
            if self.fatal or self.interrupted:
                return
            i = index[1, j]
            self.running = self._running(j)
            st.release(i)
            mi, pis = self.jobs[j]
            try:
                recs = st.join(i)
            except KeyboardInterrupt:
                # what it wrote before it was stopped (its record once killed says "killed by signal 9")
                self.job_recs[j] = recs = self._stopped_recs(j)
                st.stop()
                for pi, rec in zip(pis, recs):
                    write_capture(self.record_dir(mi, pi) / CAPTURE_FILE, rec)
                raise
            self.running = None
            self.job_recs[j] = recs
            self._note(recs)
            if self.processes == 1 or not any(r.status == "ok" for r in recs):
                self.finish(j)  # nothing more runs for it: a mode that failed is not timed again
                st.stop([index[p, k] for p, k in later if k == j])
            else:
                for pi, rec in zip(pis, recs):
                    _print_first_process_line(self.err, self.point_label(j, pi), rec)
        todo = [(p, j) for p, j in later if j not in self.done]
        for group in self._groups(todo):
            if self.fatal or self.interrupted:
                return
            members = [index[t] for t in group]
            st.settle()
            for i in members:
                st.release(i)  # they compile from their mode's cache side by side
            for j in dict.fromkeys(j for _, j in group):
                self.trace_ahead(j)  # meanwhile: nothing times now, and after the timings nothing waits for it
            self._prepare_reports()
            st.settle()  # each waits before its warm-up (or ended)
            for (process, j), i in zip(group, members):
                self.running = self._running(j, process)
                st.release(i)
                self.later[j].append(st.join(i))
                self.running = None
                if process == self.processes:
                    self.finish(j)

    def _groups(self, todo: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
        """The later processes ((process, job) in order) in groups that set up together: as many as fit in half
        the device's memory at their jobs' first processes' peaks (--parallel-setup auto: and one per two CPUs);
        one by one with --parallel-setup off, under torchrun, or for a multi-point job."""
        from kernelscope.capture.rounds import groups

        if self.parallel_setup == "off" or self.opts.nproc or any(
                len(self.jobs[j][1]) > 1 or self.mode_defs[self.jobs[j][0]].dynamic for _, j in todo):
            return [[t] for t in todo]
        peaks, memory = [], None
        for _, j in todo:
            rec = self.job_recs[j][0]
            mem, env = rec.memory, rec.environment
            peak = (mem.first_call_peak_reserved_bytes if rec.device == "cuda" else mem.first_call_peak_rss_bytes
                    ) if mem else None
            peaks.append(peak if isinstance(peak, int) else None)
            if rec.device == "cuda" and env and isinstance(env.gpu_memory_bytes, int):
                memory = env.gpu_memory_bytes
            elif rec.device == "cpu":
                memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        return [[todo[i] for i in g] for g in groups(peaks, memory, self._most())]

    def _group(self, group: list[tuple[int, int]]) -> list[list[CaptureRecord]]:
        """Each (process, job) of the group: set up together, timed in order (one: as before).
        SIGINT/SIGTERM: KeyboardInterrupt with the records of those that finished."""
        from kernelscope.capture.rounds import make_gate, together

        gates = []
        for process, j in group:
            mi, (pi,) = self.jobs[j]
            d = self.record_dir(mi, pi) / f"process-{process}"
            d.mkdir(parents=True, exist_ok=True)
            gates.append(d / "gate")
        if len(group) == 1 or not all(make_gate(g) for g in gates):
            done: list[list[CaptureRecord]] = []
            for process, j in group:
                try:
                    done.append(self.capture(j, False, process))
                except KeyboardInterrupt:
                    raise KeyboardInterrupt(done) from None
            return done
        try:
            return together([lambda hold, j=j, process=process: self.capture(j, False, process, hold)
                             for process, j in group], gates)
        finally:
            for g in gates:
                g.unlink(missing_ok=True)

    def trace_ahead(self, j: int) -> None:
        """Analyse job j's first-process files (trace, output code, compile log) now, so that finish() only adds
        the later processes' timings: with the staged run the analysis otherwise came between the later timings
        and after the last one, with nothing else running. Not for a torchrun group (never staged)."""
        from kernelscope.analysis.mode import trace_fields

        if j in self.traced or j not in self.job_recs or any(r.rank_records for r in self.job_recs[j]):
            return
        try:
            self.traced[j] = [trace_fields(self.out_dir, rec) for rec in self.job_recs[j]]
        except Exception:  # noqa: BLE001 - finish() analyses it again in its turn, and fails there as it would
            return

    def _prepare_reports(self) -> None:
        """The reports' imports and template ahead, once (the run's last seconds then only render); a failure
        here is left for write_reports to meet and report in its turn."""
        prepare, self.prepare_reports = self.prepare_reports, None
        if prepare is not None:
            try:
                prepare()
            except Exception:  # noqa: BLE001
                pass

    def finish(self, j: int) -> None:
        """Analyse a job's capture records (every process that ran merged into the first's) into ModeResults,
        print their lines, write result.json."""
        from kernelscope.analysis.ranks import build_any_mode_result
        from kernelscope.capture.runner import merge_processes, merge_ranks

        mi, pis = self.jobs[j]
        recs = self.job_recs[j]
        if self.later[j]:
            recs = [merge_ranks(self.out_dir, rec, [rnd[q] for rnd in self.later[j]], merge_processes)
                    for q, rec in enumerate(recs)]
            for pi, rec in zip(pis, recs):
                write_capture(self.record_dir(mi, pi) / CAPTURE_FILE, rec)
        ran = 1 + len(self.later[j])
        traced = self.traced.pop(j, [None] * len(recs))
        for pi, rec, ahead in zip(pis, recs, traced):
            self.run_dtype = self.run_dtype or rec.dtype
            mr = build_any_mode_result(self.out_dir, rec, traced=ahead)
            if self.interrupted and mr.status == "ok" and ran < self.processes:
                mr = dataclasses.replace(mr, notes=(*mr.notes, f"timed in {ran} of {self.processes} processes: "
                                                               f"the run was interrupted ({self.interrupted})"))
            self.results[pi][mi] = mr
            print_mode_line(self.err, self.point_label(j, pi), mr)
        self.done.add(j)
        if self.save is not None and not self.never_ran():
            self.save()

    def never_ran(self) -> bool:
        """The model file could not be loaded or built (a model or usage error) and no mode ran: no report."""
        return (self.fatal is not None and self.fatal[0] in ("model", "usage")
                and not any(m is not None and m.status == "ok" for row in self.results for m in row))

    def kept(self) -> str:
        """What a stopped run kept: its finished modes (with their status when not ok) or "no finished mode"."""
        names = [f"{m.name}{' @ ' + label if label else ''}{'' if m.status == 'ok' else f' ({m.status})'}"
                 for row, label in zip(self.grid, [p.label for p in self.points] or [""])
                 for m in row if m.status != "interrupted"]
        if len(names) > 6:
            return f"{len(names)} mode runs ({', '.join(names[:3])}, ...)"
        return ", ".join(names) or "no finished mode"


STAGED_MOST = 16  # processes of a run started ahead of their turn at most, with --parallel-setup auto
STAGED_RSS = 2**30  # what a waiting process holds in host memory: Python, torch, the model file's imports


def _room_for(workers: int, meminfo: str = "/proc/meminfo") -> bool:
    """Whether ``workers`` processes may wait side by side (--parallel-setup auto): at most STAGED_MOST (a sweep's
    4 points x 3 modes x 3 processes would be 36), each counted at STAGED_RSS against half of the memory Linux
    says is available now. The model itself is mapped from one file on CUDA; on the CPU device each process reads
    its own copy, which this rule of thumb does not see. Not Linux: no."""
    try:
        with open(meminfo, encoding="ascii") as f:
            kib = next(int(ln.split()[1]) for ln in f if ln.startswith("MemAvailable:"))
    except (OSError, StopIteration, ValueError, IndexError):
        return False
    return workers <= STAGED_MOST and workers * STAGED_RSS <= kib * 1024 // 2


def stop_signal() -> str:
    """The signal that stopped the run: the first one inside signals.handling(), else Python's own Ctrl-C."""
    from kernelscope.capture.signals import received

    return received() or "SIGINT"


def skipped(mode: str, fatal: tuple[str, str] | None, interrupted: str | None) -> Any:
    """The result of a mode that was not run, after SIGINT/SIGTERM or a fatal error of an earlier one."""
    from kernelscope.result import ModeResult

    if interrupted:
        return ModeResult(name=mode, status="interrupted", error=f"interrupted ({interrupted}) before it ran",
                          error_kind="interrupted")
    return ModeResult(name=mode, status="failed", error=f"not run: {fatal[1]}",  # type: ignore[index]
                      error_kind="skipped")


def pending(mode: str) -> Any:
    """A mode still to run when result.json is written during the run: what it is if the run dies now."""
    from kernelscope.result import ModeResult

    return ModeResult(name=mode, status="interrupted", error_kind="interrupted",
                      error="not finished when result.json was written: the run stopped before it finished")


# ------------------------------------------------------------------------------------------------- after the run
def _run_result(run: _ModeRuns, asked: dict[str, Any], *, interp: Any, device: str, cal_data: Any, cal_path: Path,
                model_path: str, sweeps: dict[str, list[Any]], input_sweep: bool, command_line: str,
                model: Path) -> Any:
    """The RunResult: the modes' results with the roofline (the device's peaks are known once a worker reported
    the environment), the sweep's points, and the settings ``compare`` reads to say whether two runs compare."""
    import hashlib

    from kernelscope.analysis.mode import build_run_result, run_environment
    from kernelscope.analysis.roofline import peaks_for, with_roofline
    from kernelscope.result import RunEnvironment, SweepPoint, to_json

    environment = run_environment(run.environment, interp.as_dict() if interp is not None else None)
    resolved_device = environment.device or (device if device != "auto" else "")
    peaks = peaks_for(to_json(environment), cal_data, str(cal_path)) if environment != RunEnvironment() else {}
    run.grid = [[dataclasses.replace(m, gemms=with_roofline(m.gemms, peaks)) if m is not None else pending(d.name)
                 for m, d in zip(row, run.mode_defs)] for row in run.results]
    points = run.points
    sweep_points = [SweepPoint(params=p.params, label=p.label, modes=tuple(run.grid[p.index])) for p in points]
    settings = dict(asked)
    # What `compare` needs to say whether two runs are comparable: the model file's content and the inputs'
    # shapes as the workers built them.
    settings["model_sha256"] = hashlib.sha256(Path(model_path).read_bytes()).hexdigest()
    settings["inputs"] = next((r.inputs for recs in run.job_recs.values() for r in recs if r.inputs), None)
    if points:
        settings["sweep"] = {k: v for k, v in sweeps.items()}
        settings["input_sweep"] = input_sweep
    if peaks.get("calibrated"):
        settings["calibration"] = str(cal_path)
    return build_run_result(
        run.grid[0], environment=environment, command=command_line, model=str(model), device=resolved_device,
        dtype=run.run_dtype or "", settings=settings, points=sweep_points, peaks=peaks,
    )


def _report(run: _ModeRuns, result: Any, err: Any, *, tensorboard: bool, verbose: bool = False) -> None:
    """Write the reports and leave with the run's status: a model file that never loaded or built is one error and
    no report; SIGINT/SIGTERM, a fatal error or a mode that did not finish exit non-zero after the reports."""
    from kernelscope.report import write_reports
    from kernelscope.report.github import publish_profile
    from kernelscope.report.terminal import console_for, render_terminal

    grid, out_dir = run.grid, run.out_dir
    if run.never_ran() and not run.interrupted:
        raise_fatal(err, run.fatal)  # type: ignore[arg-type]  # no report to read, just the one error
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
        raise_fatal(err, run.fatal, f"every mode's error is in {paths['json']} (report: {paths['html']})")
    failed = [(m, row_label) for row, row_label in zip(grid, [p.label for p in run.points] or [""])
              for m in row if m.status in ("failed", "timeout")]
    if failed:
        names = ", ".join(f"{m.name}{' @ ' + lbl if lbl else ''} ({m.status})" for m, lbl in failed)
        raise click.exceptions.Exit(fail(err, f"{len(failed)} mode(s) did not finish: {names}; the other modes' "
                                               f"results are in {paths['html']}"))


def raise_fatal(err: Any, fatal: tuple[str, str], where: str = "") -> NoReturn:
    """Leave with the error that stopped the run: a forward that raised is exit 1 (``where``: the files that
    hold each mode's error), a model file or usage error its own exit code."""
    kind, message = fatal
    if kind == "forward":
        raise click.exceptions.Exit(fail(err, f"{message}; {where}" if where else message))
    raise (ModelFileError(message) if kind == "model" else UsageError(message))


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
        parts.append(escape(rec.error[:200]))
    _print_parts(console, escape(label), parts)


def _print_parts(console: Any, label: str, parts: list[str]) -> None:
    """``label: part · part · ...`` (parts in rich markup), broken between parts where the line would be wider
    than the console, the rest indented: a CI log then never shows a word such as a count alone on a line."""
    from rich.text import Text

    width = console.width
    lines = [f"{label}: {parts[0]}"]
    used = Text.from_markup(lines[0]).cell_len
    for part in parts[1:]:
        n = Text.from_markup(part).cell_len
        if used + 3 + n > width:
            lines.append(f"    {part}")
            used = 4 + n
        else:
            lines[-1] += f" · {part}"
            used += 3 + n
    for line in lines:
        console.print(line)


def print_mode_line(console: Any, label: str, m: Any) -> None:
    """One line per finished mode (status, first call, median, kernels, GEMMs); errors wait for the summary."""
    style = STATUS_STYLE.get(m.status, "white")
    parts = [f"[{style}]{m.status}[/]"]
    if m.compile is not None and m.compile.reused:
        parts.append(f"no recompile (first call {m.first_call_s:.2f} s)")
    elif m.first_call_s is not None:
        parts.append(f"first call {m.first_call_s:.2f} s")
    if m.latency_ms is not None:
        lat = m.latency_ms
        across = f" over {lat.processes} processes" if (lat.processes or 1) > 1 else ""
        # 4 significant digits, as the notes: two processes whose medians differ 200x (a contended host) give an
        # interval up to ~1e30 ms, which fixed decimals printed as 31 digits
        iv = f" ({lat.low:.4g}-{lat.high:.4g})" if lat.low is not None and lat.high is not None and across else ""
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

    _print_parts(console, escape(label), [p if p.startswith("[") else escape(p) for p in parts])
