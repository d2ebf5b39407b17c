"""Fusion advice (analysis/advice.py): which settings each unfused GEMM group gets, decided from its why-not codes,
and what a candidate's run shows, on recorded runs (H200 torch 2.14.1 and 2.11, the CPU). The modes are rebuilt
from their captures (trace, output code, compile log), so the why-nots are the structured records of today's
analysis, not the sentences of the committed result.json."""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import pytest

from kernelscope.analysis.advice import advise, plan_advice
from kernelscope.analysis.mode import build_mode_result, build_run_result
from kernelscope.capture.modes import parse_modes
from kernelscope.errors import UsageError
from kernelscope.mode_names import compile_options, mode_name, split_options
from kernelscope.report.words import compile_line, say
from kernelscope.result import Advice, Note, NumericsVerdict, RunEnvironment, RunResult, part_from_json

from .conftest import DATA

H200_2141 = DATA / "h200-torch2.14.1-kernelscope-run"
H200_211 = DATA / "h200-torch2.11-kernelscope-run"
CPU = DATA / "cpu-torch2.14.1"


@functools.cache
def rebuilt(run_dir: Path) -> RunResult:
    """A recorded run's result, every mode analysed again from its capture."""
    old = json.loads((run_dir / "result.json").read_text())
    captures = sorted(run_dir.glob("modes/*/capture.json"))
    modes = [build_mode_result(run_dir, json.loads(c.read_text())) for c in captures]
    order = [m["name"] for m in old["modes"]]
    modes.sort(key=lambda m: order.index(m.name))
    return build_run_result(modes, environment=part_from_json(RunEnvironment, old["environment"]), command="",
                            model="model.py", device=old["device"], dtype=old["dtype"], settings={})


def entries(run_dir: Path, *, read: bool = True) -> dict[tuple[str, str], Advice]:
    """The advice of a recorded run by (mode, group): as planned, or (``read``) with every candidate read."""
    r = rebuilt(run_dir)
    plan = plan_advice(r.modes, r.environment, r.device)
    return {(e.mode, e.group): e for e in (advise(r, plan) if read else plan.entries)}


def planned(e: Advice) -> list[tuple[str, str, str | None]]:
    return [(c.setting, c.mode_name, c.why.code if c.why else None) for c in e.candidates]


# ---------------------------------------------------------------------------------------------- mode names
def test_a_mode_name_carries_inductor_options_for_that_mode():
    modes = parse_modes("max-autotune:CPP@freezing=on,max-autotune@benchmark_epilogue_fusion=off,default")
    assert modes[0].gemm_backends == ("CPP",) and modes[0].inductor_config == {"freezing": True}
    assert modes[1].gemm_backends is None and modes[1].inductor_config == {"benchmark_epilogue_fusion": False}
    assert modes[2].inductor_config == {}
    # the mode's folder keeps to letters, digits, '-', '_' and '.'
    assert modes[0].dirname == "max-autotune_CPP.freezing-on"
    assert modes[1].dirname == "max-autotune.benchmark_epilogue_fusion-off"


@pytest.mark.parametrize(("text", "message"), [
    ("eager@freezing=on", "eager compiles nothing"),
    ("max-autotune@freezing", "is not NAME=VALUE"),
    ("max-autotune@Freezing=on", "is not NAME=VALUE"),
    ("default@freezing=on@freezing=off", "given twice"),
    ("default@x=a/b", "option value 'a/b'"),
])
def test_a_bad_option_is_a_usage_error(text, message):
    with pytest.raises(UsageError, match=message):
        parse_modes(text)


def test_names_written_by_advice_parse_back_to_the_same_options():
    name = mode_name("max-autotune", ("CUTLASS",), {"cuda.cutlass_epilogue_fusion_enabled": True, "a": 3})
    assert name == "max-autotune:CUTLASS@a=3@cuda.cutlass_epilogue_fusion_enabled=on"
    (mode,) = parse_modes(name)
    assert mode.gemm_backends == ("CUTLASS",)
    assert mode.inductor_config == {"cuda.cutlass_epilogue_fusion_enabled": True, "a": 3}
    assert split_options(name) == ("max-autotune:CUTLASS", {"a": 3, "cuda.cutlass_epilogue_fusion_enabled": True})


