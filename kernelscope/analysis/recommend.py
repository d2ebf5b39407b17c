"""The fallback advice: per shape, the mode to use and why. Pure (no torch).

Rule: every mode that ran is compared with eager on its interval (the speedup's 95% interval across
processes, analysis/stats.py), not only the fastest median: a compiled mode qualifies when it is faster than eager
beyond noise. Numerics come first: a mode whose output fails (against eager beyond tolerance with no better
answer against the float64 reference, or against the reference itself: NaN/Inf, rmse) is never the answer, eager
included. So:

- eager passes numerics: the fastest compiled mode that passes and is faster than eager beyond noise (among
  those within noise of it, the shortest first call); else eager;
- eager fails numerics (or did not run): the fastest mode that passes, said with why eager is not it
  (``confidence`` "caveat");
- every mode that ran fails numerics: no mode, and the reason says so (``confidence`` "none").

A compiled mode slower than eager on a launch-bound iteration gets the launch-path explanation in the reason.
The reasons are Notes (result.py); report/words.py says them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelscope.analysis.contention import busy_host_sides, is_contended
from kernelscope.analysis.numerics import numerics_verdict
from kernelscope.analysis.speedup import EAGER
from kernelscope.analysis.stats import latency_ratio
from kernelscope.result import Candidate, ModeResult, Note, Recommendation, Status, to_json


def _vs_reference(m: ModeResult) -> str:
    vr = m.numerics.vs_reference if m.numerics is not None else None
    if vr is None or vr.passed is None:
        return "n/a"
    return "pass" if vr.passed else "fail"


def _candidate(m: ModeResult, eager: ModeResult | None) -> Candidate:
    num = numerics_verdict(m.numerics, is_eager=m.name == EAGER)
    median = m.latency_ms.median if m.latency_ms else None
    if m.name == EAGER:
        sp, lo, hi, call = (1.0 if median else None), None, None, "baseline"
    elif eager is not None and eager.latency_ms is not None and m.latency_ms is not None:
        r = latency_ratio(m.latency_ms, eager.latency_ms).inverted()
        sp, lo, hi = r.value, r.low, r.high
        call = "n/a" if r.value is None else ("within noise" if r.within_noise else
                                              ("faster" if r.value > 1 else "slower"))
    else:
        sp = lo = hi = None
        call = "n/a"
    why_not: Note | None = None
    if m.status != Status.OK.value:
        why_not = Note("did-not-run-status", {"status": m.status, "error_kind": m.error_kind
                                              if m.error_kind and m.error_kind != m.status else ""})
    elif median is None:
        why_not = Note("no-latency")
    elif num.status == "fail":
        why_not = Note("numerics-fail", {"reason": to_json(num.reason)})
    return Candidate(mode=m.name, status=m.status, median_ms=median, speedup=sp, low=lo, high=hi, call=call,
                     numerics=num.status, eligible=why_not is None, why_not=why_not, vs_reference=_vs_reference(m),
                     numerics_reason=num.reason if num.status == "fail" else None)


def _tied(a: ModeResult, b: ModeResult) -> bool:
    return bool(latency_ratio(a.latency_ms, b.latency_ms).within_noise)


def _speed(c: Candidate) -> dict[str, float | None]:
    """A candidate's speedup vs eager and its 95% interval, for a Note's words ("1.43× faster than eager, 95% CI
    1.39–1.47× faster")."""
    return {"speedup": c.speedup, "low": c.low, "high": c.high}


def launch_note(m: ModeResult) -> Note | None:
    """"default: GPU idle 70% of the iteration: ..." for a launch-bound mode, else None."""
    lp = m.launch
    if lp is None or not lp.launch_bound or m.latency_ms is None or not m.latency_ms.median:
        return None
    idle = 100.0 * max(0.0, 1.0 - lp.gpu_busy_us / (m.latency_ms.median * 1000.0))
    return Note("launch-bound", {"mode": m.name, "idle_pct": idle, "gpu_busy_us": lp.gpu_busy_us,
                                 "median_ms": m.latency_ms.median,
                                 "cudagraphs": bool(m.config is not None and m.config.cudagraphs)})


def recommend(modes: Sequence[ModeResult], params: dict[str, Any] | None = None, label: str = "") -> Recommendation:
    """The mode to use at one shape (``modes``: every mode measured there)."""
    eager = next((m for m in modes if m.name == EAGER and m.status == Status.OK.value and m.latency_ms), None)
    cands = tuple(_candidate(m, eager) for m in modes)
    by_name = {m.name: m for m in modes}
    cand = {c.mode: c for c in cands}
    ran = [c for c in cands if c.status == Status.OK.value and c.median_ms is not None]
    ok = [by_name[c.mode] for c in cands if c.eligible]
    excluded = [c for c in cands if not c.eligible and c.status not in (Status.UNAVAILABLE.value,)]
    tail: tuple[Note, ...] = ()
    if excluded:
        tail = (Note("not-considered", {"modes": [[c.mode, to_json(c.why_not)] for c in excluded]}),)

    busy = [m.name for m in modes if m.status == Status.OK.value and is_contended(m.latency_ms)]
    hosts = busy_host_sides([(m.name, m.latency_ms) for m in modes if m.status == Status.OK.value])

    def rec(mode: str | None, reasons: list[Note], confidence: str) -> Recommendation:
        if busy and mode is not None:
            # the comparison itself is in doubt: some timings measured the machine's load (contention.py)
            reasons.append(Note("but-busy-machine", {"modes": busy}))
            confidence = "caveat"
        if hosts and mode is not None:
            # the modes were timed on a host in different states: the ratio between them is partly the host's
            reasons.append(Note("but-busy-host", {"modes": list(hosts)}))
            confidence = "caveat"
        return Recommendation(dict(params or {}), label, mode, tuple(reasons) + tail, cands, confidence)

    if not ran:
        return rec(None, [Note("no-mode-ran")], "none")
    if not ok:
        fails = [[c.mode, to_json(c.numerics_reason or c.why_not)] for c in ran]
        tail = ()
        return rec(None, [Note("every-mode-fails-numerics", {"modes": fails})], "none")
    eager_ok = eager is not None and cand[EAGER].eligible
    compiled = [m for m in ok if m.name != EAGER]

    def tied_with(pick: ModeResult, tied: list[ModeResult]) -> list[Note]:
        rest = [m.name for m in tied if m is not pick]
        return [Note("tied-shortest-compile", {"modes": rest})] if rest else []

    if eager_ok:
        faster = [m for m in compiled if cand[m.name].call == "faster"]
        if not faster:
            reasons: list[Note]
            if not compiled:
                reasons = [Note("keep-eager-none-compiled")]
            else:
                best = min(compiled, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
                slower = [m for m in compiled if cand[m.name].call == "slower"]
                if best.latency_ms.median >= eager.latency_ms.median:  # type: ignore[union-attr]
                    reasons = [Note("eager-fastest")]
                else:
                    reasons = [Note("fastest-within-noise", {"mode": best.name, **_speed(cand[best.name])})]
                if slower:
                    reasons.append(Note("compiled-slower", {"modes": [m.name for m in slower]}))
                reasons += [n for m in slower if (n := launch_note(m)) is not None]
            return rec(EAGER, reasons, "plain")
        best = min(faster, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
        tied = [m for m in faster if m is best or _tied(m, best)]
        pick = min(tied, key=lambda m: (m.first_call_s if m.first_call_s is not None else float("inf"), m.name))
        return rec(pick.name, [Note("faster-beyond-noise", {"mode": pick.name, **_speed(cand[pick.name])}),
                               *tied_with(pick, tied)], "plain")
    # Eager failed numerics or did not run: the fastest mode whose output passes.
    best = min(compiled, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
    tied = [m for m in compiled if m is best or _tied(m, best)]
    pick = min(tied, key=lambda m: (m.first_call_s if m.first_call_s is not None else float("inf"), m.name))
    c = cand[pick.name]
    if EAGER in cand and cand[EAGER].status == Status.OK.value and cand[EAGER].numerics == "fail":
        first = Note("eager-fails-numerics", {"reason": to_json(cand[EAGER].numerics_reason), "mode": pick.name,
                                              **_speed(c), "median_ms": c.median_ms, "slower": c.call == "slower"})
        confidence = "caveat"
    else:
        first = Note("fastest-working-no-eager", {"mode": pick.name})
        confidence = "plain"
    return rec(pick.name, [first, *tied_with(pick, tied)], confidence)
