"""The report context: what html, Markdown and the terminal show, asserted on the objects (not on HTML)."""

from __future__ import annotations

import dataclasses
import math
import subprocess
import sys

import pytest

from kernelscope import fmt
from kernelscope.analysis.facts import with_facts
from kernelscope.analysis.numerics import numerics_check
from kernelscope.analysis.stats import bootstrap_ratio_of_medians, latency_ratio
from kernelscope.fmt import KV, environment_rows, flatten
from kernelscope.report import charts
from kernelscope.report.context import build_context, kernel_table
from kernelscope.result import LatencyStats, ModeResult, NumericsResult, OutputError
from kernelscope.tolerance import TOLERANCES, tolerance_for
from tests.conftest_reports import (
    DATA,
    HOSTILE,
    ZERO_X,
    big_h200_211,
    seed_h200_211,
    seed_h200_2141,
    timings,
    with_coverage,
)


def test_speedup_calls_on_the_h200_seed_run():
    # GIVEN the seed model on the H200 (torch 2.11): eager 61.9 us, default 156 us, max-autotune 77.5 us
    ctx = build_context(seed_h200_211())
    rows = {r.name: r for r in ctx.rows}
    # THEN eager is the baseline and both compiled modes are slower, outside the noise
    assert rows["eager"].speedup.call == "baseline"
    default = rows["default"].speedup
    assert default.call == "slower"
    assert default.method == "bootstrap"
    assert default.value == pytest.approx(0.061875200271606444 / 0.15564800500869752)
    assert default.low < default.value < default.high < 1.0
    assert rows["max-autotune"].speedup.call == "slower"
    assert rows["max-autotune"].speedup.value == pytest.approx(0.7984, abs=1e-4)


def test_big_model_modes_against_eager():
    # bf16 4096^3: every mode runs the same cuBLASLt GEMM; compiled modes are 2-3% slower with a 1% IQR
    ctx = build_context(big_h200_211())
    calls = {r.name: r.speedup.call for r in ctx.rows}
    assert calls == {"eager": "baseline", "default": "slower", "max-autotune": "slower"}
    assert ctx.tolerance.dtype == "bfloat16"


def test_within_noise_when_the_interval_crosses_one():
    a = timings(0.100, rel_iqr=0.05, seed=1)
    b = timings(0.101, rel_iqr=0.05, seed=2)
    r = latency_ratio(b, a)
    assert r.method == "bootstrap"
    assert r.within_noise is True
    assert r.low < 1.0 < r.high
    # and a clear 10% shift with a 2% spread is not noise
    c = timings(0.110, rel_iqr=0.02, seed=3)
    r = latency_ratio(c, a)
    assert r.within_noise is False
    assert 1.0 < r.low < r.value < r.high


def test_bootstrap_is_seeded_and_reproducible():
    a, b = timings(1.0, seed=4).samples, timings(1.2, seed=5).samples
    assert bootstrap_ratio_of_medians(b, a) == bootstrap_ratio_of_medians(b, a)
    assert bootstrap_ratio_of_medians(b, a, seed=1) != bootstrap_ratio_of_medians(b, a, seed=2)


def test_ratio_without_samples_falls_back_to_iqr_overlap():
    base = LatencyStats(median=1.0, iqr=0.1, q1=0.95, q3=1.05, min=0.9, mean=1.0)
    near = LatencyStats(median=1.02, iqr=0.1, q1=0.97, q3=1.07, min=0.9, mean=1.0)
    far = LatencyStats(median=2.0, iqr=0.1, q1=1.95, q3=2.05, min=1.9, mean=2.0)
    assert latency_ratio(near, base).method == "iqr"
    assert latency_ratio(near, base).within_noise is True
    assert latency_ratio(far, base).within_noise is False
    assert latency_ratio(None, base).method == "none"


def test_no_eager_means_no_speedup():
    ctx = build_context(seed_h200_2141())
    row = ctx.rows[0]
    assert row.name == "max-autotune"
    assert row.speedup.call == "n/a"
    assert row.speedup.value is None


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [("float16", "float16"), ("torch.bfloat16", "bfloat16"), ("fp32", "float32"), ("half", "float16"),
     ("float64", "float64"), ("int8", "float32"), (None, "float32"), ("", "float32")],
)
def test_tolerance_lookup(dtype, expected):
    assert tolerance_for(dtype).dtype == expected


@pytest.mark.parametrize(
    ("dtype", "abs_err", "rel_err", "status"),
    [
        ("float16", 0.00146484375, 0.0007, "pass"),  # the seed max-autotune run: one fp16 ulp
        ("float16", 0.5, 0.2, "fail"),
        ("float16", 0.5, 0.001, "pass"),  # large outputs: the relative error shows it is rounding
        ("float32", 0.00146484375, 0.0007, "fail"),  # the same error is far too large for fp32
        ("bfloat16", 0.03, 0.02, "pass"),
        ("float32", None, None, "n/a"),
    ],
)
def test_numerics_pass_fail_against_the_dtype_tolerance(dtype, abs_err, rel_err, status):
    mode = ModeResult(name="default", status="ok", max_abs_error=abs_err, max_rel_error=rel_err)
    check = numerics_check(mode, dtype)
    assert check.status == status
    assert check.tolerance is TOLERANCES[tolerance_for(dtype).dtype]


