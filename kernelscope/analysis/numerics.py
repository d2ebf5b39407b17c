"""Numerics: the pass/fail calls on what a capture measured. Pure: no torch.

The worker (capture/numerics.py) measures, per mode and per output tensor, the output against eager and against a
higher-precision reference of the same model (float64, on the run's device), using ``tolerance_for``
(kernelscope/tolerance.py, the one tolerance table) for the element-wise counts and torch's own accuracy rule
against the reference. Here those records become verdicts (result.py ``NumericsVerdict``): ``numerics_verdict``
(one mode's records), ``mode_numerics`` (the one call every table of the report shows, stored in each ModeResult
by analysis/facts.py) and ``output_verdicts`` (each output's). Reasons and rules are Notes: report/words.py says
them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kernelscope.analysis.speedup import EAGER
from kernelscope.result import (
    ModeResult,
    Note,
    NumericsResult,
    NumericsVerdict,
    OutputError,
    OutputNumerics,
    OutputVerdict,
    Status,
)
from kernelscope.tolerance import CLOSE_RATIO, LOW_PRECISION, Tolerance, dtype_name, tolerance_for

__all__ = ["NumericsCheck", "NumericsVerdict", "mode_numerics", "numerics_check", "numerics_verdict",
           "output_verdicts", "rule_note"]


def numerics_verdict(numerics: NumericsResult | None, *, is_eager: bool = False) -> NumericsVerdict:
    """Read a mode's recorded ``numerics`` into one call: "pass", "fail" or "n/a"; ``fails_eager`` /
    ``fails_reference`` say which comparison failed. A mode that differs from eager but passes torch's rule against
    the reference (Inductor computes fp16 chains in float32) is "pass": it is not less accurate, only different.
    ``hint``: what to try when a compiled fp16/bf16 mode fails or is close to failing."""
    n = numerics or NumericsResult()
    ve, vr = n.vs_eager or OutputError(), n.vs_reference or OutputError()
    pe, pr = ve.passed, vr.passed
    nonfinite = int(ve.nonfinite or vr.nonfinite or 0)
    if is_eager:
        pe = None  # eager is the comparison's other side
    hint = None if is_eager else _precision_hint(n)
    recorded = n.tolerance.dtype if n.tolerance is not None and n.tolerance.dtype else None
    tol = tolerance_for(recorded) if recorded else None
    against = "reference" if pr is not None else "eager" if pe is not None else ""

    def verdict(status: str, reason: Note) -> NumericsVerdict:
        return NumericsVerdict(status, pe, pr, nonfinite, reason, hint if status != "n/a" else None, against, tol,
                               output_verdicts(n, is_eager=is_eager))

    if pr is False:
        return verdict("fail", _text(vr.reason) or Note("less-accurate-than-eager"))
    if pe is False and pr is None:
        return verdict("fail", _text(ve.reason) or Note("outside-tolerance-vs-eager"))
    if pe is False and pr is True:
        mode_rmse, eager_rmse = vr.rmse, vr.eager_rmse
        if mode_rmse is not None and eager_rmse is not None and mode_rmse < eager_rmse:
            return verdict("pass", Note("differs-but-closer", {"rmse": mode_rmse, "eager_rmse": eager_rmse}))
        if vr.multiplier is not None and n.tolerance is not None:
            rule = rule_note(vr, n.tolerance.same_tol)
            return verdict("pass", Note("differs-but-passes-rule", {**rule.args, "rule": rule.code}))
        return verdict("pass", Note("differs-but-as-close"))
    if pe is None and pr is None:
        return verdict("n/a", Note("not-measured"))
    return verdict("pass", Note("within-tolerance"))


def _text(text: str) -> Note | None:
    """The worker's own sentence (it names the output and its numbers), or None when it wrote none."""
    return Note("text", {"text": text}) if text else None


def _precision_hint(n: NumericsResult) -> Note | None:
    """The emulate_precision_casts hint for a mode in fp16/bf16 that fails against the reference or is close to
    failing (an output's rmse at least CLOSE_RATIO x eager's); None otherwise. Eager and float32 runs get none."""
    dtype = dtype_name(n.tolerance.dtype if n.tolerance is not None else None)
    if dtype not in LOW_PRECISION or n.vs_reference is None:
        return None
    pairs = [(o.vs_reference.rmse, o.vs_reference.eager_rmse, o.vs_reference.passed)
             for o in n.outputs if o.vs_reference is not None] or [
        (n.vs_reference.rmse, n.vs_reference.eager_rmse, n.vs_reference.passed)]
    near = any(p is False or (r is not None and e is not None and r >= CLOSE_RATIO * e and r > 0)
               for r, e, p in pairs)
    return Note("precision-casts", {"dtype": dtype}) if near else None


def output_verdicts(numerics: NumericsResult | None, *, is_eager: bool = False) -> tuple[OutputVerdict, ...]:
    """Each output tensor's verdict, in the model's output order (empty for captures that recorded none). Eager's
    are the baseline: its own error against the reference (float64, else float32), which torch's rule allows the
    other modes a multiple of."""
    n = numerics or NumericsResult()
    tol = n.tolerance.same_tol if n.tolerance is not None else None
    out = tuple(_output_verdict(o, tol) for o in n.outputs)
    if is_eager:
        ref = {"reference": n.reference.dtype} if n.reference is not None and n.reference.dtype else {}
        out = tuple(replace(v, status="fail" if _new_nonfinite(o) else "reference",
                            rule=Note("baseline-nonfinite" if _new_nonfinite(o) else "baseline", ref))
                    for v, o in zip(out, n.outputs))
    return out


