"""A compile that hits Inductor's FX-graph cache adds the cached compile's counters again (torch/_inductor/
codecache.py: ``counters["inductor"] += graph.counter_deltas``). The H200's later max-autotune processes read
``select_algorithm_autotune`` 7 and 114 generated-module misses that way, exactly their first process's numbers,
without benchmarking anything (easily taken for a second lowering). kernelscope counts what a process did:
the replay is taken out of the cache counters and kept beside them (capture/compiling.py ``_REPLAYED``)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kernelscope.capture.compiling import _counter_delta
from kernelscope.capture.runner import merge_warm
from kernelscope.capture_record import CaptureRecord, CompileRecord
from kernelscope.report.context import compile_row
from kernelscope.result import CompileCache, CompileInfo, ModeResult


def _snap(inductor: dict[str, int], replayed: dict[str, int]) -> dict:
    return {"frames": {}, "stats": {}, "graph_break": {}, "inductor": inductor, "aot_autograd": {},
            "dynamo_cache": {}, "guard_failures": [], "phases": {}, "replayed": replayed}


def test_a_cache_hits_replayed_counts_are_not_counted_as_this_process_work():
    # GIVEN counters before and after a max-autotune graph loaded from the cache, whose compile had autotuned 7
    # GEMMs and missed 114 generated modules; this process's own load compiled 3 kernels it had not seen
    before = _snap({"select_algorithm_autotune": 0}, {})
    after = _snap({"fxgraph_cache_hit": 1, "select_algorithm_autotune": 7, "generated_module_cache_miss": 114,
                   "async_compile_cache_miss": 175, "pattern_matcher_count": 40},
                  {"select_algorithm_autotune": 7, "generated_module_cache_miss": 114,
                   "async_compile_cache_miss": 172, "pattern_matcher_count": 40})
    delta = _counter_delta(before, after)
    # THEN the cache counters say what this process did: a hit, no benchmark, 3 compiles of its own
    assert delta["cache"] == {"fxgraph_cache_hit": 1, "select_algorithm_autotune": 0,
                              "generated_module_cache_miss": 0, "async_compile_cache_miss": 3}
    # AND the replay is kept beside them (cache counters only: the pattern matcher's are not cache counters)
    assert delta["cache_replayed"] == {"select_algorithm_autotune": 7, "generated_module_cache_miss": 114,
                                       "async_compile_cache_miss": 172}


def test_a_replay_before_this_point_is_not_taken_out_again():
    # GIVEN a second shape point: the replay happened at the first one (same counts before and after)
    before = _snap({"fxgraph_cache_hit": 1, "select_algorithm_autotune": 7}, {"select_algorithm_autotune": 7})
    after = _snap({"fxgraph_cache_hit": 1, "fxgraph_cache_miss": 1, "select_algorithm_autotune": 9},
                  {"select_algorithm_autotune": 7})
    delta = _counter_delta(before, after)
    # THEN this point's own compile (a miss, 2 benchmarks) is counted whole
    assert delta["cache"] == {"fxgraph_cache_hit": 0, "fxgraph_cache_miss": 1, "select_algorithm_autotune": 2}
    assert delta["cache_replayed"] == {}


def test_the_warm_processes_replay_reaches_the_report():
    # GIVEN a cold record and a warm process that loaded the graph and replayed 7 autotune counts
    cold = CaptureRecord(mode="max-autotune", status="ok", first_call_s=120.0,
                         compile=CompileRecord(cold_s=120.0, cache={"cold": {"fxgraph_cache_miss": 1,
                                                                              "select_algorithm_autotune": 7}}))
    warm = CaptureRecord(mode="max-autotune", status="ok", first_call_s=15.0,
                         compile=CompileRecord(cold_s=15.0, cache={"cold": {"fxgraph_cache_hit": 1,
                                                                              "select_algorithm_autotune": 0},
                                                                   "replayed": {"select_algorithm_autotune": 7}}))
    merged = merge_warm(cold, warm)
    assert merged.compile.cache["warm"] == {"fxgraph_cache_hit": 1, "select_algorithm_autotune": 0}
    assert merged.compile.cache["warm_replayed"] == {"select_algorithm_autotune": 7}
    # WHEN the result's compile info is read back and shown
    info = CompileInfo(cold_s=120.0, warm_s=15.0, cache=CompileCache(
        cold=merged.compile.cache["cold"], warm=merged.compile.cache["warm"],
        warm_replayed=merged.compile.cache["warm_replayed"]))
    row = compile_row(ModeResult(name="max-autotune", status="ok", compile=info))
    # THEN the warm column shows the hit and no benchmark, and the note says what was left out and why
    assert row.warm_cache == "fxgraph_cache_hit 1"
    assert "warm compile: a cache hit, whose replay of the cached compile's counters " \
           "(select_algorithm_autotune 7) is not counted" in row.note


_TWICE = textwrap.dedent("""
    import json, sys
    import torch
    from kernelscope.capture.compiling import _counter_delta, _counters

    def f(x, w, b):
        return torch.relu(torch.mm(x, w) + b)

    x, w, b = torch.randn(8, 16), torch.randn(16, 4), torch.randn(4)
    out = {}
    for name in ("miss", "hit"):
        before = _counters(torch)
        torch.compile(f)(x, w, b)
        after = _counters(torch)
        out[name] = {"delta": _counter_delta(before, after),
                     "inductor": {k: after["inductor"].get(k, 0) - before["inductor"].get(k, 0)
                                  for k in after["inductor"]},
                     "replayed": {k: v - before["replayed"].get(k, 0) for k, v in after["replayed"].items()}}
        torch._dynamo.reset()  # Dynamo compiles again; Inductor's cache on disk stays
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_torch_replays_the_cached_compiles_counters_and_the_tally_sees_exactly_that(tmp_path: Path):
    # GIVEN one function compiled twice in one process on a fresh Inductor cache (Dynamo reset between): the
    # first compile lowers and saves the graph, the second loads it
    env = {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(Path(__file__).parents[1])}
    import os

    proc = subprocess.run([sys.executable, "-c", _TWICE], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    miss, hit = out["miss"], out["hit"]
    assert miss["delta"]["cache"].get("fxgraph_cache_miss") == 1 and miss["replayed"] == {}
    assert hit["delta"]["cache"].get("fxgraph_cache_hit") == 1
    # THEN on the hit torch added again every count the first compile made inside Inductor (its pattern matcher's,
    # its extern calls), and the tally saw exactly those: nothing of the hit's own lookup
    compiled = {k: v for k, v in miss["inductor"].items() if v and "fxgraph_cache" not in k}
    assert compiled, miss["inductor"]
    assert {k: v for k, v in hit["replayed"].items() if v} == compiled
    assert {k: hit["inductor"][k] for k in compiled} == compiled
