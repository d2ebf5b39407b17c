"""A rerun's interval holds the host's drift between runs (issue 27's proofs, session 22).

A run's processes are timed within a minute of each other, so three of them that happen to agree to 1% gave the
seed sample's `default` an interval of 72.5-79.2 µs on an H100 lease whose host stayed quiet throughout
(2026-12-05 19:30, tests/data/h100-torch2.11-quiet-proofs: five identical runs, a hand timing beside each), and
three of the other four runs' medians (79.4-81.5 µs) fell outside it: 3 of 5 runs held every other run's
median, under the bar of 4. analysis/stats.py's RERUN_LOG_SD adds the host's drift between runs to a rerun's
interval and to a ratio between two runs, never to a ratio inside one run.
"""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from kernelscope.analysis.compare import compare_results
from kernelscope.analysis.contention import STEAL_BUSY, host_state
from kernelscope.analysis.recommend import recommend
from kernelscope.analysis.stats import (
    MEDIAN_VAR_FACTOR,
    RERUN_LOG_SD,
    Z975,
    latency_ratio,
    process_spread,
    rerun_half_width,
    separated,
)
from kernelscope.report.io import load_result
from kernelscope.result import LatencyStats, RunResult

from .test_latency_verdicts import latency

DATA = Path(__file__).parent / "data" / "h100-torch2.11-quiet-proofs"
RESULTS = Path(__file__).parents[1] / "benchmarks" / "results"


@pytest.fixture(scope="module")
def runs() -> list[RunResult]:
    return [load_result(DATA / f"run-{i}") for i in range(1, 6)]


def _lat(run: RunResult, name: str) -> LatencyStats:
    m = run.mode(name)
    assert m is not None and m.latency_ms is not None
    return m.latency_ms


def _interval(lat: LatencyStats, drift: float) -> tuple[float, float]:
    """The rerun interval recomputed from the per-process medians, with this drift."""
    spread = process_spread(lat)
    assert spread is not None
    h = rerun_half_width(spread, drift)
    return spread.median * math.exp(-h), spread.median * math.exp(h)


def _holding(lats: list[LatencyStats], drift: float) -> int:
    """Runs whose rerun interval (with this drift) holds every other run's median: the proofs' bar."""
    held = 0
    for i, lat in enumerate(lats):
        lo, hi = _interval(lat, drift)
        held += all(lo <= o.median <= hi for j, o in enumerate(lats) if j != i)
    return held


def test_the_quiet_lease_misses_the_bar_without_the_drift_and_holds_it_with(runs):
    # GIVEN five identical runs on one host that stayed quiet (every process under STEAL_BUSY)
    assert all(host_state(_lat(r, name)) == "quiet" for r in runs for name in ("eager", "default"))
    for name in ("eager", "default"):
        lats = [_lat(r, name) for r in runs]
        # the device recorded the intervals without a drift: the recomputation here is that formula exactly
        for lat in lats:
            assert (lat.low, lat.high) == pytest.approx(_interval(lat, 0.0))
    # THEN without the drift `default` held 3 of 5 (the bar is 4), with it every mode holds the bar
    assert [_holding([_lat(r, n) for r in runs], 0.0) for n in ("eager", "default")] == [4, 3]
    assert min(_holding([_lat(r, n) for r in runs], RERUN_LOG_SD) for n in ("eager", "default")) >= 4


def test_the_hand_timing_beside_it_holds_with_the_same_formula():
    # The hand script (CUDA events, the same process layout) timed eager right after each run.
    lats = []
    for i in range(1, 6):
        h = json.loads((DATA / f"hand-{i}.json").read_text())
        samples = [r["samples"] for r in h["runs"]["eager"]]
        lats.append(latency_from(h["modes"]["eager"]["per_process_ms"], samples))
    assert _holding(lats, 0.0) == 5 and _holding(lats, RERUN_LOG_SD) == 5


def latency_from(per_process: list[float], samples: list[list[float]]) -> LatencyStats:
    return LatencyStats(median=statistics.median(per_process), iqr=0.0, q1=0.0, q3=0.0, min=0.0, mean=0.0,
                        per_process=tuple(per_process), process_samples=tuple(tuple(s) for s in samples))


def _busy(host: dict | None) -> bool:
    steal = [s for s in (host or {}).get("steal_cpu") or () if s is not None]
    return 2 * sum(s >= STEAL_BUSY for s in steal) > len(steal)


