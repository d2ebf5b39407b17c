"""Run each mode in its own subprocess (fresh Dynamo/Inductor state; a crash or hang cannot take the others down).

The parent never imports torch: it writes a spec, starts ``python -m kernelscope.capture.worker``, relays its
progress lines, enforces ``--timeout`` by killing the worker's whole process group (Inductor's compile workers
included), and reads back ``capture.json``. A worker that dies without writing one still gets a result.

A sweep runs each static mode once per shape point (a fresh compile per shape, as a user with fixed shapes gets)
and the dynamic mode once for all points (its recompilations are what it measures). ``--warm-compile`` starts a
second, compile-only worker per mode on the first one's Inductor cache. ``--processes N`` times each mode in
N - 1 more, timing-only workers (``process`` 2..N: their records go to ``.../modes/<mode>/process-<k>/``) on the
first one's Inductor cache, so they measure the same compiled code without paying a cold compile again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from kernelscope.capture import signals
from kernelscope.capture.interpreter import worker_argv
from kernelscope.capture.model_cache import CACHE_DIR
from kernelscope.capture.modes import ModeDef
from kernelscope.capture.rounds import Hold
from kernelscope.capture.timing import DRIFT_LIMIT
from kernelscope.capture_record import (
    CAPTURE_FILE,
    CapturePoint,
    CaptureRecord,
    CompileRecord,
    DynamoCounters,
    ProcessTiming,
    read_capture,
    write_capture,
)
from kernelscope.errors import UsageError
from kernelscope.files import atomic_write_json
from kernelscope.sweep_plan import PointPlan


@dataclass(frozen=True, slots=True)
class CaptureOptions:
    model: str
    sets: dict[str, Any]
    dtype: str | None
    device: str
    warmup: int = 10
    repeats: int = 30
    profile_steps: int = 3
    timeout_s: float = 900.0
    freezing: bool | None = None
    cache_dir: str | None = None
    torch_logs: str | None = "fusion,graph_code"  # graph_code: Dynamo's graphs, node -> module path + source line
    seed: int = 0
    reference: bool = True  # numerics against a float64 (CPU) / float32 (CUDA) copy of the model
    python: str | None = None  # another interpreter for the workers (profile --python); None: this one
    # profile --nproc N: each worker is a torchrun group of N ranks on this host; torchrun_args are
    # the rendezvous options passed through (--nnodes, --node-rank, --rdzv-*); none: --standalone.
    nproc: int | None = None
    torchrun_args: tuple[str, ...] = ()
    cpu_pinning: str = "fastest"  # CUDA: time with the launching thread on the fastest CPU ("off": don't pin)
    # The run's first worker at a shape point saves the model it built, and the float64 reference, in
    # <out>/model-cache/ for the others (capture/model_cache.py); off when the run has one worker.
    share_model: bool = True


def run_mode(
    mode: ModeDef,
    opts: CaptureOptions,
    out_dir: Path,
    on_progress: Callable[[str, str], None] | None = None,
    *,
    warm: bool = False,
    process: int = 1,
    hold: Hold | None = None,
) -> CaptureRecord:
    """Capture one mode; always returns a capture record (status ok/failed/timeout/unavailable/interrupted).

    ``warm``: a second, compile-only process reusing the first one's Inductor cache (its record goes to
    ``modes/<mode>/warm/``; the caller merges its first-call time and cache counters into the cold record).
    ``process`` > 1: a timing-only process of ``--processes`` on the first one's cache (``process-<k>/``).
    ``hold``: such a process waits at ``hold.gate`` before its warm-up until released (capture/rounds.py).
    """
    mode_dir = out_dir / "modes" / mode.dirname
    point = {"index": 0, "label": "", "params": {}, "sets": {}, "input_index": None,
             "mode_dir": str(_sub(mode_dir, warm, process)), "tb_dir": str(out_dir / "tb" / mode.dirname)}
    (rec,) = _run_worker(mode, opts, out_dir, [point], worker_dir=mode_dir, on_progress=on_progress, warm=warm,
                         multi=False, process=process, hold=hold)
    return rec


def _sub(d: Path, warm: bool, process: int) -> Path:
    """Where a worker's record goes: the mode's folder, its warm/ or its process-<k>/ subfolder."""
    if process > 1:
        return d / f"process-{process}"
    return d / "warm" if warm else d


def run_mode_points(
    mode: ModeDef,
    opts: CaptureOptions,
    out_dir: Path,
    points: Sequence[PointPlan],
    on_progress: Callable[[str, str], None] | None = None,
    *,
    warm: bool = False,
    process: int = 1,
) -> list[CaptureRecord]:
    """Capture one mode at several shape points in ONE worker (the dynamic mode: its recompilations across the
    shapes are the measurement). Files: ``points/<point>/modes/<mode>/`` per point, the worker's spec and log in
    ``modes/<mode>/``. Returns one record per point."""
    worker_dir = out_dir / "modes" / mode.dirname
    plans = [_point_spec(out_dir, mode, p, warm, process) for p in points]
    return _run_worker(mode, opts, out_dir, plans, worker_dir=worker_dir, on_progress=on_progress, warm=warm,
                       multi=True, process=process)


def run_mode_at(
    mode: ModeDef,
    opts: CaptureOptions,
    out_dir: Path,
    point: PointPlan,
    on_progress: Callable[[str, str], None] | None = None,
    *,
    warm: bool = False,
    process: int = 1,
    hold: Hold | None = None,
) -> CaptureRecord:
    """Capture one (static) mode at one shape point of a sweep, in its own worker: a fresh compile per shape."""
    plan = _point_spec(out_dir, mode, point, warm, process)
    worker_dir = point_dir(out_dir, point, mode)
    (rec,) = _run_worker(mode, opts, out_dir, [plan], worker_dir=worker_dir, on_progress=on_progress, warm=warm,
                         multi=True, process=process, hold=hold)
    return rec


def point_dir(out_dir: Path, point: PointPlan, mode: ModeDef) -> Path:
    return out_dir / "points" / point.dirname / "modes" / mode.dirname


def _point_spec(out_dir: Path, mode: ModeDef, p: PointPlan, warm: bool, process: int = 1) -> dict[str, Any]:
    d = point_dir(out_dir, p, mode)
    return {"index": p.index, "label": p.label, "params": p.params, "sets": p.sets, "input_index": p.input_index,
            "mode_dir": str(_sub(d, warm, process)), "tb_dir": str(out_dir / "tb" / p.dirname / mode.dirname)}


def list_input_points(opts: CaptureOptions, work_dir: Path) -> list[dict[str, Any]]:
    """Ask a worker what the model file's get_input_sweep() returns (the parent never runs the model file)."""
    from kernelscope.errors import ModelFileError

    work_dir.mkdir(parents=True, exist_ok=True)
    spec_path = work_dir / "list-points.json"
    atomic_write_json(spec_path, {"model": opts.model, "sets": opts.sets, "seed": opts.seed})
    # work_dir is <run dir>/modes: the worker is shipped to the run directory, as for the modes.
    argv = worker_argv(opts.python, work_dir.parent)
    proc = subprocess.run([*argv, "--list-points", str(spec_path)],
                          capture_output=True, text=True, timeout=opts.timeout_s, stdin=subprocess.DEVNULL)
    line = next((ln for ln in reversed(proc.stdout.splitlines()) if ln.startswith("@@points ")), None)
    if line is None:
        tail = (proc.stderr.strip().splitlines() or [""])[-1][:300]
        raise ModelFileError(f"get_input_sweep() could not be read (worker exit code {proc.returncode}): {tail}",
                             "run the model file with python to see the error")
    data = json.loads(line[len("@@points "):])
    if "error" in data:
        raise ModelFileError(data["error"])
    return list(data["points"])