def test_the_line_to_copy_writes_the_modes_options_out():
    # torch.compile takes a mode or options, never both: max-autotune's own options are written out, freezing
    # only when on, kernelscope's bookkeeping options never
    opts = compile_options("max-autotune", ("CPP",), {"cpp.enable_kernel_profile": True}, True)
    assert opts == {"max_autotune": True, "coordinate_descent_tuning": True, "max_autotune_gemm_backends": "CPP",
                    "freezing": True}
    assert compile_line(opts) == ('torch.compile(model, options={"max_autotune": True, "coordinate_descent_tuning": '
                                  'True, "max_autotune_gemm_backends": "CPP", "freezing": True})')
    assert compile_options("default", None, {"freezing": False}, False) == {}
    assert compile_line({}) == "torch.compile(model)"


# ---------------------------------------------------------------------------------------------- the candidates
def test_h200_library_gemms_under_default_get_the_triton_template():
    e = entries(H200_2141 / "tb-bf16-b4", read=False)
    # fc1's GELU and fc2's residual add ran after cuBLASLt: max-autotune with a template that takes epilogues;
    # NVGEMM is listed, not run: cutlass.operators has no epilogue operator for sm90
    for g in ("fc1", "fc2"):
        assert e["default", g].cause == "max-autotune-off"
        assert planned(e["default", g]) == [("template", "max-autotune:TRITON", None),
                                           ("template", "max-autotune:NVGEMM", "no-epilogue-operator")]
    assert e["default", "fc1"].candidates[0].options == {
        "max_autotune": True, "coordinate_descent_tuning": True, "max_autotune_gemm_backends": "TRITON"}
    assert say(e["default", "fc1"].candidates[1].why).startswith("NVGEMM has no epilogue-fusion-capable operator on "
                                                                 "sm90")


def test_h200_what_max_autotune_decided_names_the_setting_that_undoes_it():
    e = entries(H200_2141 / "tb-bf16-b4", read=False)
    # the epilogue-fusion benchmark rejected fc1's GELU: the same mode with the benchmark off
    assert e["max-autotune", "fc1"].cause == "fusion-benchmark-rejected"
    assert planned(e["max-autotune", "fc1"]) == [("no-fusion-benchmark", "max-autotune@benchmark_epilogue_fusion=off",
                                                 None)]
    assert e["max-autotune", "fc1"].candidates[0].options["benchmark_epilogue_fusion"] is False
    # autotune picked cuBLAS for fc2 by less than its epilogue costs: the same backends without ATEN
    assert e["max-autotune", "fc2"].cause == "autotune-picked"
    assert planned(e["max-autotune", "fc2"]) == [("without-library", "max-autotune:TRITON", None)]


def test_ops_inside_a_norm_or_the_next_gemm_have_no_setting_and_nothing_runs():
    e = entries(H200_2141 / "tb-bf16-b4")
    # proj's residual add runs inside the LayerNorm's reduction kernel
    proj = e["default", "proj"]
    assert proj.candidates == () and proj.no_setting is not None and proj.no_setting.code == "ends-in-reduction"
    assert proj.cause == "dataflow.stop-reduction"
    assert "a reduction or norm ends the epilogue" in say(proj.no_setting)
    # with NVGEMM in the list, the next GEMM's template computes proj's add again: one op, where it first ran (the
    # LayerNorm's kernel)
    nv = e["max-autotune:ATEN+TRITON+NVGEMM", "proj"]
    assert nv.unfused == ("add",) and not nv.candidates
    assert nv.no_setting is not None and nv.no_setting.code == "ends-in-reduction"


def test_an_op_only_the_next_gemms_template_computes_has_no_setting():
    # a rotary mul the next attention bmm's template computes in its prologue: moving it into this GEMM saves no
    # round trip, so no setting is offered
    from kernelscope.analysis.advice import _held, _no_setting
    from kernelscope.result import Evidence, EvidenceRule, GemmEpilogue

    g = GemmEpilogue("q", ("triton_tem_fused_mm_0",), "Triton template", 64, 64, 64, "bfloat16", 1.0,
                     epilogue=("mul",), unfused=("mul",), evidence=(Evidence.of(
                         EvidenceRule.DATAFLOW_IN_NEXT_PROLOGUE, "graph_0.py:40", op="mul",
                         kernel="triton_tem_fused_bmm_mul_1"),))
    held = _held(g)
    assert held == {"mul": ("next-gemm", "triton_tem_fused_bmm_mul_1", "dataflow.in-next-prologue")}
    cause, note = _no_setting(held)
    assert cause == "dataflow.in-next-prologue" and note.code == "ends-in-next-gemm"
    assert note.args == {"ops": ["mul"], "kernels": ["triton_tem_fused_bmm_mul_1"]}


