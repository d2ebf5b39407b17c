"""Was a mode timed on a busy machine? (capture/load.py measures; this judges it, as Notes report/words.py says.)

A process is *contended* when other processes kept at least BUSY_MIN CPUs busy on average while it warmed up and
timed, and what they used plus the CPUs the timed calls keep busy (OpenMP's threads on the CPU device, the
launching thread on a GPU) exceeds the CPUs online: some timed thread had to wait for a CPU. On the CPU device
that is the case that matters: a parallel region waits a scheduler slice for a thread that is not running, and
the seed sample read 12.0 ms per call instead of 34 µs on the 2-core VM with a test suite beside it. On a GPU
host with 16 CPUs a launching thread is rarely short of a CPU; the contention there is the host's, per vCPU,
which ``--cpu-pinning`` handles and ``steal_cpu`` shows.

A *busy host* is the other kind: the hypervisor ran other guests on this VM's CPUs (``steal_cpu``, in CPUs on
average, machine-wide) at STEAL_BUSY or more while a process warmed up and timed. The steal itself is far too
small to cost what it goes with: it marks other guests busy on the host's cores, caches and memory, and a
launch-bound model's CPU side slows with them for minutes. ``compare`` says so when one run timed a mode on a busy
host and the other on a quiet one: the change between them is the host's as much as the code's.
"""

from __future__ import annotations

from collections.abc import Sequence

from kernelscope.result import LatencyStats, Note

BUSY_MIN = 0.2  # CPUs of other work, on average, below which a machine counts as idle (the runner itself ~0)
# Steal (CPUs on average) at or above which the host counts as busy. On three H100 VMs (16 vCPUs) the seed
# sample's eager processes timed at 0.02 CPUs of steal or more read a median 1.34x their VM's quiet level (under
# 0.01), 15 of 17 above 1.2x; the quiet ones 1.00x, 2 of 23 above 1.2x. Default: 1.37x, 11 of 15 above 1.2x;
# quiet 1.00x, 5 of 25.
STEAL_BUSY = 0.02


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


def contention_note(lat: LatencyStats) -> Note | None:
    """The mode's note "busy-machine" (the processes short of CPUs, of how many, the most CPUs others kept busy,
    the CPUs online and the threads the timed calls need), or None when no timed process was short of CPUs."""
    busy = contended_processes(lat)
    if not busy:
        return None
    return Note("busy-machine", {"processes": list(busy), "of": len(lat.others_cpu), "busiest": busiest(lat),
                                 "cpu_count": lat.cpu_count, "threads": lat.threads or 1.0})


def is_contended(lat: LatencyStats | None) -> bool:
    """True when any timed process of this latency was short of CPUs."""
    return bool(lat is not None and contended_processes(lat))


def contended_sides(sides: Sequence[tuple[str, LatencyStats | None]]) -> tuple[str, ...]:
    """The labels ("base", "head" / "before", "after") of the sides whose latency was contended."""
    return tuple(label for label, lat in sides if is_contended(lat))


def busy_host_processes(lat: LatencyStats | None) -> tuple[int, ...]:
    """1-based numbers of the processes timed while the hypervisor stole STEAL_BUSY CPUs or more."""
    if lat is None:
        return ()
    return tuple(i + 1 for i, s in enumerate(lat.steal_cpu) if s is not None and s >= STEAL_BUSY)


def host_state(lat: LatencyStats | None) -> str:
    """"busy" when most processes whose steal was measured saw a busy host (the median of medians is then one of
    theirs), "quiet" when most saw a quiet one, "mixed" on a tie, "" when not measured (not Linux, an older
    result, a window too short)."""
    measured = [s for s in (lat.steal_cpu if lat is not None else ()) if s is not None]
    busy = sum(s >= STEAL_BUSY for s in measured)
    quiet = len(measured) - busy
    return "busy" if busy > quiet else "quiet" if quiet > busy else "mixed" if busy else ""


def busy_host_note(lat: LatencyStats | None) -> Note | None:
    """The mode's note "busy-host" (the processes timed on a busy host, of how many, the least and most steal
    among them), or None when no process was timed on a busy host."""
    busy = busy_host_processes(lat)
    if lat is None or not busy:
        return None
    steal = sorted(s for i, s in enumerate(lat.steal_cpu) if i + 1 in busy and s is not None)
    return Note("busy-host", {"processes": list(busy), "of": len(lat.steal_cpu), "steal": [steal[0], steal[-1]]})


def busy_host_sides(sides: Sequence[tuple[str, LatencyStats | None]]) -> tuple[str, ...]:
    """The labels of the sides timed on a busy host, when another side's host was quiet (else ()): the sides of
    a comparison ("base"/"head", "before"/"after") or the modes of one run."""
    states = [(label, host_state(lat)) for label, lat in sides]
    busy = tuple(label for label, st in states if st == "busy")
    return busy if busy and any(st == "quiet" for _, st in states) else ()