def _run_worker(
    mode: ModeDef,
    opts: CaptureOptions,
    out_dir: Path,
    points: list[dict[str, Any]],
    *,
    worker_dir: Path,
    on_progress: Callable[[str, str], None] | None,
    warm: bool,
    multi: bool,
    process: int = 1,
    hold: Hold | None = None,
) -> list[CaptureRecord]:
    for p in points:
        Path(p["mode_dir"]).mkdir(parents=True, exist_ok=True)
    worker_dir.mkdir(parents=True, exist_ok=True)
    # A fresh Inductor cache per mode (and shape point) by default, inside the output folder that each run
    # empties first, so first_call_s is a cold compile; the warm process and the later processes of
    # --processes reuse exactly that folder.
    cache_dir = opts.cache_dir or str(worker_dir / ".inductor-cache")
    timing_only = process > 1
    if timing_only:
        worker_dir = _sub(worker_dir, False, process)
        worker_dir.mkdir(parents=True, exist_ok=True)
    suffix = "-warm" if warm and not timing_only else ""
    spec_path = worker_dir / f"spec{suffix}.json"
    spec = _worker_spec(mode, opts, out_dir, points, warm=warm, process=process, multi=multi)
    spec["hold"] = str(hold.gate) if hold and hold.gate else None
    spec["pre_gate"] = str(hold.pre) if hold and hold.pre else None
    spec["model_from"] = str(hold.model_from) if hold and hold.model_from else None
    atomic_write_json(spec_path, spec)
    env = _worker_env(mode, opts, cache_dir, timing_only)
    log_path = worker_dir / f"log{suffix}.txt"
    # --timeout is per mode and shape point; a held worker also waits for the others of its group. A worker
    # started ahead of its turn (hold.pre) has it for each stretch it runs: the clock stops while it waits at a
    # gate and starts again when the parent releases it (rounds.Staged)
    budget = opts.timeout_s * max(1, len(points))
    timeout = budget * (1 + (hold.waits_for if hold else 0))
    deadline = None
    if hold is not None and hold.pre is not None:
        hold.budget_s = budget
        hold.deadline = time.monotonic() + budget
        deadline = hold.current_deadline
    started_at = time.time()  # wall clock: shows the processes' interleaving across modes
    t0 = time.perf_counter()
    argv = worker_argv(opts.python, out_dir)
    if opts.nproc:
        argv = torchrun_argv(argv, opts.nproc, opts.torchrun_args)

    def relay(text: str) -> None:
        if hold is not None:
            hold.note_stage(text)
        if on_progress:
            on_progress(mode.name, text)

    returncode, stopped = _run_process([*argv, str(spec_path)], env, log_path, timeout, relay,
                                       on_start=hold.on_start if hold else None, deadline=deadline)
    ran = _Ran(log_path, started_at, time.perf_counter() - t0, returncode, stopped)
    recs = [_point_record(mode, opts, out_dir, p, ran, n_points=len(points), multi=multi) for p in points]
    if stopped == "interrupted":
        raise signals.interrupted()  # the records say "interrupted (SIGTERM)"; the caller keeps what finished
    return recs


