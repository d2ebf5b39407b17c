"""The pure parts of upgrade-check and the sweep: sweep plans, roofline math and peaks, autotune tables from real
H200 logs, numerics rules, the recommendation, dynamic-vs-static, and the report/markdown/terminal views of a
sweep. No torch, no compile."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from kernelscope.analysis.autotune import autotune_results, choice_backend
from kernelscope.analysis.dynamic import dynamic_summary
from kernelscope.analysis.mode import build_mode_result, build_run_result
from kernelscope.analysis.numerics import numerics_verdict
from kernelscope.analysis.recommend import recommend
from kernelscope.analysis.roofline import (
    calibrated_peaks,
    device_key,
    gemm_flops,
    gemm_min_bytes,
    known_peaks,
    merge_calibration,
    peaks_for,
    read_calibration,
    roofline,
)
from kernelscope.analysis.sweep import numeric_axis
from kernelscope.errors import UsageError
from kernelscope.report.context import build_context
from kernelscope.report.html import render_html
from kernelscope.report.markdown import render_markdown
from kernelscope.report.words import autotune_summary, recommendation_text, say, say_all
from kernelscope.result import (
    DynamoStats,
    LatencyStats,
    ModeResult,
    Note,
    NumericsResult,
    RunEnvironment,
    RunResult,
    SweepPoint,
    part_from_json,
    run_from_json,
    to_json,
)
from kernelscope.sweep_plan import parse_sweeps, parse_values, plan_points
from kernelscope.tolerance import equal_nan_for, reference_multiplier, reference_pass, tolerance_for

from .conftest import DATA

RUN = DATA / "h200-torch2.11-kernelscope-run"
H200_LOGS = DATA / "h200-torch2.11-kernelscope" / "linear_gelu" / "modes"


# ------------------------------------------------------------------------------------------------ sweep plans
@pytest.mark.parametrize(("raw", "values"), [
    ("1,16,256", [1, 16, 256]), ("(1, 2),(3, 4)", [(1, 2), (3, 4)]), ("gelu,relu", ["gelu", "relu"]),
    ("0.5, 2", [0.5, 2]), ("'a,b',c", ["a,b", "c"]),
])
def test_sweep_values_split_at_top_level_commas(raw, values):
    assert parse_values(raw) == values


@pytest.mark.parametrize(("items", "message"), [
    (("batch_size",), "not NAME=V1,V2"), (("batch_size=",), "lists no values"), (("b=1,1",), "a value twice"),
    (("b=1", "b=2"), "given twice"), (("1b=3",), "not NAME=V1,V2"),
])
def test_bad_sweeps(items, message):
    with pytest.raises(UsageError, match=message):
        parse_sweeps(items)


def test_sweeps_multiply_and_hook_points_combine():
    plan = plan_points(parse_sweeps(("batch_size=1,16", "seq=128,512")),
                       [{"params": {"inputs": "4x8"}, "input_index": 0}, {"params": {"k": 2}, "sets": {"k": 2}}])
    assert len(plan) == 8
    assert plan[0].params == {"batch_size": 1, "seq": 128, "inputs": "4x8"} and plan[0].input_index == 0
    assert plan[1].sets == {"batch_size": 1, "seq": 128, "k": 2} and plan[1].input_index is None
    assert [p.dirname for p in plan[:2]] == ["p0-batch_size-1_seq-128_inputs-4x8", "p1-batch_size-1_seq-128_k-2"]
    assert plan[0].label == "batch_size=1, seq=128, inputs='4x8'"
    assert len({p.dirname for p in plan}) == 8 and plan[7].label == "batch_size=16, seq=512, k=2"
    with pytest.raises(UsageError, match="more than 64"):
        plan_points(parse_sweeps(("a=" + ",".join(map(str, range(9))), "b=" + ",".join(map(str, range(8))))))


def test_hostile_values_make_safe_directory_names():
    (p,) = plan_points({"name": ["../../etc <x>"]})
    assert "/" not in p.dirname and ".." not in p.dirname and p.dirname.startswith("p0-")


def test_numeric_axis_only_when_one_numeric_parameter_varies():
    assert numeric_axis([{"batch_size": 1}, {"batch_size": 16}]) == "batch_size"
    assert numeric_axis([{"b": 1, "s": 2}, {"b": 2, "s": 4}]) is None
    assert numeric_axis([{"act": "gelu"}, {"act": "relu"}]) is None
    assert numeric_axis([{"b": 1}]) is None


# ------------------------------------------------------------------------------------------------ roofline
def test_gemm_flops_and_minimal_bytes():
    assert gemm_flops(16, 4096, 4096) == 2 * 16 * 4096 * 4096
    # fp16 addmm: A 16x4096, B 4096x4096, C 16x4096, bias 4096, 2 bytes each
    assert gemm_min_bytes(16, 4096, 4096, 2, bias=True) == (16 * 4096 + 4096 * 4096 + 16 * 4096 + 4096) * 2


def test_roofline_against_the_h200_datasheet():
    peaks = known_peaks("NVIDIA H200")
    assert peaks is not None and peaks.matmul_tflops["float16"] == 989.5 and peaks.bandwidth_gbps == 4800
    assert "datasheet" in peaks.source and "sparsity" in peaks.source
    r = roofline(16, 4096, 4096, "float16", 22.4, op="addmm", peaks=peaks)
    assert r.flops == 536_870_912 and r.tflops == pytest.approx(536_870_912 / 22.4e-6 / 1e12)
    assert r.gbps == pytest.approx(r.bytes / 22.4e-6 / 1e9)
    assert r.pct_peak_flops == pytest.approx(100 * r.tflops / 989.5)
    assert r.pct_peak_bw == pytest.approx(100 * r.gbps / 4800)
    # batch 16: intensity ~16 FLOP/B, far below the H200's ridge (~206): memory-bound
    assert r.bound == "memory" and r.intensity == pytest.approx(r.flops / r.bytes)
    assert r.attainable_tflops == pytest.approx(r.intensity * 4800e9 / 1e12)
    big = roofline(8192, 8192, 8192, "bfloat16", 1400.0, peaks=peaks)
    assert big.bound == "compute" and big.attainable_tflops == 989.5


@pytest.mark.parametrize(("name", "row"), [
    ("NVIDIA H200", "H200 SXM"), ("NVIDIA H200 NVL", "H200 NVL"), ("NVIDIA H100 80GB HBM3", "H100 SXM"),
    ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM"),
    ("NVIDIA A100-SXM4-40GB", "A100 40GB"), ("NVIDIA L4", "L4"),
])
def test_known_peaks_by_gpu_name(name, row):
    assert row in known_peaks(name).source


def test_unknown_devices_and_unknown_shapes_have_no_peak_or_roofline():
    assert known_peaks("Some Future GPU") is None and known_peaks(None) is None
    assert roofline(None, 4, 4, "float16", 1.0) is None
    assert roofline(4, 4, 4, None, 1.0) is None
    assert roofline(4, 4, 4, "float16", 0.0) is None
    assert roofline(4, 4, 4, "float16", 1.0, op="bmm") is None  # batch count not recorded
    r = roofline(4, 4, 4, "float32", 1.0)
    assert r is not None and r.pct_peak_flops is None and r.peak_source == ""


def test_calibration_file_round_trip(tmp_path: Path):
    env_cpu = {"device": "cpu", "cpu": "AMD EPYC", "cpu_count": 2}
    env_gpu = {"device": "cuda", "gpu": "NVIDIA H200"}
    data = merge_calibration({}, device_key(env_cpu), {"matmul_tflops": {"float32": 0.1}, "copy_gbps": 10.0})
    data = merge_calibration(data, device_key(env_gpu), {"matmul_tflops": {"bfloat16": 788.0}, "copy_gbps": 4300.0,
                                                          "created": "2026-12-01"})
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(data))
    loaded = read_calibration(path)
    assert set(loaded["devices"]) == {"cpu: AMD EPYC (2 cpus)", "NVIDIA H200"}
    cal = calibrated_peaks(loaded, env_gpu, str(path))
    assert cal.matmul_tflops == {"bfloat16": 788.0} and cal.bandwidth_gbps == 4300.0 and "2026-12-01" in cal.source
    peaks = peaks_for(env_gpu, loaded)
    assert peaks["datasheet"]["matmul_tflops"]["bfloat16"] == 989.5 and peaks["calibrated"]["bandwidth_gbps"] == 4300
    r = roofline(8192, 8192, 8192, "bfloat16", 1500.0, peaks=known_peaks("NVIDIA H200"), calibrated=cal)
    assert r.pct_calibrated_flops == pytest.approx(100 * r.tflops / 788.0)
    # A CPU has no datasheet row: its calibrated ceilings are the peak.
    cpu = peaks_for(env_cpu, loaded)
    assert cpu["datasheet"] is None and cpu["calibrated"]["matmul_tflops"] == {"float32": 0.1}
    assert read_calibration(tmp_path / "missing.json") == {}
    with pytest.raises(UsageError, match="does not exist"):
        read_calibration(tmp_path / "missing.json", required=True)
    (tmp_path / "bad.json").write_text('{"schema": "other"}')
    with pytest.raises(UsageError, match="not a kernelscope calibration"):
        read_calibration(tmp_path / "bad.json")


def test_roofline_on_the_real_h200_run():
    run = RUN / "linear_gelu"
    capture = json.loads((run / "modes" / "max-autotune" / "capture.json").read_text())
    env = json.loads((run / "result.json").read_text())["environment"]
    mr = build_mode_result(run, capture, peaks=peaks_for(env, None))
    (g,) = mr.gemms
    assert (g.m, g.n, g.k, g.dtype) == (16, 4096, 4096, "float16")
    r = g.roofline
    assert r.peak_source == "datasheet" and r.peak_tflops == 989.5
    assert r.tflops == pytest.approx(2 * 16 * 4096 * 4096 / (g.time_us_per_iter * 1e-6) / 1e12)
    # A batch-16 GEMM streams its 32 MiB weight: bandwidth-bound, a large share of HBM, a tiny share of FLOPs.
    assert r.bound == "memory" and 20 < r.pct_peak_bw < 100 and r.pct_peak_flops < 10


# ------------------------------------------------------------------------------------------------ autotune
def test_autotune_table_from_the_h200_log_is_tied_to_the_gemm():
    run = RUN / "linear_gelu"
    capture = json.loads((run / "modes" / "max-autotune" / "capture.json").read_text())
    mr = build_mode_result(run, capture)
    log = (run / capture["log"]).read_text()
    (at,) = autotune_results(log, mr.gemms, ["ATEN", "TRITON", "NVGEMM"])
    assert mr.autotune == autotune_results(log, mr.gemms, capture["config"]["gemm_backends"])
    assert at.gemm == "gemm0" and at.op == "addmm" and at.sizes == "16x4096, 16x4096, 4096x4096"
    assert at.dtypes == "torch.float16, torch.float16, torch.float16"
    assert at.winner_backend == "Triton" and at.winner == at.choices[0].name
    assert at.choices[0].time_ms == min(c.time_ms for c in at.choices)
    assert "BLOCK_M" in at.choices[0].detail
    # 20 choices benchmarked, 10 printed: an absent backend may just be slower, so it is not called missing.
    assert at.n_choices == 20 and at.missing_backends == ()
    assert at.notes == (Note("autotune-truncated", {"shown": 10, "of": 20, "absent": ["ATEN", "NVGEMM"]}),)
    assert say_all(at.notes) == "Inductor printed the fastest 10 of 20 choices (ATEN, NVGEMM not among them)"
    complete = log.replace("for 20 choices", "for 10 choices")
    (full,) = autotune_results(complete, mr.gemms, ["ATEN", "TRITON", "NVGEMM"])
    assert full.missing_backends == ("ATEN", "NVGEMM") and "no ATEN, NVGEMM choice" in say_all(full.notes)


def test_autotune_recorded_h200_table_counts_and_library_winner():
    log = (H200_LOGS / "max-autotune" / "log.txt").read_text()
    (at,) = autotune_results(log, ())
    assert at.gemm is None and len(at.choices) == 10 and at.n_choices == 20
    assert (at.winner, at.choices[0].time_ms) == ("triton_mm_8", 0.0224)
    assert "fastest 10 of 20" in say(at.notes[0])
    nv = (RUN / "linear_gelu-nvgemm-aten" / "modes" / "max-autotune" / "log.txt").read_text()
    (lib,) = autotune_results(nv, ())
    assert [(c.name, c.backend, c.time_ms) for c in lib.choices] == [("addmm", "ATen", 0.076),
                                                                    ("bias_addmm", "ATen", 0.0971)]
    assert autotune_summary(lib) == "ATen addmm 0.076 ms won (2 choices)"


@pytest.mark.parametrize(("name", "backend"), [
    ("triton_mm_8", "Triton"), ("cpp_CppMicroGemmFP32Vec_0", "C++"), ("_mkl_linear", "ATen"), ("bias_addmm", "ATen"),
    ("nv_universal_gemm_3", "NVGEMM"), ("cutlass_3x_gemm_0", "CUTLASS"), ("decompose_k_mm_2", "Triton"),
])
def test_choice_backends(name, backend):
    assert choice_backend(name) == backend


def test_no_log_no_tables():
    assert autotune_results(None, ()) == () and autotune_results("nothing here\n", ()) == ()


# ------------------------------------------------------------------------------------------------ numerics rules
def test_tolerance_table_is_dtype_aware():
    assert tolerance_for("bfloat16").atol > tolerance_for("float16").atol > tolerance_for("float32").atol


# The rule is torch 2.14.1's same(): 3x eager's rmse + tol/10 for fp16/bf16 outputs (it was 2x, and a
# mode element-wise within tolerance of the reference passed whatever eager did: torch has no such shortcut; its
# shortcut is allclose to eager at tol). tests/test_numerics_rule.py checks it against torch's own same().
@pytest.mark.parametrize(("mode_rmse", "eager_rmse", "allclose_eager", "expected"), [
    (1e-3, 1e-3, False, True),  # as inaccurate as eager: fine
    (2.9e-3, 1e-3, False, True),  # within 3x + tol/10 (fp16: tol 1e-3): the 2x rule failed this
    (3.2e-3, 1e-3, False, False),  # markedly less accurate than eager
    (1.0, 1e-3, True, True),  # allclose to eager at tol: pass whatever the rmse
    (float("nan"), 1e-3, False, False),  # NaN in the mode's error never passes
])
def test_reference_rule(mode_rmse, eager_rmse, allclose_eager, expected):
    tol = tolerance_for("float16")
    mult = reference_multiplier("float16", 4096, (4096,), tol.same_tol)
    assert mult == 3.0
    assert reference_pass(allclose_eager=allclose_eager, nan_corner=False, mode_rmse=mode_rmse,
                          eager_rmse=eager_rmse, multiplier=mult, tol=tol.same_tol,
                          equal_nan=equal_nan_for("float16")) is expected


def test_numerics_verdict_combines_eager_and_reference():
    def verdict(numerics: dict) -> str:  # numerics in result.json's form
        return numerics_verdict(part_from_json(NumericsResult, numerics)).status

    assert verdict({"vs_eager": {"pass": False}, "vs_reference": {"pass": True}}) == "pass"  # more accurate
    assert verdict({"vs_eager": {"pass": True}, "vs_reference": {"pass": False, "reason": "x"}}) == "fail"
    assert verdict({"vs_eager": {"pass": False, "reason": "y"}}) == "fail"
    assert verdict({}) == "n/a"
    assert numerics_verdict(None).status == "n/a"


# ------------------------------------------------------------------------------------------------ recommendation
def lat(median: float, spread: float = 0.01, n: int = 21) -> LatencyStats:
    samples = tuple(median * (1 + spread * (i - n // 2) / (n // 2)) for i in range(n))
    s = sorted(samples)
    return LatencyStats(median=median, iqr=s[3 * n // 4] - s[n // 4], q1=s[n // 4], q3=s[3 * n // 4], min=s[0],
                        mean=median, samples=samples, timer="perf_counter")


def mode(name: str, median: float | None, *, status: str = "ok", first: float = 1.0, numerics: dict | None = None,
         spread: float = 0.01, dynamo: dict | None = None, kernels: float = 3) -> ModeResult:
    ok = status == "ok"
    return ModeResult(name=name, status=status, latency_ms=lat(median, spread) if median else None,
                      first_call_s=first if ok else None,
                      numerics=part_from_json(NumericsResult, numerics) if numerics else None,
                      dynamo=part_from_json(DynamoStats, dynamo) if dynamo else None,
                      kernels_per_iter=kernels if ok else None,
                      error="boom" if status != "ok" else "", error_kind="compile" if status != "ok" else "")


def test_recommend_a_compiled_mode_only_beyond_noise():
    r = recommend([mode("eager", 2.0), mode("default", 1.0, first=10), mode("max-autotune", 1.001, first=60)])
    assert r.mode == "default" and "beyond noise" in recommendation_text(r)
    assert "within noise of max-autotune" in recommendation_text(r)
    assert [c.call for c in r.candidates] == ["baseline", "faster", "faster"]
    assert r.candidates[1].low < 2.0 < r.candidates[1].high


def test_recommend_never_picks_a_mode_within_noise_of_eager_through_a_tie():
    # Ties are not transitive: "default" (noisy) is within noise of both eager and the fastest mode; its shorter
    # compile must not win it the recommendation, since it is not faster than eager beyond noise.
    r = recommend([mode("eager", 1.0), mode("default", 0.9, first=1, spread=0.3), mode("dynamic", 0.8, first=50)])
    calls = {c.mode: c.call for c in r.candidates}
    assert calls == {"eager": "baseline", "default": "within noise", "dynamic": "faster"}
    assert r.mode == "dynamic" and "faster than eager beyond noise" in recommendation_text(r)


def test_recommend_eager_when_compiling_gains_nothing_or_fails():
    within = recommend([mode("eager", 1.0), mode("default", 0.999, spread=0.2)])
    assert within.mode == "eager" and "within noise of eager" in recommendation_text(within)
    slower = recommend([mode("eager", 1.0), mode("default", 1.5)])
    assert slower.mode == "eager" and "slower beyond noise (default)" in recommendation_text(slower)
    failed = recommend([mode("eager", 1.0), mode("default", None, status="failed")])
    assert failed.mode == "eager" and "no compiled mode worked" in recommendation_text(failed)
    assert "default (failed" in recommendation_text(failed)


def test_recommend_skips_modes_with_bad_numerics_and_survives_a_failed_eager():
    bad = {"vs_eager": {"pass": False, "reason": "30% of elements outside tolerance"}, "vs_reference": {"pass": False}}
    r = recommend([mode("eager", 2.0), mode("default", 1.0, numerics=bad), mode("max-autotune", 1.5)])
    assert r.mode == "max-autotune" and "default (numerics fail" in recommendation_text(r)
    r = recommend([mode("eager", None, status="failed"), mode("default", 1.0)])
    assert r.mode == "default" and "eager did not run" in recommendation_text(r)
    assert recommend([mode("eager", None, status="failed")]).mode is None


# ------------------------------------------------------------------------------------------------ sweep result
HOSTILE = "</script><img src=x onerror=alert(1)>"


def sweep_result() -> RunResult:
    def dyn(recompiles: int, guard: tuple[str, ...] = ()) -> dict:
        return {"recompiles": recompiles, "graphs": 1 if recompiles or not guard else 0, "guard_failures": list(guard)}

    points = [
        SweepPoint({"batch_size": 1}, "batch_size=1", (mode("eager", 1.0), mode("default", 0.5),
                                                         mode("dynamic", 0.55, dynamo=dyn(0)))),
        SweepPoint({"batch_size": 16}, "batch_size=16", (
            mode("eager", 2.0), mode("default", 1.9, spread=0.2),
            mode("dynamic", 1.2, dynamo=dyn(1, ("0/0: tensor 'args[0]' size mismatch at index 0. expected 1, "
                                                 "actual 16" + HOSTILE,)))),
        ),
        SweepPoint({"batch_size": 256}, "batch_size=256", (mode("eager", 30.0), mode("default", None, status="failed"),
                                                             mode("dynamic", 20.0, dynamo=dyn(0), kernels=2))),
    ]
    return build_run_result(points[0].modes, environment=RunEnvironment(device="cpu"),
                            command="kernelscope profile m.py", model="m.py", device="cpu", dtype="float32",
                            settings={}, points=points)


def test_sweep_result_has_points_recommendations_and_dynamic_summary():
    r = sweep_result()
    data = to_json(r)
    assert [p["params"] for p in data["points"]] == [{"batch_size": 1}, {"batch_size": 16}, {"batch_size": 256}]
    assert [m["name"] for m in data["modes"]] == ["eager", "default", "dynamic"]  # the first point's
    assert [rec["mode"] for rec in data["recommendation"]] == ["default", "dynamic", "dynamic"]
    assert data["recommendation"][2]["params"] == {"batch_size": 256}
    dy = data["dynamic"]
    assert dy["static_mode"] == "default" and dy["recompiles"] == 1
    assert [p["recompiles"] for p in dy["points"]] == [0, 1, 0]
    assert [p["call"] for p in dy["points"]] == ["slower", "faster", "n/a"]
    assert run_from_json(json.loads(json.dumps(data))) == r  # JSON round trip keeps the sweep


def test_a_run_without_sweep_keeps_modes_and_gets_one_recommendation():
    r = build_run_result([mode("eager", 1.0), mode("default", 0.5)], environment=RunEnvironment(), command="",
                         model="m.py", device="cpu", dtype="float32", settings={})
    data = to_json(r)
    assert data["points"] == [] and len(data["modes"]) == 2
    (rec,) = data["recommendation"]
    assert rec["params"] == {} and rec["mode"] == "default"


def test_report_shows_the_sweep_chart_dynamic_and_escapes():
    r = sweep_result()
    ctx = build_context(r)
    sw = ctx.sweep
    assert sw.axis == "batch_size" and sw.modes == ("eager", "default", "dynamic")
    assert [row.recommendation.mode for row in sw.rows] == ["default", "dynamic", "dynamic"]
    assert [c.status for c in sw.rows[2].cells] == ["ok", "failed", "ok"]
    chart = sw.chart
    assert not chart.empty and {lbl.text for lbl in chart.labels} >= {"1", "16", "256", "batch_size (log scale)"}
    assert len(chart.rects) == 5  # default at 2 shapes, dynamic at 3; eager is the baseline
    # log x axis: 16 sits at the middle between 1 and 256
    xs = sorted({round(rect.x + 4, 3) for rect in chart.rects})
    assert xs[1] - xs[0] == pytest.approx(xs[2] - xs[1])
    html = render_html(r)
    for section in ("sweep", "dynamic", "recommendation"):
        assert f'id="{section}"' in html
    assert "<svg" in html and "Speedup vs eager across shapes" in html
    assert HOSTILE not in html and "&lt;/script&gt;&lt;img" in html
    md = render_markdown(r)
    assert "### Shape sweep (3 points" in md and "### Dynamic shapes (dynamic vs static default)" in md
    assert "- **`batch_size=16`**: use **dynamic**" in md
    # Guard-failure text goes in a code span (Markdown renders none of it as HTML); nowhere else does it appear.
    import re

    assert "<img" not in re.sub(r"(`+).*?\1", "", md) and "`0/0: tensor 'args[0]' size mismatch" in md


def test_terminal_prints_the_sweep_and_recommendations():
    from rich.console import Console

    console = Console(record=True, width=200)
    from kernelscope.report.terminal import render_terminal

    render_terminal(sweep_result(), console)
    text = console.export_text()
    assert "shape sweep: 3 points" in text and "recommendation @ batch_size=256: use dynamic" in text
    assert "dynamic vs static default: 1 recompilation(s) across 3 shape(s)" in text


def test_dynamic_summary_absent_without_dynamic_mode():
    assert dynamic_summary([SweepPoint({}, "", (mode("eager", 1.0),))]) is None


def test_chart_values_are_speedups():
    r = sweep_result()
    rect_titles = [rect.title for rect in build_context(r).sweep.chart.rects]
    assert any(t.startswith("default @ batch_size=1: 2.00× faster (95% CI") for t in rect_titles)
    assert math.isclose(2.0, 1.0 / 0.5)


def test_tensorboard_scalars_per_point_and_mode(tmp_path: Path):
    import dataclasses

    from kernelscope.report.tensorboard import write_scalars

    r = sweep_result()
    points = tuple(dataclasses.replace(p, modes=tuple(
        dataclasses.replace(m, trace=f"tb/p{i}-b/{m.name}/kernelscope.1.pt.trace.json.gz") for m in p.modes))
        for i, p in enumerate(r.points))
    write_scalars(dataclasses.replace(r, points=points), tmp_path / "tb")
    runs = sorted(str(p.parent.relative_to(tmp_path)) for p in (tmp_path / "tb").rglob("events.out.tfevents.*"))
    # the failed default at the third shape measured nothing: no scalars there
    assert runs == ["tb/p0-b/default", "tb/p0-b/dynamic", "tb/p0-b/eager", "tb/p1-b/default", "tb/p1-b/dynamic",
                    "tb/p1-b/eager", "tb/p2-b/dynamic", "tb/p2-b/eager"]


def test_new_analysis_and_command_modules_do_not_import_torch():
    import subprocess
    import sys

    code = ("import sys; import kernelscope.analysis.recommend, kernelscope.analysis.autotune, "
            "kernelscope.analysis.roofline, kernelscope.analysis.dynamic, kernelscope.analysis.sweep, "
            "kernelscope.analysis.numerics, kernelscope.analysis.speedup, kernelscope.analysis.failures, "
            "kernelscope.sweep_plan, kernelscope.commands.calibrate, kernelscope.commands.profile, "
            "kernelscope.capture.runner, kernelscope.run.profile, kernelscope.run.upgrade; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
