"""One numerics call per mode in every table, and each output's errors in every renderer.

The runs here carry the numbers of the H200 investigation (benchmarks/results/h200-resnet50-numerics-2026-12-04.jsonl:
torchvision ResNet-50, batch 8, bf16; one output of 8 x 1000 logits): eager rmse 0.132 against float64, compiled
default 0.280 (2.12x), the output's rms 25.5 and largest magnitude 111.5; and the zoo capture's (tv_resnet50, made
against a reference of the already-cast weights): eager 0.0673, default 0.261 (3.88x, which torch's rule fails too).
"""

from __future__ import annotations

import dataclasses
import html
import io
import json

import pytest
from rich.console import Console

from kernelscope.analysis.facts import with_facts
from kernelscope.analysis.numerics import mode_numerics
from kernelscope.report.context import build_context, numerics_call
from kernelscope.report.html import render_html
from kernelscope.report.markdown import render_markdown
from kernelscope.report.terminal import render_terminal
from kernelscope.report.words import PRECISION_HINT
from kernelscope.result import (
    SCHEMA,
    ModeConfig,
    ModeResult,
    Note,
    NumericsResult,
    RunEnvironment,
    RunResult,
    part_from_json,
)
from kernelscope.result_file import load_result, write_result
from tests.conftest_reports import HOSTILE

TOL = {"dtype": "bfloat16", "atol": 0.06, "rtol": 0.06, "same_tol": 0.001, "equal_nan": True,
       "rule": "torch._dynamo.utils.same (torch 2.14.1)", "vs_reference_rule": "torch's rule per output"}
REF = {"dtype": "float64", "device": "cuda", "weights": "float32"}


def _output(name: str, rmse: float, eager_rmse: float, *, max_abs: float, vs_eager_max: float) -> dict:
    bound = 3.0 * eager_rmse + 0.001 / 10
    return {"name": name, "shape": [8, 1000], "dtype": "bfloat16", "elements": 8000, "rms": 25.4768,
            "max_abs_value": 111.5426,
            "vs_eager": {"max_abs": vs_eager_max, "rmse": 0.25, "mismatch_fraction": 0.0135, "pass": False},
            "vs_reference": {"max_abs": max_abs, "rmse": rmse, "eager_rmse": eager_rmse, "multiplier": 3.0,
                             "bound_rmse": bound, "same_allclose": False, "pass": rmse <= bound,
                             "rel_rmse": rmse / 25.4768, "new_nonfinite": 0}}


def _numerics(out: dict, *, eager: bool = False, reference: dict = REF) -> dict:
    vr = out["vs_reference"]
    mode_vr = {k: vr[k] for k in ("max_abs", "rmse", "eager_rmse", "multiplier", "bound_rmse", "pass")}
    if not vr["pass"]:
        mode_vr["reason"] = (f"{out['name']}: rmse {vr['rmse']:.3g} vs the {reference['dtype']} reference > 3 x "
                             f"eager's {vr['eager_rmse']:.3g} + tol 0.001/10 = {vr['bound_rmse']:.3g}")
    ve = {"max_abs": 0.0, "pass": True} if eager else {**out["vs_eager"], "reason": "1.350% of elements outside"}
    return {"vs_eager": ve, "tolerance": TOL, "reference": reference, "vs_reference": mode_vr, "outputs": [out]}


def resnet_run(default_rmse: float = 0.2802, eager_rmse: float = 0.1320, name: str = "output",
               reference: dict = REF) -> RunResult:
    eager_out = _output(name, eager_rmse, eager_rmse, max_abs=0.489, vs_eager_max=0.0)
    eager_out["vs_eager"] = {"max_abs": 0.0, "rmse": 0.0, "mismatch_fraction": 0.0, "pass": True}
    default_out = _output(name, default_rmse, eager_rmse, max_abs=1.218, vs_eager_max=1.5)
    modes = (
        ModeResult(name="eager", status="ok", max_abs_error=0.0, max_rel_error=0.0, kernels_per_iter=120,
                   numerics=part_from_json(NumericsResult, _numerics(eager_out, eager=True, reference=reference)),
                   config=ModeConfig(compiled=False)),
        ModeResult(name="default", status="ok", max_abs_error=1.5, max_rel_error=0.0134, kernels_per_iter=60,
                   numerics=part_from_json(NumericsResult, _numerics(default_out, reference=reference)),
                   config=ModeConfig(compiled=True)),
    )
    return with_facts(RunResult(schema=SCHEMA, tool_version="t", created="2026-12-04",
                                command="kernelscope profile tv_resnet.py", model="tv_resnet.py", device="cuda",
                                dtype="bfloat16", modes=modes,
                                environment=RunEnvironment(device="cuda", torch="2.11.0+cu130")))


