"""Kernels per iteration: cut a trace into iterations, assign each kernel to one, aggregate by category/backend.

On CUDA a kernel is a GPU event (memsets/memcpys are counted apart). On the CPU a "kernel" is a compute op:
an Inductor C++ kernel (``graph_0_cpp_fused_*`` with cpp.enable_kernel_profile), a GEMM op, or a leaf ATen op
that is not a view or bookkeeping op.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from operator import le
from typing import Any

import msgspec

from kernelscope import vocab as _vocab
from kernelscope.analysis import patterns
from kernelscope.errors import UsageError
from kernelscope.result import Iterations, KernelStat, Note
from kernelscope.trace import GPU_MEMOP_CATS, CpuEvent, Trace, gc_paused

_STEP = _vocab.PROFILER_STEP
_GRAPH_CALL = _vocab.GRAPH_CALL
_NO_COMPUTE = _vocab.CPU_NO_COMPUTE_OPS
_BOOKKEEPING = _vocab.CPU_BOOKKEEPING


class KernelInstance(msgspec.Struct, frozen=True, gc=False):
    """One launch of a kernel, assigned to an iteration.

    A msgspec Struct like the trace's records (trace.GpuEvent: one C call to build, no GC tracking; it holds only
    strings and numbers), with a frozen dataclass's fields, equality and repr."""

    name: str
    category: str
    backend: str
    ts: float
    dur: float
    iteration: int
    launch_ts: float | None
    external_id: int | None
    correlation: int | None
    is_memop: bool
    stream: int | None = None


def named(records: Sequence[CpuEvent], names: set[str] | frozenset[str]) -> list[CpuEvent]:
    """The records whose name is one of ``names``, in order."""
    return [e for e in records if e.name in names]


@dataclass(frozen=True, slots=True)
class KernelAnalysis:
    device: str  # "cuda" or "cpu"
    iterations: Iterations
    windows: tuple[tuple[float, float], ...]
    instances: tuple[KernelInstance, ...]
    stats: tuple[KernelStat, ...]
    kernels_per_iter: float
    memops_per_iter: float
    by_category: dict[str, float]
    by_backend: dict[str, float]
    time_us_per_iter: float
    # How iteration() finds an iteration's instances, filled on its first call: the instances' iteration numbers
    # (under _IN_ORDER) when they never decrease, else the instances grouped by iteration. This analysis's own, so
    # it lives and dies with it (no module-level cache keyed by id()).
    _by_iteration: dict[object, Any] = field(default_factory=dict, init=False, compare=False, repr=False)

    def iteration(self, i: int) -> tuple[KernelInstance, ...]:
        """The instances of iteration ``i``, in launch order."""
        # Callers ask for every iteration in turn (GEMM verdicts): a scan of all instances per call made that
        # quadratic (minutes on a 1M-event trace). On the GPU the instances are in launch order and windows are
        # assigned by launch time, so iteration numbers never decrease: an iteration is a slice found by bisect.
        # Otherwise (CPU kernels, per thread) the instances are grouped once.
        cache = self._by_iteration
        if not cache and self.instances:
            its = [k.iteration for k in self.instances]
            if all(map(le, its, islice(its, 1, None))):
                cache[_IN_ORDER] = its
            else:
                cache.update(_group_by_iteration(self.instances))
        numbers: list[int] | None = cache.get(_IN_ORDER)
        try:
            if numbers is None:
                group: tuple[KernelInstance, ...] = cache.get(i, ())  # the groups: tuples of instances
                return group
            if i == i:  # (NaN equals no iteration, and bisects as if it equalled all)
                return self.instances[bisect.bisect_left(numbers, i) : bisect.bisect_right(numbers, i)]
            return ()
        except TypeError:  # an unhashable or incomparable i: equal to no iteration, as the scan found
            return tuple(k for k in self.instances if k.iteration == i)


_IN_ORDER = object()  # KernelAnalysis._by_iteration's key for the iteration numbers in instance order


