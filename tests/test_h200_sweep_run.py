"""Shape sweeps on the H200 (tests/data/h200-torch2.11-kernelscope-run/linear_gelu-sweep and lossy-fp16): a shape
sweep over every mode with the dynamic mode and warm compiles, and fp16 numerics against a float64 reference on
the GPU. The analysis re-derived here from the captures must equal what the H200 run wrote; the rest pins what
the GPU showed (README.md beside the data says how each run was made)."""

from __future__ import annotations

import json

import pytest

from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.html import render_html
from kernelscope.report.markdown import render_markdown
from kernelscope.report.words import note_from, say_all
from kernelscope.result import to_json
from kernelscope.result_file import load_result, result_from_json

from .conftest import DATA

BASE = DATA / "h200-torch2.11-kernelscope-run"
SWEEP = BASE / "linear_gelu-sweep"
LOSSY = BASE / "lossy-fp16"
MODES = ["eager", "default", "max-autotune", "reduce-overhead", "dynamic"]
COMPILED = MODES[1:]
POINTS = ["p0-batch_size-16", "p1-batch_size-256"]


@pytest.fixture(scope="module")
def sweep() -> dict:
    return json.loads((SWEEP / "result.json").read_text())


def _capture(point: str, mode: str, *, warm: bool = False) -> dict:
    return json.loads((SWEEP / "points" / point / "modes" / mode / ("warm" if warm else "") / "capture.json")
                      .read_text())


def _at(r: dict, i: int) -> dict:
    return {m["name"]: m for m in r["points"][i]["modes"]}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("i", [0, 1])
def test_reanalysis_of_each_point_equals_the_recorded_result(sweep: dict, mode: str, i: int):
    mr = build_mode_result(SWEEP, _capture(POINTS[i], mode), peaks=sweep["peaks"])
    again = to_json(mr)
    before = _at(sweep, i)[mode]
    for key in ("kernels_per_iter", "kernels_by_category", "kernels_by_backend", "kernels", "first_call_s"):
        assert again[key] == before[key], key
    # what analysis said of the iterations and the autotune tables: recorded as sentences, now notes with the same
    # words
    its, recorded_its = dict(again["iterations"]), dict(before["iterations"])
    assert say_all(note_from(n) for n in its.pop("notes")) == recorded_its.pop("note")
    assert its == recorded_its
    for table, recorded_table in zip(again["autotune"], before["autotune"]):
        assert say_all(note_from(n) for n in table["notes"]) == recorded_table["note"]
    # The worker's parts are typed records since result.json schema 2: the recorded (schema 1) file, migrated,
    # holds the same records.
    recorded = load_result(SWEEP).points[i].mode(mode)
    for key in ("memory", "numerics", "dynamo", "compile"):
        assert getattr(mr, key) == getattr(recorded, key), key
    assert mr.memory is not None and mr.numerics is not None and (mr.dynamo is None) == (mode == "eager")
    # Fields added since the fixture was recorded (per-process latency, autotune margins) are new keys;
    # every recorded key still reads the same.
    for key in ("latency_ms", "autotune"):
        recorded, now = before[key], again[key]
        if isinstance(recorded, dict):
            assert {k: now[k] for k in recorded} == recorded, key
        else:
            assert [{k: n[k] for k in r if k != "note"} for r, n in zip(recorded, now)] == [
                {k: v for k, v in r.items() if k != "note"} for r in recorded], key
    assert [(g["verdict"], g["fused"], g["unfused"], g["roofline"]) for g in again["gemms"]] == [
        (g["verdict"], g["fused"], g["unfused"], g["roofline"]) for g in before["gemms"]]


def test_every_mode_ran_at_both_shapes_on_the_h200(sweep: dict):
    assert sweep["environment"]["gpu"] == "NVIDIA H200" and sweep["environment"]["torch"].startswith("2.11")
    assert [p["params"] for p in sweep["points"]] == [{"batch_size": 16}, {"batch_size": 256}]
    for i, b in enumerate((16, 256)):
        at = _at(sweep, i)
        assert list(at) == MODES and all(m["status"] == "ok" for m in at.values())
        assert _capture(POINTS[i], "default")["inputs"] == f"{b}x4096"
    # max-autotune fused bias + GELU into its Triton template at both shapes; the others left GELU outside.
    for i in (0, 1):
        at = _at(sweep, i)
        assert [at[m]["gemms"][0]["verdict"] for m in MODES] == ["partial", "partial", "fused", "partial", "partial"]
        (k,) = at["max-autotune"]["kernels"]
        assert k["name"] == "triton_tem_fused_addmm_gelu_t_0"


