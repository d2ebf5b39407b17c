"""Timing a callable: the timer (CUDA events or perf_counter), the warm-up, the calls per sample, and timed
windows whose halves agree (drift). Pure of torch imports: the timer uses the torch it is given.

CPU pinning around the windows is capture/pinning.py's; the sequence of a mode's timing is worker.py's.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


class _Timer:
    def __init__(self, torch: Any, device: str):
        self.torch, self.cuda = torch, device == "cuda"

    def sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def time(self, call: Any, n: int) -> float:
        """Seconds per call over n back-to-back calls (CUDA events on GPU, perf_counter on CPU)."""
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(n):
                call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0 / n
        t0 = time.perf_counter()
        for _ in range(n):
            call()
        return (time.perf_counter() - t0) / n


def _quantiles(xs: list[float]) -> dict[str, Any]:
    s = sorted(xs)

    def q(p: float) -> float:
        if len(s) == 1:
            return s[0]
        k = p * (len(s) - 1)
        lo = int(k)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (k - lo)

    return {"median": q(0.5), "q1": q(0.25), "q3": q(0.75), "iqr": q(0.75) - q(0.25), "min": s[0],
            "mean": sum(s) / len(s)}


# Seconds the warm-up may take before timing starts anyway, and the timed windows' budget. A constant: no option
# sets it (the spec's "warmup" is the minimum number of warm-up calls).
WARMUP_BUDGET_S = 10.0
# ... and the least it takes, however stable the first calls look: a GPU idles at its lowest clocks (the H200's SM
# clock read 345 MHz idle, 1980 MHz max) and a launch-bound model's sparse kernels raise them over time; the CPU's
# caches and Python's adaptive interpreter warm up too. On the H200 the seed sample's eager calls read 79-89 µs
# for the first 1.0 s after the first call and 66-74 µs from 1.1 s on (benchmarks/README.md). The
# probe of --cpu-pinning and the samples come after.
WARMUP_MIN_S = 1.0
DRIFT_LIMIT = 0.10  # first-half vs second-half median of a timed window, relative to the window's median
MAX_WINDOWS = 3


def _drift(samples: list[float]) -> float:
    """How far the second half of a window moved from the first: |median(2nd) - median(1st)| / median(all)."""
    h = len(samples) // 2
    if h < 2:
        return 0.0
    mid = _quantiles(samples)["median"]
    return abs(_quantiles(samples[h:])["median"] - _quantiles(samples[:h])["median"]) / mid if mid > 0 else 0.0


def _steady_samples(timer: _Timer, call: Any, inner: int, repeats: int, *, budget_s: float, agree: Any = None,
                    contended: Callable[[list[float]], bool] | None = None,
                    before_retry: Callable[[], None] | None = None) -> tuple[list[float], int, float]:
    """Timed samples (ms per call) from a window whose halves agree: a window that still drifts (medians of its
    halves more than DRIFT_LIMIT apart, e.g. a per-call time still falling after the warm-up's single-call check
    passed) counts as warm-up and is timed again, up to MAX_WINDOWS windows while the windows fit in budget_s.
    ``contended(samples)``: True for a window that ran slower than its CPU promised (see _pinned_samples); such a
    window is timed again too, after ``before_retry()``. Returns (samples of the last window, windows timed, that
    window's drift)."""
    t0 = time.perf_counter()
    windows = 0
    while True:
        windows += 1
        samples = [timer.time(call, inner) * 1000.0 for _ in range(repeats)]
        drift = _drift(samples)
        slow = contended is not None and contended(samples)
        spent = time.perf_counter() - t0
        done = (drift <= DRIFT_LIMIT and not slow) or windows >= MAX_WINDOWS or \
            spent * (windows + 1) / windows > budget_s
        if agree is not None:  # torchrun ranks time the same windows (their collectives pair up)
            done = agree.agree_all(done)
        if done:
            return samples, windows, drift
        if slow and before_retry is not None:
            before_retry()


# A timed sample lasts about this long. Each sample of k back-to-back calls between two CUDA events pays a fixed
# cost c once (the synchronize's wake-up, the first launch after it, the last kernel's tail), so it reads
# t + c/k per call. On the H200 (one process, k interleaved; benchmarks/README.md) the seed sample read
# default mode at 173/145/131/126/125 µs per call for k = 1/3/10/30/100 (c ~ 48 µs) and eager at
# 79/63/59/58/57 µs (c ~ 22 µs): a 1 ms sample reads 2-5% high, a 5 ms one under 1%.
SAMPLE_S = 5e-3


def calls_per_sample(per_call_s: float) -> int:
    """Back-to-back calls in one timed sample, so that it lasts about SAMPLE_S (1 to 1000)."""
    return max(1, min(1000, int(SAMPLE_S / max(per_call_s, 1e-7))))


def _batched_estimate(timer: _Timer, call: Any, single_s: float, agree: Any = None) -> float:
    """Seconds per call when calls run back to back, as the timed samples run them.

    The warm-up times single calls, each ending in a synchronize: on a GPU that adds c (see SAMPLE_S) to every
    call, and a launch-bound model read 1.2-3x its back-to-back time that way on the H200 (default mode: 83-333 µs
    single against 64-122 µs per call in the samples), so samples counted from it came out 0.3-0.9 of their
    intended length, each carrying c over fewer calls. Here samples of the estimated length are timed (median of
    3) and the count recomputed until it stops growing (at most 3 rounds, ~50 ms). A call of 2 x SAMPLE_S or more
    needs no batch: one call per sample either way.
    ``agree``: a torchrun group; its ranks make the same calls (their collectives pair up), so each round's count
    and the decision to stop are agreed, on the slowest rank's time."""

    def agreed(x: float) -> float:
        return x if agree is None else float(agree.agree_max(x))

    estimate = agreed(single_s)
    if estimate >= 2 * SAMPLE_S:
        return estimate
    for _ in range(3):
        n = calls_per_sample(estimate)
        estimate = agreed(sorted(timer.time(call, n) for _ in range(3))[1])
        if calls_per_sample(estimate) <= n * 1.25:  # the same on every rank: the estimate is agreed
            break
    return estimate


def _warm_up(timer: _Timer, call: Any, *, min_calls: int, max_seconds: float, min_seconds: float = 0.0,
             agree: Any = None) -> dict[str, Any]:
    """Run for at least min_seconds and min_calls, until per-call time is stable (last 5 within 10% of their
    median), or until the time budget is spent.
    ``agree``: a torchrun group, whose ranks stop together (every rank stable, or one out of time)."""
    times: list[float] = []
    t_start = time.perf_counter()
    while True:
        times.append(timer.time(call, 1))
        stable = False
        if len(times) >= max(min_calls, 5) and time.perf_counter() - t_start >= min_seconds:
            last = sorted(times[-5:])
            med = last[2]
            stable = med > 0 and (last[-1] - last[0]) / med < 0.10
        over = time.perf_counter() - t_start > max_seconds and len(times) >= 3
        if agree is not None:
            if agree.agree_stop(stable, over):
                break
        elif stable or over:
            break
    return {"calls": len(times), "estimate_s": sorted(times[-5:])[len(times[-5:]) // 2]}
