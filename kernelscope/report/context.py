"""What a report shows, computed once from a RunResult: the one place html, Markdown and the terminal read.

Everything here is a read of the result plus presentation: the speedup vs eager (with its bootstrap interval),
the numerics pass/fail against ``TOLERANCES``, the top kernels, the fallback advice for failed modes. No facts
about kernels or GEMMs are re-derived; tests assert on these objects rather than on HTML.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kernelscope.report import charts, fmt
from kernelscope.report.stats import Ratio, latency_ratio
from kernelscope.result import GemmEpilogue, KernelStat, ModeResult, RunResult, Status

EAGER = "eager"
TOP_KERNELS = 40  # rows per mode in the HTML kernel table; the rest are summed in one line


# ---------------------------------------------------------------------------------------------------------------
# Numerics tolerance: the one table.
@dataclass(frozen=True, slots=True)
class Tolerance:
    dtype: str
    atol: float
    rtol: float


# A compiled mode's output vs eager's, for the run's --dtype. These are looser than torch.testing's defaults on
# purpose: Inductor reorders reductions (a K=4096 dot product summed in another order, a fused epilogue that skips
# a rounding to the storage dtype), which moves results by a few units in the last place of the dtype. Each row
# allows roughly 8-16 ulp near 1.0 (fp16 ulp 9.8e-4, bf16 7.8e-3, fp32 1.2e-7), the scale at which the H200
# fixtures differ (seed max-autotune, fp16: max abs error 1.46e-3, one ulp at 1-2). fp32 assumes TF32 is off, as
# it is by default for matmuls.
TOLERANCES: dict[str, Tolerance] = {
    "float64": Tolerance("float64", atol=1e-7, rtol=1e-7),
    "float32": Tolerance("float32", atol=1e-4, rtol=1e-4),
    "float16": Tolerance("float16", atol=1e-2, rtol=1e-2),
    "bfloat16": Tolerance("bfloat16", atol=6e-2, rtol=6e-2),
}
DEFAULT_TOLERANCE_DTYPE = "float32"  # also used for int/fp8/unknown dtypes, where the run did not say


def tolerance_for(dtype: str | None) -> Tolerance:
    """The tolerance row for a dtype name ("float16", "torch.float16", "fp16", "half", ...)."""
    name = (dtype or "").removeprefix("torch.").lower()
    name = {"fp64": "float64", "double": "float64", "fp32": "float32", "float": "float32", "fp16": "float16",
            "half": "float16", "bf16": "bfloat16"}.get(name, name)
    return TOLERANCES.get(name, TOLERANCES[DEFAULT_TOLERANCE_DTYPE])


@dataclass(frozen=True, slots=True)
class NumericsCheck:
    """status: "reference" (eager itself), "pass", "fail", or "n/a" (not measured)."""

    status: str
    max_abs: float | None
    max_rel: float | None
    tolerance: Tolerance
    how: str = ""


def numerics_check(mode: ModeResult, dtype: str | None) -> NumericsCheck:
    """Pass when the largest errors are within the dtype's tolerance.

    If the capture recorded an elementwise ``numerics["allclose"]`` (bool, computed with ``tolerance_for``), it
    decides. Otherwise only the two maxima are known, and "max abs <= atol or max rel <= rtol" is a sufficient
    condition for allclose (every element then meets |a-b| <= atol + rtol*|b|): a pass is certain, a fail means
    "not shown within tolerance".
    """
    tol = tolerance_for(dtype)
    if mode.name == EAGER:
        return NumericsCheck("reference", mode.max_abs_error, mode.max_rel_error, tol, "eager is the reference")
    allclose = mode.numerics.get("allclose") if isinstance(mode.numerics, dict) else None
    if isinstance(allclose, bool):
        return NumericsCheck("pass" if allclose else "fail", mode.max_abs_error, mode.max_rel_error, tol,
                             "elementwise allclose recorded by the run")
    if mode.max_abs_error is None and mode.max_rel_error is None:
        return NumericsCheck("n/a", None, None, tol, "not measured")
    ok = (mode.max_abs_error is not None and mode.max_abs_error <= tol.atol) or (
        mode.max_rel_error is not None and mode.max_rel_error <= tol.rtol
    )
    how = f"max abs <= {fmt.sci(tol.atol)} or max rel <= {fmt.sci(tol.rtol)} ({tol.dtype})"
    return NumericsCheck("pass" if ok else "fail", mode.max_abs_error, mode.max_rel_error, tol, how)


# ---------------------------------------------------------------------------------------------------------------
# Speedup vs eager.
@dataclass(frozen=True, slots=True)
class Speedup:
    """eager median / mode median, its interval, and the call: faster / slower / within noise / baseline / n/a."""

    value: float | None
    low: float | None
    high: float | None
    method: str
    call: str

    @property
    def noisy(self) -> bool:
        return self.call == "within noise"


def speedup_vs(mode: ModeResult, eager: ModeResult | None) -> Speedup:
    if mode.name == EAGER:
        return Speedup(1.0 if mode.latency_ms else None, None, None, "none", "baseline")
    if eager is None or eager.latency_ms is None or mode.latency_ms is None:
        return Speedup(None, None, None, "none", "n/a")
    r: Ratio = latency_ratio(mode.latency_ms, eager.latency_ms).inverted()
    if r.value is None:
        return Speedup(None, None, None, r.method, "n/a")
    if r.within_noise:
        call = "within noise"
    else:
        call = "faster" if r.value > 1 else "slower"
    return Speedup(r.value, r.low, r.high, r.method, call)


# ---------------------------------------------------------------------------------------------------------------
# Failed modes: what to do instead.
# (pattern on the error text, advice). First match wins; each row comes from a failure seen on real machines.
ERROR_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"expects arch to be sm_\w+, but got sm_\w+|CUTE_DSL_ARCH"),
     "set CUTE_DSL_ARCH to the GPU's architecture (sm_90a on H100/H200) so NVGEMM compiles for it"),
    (re.compile(r"NoValidChoicesError"),
     "no GEMM choice of the requested backends compiled: add ATEN to --gemm-backends so autotuning keeps a fallback"),
    (re.compile(r"illegal memory access", re.IGNORECASE),
     "a kernel corrupted the CUDA context: drop that backend from --gemm-backends for this model"),
    (re.compile(r"out of memory|OutOfMemoryError", re.IGNORECASE),
     "lower the batch size (--set batch_size=...) or use a smaller --dtype"),
)


def fallback_recommendation(result: RunResult, failed: ModeResult) -> str:
    """Which mode to use instead of a failed one, plus a specific hint when the error is a known one."""
    ok_compiled = [m for m in result.modes if m.status == Status.OK.value and m.name != EAGER and m.latency_ms]
    eager = result.mode(EAGER)
    parts: list[str] = []
    if failed.status == Status.TIMEOUT.value:
        parts.append("raise --timeout if compile + autotune needs longer")
    for pattern, hint in ERROR_HINTS:
        if pattern.search(failed.error or ""):
            parts.append(hint)
            break
    if failed.name == EAGER:
        parts.append("eager itself failed: fix the model or its inputs first; compiled modes have no reference")
    elif ok_compiled:
        best = min(ok_compiled, key=lambda m: m.latency_ms.median if m.latency_ms else float("inf"))
        sp = speedup_vs(best, eager)
        vs = f", {fmt.ratio(sp.value)} vs eager" if sp.value is not None else ""
        parts.append(f"use mode {best.name} instead (it works here: {fmt.ms(best.latency_ms.median)}{vs})")
    elif eager is not None and eager.status == Status.OK.value:
        parts.append("keep eager for this model: no compiled mode worked")
    else:
        parts.append("no mode worked on this machine")
    return "; ".join(parts)


# ---------------------------------------------------------------------------------------------------------------
# Rows and sections.
@dataclass(frozen=True, slots=True)
class ModeRow:
    mode: ModeResult
    speedup: Speedup
    numerics: NumericsCheck

    @property
    def name(self) -> str:
        return self.mode.name

    @property
    def ok(self) -> bool:
        return self.mode.status == Status.OK.value


@dataclass(frozen=True, slots=True)
class KernelTable:
    top: tuple[KernelStat, ...]
    hidden_count: int
    hidden_time_us: float
    memops: tuple[KernelStat, ...]


def kernel_table(kernels: Iterable[KernelStat], limit: int = TOP_KERNELS) -> KernelTable:
    compute = sorted((k for k in kernels if not k.is_memop), key=lambda k: (-k.time_us_per_iter, k.name))
    memops = tuple(k for k in kernels if k.is_memop)
    hidden = compute[limit:]
    return KernelTable(tuple(compute[:limit]), len(hidden), sum(k.time_us_per_iter for k in hidden), memops)


@dataclass(frozen=True, slots=True)
class Failure:
    mode: ModeResult
    recommendation: str


@dataclass(frozen=True, slots=True)
class ModeSection:
    row: ModeRow
    kernels: KernelTable
    gemms: tuple[GemmEpilogue, ...]


@dataclass(frozen=True, slots=True)
class KV:
    key: str
    value: str


def flatten(data: Any, prefix: str = "") -> list[KV]:
    """Any JSON-like dict as "a / b: value" rows, so the report shows whatever keys the run recorded."""
    rows: list[KV] = []
    if isinstance(data, dict):
        if not data and prefix:
            rows.append(KV(prefix, fmt.DASH))
        for k, v in data.items():
            rows += flatten(v, f"{prefix} / {k}" if prefix else str(k))
        return rows
    if isinstance(data, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in data):
            return [KV(prefix, ", ".join(_scalar(v) for v in data) or fmt.DASH)]
        for i, v in enumerate(data):
            rows += flatten(v, f"{prefix} / {i}")
        return rows
    return [KV(prefix, _scalar(data))]


def _scalar(v: Any) -> str:
    if v is None or v == "":
        return fmt.DASH
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


@dataclass(frozen=True, slots=True)
class ReportContext:
    result: RunResult
    rows: tuple[ModeRow, ...]
    sections: tuple[ModeSection, ...]
    failures: tuple[Failure, ...]
    environment: tuple[KV, ...]
    settings: tuple[KV, ...]
    latency_chart: charts.Chart
    kernel_chart: charts.Chart
    timeline_chart: charts.Chart
    traces: tuple[ModeResult, ...]
    tolerance: Tolerance
    tolerances: tuple[Tolerance, ...] = field(default=tuple(TOLERANCES.values()))

    @property
    def eager(self) -> ModeResult | None:
        return self.result.mode(EAGER)


def build_context(result: RunResult) -> ReportContext:
    eager = result.mode(EAGER)
    eager_ok = eager if eager is not None and eager.status == Status.OK.value else None
    rows = tuple(ModeRow(m, speedup_vs(m, eager_ok), numerics_check(m, result.dtype)) for m in result.modes)
    sections = tuple(ModeSection(r, kernel_table(r.mode.kernels), r.mode.gemms) for r in rows
                     if r.mode.kernels or r.mode.gemms)
    failures = tuple(Failure(m, fallback_recommendation(result, m)) for m in result.modes
                     if m.status != Status.OK.value)
    return ReportContext(
        result=result,
        rows=rows,
        sections=sections,
        failures=failures,
        environment=tuple(flatten(result.environment)),
        settings=tuple(flatten(result.settings)),
        latency_chart=charts.latency_chart(result.modes),
        kernel_chart=charts.kernel_stack_chart(result.modes),
        timeline_chart=charts.timeline_chart(result.modes),
        traces=tuple(m for m in result.modes if m.trace or m.inductor_code or m.log),
        tolerance=tolerance_for(result.dtype),
    )


def verdict_counts(gemms: Iterable[GemmEpilogue]) -> dict[str, int]:
    out: dict[str, int] = {}
    for g in gemms:
        out[g.verdict] = out.get(g.verdict, 0) + 1
    return out


def gemm_line(g: GemmEpilogue) -> str:
    """One-line verdict shared by the terminal and Markdown: "addmm 16×4096×4096 cuBLASLt: partial (...)"."""
    head = f"{g.op or 'gemm'} {fmt.shape(g.m, g.n, g.k)} {g.backend}: {g.verdict}"
    parts = []
    if g.fused:
        parts.append("fused " + ", ".join(g.fused))
    if g.unfused:
        where = f" in {', '.join(g.unfused_kernels)}" if g.unfused_kernels else ""
        parts.append("unfused " + ", ".join(g.unfused) + where)
    if g.confidence == "trace-only":
        parts.append("from the trace only")
    return head + (f" ({'; '.join(parts)})" if parts else "")
