"""The compile of a compiled mode: torch.compile once per parameter signature (its backend reads each graph's
calling modules: callers.py), the compile's hooks (Inductor's output code, its provenance, max-autotune
announcements), the first call and its counters (Dynamo and Inductor), the output code written beside the capture
record, and Inductor's compile workers stopped before timing.

torch and Inductor are imported inside the functions: only a compiled mode pays for them.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelscope.capture.memory import _peak_rss, _rss_hwm
from kernelscope.capture.progress import progress
from kernelscope.capture.setup import _Setup
from kernelscope.capture_record import CALLERS_SUFFIX, CAPTURE_FILE
from kernelscope.provenance import PROVENANCE_SUFFIX

# Dynamo and Inductor counters, read before and after each shape point so each point reports its own recompiles.
_CACHE_GROUPS = ("inductor", "aot_autograd", "dynamo_cache")

# What Inductor's FX-graph cache replayed into counters["inductor"]: on a hit it adds the counts the cached graph's
# compile made (``counters["inductor"] += graph.counter_deltas``, torch/_inductor/codecache.py: "pretending these
# counters were incremented normally is useful for testing"), so a process that loaded a max-autotune graph from
# the cache reads ``select_algorithm_autotune`` 7 without benchmarking anything. Counted here to be taken out.
_REPLAYED: collections.Counter[str] = collections.Counter()


class _ReplayTally(collections.Counter):  # type: ignore[type-arg]
    """counters["inductor"], counting what is added to it whole (``+=`` a Counter: only the cache's replay does
    that; Inductor's own counts go ``counters["inductor"][key] += 1``)."""

    def __iadd__(self, other: Any) -> Any:
        if isinstance(other, collections.Counter):
            _REPLAYED.update({k: v for k, v in other.items() if isinstance(v, int) and v > 0})
        return super().__iadd__(other)


def _watch_replays(counters: Any) -> None:
    """Put the tally in as counters["inductor"] (once per process; torch keeps the object, ``+=`` returns it)."""
    if not isinstance(counters.get("inductor"), _ReplayTally):
        counters["inductor"] = _ReplayTally(counters.get("inductor", {}))


def _counters(torch: Any) -> dict[str, Any]:
    from torch._dynamo.utils import counters, guard_failures

    _watch_replays(counters)
    snap = {group: dict(counters.get(group, {})) for group in ("frames", "stats", "graph_break", *_CACHE_GROUPS)}
    snap["guard_failures"] = [str(r) for reasons in guard_failures.values() for r in reasons]
    snap["phases"] = _phase_seconds()
    snap["replayed"] = dict(_REPLAYED)
    return snap


def _phase_seconds() -> dict[str, float]:
    """Dynamo's and Inductor's own timers so far (``dynamo_timed``: "GraphLowering.run", "Scheduler.codegen",
    "AOTAutogradCache.inductor_load", "async_compile.wait", ...): name -> seconds, summed over their calls."""
    try:
        from torch._dynamo.utils import compilation_time_metrics
    except ImportError:  # pragma: no cover - every torch kernelscope supports has it
        return {}
    return {k: float(sum(v)) for k, v in list(compilation_time_metrics.items())}


def _counter_delta(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    def d(group: str, key: str) -> int:
        return int(after.get(group, {}).get(key, 0)) - int(before.get(group, {}).get(key, 0))

    failures = after["guard_failures"][len(before["guard_failures"]):]
    graph_breaks = sum(after.get("graph_break", {}).values()) - sum(before.get("graph_break", {}).values())
    replayed = {k: n for k, v in after.get("replayed", {}).items()
                if (n := int(v) - int(before.get("replayed", {}).get(k, 0))) > 0}
    cache, cache_replayed = {}, {}
    for group in _CACHE_GROUPS:
        for key in after.get(group, {}):
            if "cache" in key or key == "select_algorithm_autotune":
                # what this process did: a cache hit's replay of the cached compile's counts taken out
                again = replayed.get(key, 0) if group == "inductor" else 0
                cache[key] = max(d(group, key) - again, 0)
                if again:
                    cache_replayed[key] = again
    # the timers that ran for 10 ms or more, longest first (a cache hit's load against a full lowering, say)
    grew = {k: v - before.get("phases", {}).get(k, 0.0) for k, v in after.get("phases", {}).items()}
    phases = {k: round(v, 3) for k, v in sorted(grew.items(), key=lambda kv: -kv[1]) if v >= 0.01}
    return {
        "phases": phases,
        "dynamo": {"frames_compiled": d("frames", "total"), "graphs": d("stats", "unique_graphs"),
                   "recompiles": len(failures), "guard_failures": failures[:20], "graph_breaks": graph_breaks,
                   "graph_break_reasons": [k for k, v in after.get("graph_break", {}).items()
                                           if v > before.get("graph_break", {}).get(k, 0)][:10]},
        "cache": cache,
        "cache_replayed": cache_replayed,
    }


def _compiled_fn(setup: _Setup, model: Any, signature: Any, reuse: bool, codes: list[str],
                 hooks: contextlib.ExitStack) -> Any:
    """What each call runs: the model, or (compiled modes) its torch.compile'd function, compiled once per
    parameter signature; the compile's hooks (output code, provenance, autotune announcements) go on ``hooks``."""
    torch, mode = setup.torch, setup.mode
    if mode.compiled:
        from torch._inductor.graph import GraphLowering

        if not reuse:
            from kernelscope.capture.callers import recording_backend
            from kernelscope.modelfile import compile_user_model, user_model

            # Inductor as torch.compile(mode=...) builds it, reading each graph's callers on the way
            backend = recording_backend(torch, mode.compile_mode, True if mode.dynamic else None,
                                        user_model(model), setup.caller_graphs)
            kwargs: dict[str, Any] = {"backend": backend or "inductor"}
            if mode.compile_mode and backend is None:
                kwargs["mode"] = mode.compile_mode
            if mode.dynamic:
                kwargs["dynamic"] = True
            # the user's model itself, not kernelscope's keyword-inputs wrapper: Dynamo's names are then its paths
            fn = compile_user_model(model, lambda m: torch.compile(m, **kwargs))
            setup.fn, setup.model, setup.signature = fn, model, signature
        fn = setup.fn
        orig = GraphLowering.save_output_code
        graphs = setup.caller_graphs

        def save_output_code(code: str) -> None:
            if code not in codes:
                codes.append(code)
            if graphs and graphs[-1]:  # saved while Inductor compiles the graph the backend read last
                setup.callers.setdefault(code, graphs[-1])
            if orig is not None:
                orig(code)

        # The compile's hooks, each undone by ``hooks`` in the finally around the first call (also when one
        # of them fails to go on).
        hooks.callback(setattr, GraphLowering, "save_output_code", orig)
        GraphLowering.save_output_code = save_output_code  # same hook as torch._inductor.utils.run_and_get_code
        hooks.callback(_record_provenance(torch, codes, setup.provenance))
        hooks.callback(_announce_autotune())
    else:
        fn = model
    return fn


def _first_call(setup: _Setup, spec: dict[str, Any], rec: dict[str, Any], call: Any, hooks: contextlib.ExitStack,
                reuse: bool, before: Any, hwm_ok: bool) -> None:
    """The first call (the compile, in compiled modes): its time, its peak memory, the compile's counters."""
    torch, mode, device, timer = setup.torch, setup.mode, setup.device, setup.timer
    memory = rec["memory"]
    progress("compiling (first call)" if mode.compiled and not reuse else "first call")
    kept = _COORDESC_KEPT[0]
    t0 = time.perf_counter()
    try:
        out = call()
        timer.sync()
    finally:  # the compile's hooks come off whether or not it compiled
        hooks.close()
    rec["first_call_s"] = time.perf_counter() - t0
    if device == "cuda":
        memory["first_call_peak_allocated_bytes"] = int(torch.cuda.max_memory_allocated())
        memory["first_call_peak_reserved_bytes"] = int(torch.cuda.max_memory_reserved())
    else:
        # Compile-time peak RSS: from the reset above (after the model and the references were built).
        memory["first_call_peak_rss_bytes"] = (_rss_hwm() if hwm_ok else None) or _peak_rss()
    del out
    if mode.compiled:
        delta = _counter_delta(before, _counters(torch))  # type: ignore[arg-type]
        # Reused: the graph compiled at an earlier point covers this shape, so nothing compiled here and the
        # first call is no compile time.
        reused = reuse and not delta["dynamo"].get("frames_compiled")
        cache = {"cold": delta["cache"], **({"replayed": delta["cache_replayed"]} if delta["cache_replayed"] else {})}
        rec["compile"] = {"cold_s": None if reused else rec["first_call_s"], "cache": cache,
                          "cache_dir_fresh": not spec.get("user_cache_dir"),
                          "compile_threads": _compile_threads(), "phases_s": delta["phases"]}
        if spec.get("timing_only") and _COORDESC_KEPT[0] > kept:
            rec["compile"]["coordesc_kept"] = _COORDESC_KEPT[0] - kept
        if reused:
            rec["compile"].update(reused=True, first_call_s=rec["first_call_s"])
        rec["dynamo"] = delta["dynamo"]


def _save_code(setup: _Setup, spec: dict[str, Any], mode_dir: Path, codes: list[str], rec: dict[str, Any]) -> None:
    """Write the Inductor output code compiled at this point (and its provenance and callers beside it)."""
    mode = setup.mode
    code_paths = []
    for code in codes:
        if code in setup.codes_seen:
            continue
        setup.codes_seen.append(code)
        p = mode_dir / "code" / f"graph_{len(code_paths)}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(code, encoding="utf-8")
        code_paths.append(str(p.relative_to(spec["out_dir"])))
        prov = setup.provenance.get(code)
        if prov is not None:  # read back beside the code (analysis/mode.py load_codes)
            p.with_name(p.stem + PROVENANCE_SUFFIX).write_text(json.dumps(prov), encoding="utf-8")
        callers = setup.callers.get(code)
        if callers:  # each node's calling module (capture/callers.py)
            p.with_name(p.stem + CALLERS_SUFFIX).write_text(json.dumps(callers), encoding="utf-8")
    if code_paths:
        setup.last_code_paths = code_paths
    # No new code at this point (a dynamic graph that already covers this shape): the running code is the
    # last one compiled.
    rec["inductor_code"] = code_paths or list(setup.last_code_paths)
    if mode.compiled and not code_paths and setup.last_code_paths:
        rec["code_reused"] = True


def _record_provenance(torch: Any, codes: list[str], out: dict[str, dict[str, Any]]) -> Any:
    """Keep Inductor's provenance of each graph it compiles: torch calls ``dump_inductor_provenance_info()``
    once per graph, after saving the graph's output code (torch/_inductor/compile_fx.py), when
    ``trace.provenance_tracking_level`` is on. What it returns (kernel:handle <-> post-grad nodes <-> pre-grad
    nodes) and the kernels' stack traces are stored under the code just saved. Returns the function that
    restores torch's own (call it in ``finally``); a torch without provenance gets a no-op."""
    try:
        import torch._inductor.debug as dbg
    except ImportError:
        return lambda: None
    orig = getattr(dbg, "dump_inductor_provenance_info", None)
    if orig is None:
        return lambda: None

    def dump() -> dict[str, Any]:
        mapping = orig()
        if codes and isinstance(mapping, dict):
            stacks = getattr(dbg, "_inductor_kernel_stack_trace", None)
            try:  # plain JSON, or nothing: provenance is evidence, never a reason to fail a compile
                out[codes[-1]] = json.loads(json.dumps({"mapping": mapping, "stack_traces": dict(stacks or {})}))
            except (TypeError, ValueError):
                pass
        return mapping

    dbg.dump_inductor_provenance_info = dump

    def restore() -> None:
        dbg.dump_inductor_provenance_info = orig

    return restore


def _announce_autotune() -> Callable[[], None]:
    """Report each max-autotune benchmark as a progress stage ("autotuning mm (24 choices)"): it can be most
    of a compile's minutes. Returns the function that restores torch's own (call it in ``finally``); a torch
    without the hook gets a no-op and just shows "compile"."""
    try:
        from torch._inductor.select_algorithm import AlgorithmSelectorCache
    except ImportError:
        return lambda: None
    call = AlgorithmSelectorCache.__call__
    if getattr(call, "_kernelscope", False):
        return lambda: None  # already announcing (an enclosing compile put it on and takes it off)

    def announced(self: Any, name: Any, choices: Any, *args: Any, **kwargs: Any) -> Any:
        n = len(choices) if hasattr(choices, "__len__") else "?"
        progress(f"autotuning {name} ({n} choices)")
        try:
            return call(self, name, choices, *args, **kwargs)
        finally:
            progress("compiling (first call)")

    announced._kernelscope = True  # type: ignore[attr-defined]
    AlgorithmSelectorCache.__call__ = announced  # type: ignore[method-assign]

    def restore() -> None:
        AlgorithmSelectorCache.__call__ = call  # type: ignore[method-assign]

    return restore


def _no_pool_for_a_cached_compile(mode_dir: Path) -> None:
    """A later process of --processes (``mode_dir``: its process-<k>/ folder) compiles from its first process's
    Inductor cache. Where the first process's compile went through that cache (saved or found its graphs, none
    bypassed it), this one has nothing to hand a compile-worker pool: compile in this process. Inductor would
    otherwise start a pool as it compiles, and the process stops it before its timing, waiting for the pool's
    sidecar to finish importing torch first: ~10 s of each later compile on the H200 (benchmarks/README.md).
    compile_threads is not part of Inductor's cache key. Left as it is where the user set
    TORCHINDUCTOR_COMPILE_THREADS, or where the first process's graphs bypassed the cache (compiled again here,
    they want the pool), or its record cannot be read."""
    if "TORCHINDUCTOR_COMPILE_THREADS" in os.environ:
        return
    try:
        first = json.loads((mode_dir.parent / CAPTURE_FILE).read_text())
        cold = first["compile"]["cache"]["cold"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    if not isinstance(cold, dict) or cold.get("fxgraph_cache_bypass") or not (
            cold.get("fxgraph_cache_miss") or cold.get("fxgraph_cache_hit")):
        return
    try:
        from torch._inductor import config
    except Exception:
        return
    config.compile_threads = 1


# Kernels whose cached coordinate-descent result this process kept (_keep_cached_coordesc): the compile record's
# ``coordesc_kept``.
_COORDESC_KEPT = [0]


def _keep_cached_coordesc() -> Callable[[], None] | None:
    """A later process of --processes times the program its first process compiled, timed and profiled. Under
    max-autotune Inductor tunes each Triton kernel's launch configuration by coordinate descent at the kernel's
    first run, keeps the result beside the kernel (``<key>.best_config``, ``found_by_coordesc``) and, loading the
    graph from the cache, adopts it again (``CachingAutotuner.recheck_autotune_cache``). torch 2.9-2.11 adopt the
    cached configuration there but drop its ``found_by_coordesc`` (pytorch/pytorch#172819, fixed by #173391), so
    the kernel's first run tunes it again: 10.9 and 12.8 s of the later max-autotune processes' first calls for the
    1B Llama on the H200 (benchmarks/README.md), where a benchmark on a busy host may also pick
    another configuration than the one the first process timed. Here the adopted configuration gets the flag back
    where it is the cached coordinate-descent result, as the fixed torch does (on such a torch this finds the flag
    set and does nothing). Only later processes: a user's own restart does tune again on those versions, and
    ``--warm-compile`` measures what the user gets. Returns the undo, or None where this torch lacks the methods."""
    try:
        from torch._inductor.runtime import triton_heuristics as th
    except Exception:
        return None
    autotuner = getattr(th, "CachingAutotuner", None)
    recheck = getattr(autotuner, "recheck_autotune_cache", None)
    check = getattr(th, "check_autotune_cache", None)
    hashable = getattr(th, "triton_config_to_hashable", None)
    if autotuner is None or recheck is None or check is None or hashable is None or \
            getattr(recheck, "_kernelscope_keeps_coordesc", False):  # none, or installed at an earlier shape point
        return None
    last = threading.local()  # the cached configurations the recheck just read (it reads them through ``check``)

    def checked(*args: Any, **kwargs: Any) -> Any:
        found = check(*args, **kwargs)
        last.configs = found[0] if isinstance(found, tuple) and found else None
        return found

    def rechecked(self: Any, *args: Any, **kwargs: Any) -> Any:
        last.configs = None
        out = recheck(self, *args, **kwargs)
        try:
            if _adopt_coordesc(self, last.configs, hashable):
                _COORDESC_KEPT[0] += 1
        except Exception:  # torch's own state is what it made: nothing here may break a compile
            pass
        return out

    rechecked._kernelscope_keeps_coordesc = True  # type: ignore[attr-defined]
    th.check_autotune_cache = checked
    autotuner.recheck_autotune_cache = rechecked

    def undo() -> None:
        th.check_autotune_cache = check
        autotuner.recheck_autotune_cache = recheck

    return undo


def _adopt_coordesc(autotuner: Any, cached: Any, hashable: Callable[[Any], Any]) -> bool:
    """Mark the one configuration ``autotuner`` kept after its recheck as found by coordinate descent when it is the
    cached result ``cached`` (the recheck's read: one configuration, found by coordinate descent) and coordinate
    descent is on. True when the mark was missing and is set now."""
    if not cached or len(cached) != 1 or not getattr(cached[0], "found_by_coordesc", False):
        return False
    if not (getattr(autotuner, "inductor_meta", None) or {}).get("coordinate_descent_tuning"):
        return False
    results = getattr(autotuner, "compile_results", None) or []
    if len(results) != 1:
        return False
    config = results[0].config
    if getattr(config, "found_by_coordesc", False) or hashable(config) != hashable(cached[0]):
        return False
    config.found_by_coordesc = True
    return True


def _compile_threads() -> int | None:
    """Inductor's compile_threads as this process's compile used it (None: this torch does not say)."""
    try:
        from torch._inductor import config

        n = config.compile_threads
        return n if isinstance(n, int) else None
    except Exception:
        return None


def _shutdown_compile_workers(torch: Any) -> bool:
    """Stop Inductor's compile-worker processes (they restart on the next compile). False when this torch has no
    such call or it fails: measuring goes on either way."""
    try:
        from torch._inductor import async_compile

        stop = getattr(async_compile, "shutdown_compile_workers", None)
        if stop is None:
            return False
        stop()
        return True
    except Exception:
        return False
