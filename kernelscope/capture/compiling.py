"""The compile of a compiled mode: torch.compile once per parameter signature, the compile's hooks (Inductor's
output code, its provenance, max-autotune announcements), the first call and its counters (Dynamo and Inductor),
the output code written beside the capture record, and Inductor's compile workers stopped before timing.

torch and Inductor are imported inside the functions: only a compiled mode pays for them.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kernelscope.capture.memory import _peak_rss, _rss_hwm
from kernelscope.capture.progress import progress
from kernelscope.capture.setup import _Setup
from kernelscope.capture_record import CAPTURE_FILE
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
            kwargs: dict[str, Any] = {"backend": "inductor"}
            if mode.compile_mode:
                kwargs["mode"] = mode.compile_mode
            if mode.dynamic:
                kwargs["dynamic"] = True
            from kernelscope.modelfile import compile_user_model

            # the user's model itself, not kernelscope's keyword-inputs wrapper: Dynamo's names are then its paths
            fn = compile_user_model(model, lambda m: torch.compile(m, **kwargs))
            setup.fn, setup.model, setup.signature = fn, model, signature
        fn = setup.fn
        orig = GraphLowering.save_output_code

        def save_output_code(code: str) -> None:
            if code not in codes:
                codes.append(code)
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
        if reused:
            rec["compile"].update(reused=True, first_call_s=rec["first_call_s"])
        rec["dynamo"] = delta["dynamo"]


def _save_code(setup: _Setup, spec: dict[str, Any], mode_dir: Path, codes: list[str], rec: dict[str, Any]) -> None:
    """Write the Inductor output code compiled at this point (and its provenance beside it)."""
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
    sidecar to finish importing torch first: ~10 s of each later compile on the H200 (benchmarks/RESULTS.md,
    session 16). compile_threads is not part of Inductor's cache key. Left as it is where the user set
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
