"""GEMM epilogue verdicts: exact verdicts on real H200 traces and Inductor code, a table of kernel sequences,
and real CPU runs of Inductor (C++ GEMM template with the epilogue fused vs ATen GEMM + separate kernel)."""

from __future__ import annotations

import dataclasses
import gzip
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kernelscope.analysis.gemm import analyze_gemms, parse_log, short_kernel_name, summarize
from kernelscope.analysis.kernels import analyze_kernels
from kernelscope.inductor_code import load_output_code
from kernelscope.report.evidence_words import evidence_text, why_not_text
from kernelscope.report.words import say
from kernelscope.result import GemmEpilogue, WhyNot, to_json
from kernelscope.trace import load_trace, trace_from_dict
from tests.conftest import DATA, H200_211, H200_2141

H200 = {"device": "cuda", "capability": "9.0", "freezing": False}
EAGER = {**H200, "compiled": False, "max_autotune": False, "gemm_backends": None}
DEFAULT = {**H200, "compiled": True, "max_autotune": False, "gemm_backends": None}
ATEN_TRITON = {**H200, "compiled": True, "max_autotune": True, "gemm_backends": ["ATEN", "TRITON"]}
CUTLASS = {**H200, "compiled": True, "max_autotune": True, "gemm_backends": ["CUTLASS"]}
NVGEMM = {**H200, "compiled": True, "max_autotune": True, "gemm_backends": ["NVGEMM"]}


def texts(g: GemmEpilogue) -> list[str]:
    """The evidence of a verdict in the reports' words (its records: rule, kind, where, facts)."""
    return [evidence_text(e) for e in g.evidence]


def why(g: GemmEpilogue) -> str:
    """The why-not of a verdict in the reports' words (its records: reason, facts)."""
    return why_not_text(g.why_not)


def reasons(g: GemmEpilogue) -> list[str]:
    return [r.reason for r in g.why_not]


def run(
    folder: Path,
    name: str,
    mode: str,
    config: dict[str, Any],
    *,
    with_code: bool = True,
    log_text: str | None = None,
) -> tuple[tuple[GemmEpilogue, ...], str]:
    trace = load_trace(folder / f"{name}.trace.json.gz")
    code_path = folder / f"{name}.code.py"
    codes = load_output_code(code_path) if with_code and code_path.exists() else ()
    return analyze_gemms(
        analyze_kernels(trace), trace, codes, mode=mode, mode_config=config, log_text=log_text
    )


def single(folder: Path, name: str, mode: str, config: dict[str, Any], **kw: Any) -> GemmEpilogue:
    gemms, summary = run(folder, name, mode, config, **kw)
    assert len(gemms) == 1, summary
    return gemms[0]


# ------------------------------------------------------------------------------------------------------------
# Real H200 fixtures: the README's claims, checked against what the traces and code show.


@dataclass(frozen=True)
class Case:
    folder: Path
    name: str
    mode: str
    config: dict[str, Any]
    verdict: str
    backend: str
    op: str
    mnk: tuple[int, int, int] | tuple[None, None, None]
    dtype: str | None
    epilogue: tuple[str, ...]
    fused: tuple[str, ...]
    unfused_kernels: tuple[str, ...]  # a regex per kernel
    kernels: tuple[str, ...]  # a regex per kernel
    time_us: float
    confidence: str


