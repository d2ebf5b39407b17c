"""Was a mode timed on a busy machine? (capture/load.py measures; this judges and says it.)

A process is *contended* when other processes kept at least BUSY_MIN CPUs busy on average while it warmed up and
timed, and what they used plus the CPUs the timed calls keep busy (OpenMP's threads on the CPU device, the
launching thread on a GPU) exceeds the CPUs online: some timed thread had to wait for a CPU. On the CPU device
that is the case that matters: a parallel region waits a scheduler slice for a thread that is not running, and
the seed sample read 12.0 ms per call instead of 34 µs on the 2-core VM with a test suite beside it. On a GPU
host with 16 CPUs a launching thread is rarely short of a CPU; the contention there is the host's, per vCPU,
which ``--cpu-pinning`` handles and ``steal_cpu`` shows.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.result import LatencyStats

BUSY_MIN = 0.2  # CPUs of other work, on average, below which a machine counts as idle (the runner itself ~0)


def contended_processes(lat: LatencyStats) -> tuple[int, ...]:
    """1-based numbers of the processes that were timed while other work left their threads short of CPUs."""
    if not lat.cpu_count:
        return ()
    threads = lat.threads or 1.0
    return tuple(i + 1 for i, o in enumerate(lat.others_cpu)
                 if o is not None and o >= BUSY_MIN and o + threads > lat.cpu_count)


def busiest(lat: LatencyStats) -> float | None:
    others = [o for o in lat.others_cpu if o is not None]
    return max(others) if others else None


def contention_note(lat: LatencyStats) -> str | None:
    """The sentence for the mode's notes, or None when no timed process was short of CPUs."""
    busy = contended_processes(lat)
    if not busy:
        return None
    n = len(lat.others_cpu)
    which = ("its only process" if n == 1 else "all its processes" if len(busy) == n
             else "process" + ("es " if len(busy) > 1 else " ") + ", ".join(str(i) for i in busy) + f" of {n}")
    most = busiest(lat)
    threads = lat.threads or 1.0
    return (f"timed on a busy machine: other processes kept up to {most:.1f} of the {lat.cpu_count:.0f} CPUs busy "
            f"while {which} warmed up and timed, and the timed calls need {threads:.0f}: threads waited for a CPU, "
            "so this latency measures the machine's load as much as the model; rerun on an idle machine (on the "
            "CPU device, OMP_NUM_THREADS at or below the idle CPUs also avoids the wait)")


def is_contended(lat: LatencyStats | None) -> bool:
    """True when any timed process of this latency was short of CPUs."""
    return bool(lat is not None and contended_processes(lat))


def contended_sides(sides: Sequence[tuple[str, LatencyStats | None]]) -> tuple[str, ...]:
    """The labels ("base", "head" / "before", "after") of the sides whose latency was contended."""
    return tuple(label for label, lat in sides if is_contended(lat))
