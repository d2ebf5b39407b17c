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
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kernelscope.capture.interpreter import worker_argv
from kernelscope.capture.modes import ModeDef
from kernelscope.capture.sweep import PointPlan
from kernelscope.capture.worker import CAPTURE_SCHEMA
from kernelscope.errors import UsageError
from kernelscope.files import atomic_write_json


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


def read_capture(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("schema") == CAPTURE_SCHEMA else None


def _kill_group(proc: subprocess.Popen[str]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not get ignored
        pass


def run_mode(
    mode: ModeDef,
    opts: CaptureOptions,
    out_dir: Path,
    on_progress: Callable[[str, str], None] | None = None,
    *,
    warm: bool = False,
    process: int = 1,
) -> dict[str, Any]:
    """Capture one mode; always returns a capture record (status ok/failed/timeout/unavailable/interrupted).

    ``warm``: a second, compile-only process reusing the first one's Inductor cache (its record goes to
    ``modes/<mode>/warm/``; the caller merges its first-call time and cache counters into the cold record).
    ``process`` > 1: a timing-only process of ``--processes`` on the first one's cache (``process-<k>/``).
    """
    mode_dir = out_dir / "modes" / mode.dirname
    point = {"index": 0, "label": "", "params": {}, "sets": {}, "input_index": None,
             "mode_dir": str(_sub(mode_dir, warm, process)), "tb_dir": str(out_dir / "tb" / mode.dirname)}
    (rec,) = _run_worker(mode, opts, out_dir, [point], worker_dir=mode_dir, on_progress=on_progress, warm=warm,
                         multi=False, process=process)
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
) -> list[dict[str, Any]]:
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
) -> dict[str, Any]:
    """Capture one (static) mode at one shape point of a sweep, in its own worker: a fresh compile per shape."""
    plan = _point_spec(out_dir, mode, point, warm, process)
    worker_dir = point_dir(out_dir, point, mode)
    (rec,) = _run_worker(mode, opts, out_dir, [plan], worker_dir=worker_dir, on_progress=on_progress, warm=warm,
                         multi=True, process=process)
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
) -> list[dict[str, Any]]:
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
    spec = _worker_spec(mode, opts, out_dir, points, warm=warm, timing_only=timing_only, process=process,
                        multi=multi)
    suffix = "-warm" if warm and not timing_only else ""
    spec_path = worker_dir / f"spec{suffix}.json"
    atomic_write_json(spec_path, spec)
    env = _worker_env(mode, opts, cache_dir, timing_only=timing_only)
    log_path = worker_dir / f"log{suffix}.txt"
    timeout = opts.timeout_s * max(1, len(points))  # --timeout is per mode and shape point
    started_at = time.time()  # wall clock: shows the processes' interleaving across modes
    t0 = time.perf_counter()
    returncode, status_override = _run_process([*worker_argv(opts.python, out_dir), str(spec_path)], env, log_path,
                                               timeout, mode.name, on_progress)
    wall = time.perf_counter() - t0
    recs = []
    for p in points:
        capture_path = Path(p["mode_dir"]) / "capture.json"
        rec = read_capture(capture_path)
        if status_override == "timeout" and (rec is None or rec.get("status") != "ok"):
            rec = {**(rec or {}), "status": "timeout", "error_kind": "timeout",
                   "error": f"mode {mode.name} did not finish within --timeout {opts.timeout_s:g} s"
                            f"{' per shape point' if len(points) > 1 else ''} and was stopped"}
        elif status_override == "interrupted" and (rec is None or rec.get("status") != "ok"):
            rec = {**(rec or {}), "status": "interrupted", "error_kind": "interrupted", "error": "interrupted (Ctrl-C)"}
        elif rec is None:
            code = returncode
            why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
            tail = _log_tail(log_path)
            rec = {"status": "failed", "error_kind": "crash",
                   "error": f"the {mode.name} worker died without a result ({why}){': ' + tail if tail else ''}"}
        rec.setdefault("schema", CAPTURE_SCHEMA)
        rec["mode"] = mode.name
        if len(points) == 1:
            rec["wall_s"] = wall
        else:
            rec.setdefault("wall_s", None)
        rec["log"] = str(log_path.relative_to(out_dir))
        rec["started_at"] = started_at
        rec.setdefault("notes", [])
        if multi:
            rec.setdefault("point", {"index": p["index"], "label": p["label"], "params": p["params"]})
        atomic_write_json(capture_path, rec)
        recs.append(rec)
    if status_override == "interrupted":
        raise KeyboardInterrupt
    return recs


