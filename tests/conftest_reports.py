"""RunResult builders for the report, compare and check tests, with values from the real H200 fixtures.

Sources (../shared/fixtures): h200-torch2.11/results.json (first-call times, steady medians, max abs errors,
environment), the kernel statistics and one iteration's timeline that kernelscope.analysis.kernels computes on
the *.trace.json files of the same folder (names, categories, backends, microseconds, copied here so these tests
need neither the fixtures nor the analysis), the GEMM verdicts the fixture READMEs state and the traces show, and
h200-torch2.14.1-nvgemm (seed-aten-triton, mmrelu-nvgemm, the NVGEMM NoValidChoicesError text).

The fixtures kept only the median of each run's timings, so ``timings`` spreads 31 samples symmetrically around
that median: their median is exactly the recorded one and their IQR is the given relative spread.
"""

from __future__ import annotations

import dataclasses
import random
import re
from pathlib import Path

from kernelscope.analysis.facts import with_facts
from kernelscope.result import (
    SCHEMA,
    BackendStatus,
    Evidence,
    GemmEpilogue,
    Iterations,
    KernelStat,
    LatencyStats,
    ModeConfig,
    ModeResult,
    Note,
    RunEnvironment,
    RunResult,
    TimelineEntry,
    WhyNot,
    part_from_json,
)

DATA = Path(__file__).resolve().parent / "data"  # the committed runs (result.json per run directory)
# A ratio below 1 printed as a factor ("0.398×", "0.5×", "0.907x"): the reports read every ratio one way instead.
ZERO_X = re.compile(r"(?<![\w.])0\.\d+ ?[×x](?!\w)")

HOSTILE = "</script><img src=x onerror=alert(1)>"
HOSTILE_NAMES = (
    HOSTILE,
    "void at::native::kernel<float, std::less<float> >(int) & co | tail",
    "evil`name`|with|pipes [click](javascript:alert(1)) <b>bold</b> https://example.com/x",
)

NVJET_SPLITK = "nvjet_sm90_hsh_64x16_64x16_2x1_v_bz_splitK_bias_TNT"
SPLITK_REDUCE = (
    "void cublasLt::splitKreduce_kernel<32, 16, int, float, __half, float, __half, false, float, __half, __half, true, "
    "true, false, false>(cublasLt::cublasSplitKParams<float>, float const*, __half const*, float*, __half*, "
    "float const*, float const*, __half const*, float const*, __half*, void*, long, float*, int*, float*, float*, "
    "float const*, float const*, float const*, float const*, float const*)"
)
ATEN_GELU = (
    "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, "
    "at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::Half)#1}, "
    "std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::"
    "{lambda()#2}::operator()() const::{lambda()#3}::operator()() const::{lambda(c10::Half)#1}, std::array<char*, 2ul>)"
)
NVJET_BIG = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT"
ATEN_CLAMP = (
    "void at::native::vectorized_elementwise_kernel<8, at::native::(anonymous namespace)::launch_clamp_scalar("
    "at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() "
    "const::{lambda()#9}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, ...)"
)
NVGEMM_KERNEL = (
    "kernel_cutlass_kernel_cutlassoperatorsproviderscutedslgemmimplementationssm90_static_persistent_impl"
    "Sm90StaticPersistentGemmKernel_object_at__TiledMMA_ThrLayoutVMNK21111000_PermutationMNK____MMAAtom_ThrID10_"
    "ShapeMNK6425616_TVLayoutA1286410_0"
)
NVGEMM_NO_CHOICES = (
    "torch._inductor.exc.InductorError: NoValidChoicesError: No choices to select. Provided reason: All choices "
    "failed to compile for backend. please consider adding ATEN into max_autotune_gemm_backends config (defined in "
    "torch/_inductor/config.py) to allow at least one choice."
)