def test_numerics_recorded_allclose_decides_and_eager_is_the_reference():
    # the worker's element-wise check (numerics.vs_eager.pass) decides over the maxima
    mode = ModeResult(name="default", status="ok", max_abs_error=0.5, max_rel_error=0.5,
                      numerics=NumericsResult(vs_eager=OutputError(passed=True)))
    assert numerics_check(mode, "float16").status == "pass"
    assert numerics_check(ModeResult(name="eager", status="ok", max_abs_error=0.0), "float16").status == "reference"


def test_fallback_recommendations_for_failed_modes():
    # GIVEN the torch 2.14.1 run where NVGEMM alone failed and max-autotune (ATEN,TRITON) worked
    ctx = build_context(seed_h200_2141())
    (failure,) = ctx.failures
    assert failure.mode.name == "max-autotune-nvgemm"
    assert "add ATEN to --gemm-backends" in failure.recommendation
    assert "use mode max-autotune instead" in failure.recommendation
    # GIVEN the big model where only eager and default ran: the working compiled mode is recommended
    big = build_context(big_h200_211(autotune_failed=True))
    assert "use mode default instead" in big.failures[0].recommendation
    # GIVEN no compiled mode worked: keep eager
    r = big_h200_211(autotune_failed=True)
    only_eager = with_facts(dataclasses.replace(r, modes=(r.modes[0], r.modes[2])))
    assert "keep eager for this model" in build_context(only_eager).failures[0].recommendation
    timeout = dataclasses.replace(r.modes[2], status="timeout", error="")
    rec = build_context(with_facts(dataclasses.replace(r, modes=(r.modes[0], timeout)))).failures[0].recommendation
    assert "raise --timeout" in rec


def test_kernel_table_keeps_top_kernels_and_shows_memops_apart():
    eager = big_h200_211().modes[0]
    table = kernel_table(eager.kernels, limit=1)
    assert [k.name for k in table.top] == ["nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"]
    assert table.hidden_count == 1
    assert table.hidden_time_us == pytest.approx(15.654)
    assert [k.name for k in table.memops] == ["Memset (Device)"]


def test_environment_rows_show_whatever_keys_exist():
    rows = {kv.key: kv.value for kv in environment_rows(seed_h200_211().environment)}
    assert rows["torch"] == "2.11.0+cu130"
    assert rows["gemm_backends / NVGEMM / available"] == "no"
    assert "No module named 'cutlass'" in rows["gemm_backends / NVGEMM / reason"]
    # what the run did not record (a CUDA run has no CPU model here) is left out, not shown as a dash
    assert "cpu" not in rows and "interpreter" not in rows and "sm_count" not in rows
    assert flatten({"a": [1, 2], "b": {}, "c": None}) == [KV("a", "1, 2"), KV("b", fmt.DASH), KV("c", fmt.DASH)]


def test_charts_geometry():
    ctx = build_context(seed_h200_211())
    lat = ctx.latency_chart
    assert len(lat.rects) == 3  # one bar per mode
    bars = {r.title.split(":")[0]: r.w for r in lat.rects}
    assert bars["default"] > bars["max-autotune"] > bars["eager"]  # 156 > 77.5 > 61.9 us
    stack = ctx.kernel_chart
    assert [r.cls for r in stack.rects] == ["cat-gemm", "cat-pointwise"] * 3
    timeline = ctx.timeline_chart
    assert len(timeline.rects) == 3 + 3 + 2  # kernels of one iteration per mode
    assert {c for c, _ in timeline.legend} == {"cat-gemm", "cat-pointwise"}
    assert charts.category_class("<script>") == "cat-other"
    # iterations 100x apart in length: each row gets its own scale rather than a sliver
    r = seed_h200_211()
    slow = dataclasses.replace(r.modes[0], timeline=tuple(
        dataclasses.replace(e, start_us=e.start_us * 100, dur_us=e.dur_us * 100) for e in r.modes[0].timeline))
    own = charts.timeline_chart((slow, r.modes[2]))
    assert "own scale" in own.caption
    widths = [sum(rect.w for rect in own.rects if rect.y < charts.TOP + charts.ROW_H * (i + 1) and
                  rect.y > charts.TOP + charts.ROW_H * i) for i in range(2)]
    assert min(widths) > 0.3 * max(widths)
    assert "own scale" not in timeline.caption
    assert charts.nice_ticks(0.156) == [0.0, 0.05, 0.1, 0.15, 0.2]
    # thousands of kernels in an iteration (a 64-layer model): kernels closer than a pixel share a bar, so a row
    # has at most one bar per MIN_BAR_PX of plot, and the bar says what it holds
    from kernelscope.result import TimelineEntry

    many = dataclasses.replace(r.modes[0], timeline=tuple(
        TimelineEntry(f"triton_poi_fused_{i}", "pointwise" if i % 3 else "gemm", i * 0.5, 0.3) for i in range(5000)))
    dense = charts.timeline_chart((many,))
    assert 0 < len(dense.rects) <= charts.WIDTH / charts.MIN_BAR_PX
    assert all(b.x >= a.x + a.w - 1e-9 for a, b in zip(dense.rects, dense.rects[1:]))  # bars do not overlap
    assert dense.rects[0].title.startswith("12 kernels, +0 µs to +5.80 µs: gemm 4, pointwise 8\ntriton_poi_fused_0, ")
    # a long mode name gets the room it needs left of every plot (it was cut to "TEN+TRITON+NVGEMM" at 150 px)
    long = [dataclasses.replace(m, name="max-autotune:ATEN+TRITON+NVGEMM") if m.name == "max-autotune" else m
            for m in r.modes]
    for chart in (charts.latency_chart(long), charts.kernel_stack_chart(long), charts.timeline_chart(long)):
        (label,) = [lb for lb in chart.labels if lb.text == "max-autotune:ATEN+TRITON+NVGEMM"]
        assert label.x - 8.5 * len(label.text) >= 0
        assert min(rect.x for rect in chart.rects) == label.x + 8


