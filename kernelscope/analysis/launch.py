"""Where a profiled iteration's wall time goes on a GPU: kernels running vs the CPU issuing them. Pure.

Per profiled iteration (a ProfilerStep: the call and the synchronize after it): wall time; GPU busy time (the
union of its kernels' and memops' intervals, so overlapping streams count once); the CPU launch path (from the
step's start to the end of its last launch call: Python, Dynamo guards, Inductor's wrapper and the runtime launch
calls); the time inside those runtime calls. Medians over the iterations. An iteration is launch-bound when the
GPU idles at least half of it and issuing the work took longer than running it: there compiling cannot help much
(a compiled graph's wrapper can even cost more than eager's dispatch) and CUDA graphs (reduce-overhead) can.
"""

from __future__ import annotations

import statistics
from bisect import bisect_left
from collections.abc import Iterable
from itertools import islice
from operator import attrgetter, le

from kernelscope.analysis.kernels import KernelAnalysis
from kernelscope.result import LaunchProfile
from kernelscope.trace import Trace

# Runtime/driver calls that put work on the GPU.
_LAUNCH_WORDS = ("LaunchKernel", "GraphLaunch", "Memcpy", "Memset", "LaunchCooperative")
IDLE_BOUND_PCT = 50.0


def _busy_per_iteration(ka: KernelAnalysis) -> dict[int, float]:
    """Each iteration's GPU busy time: the union of its kernels' and memops' intervals.

    The intervals of each iteration are swept in (start, end) order. Instances come in launch order, which on one
    stream is already that order (iterations follow each other, and so do a stream's kernels): one pass checks it
    as it sweeps. Anything else (several streams, a NaN time) takes one sort of every instance by (iteration, start,
    end) and the same sweep: the same intervals in the same order, so the same sums either way."""
    found = _sweep(((k.iteration, k.ts, k.ts + k.dur) for k in ka.instances), checked=True)
    return found if found is not None else _busy_sorted(ka)


def _busy_sorted(ka: KernelAnalysis) -> dict[int, float]:
    busy = _sweep(sorted([(k.iteration, k.ts, k.ts + k.dur) for k in ka.instances]), checked=False)
    assert busy is not None  # (only a checked sweep gives up)
    return busy


def _sweep(triples: Iterable[tuple[int, float, float]], checked: bool) -> dict[int, float] | None:
    """The union of each iteration's intervals, from (iteration, start, end) in that order (iterations >= 0).
    ``checked``: the order is not known, and None as soon as it does not hold (or at a NaN, which no order places)."""
    busy: dict[int, float] = {}
    current, total, end = -1, 0.0, float("-inf")
    ps = pe = float("-inf")
    for it, s, e in triples:
        if it != current:
            if checked and it < current:
                return None
            if current >= 0:
                busy[current] = total
            current, total, end = it, 0.0, float("-inf")
        elif checked and (s < ps or (s == ps and e < pe)):
            return None
        if checked:
            if s != s or e != e:
                return None
            ps, pe = s, e
        if e <= end:
            continue
        total += e - max(s, end)
        end = e
    if current >= 0:
        busy[current] = total
    return busy


class _IsLaunch(dict[str, bool]):
    """Runtime call name -> whether it puts work on the GPU, tested on first lookup."""

    def __missing__(self, name: str) -> bool:
        found = self[name] = any(w in name for w in _LAUNCH_WORDS)
        return found


def launch_profile(ka: KernelAnalysis, trace: Trace) -> LaunchProfile | None:
    """None on the CPU or when the trace has no finite iteration windows with kernels."""
    if ka.device != "cuda" or not ka.windows:
        return None
    # Names repeat once per launch: test each distinct name once, on its first record (one pass).
    is_launch = _IsLaunch()
    busy_of = _busy_per_iteration(ka)
    walls, busy, path, runtime, counts = _per_window(ka, trace, is_launch, busy_of)
    if not walls:
        return None
    wall, gpu = statistics.median(walls), statistics.median(busy)
    idle = 100.0 * max(0.0, 1.0 - gpu / wall) if wall > 0 else 0.0
    lp = statistics.median(path)
    # launch-bound: the mode's "gpu-idle" finding says so (analysis/mode.py timing_notes)
    bound = idle >= IDLE_BOUND_PCT and lp >= gpu
    return LaunchProfile(iterations=len(walls), wall_us=wall, gpu_busy_us=gpu, gpu_idle_pct=idle,
                         launch_path_us=lp, runtime_us=statistics.median(runtime),
                         launches=statistics.median(counts), launch_bound=bound)


def _per_window(ka: KernelAnalysis, trace: Trace, is_launch: _IsLaunch, busy_of: dict[int, float]) -> tuple[
        list[float], list[float], list[float], list[float], list[int]]:
    """Per finite iteration window with kernels: its wall time, GPU busy time, launch path, time in runtime launch
    calls and number of launches."""
    # Each window's launches by a bisect, their sums over slices: a scan of every launch per window was quadratic
    # (315 s on a 1M-event trace). A launch at a NaN time is in no window (no comparison holds).
    launches = [r for r in trace.runtime if is_launch[r.name] and r.ts == r.ts]
    starts = [r.ts for r in launches]
    if not all(map(le, starts, islice(starts, 1, None))):  # a trace's runtime records come sorted by time
        launches.sort(key=attrgetter("ts"))
        starts = [r.ts for r in launches]
    ends = [r.ts + r.dur for r in launches]
    durs = [r.dur for r in launches]
    walls, busy, path, runtime, counts = [], [], [], [], []
    inf = float("inf")
    get_busy = busy_of.get
    # Windows follow each other (a window's start is the one before's end): its first launch is where the
    # one before's bisect for that end stopped.
    last_end, last_hi = inf, 0
    for i, (start, end) in enumerate(ka.windows):
        if end == inf:
            continue
        b = get_busy(i)
        if b is None:  # no kernels in this iteration
            continue
        if start < end:
            lo = last_hi if start == last_end else bisect_left(starts, start)
            hi = last_hi = bisect_left(starts, end)
            last_end = end
        else:
            lo = hi = 0
        walls.append(end - start)
        busy.append(b)
        path.append((max(ends[lo:hi]) if hi > lo else start) - start)
        runtime.append(sum(durs[lo:hi]))
        counts.append(hi - lo if hi > lo else 0)
    return walls, busy, path, runtime, counts