ENV_H200_211 = part_from_json(RunEnvironment, {
    "torch": "2.11.0+cu130",
    "triton": "3.6.0",
    "cuda": "13.0",
    "driver": "580.159.04",
    "gpu": "NVIDIA H200",
    "capability": "9.0",
    "python": "3.12.3",
    "gemm_backends": {
        "ATEN": {"available": True, "reason": ""},
        "TRITON": {"available": True, "reason": ""},
        "CUTLASS": {"available": False, "reason": "cutlass_library not importable; TORCHINDUCTOR_CUTLASS_DIR unset"},
        "NVGEMM": {"available": False,
                   "reason": "torch 2.11 < 2.14; ModuleNotFoundError(\"No module named 'cutlass'\")"},
    },
})
ENV_H200_2141 = dataclasses.replace(
    ENV_H200_211, torch="2.14.1+cu130",
    gemm_backends={**ENV_H200_211.gemm_backends, "NVGEMM": BackendStatus(available=True)},
)
# The config of a max-autotune mode with NVGEMM as its only GEMM backend, as the worker records it.
NVGEMM_ONLY = ModeConfig(compiled=True, compile_mode="max-autotune-no-cudagraphs", max_autotune=True,
                         cudagraphs=False, device="cuda", capability="9.0", gemm_backends=("NVGEMM",),
                         inductor_config={"max_autotune_gemm_backends": "NVGEMM"})


def timings(median_ms: float, rel_iqr: float = 0.02, n: int = 31, seed: int = 0) -> LatencyStats:
    """n timings around a recorded median: symmetric pairs, so median and IQR come out as recorded."""
    rng = random.Random(seed)
    half = (n - 1) // 2
    # Offsets spread uniformly over +-rel_iqr: the middle half of them then spans rel_iqr, the IQR asked for.
    offs = sorted(rng.uniform(0, rel_iqr) for _ in range(half))
    samples = [median_ms] + [median_ms * (1 + o) for o in offs] + [median_ms * (1 - o) for o in offs]
    rng.shuffle(samples)
    ordered = sorted(samples)

    def q(p: float) -> float:
        pos = p * (len(ordered) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(ordered) - 1)
        return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)

    return LatencyStats(
        median=median_ms, iqr=q(0.75) - q(0.25), q1=q(0.25), q3=q(0.75), min=ordered[0],
        mean=sum(samples) / len(samples), samples=tuple(samples), timer="cuda_events",
    )


def _its(per_step: int, method: str = "compiled_graph_calls") -> Iterations:
    return Iterations(count=5, method=method, consistent=True, kernels_per_step=(per_step,) * 5,
                      notes=(Note("iterations-inferred", {"iterations": 5, "period": 1, "first": "aten::linear",
                                                          "ambiguous": False}),))


def _mode(name: str, *, median: float, first: float, err: float | None, kernels: tuple[KernelStat, ...],
          timeline: tuple[TimelineEntry, ...], gemms: tuple[GemmEpilogue, ...], peak: int, seed: int,
          iterations: Iterations, rel_iqr: float = 0.02) -> ModeResult:
    compute = [k for k in kernels if not k.is_memop]
    by_cat: dict[str, float] = {}
    by_backend: dict[str, float] = {}
    for k in kernels:
        by_cat[k.category] = by_cat.get(k.category, 0) + k.calls_per_iter
        if not k.is_memop:
            by_backend[k.backend] = by_backend.get(k.backend, 0) + k.calls_per_iter
    verdicts = ", ".join(f"{v} {sum(g.verdict == v for g in gemms)}" for v in dict.fromkeys(g.verdict for g in gemms))
    return ModeResult(
        name=name,
        status="ok",
        device="cuda:0 NVIDIA H200",
        first_call_s=first,
        latency_ms=timings(median, rel_iqr, seed=seed),
        peak_memory_bytes=peak,
        max_abs_error=err,
        max_rel_error=None if err is None else err / 2.0,
        kernels_per_iter=float(sum(k.calls_per_iter for k in compute)),
        memops_per_iter=float(sum(k.calls_per_iter for k in kernels if k.is_memop)),
        kernels_by_category=by_cat,
        kernels_by_backend=by_backend,
        gpu_time_us_per_iter=sum(k.time_us_per_iter for k in compute),
        kernels=kernels,
        gemms=gemms,
        gemm_summary=f"GEMMs {len(gemms)}: {verdicts}" if gemms else "",
        iterations=iterations,
        trace=f"tb/{name}/h200.1.pt.trace.json.gz",
        inductor_code=() if name == "eager" else (f"code/{name}/output_code_0.py",),
        timeline=timeline,
    )


