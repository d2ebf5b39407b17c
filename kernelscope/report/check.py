"""The CI gate's output: one line per violated rule, or one "ok" line (the rules are analysis/check.py's; what
each violation says is a Note, in words from report/words.py)."""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.analysis.check import CheckOutcome, Violation
from kernelscope.report.words import say


def violation_text(v: Violation) -> str:
    """What broke the rule: "2.52× slower than eager (156 µs vs 61.9 µs, ...), allowed at most 2.00× slower"."""
    return say(v.what)


def violation_line(v: Violation) -> str:
    """"<mode>: <what> (<rule>)"."""
    return f"{v.mode}: {violation_text(v)} ({v.rule})"


def format_outcome(outcome: CheckOutcome) -> Sequence[str]:
    """Lines to print: one per violation, or one "ok" line."""
    if outcome.violations:
        return [violation_line(v) for v in outcome.violations]
    return [f"ok: {', '.join(outcome.rules)} hold for {', '.join(outcome.checked_modes) or 'no mode'}"]


def format_notes(outcome: CheckOutcome) -> Sequence[str]:
    """What the gate left out and why, one line each (printed to stderr as "note: ...")."""
    return [say(n) for n in outcome.notes]
