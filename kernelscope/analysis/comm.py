"""Communication per iteration: how long one rank's collectives took and how much of that overlapped
its compute. Pure: intervals in, numbers out; no torch.

Where a collective's time is:
- CUDA: NCCL's kernels (``ncclDevKernel_*``, ``ncclKernel_*``), category "communication" in analysis/patterns.py.
- CPU (gloo): ``c10d::allreduce_`` on the main thread only enqueues the work; the collective itself runs on one
  of gloo's threads, recorded as a ``gloo:all_reduce`` range (torch 2.14.1). Those ranges are the time; without
  them (another backend, an older torch), the c10d ops themselves.

Overlap = |union(collectives) ∩ union(compute kernels)| of the same rank, per iteration: a collective that runs
while a GEMM runs costs less than its duration. A blocking all_reduce in a tensor-parallel MLP overlaps nothing.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence

from kernelscope.analysis.kernels import KernelAnalysis
from kernelscope.result import Communication
from kernelscope.trace import Trace

Interval = tuple[float, float]

# Ranges torch.distributed's backends record around the collective they run (on their own thread for gloo).
_COLLECTIVE_RANGE = re.compile(r"^(gloo|nccl|mpi|ucc|xccl):\w")


def union(intervals: Iterable[Interval]) -> list[Interval]:
    """Merge intervals (start, end) into disjoint, sorted ones; empty or inverted intervals are dropped."""
    out: list[Interval] = []
    for s, e in sorted((s, e) for s, e in intervals if e > s):
        if out and s <= out[-1][1]:
            if e > out[-1][1]:
                out[-1] = (out[-1][0], e)
        else:
            out.append((s, e))
    return out


def length(merged: Sequence[Interval]) -> float:
    return sum(e - s for s, e in merged)


def intersection_length(a: Sequence[Interval], b: Sequence[Interval]) -> float:
    """Length of the intersection of two unions (each disjoint and sorted, as ``union`` returns them)."""
    i = j = 0
    total = 0.0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if hi > lo:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def overlap(comm: Iterable[Interval], compute: Iterable[Interval]) -> tuple[float, float]:
    """(communication time, the part of it during which compute ran too)."""
    c = union(comm)
    return length(c), intersection_length(c, union(compute))


def communication(ka: KernelAnalysis, trace: Trace) -> Communication | None:
    """One rank's collectives per iteration; None when the trace holds none."""
    count = max(1, ka.iterations.count)
    comm_kernels = [k for k in ka.instances if k.category == "communication"]
    per_iter_comm: dict[int, list[Interval]] = {}
    names: dict[str, None] = {}  # in order of appearance (a list's `in` per collective grew with the names)
    source = "gpu kernels" if ka.device == "cuda" else "cpu ops"
    ranges = [] if ka.device == "cuda" else [e for e in trace.cpu if e.cat == "user_annotation"
                                             and _COLLECTIVE_RANGE.match(e.name)]
    if ranges:
        source = "gloo ranges" if any(e.name.startswith("gloo:") for e in ranges) else "collective ranges"
        starts = [w[0] for w in ka.windows]
        for e in ranges:
            it = _window_of(e.ts, starts, ka.windows)
            if it is None:
                continue
            per_iter_comm.setdefault(it, []).append((e.ts, e.ts + e.dur))
            names.setdefault(e.name)
    else:
        for k in comm_kernels:
            per_iter_comm.setdefault(k.iteration, []).append((k.ts, k.ts + k.dur))
            names.setdefault(k.name)
    if not per_iter_comm and not comm_kernels:
        return None
    per_iter_compute: dict[int, list[Interval]] = {}
    for k in ka.instances:  # (read only when there is communication: most traces have none)
        if k.category == "communication" or k.is_memop:
            continue
        per_iter_compute.setdefault(k.iteration, []).append((k.ts, k.ts + k.dur))
    total = overlapped = 0.0
    for it, intervals in per_iter_comm.items():
        t, o = overlap(intervals, per_iter_compute.get(it, ()))
        total += t
        overlapped += o
    return Communication(
        kernels_per_iter=len(comm_kernels) / count,
        time_us_per_iter=total / count,
        overlap_us_per_iter=overlapped / count,
        overlap_fraction=(overlapped / total) if total > 0 else None,
        source=source,
        names=tuple(names),
    )


def _window_of(ts: float, starts: list[float], windows: Sequence[Interval]) -> int | None:
    if not windows:
        return 0
    i = bisect.bisect_right(starts, ts) - 1
    if i < 0 or ts >= windows[i][1]:
        return None
    return i
