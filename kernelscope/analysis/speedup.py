"""Speedup vs eager: eager's median over a mode's, its interval, and the call (faster / slower / within noise).
Computed here once (analysis/facts.py stores it in each ModeResult); every report shows that record."""

from __future__ import annotations

from kernelscope.analysis.stats import Ratio, latency_ratio
from kernelscope.result import ModeResult, Speedup, Status

EAGER = "eager"  # the baseline mode (capture/modes.py): the other side of every comparison

__all__ = ["EAGER", "Speedup", "speedup_vs"]


def speedup_vs(mode: ModeResult, eager: ModeResult | None) -> Speedup:
    """``mode`` against ``eager`` (None: eager did not run ok): "baseline" for eager itself, "n/a" without a
    latency on either side."""
    if mode.name == EAGER:
        if mode.status != Status.OK.value:
            return Speedup(None, None, None, "none", "n/a")
        return Speedup(1.0 if mode.latency_ms else None, None, None, "none", "baseline")
    if eager is None or eager.latency_ms is None or mode.latency_ms is None:
        return Speedup(None, None, None, "none", "n/a")
    r: Ratio = latency_ratio(mode.latency_ms, eager.latency_ms).inverted()
    if r.value is None:
        return Speedup(None, None, None, r.method, "n/a")
    if r.within_noise:
        call = "within noise"
    else:
        call = "faster" if r.value > 1 else "slower"
    return Speedup(r.value, r.low, r.high, r.method, call)