def _worker_spec(mode: ModeDef, opts: CaptureOptions, out_dir: Path, points: list[dict[str, Any]], *, warm: bool,
                 timing_only: bool, process: int, multi: bool) -> dict[str, Any]:
    """The spec file a worker reads: what to build, how to measure, where to write."""
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
        "timing_only": timing_only,
        "process": process,
        "user_cache_dir": bool(opts.cache_dir),
    }
    if multi:
        spec["points"] = points
    return spec


def _worker_env(mode: ModeDef, opts: CaptureOptions, cache_dir: str, *, timing_only: bool) -> dict[str, str]:
    """The worker's environment: its own Inductor and Triton caches, and the logs the verdicts read."""
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


def _run_process(argv: list[str], env: dict[str, str], log_path: Path, timeout: float, mode_name: str,
                 on_progress: Callable[[str, str], None] | None) -> tuple[int | None, str | None]:
    """Run a worker to its end (or ``timeout``, or Ctrl-C), its progress lines to ``on_progress`` and the rest of
    its output to ``log_path``. (exit code, "timeout" | "interrupted" | None)."""
    status_override = None
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

        def pump() -> None:
            assert proc.stdout is not None
            for line in proc.stdout:
                if line.startswith("@@progress "):
                    if on_progress:
                        on_progress(mode_name, line[len("@@progress "):].strip())
                else:
                    log.write(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(proc)
            status_override = "timeout"
        except KeyboardInterrupt:
            _kill_group(proc)
            status_override = "interrupted"
        finally:
            # Compile workers that outlived a finished worker must not linger either.
            _kill_group(proc)
            reader.join(timeout=5)
    return proc.returncode, status_override


def merge_warm(cold: dict[str, Any], warm: dict[str, Any]) -> dict[str, Any]:
    """The cold record with the warm process's first-call time and cache counters in ``compile``."""
    comp = dict(cold.get("compile") or {"cold_s": cold.get("first_call_s"), "cache": {}})
    cache = dict(comp.get("cache") or {})
    reused = comp.get("reused")  # nothing compiled at this point (a dynamic graph from an earlier point)
    if reused or warm.get("status") == "ok":
        cache["warm"] = (warm.get("compile") or {}).get("cache", {}).get("cold", {})
    if reused:
        comp["warm_s"] = None
    elif warm.get("status") == "ok":
        comp["warm_s"] = warm.get("first_call_s")
        comp["warm_dynamo"] = warm.get("dynamo") or {}
    else:
        comp["warm_s"] = None
        comp["warm_error"] = f"{warm.get('status')}: {warm.get('error', '')}"[:500]
    comp["cache"] = cache
    comp["warm_log"] = warm.get("log")
    return {**cold, "compile": comp}


def merge_processes(first: dict[str, Any], later: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The first process's record with every process's timings in ``processes`` (run order, the first
    included); analysis/mode.py combines them into the mode's latency. A later process that failed or timed
    out is kept with its status and error, and measures nothing."""
    procs = []
    for k, rec in enumerate([first, *later], start=1):
        procs.append({"process": k, "status": rec.get("status"), "error": (rec.get("error") or "")[:500],
                      "first_call_s": rec.get("first_call_s"), "wall_s": rec.get("wall_s"),
                      "started_at": rec.get("started_at"),
                      "latency_ms": rec.get("latency_ms") if rec.get("status") == "ok" else None,
                      "drifted": bool(rec.get("drifted")) or (k == 1 and (rec.get("latency_ms") or {}).get(
                          "drift", 0) > 0.10), "log": rec.get("log")})
    return {**first, "processes": procs}


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