# Peak memory of Linear(4096, 4096) fp16, batch 16: weight 32 MiB + bias 8 KiB + input/output/one temporary.
SEED_PEAK = 4096 * 4096 * 2 + 4096 * 2 + 3 * 16 * 4096 * 2
# bf16, 4096 x 4096 input: weight, bias, input, output, the ReLU's result.
BIG_PEAK = 4096 * 4096 * 2 + 4096 * 2 + 3 * 4096 * 4096 * 2


def said(text: str, kind: str = "note", where: str = "") -> Evidence:
    """Evidence that carries its sentence as written (a ``legacy`` record: the fixtures' hand-written facts)."""
    return Evidence("legacy", kind, where, {"text": text})


def why(text: str) -> tuple[WhyNot, ...]:
    """A why-not that carries its sentence as written; () for none."""
    return (WhyNot("legacy", {"text": text}),) if text else ()


def _seed_gemm(mode: str, kernels: tuple[str, ...], backend: str, fused: tuple[str, ...], unfused: tuple[str, ...],
               unfused_kernels: tuple[str, ...], why_not: str, evidence: tuple[str, ...], time_us: float,
               verdict: str = "partial") -> GemmEpilogue:
    return GemmEpilogue(
        id=f"{mode}:addmm_0", kernels=kernels, backend=backend, m=16, n=4096, k=4096, dtype="float16",
        time_us_per_iter=time_us, op="addmm", epilogue=("bias", "gelu"), fused=fused, unfused=unfused,
        unfused_kernels=unfused_kernels, verdict=verdict, why_not=why(why_not),
        evidence=tuple(e if isinstance(e, Evidence) else said(e) for e in evidence),
    )


def seed_h200_211() -> RunResult:
    """The seed model (Linear(4096, 4096) + GELU, fp16, batch 16) on the H200 with torch 2.11: three modes."""
    eager = _mode(
        "eager", median=0.061875200271606444, first=0.0004971099999977469, err=0.0,
        kernels=(
            KernelStat(NVJET_SPLITK, "gemm", "cuBLASLt", 1.0, 7.11),
            KernelStat(SPLITK_REDUCE, "gemm", "cuBLASLt", 1.0, 2.099),
            KernelStat(ATEN_GELU, "pointwise", "ATen native", 1.0, 1.248),
        ),
        timeline=(TimelineEntry(NVJET_SPLITK, "gemm", 0.0, 6.98), TimelineEntry(SPLITK_REDUCE, "gemm", 7.07, 2.05),
                  TimelineEntry(ATEN_GELU, "pointwise", 24.83, 1.25)),
        gemms=(_seed_gemm("eager", (NVJET_SPLITK, SPLITK_REDUCE), "cuBLASLt", ("bias",), ("gelu",), (ATEN_GELU,),
                          "eager runs aten::gelu as its own kernel; cuBLASLt's bias epilogue took the bias",
                          ("trace: nvjet_*_bias_* is cuBLASLt's bias epilogue", ("trace: aten::gelu launched the "
                           "GELU elementwise kernel after the GEMM")), 9.209),),
        peak=SEED_PEAK, seed=1, iterations=_its(3, "top_level_ops"),
    )
    default = _mode(
        "default", median=0.15564800500869752, first=3.5900158159999975, err=0.0,
        kernels=(
            KernelStat(NVJET_SPLITK, "gemm", "cuBLASLt", 1.0, 7.13),
            KernelStat(SPLITK_REDUCE, "gemm", "cuBLASLt", 1.0, 2.08),
            KernelStat("triton_poi_fused_gelu_0", "pointwise", "Triton", 1.0, 1.12),
        ),
        timeline=(TimelineEntry(NVJET_SPLITK, "gemm", 0.0, 7.01), TimelineEntry(SPLITK_REDUCE, "gemm", 14.43, 2.05),
                  TimelineEntry("triton_poi_fused_gelu_0", "pointwise", 90.34, 1.12)),
        gemms=(_seed_gemm("default", (NVJET_SPLITK, SPLITK_REDUCE), "cuBLASLt", ("bias",), ("gelu",),
                          ("triton_poi_fused_gelu_0",),
                          "max-autotune off: the GEMM is extern_kernels.addmm (cuBLASLt), which takes no Inductor "
                          "epilogue",
                          ("code: extern_kernels.addmm(arg2_1, arg0_1, ...)",
                           "code: triton_poi_fused_gelu_0 Original ATen: [aten.gelu]"), 9.21),),
        peak=SEED_PEAK, seed=2, iterations=_its(3),
    )
    autotune = _mode(
        "max-autotune", median=0.0774944007396698, first=4.837520966, err=0.00146484375,
        kernels=(
            KernelStat("triton_tem_fused_addmm_t_0", "gemm", "Triton template", 1.0, 12.941),
            KernelStat("triton_poi_fused_gelu_1", "pointwise", "Triton", 1.0, 1.114),
        ),
        timeline=(TimelineEntry("triton_tem_fused_addmm_t_0", "gemm", 0.0, 12.8),
                  TimelineEntry("triton_poi_fused_gelu_1", "pointwise", 31.01, 1.09)),
        gemms=(_seed_gemm("max-autotune", ("triton_tem_fused_addmm_t_0",), "Triton template", ("bias",), ("gelu",),
                          ("triton_poi_fused_gelu_1",),
                          "Inductor fused the bias into the template but scheduled GELU as a separate kernel",
                          ("code: triton_tem_fused_addmm_t_0 Original ATen: [aten.addmm]",
                           "code: triton_poi_fused_gelu_1 Graph fragment: %gelu = gelu(%addmm)"), 12.941),),
        peak=SEED_PEAK, seed=3, iterations=_its(2),
    )
    return with_facts(RunResult(
        schema=SCHEMA, tool_version="0.1.0", created="2026-12-02T14:51:00+00:00",
        command="kernelscope profile samples/linear_gelu.py --dtype float16", model="samples/linear_gelu.py",
        device="cuda", dtype="float16", environment=ENV_H200_211, modes=(eager, default, autotune),
        settings={"modes": ["eager", "default", "max-autotune"], "gemm_backends": "ATEN,TRITON"},
    ))