def test_the_drift_is_no_more_than_the_quiet_leases_show():
    # Every recorded five-run proof whose processes' steal was measured and quiet in every run: the spread of the
    # run medians beyond what their processes allow (variance of log run medians - F s^2 / P, pooled).
    excess, df, seen = 0.0, 0, []
    for path in sorted(RESULTS.glob("*proofs*.json")):
        data = json.loads(path.read_text())
        for name, m in data.get("proofs", data).get("modes", {}).items():
            hosts = m.get("host") or []
            if name not in ("eager", "default") or len(hosts) < 3 or any(h is None or _busy(h) for h in hosts):
                continue
            spreads = [process_spread(latency_from(pp, [])) for pp in m["per_process"]]
            logs = [math.log(s.median) for s in spreads if s]
            allowed = statistics.mean(MEDIAN_VAR_FACTOR * s.log_sd ** 2 / s.n for s in spreads if s)
            excess += (statistics.variance(logs) - allowed) * (len(logs) - 1)
            df += len(logs) - 1
            seen.append((path.name, name))
    assert len(seen) >= 6, seen  # the H100 leases of 15:04 and 19:30 and the H200 lease of 19:42, each mode
    pooled = math.sqrt(max(excess / df, 0.0))
    assert RERUN_LOG_SD <= pooled, (pooled, seen)


def test_a_tight_run_gets_the_drift_and_compare_still_sees_a_fifth():
    # GIVEN two runs whose three processes each agree to 0.5%
    base = latency([1.00, 1.002, 0.998], rel=0.005)
    same = latency([1.02, 1.018, 1.022], rel=0.005, seed=10)
    slower = latency([1.20, 1.198, 1.202], rel=0.005, seed=20)
    # THEN a rerun interval is at least the drift's part wide
    assert math.log(base.high / base.median) >= Z975 * math.sqrt(2) * RERUN_LOG_SD
    # and 2% between two runs is no change, 20% still is
    assert separated(base, same) == "none"
    assert separated(base, slower) == "slower"
    ratio = latency_ratio(slower, base, between_runs=True)
    assert ratio.low > 1.0 and not ratio.within_noise


def test_inside_one_run_the_ratio_keeps_the_processes_spread_alone(runs):
    # The recommendation's speedups were computed on the device before the drift existed: unchanged here.
    for run in runs:
        recorded = {c.mode: (c.low, c.high) for c in run.recommendation[0].candidates}
        now = {c.mode: (c.low, c.high) for c in recommend(list(run.modes)).candidates}
        assert now == pytest.approx(recorded)
    # while the same two modes' ratio between runs is wider (each run's drift)
    a, b = _lat(runs[0], "default"), _lat(runs[0], "eager")
    inside, between = latency_ratio(a, b), latency_ratio(a, b, between_runs=True)
    assert between.low < inside.low and between.high > inside.high


def test_compare_of_the_quiet_runs_reads_none_with_the_wider_ratio(runs):
    cmp = compare_results(runs[3], runs[1])  # the tight run 4 against run 2: 7.5% apart on default
    d = next(m for m in cmp.modes if m.name == "default")
    assert d.change == "none" and d.latency.within_noise
    assert d.latency.low < d.latency.value < d.latency.high


def test_one_mode_in_a_tight_run_is_no_narrower_than_before():
    lat = latency([0.05, 0.0501, 0.0499], rel=0.002)
    spread = process_spread(lat)
    assert spread is not None
    assert rerun_half_width(spread) >= rerun_half_width(spread, 0.0)


def test_the_proof_recorded_live_on_the_drift_code_holds_the_bar_only_with_the_drift():
    # Session 23 (H100, 2026-12-05 22:05, code d8c772f): the device recorded these intervals with the drift. The
    # bar (4 of 5 per mode) held there; recomputed from the per-process medians it still must, and it fails once
    # the drift is gone (default's runs 1 and 4 missed a median by 0.6% and 0.1%).
    modes = json.loads((RESULTS / "h100-proofs-paired-2026-12-05-2205.json").read_text())["proofs"]["modes"]
    held = {}
    for name in ("eager", "default"):
        m = modes[name]
        lats = [latency_from(pp, []) for pp in m["per_process"]]
        for lat, (lo, hi) in zip(lats, m["intervals"]):
            assert (lo, hi) == pytest.approx(_interval(lat, RERUN_LOG_SD))
        held[name] = (_holding(lats, RERUN_LOG_SD), _holding(lats, 0.0), m["runs_holding_all"])
    assert held == {"eager": (5, 5, 5), "default": (4, 2, 4)}