def _group_by_iteration(instances: tuple[KernelInstance, ...]) -> dict[object, tuple[KernelInstance, ...]]:
    groups: dict[object, list[KernelInstance]] = {}
    for k in instances:
        it = k.iteration
        group = groups.get(it)
        if group is None:
            group = groups[it] = []
        group.append(k)
    return {it: tuple(g) for it, g in groups.items()}




# The distinct CPU op names of the traces being analysed (analysis/mode.py keeps them while its passes run): each
# pass that tests names once per distinct name (find_iterations, _launching_ops, the GEMM index) would otherwise
# read every CPU record again for the same set. Keyed by the trace's tuple of CPU records, held while kept, so an
# entry can never be mistaken for another trace's.
_KEPT_NAMES: list[tuple[tuple[CpuEvent, ...], frozenset[str]]] = []


def cpu_names(trace: Trace) -> frozenset[str] | set[str]:
    """The distinct names of the trace's CPU records."""
    cpu = trace.cpu
    for kept, names in _KEPT_NAMES:
        if kept is cpu:
            return names
    return {e.name for e in cpu}


@contextmanager
def cpu_names_kept(trace: Trace) -> Iterator[frozenset[str]]:
    """Within the block, cpu_names(trace) is read once."""
    entry = (trace.cpu, frozenset(cpu_names(trace)))
    _KEPT_NAMES.append(entry)
    try:
        yield entry[1]
    finally:
        for i in range(len(_KEPT_NAMES) - 1, -1, -1):
            if _KEPT_NAMES[i] is entry:
                del _KEPT_NAMES[i]
                break


def _main_thread_top_level(cpu: tuple[CpuEvent, ...]) -> list[CpuEvent]:
    """Top-level CPU events (not nested in another on the same thread) of the thread that runs the model.

    The thread that spent most time in top-level ops runs the model; others are workers/profiler threads.
    Ties go to the thread whose first top-level op comes first (ts, then first appearance).
    """
    by_tid: dict[object, list[CpuEvent]] = {}
    if len({e.tid for e in cpu}) == 1:  # one thread (the common case): the same scan without per-thread lookups
        group: list[CpuEvent] = []
        end = float("-inf")
        append = group.append
        for e in cpu:  # sorted by (ts, -dur): a parent comes before its children
            if e.ts >= end:  # (tested first: most records are nested)
                cat = e.cat
                if cat == "cpu_op" or cat == "user_annotation":
                    append(e)
                    end = e.ts + e.dur
        if not group:
            return []
        # The one thread is the main one (its busy time decides nothing); its ops are all of them unless its
        # id equals nothing (a NaN: the filter below matched no op).
        tid = group[0].tid
        return group if tid == tid else []
    ends: dict[object, float] = {}
    for e in cpu:
        cat = e.cat
        if cat == "cpu_op" or cat == "user_annotation":
            tid = e.tid
            if e.ts >= ends.get(tid, float("-inf")):
                found = by_tid.get(tid)
                if found is None:
                    found = by_tid[tid] = []
                found.append(e)
                ends[tid] = e.ts + e.dur
    if not by_tid:
        return []
    busy: dict[object, float] = {}
    # Thread order as the time-ordered list of all threads' top-level ops would meet them.
    firsts = [g[0].ts for g in by_tid.values()]
    order = sorted(range(len(by_tid)), key=firsts.__getitem__)
    groups = list(by_tid.values())
    for i in order:
        total = 0.0
        for e in groups[i]:
            total += e.dur
        busy[groups[i][0].tid] = total
    main = max(busy.items(), key=lambda kv: kv[1])[0]
    return [e for e in by_tid[main] if e.tid == main]  # (== as before: a NaN tid matches nothing)