def seed_h200_2141() -> RunResult:
    """The seed model with torch 2.14.1: max-autotune (ATEN,TRITON) fused bias and GELU into one template kernel;
    NVGEMM alone without CUTE_DSL_ARCH failed (fixture h200-torch2.14.1-nvgemm)."""
    fused_kernel = "triton_tem_fused_addmm_gelu_t_0"
    autotune = _mode(
        "max-autotune", median=0.07811200022697448, first=2.7577176239999517, err=0.00146484375,
        kernels=(KernelStat(fused_kernel, "gemm", "Triton template", 1.0, 13.056),),
        timeline=(TimelineEntry(fused_kernel, "gemm", 0.0, 13.18),),
        gemms=(_seed_gemm("max-autotune", (fused_kernel,), "Triton template", ("bias", "gelu"), (), (), "",
                          ("code: triton_tem_fused_addmm_gelu_t_0 Original ATen: [aten.addmm, aten.gelu]",
                           "code: the template's epilogue stores gelu(acc + bias)"), 13.056, verdict="fused"),),
        peak=SEED_PEAK, seed=4,
        iterations=Iterations(3, "profiler_steps", True, (1, 1, 1), (Note("iterations-from-steps"),)),
    )
    nvgemm = ModeResult(
        name="max-autotune-nvgemm", status="failed", error=NVGEMM_NO_CHOICES, error_kind="InductorError",
        device="cuda:0 NVIDIA H200", config=NVGEMM_ONLY,
        log="logs/max-autotune-nvgemm.stderr.txt",
    )
    base = seed_h200_211()
    return with_facts(dataclasses.replace(
        base, environment=ENV_H200_2141, created="2026-12-02T16:10:00+00:00", modes=(autotune, nvgemm),
        command="kernelscope profile samples/linear_gelu.py --dtype float16 --modes max-autotune,max-autotune-nvgemm",
    ))


