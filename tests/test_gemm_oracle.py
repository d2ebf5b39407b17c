"""The coverage self-check against an oracle that reads none of the analysis's rules for what a GEMM is: in eager,
the GEMM-class ATen ops one call dispatched (capture.json ``dispatch``), those inside other ops included; compiled,
the output code's tl.dot kernels, GEMM templates and extern GEMM calls, plus the GEMMs the compiled call dispatched
inside other ops (a custom op). Recorded on the CPU with kernelscope itself (tests/data/cpu-torch2.14.1, README.md):

- hf_mixtral_eager_default_bf16: tests/zoo/models/hf_mixtral.py (tiny: 2 layers, 4 experts, top 2, 16 tokens) in
  bfloat16, eager and default. The experts run ``torch._grouped_mm`` in both modes (eager: ``aten::_grouped_mm``,
  with one aten::mm per expert inside it on the CPU; compiled: ``extern_kernels._grouped_mm``); every Linear is
  ``aten::mm`` eager and ``mkldnn::_linear_pointwise`` compiled (freezing).
- hf_mixtral_fp32: the same model in float32: compiled, transformers calls its custom op
  ``transformers::grouped_mm_fallback`` (one mm per expert with tokens: 16 in all), which Inductor calls as an extern
  call it cannot look into; eager still runs ``torch._grouped_mm``.
- custom_op_gemms: tests/models/custom_op_gemms.py, float32: a custom op ``kernelscope_models::two_mm`` (x @ w1 @ w2)
  between two Linears.

Slow tests profile the last two models again, as a user does.
"""

from __future__ import annotations

import gzip
import json
import shutil
from functools import cache
from pathlib import Path

import pytest

from kernelscope.analysis.gemm.coverage import OracleGemm, compare_with_eager, gemm_coverage
from kernelscope.analysis.gemm.model import _Counted
from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.context import coverage_line, unattributed_line
from kernelscope.report.evidence_words import evidence_text
from kernelscope.report.words import say
from kernelscope.result import GemmOp, ModeResult

from .conftest import ROOT, run_cli
from .zoo_fixtures import extract_run

CPU = Path(__file__).resolve().parent / "data" / "cpu-torch2.14.1"


@cache
def _mode(name: str, mode: str) -> ModeResult:
    run = extract_run(CPU / f"{name}.tar.gz")
    return build_mode_result(run, json.loads((run / "modes" / mode / "capture.json").read_text()))


def _texts(g) -> list[str]:
    return [evidence_text(e) for e in g.evidence]


def _shape(g) -> tuple:
    return g.m, g.n, g.k


def test_mixtral_bf16_a_grouped_gemm_is_one_gemm_in_both_modes_as_the_oracle_counts_it():
    eager, default = compare_with_eager([_mode("hf_mixtral_eager_default_bf16", m) for m in ("eager", "default")])
    c = eager.gemm_coverage
    # eager: 11 mm (q, k, v, o, router per layer and the LM head) and 4 grouped GEMMs, as one call dispatched them
    assert (c.ops, c.attributed, c.oracle, c.missing, c.oracle_source) == (15, 15, 15, 0, "dispatch")
    assert c.by_kind == c.oracle_by_kind == {"_grouped_mm": 4, "mm": 11}
    grouped = [g for g in eager.gemms if g.op == "_grouped_mm"]
    # each runs 4 aten::mm inside it on the CPU: its work, one kernel; its rows are the 16 tokens x top 2
    assert [(g.module, g.kernels, _shape(g), g.batch) for g in grouped[:2]] == [
        ("model.layers.0.mlp.experts", ("aten::_grouped_mm",), (32, 256, 64), None),
        ("model.layers.0.mlp.experts", ("aten::_grouped_mm",), (32, 64, 128), None)]
    # compiled: the same 15 call sites, read from the code; the dispatch count confirms the 4 grouped GEMMs
    c = default.gemm_coverage
    assert (c.ops, c.attributed, c.oracle, c.missing, c.oracle_source) == (15, 15, 15, 0, "output code + dispatch")
    assert c.by_kind == {"_grouped_mm": 4, "_linear_pointwise": 11}
    assert [g.kernels for g in default.gemms if g.op == "_grouped_mm"] == [("aten::_grouped_mm",)] * 4
    assert say(c.vs_eager) == "15 GEMM-class ops, as in eager"