def _worker_spec(mode: ModeDef, opts: CaptureOptions, out_dir: Path, points: list[dict[str, Any]], *, warm: bool,
                 process: int, multi: bool) -> dict[str, Any]:
    """The worker's spec file: the model, the mode, the measurement settings, where its files go."""
    spec = {
        "model": opts.model,
        "sets": opts.sets,
        "dtype": opts.dtype,
        "device": opts.device,
        "mode": asdict(mode),
        "out_dir": str(out_dir),
        "mode_dir": points[0]["mode_dir"],
        "tb_dir": points[0]["tb_dir"],
        "warmup": opts.warmup,
        "repeats": opts.repeats,
        "profile_steps": opts.profile_steps,
        "freezing": opts.freezing,
        "seed": opts.seed,
        "reference": opts.reference,
        "compile_only": warm,
        "timing_only": process > 1,
        "process": process,
        "user_cache_dir": bool(opts.cache_dir),
        "timeout_s": opts.timeout_s,
        "cpu_pinning": opts.cpu_pinning,
        "model_cache": str(out_dir / CACHE_DIR) if opts.share_model else None,
    }
    if opts.nproc:
        spec["distributed"] = {"nproc_per_node": opts.nproc, "torchrun_args": list(opts.torchrun_args)}
    if multi:
        spec["points"] = points
    return spec