def _smallest_period(names: list[str]) -> int:
    """The smallest p dividing len(names) such that names repeat every p (len(names) when none does).

    One pass (KMP's failure function): testing each divisor in turn scans the whole list for each multiple of the
    true period when the last iteration differs (n times the number of divisors). The shortest period is
    n - fail[n - 1]; when it does not divide n, no proper divisor of n is a period either (Fine and Wilf)."""
    n = len(names)
    if n == 0:
        return 0
    # The smallest period starts where names[0] comes again: the first few such starts are tested by a list
    # comparison (C speed; the first that holds is the smallest period), the failure function only when none
    # of them is one (each test can read to the end).
    first, p = names[0], 0
    for _ in range(8):
        try:
            p = names.index(first, p + 1)
        except ValueError:
            return n  # names[0] never comes again: no period below n
        if names[p:] == names[: n - p]:
            return p if n % p == 0 else n
    fail = [0] * n
    k = 0
    for i in range(1, n):
        name = names[i]
        while k and name != names[k]:
            k = fail[k - 1]
        if name == names[k]:
            k += 1
        fail[i] = k
    p = n - fail[-1]
    return p if n % p == 0 else n


def _windows_from_groups(groups: list[list[CpuEvent]]) -> list[tuple[float, float]]:
    starts = [g[0].ts for g in groups]
    ends = starts[1:] + [float("inf")]
    return list(zip(starts, ends))


def find_iterations(trace: Trace, iterations: int | None = None) -> tuple[list[tuple[float, float]], str, Note]:
    """Return (windows, method, how: a Note that says how they were found). Windows are CPU-clock intervals
    [start, end)."""
    # Names repeat once per iteration (step markers are the exception): each distinct name is tested once, and the
    # events are read again only when a step marker is among them.
    step_names = {n for n in cpu_names(trace) if _STEP.match(n)}
    steps = [e for e in named(trace.cpu, step_names) if e.cat == "user_annotation"] if step_names else []
    if steps and iterations is None:
        steps.sort(key=lambda e: e.ts)
        return [(e.ts, e.end) for e in steps], "profiler_steps", Note("iterations-from-steps")
    top = _main_thread_top_level(trace.cpu)
    # Names repeat once per iteration: test each distinct name once.
    skip = {n: bool(_STEP.match(n)) or n.startswith("PyTorch Profiler") for n in {e.name for e in top}}
    if any(skip.values()):
        top = [e for e in top if not skip[e.name]]
    if iterations is not None:
        if iterations < 1:
            raise UsageError(f"--iterations must be at least 1 (got {iterations})",
                             "pass the number of profiled iterations")
        if top and len(top) % iterations == 0:
            per = len(top) // iterations
            groups = [top[i * per : (i + 1) * per] for i in range(iterations)]
            return _windows_from_groups(groups), "given", Note("iterations-given", {"iterations": iterations,
                                                                                    "per": per})
        return [], "given", Note("iterations-given", {"iterations": iterations, "per": None})
    if not top:
        return [], "whole_trace", Note("iterations-whole-trace")
    names = [e.name for e in top]
    p = _smallest_period(names)
    reps = len(names) // p
    compiled = any(_GRAPH_CALL.match(n) or "Compiled" in n for n in set(names))
    method = "compiled_graph_calls" if compiled and any(map(_GRAPH_CALL.match, cpu_names(trace))) \
        else "top_level_ops"
    # The first op of each repetition opens a window (what _windows_from_groups does, without the groups).
    starts = [top[i * p].ts for i in range(reps)]
    # ambiguous: reps has a divisor q in 2..reps (reps itself) exactly when reps >= 2, so one iteration may be
    # several repetitions
    note = Note("iterations-inferred", {"iterations": reps, "period": p, "first": names[0],
                                        "ambiguous": reps >= 2 and p < len(names)})
    return list(zip(starts, starts[1:] + [float("inf")])), method, note


def _assign(ts: float | None, starts: list[float], windows: list[tuple[float, float]]) -> int:
    if ts is None or not windows:
        return -1
    i = bisect.bisect_right(starts, ts) - 1
    if i < 0:
        return -1
    return i if ts < windows[i][1] else -1


