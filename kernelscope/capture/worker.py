"""One mode in its own process: build the model, compile, time, profile, save the trace and Inductor code.

Run as ``python -m kernelscope.capture.worker SPEC.json``. Writes ``capture.json`` (kernelscope/capture_record.py's
CaptureRecord, schema kernelscope.capture/1) into the mode's folder whatever happens: a failure is a result too.
Progress lines go to stdout as
``@@progress <text>``; everything else (Inductor's fusion/autotune logs, warnings) goes to stderr, which the
runner saves as the mode's log. A spec with ``timing_only`` (a later process of ``--processes``) builds, compiles
on the first process's Inductor cache, warms up and times, then stops: no reference, numerics or profile.

This module is the sequence (``main``, ``run_point``) and the failure classification; each job is its own module
beside it: setup.py (device, mode configuration, the model at a point), environment.py, compiling.py (and
callers.py, its backend), timing.py, pinning.py, numerics.py, memory.py, profiling.py, eager_ranges.py,
dispatch.py (the ops one call dispatches), progress.py.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from kernelscope.capture.compiling import (
    _compiled_fn,
    _counter_delta,
    _counters,
    _first_call,
    _keep_cached_coordesc,
    _no_pool_for_a_cached_compile,
    _save_code,
    _shutdown_compile_workers,
)
from kernelscope.capture.dispatch import count_dispatch
from kernelscope.capture.load import others_between, read_times
from kernelscope.capture.memory import _record_peak_memory, _reset_hwm, _rss_hwm, _rss_now
from kernelscope.capture.model_cache import shared_reference
from kernelscope.capture.numerics import _numerics, _reference_output, _snapshot
from kernelscope.capture.pinning import _pinned_samples
from kernelscope.capture.profiling import _profile, _trace_name
from kernelscope.capture.progress import progress, quiet
from kernelscope.capture.setup import (
    Unavailable,
    _build_point,
    _param_names,
    _param_signature,
    _Setup,
    list_points,
    spec_points,
)
from kernelscope.capture.timing import (
    DRIFT_LIMIT,
    WARMUP_BUDGET_S,
    WARMUP_MIN_S,
    _batched_estimate,
    _quantiles,
    _warm_up,
    calls_per_sample,
)
from kernelscope.capture_record import CAPTURE_FILE, CAPTURE_SCHEMA, write_capture
from kernelscope.errors import KernelscopeError, ModelFileError


def run_point(setup: _Setup, spec: dict[str, Any], point: dict[str, Any], rec: dict[str, Any]) -> None:
    """Measure one shape point: first call (compile), warm-up, timed samples, numerics, memory, profile, and the
    ops one more call dispatches."""
    torch, mode, device, timer = setup.torch, setup.mode, setup.device, setup.timer
    mode_dir = Path(point["mode_dir"])
    notes: list[str] = rec.setdefault("notes", [])
    # CPU memory is reported as growth over this RSS: what the mode allocated, not the interpreter and torch.
    rss_before = _rss_now() if device == "cpu" else None
    pre_gate = spec.pop("pre_gate", None)  # started ahead of its turn (capture/rounds.py Staged): wait there
    model, inputs, cache = _build_point(setup, spec, point, rec, before_device=None if not pre_gate else (
        lambda: _wait_turn(setup, pre_gate, "to run" if not spec.get("timing_only") else
                           "to compile" if mode.compiled else "to start", gpu=False)))
    rec["param_names"] = _param_names(torch, model)
    signature = _param_signature(torch, model)
    reuse = setup.fn is not None and signature is not None and signature == setup.signature
    if reuse:
        # Same weights' shapes (the seed is fixed, so same weights): keep the compiled model, feed new inputs.
        model = setup.model
    elif setup.fn is not None:
        notes.append("the model's parameters change at this point: it is compiled again as a new model")
    rec["memory"] = memory = {}
    if device == "cpu":
        memory["rss_before_bytes"] = rss_before

    with torch.no_grad():
        ref, reference, how, hwm_ok = _eager_outputs(setup, spec, rec, model, inputs,
                                                     shared=(cache, point.get("input_index")))
        codes: list[str] = []
        hooks = contextlib.ExitStack()
        fn = _compiled_fn(setup, model, signature, reuse, codes, hooks)

        def call() -> Any:
            if mode.cudagraphs:
                torch.compiler.cudagraph_mark_step_begin()  # each call is a new step: replay, not record
            return fn(*inputs)

        if mode.compiled and spec.get("timing_only") and not reuse:
            _no_pool_for_a_cached_compile(mode_dir)
            _keep_cached_coordesc()  # for the process's life: its timings run the first process's kernels
        before = _counters(torch) if mode.compiled else None
        _first_call(setup, spec, rec, call, hooks, reuse, before, hwm_ok)
        _save_code(setup, spec, mode_dir, codes, rec)
        if spec.get("compile_only"):
            rec["status"] = "ok"
            return
        if spec.get("hold"):  # a later process set up beside the others of its round: it times alone
            _wait_turn(setup, spec.pop("hold"))

        timed = _time_calls(setup, spec, rec, call, hwm_ok)
        if timed is None:  # a later process of --processes: its timings are the measurement
            return
        warmup_peak, hwm_ok = timed
        # The peak is read before the numerics: their float64 copies of the outputs (on the outputs' device)
        # are kernelscope's, not the model's
        _record_peak_memory(setup, rec, hwm_ok, warmup_peak, rss_before)
        _check_numerics(setup, rec, call, ref, reference, how)

        progress("profiling")
        rec["trace"] = _profile(torch, call, timer, device, {**spec, "tb_dir": point["tb_dir"]},
                                modules=None if mode.compiled else model,
                                worker_name=_trace_name(setup.group))
        if mode.compiled:
            # Recompiles after the first call (a guard that fails on the second call) count at this point too.
            rec["dynamo"] = _counter_delta(before, _counters(torch))["dynamo"]  # type: ignore[arg-type]
        rec["dispatch"] = _dispatch(setup, call)
    rec["status"] = "ok"


def _dispatch(setup: _Setup, call: Any) -> dict[str, Any]:
    """The ops one more call dispatches (capture/dispatch.py), the oracle of the GEMM count; a count that fails
    says why and leaves the mode's measurements as they are."""
    progress("counting dispatched ops")
    try:
        counted = count_dispatch(setup.torch, call, compiled=setup.mode.compiled, cudagraphs=setup.mode.cudagraphs)
        setup.timer.sync()
        return counted
    except Exception as exc:  # noqa: BLE001 - an extra call: its failure is no failure of the mode
        first = (str(exc).strip().splitlines() or [""])[0]
        return {"skipped": f"the counting call failed: {type(exc).__name__}: {first}"[:300]}


