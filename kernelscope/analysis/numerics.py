"""Numerics: the pass/fail calls on what a capture measured. Pure: no torch.

The worker (capture/numerics.py) measures, per mode and per output tensor, the output against eager and against a
higher-precision reference of the same model (float64, on the run's device), using ``tolerance_for``
(kernelscope/tolerance.py, the one tolerance table) for the element-wise counts and torch's own accuracy rule
against the reference; the report and the recommendation read the verdicts through ``numerics_verdict`` (one mode's
records) and ``mode_numerics`` (the one call every table of the report shows), each output's through
``output_checks``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from kernelscope import fmt
from kernelscope.analysis.speedup import EAGER
from kernelscope.result import ModeResult, NumericsResult, OutputError, OutputNumerics, Status
from kernelscope.tolerance import CLOSE_RATIO, LOW_PRECISION, Tolerance, dtype_name, tolerance_for

# How to tell Inductor's higher-precision intermediates from an error (issue 26.3: ResNet-50 bf16 on the H200,
# compiled default at 2.12x eager's rmse against float64, became bit-identical to eager with this flag).
PRECISION_HINT = ("Inductor keeps fused intermediates (normalisations, activations, residual adds) in float32 where "
                  "eager rounds each one to {dtype}; to tell that from an error, compile with "
                  "torch._inductor.config.emulate_precision_casts = True: if the output then matches eager, the "
                  "difference is that higher precision")


@dataclass(frozen=True, slots=True)
class NumericsVerdict:
    """The combined call used by the report and the recommendation.

    status: "pass", "fail" or "n/a" ("reference" for eager in the report's tables, ``mode_numerics``);
    ``fails_eager`` / ``fails_reference`` say which comparison failed. A mode that differs from eager but passes
    torch's rule against the reference (Inductor computes fp16 chains in float32) is "pass": it is not less
    accurate, only different. ``hint``: what to try when a compiled fp16/bf16 mode fails or is close to failing.
    """

    status: str
    vs_eager: bool | None
    vs_reference: bool | None
    nonfinite: int
    reason: str
    hint: str = ""


def numerics_verdict(numerics: NumericsResult | None, *, is_eager: bool = False) -> NumericsVerdict:
    """Read a mode's recorded ``numerics`` into one call."""
    n = numerics or NumericsResult()
    ve, vr = n.vs_eager or OutputError(), n.vs_reference or OutputError()
    pe, pr = ve.passed, vr.passed
    nonfinite = int(ve.nonfinite or vr.nonfinite or 0)
    if is_eager:
        pe = None  # eager is the comparison's other side
    hint = "" if is_eager else _precision_hint(n)
    if pr is False:
        return NumericsVerdict("fail", pe, pr, nonfinite, vr.reason or "less accurate than eager against the "
                               "reference", hint)
    if pe is False and pr is None:
        return NumericsVerdict("fail", pe, pr, nonfinite, ve.reason or "outside tolerance vs eager", hint)
    if pe is False and pr is True:
        mode_rmse, eager_rmse = vr.rmse, vr.eager_rmse
        if mode_rmse is not None and eager_rmse is not None and mode_rmse < eager_rmse:
            how = f"is closer to the reference than eager (rmse {mode_rmse:.3g} vs {eager_rmse:.3g})"
        elif vr.multiplier is not None and n.tolerance is not None:
            how = f"passes torch's accuracy rule against the reference ({rule_text(vr, n.tolerance.same_tol)})"
        else:
            how = "is as close to the reference as eager"
        return NumericsVerdict("pass", pe, pr, nonfinite, f"differs from eager beyond tolerance but {how}", hint)
    if pe is None and pr is None:
        return NumericsVerdict("n/a", pe, pr, nonfinite, "not measured")
    return NumericsVerdict("pass", pe, pr, nonfinite, "within tolerance", hint)


def _precision_hint(n: NumericsResult) -> str:
    """The emulate_precision_casts hint for a mode in fp16/bf16 that fails against the reference or is close to
    failing (an output's rmse at least CLOSE_RATIO x eager's); "" otherwise. Eager and float32 runs get none."""
    dtype = dtype_name(n.tolerance.dtype if n.tolerance is not None else None)
    if dtype not in LOW_PRECISION or n.vs_reference is None:
        return ""
    pairs = [(o.vs_reference.rmse, o.vs_reference.eager_rmse, o.vs_reference.passed)
             for o in n.outputs if o.vs_reference is not None] or [
        (n.vs_reference.rmse, n.vs_reference.eager_rmse, n.vs_reference.passed)]
    near = any(p is False or (r is not None and e is not None and r >= CLOSE_RATIO * e and r > 0)
               for r, e, p in pairs)
    return PRECISION_HINT.format(dtype=dtype) if near else ""


@dataclass(frozen=True, slots=True)
class OutputCheck:
    """One output tensor as the report shows it: the rule torch applied to it with its numbers, its errors and its
    own scale (so "rmse 0.28" reads as "1.1% of an output of rms 25.5")."""

    name: str
    shape: str  # "8×1000"
    dtype: str
    status: str  # pass / fail / n/a (torch's rule vs the reference; vs eager when no reference)
    rmse: float | None  # vs the reference (vs eager when no reference)
    eager_rmse: float | None
    bound_rmse: float | None
    max_abs: float | None
    rms: float | None  # the output's own scale: root mean square and largest magnitude of the reference
    max_value: float | None
    relative: float | None  # rmse / rms
    vs_eager_max_abs: float | None
    rule: str  # "rmse 0.280 <= 3 x 0.132 + 1e-3/10 = 0.396", "allclose to eager (tol 0.001)"
    nonfinite: int = 0


def output_checks(numerics: NumericsResult | None, *, is_eager: bool = False) -> tuple[OutputCheck, ...]:
    """Each output tensor's check, in the model's output order (empty for captures before issue 26). Eager's are
    the baseline: its own error against float64, which torch's rule allows the other modes a multiple of."""
    n = numerics or NumericsResult()
    tol = n.tolerance.same_tol if n.tolerance is not None else None
    checks = tuple(_output_check(o, tol) for o in n.outputs)
    if is_eager:
        checks = tuple(replace(c, status="fail" if c.nonfinite else "reference", eager_rmse=None, bound_rmse=None,
                               rule="NaN/Inf where float64 is finite" if c.nonfinite
                               else "the baseline: eager's own error against float64") for c in checks)
    return checks


def _output_check(o: OutputNumerics, tol: float | None) -> OutputCheck:
    ve, vr = o.vs_eager or OutputError(), o.vs_reference
    shape = "×".join(str(d) for d in o.shape) or "scalar"
    if vr is None:  # no reference: the element-wise check against eager
        status = "n/a" if ve.passed is None else ("pass" if ve.passed else "fail")
        return OutputCheck(o.name, shape, o.dtype, status, ve.rmse, None, None, ve.max_abs, o.rms,
                           o.max_abs_value, ve.rel_rmse, ve.max_abs, "vs eager only (no float64 reference)",
                           int(ve.new_nonfinite or 0))
    status = "n/a" if vr.passed is None else ("pass" if vr.passed else "fail")
    return OutputCheck(o.name, shape, o.dtype, status, vr.rmse, vr.eager_rmse, vr.bound_rmse, vr.max_abs,
                       o.rms, o.max_abs_value, vr.rel_rmse, ve.max_abs, rule_text(vr, tol),
                       int(vr.new_nonfinite or 0))


def rule_text(vr: OutputError, tol: float | None) -> str:
    """torch's rule as it was applied to one output, with its numbers."""
    t = fmt.sci(tol) if tol is not None else "tol"
    if vr.same_allclose:
        return f"allclose to eager (atol = rtol = {t})"
    if vr.multiplier is None:  # an integer or boolean output: allclose alone decides
        return f"{'equal' if vr.passed else 'not equal'} to eager (allclose, {t})"
    if vr.rmse is None or vr.eager_rmse is None:
        return f"rmse is NaN/Inf (eager's {fmt.sci(vr.eager_rmse)}): bound {vr.multiplier:g} × eager's + {t}/10"
    sign = "≤" if vr.rmse <= (vr.bound_rmse if vr.bound_rmse is not None else float("inf")) else ">"
    return (f"rmse {fmt.sci(vr.rmse)} {sign} {vr.multiplier:g} × eager's {fmt.sci(vr.eager_rmse)} + {t}/10 "
            f"= {fmt.sci(vr.bound_rmse)}")


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

    If the capture recorded the element-wise check (``numerics.vs_eager.passed``, computed by the worker with
    ``tolerance_for``), it decides. Otherwise only the two maxima are known, and "max abs <= atol or max rel <= rtol"
    is a sufficient
    condition for allclose (every element then meets |a-b| <= atol + rtol*|b|): a pass is certain, a fail means
    "not shown within tolerance".
    """
    tol = tolerance_for(dtype)
    if mode.name == EAGER and mode.status != Status.OK.value:
        return NumericsCheck("n/a", None, None, tol, "eager did not run")
    if mode.name == EAGER:
        return NumericsCheck("reference", mode.max_abs_error, mode.max_rel_error, tol, "eager is the reference")
    vs_eager = mode.numerics.vs_eager if mode.numerics is not None else None
    allclose = vs_eager.passed if vs_eager is not None else None  # element-wise, counted by the worker
    if allclose is not None:
        return NumericsCheck("pass" if allclose else "fail", mode.max_abs_error, mode.max_rel_error, tol,
                             "elementwise allclose recorded by the run")
    if mode.max_abs_error is None and mode.max_rel_error is None:
        return NumericsCheck("n/a", None, None, tol, "not measured")
    ok = (mode.max_abs_error is not None and mode.max_abs_error <= tol.atol) or (
        mode.max_rel_error is not None and mode.max_rel_error <= tol.rtol
    )
    how = f"max abs <= {fmt.sci(tol.atol)} or max rel <= {fmt.sci(tol.rtol)} ({tol.dtype})"
    return NumericsCheck("pass" if ok else "fail", mode.max_abs_error, mode.max_rel_error, tol, how)


def mode_numerics(mode: ModeResult, dtype: str | None) -> NumericsVerdict:
    """The one numerics call of a mode that every table of the report shows (the Modes table, the Numerics
    table, the sweep): ``numerics_verdict`` on its records, eager shown as "reference" unless it fails itself (an
    overflow against float64); a result without recorded verdicts (older captures, a trace analysed on its own)
    falls back to ``numerics_check``'s maxima against the dtype's tolerance."""
    is_eager = mode.name == EAGER
    if mode.status != Status.OK.value:
        return NumericsVerdict("n/a", None, None, 0, f"the mode did not run ({mode.status})")
    v = numerics_verdict(mode.numerics, is_eager=is_eager)
    if is_eager:
        return v if v.status == "fail" else replace(v, status="reference", reason="eager is the reference")
    if v.status == "n/a":
        check = numerics_check(mode, dtype)
        if check.status in ("pass", "fail"):
            return replace(v, status=check.status, reason=check.how)
    return v