_HELPERS = _vocab.CPU_HELPER_OPS
_GROUPED = frozenset("aten::" + n for n in _vocab.GROUPED_GEMM_OPS)
_NESTED_NO_COMPUTE = _vocab.CPU_NESTED_NO_COMPUTE_OPS


def _cpu_kernels(trace: Trace) -> list[CpuEvent]:
    """Compute ops on the CPU, each counted once: Inductor C++ kernels, GEMM-class ops (the innermost one: their
    BLAS/oneDNN call has no record of its own, and what they nest, addmm's bias copy, is part of their work), and
    otherwise the innermost op that does work, an op whose nested records are only helpers of it (a mean's fill_, a
    .to()'s copy_) counting as itself."""
    ops = [e for e in trace.cpu if e.cat == "cpu_op" and not _BOOKKEEPING.match(e.name)]
    compute = [e for e in ops if e.name not in _NO_COMPUTE and e.name not in _NESTED_NO_COMPUTE]
    by_tid: dict[object, list[CpuEvent]] = defaultdict(list)
    for e in compute:
        by_tid[e.tid].append(e)
    kernels: list[CpuEvent] = []
    for events in by_tid.values():
        # Events are sorted by (ts, -dur): a stack gives each its parent.
        cats = [patterns.classify(e.name, on_cpu=True)[0] for e in events]
        parent = [-1] * len(events)
        stack: list[int] = []
        for i, e in enumerate(events):
            while stack and e.ts >= events[stack[-1]].end:
                stack.pop()
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
        gemm_desc = [False] * len(events)
        work_desc = [False] * len(events)  # a nested op that is not a helper
        for i in range(len(events) - 1, -1, -1):
            p = parent[i]
            if p >= 0:
                gemm_desc[p] = gemm_desc[p] or gemm_desc[i] or cats[i] == "gemm"
                work_desc[p] = work_desc[p] or work_desc[i] or events[i].name not in _HELPERS
        # a GEMM op's helpers (addmm's copy of the bias) are its work; other ops it nests (the GELU that CPU
        # _addmm_activation runs after its GEMM) are work of their own
        in_gemm = [False] * len(events)
        for i in range(len(events)):
            p = parent[i]
            in_gemm[i] = p >= 0 and events[i].name in _HELPERS and (
                in_gemm[p] or (cats[p] == "gemm" and not gemm_desc[p]))
        # An op that is itself several ops (aten::mean = sum, then div_): counted once, as itself.
        work_children: dict[int, int] = defaultdict(int)
        for i in range(len(events)):
            if parent[i] >= 0 and events[i].name not in _HELPERS:
                work_children[parent[i]] += 1
        composite = [work_children[i] >= 2 and not gemm_desc[i] and _vocab.op_class(events[i].name) in
                     ("pointwise", "boundary") for i in range(len(events))]
        # A grouped GEMM (aten::_grouped_mm) is one kernel: the aten::mm per group ATen runs inside it is its work.
        grouped = [e.name in _GROUPED for e in events]
        inside_composite = [False] * len(events)
        for i in range(len(events)):
            p = parent[i]
            inside_composite[i] = p >= 0 and (inside_composite[p] or composite[p] or grouped[p])
        for i, e in enumerate(events):
            if in_gemm[i] or inside_composite[i]:
                continue  # part of a GEMM op's (or a composite op's) work
            if grouped[i]:
                kernels.append(e)
                continue
            if cats[i] == "gemm":
                if not gemm_desc[i]:
                    kernels.append(e)
                continue
            if composite[i]:
                kernels.append(e)
                continue
            if gemm_desc[i] or work_desc[i]:
                continue  # the work is done by what it nests
            if e.name in _vocab.CPU_DROPOUT_OPS and parent[i] < 0 or (
                    e.name in _vocab.CPU_DROPOUT_OPS and not work_desc[i]):
                continue  # eval-mode dropout returns its input: no work
            p = parent[i]
            # A helper of the op it is nested in, which counts as the one kernel, unless that op nests real
            # work besides helpers (then it does not count itself, and this helper does). The count of such
            # children, taken once above: a scan of the thread's events per helper was quadratic.
            if e.name in _HELPERS and p >= 0 and not work_children[p]:
                continue
            kernels.append(e)
    return kernels


