"""Shape sweeps on the analysis side: which parameter a sweep's points vary (the chart's x axis).

The plan itself (``--sweep`` parsing, the points, their folders) is kernelscope/sweep_plan.py's, a base module
that the profile command, the runner and this module all read.
"""

from __future__ import annotations

from typing import Any

from kernelscope.sweep_plan import PointPlan


def numeric_axis(points: list[PointPlan] | list[dict[str, Any]]) -> str | None:
    """The one parameter that varies across the points when it is numeric (the chart's x axis), else None."""
    params = [p.params if isinstance(p, PointPlan) else p for p in points]
    if len(params) < 2:
        return None
    keys = [k for k in params[0] if all(k in p for p in params)]
    varying = [k for k in keys if len({repr(p[k]) for p in params}) > 1]
    if len(varying) != 1:
        return None
    k = varying[0]
    if all(isinstance(p[k], (int, float)) and not isinstance(p[k], bool) and p[k] > 0 for p in params):
        return k
    return None
