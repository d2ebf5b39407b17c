"""kernelscope run for real on torch 2.14.1 + cutlass.operators 0.3.0 (NVGEMM) on one H200.

tests/data/h200-torch2.14.1-kernelscope-run/ holds the run directories (README there: how torch 2.14.1 was carried,
the 11 NCCL stubs, CUTE_DSL_ARCH=sm_90a, the exact commands; the workers ran under `--python /tmp/py214`, the
analysis under the image's torch 2.11). The facts below are re-derived from the captures (trace, output code,
log), not read from the committed result.json, except where a test says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.evidence_words import why_not_text
from kernelscope.report.words import say, say_all

RUN = Path(__file__).parent / "data" / "h200-torch2.14.1-kernelscope-run"


def mode(run: str, dirname: str):
    d = RUN / run
    return build_mode_result(d, json.loads((d / "modes" / dirname / "capture.json").read_text()))


def test_the_workers_ran_torch_2141_through_another_interpreter():
    env = json.loads((RUN / "llama-bf16" / "result.json").read_text())["environment"]
    assert env["interpreter"]["torch"] == "2.14.1+cu130" and env["interpreter"]["path"] == "/tmp/py214"


def test_nvgemm_kernels_are_found_and_categorised():
    # max-autotune:NVGEMM on the llama block: all 14 GEMMs run cutlass.operators' SM90 persistent kernel
    # (kernel_cutlass_kernel_cutlassoperatorsproviders...Sm90StaticPersistentGemmKernel), launched from the
    # wrapper's nv_universal_gemm_* call sites with no CPU op of their own.
    m = mode("llama-bf16", "max-autotune_NVGEMM")
    assert m.status == "ok" and m.kernels_by_backend["NVGEMM/CuTeDSL"] == 14 and m.kernels_by_category["gemm"] == 14
    assert {g.backend for g in m.gemms} == {"NVGEMM/CuTeDSL"} and len(m.gemms) == 14
    assert all(g.kernels[0].startswith("kernel_cutlass_kernel_cutlassoperatorsproviderscutedsl") for g in m.gemms)
    # one definition (nv_universal_gemm_fused_add_mean_mm_mul_pow_rsqrt_t_view_98fea869) serves q/k/v/o and down:
    # the call sites' operands give each its own shape, and the order of the graph's GEMM nodes its module
    down = [g for g in m.gemms if g.module.endswith("down_proj")]
    assert [(g.m, g.n, g.k) for g in down] == [(512, 1024, 2816)] * 2
    assert [g.module for g in m.gemms[:7]] == [
        "layers.0.self_attn.q_proj", "layers.0.self_attn.k_proj", "layers.0.self_attn.v_proj",
        "layers.0.self_attn.o_proj", "layers.0.mlp.gate_proj", "layers.0.mlp.up_proj", "layers.0.mlp.down_proj"]


def test_nvgemm_fuses_no_epilogue_on_sm90_and_says_why():
    m = mode("llama-bf16", "max-autotune_NVGEMM")
    o = next(g for g in m.gemms if g.module == "layers.0.self_attn.o_proj")
    assert (o.verdict, o.unfused) == ("unfused", ("add",))
    assert o.why_not[0].reason == "nvgemm-no-epilogue-operator" and o.why_not[0].facts["sm"] == "sm90"
    assert why_not_text(o.why_not).startswith("NVGEMM on sm90: cutlass.operators has no epilogue-fusion-capable "
                                              "operator for this GPU (those target SM100)")
    gate = next(g for g in m.gemms if g.module == "layers.0.mlp.gate_proj")
    assert gate.unfused == ("silu", "mul")


def test_nvgemm_wins_the_attention_gemms_against_aten_and_triton():
    # max-autotune:ATEN+TRITON+NVGEMM: NVGEMM won the 1024x1024 tables (nv_universal_gemm_2), cuBLAS the MLP's
    m = mode("llama-bf16", "max-autotune_ATEN-TRITON-NVGEMM")
    by = {g.module: g.backend for g in m.gemms}
    assert {by[f"layers.{i}.self_attn.{p}_proj"] for i in (0, 1) for p in "qkvo"} == {"NVGEMM/CuTeDSL"}
    assert {by[f"layers.{i}.mlp.{p}_proj"] for i in (0, 1) for p in ("gate", "up", "down")} == {"cuBLASLt"}
    tables = {(a.sizes, a.winner_backend) for a in m.autotune}
    assert ("512x1024, 1024x1024", "NVGEMM") in tables and ("512x1024, 1024x2816", "ATen") in tables


@pytest.mark.parametrize("run", ["seed-fp16", "seed-bf16", "tb-bf16-b4", "tb-bf16-b32"])
def test_nvgemm_alone_has_no_choice_for_addmm_on_sm90(run):
    # The seed and the transformer block are addmm (Linear with bias): Inductor raised NoValidChoicesError; the
    # note says why in the GPU's terms.
    m = mode(run, "max-autotune_NVGEMM")
    assert m.status == "failed" and "NoValidChoicesError" in m.error
    assert any(say(n).startswith("max_autotune_gemm_backends=NVGEMM offered no choice for aten.addmm on sm90: "
                                 "NVGEMM offers no choice for addmm on SM90") for n in m.findings)


def test_the_triton_template_fuses_bias_and_gelu_even_when_aten_won_the_table():
    # seed fp16, ATEN+TRITON+NVGEMM: the AUTOTUNE table ranks ATen's addmm first, then Inductor's epilogue-fusion
    # benchmark kept the Triton template with GELU fused in: what ran is the template.
    m = mode("seed-fp16", "max-autotune_ATEN-TRITON-NVGEMM")
    (g,) = m.gemms
    assert (g.backend, g.verdict, g.fused) == ("Triton template", "fused", ("bias", "gelu"))
    (t,) = m.autotune
    assert t.winner_backend == "ATen" and "autotune-template-ran" in [n.code for n in t.notes]
    assert "a Triton template ran" in say_all(t.notes)


def test_upgrade_check_from_211_to_2141_on_the_h200():
    # kernelscope upgrade-check samples/linear_gelu.py --before python3 (2.11) --after /tmp/py214 (2.14.1), fp16:
    # the committed comparison (compare.json is the command's output; its numbers are the run's)
    d = json.loads((RUN / "up-seed" / "compare.json").read_text())
    assert d["summary"][0] == "Upgrade check: torch 2.11.0+cu130 → 2.14.1+cu130 on NVIDIA H200, float16"
    assert d["summary"][1].startswith("Verdict: no regression")
    modes = {m["name"]: m for m in d["modes"]}
    assert modes["max-autotune:NVGEMM"]["status_change"]
    assert modes["max-autotune"]["gemms"][0]["matched_by"] == "module"