def _eager_outputs(setup: _Setup, spec: dict[str, Any], rec: dict[str, Any], model: Any,
                   inputs: list[Any], shared: tuple[Path | None, Any] = (None, None),
                   ) -> tuple[Any, Any, dict[str, Any], bool]:
    """The eager output every mode's numerics compare with, the high-precision reference's (unless --no-reference,
    or a compile-only / timing-only process; computed once per run and shape point, ``shared``: the run's model
    cache folder and the point's input index), then the memory peak reset for the mode's own measurement. Returns
    (eager output, reference output, how the reference was made, whether the RSS high-water mark was reset)."""
    from kernelscope import modelfile

    torch, device = setup.torch, setup.device
    try:
        ref = _snapshot(torch, model(*inputs))
    except Exception as exc:
        if setup.mode.compiled:
            raise
        raise modelfile.fail_in_user_code("the model's forward (eager)", spec["model"], exc) from exc
    setup.timer.sync()
    if rec.get("dtype") is None:  # no floating parameter or input: the dtype the outputs come out in
        rec["dtype"] = setup.config["dtype"] = modelfile.floating_dtype([t for _, t in ref])
    holder = [setup.reference_source]  # the uncast copy, dropped before anything is timed
    setup.reference_source = None
    reference, how = (None, {"skipped": "--no-reference"})
    if spec.get("reference", True) and not spec.get("compile_only") and not spec.get("timing_only"):
        progress("reference forward (high precision)")
        reference, how = shared_reference(torch, *shared, lambda: _reference_output(
            torch, model, inputs, device, rec["dtype"], holder[0]))
    holder.clear()
    hwm_ok = False
    if device == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    else:
        rec["memory"]["build_peak_rss_bytes"] = _rss_hwm()  # model, inputs and references built
        hwm_ok = _reset_hwm()
    return ref, reference, how, hwm_ok