def _worker_env(mode: ModeDef, opts: CaptureOptions, cache_dir: str, timing_only: bool) -> dict[str, str]:
    """The worker's environment: its Inductor and Triton caches, and the compile logs the analysis reads."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    if opts.cache_dir:
        env.setdefault("TRITON_CACHE_DIR", os.path.join(cache_dir, "triton"))
    else:
        # Triton's own cache too, even when the user set one: otherwise a "cold" compile reuses kernels.
        env["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    if mode.compiled and opts.torch_logs and "TORCH_LOGS" not in os.environ and not timing_only:
        # The fusion log feeds the epilogue verdicts' why-not; graph_code gives each GEMM its module path and source
        # line (kernelscope.provenance); recompiles says why a dynamic graph recompiled.
        env["TORCH_LOGS"] = opts.torch_logs + (",recompiles" if mode.dynamic else "")
    return env


def _run_process(argv: list[str], env: dict[str, str], log_path: Path, timeout: float,
                 relay: Callable[[str], None], on_start: Callable[[subprocess.Popen[str]], None] | None = None,
                 deadline: Callable[[], float] | None = None) -> tuple[int | None, str | None]:
    """Run the worker to its end or until ``timeout``: its progress lines go to ``relay``, the rest of its output
    to the log. Returns its exit code and "timeout" / "interrupted" when the runner stopped it (else None).
    ``on_start(proc)``: told the process once it runs (a round's parent kills held workers on Ctrl-C).
    ``deadline()``: instead of ``timeout``, the time.monotonic() past which it is stopped, looked at every
    second (it moves: rounds.Staged)."""
    stopped = None
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        # No shell; a new session so a timeout can kill the worker and every process it started.
        proc = subprocess.Popen(
            argv,
            stdout=subprocess.PIPE,
            stderr=log,
            stdin=subprocess.DEVNULL,
            text=True,
            env=env,
            start_new_session=True,
        )
        if on_start is not None:
            on_start(proc)

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                line = _RANK_PREFIX.sub("", line, count=1)  # torchrun's "[rank0]:" when it tags the lines
                if line.startswith("@@progress "):
                    relay(line[len("@@progress "):].strip())
                else:
                    log.write(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        # live: a second SIGINT/SIGTERM stops the worker even while the first one's stopping is under way
        with signals.live(proc.pid):
            try:
                if deadline is None:
                    proc.wait(timeout=timeout)
                else:
                    while proc.poll() is None:
                        left = deadline() - time.monotonic()
                        if left <= 0:
                            raise subprocess.TimeoutExpired(argv, timeout)
                        try:
                            proc.wait(timeout=min(left, 1.0))
                        except subprocess.TimeoutExpired:
                            pass
            except subprocess.TimeoutExpired:
                signals.stop_worker(proc)
                stopped = "timeout"
            except KeyboardInterrupt:  # SIGINT, or SIGTERM inside signals.handling()
                signals.stop_worker(proc)
                stopped = "interrupted"
            finally:
                # Compile workers that outlived a finished worker must not linger either.
                signals.stop_worker(proc)
                reader.join(timeout=5)
    return proc.returncode, stopped


@dataclass(frozen=True, slots=True)
class _Ran:
    """What the runner saw of one worker process."""

    log: Path
    started_at: float
    wall: float
    returncode: int | None
    stopped: str | None  # "timeout" | "interrupted": the runner stopped it


def _point_record(mode: ModeDef, opts: CaptureOptions, out_dir: Path, p: dict[str, Any], ran: _Ran, *,
                  n_points: int, multi: bool) -> CaptureRecord:
    """A point's capture record as the worker wrote it (a torchrun group's, from its ranks' records), or the one
    the runner writes for it when the worker was stopped or died without one; with the runner's fields."""
    capture_path = Path(p["mode_dir"]) / CAPTURE_FILE
    wall = ran.wall if n_points == 1 else None
    rec = read_capture(capture_path) if not opts.nproc else _group_record(
        Path(p["mode_dir"]), out_dir, mode.name, started_at=ran.started_at, wall=wall)
    rec = _settled(rec, mode, opts, ran, n_points)
    rec = replace(rec, mode=mode.name, wall_s=wall if n_points == 1 else rec.wall_s,
                  log=str(ran.log.relative_to(out_dir)), started_at=ran.started_at)
    if multi and rec.point is None:
        rec = replace(rec, point=CapturePoint(index=p["index"], label=p["label"], params=p["params"]))
    write_capture(capture_path, rec)
    return rec


def _settled(rec: CaptureRecord | None, mode: ModeDef, opts: CaptureOptions, ran: _Ran, n_points: int,
             ) -> CaptureRecord:
    """The record's status when the runner stopped the worker (timeout, Ctrl-C) before it finished, or when it
    died without writing one."""
    if ran.stopped == "timeout" and (rec is None or rec.status != "ok"):
        return replace(rec or CaptureRecord(), status="timeout", error_kind="timeout",
                       error=f"mode {mode.name} did not finish within --timeout {opts.timeout_s:g} s"
                             f"{' per shape point' if n_points > 1 else ''} and was stopped")
    if ran.stopped == "interrupted" and (rec is None or rec.status != "ok"):
        return replace(rec or CaptureRecord(), status="interrupted", error_kind="interrupted",
                       error=f"interrupted ({signals.interrupted().name}) while it ran")
    if rec is None:
        code = ran.returncode
        why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        tail = _log_tail(ran.log)
        return CaptureRecord(status="failed", error_kind="crash",
                             error=f"the {mode.name} worker died without a result ({why})"
                                   f"{': ' + tail if tail else ''}")
    return rec


_RANK_PREFIX = re.compile(r"^\[(?:rank|default)\d+\]:")


def torchrun_argv(worker: list[str], nproc: int, rendezvous: Sequence[str] = ()) -> list[str]:
    """The worker's command line under torchrun: ``python -m torch.distributed.run --nproc-per-node N
    [--standalone | rendezvous options] (-m kernelscope.capture.worker | launcher.py)``."""
    python, rest = worker[0], worker[1:]
    return [python, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc),
            *(list(rendezvous) or ["--standalone"]), *rest]


