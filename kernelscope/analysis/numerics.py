"""Numerics: the pass/fail calls on what a capture measured. Pure: no torch.

The worker (capture/numerics.py) measures, per mode, the output against eager and against a higher-precision
reference of the same model (float64, on the run's device), using ``tolerance_for`` (kernelscope/tolerance.py, the
one tolerance table) for the element-wise counts; the report and the recommendation read the verdicts through
``numerics_verdict`` and ``numerics_check``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.analysis.speedup import EAGER
from kernelscope.result import ModeResult, NumericsResult, OutputError, Status
from kernelscope.tolerance import Tolerance, tolerance_for


@dataclass(frozen=True, slots=True)
class NumericsVerdict:
    """The combined call used by the report and the recommendation.

    status: "pass", "fail" or "n/a"; ``fails_eager`` / ``fails_reference`` say which comparison failed. A mode
    that differs from eager but is at least as close to the reference (Inductor computes fp16 chains in float32)
    is "pass": it is not less accurate, only different.
    """

    status: str
    vs_eager: bool | None
    vs_reference: bool | None
    nonfinite: int
    reason: str


def numerics_verdict(numerics: NumericsResult | None, *, is_eager: bool = False) -> NumericsVerdict:
    """Read a mode's recorded ``numerics`` into one call."""
    n = numerics or NumericsResult()
    ve, vr = n.vs_eager or OutputError(), n.vs_reference or OutputError()
    pe, pr = ve.passed, vr.passed
    nonfinite = int(ve.nonfinite or vr.nonfinite or 0)
    if is_eager:
        pe = None  # eager is the comparison's other side
    if pr is False:
        return NumericsVerdict("fail", pe, pr, nonfinite, vr.reason or "less accurate than eager against the reference")
    if pe is False and pr is None:
        return NumericsVerdict("fail", pe, pr, nonfinite, ve.reason or "outside tolerance vs eager")
    if pe is False and pr is True:
        mode_rmse, eager_rmse = vr.rmse, vr.eager_rmse
        if mode_rmse is not None and eager_rmse is not None and mode_rmse < eager_rmse:
            how = f"closer to the reference than eager (rmse {mode_rmse:.3g} vs {eager_rmse:.3g})"
        else:
            how = "as close to the reference as eager"
        return NumericsVerdict("pass", pe, pr, nonfinite, f"differs from eager beyond tolerance but is {how}")
    if pe is None and pr is None:
        return NumericsVerdict("n/a", pe, pr, nonfinite, "not measured")
    return NumericsVerdict("pass", pe, pr, nonfinite, "within tolerance")


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
