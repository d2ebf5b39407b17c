"""The fallback advice: per shape, the mode to use and why. Pure (no torch).

Rule (issue 13): every mode that ran is compared with eager on its interval (the speedup's 95% interval across
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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kernelscope import fmt
from kernelscope.analysis.contention import HOST_CAVEAT, busy_host_sides, is_contended
from kernelscope.analysis.numerics import numerics_verdict
from kernelscope.analysis.speedup import EAGER
from kernelscope.analysis.stats import latency_ratio
from kernelscope.result import Candidate, ModeResult, Recommendation, Status


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
    why_not = ""
    if m.status != Status.OK.value:
        why_not = f"{m.status}" + (f" ({m.error_kind})" if m.error_kind and m.error_kind != m.status else "")
    elif median is None:
        why_not = "no latency measured"
    elif num.status == "fail":
        why_not = f"numerics fail: {num.reason}"
    return Candidate(mode=m.name, status=m.status, median_ms=median, speedup=sp, low=lo, high=hi, call=call,
                     numerics=num.status, eligible=not why_not, why_not=why_not, vs_reference=_vs_reference(m),
                     numerics_reason=num.reason if num.status == "fail" else "")


def _tied(a: ModeResult, b: ModeResult) -> bool:
    return bool(latency_ratio(a.latency_ms, b.latency_ms).within_noise)


def _speed(c: Candidate, than: str = " than eager") -> str:
    # Read one way (issue 15): "1.43× faster than eager, 95% CI 1.39–1.47× faster", never "0.98× vs eager".
    ci = f", 95% CI {fmt.speedup_interval(c.low, c.high)}" if c.low is not None else ""
    return f"{fmt.speedup(c.speedup)}{than}{ci}"


def launch_note(m: ModeResult) -> str:
    """"default: GPU idle 70% of the iteration: ..." for a launch-bound mode, else ""."""
    lp = m.launch
    if lp is None or not lp.launch_bound or m.latency_ms is None or not m.latency_ms.median:
        return ""
    idle = 100.0 * max(0.0, 1.0 - lp.gpu_busy_us / (m.latency_ms.median * 1000.0))
    fix = ("even CUDA graphs leave the CPU side (Python, guards)" if m.config is not None and m.config.cudagraphs
           else "reduce-overhead (CUDA graphs) targets that")
    return (f"{m.name}: GPU idle {idle:.0f}% of the iteration ({fmt.us(lp.gpu_busy_us)} of kernels in "
            f"{fmt.ms(m.latency_ms.median)}): the CPU launch path dominates; {fix}")


def recommend(modes: Sequence[ModeResult], params: dict[str, Any] | None = None, label: str = "") -> Recommendation:
    """The mode to use at one shape (``modes``: every mode measured there)."""
    eager = next((m for m in modes if m.name == EAGER and m.status == Status.OK.value and m.latency_ms), None)
    cands = tuple(_candidate(m, eager) for m in modes)
    by_name = {m.name: m for m in modes}
    cand = {c.mode: c for c in cands}
    ran = [c for c in cands if c.status == Status.OK.value and c.median_ms is not None]
    ok = [by_name[c.mode] for c in cands if c.eligible]
    excluded = [c for c in cands if not c.eligible and c.status not in (Status.UNAVAILABLE.value,)]
    tail = ""
    if excluded:
        tail = "; not considered: " + ", ".join(f"{c.mode} ({c.why_not})" for c in excluded)

    busy = [m.name for m in modes if m.status == Status.OK.value and is_contended(m.latency_ms)]
    hosts = busy_host_sides([(m.name, m.latency_ms) for m in modes if m.status == Status.OK.value])

    def rec(mode: str | None, reason: str, confidence: str) -> Recommendation:
        if busy and mode is not None:
            # the comparison itself is in doubt: some timings measured the machine's load (contention.py)
            reason += (f"; but {', '.join(busy)} {'was' if len(busy) == 1 else 'were'} timed on a busy machine "
                       "(other processes left the timed threads short of CPUs): rerun on an idle machine before "
                       "acting on this")
            confidence = "caveat"
        if hosts and mode is not None:
            # the modes were timed on a host in different states: the ratio between them is partly the host's
            reason += (f"; but {', '.join(hosts)} {'was' if len(hosts) == 1 else 'were'} timed on a busy host and "
                       f"the other modes on a quiet one ({HOST_CAVEAT}): rerun before acting on this")
            confidence = "caveat"
        return Recommendation(dict(params or {}), label, mode, reason + tail, cands, confidence)

    if not ran:
        return rec(None, "no mode ran successfully at this shape", "none")
    if not ok:
        fails = ", ".join(f"{c.mode} ({c.numerics_reason or c.why_not})" for c in ran)
        tail = ""
        return rec(None, f"no mode is recommended: every mode that ran fails numerics: {fails}; fix the model's "
                         "numerics first (e.g. a wider --dtype)", "none")
    eager_ok = eager is not None and cand[EAGER].eligible
    compiled = [m for m in ok if m.name != EAGER]
    if eager_ok:
        faster = [m for m in compiled if cand[m.name].call == "faster"]
        if not faster:
            if not compiled:
                reason = "no compiled mode worked here: keep eager"
            else:
                best = min(compiled, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
                slower = [m for m in compiled if cand[m.name].call == "slower"]
                if best.latency_ms.median >= eager.latency_ms.median:  # type: ignore[union-attr]
                    reason = "eager is the fastest mode here"
                else:
                    reason = (f"the fastest compiled mode, {best.name} ({_speed(cand[best.name])}), is within "
                              "noise of eager and no compiled mode is faster beyond noise: keep eager (no compile "
                              "cost, nothing to break)")
                if slower:
                    reason += f"; compiled modes are slower beyond noise ({', '.join(m.name for m in slower)})"
                launch = [launch_note(m) for m in slower if launch_note(m)]
                if launch:
                    reason += "; " + "; ".join(launch)
            return rec(EAGER, reason, "plain")
        best = min(faster, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
        tied = [m for m in faster if m is best or _tied(m, best)]
        pick = min(tied, key=lambda m: (m.first_call_s if m.first_call_s is not None else float("inf"), m.name))
        reason = f"{pick.name} is faster than eager beyond noise ({_speed(cand[pick.name], than='')})"
        if len(tied) > 1:
            rest = ", ".join(m.name for m in tied if m is not pick)
            reason += f"; within noise of {rest}, and its first call (compile) is the shortest"
        return rec(pick.name, reason, "plain")
    # Eager failed numerics or did not run: the fastest mode whose output passes.
    best = min(compiled, key=lambda m: m.latency_ms.median)  # type: ignore[union-attr]
    tied = [m for m in compiled if m is best or _tied(m, best)]
    pick = min(tied, key=lambda m: (m.first_call_s if m.first_call_s is not None else float("inf"), m.name))
    c = cand[pick.name]
    if EAGER in cand and cand[EAGER].status == Status.OK.value and cand[EAGER].numerics == "fail":
        reason = (f"eager's output fails numerics ({cand[EAGER].numerics_reason}): {pick.name} is the fastest mode "
                  f"whose output passes ({_speed(c) if c.speedup is not None else fmt.ms(c.median_ms)})")
        if c.call == "slower":
            reason += ", slower than eager but correct"
        confidence = "caveat"
    else:
        reason = f"{pick.name} is the fastest working mode (eager did not run, so no speedup)"
        confidence = "plain"
    if len(tied) > 1:
        rest = ", ".join(m.name for m in tied if m is not pick)
        reason += f"; within noise of {rest}, and its first call (compile) is the shortest"
    return rec(pick.name, reason, confidence)