def test_dynamic_graph_compiled_at_batch_16_serves_batch_256_without_recompiling(sweep: dict):
    d16, d256 = _at(sweep, 0)["dynamic"], _at(sweep, 1)["dynamic"]
    assert d16["dynamo"]["graphs"] == 1 and d16["dynamo"]["recompiles"] == 0
    assert d256["dynamo"] == {"frames_compiled": 0, "graphs": 0, "recompiles": 0, "guard_failures": [],
                              "graph_breaks": 0, "graph_break_reasons": []}
    assert d256["inductor_code"] == d16["inductor_code"]  # the symbolic graph from batch 16
    code = (SWEEP / d16["inductor_code"][0]).read_text()
    assert "s77" in code or "ks0" in code  # the batch is a symbol, not 16
    # Nothing compiled at batch 256: no cold or warm compile time is claimed for it.
    assert d256["compile"]["reused"] is True and d256["compile"]["cold_s"] is None
    assert d256["compile"]["warm_s"] is None and d256["compile"]["first_call_s"] < 0.01
    assert d16["compile"]["cold_s"] > 1.0
    assert sweep["dynamic"]["recompiles"] == 0 and [p["recompiles"] for p in sweep["dynamic"]["points"]] == [0, 0]
    assert all(p["static_ms"] and p["dynamic_ms"] for p in sweep["dynamic"]["points"])


def test_warm_compile_on_the_gpu_hits_inductors_fx_graph_cache(sweep: dict):
    for mode in COMPILED:
        comp = _at(sweep, 0)[mode]["compile"]
        assert comp["cache_dir_fresh"] is True
        assert comp["cache"]["cold"]["fxgraph_cache_miss"] == 1 and not comp["cache"]["cold"].get("fxgraph_cache_hit")
        assert comp["cache"]["warm"]["fxgraph_cache_hit"] == 1 and not comp["cache"]["warm"].get("fxgraph_cache_miss")
        assert 0 < comp["warm_s"] < comp["cold_s"], mode
    # Static modes compile again at the second shape (a fresh process each), warm from that shape's cache.
    for mode in ("default", "max-autotune", "reduce-overhead"):
        comp = _at(sweep, 1)[mode]["compile"]
        assert comp["cache"]["warm"]["fxgraph_cache_hit"] == 1 and comp["warm_s"] < comp["cold_s"]
    # max-autotune's cold compile autotuned; the warm one took the compiled graph from the cache.
    mat = _at(sweep, 0)["max-autotune"]["compile"]
    assert mat["cache"]["cold"]["select_algorithm_autotune"] == 1 and mat["cold_s"] > 2 * mat["warm_s"]


def test_gpu_memory_per_point_compile_peak_apart_from_steady_state(sweep: dict):
    for i in (0, 1):
        at = _at(sweep, i)
        for mode in ("default", "max-autotune", "reduce-overhead"):
            mem = at[mode]["memory"]
            # autotune / compile-time allocations above what the timed calls need
            assert mem["first_call_peak_allocated_bytes"] > mem["peak_allocated_bytes"], (i, mode)
            assert mem["peak_reserved_bytes"] >= mem["peak_allocated_bytes"]
        # CUDA graphs: the static pool leaves less allocated per call than the non-graph modes
        assert at["reduce-overhead"]["peak_memory_bytes"] < at["default"]["peak_memory_bytes"]
    # 16 x 4096 fp16 weights dominate (32 MiB weight + bias); batch 256 adds activations
    assert _at(sweep, 1)["eager"]["peak_memory_bytes"] > _at(sweep, 0)["eager"]["peak_memory_bytes"]


def test_numerics_against_a_float64_reference_on_the_gpu(sweep: dict):
    for i in (0, 1):
        for mode, m in _at(sweep, i).items():
            num = m["numerics"]
            assert num["reference"] == {"dtype": "float64", "device": "cuda"}, mode
            assert num["vs_reference"]["pass"] is True and num["vs_reference"]["new_nonfinite"] == 0
            assert num["tolerance"]["dtype"] == "float16"


def test_autotune_tables_from_the_gpu_compile_log(sweep: dict):
    for i, m_rows in enumerate((16, 256)):
        (table,) = _at(sweep, i)["max-autotune"]["autotune"]
        assert table["op"] == "addmm" and table["sizes"].startswith(f"{m_rows}x4096")
        names = [c["name"] for c in table["choices"]]
        assert "addmm" in names and any(n.startswith("triton_mm_") for n in names)
        assert table["winner"] == names[0] and table["winner"].startswith("triton_mm_")
        times = [c["time_ms"] for c in table["choices"]]
        assert times == sorted(times)


