"""Noise-aware ratios of latencies: a seeded bootstrap interval of the ratio of medians.

Used by the report (speedup vs eager), compare (head vs base) and check (--max-slowdown / --min-speedup), so the
three agree on what "within noise" means: the interval of the ratio crosses 1.0.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from kernelscope.result import LatencyStats

# 1000 resamples give percentile bounds stable to about +-0.5% on the sample sizes kernelscope records
# (tens to hundreds of timings) and take ~0.1 s in pure Python: compare and check stay fast.
N_BOOT = 1000
CONFIDENCE = 0.95
SEED = 20261202  # fixed: the same two results always give the same interval and the same call
MIN_SAMPLES = 5  # fewer timings than this cannot support an interval


@dataclass(frozen=True, slots=True)
class Ratio:
    """``num / den`` of two latency medians with an interval, and whether that interval contains 1.0.

    method: "bootstrap" (from the samples), "iqr" (no samples: the two IQR boxes overlap or not, no interval
    on the ratio itself; low/high are then the ratios of the IQR bounds) or "none" (a median is missing).
    """

    value: float | None
    low: float | None
    high: float | None
    method: str
    within_noise: bool | None

    def inverted(self) -> Ratio:
        """den / num with the same interval inverted (a speedup from a latency ratio)."""

        def inv(x: float | None) -> float | None:
            return None if x is None or x == 0 else 1.0 / x

        return Ratio(inv(self.value), inv(self.high), inv(self.low), self.method, self.within_noise)


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    # Linear interpolation between closest ranks (numpy's default), without importing numpy.
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bootstrap_ratio_of_medians(
    num: Sequence[float],
    den: Sequence[float],
    *,
    n_boot: int = N_BOOT,
    confidence: float = CONFIDENCE,
    seed: int = SEED,
) -> tuple[float, float]:
    """Percentile bootstrap interval of median(num) / median(den), resampling each side independently."""
    rng = random.Random(seed)
    num, den = list(num), list(den)
    ratios = []
    for _ in range(n_boot):
        d = statistics.median(rng.choices(den, k=len(den)))
        n = statistics.median(rng.choices(num, k=len(num)))
        ratios.append(n / d if d else float("inf"))
    ratios.sort()
    alpha = (1.0 - confidence) / 2.0
    return _percentile(ratios, alpha), _percentile(ratios, 1.0 - alpha)


def latency_ratio(num: LatencyStats | None, den: LatencyStats | None, *, seed: int = SEED) -> Ratio:
    """num.median / den.median, with a bootstrap interval when both sides kept their samples.

    The point value is the ratio of the recorded medians (the result's facts); the samples only give the
    interval around it.
    """
    if num is None or den is None or not num.median or not den.median:
        return Ratio(None, None, None, "none", None)
    value = num.median / den.median
    if len(num.samples) >= MIN_SAMPLES and len(den.samples) >= MIN_SAMPLES:
        low, high = bootstrap_ratio_of_medians(num.samples, den.samples, seed=seed)
        return Ratio(value, low, high, "bootstrap", low <= 1.0 <= high)
    if num.q1 and num.q3 and den.q1 and den.q3:
        # No samples (e.g. an old result): call it noise when the interquartile boxes overlap.
        overlap = num.q1 <= den.q3 and den.q1 <= num.q3
        return Ratio(value, num.q1 / den.q3, num.q3 / den.q1, "iqr", overlap)
    return Ratio(value, None, None, "none", None)