def rank_record_paths(mode_dir: Path) -> list[Path]:
    """The rank records a torchrun group wrote under ``mode_dir`` (``rank-<r>/capture.json``), in rank order."""
    found = []
    for d in mode_dir.glob("rank-*"):
        m = re.fullmatch(r"rank-(\d+)", d.name)
        if m and d.is_dir():
            found.append((int(m.group(1)), d / "capture.json"))
    return [p for _, p in sorted(found)]


def _group_record(mode_dir: Path, out_dir: Path, mode: str, *, started_at: float, wall: float | None,
                  ) -> CaptureRecord | None:
    """A torchrun group's record for the mode's folder: rank 0's record (the analysis reads every rank's through
    ``rank_records``), status ok only when every rank's is. Each rank's record gets the runner's fields too."""
    paths = rank_record_paths(mode_dir)
    recs: list[CaptureRecord] = []
    for r, path in enumerate(paths):
        rec = read_capture(path) or CaptureRecord(
            status="failed", error_kind="crash",
            error=f"rank {r} wrote no capture record (torchrun stops every rank when one fails)")
        rec = replace(rec, mode=mode, started_at=started_at,
                      wall_s=rec.wall_s if rec.wall_s is not None or wall is None else wall)
        write_capture(path, rec)
        recs.append(rec)
    if not recs:
        return None
    group = replace(recs[0], rank_records=tuple(str(p.relative_to(out_dir)) for p in paths), world_size=len(recs))
    # The rank that failed first-hand, before ranks that torchrun stopped because of it (they wrote no record).
    failed = [(r, rec) for r, rec in enumerate(recs) if rec.status != "ok"]
    # A rank whose peer died fails too (gloo: "Connection closed by peer"): the earliest failure is the cause.
    first_hand = [(r, rec) for r, rec in failed if rec.error_kind != "crash"]
    bad = min(first_hand, key=lambda x: x[1].failed_at or float("inf")) if first_hand else (
        failed[0] if failed else None)
    if bad is not None:
        r, rec = bad
        group = replace(group, status=rec.status or "failed", error_kind=rec.error_kind,
                        error=f"rank {r}: {rec.error}")
    return group


def merge_ranks(out_dir: Path, first: CaptureRecord, others: Sequence[CaptureRecord],
                merge: Callable[[CaptureRecord, list[CaptureRecord]], CaptureRecord]) -> CaptureRecord:
    """Apply ``merge`` (of the first record and the others: the warm process, the later processes) to a torchrun
    group rank by rank, writing each rank's merged record back; the group's record is merged too."""
    for r, rel in enumerate(first.rank_records):
        base = read_capture(out_dir / rel)
        if base is None:
            continue
        mates = []
        for o in others:
            paths = o.rank_records
            got = read_capture(out_dir / paths[r]) if r < len(paths) else None
            mates.append(got or CaptureRecord(status="failed", error=f"rank {r} wrote no record in this process"))
        write_capture(out_dir / rel, merge(base, mates))
    merged = merge(first, list(others))
    # the group's record keeps its rank list (a merge builds on the first record's fields)
    return replace(merged, rank_records=first.rank_records, world_size=first.world_size)


