"""Failed modes: what to do instead (a working mode, a known error's fix) and the failures grouped once each.

Facts about the run, decided here so every report gives the same advice (analysis/facts.py stores them in the
result); the advice is a tuple of Notes, which report/words.py says in words.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from kernelscope import fmt
from kernelscope.analysis.speedup import EAGER, speedup_vs
from kernelscope.result import FailureGroup, ModeResult, Note, Status

__all__ = ["ERROR_HINTS", "MACHINE_HINT", "FailureGroup", "fallback", "failure_groups", "first_error_line"]

# Inductor compiles C++ for the CPU: without a working compiler no compiled mode can run on this machine, whatever
# the model, so the advice is to install one, not to keep eager for the model.
MACHINE_HINT = "hint-no-cxx-compiler"

# (pattern on the error text, the hint's code in report/words.py). First match wins; each row comes from a
# failure seen on real machines.
ERROR_HINTS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"InvalidCxxCompiler|No working C\+\+ compiler"), MACHINE_HINT),
    (re.compile(r"expects arch to be sm_\w+, but got sm_\w+|CUTE_DSL_ARCH"), "hint-cute-dsl-arch"),
    (re.compile(r"NoValidChoicesError"), "hint-no-valid-choices"),
    (re.compile(r"illegal memory access", re.IGNORECASE), "hint-illegal-memory-access"),
    (re.compile(r"out of memory|OutOfMemoryError", re.IGNORECASE), "hint-out-of-memory"),
)


def fallback(modes: Sequence[ModeResult], failed: ModeResult) -> tuple[Note, ...]:
    """What to do about a mode that did not run (``modes``: every mode of its shape): which mode to use instead,
    plus a specific hint when the error is a known one. () for a mode that ran."""
    if failed.status == Status.OK.value:
        return ()
    if failed.status == Status.INTERRUPTED.value:
        return (Note("rerun-interrupted", {"mode": failed.name}),)
    ok_compiled = [m for m in modes if m.status == Status.OK.value and m.name != EAGER and m.latency_ms]
    eager = next((m for m in modes if m.name == EAGER), None)
    parts: list[Note] = []
    if failed.status == Status.TIMEOUT.value:
        parts.append(Note("raise-timeout"))
    for pattern, code in ERROR_HINTS:
        if pattern.search(failed.error or ""):
            parts.append(Note(code))
            break
    if failed.error_kind == "skipped":
        parts.append(Note("fix-earlier-failure"))
    elif failed.name == EAGER:
        parts.append(Note("fix-eager"))
    elif ok_compiled:
        best = min(ok_compiled, key=lambda m: m.latency_ms.median if m.latency_ms else float("inf"))
        sp = speedup_vs(best, eager)
        parts.append(Note("use-mode", {"mode": best.name, "median_ms": best.latency_ms.median if best.latency_ms
                                       else None, "speedup": sp.value}))
    elif eager is not None and eager.status == Status.OK.value:
        if Note(MACHINE_HINT) not in parts:
            parts.append(Note("keep-eager"))
    elif not parts:
        # No mode worked: the errors themselves say why (listed once each); nothing here blames the machine.
        parts.append(Note("no-mode-worked"))
    return tuple(parts)


def failure_groups(failed: Iterable[ModeResult]) -> tuple[FailureGroup, ...]:
    """One group per distinct (status, error line); modes skipped after a fatal error form one group. Each
    group's advice is its first mode's (``ModeResult.fallback``)."""
    groups: dict[tuple[str, str], list[ModeResult]] = {}
    for m in failed:
        key = ("skipped", "") if m.error_kind == "skipped" else (m.status, first_error_line(m, 400))
        groups.setdefault(key, []).append(m)
    out = []
    for (status, line), ms in groups.items():
        first = ms[0]
        names = tuple(m.name for m in ms)
        if status == "skipped":
            out.append(FailureGroup(names, "not run", "skipped", "", "", first.fallback))
        else:
            out.append(FailureGroup(names, status, first.error_kind, first.error, line, first.fallback, first.log))
    return tuple(out)


def first_error_line(m: ModeResult, limit: int = 200) -> str:
    """The line of a mode's error that says what went wrong (the last non-empty one: Python puts the exception
    there), cut to ``limit``."""
    lines = [ln.strip() for ln in (m.error or "").strip().splitlines() if ln.strip()]
    return fmt.short(lines[-1], limit) if lines else "no error text"