def terminal(result: RunResult) -> str:
    buf = io.StringIO()
    render_terminal(result, Console(file=buf, width=200, color_system=None))
    return buf.getvalue()


# ------------------------------------------------------------------------------------------------ the result
def test_per_output_errors_reach_result_json_and_back(tmp_path):
    # GIVEN a run whose modes recorded each output's errors WHEN it is written and read back as result.json
    r = load_result(write_result(tmp_path, resnet_run()))
    (out,) = r.mode("default").numerics.outputs
    # THEN the output keeps its path, shape, scale and torch's figures
    assert (out.name, out.shape, out.dtype, out.rms, out.max_abs_value) == ("output", (8, 1000), "bfloat16",
                                                                             25.4768, 111.5426)
    vr = out.vs_reference
    assert (vr.rmse, vr.eager_rmse, vr.multiplier, vr.same_allclose) == (0.2802, 0.1320, 3.0, False)
    assert vr.bound_rmse == pytest.approx(0.3961) and vr.rel_rmse == pytest.approx(0.011, abs=1e-3)
    assert r.mode("default").numerics.tolerance.rule == "torch._dynamo.utils.same (torch 2.14.1)"
    assert r.mode("default").numerics.reference.weights == "float32"
    # and result.json keeps the keys the worker wrote
    data = json.loads((tmp_path / "result.json").read_text())
    assert data["modes"][1]["numerics"]["outputs"][0]["vs_reference"]["pass"] is True


def test_resnet_bf16_passes_torchs_rule_with_its_numbers_and_the_hint():
    # GIVEN the H200 ResNet-50 bf16 numbers: compiled 2.12x eager's rmse against float64 (torch's same() says True)
    run = resnet_run()
    default = run.mode("default")
    v = default.numerics_verdict
    assert v == mode_numerics(default, "bfloat16")  # decided once, when the result was built
    # THEN the one call passes, says which rule, and since 2.12x >= 1.5x, how to tell higher precision from error
    assert v.status == "pass" and v.vs_eager is False and v.against == "reference"
    assert v.tolerance.dtype == "bfloat16"
    assert v.reason.code == "differs-but-passes-rule" and v.reason.args["rule"] == "rmse-within"
    assert v.hint == Note("precision-casts", {"dtype": "bfloat16"})
    call = numerics_call(default)  # in words
    assert "passes torch's accuracy rule" in call.reason
    assert "rmse 0.28 ≤ 3 × eager's 0.132 + 0.001/10 = 0.396" in call.reason
    assert call.hint == PRECISION_HINT.format(dtype="bfloat16") and "emulate_precision_casts = True" in call.hint
    (o,) = build_context(run).numerics[1].outputs
    assert (o.name, o.shape, o.status, o.rms, o.max_value) == ("output", "8×1000", "pass", 25.4768, 111.5426)
    assert o.relative == pytest.approx(0.2802 / 25.4768)
    assert o.rule == "rmse 0.28 ≤ 3 × eager's 0.132 + 0.001/10 = 0.396"


def test_the_zoo_capture_fails_and_names_the_output_and_how_much():
    # GIVEN the zoo capture's numbers (3.88x eager's rmse): torch's rule fails it as well
    run = resnet_run(default_rmse=0.2611, eager_rmse=0.0673, name="logits")
    v = numerics_call(run.mode("default"))
    assert v.status == "fail" and v.reason.startswith("logits: rmse 0.261 vs the float64 reference > 3 x eager's")
    assert "emulate_precision_casts" in v.hint
    (o,) = build_context(run).numerics[1].outputs
    assert o.status == "fail" and o.rule == "rmse 0.261 > 3 × eager's 0.0673 + 0.001/10 = 0.202"
    # eager itself gets no hint: it is the baseline
    assert run.mode("eager").numerics_verdict.status == "reference"
    assert run.mode("eager").numerics_verdict.hint is None and numerics_call(run.mode("eager")).hint == ""


# ------------------------------------------------------------------------------------------------ one source
def _variants() -> list[tuple[str, dict]]:
    """Numerics records of every shape a mode can have: the issue-26 one (float32 tolerance recorded for a bf16
    run, vs eager failing, vs the reference passing), each comparison failing alone, both, none, not measured."""
    return [
        ("eager-fails-reference-passes", {"vs_eager": {"pass": False, "max_abs": 0.0312, "reason": "79% outside"},
                                          "tolerance": {"dtype": "float32", "atol": 1e-4, "rtol": 1e-4},
                                          "vs_reference": {"pass": True, "rmse": 6.7e-4, "eager_rmse": 8e-4}}),
        ("reference-fails", {"vs_eager": {"pass": True}, "vs_reference": {"pass": False, "reason": "x"}}),
        ("both-fail", {"vs_eager": {"pass": False}, "vs_reference": {"pass": False, "reason": "y"}}),
        ("eager-only-fails", {"vs_eager": {"pass": False, "reason": "z"}}),
        ("all-pass", {"vs_eager": {"pass": True}, "vs_reference": {"pass": True}}),
        ("overflow", {"vs_eager": {"pass": True}, "vs_reference": {"pass": False, "new_nonfinite": 3,
                                                                    "reason": "3 NaN/Inf where"}}),
        ("not-measured", {}),
    ]