def merge_warm(cold: CaptureRecord, warm: CaptureRecord) -> CaptureRecord:
    """The cold record with the warm process's first-call time and cache counters in ``compile``."""
    comp = cold.compile or CompileRecord(cold_s=cold.first_call_s, cache={})
    cache = dict(comp.cache or {})
    reused = comp.reused  # nothing compiled at this point (a dynamic graph from an earlier point)
    if reused or warm.status == "ok":
        cache["warm"] = dict((warm.compile.cache or {}).get("cold", {})) if warm.compile else {}
        replayed = (warm.compile.cache or {}).get("replayed") if warm.compile else None
        if replayed:
            cache["warm_replayed"] = dict(replayed)
    if reused:
        comp = replace(comp, warm_s=None)
    elif warm.status == "ok":
        comp = replace(comp, warm_s=warm.first_call_s, warm_dynamo=warm.dynamo or DynamoCounters())
    else:
        comp = replace(comp, warm_s=None, warm_error=f"{warm.status}: {warm.error}"[:500])
    return replace(cold, compile=replace(comp, cache=cache, warm_log=warm.log))


def merge_processes(first: CaptureRecord, later: Sequence[CaptureRecord]) -> CaptureRecord:
    """The first process's record with every process's timings in ``processes`` (run order, the first
    included); analysis/mode.py combines them into the mode's latency. A later process that failed or timed
    out is kept with its status and error, and measures nothing."""
    procs = []
    for k, rec in enumerate([first, *later], start=1):
        drift = rec.latency_ms.drift if rec.latency_ms is not None else None
        procs.append(ProcessTiming(
            process=k, status=rec.status, error=rec.error[:500], first_call_s=rec.first_call_s,
            wall_s=rec.wall_s, started_at=rec.started_at, latency_ms=rec.latency_ms if rec.status == "ok" else None,
            drifted=rec.drifted or (k == 1 and (drift or 0) > DRIFT_LIMIT), log=rec.log))
    # the later processes' kept coordinate-descent results go with the compile they came from (result.json's
    # compile.coordesc_kept)
    kept = sum(int(rec.compile.coordesc_kept or 0) for rec in later if rec.compile)
    if kept and first.compile:
        return replace(first, processes=tuple(procs), compile=replace(first.compile, coordesc_kept=kept))
    return replace(first, processes=tuple(procs))


def drop_model_cache(out_dir: Path) -> None:
    """Remove the run's shared model (a copy of the model's weights: gigabytes at real size) once its workers are
    done; a run stopped before this leaves it to the next run into the folder, which removes it first."""
    shutil.rmtree(out_dir / CACHE_DIR, ignore_errors=True)


def _log_tail(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def check_torch_logs(python: str = sys.executable) -> None:
    """Refuse, up front, a TORCH_LOGS that torch itself rejects: every worker inherits the environment, and with
    an invalid value (or an empty one, or "help") ``import torch`` raises, so each mode would fail the same way.
    Only when TORCH_LOGS is set: it costs one ``import torch`` in a subprocess (a few seconds)."""
    value = os.environ.get("TORCH_LOGS")
    if value is None:
        return
    try:
        proc = subprocess.run([python, "-c", "import torch"], capture_output=True, text=True, timeout=300,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return  # a slow import is not a bad setting: the workers will tell
    if proc.returncode == 0 or "torch/_logging/" not in proc.stderr.replace("\\", "/"):
        return  # fine, or not torch's log parser: the workers' logs keep any other failure
    lines = [ln.strip() for ln in proc.stderr.splitlines() if ln.strip()]
    at = max((i for i, ln in enumerate(lines) if re.match(r"\w+(Error|Exception):", ln)), default=len(lines) - 1)
    nxt = lines[at + 1] if at + 1 < len(lines) else ""
    # torch wraps its message: "ValueError:" alone, or a sentence cut at "fully" and continued in lower case.
    cause = f"{lines[at]} {nxt}" if lines[at].endswith(":") or nxt[:1].islower() else lines[at]
    raise UsageError(f"TORCH_LOGS={value!r} is not a setting torch accepts: `import torch` fails with it "
                     f"({cause[:160]})",
                     "unset TORCH_LOGS or fix it (TORCH_LOGS=\"+help\" python -c 'import torch' lists the names); "
                     "kernelscope turns on the logs it needs by itself")