def test_timing_windows_and_compile_workers_recorded(sweep: dict):
    for point in POINTS:
        for mode in MODES:
            cap = _capture(point, mode)
            lat = cap["latency_ms"]
            assert lat["timer"] == "cuda_events" and 1 <= lat["windows"] <= 3 and lat["calls_per_sample"] >= 1
            assert cap.get("compile_workers_stopped", False) is (mode != "eager")
            drifted = any("still drifted" in n for n in cap["notes"])
            assert drifted == (lat["drift"] > 0.10), (point, mode)
    # On this run max-autotune at batch 256 never settled: three windows, and the result says so.
    cap = _capture(POINTS[1], "max-autotune")
    assert cap["latency_ms"]["windows"] == 3 and cap["latency_ms"]["drift"] > 0.10
    assert any("still drifted" in n for n in _at(sweep, 1)["max-autotune"]["notes"])


def test_recommendation_per_shape_on_the_h200(sweep: dict):
    recs = sweep["recommendation"]
    assert [r["params"] for r in recs] == [{"batch_size": 16}, {"batch_size": 256}]
    for r in recs:  # a launch-bound 16-256 x 4096 GEMM: every compiled mode is slower than eager beyond noise
        assert r["mode"] == "eager"
        for c in r["candidates"]:
            if c["mode"] != "eager":
                assert c["call"] == "slower" and c["high"] < 1.0, c


def test_sweep_reports_render_from_the_recorded_result(sweep: dict):
    run = result_from_json(sweep)
    html = render_html(run)
    assert 'id="sweep"' in html and 'id="dynamic"' in html and "Speedup vs eager across shapes" in html
    assert "nothing compiled at this point" not in html  # the compile table is the first point's
    md = render_markdown(run)
    assert "### Shape sweep (2 points" in md and "`batch_size=256`" in md and "### Dynamic shapes" in md


def test_fp16_numerics_on_the_gpu_against_float64():
    r = json.loads((LOSSY / "result.json").read_text())
    by = {m["name"]: m for m in r["modes"]}
    e, d = by["eager"]["numerics"], by["default"]["numerics"]
    assert e["reference"] == {"dtype": "float64", "device": "cuda"}
    # fp16 eager overflows (x * 1e5 > 65504) where float64 does not
    assert e["vs_reference"]["pass"] is False and e["vs_reference"]["new_nonfinite"] > 0
    # Inductor keeps the fused chain in float32: differs from eager, matches the reference
    assert d["vs_eager"]["pass"] is False and d["vs_reference"]["pass"] is True
    assert d["vs_reference"]["rmse"] < d["vs_reference"]["eager_rmse"]
    assert by["default"]["compile"]["cache"]["warm"]["fxgraph_cache_hit"] == 1


def test_committed_sweep_data_is_small():
    for run in (SWEEP, LOSSY):
        assert sum(p.stat().st_size for p in run.rglob("*") if p.is_file()) < 2 * 1024 * 1024
        assert not list(run.rglob("report.html")) and not list(run.rglob("summary.md"))


def test_mode_notes_from_every_point_reach_every_report(sweep: dict):
    import copy
    import io

    from rich.console import Console

    from kernelscope.report.context import build_context
    from kernelscope.report.terminal import render_terminal

    r = copy.deepcopy(sweep)
    for p in r["points"]:  # a note made at every shape is listed once, without shapes
        next(m for m in p["modes"] if m["name"] == "default")["notes"].append("GEMM backends unavailable here: X")
    ctx = build_context(result_from_json(r))
    keys = {n.key: n.value for n in ctx.notes}
    assert keys["default"] == "GEMM backends unavailable here: X"
    assert "still drifted by 52%" in keys["max-autotune @ batch_size=256"]  # only at the shape it happened
    run = result_from_json(r)
    html = render_html(run)
    assert 'id="mode-notes"' in html and "<strong>max-autotune @ batch_size=256</strong>: latency still drifted" in html
    md = render_markdown(run)
    assert "### Notes" in md and "- **max-autotune @ `batch_size=256`**: latency still drifted" in md
    buf = io.StringIO()
    render_terminal(run, Console(file=buf, width=200))
    assert "note max-autotune @ batch_size=256: latency still drifted by 52%" in buf.getvalue()
    assert "note default: GEMM backends unavailable here: X" in buf.getvalue()
