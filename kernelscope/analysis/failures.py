"""Failed modes: what to do instead (a working mode, a known error's fix) and the failures grouped once each.

Facts about the run, computed here so every report shows the same advice; the reports only render them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.analysis.speedup import EAGER, speedup_vs
from kernelscope.result import ModeResult, RunResult, Status

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
    if failed.status == Status.INTERRUPTED.value:
        return f"the run was stopped before this mode finished: run it again to measure it (--modes {failed.name})"
    ok_compiled = [m for m in result.modes if m.status == Status.OK.value and m.name != EAGER and m.latency_ms]
    eager = result.mode(EAGER)
    parts: list[str] = []
    if failed.status == Status.TIMEOUT.value:
        parts.append("raise --timeout if compile + autotune needs longer")
    for pattern, hint in ERROR_HINTS:
        if pattern.search(failed.error or ""):
            parts.append(hint)
            break
    if failed.error_kind == "skipped":
        parts.append("it did not run because an earlier mode found the model broken: fix that first")
    elif failed.name == EAGER:
        parts.append("eager itself failed: fix the model or its inputs first; compiled modes have no reference")
    elif ok_compiled:
        best = min(ok_compiled, key=lambda m: m.latency_ms.median if m.latency_ms else float("inf"))
        sp = speedup_vs(best, eager)
        vs = f", {sp.text} than eager" if sp.value is not None else ""
        best_ms = best.latency_ms.median if best.latency_ms else None
        parts.append(f"use mode {best.name} instead (it works here: {fmt.ms(best_ms)}{vs})")
    elif eager is not None and eager.status == Status.OK.value:
        parts.append("keep eager for this model: no compiled mode worked")
    elif not parts:
        # No mode worked: the errors themselves say why (listed once each); nothing here blames the machine.
        parts.append("no mode worked: fix the error above and run again")
    return "; ".join(parts)


@dataclass(frozen=True, slots=True)
class FailureGroup:
    """Modes that failed the same way, reported once: "default, max-autotune failed: <error>"."""

    modes: tuple[str, ...]
    status: str
    error_kind: str
    error: str  # the first mode's full error text
    line: str  # the line of it that says what went wrong
    recommendation: str
    log: str | None = None


def failure_groups(result: RunResult, failed: Iterable[ModeResult]) -> tuple[FailureGroup, ...]:
    """One group per distinct (status, error line); modes skipped after a fatal error form one group."""
    groups: dict[tuple[str, str], list[ModeResult]] = {}
    for m in failed:
        key = ("skipped", "") if m.error_kind == "skipped" else (m.status, first_error_line(m, 400))
        groups.setdefault(key, []).append(m)
    out = []
    for (status, line), ms in groups.items():
        first = ms[0]
        if status == "skipped":
            out.append(FailureGroup(tuple(m.name for m in ms), "not run", "skipped", "", "stopped after the model "
                                    "failed in an earlier mode", fallback_recommendation(result, first)))
        else:
            out.append(FailureGroup(tuple(m.name for m in ms), status, first.error_kind, first.error, line,
                                    fallback_recommendation(result, first), first.log))
    return tuple(out)


def first_error_line(m: ModeResult, limit: int = 200) -> str:
    """The line of a mode's error that says what went wrong (the last non-empty one: Python puts the exception
    there), cut to ``limit``."""
    lines = [ln.strip() for ln in (m.error or "").strip().splitlines() if ln.strip()]
    return fmt.short(lines[-1], limit) if lines else "no error text"