def test_candidates_sharing_a_setting_run_once_most_costly_first():
    r = rebuilt(H200_2141 / "tb-bf16-b4")
    plan = plan_advice(r.modes, r.environment, r.device)
    # max-autotune:TRITON serves default's fc1 and fc2 and max-autotune's fc2: one run, ahead of the benchmark-off
    # mode, which serves one group; modes the run has are not run again
    assert plan.to_run == ("max-autotune:TRITON", "max-autotune@benchmark_epilogue_fusion=off")


def test_eager_groups_point_at_the_compiled_modes_of_the_run_that_fuse_them():
    e = entries(H200_2141 / "seed-fp16")
    linear = e["eager", "linear"]
    assert linear.cause == "eager-library"
    assert [(c.setting, c.mode_name) for c in linear.candidates] == [
        ("compiled", "max-autotune"), ("compiled", "max-autotune:ATEN+TRITON+NVGEMM")]
    # both fused the GELU; against eager in the same run one is within noise, the other slower beyond it
    by = {c.mode_name: c for c in linear.candidates}
    assert by["max-autotune"].fused == ("bias", "gelu") and by["max-autotune"].verdict == "within-noise"
    slower = by["max-autotune:ATEN+TRITON+NVGEMM"]
    assert slower.verdict == "slower" and slower.high is not None and slower.high < 1
    assert linear.best is None  # nothing fused it and ran faster beyond noise


def test_a_candidate_the_run_holds_is_read_from_it_whatever_it_was_meant_to_do():
    e = entries(H200_2141 / "seed-fp16")
    # max-autotune:NVGEMM ran (and failed: no NVGEMM choice for addmm on sm90): the advice says so
    nv = next(c for c in e["default", "linear"].candidates if c.mode_name == "max-autotune:NVGEMM")
    assert nv.verdict == "failed" and nv.why is not None and nv.why.code == "candidate-failed"
    assert "NoValidChoicesError" in say(nv.why)
    tri = next(c for c in e["default", "linear"].candidates if c.mode_name == "max-autotune:TRITON")
    assert tri.verdict == "not-run" and tri.why is not None and say(tri.why) == "its mode is not in this run"


def test_a_fused_candidate_that_is_faster_beyond_noise_is_the_best():
    e = entries(H200_211 / "linear_gelu")
    # eager's GELU: max-autotune fuses it, and the whole model ran 1.49x slower than eager beyond noise
    c = e["eager", "addmm 16 × 4096 × 4096"].candidates[0]
    assert (c.mode_name, c.verdict, c.fused) == ("max-autotune", "slower", ("bias", "gelu"))
    assert c.latency_ratio is not None and c.high is not None and c.high < 1 and c.numerics_pass is True
    # against default (max-autotune-off), that same run is faster beyond noise: best
    r = rebuilt(H200_211 / "linear_gelu")
    base = r.mode("default")
    assert base is not None
    plan = plan_advice(r.modes, r.environment, r.device)
    entry = next(x for x in plan.entries if x.mode == "default")
    # advise the default group with max-autotune as its candidate (what `--modes default,max-autotune` has)
    entry = dataclasses.replace(entry, candidates=(dataclasses.replace(entry.candidates[0], mode_name="max-autotune"),))
    (got,) = advise(r, dataclasses.replace(plan, entries=(entry,)))
    cand = got.candidates[0]
    assert cand.verdict == "faster" and cand.low is not None and cand.low > 1 and got.best == "max-autotune"


def test_a_candidate_whose_output_fails_numerics_is_reported_as_such():
    r = rebuilt(H200_2141 / "seed-fp16")
    failing = NumericsVerdict("fail", vs_eager=False, vs_reference=False, reason=Note("less-accurate-than-eager"))
    modes = tuple(dataclasses.replace(m, numerics_verdict=failing) if m.name == "max-autotune" else m
                  for m in r.modes)
    r = dataclasses.replace(r, modes=modes)
    (linear,) = [e for e in advise(r, plan_advice(r.modes, r.environment, r.device)) if e.mode == "eager"]
    c = next(c for c in linear.candidates if c.mode_name == "max-autotune")
    assert (c.verdict, c.numerics_pass, c.fused) == ("numerics-fail", False, ("bias", "gelu"))