def _wait_turn(setup: _Setup, gate: str, what: str = "to time", gpu: bool = True) -> None:
    """Wait, idle, until the parent says this process may go on (capture/rounds.py): GPU work finished, Inductor's
    compile workers stopped, then blocked opening the FIFO ``gate`` (no CPU, no polling). "go" goes on; anything
    else (the run was stopped) ends the process as interrupted. ``gpu=False``: before anything went to the device
    (a process started ahead of its turn): no synchronize, which would open a CUDA context (hundreds of MB of GPU
    memory per waiting process) that nothing has needed yet."""
    if setup.mode.compiled:
        _shutdown_compile_workers(setup.torch)
    if gpu:
        setup.timer.sync()
    progress(f"waiting for its turn {what}")
    with open(gate, encoding="utf-8") as f:
        word = f.read().strip()
    if word != "go":
        raise KeyboardInterrupt


def _time_calls(setup: _Setup, spec: dict[str, Any], rec: dict[str, Any], call: Any,
                hwm_ok: bool) -> tuple[int | None, bool] | None:
    """Warm up, then the timed samples. (the warm-up's peak RSS, whether VmHWM was reset after it); None when
    the timings are all this process measures (``timing_only``)."""
    torch, mode, device, timer = setup.torch, setup.mode, setup.device, setup.timer
    notes: list[str] = rec["notes"]
    warmup_peak = None
    if mode.compiled and _shutdown_compile_workers(torch):
        # Inductor's compile-worker pool (up to one process per core) idles or warms up in the background
        # after the compile; timing a launch-bound model next to it measured the pool, not the model.
        rec["compile_workers_stopped"] = True
    progress("warming up")
    load_start = read_times()  # other processes' CPU use over the warm-up and the samples (capture/load.py)
    per_call = _warm_up(timer, call, min_calls=spec.get("warmup", 10), max_seconds=WARMUP_BUDGET_S,
                        min_seconds=WARMUP_MIN_S, agree=setup.group)
    rec["warmup_calls"] = per_call["calls"]
    if device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    else:
        warmup_peak = _rss_hwm() if hwm_ok else None
        hwm_ok = _reset_hwm()
    # Several calls per sample so one sample lasts ~SAMPLE_S: shorter ones time the timer, not the model.
    inner = calls_per_sample(_batched_estimate(timer, call, per_call["estimate_s"], agree=setup.group))
    repeats = spec.get("repeats", 30)
    # CUDA: the launching thread moves to the fastest CPU (a torchrun group's ranks keep theirs: two ranks could
    # pick one CPU); on the CPU device Inductor's OpenMP threads are the measurement, so nothing moves there
    pin = device == "cuda" and setup.group is None and spec.get("cpu_pinning", "fastest") == "fastest"
    progress(f"timing {repeats} samples x {inner} calls")
    samples, windows, drift, pinned = _pinned_samples(timer, call, inner, repeats, pin=pin, agree=setup.group)
    rec["warmup_calls"] += (windows - 1) * repeats * inner  # the drifting windows were warm-up after all
    load = others_between(load_start, read_times())
    if load is not None:
        # the CPUs the timed calls keep busy: OpenMP's threads on the CPU device, the launching thread on a GPU
        load["threads"] = float(torch.get_num_threads() if device == "cpu" else 1)
    rec["latency_ms"] = {**_quantiles(samples), "samples": samples, "timer": "cuda_events" if device == "cuda"
                         else "perf_counter", "calls_per_sample": inner, "windows": windows,
                         "drift": drift, **(pinned or {}), **(load or {})}
    if spec.get("timing_only"):
        # A later process of --processes: its timings are the measurement; numerics, memory and the
        # profile come from the first process.
        rec["status"] = "ok"
        if drift > DRIFT_LIMIT:
            rec["drifted"] = True
        return None
    if drift > DRIFT_LIMIT:
        notes.append(f"latency still drifted by {drift:.0%} between the first and second half of the timed "
                     f"samples after {windows} windows: something changed under the measurement (another "
                     f"process on the {'GPU or ' if device == 'cuda' else ''}CPU, clocks, a launch-bound model's "
                     "CPU-side state); treat this mode's latency with care or raise --repeats")
    return warmup_peak, hwm_ok


