"""GEMMs that run inside another op's call, and the mixture of experts' combine, on recorded CPU runs
(tests/data/cpu-torch2.14.1, README.md there):

- hf_mixtral_fp32: compiled, transformers' custom op ``transformers::grouped_mm_fallback`` runs one ``aten::mm`` per
  expert inside each call; eager runs ``aten::_grouped_mm``;
- hf_mixtral_eager_default_bf16: both modes run ``_grouped_mm`` (compiled: ``extern_kernels._grouped_mm``);
- custom_op_gemms: a custom op ``kernelscope_models::two_mm`` runs ``x @ w1 @ w2`` between two Linears, and the model
  applies a ReLU to its result.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.evidence_words import evidence_text
from kernelscope.result import EvidenceRule, ModeResult

from .zoo_fixtures import extract_run

CPU = Path(__file__).resolve().parent / "data" / "cpu-torch2.14.1"


@cache
def _mode(name: str, mode: str) -> ModeResult:
    run = extract_run(CPU / f"{name}.tar.gz")
    return build_mode_result(run, json.loads((run / "modes" / mode / "capture.json").read_text()))


def test_gemms_inside_a_custom_op_are_the_module_that_called_the_op():
    # compiled, the 16 per-expert mm's run inside the 4 calls of grouped_mm_fallback: no call site of the code is
    # theirs, so the call's own traced node (out, out_1, ...) names the module, as eager's profiler range does
    default = _mode("hf_mixtral_fp32", "default")
    inside = [g for g in default.gemms if g.op == "mm"]
    assert len(inside) == 16
    assert [g.module for g in inside] == ["model.layers.0.mlp.experts"] * 8 + ["model.layers.1.mlp.experts"] * 8
    ev = next(e for e in inside[0].evidence if e.rule == EvidenceRule.PROVENANCE_CALLER.value)
    assert (ev.facts["node"], ev.facts["post"]) == ("out", "grouped_mm_fallback")
    eager = _mode("hf_mixtral_fp32", "eager")
    assert {g.module for g in eager.gemms if g.op == "_grouped_mm"} == {g.module for g in inside}


def test_the_first_gemm_of_a_chain_inside_a_custom_op_does_not_take_the_calls_epilogue():
    # x @ w1 feeds the second mm inside two_mm; only the second one's result is the call's, which the ReLU reads
    for mode in ("eager", "default"):
        first, second = [g for g in _mode("custom_op_gemms", mode).gemms if g.op == "mm"]
        assert ((first.m, first.n, first.k), (second.m, second.n, second.k)) == ((16, 128, 64), (16, 64, 128))
        assert first.unfused == () and second.unfused == ("relu",), mode
    first = next(g for g in _mode("custom_op_gemms", "eager").gemms if g.op == "mm")
    assert first.verdict == "none"
    assert "[eager-sequence] chain stops at aten::mm: the next GEMM" in [evidence_text(e) for e in first.evidence]


def test_the_experts_down_projection_ends_at_the_sum_over_each_tokens_experts():
    # down(x) * routing weight, then the token's top-2 rows summed (sum(dim=1), which Inductor unrolls into an add
    # of two rows read through the inverse permutation) and the residual add: the sum mixes rows of the GEMM's
    # output, so the chain ends there, as eager's ends at the gather before it; the mul is the epilogue in every mode
    for name, op in (("hf_mixtral_eager_default_bf16", "_grouped_mm"), ("hf_mixtral_fp32", "_grouped_mm"),
                     ("hf_mixtral_fp32", "mm")):
        for mode in ("eager", "default"):
            down = [g for g in _mode(name, mode).gemms if g.op == op and g.n == 64 and g.k == 128]
            if not down:
                continue  # fp32 eager runs _grouped_mm, compiled the custom op's mm's
            assert {(g.verdict, g.fused, g.unfused) for g in down} == {("unfused", (), ("mul",))}, (name, mode)
    (down, _) = [g for g in _mode("hf_mixtral_eager_default_bf16", "default").gemms if g.n == 64 and g.k == 128]
    stop = [evidence_text(e) for e in down.evidence if e.rule == EvidenceRule.DATAFLOW_POOLING.value]
    assert stop and "`tmp50 = tmp26 + tmp49;`" in stop[0]
