"""The CI gate's output: one line per violated rule, or one "ok" line (the rules are analysis/check.py's)."""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.analysis.check import CheckOutcome


def format_outcome(outcome: CheckOutcome) -> Sequence[str]:
    """Lines to print: one per violation, or one "ok" line."""
    if outcome.violations:
        return [v.line() for v in outcome.violations]
    return [f"ok: {', '.join(outcome.rules)} hold for {', '.join(outcome.checked_modes) or 'no mode'}"]