def test_mixtral_fp32_finds_the_gemms_of_the_custom_op_through_what_it_dispatches():
    eager, default = compare_with_eager([_mode("hf_mixtral_fp32", m) for m in ("eager", "default")])
    assert (eager.gemm_coverage.ops, eager.gemm_coverage.oracle) == (15, 15)
    c = default.gemm_coverage
    # 11 MKL linears the code calls, and 16 aten::mm transformers::grouped_mm_fallback ran inside its 4 calls (the
    # dispatch count saw them there; the trace shows them between the call's neighbours)
    assert (c.ops, c.attributed, c.oracle, c.missing) == (27, 27, 27, 0)
    assert c.by_kind == c.oracle_by_kind == {"_mkl_linear": 11, "mm": 16}
    assert c.decomposed == {"transformers::grouped_mm_fallback": 16}
    assert say(c.vs_eager) == ("27 GEMM-class ops (16 from decomposing transformers::grouped_mm_fallback) against "
                               "eager's 15: the difference is decomposition")
    inside = [g for g in default.gemms if g.op == "mm"]
    assert len(inside) == 16 and all(g.kernels == ("aten::mm",) for g in inside)
    # one mm per expert that got tokens: gate_up (N 256) of layer 0, its 32 rows split 5 / 12 / 2 / 13
    assert [_shape(g) for g in inside[:4]] == [(5, 256, 64), (12, 256, 64), (2, 256, 64), (13, 256, 64)]
    assert _texts(inside[1])[0] == (
        "[code-gemm] aten::mm ran inside transformers::grouped_mm_fallback, which the output code calls at "
        "graph_0.py:1426 (torch.ops.transformers.grouped_mm_fallback.default; GEMM 2 of 4 of that call): its "
        "epilogue is what the code does with the call's result")
    # the call's result goes to the SwiGLU kernel (silu(gate) * up), computed apart
    assert {(g.verdict, g.unfused) for g in inside[:4]} == {("unfused", ("silu", "mul"))}


def _without_ops(tmp_path: Path, name: str, mode: str, op: str) -> ModeResult:
    """The recorded run with the mode's trace rewritten without its CPU ops named ``op`` (a profiler that did not
    record them): what the analysis can find is gone, what the dispatch count saw is not."""
    run = shutil.copytree(extract_run(CPU / f"{name}.tar.gz"), tmp_path / name)
    capture = json.loads((run / "modes" / mode / "capture.json").read_text())
    trace = run / capture["trace"]
    data = json.loads(gzip.decompress(trace.read_bytes()))
    data["traceEvents"] = [e for e in data["traceEvents"] if not (e.get("cat") == "cpu_op" and e.get("name") == op)]
    trace.write_bytes(gzip.compress(json.dumps(data).encode()))
    return build_mode_result(run, capture)


def test_gemms_hidden_in_a_custom_op_are_reported_unattributed_not_n_of_n(tmp_path):
    # GIVEN the compiled Mixtral whose 16 expert GEMMs ran inside transformers::grouped_mm_fallback, and a trace
    # that does not show them
    m = _without_ops(tmp_path, "hf_mixtral_fp32", "default", "aten::mm")
    c = m.gemm_coverage
    # THEN the analysis finds the 11 GEMMs the code calls, and coverage says 16 more ran: 11 of 27, not 11 of 11
    assert (len(m.gemms), c.ops, c.attributed, c.oracle, c.missing) == (11, 27, 11, 27, 16)
    assert not c.complete
    assert coverage_line(c) == ("11 of 27 GEMM-class ops attributed to a kernel (27 counted by the oracle from "
                                "output code + dispatch, 16 of them not found)")
    assert {unattributed_line(u) for u in c.unattributed} == {
        "aten::mm: the dispatch count saw it dispatched inside transformers::grouped_mm_fallback, and no GEMM was "
        "found for it"}


