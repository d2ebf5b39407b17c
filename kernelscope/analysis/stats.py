"""Noise-aware ratios of latencies: a seeded bootstrap interval of the ratio of medians.

Used by the report (speedup vs eager), compare (head vs base) and check (--max-slowdown / --min-speedup), so the
three agree on what "within noise" means: the interval of the ratio crosses 1.0.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kernelscope.result import LatencyStats, Note

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


def latency_ratio(num: LatencyStats | None, den: LatencyStats | None, *, seed: int = SEED,
                  between_runs: bool = False) -> Ratio:
    """num.median / den.median, with an interval across processes when either side was timed in several
    (``method`` "processes"), else a bootstrap interval over the samples of the one process each side had.
    ``between_runs``: num and den come from two runs (compare, upgrade-check), so the interval across processes
    also holds each run's host drift (RERUN_LOG_SD); inside one run the interleaved modes share it.

    The point value is the ratio of the recorded medians (the result's facts); the samples only give the
    interval around it.
    """
    if num is None or den is None or not num.median or not den.median:
        return Ratio(None, None, None, "none", None)
    sn, sd = process_spread(num), process_spread(den)
    if sn is not None or sd is not None:
        return _processes_ratio(num, den, sn, sd, drift=RERUN_LOG_SD if between_runs else 0.0)
    value = num.median / den.median
    if len(num.samples) >= MIN_SAMPLES and len(den.samples) >= MIN_SAMPLES:
        low, high = bootstrap_ratio_of_medians(num.samples, den.samples, seed=seed)
        return Ratio(value, low, high, "bootstrap", low <= 1.0 <= high)
    if num.q1 and num.q3 and den.q1 and den.q3:
        # No samples (e.g. an old result): call it noise when the interquartile boxes overlap.
        overlap = num.q1 <= den.q3 and den.q1 <= num.q3
        return Ratio(value, num.q1 / den.q3, num.q3 / den.q1, "iqr", overlap)
    return Ratio(value, None, None, "none", None)


# ------------------------------------------------------------------------------------------------ across processes
# Between fresh processes a launch-bound model's median moved by up to 1.8x on the H200, far beyond what one
# process's samples show, so with several processes the unit of evidence is the process: its median. Intervals
# below are on the log of the per-process medians with Student's t (P - 1 degrees of freedom), honest at the small
# P a profile can afford, where a bootstrap over 3-5 values is about their range and often misses a rerun's median.

# Var(median of P values) ~ F * sigma^2 / P: F = pi/2 asymptotically for normal data, 1.35-1.43 at P = 3-5;
# 1.5 errs on the wide side.
MEDIAN_VAR_FACTOR = 1.5
# A sample this far out of its process's spread is flagged: beyond Q3 + 3 IQR (Tukey's far-out fence) and at
# least 1.5x the process's median (both, so a tight IQR does not flag a 3% sample). Such samples do not move a
# median, but they say something ran beside the model (the KernelBench sets held 5-21x ones).
OUTLIER_FENCE_IQR = 3.0
OUTLIER_MIN_RATIO = 1.5
# A process whose median is this far from the median of processes is named in the report.
PROCESS_OUTLIER_RATIO = 1.25
# ... and this far (with at least 3 processes, at most a third of them) it is left out of the spread that sets
# the interval: a process that ran beside something else (176x on a loaded CPU) would otherwise make the
# interval useless, while the H200's real between-process moves (0.76-1.35x the median of three runs) stay in it.
# The median of medians keeps every process.
WILD_PROCESS_RATIO = 2.0
# Between runs. The host's speed also moves from one minute to the next, which a run's own processes cannot show:
# three processes that agree to 1% give an interval of +-4% that a rerun minutes later misses. An interval for a
# rerun's median, and a ratio between two runs (compare, upgrade-check), add this log-sd of host drift per run: a
# known variance (normal quantile) added in quadrature to the processes' part. 3% is about the least drift seen
# between runs on quiet H100/H200 hosts (3-22% by host and mode, 11% pooled). Ratios inside one run (speedups, the
# recommendation, check's gate) add none: its modes' processes are interleaved, so the drift meets every mode alike.
RERUN_LOG_SD = 0.03


Z975 = 1.96  # the normal quantile: for a known variance (RERUN_LOG_SD)


def t975(df: float) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom, to three decimals as printed
    tables give it (intervals recorded by earlier versions stay reproducible); df is rounded down to a whole
    number (a fractional Welch df then errs on the wide side); inf below 1 degree of freedom."""
    if df < 1:
        return float("inf")
    # scipy.special's inverse t CDF (what scipy.stats.t.ppf calls), imported here: scipy.special takes a fraction
    # of scipy.stats's import time, and importing kernelscope.analysis stays light.
    from scipy.special import stdtrit

    return round(float(stdtrit(math.floor(df) if math.isfinite(df) else df, 0.975)), 3)


def _median(xs: Sequence[float]) -> float:
    return statistics.median(xs)


def _log_sd(values: Sequence[float]) -> float:
    logs = [math.log(v) for v in values if v > 0]
    return statistics.stdev(logs) if len(logs) >= 2 else 0.0


def _within_log_var(groups: Sequence[Sequence[float]]) -> float:
    """Mean over processes of Var(log of the process median) from its own samples: the floor of the
    between-process variance (process medians cannot agree better than their samples allow)."""
    rng = random.Random(SEED)
    vals = []
    for g in groups:
        logs = [math.log(x) for x in g if x > 0]
        if len(logs) < MIN_SAMPLES:
            continue
        # The bootstrap variance of the log median: robust to a minority of wild samples (a CPU process whose
        # samples split between 40 µs and 12 ms keeps a stable median as long as most samples agree), where an
        # IQR-based estimate would not be.
        boots = [statistics.median(rng.choices(logs, k=len(logs))) for _ in range(200)]
        vals.append(statistics.pvariance(boots))
    return sum(vals) / len(vals) if vals else 0.0


@dataclass(frozen=True, slots=True)
class ProcessSpread:
    """The per-process medians of one mode and the log-scale spread between them."""

    medians: tuple[float, ...]
    median: float  # of every process
    log_sd: float  # sample sd of log(process median) over the kept processes, floored by within-process noise
    left_out: tuple[int, ...] = ()  # indices of wild processes left out of log_sd (WILD_PROCESS_RATIO)

    @property
    def n(self) -> int:
        """Processes behind the spread (the wild ones left out)."""
        return len(self.medians) - len(self.left_out)


def wild_processes(medians: Sequence[float]) -> tuple[int, ...]:
    """Indices of processes whose median is WILD_PROCESS_RATIO or more away from the median of medians."""
    if len(medians) < 3:
        return ()
    med = _median(medians)
    wild = [i for i, m in enumerate(medians) if m >= med * WILD_PROCESS_RATIO or m <= med / WILD_PROCESS_RATIO]
    return tuple(wild) if len(wild) <= len(medians) // 3 else ()


def process_spread(lat: LatencyStats) -> ProcessSpread | None:
    """None unless the mode was timed in at least two processes."""
    meds = tuple(m for m in lat.per_process if m and m > 0)
    if len(meds) < 2:
        return None
    wild = wild_processes(meds)
    kept = [m for i, m in enumerate(meds) if i not in wild]
    sd = _log_sd(kept)
    groups = [g for i, g in enumerate(lat.process_samples) if i not in wild]
    floor = _within_log_var(groups) * MEDIAN_VAR_FACTOR
    return ProcessSpread(meds, _median(meds), max(sd, floor ** 0.5), wild)


def drift_half_width(drift: float) -> float:
    """The host drift's part of a 95% half-width (log scale) for the difference of two runs, each drifting by
    ``drift`` (a known sd): 1.96 * sqrt(2) * drift."""
    return Z975 * math.sqrt(2) * drift


def rerun_half_width(spread: ProcessSpread, drift: float = RERUN_LOG_SD) -> float:
    """Half-width on the log scale of the 95% interval a rerun's median falls in (see rerun_interval): the
    processes' part with Student's t(P - 1), the drift's (known) with the normal 1.96, added in quadrature, so no
    interval is narrower than the processes' part alone."""
    est = t975(spread.n - 1) * spread.log_sd * math.sqrt(2 * MEDIAN_VAR_FACTOR / spread.n)
    return math.hypot(est, drift_half_width(drift))


def rerun_interval(per_process: Sequence[float], process_samples: Sequence[Sequence[float]] = (),
                   samples: Sequence[float] = ()) -> tuple[float | None, float | None, str]:
    """(low, high, method): the 95% interval a rerun's median (of as many processes) is expected in.

    P >= 2: median * exp(+-hypot(t(P-1) * s * sqrt(2 F / P), 1.96 * sqrt(2) * d)) with s the sd of log(process
    medians) and d the host's drift between runs (RERUN_LOG_SD): this run's median and a rerun's each have
    variance F s^2 / P + d^2, and the interval is for their difference. One process: the percentile bootstrap
    interval of the median of its samples, which covers noise inside that process only (method "samples", and
    the reports say so)."""
    meds = [m for m in per_process if m and m > 0]
    if len(meds) >= 2:
        lat = LatencyStats(median=_median(meds), iqr=0.0, q1=0.0, q3=0.0, min=0.0, mean=0.0,
                           per_process=tuple(meds), process_samples=tuple(tuple(g) for g in process_samples))
        spread = process_spread(lat)
        assert spread is not None
        h = rerun_half_width(spread)
        return spread.median * math.exp(-h), spread.median * math.exp(h), "processes"
    if len(samples) >= MIN_SAMPLES:
        rng = random.Random(SEED)
        xs = list(samples)
        boots = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(N_BOOT))
        alpha = (1.0 - CONFIDENCE) / 2.0
        return _percentile(boots, alpha), _percentile(boots, 1 - alpha), "samples"
    return None, None, ""