def test_report_layer_does_not_import_torch():
    code = (
        "import sys\n"
        "import kernelscope.report.html, kernelscope.report.markdown, kernelscope.report.terminal\n"
        "import kernelscope.report.compare, kernelscope.report.check, kernelscope.report.tensorboard\n"
        "import kernelscope.commands.compare, kernelscope.commands.check\n"
        "assert 'torch' not in sys.modules, 'torch imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)



@pytest.mark.parametrize("low, high, text", [
    (1 / 2.54, 1 / 2.49, "2.49–2.54× slower"),  # both ends slower: the smaller slowdown first
    (1.10, 1.20, "1.10–1.20× faster"),
    (1 / 1.20, 1.10, "1.20× slower to 1.10× faster"),  # straddles 1: the slow end first
    (1.10, 1 / 1.20, "1.20× slower to 1.10× faster"),  # ends in either order
    (0.9995, 1.10, "1.00–1.10× faster"),  # an end that prints as 1.00 has no direction
    (1.0, 1.0, "1.00×"),
    (None, 1.1, ""), (0.0, 1.1, ""),
])
def test_speedup_interval_reads_one_way(low, high, text):
    assert fmt.speedup_interval(low, high) == text
    assert not ZERO_X.search(text)


@pytest.mark.parametrize("r, text", [(0.907, "1.10× faster"), (1.12, "1.12× slower"), (1 / 2.52, "2.52× faster"),
                                     (1.0, "1.00×"), (None, fmt.DASH)])
def test_change_reads_a_latency_ratio_one_way(r, text):
    # new / old (head / base, after / before): "0.907× after/before" is "1.10× faster"
    assert fmt.change(r) == text


def test_change_interval_and_mirrored_ticks():
    assert fmt.change_interval(0.393, 0.402) == "2.49–2.54× faster"
    assert fmt.change_interval(1.0, 1.02) == "1.00–1.02× slower"
    assert fmt.change_interval(0.9, 1.2) == "1.20× slower to 1.11× faster"
    assert [fmt.factor_tick(t) for t in (0.5, 0.8, 1.0, 1.25, 2.0)] == [
        "2× slower", "1.25× slower", "1×", "1.25× faster", "2× faster"]
    # the tick picker offers factors in mirrored pairs: 2 and 0.5, never 0.67 or 0.8 alone
    ticks = charts._log_ticks(math.log(1 / 6), math.log(6), 600, min_gap=20)
    assert ticks == sorted(1 / t for t in ticks)
    assert all(not ZERO_X.search(fmt.factor_tick(t)) for t in ticks)


def test_sweep_chart_ticks_are_mirrored_on_a_real_sweep():
    from kernelscope.report.io import load_result

    chart = build_context(load_result(DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu-sweep")).sweep.chart
    ticks = [lb.text for lb in chart.labels if lb.cls == "tick" and lb.anchor == "end"]
    assert ticks == ["5× slower", "3× slower", "2× slower", "1.5× slower", "1.25× slower", "1×", "1.25× faster"]


def test_coverage_rows_print_what_the_result_says():
    ctx = build_context(with_coverage(seed_h200_211()))
    by = {c.mode: c for c in ctx.coverage}
    assert by["eager"].line == ("1 of 2 GEMM-class ops attributed to a kernel (1 convolution by the CPU op that "
                                "launched the kernel (its name does not say GEMM))")
    assert not by["eager"].complete and by["eager"].missing == (
        f"{HOSTILE} stem.proj 1568 × 768 × 768 (model.py:12): launched no kernel in the trace",)
    assert (by["default"].complete, by["default"].warning, by["default"].vs_eager) == (
        True, False, "2 GEMM-class ops, as in eager")
    assert by["max-autotune"].warning and by["max-autotune"].vs_eager.startswith(
        "3 GEMM-class ops against eager's 2: 1 more than decomposition explains")
    # a result without the self-check (from before it) shows none
    assert build_context(seed_h200_211()).coverage == ()