def test_a_candidate_left_out_by_the_budget_says_why():
    r = rebuilt(H200_2141 / "tb-bf16-b4")
    plan = plan_advice(r.modes, r.environment, r.device)
    why = Note("over-budget", {"budget_s": 60.0, "spent_s": 55.2, "estimate_s": 41.0})
    out = advise(r, plan, {"max-autotune:TRITON": why})
    c = next(c for e in out if e.mode == "default" and e.group == "fc1" for c in e.candidates
             if c.mode_name == "max-autotune:TRITON")
    assert c.verdict == "not-run" and c.why == why
    assert say(why) == ("the candidates had taken 55.2 s of --advise-budget 60 s, and a compiled mode's first "
                        "process took up to 41 s in this run")


def test_cpu_library_gemms_get_the_cpp_template_and_the_swiglu_product_counts_in_the_other_gemm():
    e = entries(CPU / "llama_block")
    # MKL under default: the C++ GEMM template (freezing is on already on the CPU, so the name needs no option)
    gate, up = e["default", "layers.0-1.mlp.gate_proj"], e["default", "layers.0-1.mlp.up_proj"]
    assert planned(gate) == planned(up) == [("template", "max-autotune:CPP", None)]
    assert gate.candidates[0].options["freezing"] is True
    # the run holds max-autotune:CPP: up_proj fused the product, and gate_proj's SiLU and product run in up_proj's
    # template, out of any kernel of their own
    assert (up.candidates[0].fused, up.candidates[0].unfused) == (("mul",), ())
    assert (gate.candidates[0].elsewhere, gate.candidates[0].unfused) == (("silu", "mul"), ())
    assert gate.candidates[0].verdict == up.candidates[0].verdict == "within-noise"  # a busy 2-core VM's timings
    # the residual adds run inside the RMSNorm's reduction kernel: no setting
    assert e["default", "layers.0-1.self_attn.o_proj"].no_setting is not None
    assert e["default", "layers.0-1.self_attn.o_proj"].no_setting.code == "ends-in-reduction"


def test_cpu_eager_without_freezing_in_the_run_asks_for_it():
    r = rebuilt(CPU / "pool_attention")
    cfg = {m.name: m.config for m in r.modes}
    no_freezing = tuple(dataclasses.replace(m, config=dataclasses.replace(cfg[m.name], freezing=False))
                        if m.config and m.config.compiled else m for m in r.modes)
    plan = plan_advice(no_freezing, r.environment, r.device)
    proj = next(e for e in plan.entries if e.mode == "default" and e.group == "proj")
    assert [c.mode_name for c in proj.candidates] == ["max-autotune:CPP@freezing=on"]
    assert proj.candidates[0].options["freezing"] is True


def test_modes_the_advice_added_are_not_advised_again():
    r = rebuilt(CPU / "llama_block")
    plan = plan_advice(r.modes, r.environment, r.device, skip=("max-autotune:CPP",))
    assert {e.mode for e in plan.entries} == {"eager", "default", "max-autotune"}


def test_the_worker_patches_a_modes_options_over_the_runs_own():
    # GIVEN a CPU run (freezing on by default) and a mode whose name turns freezing and the fusion benchmark off
    pytest.importorskip("torch")
    import torch._inductor.config as ic

    from kernelscope.capture.setup import _Setup

    before = (ic.freezing, ic.benchmark_epilogue_fusion, ic.max_autotune_gemm_backends)
    (mode,) = parse_modes("max-autotune:CPP@benchmark_epilogue_fusion=off@freezing=off")
    rec: dict = {}
    setup = _Setup({"mode": dataclasses.asdict(mode), "device": "cpu"}, rec)
    try:
        # THEN Inductor runs with them, and the record says so
        assert (ic.freezing, ic.benchmark_epilogue_fusion, ic.max_autotune_gemm_backends) == (False, False, "CPP")
        assert rec["config"]["freezing"] is False
        assert rec["config"]["inductor_config"]["benchmark_epilogue_fusion"] is False
    finally:
        setup.close()
    assert (ic.freezing, ic.benchmark_epilogue_fusion, ic.max_autotune_gemm_backends) == before