CASES = [
    Case(
        H200_211,
        "seed-eager",
        "eager",
        EAGER,
        "partial",
        "cuBLASLt",
        "addmm",
        (16, 4096, 4096),
        "float16",
        ("bias", "gelu"),
        ("bias",),
        (r"vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl",),
        (r"^nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_bias_TNT$", r"^void cublasLt::splitKreduce_kernel<"),
        9.21,
        "trace",
    ),
    Case(
        H200_211,
        "seed-default",
        "default",
        DEFAULT,
        "partial",
        "cuBLASLt",
        "addmm",
        (16, 4096, 4096),
        "float16",
        ("bias", "gelu"),
        ("bias",),
        (r"^triton_poi_fused_gelu_0$",),
        (r"^nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_bias_TNT$", r"^void cublasLt::splitKreduce_kernel<"),
        9.21,
        "code",
    ),
    Case(
        H200_211,
        "seed-max-autotune",
        "max-autotune",
        ATEN_TRITON,
        "partial",
        "Triton template",
        "addmm",
        (16, 4096, 4096),
        "float16",
        ("bias", "gelu"),
        ("bias",),
        (r"^triton_poi_fused_gelu_1$",),
        (r"^triton_tem_fused_addmm_t_0$",),
        12.941,
        "code",
    ),
    Case(
        H200_211,
        "big-eager",
        "eager",
        EAGER,
        "partial",
        "cuBLASLt",
        "addmm",
        (4096, 4096, 4096),
        "bfloat16",
        ("bias", "relu"),
        ("bias",),
        (r"vectorized_elementwise_kernel<8, .*launch_clamp_scalar",),
        (r"^nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT$",),
        181.356,
        "trace",
    ),
    Case(
        H200_211,
        "big-default",
        "default",
        DEFAULT,
        "partial",
        "cuBLASLt",
        "addmm",
        (4096, 4096, 4096),
        "bfloat16",
        ("bias", "relu"),
        ("bias",),
        (r"^triton_poi_fused_relu_0$",),
        (r"^nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT$",),
        178.917,
        "code",
    ),
    Case(
        H200_211,
        "big-max-autotune",
        "max-autotune",
        ATEN_TRITON,
        "partial",
        "cuBLASLt",
        "addmm",
        (4096, 4096, 4096),
        "bfloat16",
        ("bias", "relu"),
        ("bias",),
        (r"^triton_poi_fused_relu_0$",),
        (r"^nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT$",),
        177.913,
        "code",
    ),
    Case(
        H200_211,
        "sbr-cutlass-noevt",
        "max-autotune",
        CUTLASS,
        "unfused",
        "CUTLASS",
        "mm",
        (2048, 4096, 4096),
        "bfloat16",
        ("mul", "add", "relu"),
        (),
        (r"^triton_poi_fused_add_mul_relu_0$",),
        (r"^void cutlass::device_kernel<cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x128x64_",),
        176.865,
        "code",
    ),
    Case(
        H200_2141,
        "mmrelu-nvgemm",
        "max-autotune",
        NVGEMM,
        "unfused",
        "NVGEMM/CuTeDSL",
        "mm",
        (2048, 4096, 4096),
        "bfloat16",
        ("relu",),
        (),
        (r"^triton_poi_fused_relu_0$",),
        (
            r"^kernel_cutlass_kernel_cutlassoperatorsproviderscutedslgemmimplementations"
            r"sm90_static_persistent_implSm90StaticPersistentGemmKernel_.*_0$",
        ),
        94.506,
        "code",
    ),
    Case(
        H200_2141,
        "seed-aten-triton",
        "max-autotune",
        ATEN_TRITON,
        "fused",
        "Triton template",
        "addmm",
        (16, 4096, 4096),
        "float16",
        ("bias", "gelu"),
        ("bias", "gelu"),
        (),
        (r"^triton_tem_fused_addmm_gelu_t_0$",),
        13.056,
        "code",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_fixture_verdicts(case: Case):
    gemms, summary = run(case.folder, case.name, case.mode, case.config)
    assert summary == f"GEMMs 1: {case.verdict} 1"
    (g,) = gemms
    assert (g.id, g.verdict, g.backend, g.op, g.confidence) == (
        "gemm0",
        case.verdict,
        case.backend,
        case.op,
        case.confidence,
    )
    assert (g.m, g.n, g.k, g.dtype) == (*case.mnk, case.dtype)
    assert g.epilogue == case.epilogue
    assert g.fused == case.fused
    assert g.unfused == tuple(op for op in case.epilogue if op not in case.fused)
    assert len(g.kernels) == len(case.kernels)
    for kernel, pattern in zip(g.kernels, case.kernels):
        assert re.search(pattern, kernel), kernel
    assert len(g.unfused_kernels) == len(case.unfused_kernels)
    for kernel, pattern in zip(g.unfused_kernels, case.unfused_kernels):
        assert re.search(pattern, kernel), kernel
    assert g.time_us_per_iter == pytest.approx(case.time_us, abs=1e-3)
    assert bool(g.why_not) == (case.verdict != "fused")
    assert g.prologue == ()
    # every iteration of the trace launched the same GEMM with the same verdict
    assert any(e.startswith("[iterations] same kernels and verdict in all") for e in texts(g))


@pytest.mark.parametrize("case", [c for c in CASES if c.confidence == "code"], ids=lambda c: c.name)
def test_compiled_fixture_without_code_gives_the_same_weaker_verdict(case: Case):
    # GIVEN only the trace of a compiled run (kernelscope analyze TRACE, no --code)
    gemms, summary = run(case.folder, case.name, case.mode, case.config, with_code=False)
    # THEN the kernel sequence gives the same verdict, marked trace-only
    (g,) = gemms
    assert summary == f"GEMMs 1: {case.verdict} 1 (trace-only)"
    assert (g.verdict, g.confidence, g.backend) == (case.verdict, "trace-only", case.backend)
    assert set(g.fused) == set(case.fused)
    assert texts(g)[0].startswith("[trace-only]")


def test_evidence_names_rule_kernel_and_code_line():
    # Read from seed-max-autotune.code.py: the template's body adds the bias row to acc (line 145) and the
    # separate pointwise kernel, launched at line 235 on buf1, computes erf (line 193): GELU.
    g = single(H200_211, "seed-max-autotune", "max-autotune", ATEN_TRITON)
    t = texts(g)
    assert ("[code-gemm] triton_tem_fused_addmm_t_0 (triton_template, seed-max-autotune.code.py:227) runs the "
            "addmm (%addmm, seed-max-autotune.code.py:46)") in t
    assert ("[template-epilogue] bias is computed inside triton_tem_fused_addmm_t_0 on the GEMM's result: "
            "`tmp1 = acc + tmp0` (seed-max-autotune.code.py:145); call site seed-max-autotune.code.py:227") in t
    assert ("[dataflow] gelu runs in triton_poi_fused_gelu_1, a separate kernel, at call site "
            "seed-max-autotune.code.py:235: it reads the GEMM result through in_out_ptr0=buf1: "
            "`tmp6 = libdevice.erf(tmp5)` (seed-max-autotune.code.py:193)") in t
    assert why(g).startswith("gelu left in a separate kernel (triton_poi_fused_gelu_1)")
    kinds = {e.kind for e in g.evidence}
    assert {"code", "trace"} <= kinds
    assert next(e for e in g.evidence if e.rule == "template-epilogue.body").where == \
        "seed-max-autotune.code.py:145"


def test_extern_gemm_output_is_linked_to_the_kernel_that_reads_it():
    # The call site extern_kernels.addmm(..., out=buf1) writes buf1; triton_poi_fused_gelu_0.run(buf1, ...) reads
    # it as in_out_ptr0: the wrapper's buffer names, not the fragment's FX names, link the two.
    g = single(H200_211, "seed-default", "default", DEFAULT)
    t = texts(g)
    assert ("[dataflow] gelu runs in triton_poi_fused_gelu_0, a separate kernel, at call site "
            "seed-default.code.py:121: "
            "it reads the GEMM result through in_out_ptr0=buf1: `tmp6 = libdevice.erf(tmp5)` "
            "(seed-default.code.py:80)") in t
    assert "[split-k] cublasLt::splitKreduce_kernel belongs to the GEMM launched before it" in t
    assert (
        "[cublaslt-bias-epilogue] the bias is applied in cuBLASLt's epilogue: "
        "nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_bias_TNT" in t
    )
    # the why-not is one reason with its facts; the reports write it out
    assert g.why_not == (WhyNot("max-autotune-off", {"ops": ("gelu",), "kernels": ("triton_poi_fused_gelu_0",),
                                                     "library": "cuBLAS/cuBLASLt"}),)
    assert why(g) == (
        "max-autotune is off, so Inductor called the ATen/cuBLAS/cuBLASLt GEMM, which cannot take an "
        "Inductor epilogue; gelu ran in triton_poi_fused_gelu_0"
    )


def test_max_autotune_unknown_is_read_from_the_code():
    # kernelscope analyze on someone else's trace: no mode config. The Triton kernels' inductor_meta says
    # 'max_autotune': False.
    g = single(H200_211, "seed-default", "trace", {"device": "cuda"})
    assert why(g).startswith("max-autotune is off, so Inductor called the ATen/cuBLAS/cuBLASLt GEMM")


def test_nvgemm_kernel_found_by_launch_order_and_why_not_on_sm90():
    # The NVGEMM launch is a cudaLaunchKernelExC with no cpu_op of its own, and its GPU name differs from the
    # code's.
    g = single(H200_2141, "mmrelu-nvgemm", "max-autotune", NVGEMM)
    launch = [e for e in texts(g) if e.startswith("[launch-order]")]
    assert len(launch) == 1
    assert launch[0].startswith(
        "[launch-order] nv_universal_gemm_fused_mm_t_fa23e97c (mmrelu-nvgemm.code.py:158) ran as "
        "kernel_cutlass_kernel_cutlassoperatorsproviderscutedsl"
    )
    assert launch[0].endswith("matched by launch order")
    assert reasons(g) == ["nvgemm-no-epilogue-operator"] and g.why_not[0].facts["sm"] == "sm90"
    assert why(g) == (
        "NVGEMM on sm90: cutlass.operators has no epilogue-fusion-capable operator for this GPU "
        "(those target SM100), so relu ran in triton_poi_fused_relu_0"
    )
    assert (
        "[code-gemm] nv_universal_gemm_fused_mm_t_fa23e97c runs cutedsl.Sm90StaticPersistentGemmOperator_tnt_"
        "ABFloat16_BBFloat16_outBFloat16_accFloat32_cluster1x1x1_tile64x256x64 with has_epilogue=False"
    ) in texts(g)


def test_cutlass_named_fused_is_not_an_epilogue():
    # cutlass_fused_mm_t_* has "fused" in its name but no epilogue: triton_poi_fused_add_mul_relu_0 computes
    # tmp2 = tmp0 * tmp1 (the scale), tmp4 = tmp2 + tmp3 (the shift arg2_1), then the ReLU.
    g = single(H200_211, "sbr-cutlass-noevt", "max-autotune", CUTLASS)
    got = [e for e in texts(g) if e.startswith("[dataflow] ") and "runs in" in e]
    assert [e.split(" runs in ")[0] for e in got] == ["[dataflow] mul", "[dataflow] add", "[dataflow] relu"]
    assert "(other operands in_ptr0=arg2_1): `tmp4 = tmp2 + tmp3` (sbr-cutlass-noevt.code.py:304)" in got[1]
    assert reasons(g)[0] == "cutlass-no-epilogue" and "CUTLASS_EPILOGUE_FUSION=1" in why(g)


def test_autotune_winner_why_not():
    g = single(H200_211, "big-max-autotune", "max-autotune", ATEN_TRITON)
    assert reasons(g) == ["library-gemm"]
    assert why(g) == (
        "the autotuner picked the ATen/cuBLAS/cuBLASLt GEMM, which cannot take an Inductor epilogue; "
        "relu ran in triton_poi_fused_relu_0"
    )


def nvgemm_log() -> str:
    return gzip.decompress((H200_2141 / "nvgemm-arch-failure.stderr.txt.gz").read_bytes()).decode()


def test_parse_real_nvgemm_failure_log():
    facts = parse_log(nvgemm_log())
    assert len(facts.nvgemm_failed_choices) == 10
    assert facts.nvgemm_failed_choices[0] == (
        "cutedsl.Sm90StaticPersistentGemmOperator_tnt_ABFloat16_BBFloat16_outBFloat16_accFloat32_"
        "cluster1x1x1_tile64x128x64"
    )
    assert facts.nvgemm_error == "expects arch to be sm_90a, but got sm_100a"
    assert facts.graphs == 1
    assert facts.autotune == ()


def test_why_not_reports_nvgemm_compile_failures_when_aten_won():
    # The README of h200-torch2.14.1-nvgemm: with ATEN next to NVGEMM, every NVGEMM choice failing to compile
    # is
    # silent and ATen wins. GIVEN an ATen-won trace and code (big-max-autotune) and that real failure log,
    # with NVGEMM
    # among the requested backends
    config = {**ATEN_TRITON, "gemm_backends": ["ATEN", "NVGEMM"]}
    g = single(H200_211, "big-max-autotune", "max-autotune", config, log_text=nvgemm_log())
    # THEN the why-not says the NVGEMM choices failed and how to fix it
    assert (
        "every NVGEMM choice failed to compile in the autotune workers (10 choices: expects arch to be "
        "sm_90a, "
        "but got sm_100a); set CUTE_DSL_ARCH=sm_90a"
    ) in why(g)
    failed = next(r for r in g.why_not if r.reason == "nvgemm-compile-failed")
    assert (failed.facts["count"], failed.facts["arch"]) == (10, "sm_90a")
    assert "NVUniversalGemmCaller choices failed" in " ".join(texts(g))
    assert next(e for e in g.evidence if e.rule == "nvgemm-log.failed").kind == "log"
    # and without the log there is nothing to say about NVGEMM's compile, only what sm90 lacks for addmm
    h = single(H200_211, "big-max-autotune", "max-autotune", config)
    assert "failed to compile" not in why(h)
    assert "NVGEMM offers no choice for addmm on sm90" in why(h)
    assert "nvgemm-no-bias-choice" in reasons(h) and "nvgemm-compile-failed" not in reasons(h)


def test_nvgemm_offers_no_addmm_on_sm90():
    # Seed (addmm) with NVGEMM requested and ATen winning: on sm90 NVGEMM has no epilogue-capable operator for
    # the bias.
    config = {**ATEN_TRITON, "gemm_backends": ["ATEN", "NVGEMM"]}
    g = single(H200_211, "seed-default", "max-autotune", config)
    assert "NVGEMM offers no choice for addmm on sm90" in why(g)


def test_cutedsl_gemm_without_aten_op_is_read_from_the_trace():
    # cutlass.operators called directly (no ATen op, no Inductor code): a GEMM kernel whose name says nothing
    # about
    # fusion and no kernel after it.
    g = single(H200_211, "cutedsl-gemm-plain", "eager", EAGER)
    assert (g.verdict, g.backend, g.confidence, g.epilogue) == ("unknown", "NVGEMM/CuTeDSL", "trace-only", ())


def test_result_round_trips_as_json():
    gemms, _ = run(H200_211, "seed-max-autotune", "max-autotune", ATEN_TRITON)
    data = json.loads(json.dumps(to_json(list(gemms))))
    assert data[0]["verdict"] == "partial"
    assert data[0]["unfused_kernels"] == ["triton_poi_fused_gelu_1"]


def test_summary_order_and_empty():
    g = single(H200_2141, "seed-aten-triton", "max-autotune", ATEN_TRITON)
    h = single(H200_211, "seed-default", "default", DEFAULT)
    assert summarize([h, g, h]) == "GEMMs 3: fused 1, partial 2"
    assert summarize([]) == "GEMMs 0"


@pytest.mark.parametrize(
    ("name", "short"),
    [
        ("triton_poi_fused_gelu_0", "triton_poi_fused_gelu_0"),
        (
            "void at::native::vectorized_elementwise_kernel<8, "
            "at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
            "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#3}::operator()() "
            "const::{lambda(c10::Half)"
            "#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&))",
            "at::native::vectorized_elementwise_kernel<GeluCUDAKernelImpl...>",
        ),
    ],
)
def test_short_kernel_name(name: str, short: str):
    assert short_kernel_name(name) == short


# ------------------------------------------------------------------------------------------------------------
# kernelscope's own H200 captures (benchmarks/zoo.py): capture.json config, code/graph_0.py, log.txt,
# trace.

H200_KS = H200_211.parent / "h200-torch2.11-kernelscope"


def ks_run(model: str, mode: str) -> tuple[tuple[GemmEpilogue, ...], str]:
    d = H200_KS / model / "modes" / mode
    capture = json.loads((d / "capture.json").read_text())
    (trace_path,) = (H200_KS / model / "tb" / mode).glob("*.pt.trace.json.gz")
    trace = load_trace(trace_path)
    codes = (
        [c for p in sorted((d / "code").glob("*.py")) for c in load_output_code(p)]
        if (d / "code").exists()
        else []
    )
    return analyze_gemms(
        analyze_kernels(trace),
        trace,
        codes,
        mode=mode,
        mode_config=capture["config"],
        log_text=(d / "log.txt").read_text(),
    )


B, G, S, R, A, GT = "bias", "gelu", "silu", "relu", "add", "gelu-tanh"
KS_CASES = [
    # (model, mode, summary, [(verdict, backend, epilogue, fused)] per GEMM in launch order)
    ("linear_gelu", "eager", "GEMMs 1: partial 1", [("partial", "cuBLASLt", (B, G), (B,))]),
    ("linear_gelu", "default", "GEMMs 1: partial 1", [("partial", "cuBLASLt", (B, G), (B,))]),
    ("linear_gelu", "reduce-overhead", "GEMMs 1: partial 1", [("partial", "cuBLASLt", (B, G), (B,))]),
    ("linear_gelu", "max-autotune", "GEMMs 1: fused 1", [("fused", "Triton template", (B, G), (B, G))]),
    (
        "linear_gelu",
        "max-autotune_TRITON",
        "GEMMs 1: fused 1",
        [("fused", "Triton template", (B, G), (B, G))],
    ),
    # cuBLASLt's plain kernel after a copy of the bias into the output: the bias is applied by the GEMM call
    # (README, "bias in the GEMM call"), the GELU runs separately
    ("linear_gelu", "max-autotune_ATEN", "GEMMs 1: partial 1", [("partial", "cuBLASLt", (B, G), (B,))]),
    ("addmm_activation", "eager", "GEMMs 1: fused 1", [("fused", "cuBLASLt", (B, G), (B, G))]),
    ("addmm_activation", "default", "GEMMs 1: fused 1", [("fused", "cuBLASLt", (B, G), (B, G))]),
    (
        "mlp",
        "eager",
        "GEMMs 3: partial 3",
        [
            ("partial", "cuBLASLt", (B, G), (B,)),
            ("partial", "cuBLASLt", (B, S), (B,)),
            ("partial", "cuBLASLt", (B, R, A), (B,)),
        ],
    ),
    (
        "mlp",
        "default",
        "GEMMs 3: partial 3",
        [
            ("partial", "cuBLASLt", (B, GT), (B,)),
            ("partial", "cuBLASLt", (B, S), (B,)),
            ("partial", "cuBLASLt", (B, R, A), (B,)),
        ],
    ),
    (
        "mlp",
        "max-autotune",
        "GEMMs 3: fused 2, partial 1",
        [
            ("fused", "Triton template", (B, GT), (B, GT)),
            ("fused", "Triton template", (B, S), (B, S)),
            ("partial", "Triton template", (B, R, A), (B,)),
        ],
    ),
    ("prologue", "eager", "GEMMs 1: unfused 1", [("unfused", "cuBLASLt", (R,), ())]),
    ("prologue", "max-autotune_TRITON", "GEMMs 1: fused 1", [("fused", "Triton template", (R,), (R,))]),
    (
        "transformer_block",
        "eager",
        "GEMMs 4: fused 1, partial 3",
        [
            ("fused", "cuBLASLt", (B,), (B,)),
            ("partial", "cuBLASLt", (B, A), (B,)),
            ("partial", "cuBLASLt", (B, G), (B,)),
            ("partial", "cuBLASLt", (B, A), (B,)),
        ],
    ),
    (
        "transformer_block",
        "default",
        "GEMMs 4: fused 1, partial 3",
        [
            ("fused", "cuBLASLt", (B,), (B,)),
            ("partial", "cuBLASLt", (B, A), (B,)),
            ("partial", "cuBLASLt", (B, G), (B,)),
            ("partial", "cuBLASLt", (B, A), (B,)),
        ],
    ),
    (
        "transformer_block",
        "max-autotune",
        "GEMMs 4: fused 1, partial 3",
        [
            ("fused", "Triton template", (B,), (B,)),
            ("partial", "Triton template", (B, A), (B,)),
            ("partial", "Triton template", (B, G), (B,)),
            ("partial", "Triton template", (B, A), (B,)),
        ],
    ),
]


@pytest.mark.parametrize(
    ("model", "mode", "summary", "expected"), KS_CASES, ids=lambda v: v if isinstance(v, str) else ""
)
def test_kernelscope_capture_verdicts(model, mode, summary, expected):
    gemms, got = ks_run(model, mode)
    assert got == summary
    assert [(g.verdict, g.backend, g.epilogue, g.fused) for g in gemms] == expected
    assert all(g.prologue == () for g in gemms)
    assert all(
        any(e.startswith("[iterations] same kernels and verdict in all 3") for e in texts(g)) for g in gemms
    )


def test_template_reading_a_converted_input_has_no_prologue():
    # The README: triton_tem_fused__to_copy_mm_mul_relu_t_1 lists mul/_to_copy in its name and fragment, but
    # reads
    # buf0 written by triton_poi_fused__to_copy_mul_0: those ops are neither prologue-fused nor epilogue.
    (g,), _ = ks_run("prologue", "max-autotune_TRITON")
    assert (g.kernels, g.op, g.m, g.n, g.k, g.dtype) == (
        ("triton_tem_fused__to_copy_mm_mul_relu_t_1",),
        "mm",
        2048,
        4096,
        4096,
        "bfloat16",
    )
    assert (g.prologue, g.epilogue, g.fused) == ((), ("relu",), ("relu",))


def test_aten_won_autotune_bias_copied_before_the_gemm():
    (g,), _ = ks_run("linear_gelu", "max-autotune_ATEN")
    assert (
        g.kernels[0] == "nvjet_sm90_hsh_64x16_64x16_2x1_v_bx_splitK_TNT"
    )  # no bias epilogue in this cuBLASLt kernel
    # the bias is copied into the output (direct_copy_kernel_cuda) and accumulated by the GEMM: in the call
    assert any(t.startswith("[bias-in-call] aten::addmm copies the broadcast bias into the output "
                            "(at::native::elementwise_kernel") for t in texts(g))
    assert g.unfused_kernels == ("triton_poi_fused_gelu_0",)
    picked = g.why_not[0]
    assert (picked.reason, picked.facts["winner"], picked.facts["winner_ms"]) == ("autotune-picked", "addmm", 0.0672)
    assert why(g).startswith(
        "the library GEMM addmm (0.0672 ms) won the autotune; a library GEMM cannot take an "
        "Inductor epilogue, so gelu ran in "
    )
    assert (
        "[autotune-log] AUTOTUNE addmm(16x4096, 16x4096, 4096x4096) at log line 10: addmm 0.0672 ms, "
        "bias_addmm 0.0988 ms"
    ) in texts(g)


def test_fusion_log_explains_a_separate_epilogue():
    gemms, _ = ks_run("mlp", "max-autotune")
    assert reasons(gemms[2]) == ["separate-kernel", "fusion-benchmark-rejected"]
    assert gemms[2].why_not[1].facts["factor"] == 1.004
    assert why(gemms[2]) == (
        "relu, add left in a separate kernel (triton_poi_fused_add_relu_3); "
        "benchmark_epilogue_fusion judged the fused template slower (1.004x slowdown)"
    )
    gemms, _ = ks_run("transformer_block", "max-autotune")
    assert gemms[2].why_not[1] == WhyNot("fusion-log", {"nodes1": ("op15",), "nodes2": ("op16",),
                                                        "reasons": ("no shared data",)})
    assert why(gemms[2]) == (
        "gelu left in a separate kernel (triton_poi_fused_gelu_view_5); Inductor's fusion log: "
        "cannot fuse op15 with op16: no shared data"
    )


def test_residual_add_belongs_to_the_later_gemm():
    # x = arg0_1 + out_proj(att) runs in the layer-norm kernel (then the norm reduces: the chain stops) and is
    # recomputed in triton_poi_fused_add_view_3, whose second add reads fc2's result buf17; fc2 depends on x
    # (through the norm and fc1), so that add is fc2's epilogue, and the out-projection's add counts once.
    gemms, _ = ks_run("transformer_block", "default")
    out_proj, fc2 = gemms[1], gemms[3]
    assert (out_proj.fused, out_proj.unfused) == (("bias",), ("add",))
    assert out_proj.unfused_kernels == ("triton_per_fused_add_native_layer_norm_view_1",)
    t = texts(out_proj)
    assert "[dataflow] triton_poi_fused_add_view_3 (graph_0.py:397) recomputes add: counted once" in t
    assert ("[dataflow] in triton_poi_fused_add_view_3 (graph_0.py:397) ops that also read extern_kernels.addmm's "
            "result belong to that later GEMM") in t
    assert (fc2.fused, fc2.unfused, fc2.unfused_kernels) == (("bias",), ("add",), ("triton_poi_fused_add_view_3",))
    assert any(e.startswith("[dataflow] add runs in triton_poi_fused_add_view_3") and "in_ptr1=buf17" in e
               for e in texts(fc2))


def test_cuda_graph_replay_is_matched_by_launch_order():
    (g,), _ = ks_run("linear_gelu", "reduce-overhead")
    assert g.kernels[0] == "nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_bias_TNT"
    assert "splitKreduce_kernel" in g.kernels[1]  # joined to the GEMM although the replay gives it no op
    assert any(
        e.startswith("[launch-order] extern_kernels.addmm") and e.endswith("matched by launch order")
        for e in texts(g)
    )


# ------------------------------------------------------------------------------------------------------------
# A table of kernel sequences (trace-only: a compiled trace with no code), built with make_kernel.


@dataclass
class TraceBuilder:
    """Writes chrome-trace events the way torch.profiler does: a CPU op, its launch, its GPU kernel."""

    events: list[dict[str, Any]]
    clock: float = 1000.0
    ids: itertools.count = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        self.ids = itertools.count(1)

    def step(self, n: int, launches: Callable[[], list[list[dict[str, Any]]]]) -> None:
        """ProfilerStep#n around the launches ``launches()`` makes."""
        start = self.clock
        for k in launches():
            self.events.extend(k)
        self.events.append(
            {
                "ph": "X",
                "cat": "user_annotation",
                "name": f"ProfilerStep#{n}",
                "pid": 1,
                "tid": 1,
                "ts": start - 1,
                "dur": self.clock - start + 2,
                "args": {},
            }
        )
        self.clock += 10

    def make_kernel(
        self, name: str, op: str | None = None, *, dur: float = 10.0, dims: list[Any] | None = None
    ) -> list[dict[str, Any]]:
        """One launch: the CPU op (None: launched from no op of its own, like NVGEMM), cudaLaunchKernel, the
        kernel.
        """
        ext, corr = next(self.ids), next(self.ids)
        t = self.clock
        self.clock += 50
        out = []
        if op is not None:
            args: dict[str, Any] = {"External id": ext}
            if dims is not None:
                args["Input Dims"] = dims
            out.append(
                {"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t, "dur": 20, "args": args}
            )
        out.append(
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "pid": 1,
                "tid": 1,
                "ts": t + 5,
                "dur": 5,
                "args": {"correlation": corr, "External id": ext if op else None},
            }
        )
        out.append(
            {
                "ph": "X",
                "cat": "kernel",
                "name": name,
                "pid": 0,
                "tid": 7,
                "ts": t + 30,
                "dur": dur,
                "args": {"correlation": corr, "External id": ext if op else None, "stream": 7, "device": 0},
            }
        )
        return out


    def make_op(self, op: str, kernels: list[str], *, dims: list[Any] | None = None,
                concrete: list[str] | None = None) -> list[dict[str, Any]]:
        """One CPU op that launches several kernels (a convolution and its layout / padding helpers): each kernel
        carries the op's External id, as Kineto writes it for every launch inside the op."""
        ext = next(self.ids)
        t = self.clock
        self.clock += 50 + 40 * len(kernels)
        args: dict[str, Any] = {"External id": ext}
        if dims is not None:
            args["Input Dims"] = dims
        if concrete is not None:
            args["Concrete Inputs"] = concrete
        out = [{"ph": "X", "cat": "cpu_op", "name": op, "pid": 1, "tid": 1, "ts": t, "dur": 20 + 10 * len(kernels),
                "args": args}]
        for i, name in enumerate(kernels):
            corr = next(self.ids)
            out.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                        "ts": t + 5 + 10 * i, "dur": 5, "args": {"correlation": corr, "External id": ext}})
            out.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7, "ts": t + 40 + 40 * i,
                        "dur": 10.0, "args": {"correlation": corr, "External id": ext, "stream": 7, "device": 0}})
        return out