@pytest.mark.parametrize(("case", "numerics"), _variants(), ids=[v[0] for v in _variants()])
def test_the_modes_table_and_the_numerics_table_read_one_call(case, numerics):
    # GIVEN a run whose compiled mode recorded these numerics
    run = resnet_run()
    default = dataclasses.replace(run.mode("default"), numerics=part_from_json(NumericsResult, numerics))
    run = dataclasses.replace(run, modes=(run.mode("eager"), default))
    ctx = build_context(run)
    # THEN the Modes table's call is the very object the Numerics table shows: they cannot disagree
    for row in ctx.rows:
        nrow = next(n for n in ctx.numerics if n.mode == row.name)
        assert row.numerics is nrow.call and row.numerics.status == nrow.verdict
    row = next(r for r in ctx.rows if r.name == "default")
    nrow = next(n for n in ctx.numerics if n.mode == "default")
    # and every renderer prints that status in the Modes table
    md = render_markdown(run)
    line = next(ln for ln in md.splitlines() if ln.startswith("| default | ok"))
    assert f"| {nrow.verdict} (abs" in line or f"| {nrow.verdict} |" in line
    term = next(ln for ln in terminal(run).splitlines() if ln.startswith("│ default"))
    assert f"│ {nrow.verdict}" in term
    page = html.unescape(render_html(run))
    assert f'title="{row.numerics.reason}">{row.numerics.status}</span>' in page
    if case == "eager-fails-reference-passes":  # no "fail (abs 0.0312)" beside a "pass"
        assert nrow.verdict == "pass" and "fail (abs" not in line and "│ fail" not in term


# ------------------------------------------------------------------------------------------------ renderers
def test_markdown_shows_each_output_the_rule_and_the_hint():
    md = render_markdown(resnet_run())
    assert "Per output (torch's accuracy rule against the float64 reference, tol 0.001" in md
    row = next(ln for ln in md.splitlines() if ln.startswith("| default | `output`"))
    assert "8×1000" in row and "rmse 0.28 ≤ 3 × eager's 0.132 + 0.001/10 = 0.396" in row
    assert "| 25.5 / 112 |" in row and "| 1.1% |" in row
    assert "**default**, to tell:" in md and "emulate_precision_casts" in md


def test_terminal_shows_each_output_the_rule_and_the_hint():
    text = terminal(resnet_run())
    assert "default  numerics pass: differs from eager beyond tolerance but passes torch's accuracy rule" in text
    line = next(ln for ln in text.splitlines() if "output (8×1000 bfloat16)" in ln)
    assert "rmse 0.28 ≤ 3 × eager's 0.132 + 0.001/10 = 0.396" in line and "scale rms 25.5, max 112" in line
    assert "relative 1.1%" in line
    assert "to tell: Inductor keeps fused intermediates" in text and "emulate_precision_casts = True" in text


def test_html_shows_each_output_escaped():
    page = render_html(resnet_run(name=HOSTILE))
    assert 'id="numerics-outputs"' in page and "rmse 0.28 ≤ 3 × eager&#39;s 0.132 + 0.001/10 = 0.396" in page
    assert HOSTILE not in page and "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert "<strong>To tell:</strong> Inductor keeps fused intermediates" in page
    assert "float64 on cuda, from the model&#39;s float32 weights" in page


def test_a_float32_reference_is_named_float32_in_every_renderer():
    # GIVEN a model with an op that has no float64 kernel (torch._grouped_mm): the reference ran in float32
    ref = {"dtype": "float32", "device": "cpu", "weights": "float32",
           "float64_error": "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got Double"}
    run = resnet_run(default_rmse=0.5, reference=ref)
    md, page, text = render_markdown(run), html.unescape(render_html(run)), terminal(run)
    # THEN no renderer claims float64: the captions, the column and eager's baseline name float32
    assert "against the float32 reference, tol 0.001" in md
    assert "rmse vs float32" in page and "Against the float32 reference" in page
    assert "eager's own error against the float32 reference" in page
    assert "float32 on cpu, from the model's float32 weights (float64 failed: Expected mat_a" in page
    for out in (md, page, text):
        assert "against float64" not in out and "float64 reference" not in out
    # and the CI gate's violation says which reference the mode fails against
    from kernelscope.analysis.check import Rules, check_result
    from kernelscope.report.words import say

    said = [say(v.what) for v in check_result(run, Rules(numerics=True)).violations]
    assert any("output vs the float32 reference fails" in s for s in said), said
