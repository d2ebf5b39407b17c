"""The fallback advice: per shape, the mode to use and why. Pure (no torch).

Rule: among the modes that ran and whose numerics did not fail, take the fastest by median; every mode whose
latency is within noise of it (the 95% bootstrap interval of the ratio of medians contains 1.0, as in the report's
speedup column) ties with it. Eager wins a tie (nothing to compile, nothing to break on the next upgrade); among
compiled modes the one with the shorter first call wins a tie. So a compiled mode is recommended only when it is
faster than eager beyond noise, and eager is the answer when compiled modes fail, are slower or gain nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.analysis.numerics import numerics_verdict
from kernelscope.analysis.stats import latency_ratio
from kernelscope.report import fmt
from kernelscope.result import Candidate, ModeResult, Recommendation, Status

EAGER = "eager"


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
    why_not = ""
    if m.status != Status.OK.value:
        why_not = f"{m.status}" + (f" ({m.error_kind})" if m.error_kind else "")
    elif median is None:
        why_not = "no latency measured"
    elif num.status == "fail" and m.name != EAGER:
        why_not = f"numerics fail: {num.reason}"
    return Candidate(mode=m.name, status=m.status, median_ms=median, speedup=sp, low=lo, high=hi, call=call,
                     numerics=num.status, eligible=not why_not, why_not=why_not)


def _tied(a: ModeResult, b: ModeResult) -> bool:
    r = latency_ratio(a.latency_ms, b.latency_ms)
    return bool(r.within_noise)


def recommend(modes: Sequence[ModeResult], params: dict | None = None, label: str = "") -> Recommendation:
    """The mode to use at one shape (``modes``: every mode measured there)."""
    eager = next((m for m in modes if m.name == EAGER and m.status == Status.OK.value and m.latency_ms), None)
    cands = tuple(_candidate(m, eager) for m in modes)
    by_name = {m.name: m for m in modes}
    ok = [by_name[c.mode] for c in cands if c.eligible]
    excluded = [c for c in cands if not c.eligible and c.status not in (Status.UNAVAILABLE.value,)]
    tail = ""
    if excluded:
        tail = "; not considered: " + ", ".join(f"{c.mode} ({c.why_not})" for c in excluded)
    if not ok:
        return Recommendation(dict(params or {}), label, None, "no mode ran successfully at this shape" + tail, cands)
    best = min(ok, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
    tied = [m for m in ok if m is best or _tied(m, best)]
    cand = {c.mode: c for c in cands}
    if any(m.name == EAGER for m in tied):
        if best.name == EAGER:
            reason = "eager is the fastest mode here"
            others = [c for c in cands if c.eligible and c.mode != EAGER]
            slower = [c.mode for c in others if c.call == "slower"]
            if slower:
                reason += f"; compiled modes are slower beyond noise ({', '.join(slower)})"
        else:
            c = cand[best.name]
            reason = (f"the fastest compiled mode, {best.name} ({fmt.ratio(c.speedup)} vs eager, 95% CI "
                      f"{fmt.interval(c.low, c.high) or 'n/a'}), is within noise of eager: keep eager (no compile "
                      "cost, nothing to break)")
        if not any(c.eligible for c in cands if c.mode != EAGER):
            reason = "no compiled mode worked here: keep eager"
        return Recommendation(dict(params or {}), label, EAGER, reason + tail, cands)
    # Compiled modes only in the tie: the cheapest compile among them. A mode tied with the best can still be
    # within noise of eager (ties are not transitive), so only modes faster than eager beyond noise qualify;
    # the best one always does, since eager is not tied with it.
    if eager is not None:
        tied = [m for m in tied if m is best or cand[m.name].call == "faster"]
    pick = min(tied, key=lambda m: (m.first_call_s if m.first_call_s is not None else float("inf"), m.name))
    c = cand[pick.name]
    if c.speedup is not None:
        ci = f", 95% CI {fmt.interval(c.low, c.high)}" if c.low is not None else ""
        reason = f"{pick.name} is faster than eager beyond noise ({fmt.ratio(c.speedup)}{ci})"
    elif eager is None:
        reason = f"{pick.name} is the fastest working mode (eager did not run, so no speedup)"
    else:
        reason = f"{pick.name} is the fastest working mode"
    if len(tied) > 1:
        rest = ", ".join(m.name for m in tied if m is not pick)
        reason += f"; within noise of {rest}, and its first call (compile) is the shortest"
    return Recommendation(dict(params or {}), label, pick.name, reason + tail, cands)
