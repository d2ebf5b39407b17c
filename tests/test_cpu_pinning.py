"""--cpu-pinning: a timed process moves its launching thread to the CPU where the model runs fastest.

On a shared GPU host the 16 vCPUs differed up to 2x in speed for the same launch-bound model in one process, and a
process stays on the vCPU it starts on: that was the 2x spread between fresh processes (benchmarks/README.md,
"Rules the timing takes from measurements"). The probe is tested on real calls whose cost depends on the CPU they
run on.
"""

from __future__ import annotations

import ctypes
import os
import time

import pytest

from kernelscope.analysis.mode import _latency, pinning_note
from kernelscope.analysis.stats import combine_processes, cpu_spread
from kernelscope.capture.pinning import _pin_fastest_cpu, _pinned_samples
from kernelscope.capture.timing import _Timer
from kernelscope.report.words import say

from .test_latency_verdicts import process

_libc = ctypes.CDLL(None)


def _slow_on(cpu: int):  # noqa: ANN202
    """A call that costs ~2 ms on ``cpu`` and ~0.1 ms elsewhere (it asks the kernel where it runs): the probe
    must find the slow CPU by timing, whatever else loads this machine."""

    def call() -> None:
        if _libc.sched_getcpu() == cpu:
            time.sleep(0.002)
        else:
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 1e-4:
                pass

    return call


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs and sched_setaffinity")
def test_the_probe_pins_to_the_cpu_where_the_calls_run_fastest():
    cpus = sorted(os.sched_getaffinity(0))
    slow = cpus[0]
    try:
        # WHEN the probe times a call that is slow on one CPU, on every CPU
        got = _pin_fastest_cpu(_Timer(None, "cpu"), _slow_on(slow), 3)
        pinned = os.sched_getaffinity(0)
    finally:
        os.sched_setaffinity(0, set(cpus))
    # THEN it chose another CPU, pinned this thread there, and kept every CPU's probe (ms per call)
    assert got is not None
    assert got["cpu"] != slow and pinned == {got["cpu"]}
    assert set(got["cpu_probe"]) == {str(c) for c in cpus}
    assert got["cpu_probe"][str(slow)] > 1.5 and got["cpu_probe"][str(got["cpu"])] < 0.5


class _Busier:
    """A call that runs ~0.1 ms everywhere until ``after`` calls, then ~2 ms on the CPU it was running on at that
    moment: a CPU that became contended after the probe chose it."""

    def __init__(self, after: int):
        self.calls, self.after, self.slow = 0, after, None

    def __call__(self) -> None:
        self.calls += 1
        cpu = _libc.sched_getcpu()
        if self.calls == self.after:
            self.slow = cpu
        if self.slow is not None and cpu == self.slow:
            time.sleep(0.002)
        else:
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 1e-4:
                pass


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs and sched_setaffinity")
def test_a_window_slower_than_its_cpus_probe_is_timed_again_on_a_new_choice():
    cpus = sorted(os.sched_getaffinity(0))
    # GIVEN a call that turns slow on its CPU right after the probe (per CPU: one call, then 3 samples of 3)
    call = _Busier(after=10 * len(cpus) + 2)
    try:
        samples, windows, _drift, pinned = _pinned_samples(_Timer(None, "cpu"), call, 3, 10, pin=True)
        where = os.sched_getaffinity(0)
    finally:
        os.sched_setaffinity(0, set(cpus))
    # THEN the slow window did not count: a new probe moved the thread off that CPU and the kept window is fast
    assert call.slow is not None
    assert pinned is not None and pinned["cpu_repins"] >= 1 and pinned["cpu"] != call.slow
    assert windows >= 2
    # and once the samples are taken the thread may use every CPU again (the numerics and the profile after the
    # timing are no measurement of the CPU: on one CPU a 1B Llama's numerics took over a minute on the H200)
    assert where == set(cpus)
    assert sorted(samples)[len(samples) // 2] < 0.5
    # and without pinning nothing moves and no pinning record is made
    plain = _pinned_samples(_Timer(None, "cpu"), _slow_on(-1), 1, 5, pin=False)
    assert plain[3] is None and len(plain[0]) == 5


def test_one_cpu_is_no_choice():
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no sched_setaffinity")
    cpus = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, {min(cpus)})
        assert _pin_fastest_cpu(_Timer(None, "cpu"), _slow_on(-1), 1) is None
    finally:
        os.sched_setaffinity(0, cpus)


def test_the_processes_cpus_and_spread_reach_the_latency_and_its_note():
    # GIVEN three processes' records as the worker writes them (capture schema): CPU 10, 4 and 12, whose probes
    # saw the slowest CPU 1.9x, 2.1x and 1.2x the fastest
    probes = [{"10": 0.031, "1": 0.059}, {"4": 0.030, "15": 0.063}, {"12": 0.033, "3": 0.040}]
    recs = [{**process(m, seed=i), "cpu": c, "cpu_probe": p}
            for i, (m, c, p) in enumerate(zip((0.031, 0.030, 0.033), (10, 4, 12), probes))]
    lat = _latency(combine_processes(recs))
    assert lat.cpus == (10, 4, 12)
    assert lat.cpu_spread == pytest.approx(2.1)
    assert say(pinning_note(lat)) == (
        "each process timed with its launching thread on the CPU where the model ran fastest (CPU 10, 4, 12); "
        "the CPUs' speeds for this model differed up to 2.1x (contention on a shared host); --cpu-pinning off "
        "times where the scheduler puts it")
    # a run without pinning (the CPU device, --cpu-pinning off, older captures) says nothing about it
    recs[2]["cpu_repins"] = 2
    assert _latency(combine_processes(recs)).cpu_repins == 2
    assert say(pinning_note(_latency(combine_processes(recs)))).endswith(
        "; 2 timed window(s) ran slower than the chosen CPU's probe promised and were timed again after a new "
        "choice; --cpu-pinning off times where the scheduler puts it")
    plain = _latency(combine_processes([process(0.03, seed=i) for i in range(3)]))
    assert plain.cpus == () and pinning_note(plain) is None
    assert cpu_spread({"0": 0.03}) is None and cpu_spread(None) is None


def test_the_option_reaches_the_worker_spec_and_the_settings():
    from kernelscope.capture.runner import CaptureOptions

    assert CaptureOptions(model="m.py", sets={}, dtype=None, device="cuda").cpu_pinning == "fastest"
    from click.testing import CliRunner

    from kernelscope.commands import profile, upgrade_check

    for cmd in (profile.command, upgrade_check.command):
        res = CliRunner().invoke(cmd, ["samples/linear_gelu.py", "--cpu-pinning", "sometimes"])
        assert res.exit_code == 2 and "'sometimes' is not one of 'fastest', 'off'" in res.output