def _check_numerics(setup: _Setup, rec: dict[str, Any], call: Any, ref: Any, reference: Any,
                    how: dict[str, Any]) -> None:
    """One more call, compared with eager's output and the high-precision reference."""
    torch, timer = setup.torch, setup.timer
    notes: list[str] = rec["notes"]
    got = _snapshot(torch, call())
    timer.sync()
    num = _numerics(torch, got, ref, reference, how, rec["dtype"], force_max=_force_max_multiplier(setup, rec),
                    baseline=not setup.mode.compiled)
    rec["numerics"] = num
    err = num["vs_eager"]
    rec["max_abs_error"] = err.get("max_abs")
    rec["max_rel_error"] = err.get("max_rel")
    if err.get("nonfinite"):
        notes.append(f"{err['nonfinite']} output elements are NaN or Inf")


def _force_max_multiplier(setup: _Setup, rec: dict[str, Any]) -> bool:
    """What torch's benchmark suite passes as ``force_max_multiplier`` to its accuracy check: freezing, bfloat16 and
    a convolution Inductor folded a binary op into (its counter ``binary_folding_conv``): a 10x rmse allowance."""
    if not (setup.mode.compiled and setup.config.get("freezing") and rec.get("dtype") == "bfloat16"):
        return False
    from torch._dynamo.utils import counters

    return int(counters.get("inductor", {}).get("binary_folding_conv", 0)) > 0


def _root_cause(exc: BaseException) -> BaseException:
    # Dynamo wraps the user's error ("RuntimeError when making fake tensor call"); the innermost one says why.
    seen = {id(exc)}
    while True:
        nxt = exc.__cause__ or exc.__context__
        if nxt is None or id(nxt) in seen:
            return exc
        seen.add(id(nxt))
        exc = nxt


def _classify(exc: BaseException, rec: dict[str, Any]) -> None:
    """Record a failure in the point's capture record: status, error kind, one-line error with advice."""
    if isinstance(exc, Unavailable):
        rec["status"], rec["error"], rec["error_kind"] = "unavailable", str(exc), "unavailable"
        return
    rec["status"] = "failed"
    if isinstance(exc, ModelFileError):
        # "forward": the model ran and raised (a run failure); "model": the file breaks the protocol (usage).
        forward = getattr(exc, "stage", "").startswith("the model's forward")
        rec["error"], rec["error_kind"] = exc.message, "forward" if forward else "model"
        detail = getattr(exc, "detail", "") or traceback.format_exc()
        print(detail, file=sys.stderr)
        return
    if isinstance(exc, KernelscopeError):
        rec["error"], rec["error_kind"] = exc.message, "usage" if exc.exit_code == 2 else "run"
        print(traceback.format_exc(), file=sys.stderr)
        return
    kind = type(exc).__name__
    text = str(exc)
    oom_words = ("out of memory", "not enough memory", "can't allocate memory", "Cannot allocate memory")
    if "OutOfMemory" in kind or isinstance(exc, MemoryError) or any(w in text for w in oom_words):
        rec["error_kind"] = "oom"
    elif "InductorError" in kind or "BackendCompilerFailed" in kind or "torch._dynamo" in type(exc).__module__:
        rec["error_kind"] = "compile"
    else:
        rec["error_kind"] = "run"
    first = str(exc).strip().splitlines()
    root = _root_cause(exc)
    if rec["error_kind"] == "compile" and type(root).__name__ == "InvalidCxxCompiler":
        rec["error_kind"] = "toolchain"  # the machine's, not the model's: a compiled mode cannot run here
    hint = {
        "toolchain": "no working C++ compiler for Inductor's CPU kernels: install one (e.g. g++) or set CXX to one",
        "oom": "out of memory in this mode: lower the input sizes (--set batch_size=...) or drop the mode",
        "compile": "torch.compile failed in this mode: keep eager (or a mode that works) for this model; "
                   "the mode's log.txt has Inductor's error",
    }.get(rec["error_kind"], "the mode's log.txt has the traceback")
    summary = f"{kind}: {first[0] if first else ''}"[:1000].strip()
    if root is not exc:
        root_first = (str(root).strip().splitlines() or [""])[0]
        summary += f"; caused by {type(root).__name__}: {root_first}"[:600]
    rec["error"] = f"{summary} ({hint})"
    print(traceback.format_exc(), file=sys.stderr)
    if isinstance(exc, KeyboardInterrupt):
        rec["status"] = "interrupted"