def big_h200_211(*, autotune_failed: bool = False) -> RunResult:
    """Linear(4096, 4096) + ReLU, bf16, 4096 rows: every mode runs one cuBLASLt bias GEMM + a ReLU kernel + a
    memset. ``autotune_failed``: max-autotune with NVGEMM alone and no CUTE_DSL_ARCH, which failed on the H200."""

    def gemm(mode: str, relu_kernel: str, why_not: str, time_us: float) -> GemmEpilogue:
        return GemmEpilogue(
            id=f"{mode}:addmm_0", kernels=(NVJET_BIG,), backend="cuBLASLt", m=4096, n=4096, k=4096,
            dtype="bfloat16", time_us_per_iter=time_us, op="addmm", epilogue=("bias", "relu"), fused=("bias",),
            unfused=("relu",), unfused_kernels=(relu_kernel,), verdict="partial", why_not=why(why_not),
            evidence=(said("trace: nvjet_*_bias_* is cuBLASLt's bias epilogue", "trace"),),
        )

    memset = KernelStat("Memset (Device)", "memset", "CUDA runtime", 1.0, 0.794, is_memop=True)
    eager = _mode(
        "eager", median=0.20188798904418945, first=0.000419654000012315, err=0.0,
        kernels=(KernelStat(NVJET_BIG, "gemm", "cuBLASLt", 1.0, 181.356),
                 KernelStat(ATEN_CLAMP, "pointwise", "ATen native", 1.0, 15.654), memset),
        timeline=(TimelineEntry("Memset (Device)", "memset", 0.0, 0.77), 
                  TimelineEntry(NVJET_BIG, "gemm", 10.69, 186.34),
                  TimelineEntry(ATEN_CLAMP, "pointwise", 198.21, 15.68)),
        gemms=(gemm("eager", ATEN_CLAMP, "eager runs relu as its own kernel", 181.356),),
        peak=BIG_PEAK, seed=5, iterations=_its(2, "top_level_ops"), rel_iqr=0.01,
    )
    default = _mode(
        "default", median=0.20873920917510985, first=2.125901352999989, err=0.0,
        kernels=(KernelStat(NVJET_BIG, "gemm", "cuBLASLt", 1.0, 178.917),
                 KernelStat("triton_poi_fused_relu_0", "pointwise", "Triton", 1.0, 23.366), memset),
        timeline=(TimelineEntry("Memset (Device)", "memset", 0.0, 0.8), TimelineEntry(NVJET_BIG, "gemm", 9.34, 183.61),
                  TimelineEntry("triton_poi_fused_relu_0", "pointwise", 194.11, 23.17)),
        gemms=(gemm("default", "triton_poi_fused_relu_0", "max-autotune off: extern_kernels.addmm", 178.917),),
        peak=BIG_PEAK, seed=6, iterations=_its(2), rel_iqr=0.01,
    )
    if autotune_failed:
        autotune = ModeResult(name="max-autotune", status="failed", error=NVGEMM_NO_CHOICES,
                              error_kind="InductorError", device="cuda:0 NVIDIA H200",
                              config=NVGEMM_ONLY)
    else:
        autotune = _mode(
            "max-autotune", median=0.20661439895629882, first=5.337620803999982, err=0.0,
            kernels=(KernelStat(NVJET_BIG, "gemm", "cuBLASLt", 1.0, 177.913),
                     KernelStat("triton_poi_fused_relu_0", "pointwise", "Triton", 1.0, 14.739), memset),
            timeline=(TimelineEntry("Memset (Device)", "memset", 0.0, 0.8),
                      TimelineEntry(NVJET_BIG, "gemm", 12.29, 180.19),
                      TimelineEntry("triton_poi_fused_relu_0", "pointwise", 193.73, 14.69)),
            gemms=(gemm("max-autotune", "triton_poi_fused_relu_0",
                        "the autotuner picked ATen (cuBLASLt), which takes no Inductor epilogue", 177.913),),
            peak=BIG_PEAK, seed=7, iterations=_its(2), rel_iqr=0.01,
        )
    return with_facts(RunResult(
        schema=SCHEMA, tool_version="0.1.0", created="2026-12-02T14:51:00+00:00",
        command="kernelscope profile big_linear_relu.py --dtype bfloat16", model="big_linear_relu.py",
        device="cuda", dtype="bfloat16", environment=ENV_H200_211, modes=(eager, default, autotune),
    ))


