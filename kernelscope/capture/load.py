"""How busy the machine was with other work while a mode was timed (Linux ``/proc``; nothing elsewhere).

Why: on the CPU device Inductor's C++ kernels and ATen run OpenMP threads, one per core; when another process
holds a core, a parallel region waits for a thread that is not running, a scheduler slice at a time. On the 2-core
CI VM the seed sample's eager mode read 12.0 ms per call with a test suite running beside it against 34 µs idle,
in every process alike, so an across-process interval cannot see it and ``compare`` called identical code "351x
slower". The meter reads the machine's busy time (``/proc/stat``) and this process's own (``/proc/self/stat``,
every thread) at the start and end of the warm-up and timed samples; the difference is what other processes ran
(``others_cpu``, in CPUs on average), plus the time the hypervisor gave this VM's CPUs to someone else
(``steal_cpu``). The worker stores both with the latency; analysis/contention.py judges them.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CpuTimes:
    """Cumulative seconds: the machine's busy and stolen time (all CPUs), this process's CPU time, the clock."""

    busy_s: float
    steal_s: float
    own_s: float
    wall_s: float


def parse_proc_stat(text: str, tick: float) -> tuple[float, float]:
    """(busy, steal) seconds from ``/proc/stat``'s aggregate ``cpu`` line: busy = user + nice + system + irq +
    softirq (idle and iowait are not busy; guest time is already inside user)."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            v = [int(x) for x in parts[1:]] + [0] * 10
            user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
            return (user + nice + system + irq + softirq) * tick, steal * tick
    raise ValueError("no aggregate cpu line in /proc/stat")


def parse_self_stat(text: str, tick: float) -> float:
    """This process's utime + stime in seconds from ``/proc/self/stat`` (fields 14 and 15; the command name in
    field 2 may hold spaces and parentheses, so the fields are counted after its closing parenthesis)."""
    rest = text[text.rindex(")") + 2:].split()
    return (int(rest[11]) + int(rest[12])) * tick  # rest[0] is field 3 (state)


def read_times() -> CpuTimes | None:
    """Now, or None where /proc cannot be read (not Linux)."""
    try:
        tick = 1.0 / os.sysconf("SC_CLK_TCK")
        with open("/proc/stat", encoding="ascii") as f:
            busy, steal = parse_proc_stat(f.read(), tick)
        with open("/proc/self/stat", encoding="ascii", errors="replace") as f:
            own = parse_self_stat(f.read(), tick)
    except (OSError, ValueError, IndexError):
        return None
    return CpuTimes(busy, steal, own, time.monotonic())


def others_between(a: CpuTimes | None, b: CpuTimes | None) -> dict[str, float] | None:
    """What other processes ran between two readings, in CPUs on average (``others_cpu``), the CPUs stolen by
    the hypervisor (``steal_cpu``), the CPUs online (``cpu_count``) and the seconds it covers (``load_window_s``);
    None when either reading is missing or the window is under 0.2 s (the counters tick every 10 ms)."""
    if a is None or b is None or b.wall_s - a.wall_s < 0.2:
        return None
    dt = b.wall_s - a.wall_s
    others = max(0.0, (b.busy_s - a.busy_s) - (b.own_s - a.own_s)) / dt
    return {"others_cpu": round(others, 3), "steal_cpu": round(max(0.0, b.steal_s - a.steal_s) / dt, 3),
            "cpu_count": float(os.cpu_count() or 1), "load_window_s": round(dt, 3)}
