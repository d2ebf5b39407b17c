"""Speedup vs eager: eager's median over a mode's, its bootstrap interval, and the call (faster / slower / within
noise). Computed here once; every report (html, Markdown, terminal, sweep table) shows this object."""

from __future__ import annotations

from dataclasses import dataclass

from kernelscope import fmt
from kernelscope.analysis.stats import Ratio, latency_ratio
from kernelscope.result import ModeResult, Status

EAGER = "eager"  # the baseline mode (capture/modes.py): the other side of every comparison


@dataclass(frozen=True, slots=True)
class Speedup:
    """eager median / mode median, its interval, and the call: faster / slower / within noise / baseline / n/a."""

    value: float | None
    low: float | None
    high: float | None
    method: str
    call: str

    @property
    def noisy(self) -> bool:
        return self.call == "within noise"

    @property
    def text(self) -> str:
        """Read one way: "1.12× faster" / "1.12× slower" (never "0.891× slower"); "baseline" for eager."""
        return "baseline" if self.call == "baseline" else fmt.speedup(self.value)

    @property
    def interval_text(self) -> str:
        return fmt.speedup_interval(self.low, self.high, self.value)


def speedup_vs(mode: ModeResult, eager: ModeResult | None) -> Speedup:
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