def _new_nonfinite(o: OutputNumerics) -> int:
    """NaN/Inf the output has where the comparison's other side is finite (against float64 when it ran)."""
    side = o.vs_reference if o.vs_reference is not None else (o.vs_eager or OutputError())
    return int(side.new_nonfinite or 0)


def _output_verdict(o: OutputNumerics, tol: float | None) -> OutputVerdict:
    ve, vr = o.vs_eager or OutputError(), o.vs_reference
    if vr is None:  # no reference: the element-wise check against eager
        status = "n/a" if ve.passed is None else ("pass" if ve.passed else "fail")
        return OutputVerdict(o.name, status, Note("eager-only"))
    status = "n/a" if vr.passed is None else ("pass" if vr.passed else "fail")
    return OutputVerdict(o.name, status, rule_note(vr, tol))


def rule_note(vr: OutputError, tol: float | None) -> Note:
    """torch's rule as it was applied to one output, with its numbers: "allclose", "equal" / "not-equal" (an
    integer or boolean output), "rmse-nonfinite", "rmse-within" / "rmse-over" (the rmse bound)."""
    args: dict[str, Any] = {"tol": tol}
    if vr.same_allclose:
        return Note("allclose", args)
    if vr.multiplier is None:  # an integer or boolean output: allclose alone decides
        return Note("equal" if vr.passed else "not-equal", args)
    args.update(multiplier=vr.multiplier, eager_rmse=vr.eager_rmse)
    if vr.rmse is None or vr.eager_rmse is None:
        return Note("rmse-nonfinite", args)
    within = vr.rmse <= (vr.bound_rmse if vr.bound_rmse is not None else float("inf"))
    return Note("rmse-within" if within else "rmse-over", {**args, "rmse": vr.rmse, "bound": vr.bound_rmse})


@dataclass(frozen=True, slots=True)
class NumericsCheck:
    """status: "reference" (eager itself), "pass", "fail", or "n/a" (not measured); ``how``: what decided it."""

    status: str
    max_abs: float | None
    max_rel: float | None
    tolerance: Tolerance
    how: Note = Note("not-measured")


def numerics_check(mode: ModeResult, dtype: str | None) -> NumericsCheck:
    """Pass when the largest errors are within the dtype's tolerance.

    If the capture recorded the element-wise check (``numerics.vs_eager.passed``, computed by the worker with
    ``tolerance_for``), it decides. Otherwise only the two maxima are known, and "max abs <= atol or max rel <= rtol"
    is a sufficient condition for allclose (every element then meets |a-b| <= atol + rtol*|b|): a pass is certain, a
    fail means "not shown within tolerance".
    """
    tol = tolerance_for(dtype)
    if mode.name == EAGER and mode.status != Status.OK.value:
        return NumericsCheck("n/a", None, None, tol, Note("eager-did-not-run"))
    if mode.name == EAGER:
        return NumericsCheck("reference", mode.max_abs_error, mode.max_rel_error, tol, Note("eager-is-reference"))
    vs_eager = mode.numerics.vs_eager if mode.numerics is not None else None
    allclose = vs_eager.passed if vs_eager is not None else None  # element-wise, counted by the worker
    if allclose is not None:
        return NumericsCheck("pass" if allclose else "fail", mode.max_abs_error, mode.max_rel_error, tol,
                             Note("allclose-recorded"))
    if mode.max_abs_error is None and mode.max_rel_error is None:
        return NumericsCheck("n/a", None, None, tol, Note("not-measured"))
    ok = (mode.max_abs_error is not None and mode.max_abs_error <= tol.atol) or (
        mode.max_rel_error is not None and mode.max_rel_error <= tol.rtol
    )
    how = Note("maxima-within", {"atol": tol.atol, "rtol": tol.rtol, "dtype": tol.dtype})
    return NumericsCheck("pass" if ok else "fail", mode.max_abs_error, mode.max_rel_error, tol, how)


def mode_numerics(mode: ModeResult, dtype: str | None) -> NumericsVerdict:
    """The one numerics call of a mode that every table of the report shows (the Modes table, the Numerics
    table, the sweep): ``numerics_verdict`` on its records, eager shown as "reference" unless it fails itself (an
    overflow against float64); a result without recorded verdicts (older captures, a trace analysed on its own)
    falls back to ``numerics_check``'s maxima against the dtype's tolerance."""
    is_eager = mode.name == EAGER
    if mode.status != Status.OK.value:
        return NumericsVerdict("n/a", reason=Note("did-not-run", {"status": mode.status}),
                               tolerance=tolerance_for(dtype))
    v = numerics_verdict(mode.numerics, is_eager=is_eager)
    if v.tolerance is None:
        v = replace(v, tolerance=tolerance_for(dtype))
    if is_eager:
        return v if v.status == "fail" else replace(v, status="reference", reason=Note("eager-is-reference"))
    if v.status == "n/a":
        check = numerics_check(mode, dtype)
        if check.status in ("pass", "fail"):
            return replace(v, status=check.status, reason=check.how, tolerance=check.tolerance, against="maxima")
    return v