def test_custom_op_gemms_are_found_in_both_modes_and_reported_when_hidden(tmp_path):
    eager, default = compare_with_eager([_mode("custom_op_gemms", m) for m in ("eager", "default")])
    # eager: the profiler records the two mm the op dispatches (not the op itself): 2 addmm + 2 mm, as dispatched
    c = eager.gemm_coverage
    assert (c.ops, c.attributed, c.oracle, c.missing) == (4, 4, 4, 0)
    assert c.oracle_by_kind == {"addmm": 2, "mm": 2}
    # compiled: the two Linears are MKL calls of the code, the op an extern call of its own that runs both mm
    c = default.gemm_coverage
    assert (c.ops, c.attributed, c.oracle, c.missing) == (4, 4, 4, 0)
    assert c.decomposed == {"kernelscope_models::two_mm": 2}
    first, second = [g for g in default.gemms if g.op == "mm"]
    assert (_shape(first), _shape(second)) == ((16, 128, 64), (16, 64, 128))
    # x @ w1 stays inside the op (the second mm reads it): what the code does with the op's result (the ReLU) is
    # the second's epilogue, not the first's
    assert (first.verdict, first.unfused) == ("unknown", ())
    assert any("its result stays inside the call" in t for t in _texts(first))
    assert (second.verdict, second.unfused) == ("unfused", ("relu",))
    # and with the two mm missing from the eager trace, the dispatch count names them
    hidden = _without_ops(tmp_path, "custom_op_gemms", "eager", "aten::mm").gemm_coverage
    assert (hidden.ops, hidden.attributed, hidden.missing) == (4, 2, 2)
    assert [unattributed_line(u) for u in hidden.unattributed] == [
        "aten::mm: the dispatch count saw it dispatched inside kernelscope_models::two_mm, and no GEMM was found for "
        "it"] * 2


def test_an_oracle_gemm_is_matched_where_it_ran_and_named_where_it_was_not():
    # GIVEN a compiled mode whose analysis found no GEMM in its code and one aten::mm run eagerly between its
    # compiled regions, and an oracle that counted a tl.dot kernel of the code and an mm dispatched inside a custom
    # op that ran between the regions
    eager_mm = _Counted(GemmOp("aten::mm", "mm"), True)
    oracle = [OracleGemm("tl.dot", "triton_tem_fused_bmm_0", (0, 0, 3), "graph_0.py:912", by="tl.dot"),
              OracleGemm("mm", "aten::mm", inside="mylib::experts", by="dispatch")]
    c = gemm_coverage([], [], [eager_mm], with_code=True, oracle=oracle, oracle_source="output code + dispatch")
    # THEN the mm is the eager one (matched by kind), the kernel's GEMM is missing, and coverage says 1 of 2
    assert (c.ops, c.attributed, c.oracle, c.missing, c.complete) == (2, 1, 2, 1, False)
    assert [unattributed_line(u) for u in c.unattributed] == [
        "triton_tem_fused_bmm_0 (graph_0.py:912): the output code runs a kernel whose body calls tl.dot here, and no "
        "GEMM was found for it"]


# ------------------------------------------------------------------------------------------------------------
# As a user runs it


def _profile(tmp_path: Path, model: str, *options: str) -> dict:
    out = tmp_path / "run"
    proc = run_cli("profile", str(ROOT / model), "--device", "cpu", "--modes", "eager,default", "--processes", "1",
                   "--repeats", "3", "--warmup", "2", "--steps", "2", "--out", str(out), *options)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "result.json").read_text())


def _coverage(result: dict) -> dict[str, dict]:
    return {m["name"]: m["gemm_coverage"] for m in result["modes"]}


@pytest.mark.slow
def test_a_custom_op_that_runs_gemms_is_covered_in_eager_and_default(tmp_path):
    cov = _coverage(_profile(tmp_path, "tests/models/custom_op_gemms.py"))
    for mode in ("eager", "default"):
        c = cov[mode]
        assert (c["ops"], c["attributed"], c["oracle"], c["missing"]) == (4, 4, 4, 0), mode
    assert cov["default"]["decomposed"] == {"kernelscope_models::two_mm": 2}


@pytest.mark.slow
def test_mixtral_bf16_gemm_count_equals_the_dispatch_oracle_in_eager_and_default(moe_bf16_run: Path):
    cov = _coverage(json.loads((moe_bf16_run / "result.json").read_text()))
    for mode in ("eager", "default"):
        c = cov[mode]
        assert (c["ops"], c["attributed"], c["oracle"], c["missing"], c["unattributed"]) == (15, 15, 15, 0, []), mode
    assert cov["eager"]["by_kind"] == {"_grouped_mm": 4, "mm": 11}
    assert cov["default"]["by_kind"] == {"_grouped_mm": 4, "_linear_pointwise": 11}