def sequence_trace(rows: list[tuple[str, str | None]]):
    b = TraceBuilder(events=[])
    for n in (1, 2):
        b.step(n, lambda: [b.make_kernel(name, op) for name, op in rows])
    return trace_from_dict({"traceEvents": b.events})


NVJET_BIAS = "nvjet_sm90_tst_128x128_64x4_1x2_h_bz_coopA_bias_TNT"
SPLITK = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __half, float, __half>(float const*)"
GELU_ATEN = (
    "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&)>"
)
CUTE = (
    "kernel_cutlass_kernel_cutlassoperatorsproviderscutedslgemmimplementationssm90_static_persistent_impl_0"
)


@pytest.mark.parametrize(
    ("rows", "verdicts", "fused", "unfused"),
    [
        # cuBLASLt applies the bias; the GELU runs after it
        (
            [(NVJET_BIAS, "aten::addmm"), ("triton_poi_fused_gelu_0", "triton_poi_fused_gelu_0")],
            ["partial"],
            [("bias",)],
            [("gelu",)],
        ),
        # split-K: the reduce kernel is part of the GEMM
        (
            [
                (NVJET_BIAS, "aten::addmm"),
                (SPLITK, "aten::addmm"),
                ("triton_poi_fused_relu_0", "triton_poi_fused_relu_0"),
            ],
            ["partial"],
            [("bias",)],
            [("relu",)],
        ),
        # a Triton template whose name lists the epilogue
        (
            [("triton_tem_fused_addmm_relu_0", "triton_tem_fused_addmm_relu_0")],
            ["fused"],
            [("bias", "relu")],
            [()],
        ),
        # a template with everything after it in one pointwise kernel
        (
            [
                ("triton_tem_fused_mm_0", "triton_tem_fused_mm_0"),
                ("triton_poi_fused_add_relu_1", "triton_poi_fused_add_relu_1"),
            ],
            ["unfused"],
            [()],
            [("add", "relu")],
        ),
        # a reduction after the GEMM ends the chain: no epilogue
        (
            [
                ("triton_tem_fused_mm_0", "triton_tem_fused_mm_0"),
                ("triton_per_fused_native_layer_norm_1", "triton_per_fused_native_layer_norm_1"),
            ],
            ["none"],
            [()],
            [()],
        ),
        # two GEMMs back to back
        (
            [
                ("triton_tem_fused_mm_0", "triton_tem_fused_mm_0"),
                ("triton_tem_fused_mm_1", "triton_tem_fused_mm_1"),
            ],
            ["none", "none"],
            [(), ()],
            [(), ()],
        ),
        # an ATen elementwise kernel after a vendor GEMM
        ([(NVJET_BIAS, "aten::addmm"), (GELU_ATEN, "aten::gelu")], ["partial"], [("bias",)], [("gelu",)]),
        # a CuTeDSL kernel launched from no op of its own: its name cannot say what it fused
        ([(CUTE, None)], ["unknown"], [()], [()]),
        (
            [(CUTE, None), ("triton_poi_fused_relu_0", "triton_poi_fused_relu_0")],
            ["unfused"],
            [()],
            [("relu",)],
        ),
    ],
)
def test_kernel_sequence_table(rows, verdicts, fused, unfused):
    trace = sequence_trace(rows)
    ka = analyze_kernels(trace)
    assert ka.iterations.count == 2
    gemms, summary = analyze_gemms(ka, trace, (), mode="max-autotune", mode_config={**ATEN_TRITON})
    assert [g.verdict for g in gemms] == verdicts, summary
    assert [g.fused for g in gemms] == fused
    assert [g.unfused for g in gemms] == unfused
    assert all(g.confidence == "trace-only" for g in gemms)
    assert all(
        any(e.startswith("[iterations] same kernels and verdict in all 2") for e in texts(g)) for g in gemms
    )


