"""The CI gate's output: one line per violated rule, or one "ok" line (the rules are analysis/check.py's)."""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.analysis.check import CheckOutcome, Violation
from kernelscope.report.words import say


def violation_line(v: Violation) -> str:
    """"<mode>: <what> (<rule>)", with what analysis said of it in brackets after what."""
    detail = f" ({say(v.detail)})" if v.detail is not None else ""
    return f"{v.mode}: {v.message}{detail} ({v.rule})"


def format_outcome(outcome: CheckOutcome) -> Sequence[str]:
    """Lines to print: one per violation, or one "ok" line."""
    if outcome.violations:
        return [violation_line(v) for v in outcome.violations]
    return [f"ok: {', '.join(outcome.rules)} hold for {', '.join(outcome.checked_modes) or 'no mode'}"]
