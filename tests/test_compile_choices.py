"""Inductor's compile-time choices: the epilogue-fusion benchmark per GEMM, which choice was
close, and `compare` naming a change that only a compile-time choice can explain.

Real data only: the torch 2.14.1 H200 runs in tests/data/h200-torch2.14.1-kernelscope-run (output code, trace and
compile log, re-analysed here) and four identical max-autotune runs of the seed sample on an H200 with torch 2.11
in tests/data/h200-torch2.11-max-autotune-repeat (README there), one of which compiled a different program.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kernelscope.analysis.compare import _marginal, compare_gemms, compare_results, same_build
from kernelscope.analysis.gemm.log import FUSION_MARGINAL, fusion_benchmark, parse_log
from kernelscope.analysis.mode import build_mode_result, gemm_notes
from kernelscope.report.compare import compare_data
from kernelscope.report.evidence_words import evidence_text, why_not_text
from kernelscope.report.words import say
from kernelscope.result import Note
from kernelscope.result_file import load_result

from .conftest import DATA, run_cli

RUN214 = DATA / "h200-torch2.14.1-kernelscope-run"
REPEAT = DATA / "h200-torch2.11-max-autotune-repeat"


def mode(run: str, dirname: str):
    d = RUN214 / run
    return build_mode_result(d, json.loads((d / "modes" / dirname / "capture.json").read_text()))


def gemm(m, module: str):
    return next(g for g in m.gemms if g.module == module)


# ------------------------------------------------------------------------------------------------ the log
def test_both_outcomes_of_the_fusion_benchmark_are_read_from_the_log():
    # run 1 logged "can fuse (benchmark) ... 1.901x speedup" (in colour); run 2 logged no benchmark at all
    one = parse_log((REPEAT / "run-1" / "max-autotune.log").read_text())
    assert [(b1, b2, text) for b1, b2, text, _ in one.benchmark] == [(("buf0",), ("buf1",), "1.901x speedup")]
    assert parse_log((REPEAT / "run-2" / "max-autotune.log").read_text()).benchmark == ()
    three = parse_log((REPEAT / "run-3" / "max-autotune.log").read_text())
    assert [text for *_, text, _ in three.benchmark] == ["2.143x speedup"]
    b32 = parse_log((RUN214 / "tb-bf16-b32" / "modes" / "max-autotune" / "log.txt").read_text())
    assert [text for *_, text, _ in b32.benchmark] == ["infx slowdown", "1.206x speedup"]


def test_a_fusion_benchmark_record_and_its_margin():
    fb = fusion_benchmark((("buf0",), ("buf1",), "1.063x speedup", 36))
    assert (fb.fused, fb.factor, fb.buffers, fb.log_line, fb.marginal) == (True, 1.063, ("buf0", "buf1"), 36, True)
    slow = fusion_benchmark((("buf15",), ("buf16",), "1.447x slowdown", 132))
    assert (slow.fused, slow.factor, slow.marginal) == (False, 1.447, False)
    never = fusion_benchmark((("buf15",), ("buf16",), "infx slowdown", 132))
    assert (never.fused, never.factor, never.marginal) == (False, None, False)
    # the threshold comes from the identical H200 runs: the same fusion read 1.33x-2.14x
    assert fusion_benchmark((("a",), ("b",), f"{1 + FUSION_MARGINAL - 0.001:.3f}x speedup", 1)).marginal
    assert not fusion_benchmark((("a",), ("b",), f"{1 + FUSION_MARGINAL + 0.001:.3f}x speedup", 1)).marginal


# ------------------------------------------------------------------------------------------------ per GEMM
def test_a_fused_template_carries_the_benchmark_that_fused_it():
    # seed fp16, ATEN+TRITON+NVGEMM: ATen's addmm won the AUTOTUNE table by 2.8%, then the epilogue-fusion
    # benchmark timed the template with GELU fused in 1.063x faster than apart: that benchmark decided what ran
    m = mode("seed-fp16", "max-autotune_ATEN-TRITON-NVGEMM")
    (g,) = m.gemms
    assert g.verdict == "fused" and [(fb.fused, fb.text) for fb in g.fusion_benchmarks] == [(True, "1.063x speedup")]
    ev = [evidence_text(e) for e in g.evidence if e.rule == "fusion-benchmark.decided"]
    assert ev == ["[fusion-benchmark] Inductor's epilogue-fusion benchmark (log line 36) timed buf0 + buf1 as one "
                  "kernel 1.063x faster than apart, so it fused them; inside that benchmark's run-to-run spread "
                  "(under 1.25x): another compile may decide otherwise"]
    (t,) = m.autotune
    # the table's 2.8% no longer claims "another run may pick Triton, and this GEMM's backend with it": a
    # Triton win would have led to the same fused template
    assert not t.marginal and t.notes[-1].code == "autotune-fusion-decided"
    assert say(t.notes[-1]).endswith("but the epilogue-fusion benchmark decided what ran")
    assert [r.reason for r in g.why_not] == ["fusion-benchmark-marginal"]
    assert why_not_text(g.why_not).startswith("fusion benchmark marginal: ")
    # the note names the GEMM as the user's model does (its module path), not by kernelscope's id
    assert any(say(n).startswith("GEMM linear: fusion benchmark marginal:") for n in m.findings)


def test_a_note_that_holds_for_a_group_of_identical_layers_is_one_line():
    # GIVEN the seed GEMM's marginal fusion benchmark, as if it were 16 identical layers (a 1B Llama's down_proj
    # x16 printed the same "autotune choice marginal" note 16 times, one per GEMM id, on the H200), and one more
    # layer without a module path
    m = mode("seed-fp16", "max-autotune_ATEN-TRITON-NVGEMM")
    (g,) = m.gemms
    layers = [dataclasses.replace(g, id=f"gemm{i}", module=f"model.layers.{i}.mlp.down_proj") for i in range(16)]
    group = dataclasses.replace(m.gemm_groups[0], label="model.layers.0-15.mlp.down_proj", count=16,
                                members=tuple(x.id for x in layers), pattern="model.layers.#.mlp.down_proj")
    loose = dataclasses.replace(g, id="gemm99", module="")
    # WHEN the mode's notes are made
    notes = [say(n) for n in gemm_notes([*layers, loose], [group], m.autotune)]
    # THEN one line names the group by its label and count, and the loose GEMM by its id
    (note,) = notes
    assert note.startswith("GEMMs model.layers.0-15.mlp.down_proj \u00d716, gemm99: fusion benchmark marginal:")
    # AND a single layer of the group keeps its own path
    assert say(gemm_notes(layers[3:4], [group], m.autotune)[0]).startswith("GEMM model.layers.3.mlp.down_proj: ")


def test_a_kept_apart_epilogue_names_both_close_choices():
    # seed bf16, ATEN+TRITON+NVGEMM: ATen won the table by 1.6% and the fused template timed 1.063x slower than
    # ATen plus the GELU kernel: either coin could land the other way
    m = mode("seed-bf16", "max-autotune_ATEN-TRITON-NVGEMM")
    (g,) = m.gemms
    assert (g.backend, g.verdict) == ("cuBLASLt", "partial")
    assert [(fb.fused, fb.factor, fb.marginal) for fb in g.fusion_benchmarks] == [(False, 1.063, True)]
    assert [r.reason for r in g.why_not][-2:] == ["autotune-marginal", "fusion-benchmark-marginal"]
    assert "autotune choice marginal: ATen won by 1.6%" in why_not_text(g.why_not)
    assert m.autotune[0].marginal


def test_clear_and_failed_benchmarks_are_not_marginal():
    b4 = mode("tb-bf16-b4", "max-autotune")
    fc1 = gemm(b4, "fc1")
    assert [(fb.fused, fb.factor, fb.marginal) for fb in fc1.fusion_benchmarks] == [(False, 1.447, False)]
    assert "marginal" not in why_not_text(fc1.why_not)
    # the benchmark is said once, as log evidence with its line, and the why-not reads the same record
    said = [e for e in fc1.evidence if "1.447x" in evidence_text(e)]
    assert [(e.rule, e.kind, e.where) for e in said] == [("fusion-benchmark.decided", "log", "log:132")]
    assert fc1.why_not[-1].reason == "fusion-benchmark-rejected" and fc1.why_not[-1].facts["log_line"] == 132
    assert why_not_text(fc1.why_not).endswith(
        "benchmark_epilogue_fusion judged the fused template slower (1.447x slowdown)")
    assert [fb.factor for fb in gemm(b4, "fc2").fusion_benchmarks] == [1.972]
    assert gemm(b4, "qkv").fusion_benchmarks == ()  # the log has no benchmark for it
    b32 = mode("tb-bf16-b32", "max-autotune")
    fc1 = gemm(b32, "fc1")
    assert fc1.backend == "cuBLASLt" and [fb.factor for fb in fc1.fusion_benchmarks] == [None]
    assert any("could not run buf15 + buf16 fused" in evidence_text(e) for e in fc1.evidence)


def test_benchmarks_follow_the_buffers_to_their_gemm():
    # llama block: the log benchmarked layer 1's gate (buf30) and up (buf31) projections against the SiLU-mul
    # kernel (buf32), and nothing for layer 0
    m = mode("llama-bf16", "max-autotune_ATEN-TRITON-NVGEMM")
    assert [fb.text for fb in gemm(m, "layers.1.mlp.gate_proj").fusion_benchmarks] == ["1.024x slowdown"]
    assert [fb.text for fb in gemm(m, "layers.1.mlp.up_proj").fusion_benchmarks] == ["1.010x slowdown"]
    assert gemm(m, "layers.0.mlp.gate_proj").fusion_benchmarks == ()
    assert sum(bool(g.fusion_benchmarks) for g in m.gemms) == 2


def test_the_records_survive_result_json():
    from kernelscope.result import ModeResult, part_from_json, to_json

    m = mode("seed-fp16", "max-autotune_ATEN-TRITON-NVGEMM")
    back = part_from_json(ModeResult, json.loads(json.dumps(to_json(m))))
    assert back.gemms[0].fusion_benchmarks == m.gemms[0].fusion_benchmarks


# ------------------------------------------------------------------------------------------------ compare
def test_identical_runs_that_compiled_differently_are_named_as_a_compile_time_choice():
    # run 2 of four identical H200 runs kept GELU apart (no fusion benchmark logged) and read 51.8 us against
    # 41.9 us: beyond noise, and not the code's doing
    base, head = load_result(REPEAT / "run-2"), load_result(REPEAT / "run-3")
    cmp = compare_results(base, head)
    assert same_build(cmp.comparable)
    by = {m.name: m for m in cmp.modes}
    assert by["eager"].change == by["default"].change == "none"
    ma = by["max-autotune"]
    assert ma.change == "faster"
    assert ma.compile_note == Note("compiled-differently", {"kernels": 3, "first": [
        "triton_poi_fused_gelu_1", "triton_tem_fused_addmm_gelu_t_0", "triton_tem_fused_addmm_t_0"], "gemms": 1})
    assert say(ma.compile_note).startswith("compiled differently from the same model file, versions and settings: "
                                           "3 kernel(s) launched by one run only (triton_poi_fused_gelu_1, "
                                           "triton_tem_fused_addmm_gelu_t_0, triton_tem_fused_addmm_t_0)")
    (g,) = ma.changed_gemms
    assert g.kind == "fusion gained (compile-time choice: may differ between runs)"
    data = {m["mode"]: m for m in compare_data(cmp)["modes"]}
    assert data["max-autotune"]["compile_note"] == say(ma.compile_note)
    assert data["max-autotune"]["gemms"][0]["choice"] == "compile-time choice"
    assert data["eager"]["compile_note"] == "" and data["default"]["compile_note"] == ""
    # runs 1 and 3 launched the same kernels (their AUTOTUNE tables had different winners): nothing to say
    same = {m.name: m for m in compare_results(load_result(REPEAT / "run-1"), head).modes}
    assert same["max-autotune"].compile_note is None and not same["max-autotune"].changed_gemms


def test_an_upgrade_is_not_called_a_compile_time_choice():
    base, head = load_result(REPEAT / "run-2"), load_result(REPEAT / "run-3")
    upgraded = dataclasses.replace(head, environment=dataclasses.replace(head.environment, torch="2.14.1+cu130"))
    cmp = compare_results(base, upgraded)
    assert cmp.comparable.ok and not same_build(cmp.comparable)
    ma = next(m for m in cmp.modes if m.name == "max-autotune")
    assert ma.compile_note is None and ma.changed_gemms[0].kind == "fusion gained"


def test_a_marginal_fusion_benchmark_labels_the_verdict_change():
    # the same GEMM of seed bf16 fused at 1.070x in one mode and stayed apart at 1.063x slower in another
    fused = mode("seed-bf16", "max-autotune")
    apart = mode("seed-bf16", "max-autotune_ATEN-TRITON-NVGEMM")
    assert _marginal(fused) == {"gemm0": "marginal fusion benchmark"}
    assert _marginal(apart) == {"gemm0": "marginal autotune"}
    (g,) = compare_gemms(fused.gemms, apart.gemms, base_marginal=_marginal(fused))
    assert g.kind == "fusion lost (marginal fusion benchmark: may differ between runs)"
    clear = mode("up-seed/before", "max-autotune")  # fused at 2.700x: not marginal
    assert _marginal(clear) == {}


@pytest.fixture(scope="module")
def compared(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    out = tmp_path_factory.mktemp("cmp")
    proc = run_cli("compare", str(REPEAT / "run-2"), str(REPEAT / "run-3"), "--out", str(out), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, out


def test_the_compare_command_says_it_in_every_output(compared):
    printed, out = compared
    line = next(x for x in printed.splitlines() if x.startswith("max-autotune: "))
    assert "compiled differently from the same build (a compile-time choice)" in line
    assert "fusion gained (compile-time choice: may differ between runs)" in line
    assert next(x for x in printed.splitlines() if x.startswith("eager: ")).endswith("within noise")
    md = (out / "compare.md").read_text()
    assert "- **max-autotune**: compiled differently from the same model file" in md
    html = (out / "compare.html").read_text()
    assert "compile-time choice</span> <strong>max-autotune</strong>: compiled differently" in html