def median_interval(lat: LatencyStats | None) -> tuple[float | None, float | None, str]:
    """The recorded interval, or (old results) one computed from what the result kept."""
    if lat is None:
        return None, None, ""
    if lat.low is not None and lat.high is not None:
        return lat.low, lat.high, lat.interval or "processes"
    return rerun_interval(lat.per_process, lat.process_samples, lat.samples)


def sample_outliers(samples: Sequence[float]) -> list[int]:
    """Indices of samples far outside their process's spread (see OUTLIER_FENCE_IQR)."""
    if len(samples) < MIN_SAMPLES:
        return []
    s = sorted(samples)
    med = _median(s)
    q1, q3 = _percentile(s, 0.25), _percentile(s, 0.75)
    hi = max(q3 + OUTLIER_FENCE_IQR * (q3 - q1), med * OUTLIER_MIN_RATIO)
    lo = min(q1 - OUTLIER_FENCE_IQR * (q3 - q1), med / OUTLIER_MIN_RATIO)
    return [i for i, x in enumerate(samples) if x > hi or x < lo]


def combine_processes(per: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
    """One latency record (capture schema: ms) from each process's ``latency_ms`` (in run order; None entries
    are processes that measured nothing). The median is the median of the processes' medians, the quartiles are
    over every sample, and ``low``/``high`` the rerun interval. Outliers are flagged (``outliers``: Notes), never
    dropped: a median does not need them removed."""
    kept = [(i + 1, d) for i, d in enumerate(per) if d and d.get("median") is not None]
    if not kept:
        return {}
    first = kept[0][1]
    groups = [tuple(d.get("samples") or ()) for _, d in kept]
    meds = [float(d["median"]) for _, d in kept]
    pooled = sorted(x for g in groups for x in g) or sorted(meds)
    median = _median(meds)
    low, high, method = rerun_interval(meds, groups, pooled if len(kept) == 1 else ())
    flags: list[Note] = []
    n_out = 0
    for (k, d), g in zip(kept, groups):
        idx = sample_outliers(g)
        if idx:
            n_out += len(idx)
            med = float(d["median"])
            # the sample farthest from the median on the log scale (a 0.5x sample is as far as a 2x one)
            worst = max((g[i] for i in idx), key=lambda x: abs(math.log(x / med)) if x > 0 and med > 0 else 0.0)
            flags.append(Note("outlier-samples", {"process": k if len(kept) > 1 else None, "outliers": len(idx),
                                                  "samples": len(g), "worst": worst / d["median"]}))
    if len(kept) >= 3:
        wild = wild_processes(meds)
        for i, (k, d) in enumerate(kept):
            r = float(d["median"]) / median if median else 1.0
            if r >= PROCESS_OUTLIER_RATIO or r <= 1 / PROCESS_OUTLIER_RATIO:
                flags.append(Note("outlier-process", {"process": k, "ratio": r, "left_out": i in wild}))
    out = {
        "median": median,
        "q1": _percentile(pooled, 0.25),
        "q3": _percentile(pooled, 0.75),
        "min": pooled[0],
        "mean": sum(pooled) / len(pooled),
        "samples": [x for g in groups for x in g],
        "timer": first.get("timer", ""),
        "calls_per_sample": first.get("calls_per_sample"),
        "windows": first.get("windows"),
        "drift": first.get("drift"),
        "per_process": meds,
        "processes": len(kept),
        "process_samples": [list(g) for g in groups],
        "low": low,
        "high": high,
        "interval": method,
        "outliers": flags,
        "outlier_samples": n_out,
    }
    pins = [d.get("cpu") for _, d in kept]
    if any(c is not None for c in pins):
        out["cpus"] = pins
        out["cpu_spread"] = max((cpu_spread(d.get("cpu_probe")) or 1.0) for _, d in kept)
        out["cpu_repins"] = sum(int(d.get("cpu_repins") or 0) for _, d in kept)
    others = [d.get("others_cpu") for _, d in kept]
    if any(o is not None for o in others):
        # capture/load.py: other processes' CPU use while each process warmed up and timed (None: not measured)
        out["others_cpu"] = others
        out["steal_cpu"] = [d.get("steal_cpu") for _, d in kept]
        out["cpu_count"] = next((d["cpu_count"] for _, d in kept if d.get("cpu_count")), None)
        out["threads"] = next((d["threads"] for _, d in kept if d.get("threads")), None)
    out["iqr"] = out["q3"] - out["q1"]
    return out


def cpu_spread(probe: dict[str, float] | None) -> float | None:
    """Slowest / fastest CPU of one process's probe (capture ``cpu_probe``: ms per call on each CPU)."""
    times = [t for t in (probe or {}).values() if t and t > 0]
    return max(times) / min(times) if len(times) >= 2 else None


def _processes_ratio(num: LatencyStats, den: LatencyStats, sn: ProcessSpread | None,
                     sd: ProcessSpread | None, *, drift: float = 0.0) -> Ratio:
    """num/den from per-process medians: log ratio +- t * sqrt(F (s_n^2/P_n + s_d^2/P_d)), Welch's degrees of
    freedom; between two runs, hypot with 1.96 * sqrt(2) * drift (each run's host drift, known). A side timed in
    one process borrows the other side's spread (same machine, same interleaving)."""
    a = sn or sd
    b = sd or sn
    assert a is not None and b is not None
    pn = sn.n if sn else 1
    pd = sd.n if sd else 1
    vn, vd = a.log_sd ** 2 / pn, b.log_sd ** 2 / pd
    var = MEDIAN_VAR_FACTOR * (vn + vd)
    if var > 0 and (sn and sd):
        df = (vn + vd) ** 2 / ((vn ** 2 / (pn - 1) if pn > 1 else 0) + (vd ** 2 / (pd - 1) if pd > 1 else 0) or 1e-300)
    else:
        df = max(pn, pd) - 1
    df = max(df, min(pn, pd) - 1, 1)
    value = num.median / den.median
    h = math.hypot(t975(df) * math.sqrt(var), drift_half_width(drift))
    low, high = value * math.exp(-h), value * math.exp(h)
    return Ratio(value, low, high, "processes", low <= 1.0 <= high)


def separated(a: LatencyStats | None, b: LatencyStats | None) -> str:
    """"none" | "faster" | "slower" for b against a (e.g. head against base): a change only when the two
    intervals do not overlap (compare's rule: both runs' across-process intervals must separate)."""
    la, ha, _ = median_interval(a)
    lb, hb, _ = median_interval(b)
    if None in (la, ha, lb, hb):
        return "none"
    if hb < la:  # type: ignore[operator]
        return "faster"
    if lb > ha:  # type: ignore[operator]
        return "slower"
    return "none"