def analyze_kernels(trace: Trace, iterations: int | None = None) -> KernelAnalysis:
    # One KernelInstance per launch: on large traces the cyclic GC would otherwise rescan the trace's records.
    with gc_paused():
        return _analyze_kernels(trace, iterations)


def _analyze_kernels(trace: Trace, iterations: int | None) -> KernelAnalysis:
    windows, method, how = find_iterations(trace, iterations)
    starts = [w[0] for w in windows]
    ends = [w[1] for w in windows]
    device = "cuda" if trace.gpu else "cpu"
    raw: list[KernelInstance] = []
    # A kernel name repeats once per launch: classify each distinct name once.
    classes: dict[object, tuple[str, str]] = {}
    if device == "cuda":
        said = _launching_ops(trace)
        raw, in_order = _gpu_instances(trace, said, classes, starts, ends)
        # Launch order; usually the GPU order already (one stream), and then the stable sort would keep it. (Checked
        # as the instances are made, neighbour by neighbour: a list of every key would be ~10 MB more at the peak,
        # per 1M events.)
        if not in_order:
            keys = list(map(_launch_order, raw))
            raw = [raw[i] for i in sorted(range(len(raw)), key=keys.__getitem__)]
    else:
        for e in _cpu_kernels(trace):
            key = (e.name, e.kernel_backend)
            cls = classes.get(key)
            if cls is None:
                cls = classes[key] = patterns.classify(e.name, on_cpu=True, kernel_backend=e.kernel_backend)
            cat, backend = cls
            raw.append(KernelInstance(e.name, cat, backend, e.ts, e.dur, _assign(e.ts, starts, windows), e.ts,
                                      e.external_id, None, False, None))
    if not windows:
        n = iterations or 1
        kern = [k for k in raw]
        if len(kern) % n:
            raise UsageError(
                f"{len(kern)} kernels cannot be split into --iterations {n} equal parts",
                "pass the number of iterations the trace really holds",
            )
        per = len(kern) // n
        raw = [_with_iteration(k, i // per if per else 0) for i, k in enumerate(kern)]
        count = n
    else:
        count = len(windows)
    instances, per_step, memop_steps, names_step, calls, time_us, meta = _tally(raw, count)
    consistent = len(set(per_step)) <= 1 and len(set(memop_steps)) <= 1
    notes = [how]
    if not consistent:
        notes.append(Note("kernel-counts-differ", {"counts": list(per_step)}))
    elif len(set(names_step)) > 1:
        consistent = False
        notes.append(Note("kernels-differ"))
    its = Iterations(count=count, method=method, consistent=consistent, kernels_per_step=tuple(per_step),
                     notes=tuple(notes))
    stats = tuple(
        sorted(
            (
                KernelStat(
                    name=name,
                    category=meta[name].category,
                    backend=meta[name].backend,
                    calls_per_iter=calls[name] / count,
                    time_us_per_iter=time_us[name] / count,
                    is_memop=meta[name].is_memop,
                )
                for name in calls
            ),
            key=lambda s: (-s.time_us_per_iter, s.name),
        )
    )
    by_cat: dict[str, float] = defaultdict(float)
    by_backend: dict[str, float] = defaultdict(float)
    for s in stats:
        by_cat[s.category] += s.calls_per_iter
        if not s.is_memop:
            by_backend[s.backend] += s.calls_per_iter
    # With CPU kernels, nested GEMM/leaf ops overlap in time: sum only the outermost ones for the total.
    total = (sum(s.time_us_per_iter for s in stats if not s.is_memop) if device == "cuda"
             else _cpu_time(instances) / count)
    return KernelAnalysis(
        device=device,
        iterations=its,
        windows=tuple(windows),
        instances=tuple(instances),
        stats=stats,
        kernels_per_iter=sum(per_step) / count,
        memops_per_iter=sum(memop_steps) / count,
        by_category=dict(by_cat),
        by_backend=dict(by_backend),
        time_us_per_iter=total,
    )


def _tally(raw: list[KernelInstance], count: int) -> tuple[
        list[KernelInstance], list[int], list[int], list[int], dict[str, int], dict[str, float],
        dict[str, KernelInstance]]:
    """The instances in an iteration (``raw``'s, in order), and one pass over them for the per-step counts
    (kernels, memops, a fingerprint of the names) and the per-name calls, time and first instance."""
    instances = [k for k in raw if k.iteration >= 0]
    # One pass for the per-step counts and the per-name sums; each name's durations are added in instance
    # order starting from 0, as Counter did, so the float sums are the same bit for bit.
    per_step = [0] * count
    memop_steps = [0] * count
    # which kernels each iteration launched (an order-free fingerprint): equal counts can hide other kernels
    names_step = [0] * count
    calls: dict[str, int] = {}
    time_us: dict[str, float] = {}
    meta: dict[str, KernelInstance] = {}
    for k in instances:
        it, name = k.iteration, k.name
        if k.is_memop:
            memop_steps[it] += 1
        else:
            per_step[it] += 1
            names_step[it] = (names_step[it] + hash(name)) & 0xFFFFFFFFFFFF
        c = calls.get(name)
        if c is None:
            calls[name] = 1
            time_us[name] = 0 + k.dur
            meta[name] = k
        else:
            calls[name] = c + 1
            time_us[name] += k.dur
    return instances, per_step, memop_steps, names_step, calls, time_us, meta


def _gpu_instances(trace: Trace, launching: dict[int, tuple[str, str]], classes: dict[object, tuple[str, str]],
                   starts: list[float], ends: list[float]) -> tuple[list[KernelInstance], bool]:
    """One instance per GPU record, in the trace's order, assigned to the window [start, end) that holds its launch
    (or the kernel, unlaunched); and whether they came in launch order. ``launching``: _launching_ops; ``classes``: the
    (category, backend) of each kernel key met so far (filled in)."""
    raw: list[KernelInstance] = []
    ts_of_corr: dict[int | None, float] = {r.correlation: r.ts for r in trace.runtime if r.correlation is not None}
    launch_ts_of = ts_of_corr.get
    bisect_right, instance = bisect.bisect_right, KernelInstance
    said_of = launching.get
    # Launch order is checked as the instances are made: each launch-order key against the one before.
    in_order, first = True, True
    pts = pgts = 0.0
    # The window of the launch before, [lo, hi) with hi the next window's start: launches come in time order,
    # so most fall in the same one and the bisect is skipped. Only when the starts are sorted (and no NaN):
    # then lo <= ts < hi is exactly when bisect_right(starts, ts) - 1 is that window.
    cursor = bool(starts) and all(map(le, starts, islice(starts, 1, None)))
    nexts = starts[1:] + [float("inf")]
    lo, hi, end, cur = float("inf"), float("-inf"), float("-inf"), -1
    append = raw.append
    for g in trace.gpu:
        name, gcat, corr, gts, ext = g.name, g.cat, g.correlation, g.ts, g.external_id
        launch_ts = launch_ts_of(corr)
        said = said_of(ext) if ext is not None else None
        gkey: object = (name, said) if said is not None else name
        cls = classes.get(gkey)
        if cls is None:
            cls = classes[gkey] = _classify_key(name, said)
        cat, backend = cls
        is_memop = gcat in GPU_MEMOP_CATS
        if is_memop:
            cat = "memset" if "memset" in gcat else "memcpy"
        # _assign, inlined: the window whose [start, end) holds the launch (or the kernel, unlaunched).
        ts = launch_ts if launch_ts is not None else gts
        # (ts, gts) is _launch_order(k): compared as tuples, but for the common strictly later launch
        if in_order and not first and not pts < ts and not (pts, pgts) <= (ts, gts):
            in_order = False
        pts, pgts, first = ts, gts, False
        if lo <= ts < hi:
            it = cur if ts < end else -1
        else:
            it = bisect_right(starts, ts) - 1 if starts else -1
            if it >= 0:
                if cursor:
                    lo, hi, end, cur = starts[it], nexts[it], ends[it], it
                if not ts < ends[it]:
                    it = -1
        append(instance(name, cat, backend, gts, g.dur, it, launch_ts, ext, corr, is_memop, g.stream))
    return raw, in_order


def _launching_ops(trace: Trace) -> dict[int, tuple[str, str]]:
    """External id -> (the CPU op's name, what it says its kernels compute: vocab.launching_op_class), for the
    ops that say something (GEMM-class ops, and ops of another known class). The External id of a GPU kernel is
    the one of the innermost CPU op open when it was launched."""
    # What a name says is decided by its first record's category (a cpu_op says launching_op_class, any other
    # record nothing), so only the records of names that can say something are read again.
    can_say = {n for n in cpu_names(trace) if _vocab.launching_op_class(n)}
    # (name, class) per name, decided by its first record ("" when it says nothing): one tuple per op name, shared
    # by its calls
    said: dict[str, tuple[str, str]] = {}
    out: dict[int, tuple[str, str]] = {}
    if not can_say:
        return out
    for e in named(trace.cpu, can_say):
        name = e.name
        pair = said.get(name)
        if pair is None:
            pair = said[name] = (name, _vocab.launching_op_class(name) if e.cat == "cpu_op" else "")
        if pair[1] and e.external_id is not None:
            out.setdefault(e.external_id, pair)
    return out


def _classify_key(name: str, said: tuple[str, str] | None) -> tuple[str, str]:
    """(category, backend) of a GPU kernel: by its name, or by what its launching CPU op says (None: nothing)."""
    return patterns.classify(name) if said is None else _by_launching_op(name, said)


def _by_launching_op(name: str, said: tuple[str, str]) -> tuple[str, str]:
    """(category, backend) of a kernel from the CPU op that launched it (vocab.launching_op_class): a GEMM-class
    op's kernels are its GEMM but for its helpers (layout transforms, padding) and ATen's own elementwise kernels;
    a GEMM-named kernel of an op of another known class does that op's work. Else its name decides."""
    op, cls = said
    category, backend = patterns.classify(name)
    if cls == "gemm":
        if category != "gemm" and not _aten_convolution(name, backend) and (
                category in ("memset", "memcpy", "pointwise") or _vocab.gemm_helper(name)
                or backend in (patterns.ATEN, patterns.TRITON)):
            return category, backend
        return "gemm", (_vocab.launching_op_backend(op) or backend) if backend == patterns.OTHER else backend
    return (cls, backend) if category == "gemm" else (category, backend)


def _aten_convolution(name: str, backend: str) -> bool:
    """An ATen kernel a GEMM-class op launches whose name says no elementwise or reduction work: the op's own
    computation (the depthwise convolution ATen runs itself, ``conv_depthwise2d_forward_kernel``, where cuDNN does
    not), not a helper of it such as the copy of addmm's bias (``elementwise_kernel``)."""
    return backend == patterns.ATEN and not (_vocab.ELEMENTWISE_WORDS.search(name) or "elementwise" in name
                                             or _vocab.REDUCTION_WORDS.search(name))


def _launch_order(k: KernelInstance) -> tuple[float, float]:
    return (k.launch_ts if k.launch_ts is not None else k.ts, k.ts)


def _with_iteration(k: KernelInstance, i: int) -> KernelInstance:
    return msgspec.structs.replace(k, iteration=i)


def _cpu_time(instances: list[KernelInstance]) -> float:
    total, end = 0.0, float("-inf")
    for k in sorted(instances, key=lambda k: k.ts):
        if k.ts >= end:
            total += k.dur
            end = k.ts + k.dur
    return total