def _new_record(spec: dict[str, Any], point: dict[str, Any]) -> dict[str, Any]:
    rec: dict[str, Any] = {"schema": CAPTURE_SCHEMA, "mode": spec["mode"]["name"], "status": "failed", "error": "",
                           "error_kind": "", "notes": []}
    if spec.get("points"):
        rec["point"] = {"index": point.get("index", 0), "label": point.get("label", ""),
                        "params": point.get("params", {})}
    return rec


def _die_with_parent() -> None:
    """Linux: get SIGKILL when the kernelscope process dies (even by SIGKILL), so no worker outlives the run.

    The worker runs in its own session (so a timeout can kill its whole group), which also means a terminal's
    Ctrl-C or a killed parent would otherwise leave it running, compiling, holding GPU memory."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() == 1:  # the parent died before prctl took effect
            os._exit(1)
    except (OSError, AttributeError):
        pass


def _run_points(setup: _Setup, spec: dict[str, Any], points: list[dict[str, Any]],
                recs: list[dict[str, Any]]) -> None:
    stop = None
    for point, rec in zip(points, recs):
        if stop is not None:
            rec.update(stop)
            continue
        p0 = time.perf_counter()
        try:
            run_point(setup, spec, point, rec)
        except BaseException as exc:  # noqa: BLE001 - one point's failure (an OOM at the largest shape)
            _classify(exc, rec)
            rec["failed_at"] = time.time()  # torchrun ranks: the first to fail is the cause, the others followed
            if isinstance(exc, KeyboardInterrupt):
                stop = {"status": "interrupted", "error": "interrupted before this point ran",
                        "error_kind": "interrupted"}
            elif rec.get("error_kind") in ("model", "usage"):
                stop = {"status": "failed", "error": f"not run: {rec['error']}", "error_kind": "skipped"}
        rec["wall_s"] = time.perf_counter() - p0
        # Written as each point finishes: a timeout later on keeps the points already measured.
        write_capture(Path(point["mode_dir"]) / CAPTURE_FILE, rec)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    _die_with_parent()
    if argv and argv[0] == "--list-points":
        # The parent asks what get_input_sweep() returns: JSON on the last stdout line, errors as JSON too.
        spec = json.loads(Path(argv[1]).read_text())
        try:
            print("@@points " + json.dumps({"points": list_points(spec)}), flush=True)
        except KernelscopeError as exc:
            print("@@points " + json.dumps({"error": exc.message, "exit_code": exc.exit_code}), flush=True)
        return 0
    spec = json.loads(Path(argv[0]).read_text())
    points = spec_points(spec)
    rank = None
    if spec.get("distributed"):
        # A torchrun rank: its own folders and log, before torch is imported.
        from kernelscope.capture.dist import prepare_rank

        rank = prepare_rank(spec, points)
        quiet(rank != 0)
    recs = [_new_record(spec, p) for p in points]
    if rank is not None:
        for rec in recs:
            rec.update(rank=rank, log=spec["rank_log"])
    t0 = time.perf_counter()
    setup: _Setup | None = None
    try:
        setup = _Setup(spec, recs[0])
    except BaseException as exc:  # noqa: BLE001 - a failure of the mode is its result, at every point
        _classify(exc, recs[0])
        for rec in recs[1:]:
            rec.update({k: recs[0][k] for k in ("status", "error", "error_kind") if k in recs[0]})
    if setup is not None:
        for rec in recs[1:]:
            rec.update({k: recs[0][k] for k in ("device", "environment", "config", "distributed") if k in recs[0]})
            rec["notes"] = list(recs[0]["notes"])
        try:
            _run_points(setup, spec, points, recs)
        finally:
            setup.close()
    for point, rec in zip(points, recs):
        rec.setdefault("wall_s", time.perf_counter() - t0)
        write_capture(Path(point["mode_dir"]) / CAPTURE_FILE, rec)
    if rank is not None and any(r.get("status") != "ok" for r in recs):
        return 1  # torchrun stops the other ranks, which would wait in a collective for this one
    return 0


def _exit_now(code: int) -> None:
    """End the worker once its records are written, without Python's teardown: on the H200 the interpreter's
    exit with torch, CUDA and Inductor loaded took ~2 s of every worker (the "rest" after a later process's
    timing), and the processes of a run take turns, so each one's exit was on the run's critical path. Nothing is
    left to write (records, traces and caches are written and closed before main() returns; the runner kills the
    worker's session, compile workers included, after it ends)."""
    import logging

    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    _exit_now(main())
