"""CPU pinning for the timed windows (``--cpu-pinning fastest``): probe the allowed CPUs with the model's own
calls, pin the launching thread to the fastest, and probe again when a window runs slower than its CPU promised.
"""

from __future__ import annotations

import os
from typing import Any

from kernelscope.capture.timing import WARMUP_BUDGET_S, _quantiles, _steady_samples, _Timer

CONTENDED = 1.15  # a window's median this far above its CPU's probe: the CPU got busier after it was chosen


def _pinned_samples(timer: _Timer, call: Any, inner: int, repeats: int, *, pin: bool,
                    agree: Any = None) -> tuple[list[float], int, float, dict[str, Any] | None]:
    """_steady_samples, on the fastest CPU when ``pin``: the probe chooses a CPU; a window whose median came out
    more than CONTENDED x that CPU's probe (on the H200 VM a vCPU's contention changes within a second) is timed
    again after a new probe, within the same MAX_WINDOWS. Returns _steady_samples' triple and the pinning record
    (the CPU, its probe, how many times it was chosen again) or None when nothing was pinned."""
    if not pin:
        return (*_steady_samples(timer, call, inner, repeats, budget_s=WARMUP_BUDGET_S, agree=agree), None)
    allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None
    state: dict[str, Any] = {"pinned": _pin_fastest_cpu(timer, call, inner, allowed), "repins": 0}

    def contended(samples: list[float]) -> bool:
        p = state["pinned"]
        if p is None:
            return False
        promised = p["cpu_probe"][str(p["cpu"])]
        return bool(promised > 0 and _quantiles(samples)["median"] > CONTENDED * promised)

    def again() -> None:
        state["repins"] += 1
        state["pinned"] = _pin_fastest_cpu(timer, call, inner, allowed) or state["pinned"]

    try:
        samples, windows, drift = _steady_samples(timer, call, inner, repeats, budget_s=WARMUP_BUDGET_S,
                                                  agree=agree, contended=contended, before_retry=again)
    finally:
        if allowed:
            # What follows the timing (numerics, memory, the profile) is no measurement of the CPU: on one CPU
            # the numerics of a 1B Llama's logits took over a minute on the H200 (every CPU thread torch starts
            # later inherits the pin).
            os.sched_setaffinity(0, set(allowed))
    pinned = state["pinned"]
    if pinned is not None and state["repins"]:
        pinned = {**pinned, "cpu_repins": state["repins"]}
    return samples, windows, drift, pinned


def _pin_fastest_cpu(timer: _Timer, call: Any, inner: int,
                     cpus: list[int] | None = None) -> dict[str, Any] | None:
    """Pin this (the launching) thread to the CPU where the model's calls ran fastest, and say so.

    Why: on a shared VM (the H200 machine here: 16 vCPUs) the vCPUs differ in speed by up to 2x at any moment,
    from contention on the host, and a process stays on the vCPU it started on; a launch-bound model's median
    then depends on where the scheduler happened to put the process (measured on the H200, benchmarks/README.md:
    one process, the same model, 31-62 us eager across its 16 CPUs). Every process timing on the least-contended
    CPU measures the code, not the neighbours. Only the calling thread moves (threads started later inherit
    it); a GPU-bound model reads the same on every CPU. None when there is no choice to make."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        cpus = cpus or sorted(os.sched_getaffinity(0))  # a new probe passes the CPUs the process started with
    except OSError:
        return None
    if len(cpus) < 2:
        return None
    probe: dict[int, float] = {}
    try:
        for cpu in cpus:
            os.sched_setaffinity(0, {cpu})
            call()  # the first call after a move runs on cold caches
            # median of 3: one lucky sample (a whole sample inside one time slice of a shared CPU) decides nothing
            probe[cpu] = sorted(timer.time(call, inner) for _ in range(3))[1] * 1000.0
        best = min(probe, key=lambda c: probe[c])
        os.sched_setaffinity(0, {best})
    except OSError:  # a CPU went offline or the cgroup changed: time where the scheduler puts us
        os.sched_setaffinity(0, set(cpus))
        return None
    return {"cpu": best, "cpu_probe": {str(c): round(t, 6) for c, t in probe.items()}}