def with_hostile_names(result: RunResult) -> RunResult:
    """Every kernel, GEMM kernel, timeline entry and error of ``result`` renamed to hostile strings."""

    def name(i: int) -> str:
        return HOSTILE_NAMES[i % len(HOSTILE_NAMES)]

    modes = []
    for m in result.modes:
        kernels = tuple(dataclasses.replace(k, name=name(i)) for i, k in enumerate(m.kernels))
        timeline = tuple(dataclasses.replace(e, name=name(i)) for i, e in enumerate(m.timeline))
        gemms = tuple(dataclasses.replace(g, kernels=(name(0),), unfused_kernels=(name(1),), why_not=why(name(2)),
                                          evidence=(said(name(0)), said(name(2), "code", "x.py:1")),
                                          fused=(name(1),)) for g in m.gemms)
        modes.append(dataclasses.replace(m, kernels=kernels, timeline=timeline, gemms=gemms, gemm_groups=(),
                                         error=m.error and HOSTILE + m.error))
    return with_facts(dataclasses.replace(result, modes=tuple(modes), model=HOSTILE,
                                          command=f"kernelscope profile '{HOSTILE}'",
                                          environment=dataclasses.replace(result.environment, gpu=HOSTILE)))


def with_coverage(result: RunResult) -> RunResult:
    """The seed run with the coverage self-check: eager attributed 1 of 2 GEMM-class ops (a hostile op name not
    attributed), default 2 of 2 and as many as eager, max-autotune 3 whose count eager does not explain."""
    from kernelscope.analysis.gemm.coverage import compare_with_eager
    from kernelscope.result import GemmCoverage, GemmOp

    eager = GemmCoverage("trace CPU ops", ops=2, attributed=1, by_kind={"addmm": 1, "convolution": 1},
                         unattributed=(GemmOp(HOSTILE, "convolution", "stem.proj", "model.py:12", 1568, 768,
                                                        768, reason=Note("launched-no-kernel")),),
                         via_launching_op={"convolution": 1})
    default = GemmCoverage("output code", ops=2, attributed=2, by_kind={"addmm": 1, "convolution": 1})
    tuned = GemmCoverage("output code", ops=3, attributed=3, by_kind={"addmm": 2, "convolution": 1})
    cov = {"eager": eager, "default": default, "max-autotune": tuned}
    modes = compare_with_eager([dataclasses.replace(m, gemm_coverage=cov.get(m.name)) for m in result.modes])
    return with_facts(dataclasses.replace(result, modes=modes))


def huge_result(n_kernels: int = 3000, n_gemms: int = 400, n_modes: int = 4) -> RunResult:
    """A large model: thousands of distinct kernels with long templated names and hundreds of GEMMs per mode."""
    base = seed_h200_211()
    modes = []
    for mi in range(n_modes):
        src = base.modes[mi % len(base.modes)]
        kernels = tuple(
            KernelStat(f"void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, Op{i}<float> > >"
                       f"(at::native::ReduceOp<float, Op{i}<float> >) | `x` [{i}](y)" + "<T>" * 40,
                       "reduction", "ATen native", 1.0, 1.0 + i * 0.01)
            for i in range(n_kernels)
        )
        gemms = tuple(
            dataclasses.replace(src.gemms[0], id=f"{src.name}{mi}:mm_{i}", m=16 + i, why_not=why("x | y " * 60),
                                unfused_kernels=(kernels[i % n_kernels].name,))
            for i in range(n_gemms)
        )
        modes.append(dataclasses.replace(src, name=f"{src.name}-{mi}" if mi >= len(base.modes) else src.name,
                                         kernels=kernels, gemms=gemms, gemm_groups=(),
                                         error="E" * 20000 if mi == 3 else "",
                                         status="failed" if mi == 3 else src.status))
    return with_facts(dataclasses.replace(base, modes=tuple(modes)))