# ---------------------------------------------------------------------------------------------- the reports
def _advised_linear_gelu() -> RunResult:
    """The recorded H200 linear_gelu run with the advice of default's GEMM read against its max-autotune mode (what
    `--modes default,max-autotune` proposes), and a group label no report may take as markup."""
    r = rebuilt(H200_211 / "linear_gelu")
    plan = plan_advice(r.modes, r.environment, r.device)
    entry = next(x for x in plan.entries if x.mode == "default")
    mat = dataclasses.replace(entry.candidates[0], mode_name="max-autotune",
                              options=compile_options("max-autotune", None, {}, False))
    (read,) = advise(r, dataclasses.replace(plan, entries=(dataclasses.replace(entry, candidates=(mat,)),)))
    hostile = dataclasses.replace(read, group="<script>x</script>", mode="default")
    return dataclasses.replace(r, advice=(read, hostile))


def test_the_reports_show_the_advice_and_the_line_to_copy():
    from rich.console import Console

    from kernelscope.report.context import build_context
    from kernelscope.report.html import render_html
    from kernelscope.report.markdown import render_markdown
    from kernelscope.report.terminal import render_terminal

    result = _advised_linear_gelu()
    # THEN the view says it once for every report: the candidate, the ops, the whole model against default
    (row, _) = build_context(result).advice
    (c,) = row.candidates
    assert c.best and row.best is c and c.verdict == "fused, faster" and c.ops == "fused bias, gelu"
    assert c.ratio.startswith(f"{c.ratio.split('×')[0]}× faster (95% CI ") and c.numerics == "pass"
    assert row.cause == "max-autotune off: a library GEMM ran"
    line = c.line
    assert line.startswith('torch.compile(model, options={"max_autotune": True')
    html = render_html(result)
    md = render_markdown(result)
    assert 'id="fusion-advice"' in html and "fused, faster" in html and "<script>x</script>" not in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html
    assert "### Fusion advice" in md and f"to use it: `{line}`" in md and "<script>" not in md.replace("`<script>", "")
    console = Console(width=200, record=True)
    render_terminal(result, console)
    text = console.export_text()
    assert "advice addmm 16 × 4096 × 4096 (default): gelu unfused" in text and line in text


def test_a_group_without_a_setting_says_why_in_every_report():
    r = rebuilt(H200_2141 / "tb-bf16-b4")
    result = dataclasses.replace(r, advice=advise(r, plan_advice(r.modes, r.environment, r.device)))
    from kernelscope.report.markdown import render_markdown

    md = render_markdown(result)
    assert ("- **proj** (default): add unfused (a reduction reads the result): no setting: add ran inside "
            in md)
    assert "- `max-autotune:TRITON`: not run: its mode is not in this run" in md
    assert "- `max-autotune:NVGEMM`: failed: InductorError: LoweringException: NoValidChoicesError" in md


# ---------------------------------------------------------------------------------------------- check --advice
def test_check_advice_fails_where_a_proven_faster_setting_goes_unused():
    from kernelscope.analysis.check import Rules, check_result

    result = _advised_linear_gelu()
    result = dataclasses.replace(result, advice=result.advice[:1],
                                 settings={**result.settings, "advice_modes": ["max-autotune"]})
    outcome = check_result(result, Rules(advice=True))
    # THEN default violates it (max-autotune fused its GELU and ran faster beyond noise); max-autotune, a candidate
    # --advise added, is not a mode the model is checked in
    assert outcome.checked_modes == ("default", "reduce-overhead") and outcome.rules == ("--advice",)
    (v,) = outcome.violations
    assert (v.rule, v.mode, v.what.code) == ("--advice", "default", "unused-setting-fuses-faster")
    assert v.what.args["low"] > 1 and v.what.args["ops"] == ["bias", "gelu"]
    text = say(v.what)
    assert text.startswith("GEMM group addmm 16 × 4096 × 4096: max-autotune fused bias, gelu and ran the whole "
                           "model ") and text.endswith('the model does not use it: torch.compile(model, options={'
                                                       '"max_autotune": True, "coordinate_descent_tuning": True})')
    # AND a candidate that fused within noise is no violation
    (a,) = result.advice
    noisy = dataclasses.replace(a, best=None, candidates=tuple(
        dataclasses.replace(c, verdict="within-noise", low=0.9) for c in a.candidates))
    assert check_result(dataclasses.replace(result, advice=(noisy,)), Rules(advice=True)).ok


def test_check_advice_needs_an_advised_result():
    from kernelscope.analysis.check import Rules, check_result

    with pytest.raises(UsageError, match="--advice: the result holds no fusion advice"):
        check_result(rebuilt(H200_211 / "linear_gelu"), Rules(advice=True))