def eager_trace(ops: list[tuple[str, list[Any], str | None]]):
    """Eager: each ATen op with its Input Dims launches one kernel (None: no kernel, e.g. a view)."""
    b = TraceBuilder(events=[])

    def launches() -> list[list[dict[str, Any]]]:
        out = []
        for op, dims, kernel in ops:
            if kernel is None:
                t = b.clock
                b.clock += 10
                out.append(
                    [
                        {
                            "ph": "X",
                            "cat": "cpu_op",
                            "name": op,
                            "pid": 1,
                            "tid": 1,
                            "ts": t,
                            "dur": 5,
                            "args": {"External id": next(b.ids), "Input Dims": dims},
                        }
                    ]
                )
            else:
                out.append(b.make_kernel(kernel, op, dims=dims))
        return out

    for n in (1, 2):
        b.step(n, launches)
    return trace_from_dict({"traceEvents": b.events})


ADDMM_DIMS = [[512], [64, 256], [256, 512], [], []]


@pytest.mark.parametrize(
    ("ops", "epilogue", "fused", "verdict"),
    [
        (
            [("aten::addmm", ADDMM_DIMS, NVJET_BIAS), ("aten::gelu", [[64, 512], []], GELU_ATEN)],
            ("bias", "gelu"),
            ("bias",),
            "partial",
        ),
        # torch._addmm_activation: cuBLASLt applies the activation too when no separate kernel runs
        (
            [
                (
                    "aten::_addmm_activation",
                    ADDMM_DIMS + [[]],
                    "nvjet_sm90_tst_128x128_64x4_1x2_h_bz_coopA_bias_gelu_TNT",
                )
            ],
            ("bias", "gelu"),
            ("bias", "gelu"),
            "fused",
        ),
        # a view in between is followed through; a different shape ends the chain
        (
            [
                ("aten::mm", [[64, 256], [256, 512]], "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n"),
                ("aten::view", [[64, 512], []], None),
                (
                    "aten::mul",
                    [[64, 512], []],
                    "void at::native::vectorized_elementwise_kernel<4, MulFunctor<float>>",
                ),
                (
                    "aten::add",
                    [[3, 3], [3, 3]],
                    "void at::native::vectorized_elementwise_kernel<4, AddFunctor<float>>",
                ),
            ],
            ("mul",),
            (),
            "unfused",
        ),
        (
            [
                ("aten::mm", [[64, 256], [256, 512]], "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n"),
                ("aten::softmax", [[64, 512], []], "void at::native::cunn_SoftMaxForward<4, float>"),
            ],
            (),
            (),
            "none",
        ),
    ],
)
def test_eager_op_table(ops, epilogue, fused, verdict):
    trace = eager_trace(ops)
    ka = analyze_kernels(trace)
    (g,), _ = analyze_gemms(ka, trace, (), mode="eager", mode_config=EAGER)
    assert (g.epilogue, g.fused, g.verdict, g.confidence) == (epilogue, fused, verdict, "trace")
    assert (g.m, g.n, g.k) == (64, 512, 256)


