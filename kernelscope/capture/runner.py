"""Run each mode in its own subprocess (fresh Dynamo/Inductor state; a crash or hang cannot take the others down).

The parent never imports torch: it writes a spec, starts ``python -m kernelscope.capture.worker``, relays its
progress lines, enforces ``--timeout`` by killing the worker's whole process group (Inductor's compile workers
included), and reads back ``capture.json``. A worker that dies without writing one still gets a result.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable

from kernelscope.capture.modes import ModeDef
from kernelscope.capture.worker import CAPTURE_SCHEMA, atomic_write_json


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
    torch_logs: str | None = "fusion"
    seed: int = 0


def _read_capture(path: Path) -> dict[str, Any] | None:
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
) -> dict[str, Any]:
    """Capture one mode; always returns a capture record (status ok/failed/timeout/unavailable/interrupted)."""
    mode_dir = out_dir / "modes" / mode.dirname
    mode_dir.mkdir(parents=True, exist_ok=True)
    tb_dir = out_dir / "tb" / mode.dirname
    cache_dir = opts.cache_dir or str(mode_dir / ".inductor-cache")
    spec = {
        "model": opts.model,
        "sets": opts.sets,
        "dtype": opts.dtype,
        "device": opts.device,
        "mode": asdict(mode),
        "out_dir": str(out_dir),
        "mode_dir": str(mode_dir),
        "tb_dir": str(tb_dir),
        "warmup": opts.warmup,
        "repeats": opts.repeats,
        "profile_steps": opts.profile_steps,
        "freezing": opts.freezing,
        "seed": opts.seed,
    }
    spec_path = mode_dir / "spec.json"
    atomic_write_json(spec_path, spec)
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    # A fresh Inductor cache per mode by default, so first_call_s is a cold compile (--cache-dir reuses one).
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir
    env.setdefault("TRITON_CACHE_DIR", os.path.join(cache_dir, "triton"))
    if mode.compiled and opts.torch_logs and "TORCH_LOGS" not in os.environ:
        env["TORCH_LOGS"] = opts.torch_logs  # the fusion log feeds the epilogue verdicts' why-not
    log_path = mode_dir / "log.txt"
    t0 = time.perf_counter()
    status_override = None
    with open(log_path, "w", encoding="utf-8", errors="replace") as log:
        # No shell; a new session so a timeout can kill the worker and every process it started.
        proc = subprocess.Popen(
            [sys.executable, "-m", "kernelscope.capture.worker", str(spec_path)],
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
                        on_progress(mode.name, line[len("@@progress "):].strip())
                else:
                    log.write(line)

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            proc.wait(timeout=opts.timeout_s)
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
    wall = time.perf_counter() - t0
    rec = _read_capture(mode_dir / "capture.json")
    if status_override == "timeout":
        rec = {**(rec or {}), "status": "timeout", "error_kind": "timeout",
               "error": f"mode {mode.name} did not finish within --timeout {opts.timeout_s:g} s and was stopped"}
    elif status_override == "interrupted":
        rec = {**(rec or {}), "status": "interrupted", "error_kind": "interrupted", "error": "interrupted (Ctrl-C)"}
    elif rec is None:
        code = proc.returncode
        why = f"killed by signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        tail = _log_tail(log_path)
        rec = {"status": "failed", "error_kind": "crash",
               "error": f"the {mode.name} worker died without a result ({why}){': ' + tail if tail else ''}"}
    rec.setdefault("schema", CAPTURE_SCHEMA)
    rec["mode"] = mode.name
    rec["wall_s"] = wall
    rec["log"] = str(log_path.relative_to(out_dir))
    rec.setdefault("notes", [])
    atomic_write_json(mode_dir / "capture.json", rec)
    if status_override == "interrupted":
        raise KeyboardInterrupt
    return rec


def _log_tail(path: Path) -> str:
    try:
        lines = [ln.strip() for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""
