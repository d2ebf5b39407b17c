"""Numerics: the pass/fail calls on what a capture measured. Pure: no torch.

The worker (capture/worker.py) measures, per mode, the output against eager and against a higher-precision
reference of the same model (float64, on the run's device), using ``tolerance_for`` (kernelscope/tolerance.py, the
one tolerance table) for the element-wise counts; the report and the recommendation read the verdicts through
``numerics_verdict`` and ``numerics_check``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.speedup import EAGER
from kernelscope.result import ModeResult, Status
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


def numerics_verdict(numerics: dict[str, Any] | None, *, is_eager: bool = False) -> NumericsVerdict:
    """Read a mode's recorded ``numerics`` dict (capture schema) into one call."""
    n = numerics if isinstance(numerics, dict) else {}
    ve, vr = n.get("vs_eager"), n.get("vs_reference")
    ve = ve if isinstance(ve, dict) else {}
    vr = vr if isinstance(vr, dict) else {}
    pe = ve.get("pass") if isinstance(ve.get("pass"), bool) else None
    pr = vr.get("pass") if isinstance(vr.get("pass"), bool) else None
    nonfinite = int(ve.get("nonfinite") or vr.get("nonfinite") or 0)
    if is_eager:
        pe = None  # eager is the comparison's other side
    if pr is False:
        why = vr.get("reason") or "less accurate than eager against the reference"
        return NumericsVerdict("fail", pe, pr, nonfinite, str(why))
    if pe is False and pr is None:
        return NumericsVerdict("fail", pe, pr, nonfinite, str(ve.get("reason") or "outside tolerance vs eager"))
    if pe is False and pr is True:
        mode_rmse, eager_rmse = vr.get("rmse"), vr.get("eager_rmse")
        if isinstance(mode_rmse, (int, float)) and isinstance(eager_rmse, (int, float)) and mode_rmse < eager_rmse:
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

    If the capture recorded the element-wise check (``numerics["vs_eager"]["pass"]``, computed by the worker with
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
    vs_eager = mode.numerics.get("vs_eager") if isinstance(mode.numerics, dict) else None
    allclose = vs_eager.get("pass") if isinstance(vs_eager, dict) else None  # element-wise, counted by the worker
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