# ------------------------------------------------------------------------------------------------------------
# CPU, real Inductor: Linear(512, 512) + GELU, batch 64, float32.

CAPTURE = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    import torch
    import torch._inductor.config as ic
    from torch.profiler import ProfilerActivity, profile, schedule

    mode, out, cfg = sys.argv[1], Path(sys.argv[2]), json.loads(sys.argv[3])
    ic.cpp.enable_kernel_profile = True  # compiled C++ kernels record themselves in the trace
    for key, value in cfg.items():
        setattr(ic, key, value)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.GELU()).eval()
    x = torch.randn(64, 512)
    with torch.no_grad():
        if mode == "eager":
            fn = model
        else:
            from torch._inductor.utils import run_and_get_code
            fn = torch.compile(model)
            _, codes = run_and_get_code(fn, x)
            (out / "code.py").write_text("\\n\\n# ===== next module =====\\n".join(codes))
        fn(x)
        with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
                     schedule=schedule(wait=0, warmup=1, active=2, repeat=1)) as prof:
            for _ in range(3):
                fn(x)
                prof.step()
    prof.export_chrome_trace(str(out / "trace.json"))
    """
)

CPU_MODES = {
    "eager": {},
    "default": {},
    # pinned to the C++ GEMM template: deterministic epilogue fusion (needs frozen weights)
    "max-autotune-cpp": {"freezing": True, "max_autotune": True, "max_autotune_gemm_backends": "CPP"},
    # MKL and the template trade places from run to run on 2 cores: the log says which won
    "max-autotune-aten-cpp": {
        "freezing": True,
        "max_autotune": True,
        "max_autotune_gemm_backends": "ATEN,CPP",
    },
}


@pytest.fixture(scope="session")
def cpu_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gemm-cpu")
    out: dict[str, Path] = {}
    for mode, cfg in CPU_MODES.items():
        d = root / mode
        d.mkdir()
        # Caches off where the test reads the autotune table: a cached autotune result prints none.
        env = {**os.environ, "TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"} if "aten" in mode else None
        proc = subprocess.run(
            [sys.executable, "-c", CAPTURE, mode, str(d), json.dumps(cfg)],
            capture_output=True,
            text=True,
            timeout=600,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        (d / "stderr.txt").write_text(proc.stderr)
        out[mode] = d
    return out


def cpu_gemm(d: Path, mode: str, config: dict[str, Any]) -> tuple[GemmEpilogue, str]:
    trace = load_trace(d / "trace.json")
    codes = load_output_code(d / "code.py") if (d / "code.py").exists() else ()
    log = (d / "stderr.txt").read_text()
    gemms, summary = analyze_gemms(
        analyze_kernels(trace),
        trace,
        codes,
        mode=mode,
        mode_config={"device": "cpu", "capability": None, **config},
        log_text=log,
    )
    assert len(gemms) == 1, summary
    return gemms[0], summary


@pytest.mark.slow
def test_cpu_eager(cpu_runs):
    # aten::addmm on the CPU copies the broadcast bias into its output (aten::copy_) before the BLAS call, which
    # accumulates onto it (beta=1): the bias is applied by the GEMM call, the one reading in every path (README);
    # the GELU after it runs separately.
    g, summary = cpu_gemm(cpu_runs["eager"], "eager", {"compiled": False})
    assert summary == "GEMMs 1: partial 1"
    assert (g.kernels, g.backend, g.op, g.m, g.n, g.k, g.dtype) == (
        ("aten::addmm",),
        "ATen CPU",
        "addmm",
        64,
        512,
        512,
        "float32",
    )
    assert (g.epilogue, g.fused, g.unfused_kernels) == (("bias", "gelu"), ("bias",), ("aten::gelu",))
    assert any("[bias-in-call] aten::addmm copies the broadcast bias" in t for t in texts(g))
    assert g.confidence == "trace"


@pytest.mark.slow
def test_cpu_default_runs_gelu_after_the_aten_gemm(cpu_runs):
    g, summary = cpu_gemm(cpu_runs["default"], "default", {"compiled": True, "max_autotune": False})
    assert summary == "GEMMs 1: partial 1"
    assert (g.kernels, g.backend, g.op, g.confidence) == (("aten::addmm",), "ATen CPU", "addmm", "code")
    assert (g.epilogue, g.fused, g.unfused) == (("bias", "gelu"), ("bias",), ("gelu",))
    assert len(g.unfused_kernels) == 1 and re.fullmatch(r"graph_\d+_cpp_fused_gelu_\d+", g.unfused_kernels[0])
    assert why(g).startswith("max-autotune is off")


@pytest.mark.slow
def test_cpu_cpp_gemm_template_fuses_bias_and_gelu(cpu_runs):
    config = {"compiled": True, "max_autotune": True, "gemm_backends": ["CPP"], "freezing": True}
    g, summary = cpu_gemm(cpu_runs["max-autotune-cpp"], "max-autotune", config)
    assert summary == "GEMMs 1: fused 1"
    assert len(g.kernels) == 1 and re.fullmatch(r"graph_\d+_gemm_m64n512k512_kernel", g.kernels[0])
    assert (g.backend, g.op, g.m, g.n, g.k, g.dtype) == (
        "Inductor C++ template",
        "addmm",
        64,
        512,
        512,
        "float32",
    )
    assert (g.epilogue, g.fused, g.why_not) == (("bias", "gelu"), ("bias", "gelu"), ())


@pytest.mark.slow
def test_cpu_autotune_winner_decides_the_verdict(cpu_runs):
    d = cpu_runs["max-autotune-aten-cpp"]
    config = {"compiled": True, "max_autotune": True, "gemm_backends": ["ATEN", "CPP"], "freezing": True}
    g, _ = cpu_gemm(d, "max-autotune", config)
    (table,) = parse_log((d / "stderr.txt").read_text()).autotune
    winner = table.choices[0][0]
    if winner.startswith("cpp"):
        # the C++ template won: one kernel with the epilogue inside
        assert (g.verdict, g.backend, g.fused) == ("fused", "Inductor C++ template", ("bias", "gelu"))
    else:
        # MKL won: freezing makes it _mkl_linear without the bias, so bias and GELU run in one C++ kernel
        # after it
        assert (g.verdict, g.backend, g.unfused) == ("unfused", "MKL/oneDNN", ("bias", "gelu"))
        assert f"the library GEMM {winner} (" in why(g)
        assert "won the autotune over cpp_" in why(g)


def test_h200_prologue_fused_benchmark_rejected_fusion_is_the_why_not():
    # fp32 (x * 0.5) @ W.T -> relu, max-autotune:TRITON on the H200: Inductor benchmarked the fused variants and
    # every config ran out of shared memory ("infx slowdown"); the template's name lists "mul", which ran in
    # triton_poi_fused_mul_0 before it: neither a prologue nor an epilogue of the template.
    from kernelscope.analysis.mode import build_mode_result

    root = Path(__file__).parent / "data" / "h200-torch2.11-kernelscope" / "prologue_fused"
    cap = json.loads((root / "modes" / "max-autotune_TRITON" / "capture.json").read_text())
    (g,) = build_mode_result(root, cap).gemms
    assert (g.backend, g.kernels, g.verdict) == ("Triton template", ("triton_tem_fused_mm_mul_t_1",), "unfused")
    assert (g.epilogue, g.fused, g.unfused, g.prologue) == (("relu",), (), ("relu",), ())
    assert "fusion-benchmark-no-config" in reasons(g)
    assert "none of its configs ran (infx slowdown)" in why(g)
    assert "triton_poi_fused_relu_2" in why(g)
    cap = json.loads((root / "modes" / "max-autotune" / "capture.json").read_text())
    (g,) = build_mode_result(root, cap).gemms
    assert g.backend == "cuBLAS" and "won the autotune" in why(g)


def test_h200_template_absorbs_a_prologue_op_and_fuses_the_epilogue():
    # tests/models/prologue_forced.py on the H200 (fp32, benchmark_epilogue_fusion off): one kernel,
    # triton_tem_fused_mm_mul_relu_t_0, reads the raw input and scales it in its operand load (prologue) and
    # applies the ReLU in its epilogue. "mul" must be reported as prologue, never as a fused epilogue op.
    from kernelscope.analysis.mode import build_mode_result

    root = Path(__file__).parent / "data" / "h200-torch2.11-kernelscope" / "prologue_forced"
    cap = json.loads((root / "modes" / "max-autotune_TRITON" / "capture.json").read_text())
    mr = build_mode_result(root, cap)
    assert [k.name for k in mr.kernels] == ["triton_tem_fused_mm_mul_relu_t_0"]
    (g,) = mr.gemms
    assert (g.verdict, g.epilogue, g.fused, g.unfused, g.prologue) == ("fused", ("relu",), ("relu",), (), ("mul",))
    assert any(e.startswith("[prologue]") and "not epilogue" in e for e in texts(g))
    cap = json.loads((root / "modes" / "eager" / "capture.json").read_text())
    (g,) = build_mode_result(root, cap).gemms
    assert (g.verdict, g.unfused) == ("unfused", ("relu",))


def test_h200_calibration_file_gives_the_roofline_its_measured_ceiling():
    # `kernelscope calibrate --size 4096 --dtypes bfloat16` on the H200: 686 TFLOP/s bf16, 4209 GB/s copy
    from kernelscope.analysis.roofline import calibrated_peaks, read_calibration, roofline

    cal = read_calibration(Path(__file__).parent / "data" / "h200-calibration.json", required=True)
    peaks = calibrated_peaks(cal, {"device": "cuda", "gpu": "NVIDIA H200"})
    assert peaks is not None and round(peaks.matmul_tflops["bfloat16"]) == 686 and round(peaks.bandwidth_gbps) == 4209
    assert calibrated_peaks(cal, {"device": "cuda", "gpu": "NVIDIA H100"}) is None
    # a 4096^3 bf16 GEMM in 200 µs: 2*4096^3 / 200e-6 = 687.2 TFLOP/s, i.e. 100.2% of the measured median
    r = roofline(4096, 4096, 4096, "bfloat16", 200.0, calibrated=peaks)
    assert r is not None and r.peak_source == "calibrated"
    assert round(r.tflops, 1) == 687.2 and round(r.pct_peak_flops, 1) == 100.2 and r.bound == "compute"


def test_long_traces_check_a_sample_of_iterations_and_say_so():
    from kernelscope.analysis.gemm import sample_iterations

    assert sample_iterations(5) == [0, 1, 2, 3, 4]
    its = sample_iterations(47615)
    assert len(its) == 64 and its[0] == 0 and its[-1] == 47614 and its == sorted(set(its))


# ------------------------------------------------------------------------------------------------------------
# What a kernel computes comes from the CPU op that launched it; the coverage self-check.

FPROP = ("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_128x128_32x5_nhwc_align8>"
         "(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_128x128_32x5_nhwc_align8::Params)")
PADDING = "void nhwcAddPaddingKernel<__nv_bfloat16, __nv_bfloat16, float, true, (cudnnKernelDataType_t)0>(...)"
TO_NHWC = ("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, "
           "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, "
           "__nv_bfloat16*)")
XMMA_GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize64x64x64_cgasize1x1x1_warpgroupsize1x1x1_execute"
CONV_DIMS = [[8, 3, 224, 224], [768, 3, 16, 16], [], [], [], [], [], [], []]
# cudnn_convolution(input, weight, padding, stride, dilation, groups, ...): ViT's 16 x 16 patches, stride 16
CONV_ARGS = ["", "", "[0, 0]", "[16, 16]", "[1, 1]", "1", "False", "False", "True"]


def op_trace(rows: list[tuple[str | None, list[str], list[Any] | None]]):
    """Two ProfilerSteps of (CPU op or None, the kernels it launched, its Input Dims)."""
    b = TraceBuilder(events=[])

    def launches() -> list[list[dict[str, Any]]]:
        return [b.make_op(op, ks, dims=dims, concrete=CONV_ARGS if dims is CONV_DIMS else None) if op is not None
                else b.make_kernel(ks[0]) for op, ks, dims in rows]

    for n in (1, 2):
        b.step(n, launches)
    return trace_from_dict({"traceEvents": b.events})


def eager_report(trace: Any):
    from kernelscope.analysis.gemm import gemm_report

    return gemm_report(analyze_kernels(trace), trace, (), mode="eager", mode_config=EAGER)


def test_a_kernel_the_name_does_not_call_a_gemm_is_the_gemm_of_the_convolution_that_launched_it():
    # GIVEN cuDNN's fprop kernel (its name says fprop, not GEMM) between its layout transforms, all launched by
    # aten::cudnn_convolution (the patch embedding of ViT on the H200)
    trace = op_trace([("aten::cudnn_convolution", [TO_NHWC, TO_NHWC, FPROP, TO_NHWC], CONV_DIMS)])
    ka = analyze_kernels(trace)
    # THEN the op decides: the fprop kernel is a GEMM (cuDNN's), the transforms stay helpers
    cats = {s.name: (s.category, s.backend) for s in ka.stats}
    assert cats[FPROP] == ("gemm", "cuDNN") and cats[TO_NHWC] == ("other", "cuDNN")
    r = eager_report(trace)
    (g,) = r.gemms
    assert (g.op, g.kind, g.kernels, g.backend, (g.m, g.n, g.k)) == (
        "convolution", "conv", (FPROP,), "cuDNN", (1568, 768, 768))
    assert any(t.startswith("[launching-op]") and "name does not say GEMM" in t for t in texts(g))
    assert any(t.startswith("[launching-op]") and "helper kernel" in t for t in texts(g))
    c = r.coverage
    assert (c.ops, c.attributed, c.by_kind, c.via_launching_op) == (1, 1, {"convolution": 1}, {"convolution": 1})


def test_a_helper_kernel_inside_a_convolution_is_not_its_gemm():
    # nhwcAddPaddingKernel runs inside the one convolution call (compiled ResNet-50's extern_kernels.convolution)
    trace = op_trace([("aten::cudnn_convolution", [PADDING, PADDING, FPROP], CONV_DIMS)])
    (g,) = eager_report(trace).gemms
    assert g.kernels == (FPROP,)
    # and a convolution that launched only helpers is named as not attributed, with what it launched
    r = eager_report(op_trace([("aten::cudnn_convolution", [PADDING], CONV_DIMS)]))
    assert r.gemms == ()
    c = r.coverage
    assert (c.ops, c.attributed, c.complete) == (1, 0, False)
    (u,) = c.unattributed
    assert (u.op, u.kind, (u.m, u.n, u.k)) == ("aten::cudnn_convolution", "convolution", (1568, 768, 768))
    assert u.reason is not None and u.reason.code == "launched-only"
    assert say(u.reason).startswith("launched only nhwcAddPaddingKernel") and "none of which computes a GEMM" in \
        say(u.reason)


def test_a_gemm_named_kernel_of_an_op_that_is_no_gemm_does_that_ops_work():
    # an attention op's kernel named like a cuBLAS GEMM is attention: no GEMM verdict, nothing to cover
    trace = op_trace([("aten::_efficient_attention_forward", [XMMA_GEMM], [[1, 8, 64, 64]] * 3)])
    ka = analyze_kernels(trace)
    assert [(s.category, s.backend) for s in ka.stats] == [("attention", "cuBLAS")]
    r = eager_report(trace)
    assert r.gemms == () and (r.coverage.ops, r.coverage.by_name_only) == (0, 0)


def test_without_a_launching_op_the_kernel_name_decides():
    # a GEMM kernel launched from no op (cutlass.operators called directly): a trace-only verdict from its name,
    # outside the count of GEMM-class ops (none ran)
    trace = op_trace([(None, [XMMA_GEMM], None)])
    (g,) = eager_report(trace).gemms
    assert (g.confidence, g.backend) == ("trace-only", "cuBLAS")
    c = eager_report(trace).coverage
    assert (c.ops, c.attributed, c.by_name_only) == (0, 0, 1)


def test_an_empty_gemm_computes_nothing_and_is_not_counted():
    r = eager_report(op_trace([("aten::mm", [], [[0, 64], [64, 32]]), ("aten::mm", [XMMA_GEMM], [[16, 64], [64, 32]])]))
    assert [(g.m, g.n, g.k) for g in r.gemms] == [(16, 32, 64)]
    assert (r.coverage.ops, r.coverage.attributed, r.coverage.unattributed) == (1, 1, ())


# The zoo on one H200 (torch 2.11, bf16; tests/data/h200-torch2.11-zoo, tests/zoo_fixtures.py): per model and mode
# the GEMM-class ops each mode executed, all attributed, and the ones eager found only through the CPU op that
# launched their kernel. What the traces and code show:
# - tv_resnet50: 53 convolutions (aten::cudnn_convolution) + the fc (aten::addmm) in both modes. cuDNN ran 7 of
#   the eager convolutions on cutlass__5x_cudnn::Kernel<...fprop...> kernels (conv1 7x7, three downsamples, three
#   layer4 conv3), which the name rules call "other": eager read 47 before. 1x1 convs ran on cuBLAS's nvjet_*,
#   sm90_xmma_gemm_* and cutlass_80_tensorop_*gemm* kernels (one GEMM per image, grid z = batch).
# - hf_vit: 73 addmm (12 x q,k,v,o,fc1,fc2 + pooler) + the patch convolution (cutlass__5x_cudnn fprop: eager read
#   73). Eager SDPA runs cuDNN attention (no GEMM-class op); Inductor decomposes the 12 SDPA calls into 24 bmm's
#   (provenance: bmm_default_N from the traced node attn_output, scaled_dot_product_attention): 98.
# - timm_convnext: 37 addmm + 22 convolutions, 18 of them depthwise 7x7 on conv2d_c1_k1_nhwc_specialized and
#   the downsample on a cutlass__5x_cudnn fprop kernel (eager read 40).
# - timm_mixer: 37 addmm + 12 mm (token-mixing fc2 without a fused bias) + the stem convolution (fprop: eager 49).
# - hf_t5_encoder: 72 mm + 24 bmm, the bmm's SDPA's math path in eager (inside aten::scaled_dot_product_attention)
#   and its decomposition in default.
ZOO = [
    ("tv_resnet50", "eager", 54, {"addmm": 1, "convolution": 53}, {"convolution": 7}),
    ("tv_resnet50", "default", 54, {"addmm": 1, "convolution": 53}, {}),
    ("hf_vit", "eager", 74, {"addmm": 73, "convolution": 1}, {"convolution": 1}),
    ("hf_vit", "default", 98, {"addmm": 73, "bmm": 24, "convolution": 1}, {}),
    ("hf_vit", "max-autotune", 98, {"addmm": 73, "bmm": 24, "convolution": 1}, {}),
    ("timm_convnext", "eager", 59, {"addmm": 37, "convolution": 22}, {"convolution": 19}),
    ("timm_convnext", "default", 59, {"addmm": 37, "convolution": 22}, {}),
    ("timm_mixer", "eager", 50, {"addmm": 37, "convolution": 1, "mm": 12}, {"convolution": 1}),
    ("timm_mixer", "default", 50, {"addmm": 37, "convolution": 1, "mm": 12}, {}),
    ("hf_llama", "eager", 30, {"bmm": 1, "mm": 29}, {}),
    ("hf_llama", "default", 30, {"mm": 30}, {}),
    ("hf_llama", "max-autotune", 30, {"mm": 30}, {}),
    ("hf_bert", "eager", 73, {"addmm": 73}, {}),
    ("hf_bert", "default", 73, {"addmm": 73}, {}),
    ("hf_gpt2", "eager", 49, {"addmm": 48, "mm": 1}, {}),
    ("hf_gpt2", "max-autotune", 49, {"addmm": 48, "mm": 1}, {}),
    ("hf_t5_encoder", "eager", 96, {"bmm": 24, "mm": 72}, {}),
    ("hf_t5_encoder", "default", 96, {"bmm": 24, "mm": 72}, {}),
]

_ZOO_MODES: dict[tuple[str, str], Any] = {}


def zoo_mode(name: str, mode: str) -> Any:
    from kernelscope.analysis.mode import build_mode_result
    from tests.zoo_fixtures import zoo_run

    if (name, mode) not in _ZOO_MODES:
        d = zoo_run(name)
        _ZOO_MODES[(name, mode)] = build_mode_result(
            d, json.loads((d / "modes" / mode / "capture.json").read_text()))
    return _ZOO_MODES[(name, mode)]


@pytest.mark.parametrize(("name", "mode", "n", "kinds", "via_op"), ZOO, ids=[f"{z[0]}-{z[1]}" for z in ZOO])
def test_zoo_gemm_count_and_coverage(name, mode, n, kinds, via_op):
    m = zoo_mode(name, mode)
    c = m.gemm_coverage
    assert (len(m.gemms), c.ops, c.attributed, c.unattributed) == (n, n, n, ())
    assert (c.by_kind, c.via_launching_op, c.by_name_only) == (kinds, via_op, 0)


def test_zoo_resnet50_eager_finds_the_convolutions_only_their_launching_op_names():
    m = zoo_mode("tv_resnet50", "eager")
    by_op = [g for g in m.gemms if any(t.startswith("[launching-op]") and "name does not say GEMM" in t
                                       for t in texts(g))]
    assert [g.module for g in by_op] == ["conv1", "layer2.0.downsample.0", "layer3.0.downsample.0", "layer4.0.conv3",
                                         "layer4.0.downsample.0", "layer4.1.conv3", "layer4.2.conv3"]
    assert {(g.backend, short_kernel_name(g.kernels[0])[:36]) for g in by_op} == {
        ("cuDNN", "cutlass__5x_cudnn::Kernel<cutlass_te")}
    assert (by_op[0].m, by_op[0].n, by_op[0].k) == (100352, 64, 147)  # 8 x 112 x 112, 64 filters of 3 x 7 x 7
    # the 1x1 convolutions cuDNN handed to cuBLAS's CUTLASS-built kernels are cuBLAS GEMMs
    cublas = [g.module for g in m.gemms if "cutlass_80_tensorop" in g.kernels[0]]
    assert cublas == [f"layer3.{i}.conv3" for i in range(6)] + ["layer4.0.conv1"]
    assert {g.backend for g in m.gemms if g.module in cublas} == {"cuBLAS"}
    # compiled: the padding helpers of one extern_kernels.convolution call are not its GEMM's kernels
    d = zoo_mode("tv_resnet50", "default")
    assert not any("nhwcAddPaddingKernel" in k for g in d.gemms for k in g.kernels)
    assert any("cutlass__5x_cudnn" in g.kernels[0] for g in d.gemms)


def test_zoo_vit_patch_convolution_is_found_in_eager():
    (g,) = [g for g in zoo_mode("hf_vit", "eager").gemms if g.kind == "conv"]
    assert (g.module, g.backend, (g.m, g.n, g.k)) == (
        "embeddings.patch_embeddings.projection", "cuDNN", (1568, 768, 768))
    assert g.kernels[0].startswith("void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop")


def test_zoo_compiled_counts_agree_with_eager_up_to_decomposition():
    from kernelscope.analysis.gemm.coverage import compare_with_eager

    vit = compare_with_eager([zoo_mode("hf_vit", m) for m in ("eager", "default", "max-autotune")])
    for m in vit[1:]:
        c = m.gemm_coverage
        assert c.decomposed == {"scaled_dot_product_attention": 24} and c.vs_eager_explained is True
        assert say(c.vs_eager) == ("98 GEMM-class ops (24 from decomposing scaled_dot_product_attention) against "
                                   "eager's 74: the difference is decomposition")
    t5 = compare_with_eager([zoo_mode("hf_t5_encoder", m) for m in ("eager", "default")])
    assert [m.gemm_coverage.decomposed for m in t5] == [{"scaled_dot_product_attention": 24}] * 2
    assert say(t5[1].gemm_coverage.vs_eager) == "96 GEMM-class ops, as in eager"
    # a count that lost the convolutions whose kernel names do not say GEMM would be a warning
    resnet = [zoo_mode("tv_resnet50", m) for m in ("eager", "default")]
    lost = dataclasses.replace(resnet[0].gemm_coverage, ops=47, attributed=47, by_kind={"addmm": 1, "convolution": 46})
    _, default = compare_with_eager([dataclasses.replace(resnet[0], gemm_coverage=lost), resnet[1]])
    assert default.gemm_coverage.vs_eager_explained is False
    assert say(default.gemm_coverage.vs_eager).startswith(
        "54 GEMM-class ops against eager's 47: 7 more than decomposition explains (eager: addmm 1, convolution 46; "
        "this mode: addmm 1, convolution 53)")


def test_zoo_llama_rotary_gemm_reads_the_same_verdict_in_every_mode():
    # inv_freq[None, :, None] @ position_ids[:, None, :] (float32, K = 1): eager runs it as aten::bmm on
    # cutlass_80_simt_sgemm, then transpose, cat((freqs, freqs)), cos / sin (and their attention_scaling mul) on
    # [1, 512, 64] in kernels of their own; default runs extern_kernels.mm and cos / sin in Triton kernels,
    # max-autotune a Triton template with them in separate kernels. Eager followed the flow ranges only while the
    # shape stayed [1, 32, 512] and read "none"; the chain now follows what reads the GEMM's result, through the cat
    verdicts = {}
    for mode in ("eager", "default", "max-autotune"):
        (g,) = [g for g in zoo_mode("hf_llama", mode).gemms if (g.m, g.n, g.k) == (32, 512, 1)]
        verdicts[mode] = g.verdict
        assert {"cos", "sin"} <= set(g.unfused), mode
    assert verdicts == {"eager": "unfused", "default": "unfused", "max-autotune": "unfused"}


def test_a_convolution_run_group_by_group_is_one_gemm():
    # GIVEN ConvNeXt's depthwise bf16 convolutions on the CPU (tests/data/cpu-torch2.14.1/timm_convnext_bf16):
    # aten::_convolution calls aten::convolution once per channel group (16 + 32 + 64 + 128 inner convolutions)
    from kernelscope.analysis.mode import build_mode_result

    from .zoo_fixtures import extract_run

    run = extract_run(DATA / "cpu-torch2.14.1" / "timm_convnext_bf16.tar.gz")
    m = build_mode_result(run, json.loads((run / "modes" / "eager" / "capture.json").read_text()))
    # THEN each layer is one GEMM-class op, as the model wrote it: 8 convolutions and 9 addmm (the dispatch count)
    assert len(m.gemms) == 17 and m.gemm_coverage.ops == 17 and m.gemm_coverage.complete
    assert m.gemm_coverage.by_kind == {"addmm": 9, "convolution": 8}
    dw = [g for g in m.gemms if g.module and g.module.endswith("conv_dw")]
    # the whole layer's shape (K = 1 channel x 7 x 7 per group), and every group's kernel on the one GEMM
    assert [(g.m, g.n, g.k, len(g.kernels)) for g in dw] == [(128, 16, 49, 16), (32, 32, 49, 32), (8, 64, 49, 64),
                                                            (2, 128, 49, 128)]


def test_a_strided_convolution_on_atens_cpu_kernel_has_its_strided_shape():
    # GIVEN bf16 convolutions on the CPU, which ATen runs as aten::thnn_conv2d > _slow_conv2d_forward(input,
    # weight, kernel_size, bias, stride, padding): stride and padding sit at other places than in aten::conv2d
    from kernelscope.analysis.mode import build_mode_result

    from .zoo_fixtures import extract_run

    run = extract_run(DATA / "cpu-torch2.14.1" / "timm_convnext_bf16.tar.gz")
    m = build_mode_result(run, json.loads((run / "modes" / "eager" / "capture.json").read_text()))
    shapes = {g.module: (g.m, g.n, g.k) for g in m.gemms if g.kind == "conv"}
    # THEN M counts the strided output: the 4x4 stride-4 stem on 32 px makes 8 x 8 per image (2 images), the 2x2
    # stride-2 downsamples halve it (read as stride 1 they were 2 x 29 x 29 = 1682, and so on)
    assert shapes["stem.0"] == (128, 16, 48)
    assert [shapes[f"stages.{i}.downsample.1"] for i in (1, 2, 3)] == [(32, 32, 64), (8, 64, 128), (2, 128, 256)]


def test_a_gemms_fusion_log_lines_come_from_the_logs_index_in_log_order():
    # GIVEN a fusion log whose decisions name scheduler nodes (opN, a fused node op3_op4) and buffers, in rounds
    log = parse_log("\n".join([
        "cannot fuse op3_op4 with op7: reason A",
        "cannot fuse op12 with op7: reason B",  # op12: not op1 or op2 (a number, not a prefix)
        "cannot fuse op1 with op9: reason C",
        "cannot fuse op4 with op9: reason D",
        "can fuse (benchmark): fusing ['buf4'] with ['buf9'] cause 2.0x speedup",
        "cannot fuse (benchmark): fusing ['buf3'] with ['buf7'] cause 1.5x slowdown",
        "cannot fuse (benchmark): fusing ['buf9'] with ['buf4'] cause 1.2x slowdown",
    ]))

    # WHEN the decisions about nodes 1 and 4 (first) with 7 or 9 (second) are asked for
    about = log.cannot_fuse_about({"1", "4"}, {"7", "9"})
    # THEN those come back in the log's order, and nothing about op12
    assert [(n1, n2, r) for n1, n2, r, _ in about] == [
        ("op3_op4", "op7", "reason A"), ("op1", "op9", "reason C"), ("op4", "op9", "reason D")]
    assert [ln for *_, ln in about] == [1, 3, 4]
    assert log.cannot_fuse_about({"2"}, {"7"}) == []
    # and the benchmarks a buffer decides: a speedup's second buffer (the fused kernel's), a slowdown's first
    assert [t for *_, t, _ in log.benchmarks_deciding({"9"})] == ["2.0x speedup", "1.2x slowdown"]
    assert [t for *_, t, _ in log.benchmarks_deciding({"3"})] == ["1.5x slowdown"]
    assert log.benchmarks_deciding({"4"}) == []  # first of a speedup, second of a slowdown: neither decides
