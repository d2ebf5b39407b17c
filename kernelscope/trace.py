"""Load a torch.profiler chrome trace (.json or .json.gz) into typed, frozen records.

This is the one versioned place where a trace's raw keys (``args["External id"]``, ``correlation``,
``kernel_backend``...) are mapped to fields. No torch import: analysis must run anywhere.

Only the events the analysis needs are kept (GPU kernels and memops, CUDA runtime/driver launches, CPU ops
and annotations); flow events, Python frames and metadata rows are skipped without building records.

Two readers give the same Trace (see benchmarks/RESULTS.md for the measurements behind this design):
- the streaming reader (``_stream_trace``), used first: it reads the file (or gunzips it) in blocks, cuts the
  ``traceEvents`` array into chunks of ~256 KB at event boundaries, and decodes each chunk with msgspec into
  small typed structs that hold only the keys used here, so no dict per event is built and memory stays at the
  records plus one chunk, whatever the file size;
- the general reader (orjson into dicts, then ``trace_from_dict``), used for anything the streaming reader does
  not take as it is: bad files (so every error message comes from one place), non-UTF-8 bytes, odd value types,
  integers wider than 64 bits. The streaming reader hands over instead of guessing, so results never differ.

Where the optional C extension ``kernelscope._fastread`` is built (setup.py; skipped without a compiler), the
streaming reader gives each chunk to it first: one pass over the bytes that appends the same records, with the
same interning, as the msgspec decode + ``_Builder.add_structs`` would. It declines a chunk (before building
anything) on whatever it does not take exactly as they do: an escape in any string, a value of another JSON type,
a duplicate key, a wide integer, deep nesting, malformed JSON. A declined chunk takes the msgspec path unchanged.
``KERNELSCOPE_PURE_READER=1`` turns the C reader off; ``KERNELSCOPE_READER_STATS=1`` prints how many chunks each
path read.
"""

from __future__ import annotations

import atexit
import gc
import gzip
import io
import json
import os
import re
import sys
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter, le, lt
from pathlib import Path
from typing import Annotated, Any, Generic, Protocol, TypeVar, Union

import msgspec

from kernelscope.errors import TraceError

try:  # orjson parses 3-5x faster than json and allocates less; json is the fallback.
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a declared dependency
    _orjson = None  # type: ignore[assignment]  # checked before each use

# Trace categories, as torch.profiler/Kineto writes them.
GPU_KERNEL_CATS = frozenset({"kernel"})
GPU_MEMOP_CATS = frozenset({"gpu_memset", "gpu_memcpy"})
RUNTIME_CATS = frozenset({"cuda_runtime", "cuda_driver"})
CPU_CATS = frozenset({"cpu_op", "user_annotation", "cpu_instant_event"})
GPU_ANNOTATION_CATS = frozenset({"gpu_user_annotation"})


# Which record each kept category becomes (the streaming reader's one-lookup form of the sets above).
_GPU, _RUNTIME, _CPU, _GPU_ANNOTATION = range(4)
_KIND_OF_CAT: dict[object, int] = {  # keyed by any JSON value: a lookup tests the category
    **{c: _GPU for c in GPU_KERNEL_CATS | GPU_MEMOP_CATS},
    **{c: _RUNTIME for c in RUNTIME_CATS},
    **{c: _CPU for c in CPU_CATS},
    **{c: _GPU_ANNOTATION for c in GPU_ANNOTATION_CATS},
}
# The category's own constant: one str object for all events of a category.
_CAT_CONST: dict[object, str] = {c: c for c in GPU_KERNEL_CATS | GPU_MEMOP_CATS | RUNTIME_CATS | CPU_CATS
                                  | GPU_ANNOTATION_CATS}


# The records are msgspec Structs (frozen, not tracked by the cyclic GC: they hold only strings, numbers and tuples
# of JSON values, so they can be in no cycle): built in one C call from positional values (~0.1 µs, a quarter of
# a slotted dataclass's __init__), 16 bytes smaller each without the GC header, and never walked by a collection.
# Fields, attribute access, equality, hashing and repr are a frozen dataclass's.


class GpuEvent(msgspec.Struct, frozen=True, gc=False):
    """A GPU kernel, memset or memcpy."""

    name: str
    cat: str
    ts: float
    dur: float
    correlation: int | None
    external_id: int | None
    stream: int | None
    device: int | None

    @property
    def is_memop(self) -> bool:
        return self.cat in GPU_MEMOP_CATS


class RuntimeEvent(msgspec.Struct, frozen=True, gc=False):
    """A CUDA runtime/driver call on the CPU (cudaLaunchKernel, cuLaunchKernel, cudaMemcpyAsync...)."""

    name: str
    ts: float
    dur: float
    correlation: int | None
    external_id: int | None
    tid: int | str | None


class CpuEvent(msgspec.Struct, frozen=True, gc=False):
    """A CPU op or user annotation (record_function ranges, ``## Call CompiledFxGraph ##``, ProfilerStep#N)."""

    name: str
    cat: str
    ts: float
    dur: float
    pid: int | str | None
    tid: int | str | None
    external_id: int | None
    kernel_backend: str | None = None
    kernel_name: str | None = None
    input_dims: tuple[Any, ...] | None = None
    input_types: tuple[str, ...] | None = None
    # record_shapes' scalar arguments as text ("tanh" for gelu(approximate="tanh"), "1" for alpha)
    concrete_inputs: tuple[str, ...] | None = None

    @property
    def end(self) -> float:
        return self.ts + self.dur


@dataclass(frozen=True, slots=True)
class Trace:
    path: str
    device_properties: tuple[dict[str, Any], ...]
    gpu: tuple[GpuEvent, ...]
    runtime: tuple[RuntimeEvent, ...]
    cpu: tuple[CpuEvent, ...]
    gpu_annotations: tuple[CpuEvent, ...]
    meta: dict[str, Any] = field(default_factory=dict)
    skipped_events: int = 0
    total_events: int = 0

    @property
    def gpu_name(self) -> str | None:
        return self.device_properties[0].get("name") if self.device_properties else None


def _read_bytes(path: Path) -> bytes:
    try:
        with open(path, "rb") as f:
            head = f.read(2)
            f.seek(0)
            if head == b"\x1f\x8b":
                return gzip.decompress(f.read())
            return f.read()
    except FileNotFoundError:
        raise TraceError(f"trace file {path} does not exist",
                         "pass the path of a torch.profiler .json or .json.gz trace")
    except IsADirectoryError:
        raise TraceError(f"trace path {path} is a directory", "pass one .json or .json.gz trace file")
    except PermissionError:
        raise TraceError(f"trace file {path} cannot be read (permission denied)", "check the file's permissions")
    except (OSError, EOFError, zlib.error) as exc:
        raise TraceError(
            f"trace file {path} is not a readable gzip file ({type(exc).__name__}: {exc})",
            "re-export the trace or pass the uncompressed .json",
        )


def _parse(raw: bytes, path: Path) -> Any:
    if not raw.strip():
        raise TraceError(f"trace file {path} is empty", "export the trace again with prof.export_chrome_trace(...)")
    try:
        if _orjson is not None:
            return _orjson.loads(raw)
        return json.loads(raw)
    except ValueError as exc:
        # Kernel names can carry bytes that are not UTF-8 (seen in traces copied between machines):
        # decode with replacement rather than refusing the whole trace.
        try:
            text = raw.decode("utf-8", errors="replace")
            return json.loads(text)
        except ValueError:
            pass
        msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise TraceError(
            f"trace file {path} is not valid JSON ({msg}); it may be truncated",
            "re-export the trace, or pass a complete torch.profiler chrome trace",
        )


def _int(v: Any) -> int | None:
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def _num(v: Any) -> float | None:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _untyped(v: Any) -> Any:
    return v


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic GC while building many small acyclic objects (records, analysis instances).

    Otherwise each allocation burst triggers collections that walk every record already built: on a 1M-event
    trace that was 2-3x the parse time. On the way out, the new objects go straight to the oldest generation
    (gc.freeze + gc.unfreeze: two list splices, no traversal) instead of being walked by the first young
    collection after gc.enable(); skipped when someone else keeps objects frozen.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()


_EXIT_FREEZE_RECORDS = 100_000
_exit_freeze_registered = False


def _skip_exit_collection(records: int) -> None:
    """Once a large trace is loaded, freeze the GC's objects at interpreter exit.

    At exit the interpreter runs full collections while modules are still alive: they walk every record only to
    find it reachable (~0.3 s per million events, a tenth of ``kernelscope analyze``'s time). Frozen objects are
    skipped, and refcounting still frees them all when the modules are cleared. What is lost is collecting
    cyclic garbage in the last instant, whose finalizers Python does not promise to run at exit anyway.
    """
    global _exit_freeze_registered
    if records >= _EXIT_FREEZE_RECORDS and not _exit_freeze_registered:
        atexit.register(gc.freeze)
        _exit_freeze_registered = True


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Parse a chrome trace; raise TraceError with a fix when it is not one."""
    p = Path(path)
    with gc_paused():
        trace = _stream_trace(p)
        if trace is None:  # not a shape the streaming reader takes as it is: the general reader decides
            data = _parse(_read_bytes(p), p)
            trace = trace_from_dict(data, str(p))
    _skip_exit_collection(len(trace.gpu) + len(trace.runtime) + len(trace.cpu) + len(trace.gpu_annotations))
    if os.environ.get("KERNELSCOPE_READER_STATS", "") not in ("", "0"):
        print(f"kernelscope.trace: chunks {READER_CHUNKS}", file=sys.stderr)
    return trace


def trace_from_dict(data: Any, path: str = "<memory>") -> Trace:
    if isinstance(data, list):  # the bare-array form of the chrome trace format
        events, top = data, {}
    elif isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        events, top = data["traceEvents"], data
    else:
        raise TraceError(
            f"{path} is JSON but not a chrome trace (no 'traceEvents' list)",
            "pass a trace written by torch.profiler's export_chrome_trace or tensorboard_trace_handler",
        )
    b = _Builder()
    b.add_dicts(events)
    return b.finish(top, path)


class _Builder:
    """Collects records from events, in file order, then sorts them into a Trace."""

    def __init__(self) -> None:
        self.gpu: list[GpuEvent] = []
        self.runtime: list[RuntimeEvent] = []
        self.cpu: list[CpuEvent] = []
        self.gpu_ann: list[CpuEvent] = []
        self.skipped = 0
        self.total = 0
        # A kernel name repeats once per launch: one str object per distinct name instead of one per event
        # (on a 1M-event trace, ~70 MB). Same for pids/tids and the Input Dims / Input type of CPU ops.
        self._strs: dict[str, str] = {}
        self._ids: dict[Any, Any] = {}  # (None, a missing id, is its own entry)
        # Durations repeat too (a kernel takes the same few microseconds each iteration): one float object per
        # distinct value, ~15 MB less on a 1M-event trace. (Equal floats are the same value: a zero is always 0.0
        # here, never -0.0.)
        # None (no dur) and -0.0 are seeded as 0.0, so interning also gives what `dur or 0.0` gives.
        self._durs: dict[Any, Any] = {None: 0.0, 0.0: 0.0}
        self._dims: dict[bytes, tuple[Any, ...] | None] = {}
        self._types: dict[bytes, tuple[str, ...] | None] = {}
        # The C reader checks the lists' order as it appends (finish's check, without a list of every start):
        # the last start of gpu, runtime and cpu, and whether each list is ordered so far. Trusted only when the C
        # reader appended every record (_python_records stays False).
        self._order: list[Any] = [float("-inf")] * 3 + [True] * 3
        self._python_records = False

    def add_dicts(self, events: list[Any]) -> None:
        """The general reader's loop: events are whatever JSON gave, and anything may be missing or odd."""
        self._python_records = True
        self.total += len(events)
        gpu, runtime, cpu, gpu_ann = self.gpu, self.runtime, self.cpu, self.gpu_ann
        for ev in events:
            if not isinstance(ev, dict):
                self.skipped += 1
                continue
            cat = ev.get("cat")
            if cat is None or ev.get("ph") != "X":
                continue
            name = ev.get("name")
            ts = _num(ev.get("ts"))
            if name is None or ts is None:
                self.skipped += 1
                continue
            dur = _num(ev.get("dur")) or 0.0
            args = ev.get("args")
            if not isinstance(args, dict):
                args = {}
            name = _text(name)
            if cat in GPU_KERNEL_CATS or cat in GPU_MEMOP_CATS:
                gpu.append(
                    GpuEvent(
                        name=name,
                        cat=cat,
                        ts=ts,
                        dur=dur,
                        correlation=_int(args.get("correlation")),
                        external_id=_int(args.get("External id")),
                        stream=_int(args.get("stream")),
                        device=_int(args.get("device")),
                    )
                )
            elif cat in RUNTIME_CATS:
                runtime.append(
                    RuntimeEvent(
                        name=name,
                        ts=ts,
                        dur=dur,
                        correlation=_int(args.get("correlation")),
                        external_id=_int(args.get("External id")),
                        tid=ev.get("tid"),
                    )
                )
            elif cat in CPU_CATS:
                dims = args.get("Input Dims")
                types = args.get("Input type")
                conc = args.get("Concrete Inputs")
                cpu.append(
                    CpuEvent(
                        name=name,
                        cat=cat,
                        ts=ts,
                        dur=dur,
                        pid=ev.get("pid"),
                        tid=ev.get("tid"),
                        external_id=_int(args.get("External id")),
                        kernel_backend=args.get("kernel_backend"),
                        kernel_name=args.get("kernel_name"),
                        input_dims=tuple(dims) if isinstance(dims, list) else None,
                        input_types=tuple(_text(t) for t in types) if isinstance(types, list) else None,
                        concrete_inputs=tuple(_text(t) for t in conc) if isinstance(conc, list) else None,
                    )
                )
            elif cat in GPU_ANNOTATION_CATS:
                gpu_ann.append(
                    CpuEvent(
                        name=name, cat=cat, ts=ts, dur=dur, pid=ev.get("pid"), tid=ev.get("tid"),
                        external_id=_int(args.get("External id")),
                    )
                )

    def add_structs(self, events: list[Any]) -> None:
        """The streaming reader's loop: the same rules as ``add_dicts``, on msgspec structs.

        Values are already typed by ``_Event`` and ``_Args`` (a chunk with a value of another type is decoded
        with ``_LooseEvent`` and takes ``_add_loose``), so the general reader's conversions are no-ops here, the
        category test one dict lookup, and each record one C call. (Building the records a column at a time
        with ``map`` measured slower: ~70 ns per column per event, against a loop's attribute reads.)
        """
        self.total += len(events)
        self._python_records = True
        if type(events) is _LooseEvents:
            return self._add_loose(events)
        gpu_append, runtime_append = self.gpu.append, self.runtime.append
        cpu_append, ann_append = self.cpu.append, self.gpu_ann.append
        intern_str, intern_id, intern_dur = self._strs.setdefault, self._ids.setdefault, self._durs.setdefault
        kind_of, cat_of, event_type = _KIND_OF_CAT.get, _CAT_CONST.__getitem__, _Event
        dims_of, types_of = self._dims_of, self._types_of
        skipped = 0
        for ev in events:
            if type(ev) is not event_type:  # another phase
                continue
            cat = ev.cat
            if cat is None:
                continue
            name = ev.name
            ts = ev.ts
            if name is None or ts is None:
                skipped += 1
                continue
            kind = kind_of(cat)
            if kind is None:
                continue
            cat = cat_of(cat)  # the category's own constant: one str object for all events
            d: Any = ev.dur
            dur = intern_dur(d, d)  # (_durs maps None and -0.0 to 0.0: what `_num(dur) or 0.0` gives)
            a: Any = ev.args  # (kernel_backend/kernel_name: any JSON scalar, kept as it is, as the general reader does)
            name = intern_str(name, name)
            if kind == _GPU:
                gpu_append(GpuEvent(name, cat, ts, dur, a.correlation, a.external_id, a.stream, a.device))
            elif kind == _RUNTIME:
                tid = ev.tid
                runtime_append(RuntimeEvent(name, ts, dur, a.correlation, a.external_id, intern_id(tid, tid)))
            else:
                pid = ev.pid
                pid = intern_id(pid, pid)
                tid = ev.tid
                tid = intern_id(tid, tid)
                if kind == _CPU:
                    dims = a.input_dims
                    types = a.input_types
                    conc = a.concrete_inputs
                    cpu_append(CpuEvent(name, cat, ts, dur, pid, tid, a.external_id, a.kernel_backend,
                                        a.kernel_name, None if dims is None else dims_of(dims),
                                        None if types is None else types_of(types),
                                        None if conc is None else types_of(conc)))
                else:  # GPU-side annotations keep only what the general reader keeps for them
                    ann_append(CpuEvent(name, cat, ts, dur, pid, tid, a.external_id))
        self.skipped += skipped

    def _add_loose(self, events: list[Any]) -> None:
        """``add_structs`` for a chunk with a value of another JSON type than Kineto writes (decoded with
        ``_LooseEvent``): the general reader's conversions, event by event (``_int``, ``_num``, ``_text``)."""
        skipped = 0
        intern_str, intern_id = self._strs.setdefault, self._ids.setdefault
        for ev in events:
            if type(ev) is not _LooseEvent:  # another phase
                continue
            ev = _untyped(ev)  # any JSON scalar in any field: converted below as the general reader does
            cat = ev.cat
            if cat is None:
                continue
            name = ev.name
            ts = _num(ev.ts)
            if name is None or ts is None:
                skipped += 1
                continue
            kind = _KIND_OF_CAT.get(cat)
            if kind is None:
                continue
            cat = _CAT_CONST[cat]
            dur = _num(ev.dur) or 0.0
            dur = self._durs.setdefault(dur, dur)
            a: Any = ev.args or _NO_LOOSE_ARGS
            name = intern_str(name, name) if type(name) is str else _text(name)
            pid, tid = ev.pid, ev.tid
            pid = intern_id(pid, pid) if type(pid) is int or type(pid) is str else pid
            tid = intern_id(tid, tid) if type(tid) is int or type(tid) is str else tid
            if kind == _GPU:
                self.gpu.append(GpuEvent(name, cat, ts, dur, _int(a.correlation), _int(a.external_id),
                                         _int(a.stream), _int(a.device)))
            elif kind == _RUNTIME:
                self.runtime.append(RuntimeEvent(name, ts, dur, _int(a.correlation), _int(a.external_id), tid))
            elif kind == _CPU:
                dims, types, conc = a.input_dims, a.input_types, a.concrete_inputs
                self.cpu.append(CpuEvent(name, cat, ts, dur, pid, tid, _int(a.external_id), a.kernel_backend,
                                         a.kernel_name, None if dims is None else self._dims_of(dims),
                                         None if types is None else self._types_of(types),
                                         None if conc is None else self._types_of(conc)))
            else:
                self.gpu_ann.append(CpuEvent(name, cat, ts, dur, pid, tid, _int(a.external_id)))
        self.skipped += skipped

    def _dims_of(self, raw: msgspec.Raw) -> tuple[Any, ...] | None:
        key = bytes(raw)
        try:
            return self._dims[key]
        except KeyError:
            v = _decode_checked(key)
            out = self._dims[key] = tuple(v) if isinstance(v, list) else None
            return out

    def _types_of(self, raw: msgspec.Raw) -> tuple[str, ...] | None:
        key = bytes(raw)
        try:
            return self._types[key]
        except KeyError:
            v = _decode_checked(key)
            out = self._types[key] = tuple(_text(t) for t in v) if isinstance(v, list) else None
            return out

    def finish(self, top: Any, path: str) -> Trace:
        props = top.get("deviceProperties") if isinstance(top, dict) else None
        meta = {
            k: top[k]
            for k in ("schemaVersion", "cuda_driver_version", "cuda_runtime_version", "record_shapes",
                      "distributedInfo",
                      "pytorch_version")
            if isinstance(top, dict) and k in top
        }
        gpu, runtime, cpu = self.gpu, self.runtime, self.cpu
        if not (gpu or runtime or cpu or self.gpu_ann):
            # `[1, 2, 3]` or `{"traceEvents": []}` parse, but hold nothing to analyse: bad input, said in one line.
            held = f"{self.total} entries, none of them a profiler event" if self.total else "an empty event list"
            raise TraceError(f"trace file {path} holds no trace events ({held})",
                             "pass a torch.profiler trace of at least one profiled step (export_chrome_trace or "
                             "tensorboard_trace_handler)")
        # Kineto writes most runs in time order already; the sorts are stable, so an ordered run stays as is
        # and checking order first (at C speed) skips building a million sort keys.
        native = not self._python_records
        if not (self._order[3] if native else _ordered(gpu, strict=False)):
            gpu.sort(key=_ts)
        if not (self._order[4] if native else _ordered(runtime, strict=False)):
            runtime.sort(key=_ts)
        # equal starts are ordered by duration: leave those to the sort
        if not (self._order[5] if native else _ordered(cpu, strict=True)):
            cpu.sort(key=_ts_then_longest)
        return Trace(
            path=path,
            device_properties=tuple(p for p in props if isinstance(p, dict)) if isinstance(props, list) else (),
            gpu=tuple(gpu),
            runtime=tuple(runtime),
            cpu=tuple(cpu),
            gpu_annotations=tuple(self.gpu_ann),
            meta=meta,
            skipped_events=self.skipped,
            total_events=self.total,
        )


_ts = attrgetter("ts")


def _ordered(events: list[Any], *, strict: bool) -> bool:
    ts = [e.ts for e in events]  # (a comprehension's attribute reads are ~2x faster than map(attrgetter) here)
    return all(map(lt if strict else le, ts, islice(ts, 1, None)))


def _ts_then_longest(e: CpuEvent) -> tuple[float, float]:
    return (e.ts, -e.dur)


class _Span(Protocol):
    @property
    def ts(self) -> float: ...

    @property
    def dur(self) -> float: ...


_E = TypeVar("_E", bound=_Span)


class StartIndex(Generic[_E]):
    """Records by start time: which start in [lo, hi), and whether one of them spans a given time.

    For the passes that ask once per iteration window or once per op: a scan of every record for each question
    made them quadratic (issue 27: minutes on a 1M-event trace). Built once, O(n) when the records are already in
    time order (a trace's are) and O(n log n) otherwise; each question then costs a bisect (plus the answer).
    Answers are exactly a scan's: records in their given order, and a NaN time (which no comparison holds) in no
    window. ``start`` is the time that counts (default ``ts``; a kernel's launch time, for instance).
    """

    __slots__ = ("_events", "_order", "_starts", "_start", "_reach")

    def __init__(self, events: Sequence[_E], start: Callable[[_E], float] = _ts) -> None:
        starts = [e.ts for e in events] if start is _ts else list(map(start, events))
        self._events = events
        self._start = start
        self._reach: list[float] | None = None
        if all(map(le, starts, islice(starts, 1, None))):  # in order, and no NaN (no comparison with one holds)
            self._order: list[int] | None = None
            self._starts = starts
        else:
            order = sorted((i for i, t in enumerate(starts) if t == t), key=starts.__getitem__)
            self._order = order
            self._starts = [starts[i] for i in order]

    def _at(self, i: int) -> _E:
        return self._events[i if self._order is None else self._order[i]]

    def between(self, lo: float, hi: float) -> list[_E]:
        """The records whose start is in [lo, hi), in their given order (what ``lo <= start < hi`` keeps)."""
        if not lo < hi:
            return []
        i, j = bisect_left(self._starts, lo), bisect_left(self._starts, hi)
        if self._order is None:
            return list(self._events[i:j])
        return [self._events[k] for k in sorted(self._order[i:j])]

    def covers(self, t: float) -> bool:
        """Whether some record spans ``t``: start <= t < ts + dur (any(...) over the records, in a bisect)."""
        if self._reach is None:
            # The furthest end among the records that start at or before each one (a NaN end spans nothing).
            reach, far = [], float("-inf")
            for i in range(len(self._starts)):
                e = self._at(i)
                end = e.ts + e.dur
                if end > far:
                    far = end
                reach.append(far)
            self._reach = reach
        i = bisect_right(self._starts, t)
        return i > 0 and self._reach[i - 1] > t


# ---- the streaming reader -----------------------------------------------------------------------------------

# orjson (the general reader) reads an integer wider than 64 bits as a float, json (its fallback) as an int;
# msgspec reads it as an int. So that no reader ever differs, such integers are refused here (msgspec then
# raises ValidationError and the general reader takes the file); int64's bounds are what msgspec can check.
_Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]
# Any JSON scalar. Lists and objects are refused for the same reason (their contents are not checked).
_Value = str | _Int64 | float | bool | None


# Ids as Kineto writes them: integers (int64, as above). A chunk with another type (a string, a float, a bool)
# fails this schema and is decoded again with the loose one below, whose loop converts as the general reader does.
_Id = Union[_Int64, None]  # noqa: UP007  # (an Annotated type in a |-union needs a runtime Union on 3.11)
# Threads and processes: integers or names, kept as they are (a float or a bool: the loose schema).
_Tid = Union[_Int64, str, None]  # noqa: UP007


class _Args(msgspec.Struct, frozen=True, gc=False):
    """The ``args`` keys the records use; msgspec skips every other key without building it."""

    correlation: _Id = None
    external_id: _Id = msgspec.field(default=None, name="External id")
    stream: _Id = None
    device: _Id = None
    kernel_backend: _Value = None
    kernel_name: _Value = None
    # Raw JSON text: decoded once per distinct value (see _Builder._dims_of), not once per event.
    # (msgspec.Raw cannot be in a Union; None is only the default, a JSON null arrives as Raw b"null".)
    input_dims: msgspec.Raw = msgspec.field(default=None, name="Input Dims")  # type: ignore[assignment]
    input_types: msgspec.Raw = msgspec.field(default=None, name="Input type")  # type: ignore[assignment]
    concrete_inputs: msgspec.Raw = msgspec.field(default=None, name="Concrete Inputs")  # type: ignore[assignment]


_NO_ARGS = _Args()


class _Event(msgspec.Struct, gc=False, tag_field="ph", tag="X"):
    """A complete ("X") event: the only phase that becomes a record, typed as Kineto writes it (names and
    times of another JSON type, a number as a name or a time as a string: the loose schema)."""

    cat: _Value = None
    name: str | None = None
    ts: float | None = None  # an integer time reads as the same float as _num gives
    dur: float | None = None
    pid: _Tid = None
    tid: _Tid = None
    args: _Args = _NO_ARGS  # (a JSON null: the loose schema)


class _LooseArgs(msgspec.Struct, gc=False):
    """``_Args`` for any JSON scalar (still no integer wider than int64)."""

    correlation: _Value = None
    external_id: _Value = msgspec.field(default=None, name="External id")
    stream: _Value = None
    device: _Value = None
    kernel_backend: _Value = None
    kernel_name: _Value = None
    input_dims: msgspec.Raw = msgspec.field(default=None, name="Input Dims")  # type: ignore[assignment]
    input_types: msgspec.Raw = msgspec.field(default=None, name="Input type")  # type: ignore[assignment]
    concrete_inputs: msgspec.Raw = msgspec.field(default=None, name="Concrete Inputs")  # type: ignore[assignment]


class _LooseEvent(msgspec.Struct, gc=False, tag_field="ph", tag="X"):
    """``_Event`` for any JSON scalar; a non-object args still fails (the general reader takes the file)."""

    cat: _Value = None
    name: _Value = None
    ts: Any = None  # _num reads any int as the same float, however wide, so no check is needed
    dur: Any = None
    pid: _Value = None
    tid: _Value = None
    args: _LooseArgs | None = None


_NO_LOOSE_ARGS = _LooseArgs()


class _LooseEvents(list):  # type: ignore[type-arg]
    """A chunk decoded with the loose schema."""


# Every other phase of the trace event format decodes to an empty struct: msgspec skips its fields without
# building them (flows alone are a third of a Kineto trace's events). A phase not listed here, or an event
# without "ph", fails validation and the general reader takes the file.
_OTHER_PHASES = "B E i I C b n e S T p F s t f P N O D M V v R c ( ) =".split()
_Other = tuple(
    msgspec.defstruct(f"_Phase{i}", [], tag_field="ph", tag=ph, gc=False) for i, ph in enumerate(_OTHER_PHASES)
)


_EVENT_TYPES = (_Event, *_Other)
# A Union of a tuple built at runtime: no static spelling exists (mypy cannot check it, X | Y cannot write it).
_DECODE_CHUNK = msgspec.json.Decoder(list[Union[_EVENT_TYPES]])  # type: ignore[valid-type]  # noqa: UP007
_LOOSE_TYPES = (_LooseEvent, *_Other)
_DECODE_LOOSE = msgspec.json.Decoder(list[Union[_LOOSE_TYPES]])  # type: ignore[valid-type]  # noqa: UP007
_DECODE_ANY = msgspec.json.Decoder()


class _Handover(Exception):
    """The streaming reader cannot vouch for identical results; the general reader takes the file."""


def _has_wide_int(v: Any) -> bool:
    if type(v) is int:
        return not -(2**63) <= v < 2**64
    if isinstance(v, list):
        return any(_has_wide_int(x) for x in v)
    if isinstance(v, dict):
        return any(_has_wide_int(x) for x in v.values())
    return False


def _decode_checked(raw: bytes) -> Any:
    """Decode a nested value the records keep; refuse integers orjson and json would read differently."""
    v = _DECODE_ANY.decode(raw)
    if _has_wide_int(v):
        raise _Handover
    return v


# Bytes read (after gunzip) and decoded at a time. Small enough that a chunk's structs are still in cache when
# the records are built from them (measured on 1M events: 256 KB ~20% faster than 8 MB); it also bounds the
# reader's own memory. An event longer than this just grows the window.
_BLOCK = 256 << 10
_HEAD_LIMIT = 64 << 20  # the traceEvents key must start within this many bytes
_WS = rb"[ \t\n\r]*"  # JSON's whitespace (re's \s also takes \f and \v, which JSON does not)
_EVENTS_KEY = re.compile(rb'"traceEvents"' + _WS + rb":" + _WS + rb"\[")
_NEXT_EVENT = re.compile(rb"\}" + _WS + rb"," + _WS + rb"\{")  # between two events (or inside one: see below)
_LAST_EVENT = re.compile(rb"\}" + _WS + rb"\]")
_MAX_MISCUTS = 8
_OPEN, _CLOSE = ord("["), ord("]")


class _Window:
    """A window over the (decompressed) file, refilled block by block; bytes before the cursor are dropped."""

    def __init__(self, f: io.BufferedIOBase) -> None:
        self._f = f
        self.data = bytearray()
        self.eof = False

    def refill(self, keep_from: int) -> int:
        """Drop data[:keep_from] and read one more block; return how far offsets moved."""
        rest = memoryview(self.data)[keep_from:]
        # A new bytearray each time: msgspec.Raw values may still view the old one until their chunk is done.
        new = bytearray(len(rest) + _BLOCK)
        new[: len(rest)] = rest
        rest.release()
        n = len(new) - _BLOCK
        with memoryview(new) as view:
            while n < len(new):
                got = self._f.readinto(view[n:])
                if not got:
                    self.eof = True
                    break
                n += got
        del new[n:]
        self.data = new
        return keep_from


def _decode_events(data: bytearray, start: int, end: int) -> list[Any] | None:
    """Decode the events in data[start:end] (from a '{' to a '}'), or None when that is not a run of events.

    The byte before ``start`` and the one after ``end`` are separators (',', whitespace, or the array's '['),
    so they are overwritten with '[' and ']' for the decode and restored: no copy of the chunk is made.
    """
    before, after = data[start - 1], data[end]
    data[start - 1], data[end] = _OPEN, _CLOSE
    # Not released with `with`: the Input Dims/Input type Raw values of the events still view it.
    view = memoryview(data)[start - 1 : end + 1]
    try:
        try:
            return _DECODE_CHUNK.decode(view)
        except msgspec.ValidationError:  # a value of another JSON type than Kineto writes (or not a trace)
            return _LooseEvents(_DECODE_LOOSE.decode(view))
    except (msgspec.ValidationError, RecursionError):
        raise _Handover  # well-formed JSON with a value (or a nesting) this reader does not take as it is
    except msgspec.DecodeError:
        return None  # the cut was inside an event, or past the end of the array
    finally:
        data[start - 1], data[end] = before, after


# The C form of _decode_events + add_structs for one chunk (kernelscope/_fastread.c, built when a compiler is there):
# it takes a chunk only when every value is as the strict schema types it and no string holds an escape, and
# returns None before building anything otherwise, so the chunk takes the path below unchanged.
# KERNELSCOPE_PURE_READER=1 reads with msgspec alone (tests and comparisons).
try:
    from kernelscope import _fastread
except ImportError:  # pragma: no cover - no compiler at install time
    _fastread = None  # type: ignore[assignment]
else:
    _fastread.setup(GpuEvent, RuntimeEvent, CpuEvent, _KIND_OF_CAT, _CAT_CONST, _OTHER_PHASES,
                    (_GPU, _RUNTIME, _CPU, _GPU_ANNOTATION))

# Chunks read by each path since the process started (KERNELSCOPE_READER_STATS=1 prints them after each load):
# "native": by _fastread; "declined": _fastread refused the cut (then read by msgspec, or a miscut); "msgspec".
# "overlapped": chunks whose parse began while the chunk before's build was still to finish (_stream_pipelined).
READER_CHUNKS = {"native": 0, "declined": 0, "msgspec": 0, "overlapped": 0}

_AddChunk = Callable[[Any, bytearray, int, int], "tuple[int, int] | None"]


def _native_reader() -> _AddChunk | None:
    if _fastread is None or os.environ.get("KERNELSCOPE_PURE_READER", "") not in ("", "0"):
        return None
    return _fastread.add_chunk


def _add_chunk(builder: _Builder, data: bytearray, start: int, end: int, native: _AddChunk | None) -> bool:
    """Add the events in data[start:end] to builder; False when that is not a run of events (a miscut)."""
    if native is not None:
        counts = native(builder, data, start, end)
        if counts is not None:
            builder.total += counts[0]
            builder.skipped += counts[1]
            READER_CHUNKS["native"] += 1
            return True
        READER_CHUNKS["declined"] += 1
    events = _decode_events(data, start, end)
    if events is None:
        return False
    builder.add_structs(events)
    READER_CHUNKS["msgspec"] += 1
    return True


def _last_cut(data: bytearray, pos: int, before: int) -> re.Match[bytes] | None:
    """The last '}' ... ',' ... '{' in data[pos:before]: scanning backwards finds it within an event or two."""
    j = before
    while (j := data.rfind(b"}", pos, j)) >= 0:
        if m := _NEXT_EVENT.match(data, j):
            return m
    return None


def _stream_trace(p: Path) -> Trace | None:
    """Trace from the streaming reader, or None for the general reader to take the file (and its errors)."""
    try:
        with open(p, "rb") as f:
            if f.read(2) == b"\x1f\x8b":
                f.seek(0)
                with gzip.GzipFile(fileobj=f) as gz:
                    return _stream_events(_Window(gz), str(p))
            f.seek(0)
            return _stream_events(_Window(f), str(p))
    except (_Handover, OSError, EOFError, zlib.error, ValueError, RecursionError, msgspec.MsgspecError):
        return None


def _stream_events(win: _Window, path: str) -> Trace | None:
    # 1. Find where the traceEvents array opens: '[' first (the bare-array form) or after "traceEvents":.
    win.refill(0)
    while not win.data.strip(b" \t\n\r") and not win.eof:
        win.refill(0)
    stripped = win.data.lstrip(b" \t\n\r")
    if not stripped:
        return None
    bare = stripped[:1] == b"["
    if bare:
        opening = len(win.data) - len(stripped)
    else:
        while not (m := _EVENTS_KEY.search(win.data)):
            if win.eof or len(win.data) > _HEAD_LIMIT:
                return None
            win.refill(0)
        # A backslash before the quote could make it an escaped quote inside a string.
        if m.start() > 0 and win.data[m.start() - 1] == ord("\\"):
            return None
        opening = m.end() - 1
    head = bytes(win.data[:opening])
    pos = opening + 1
    while True:  # skip whitespace after '['
        data = win.data
        while pos < len(data) and data[pos] in b" \t\n\r":
            pos += 1
        if pos < len(data) or win.eof:
            break
        pos -= win.refill(pos - 1)
    builder = _Builder()
    if pos < len(data) and data[pos] == _CLOSE:
        closing = pos  # an empty array
    elif pos >= len(data) or data[pos] != ord("{"):
        return None  # not an object: the general reader counts it as a skipped event
    else:
        closing = _stream_array(win, pos, builder)
        if closing < 0:
            return None

    # 3. Everything around the array must be the rest of a valid trace document.
    while not win.eof:  # the keys after the array (traceName, ...): small, read whole
        win.refill(0)
    tail = bytes(win.data[closing + 1 :])
    if bare:
        if head.strip(b" \t\n\r") or tail.strip(b" \t\n\r"):
            return None
        return builder.finish({}, path)
    if head.count(b'"traceEvents"') != 1 or b'"traceEvents"' in tail:
        return None
    doc = head + b"[]" + tail
    top = _orjson.loads(doc) if _orjson is not None else json.loads(doc)
    if not isinstance(top, dict) or top.get("traceEvents") != [] or _has_wide_int(_DECODE_ANY.decode(doc)):
        return None
    return builder.finish(top, path)


def _stream_array(win: _Window, pos: int, builder: _Builder) -> int:
    """Decode events from win.data[pos] (a '{') to the array's end; return the index of its ']' or -1.

    2. Each window is decoded up to its last event boundary: a '}' followed by ',' and '{'. Strings must close
    and brackets must balance, so a cut anywhere else (inside a kernel name, in an args list of objects, past
    the array) makes the chunk fail to decode, and an earlier candidate is tried; a chunk that decodes is a
    run of whole events. The array ends at a '}' followed by ']' that decodes.
    """
    native = _native_reader()
    if native is not None and _PIPELINE and getattr(_fastread, "parse", None) is not None:
        return _stream_pipelined(win, pos, builder, native)
    while True:
        pos, done = _stream_step(win, pos, builder, native)
        if done is not None:
            return done


def _stream_step(win: _Window, pos: int, builder: _Builder, native: _AddChunk | None) -> tuple[int, int | None]:
    """One window of _stream_array: (the next chunk's start, None) to go on, or (pos, the array's ']' or -1)."""
    data = win.data
    cut = None
    if not win.eof:
        before, miscuts = len(data), 0
        while (cut := _last_cut(data, pos, before)) is not None:
            if _add_chunk(builder, data, pos, cut.start() + 1, native):
                pos = cut.end() - 1
                break
            miscuts += 1
            if miscuts > _MAX_MISCUTS:
                return pos, -1
            before = cut.start()
    if cut is None:  # the array ends in this window, or one event is longer than it
        for end in _LAST_EVENT.finditer(data, pos):
            if _add_chunk(builder, data, pos, end.start() + 1, native):
                return pos, end.end() - 1
        if win.eof:
            return pos, -1  # the array never closes: truncated, and the general reader says so
    return pos - win.refill(pos - 1), None  # keep the separator byte before pos: _decode_events writes '[' there


# The C reader's two halves overlap (KERNELSCOPE_READER_PIPELINE=0 turns this off): this thread parses chunk k+1
# (without the GIL) while one worker thread builds chunk k's records (with it), in order. Anything but a chunk the C
# reader takes at the window's last cut (a decline, a miscut, the array's end) first waits for the builds, then
# goes the serial way (_stream_step) for that window.
_PIPELINE = os.environ.get("KERNELSCOPE_READER_PIPELINE", "") != "0"


def _stream_pipelined(win: _Window, pos: int, builder: _Builder, native: _AddChunk) -> int:
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    parse, build = _fastread.parse, _fastread.build
    # Builds not yet waited for, oldest first: at most _IN_FLIGHT (each holds its window's 256 KiB block alive).
    builds: deque[Future[None]] = deque()

    def build_counted(parsed: object) -> None:  # (counted before the future is done: the builder is complete then)
        total, skipped = build(builder, parsed)
        builder.total += total
        builder.skipped += skipped

    def wait_builds() -> None:
        while builds:
            builds.popleft().result()  # (raises a build's error)

    with ThreadPoolExecutor(1, thread_name_prefix="kernelscope-trace-build") as pool:
        parsed: object = None  # the chunk parsed last, its build not yet started

        def start_build() -> None:
            nonlocal parsed
            if parsed is not None:
                while len(builds) >= _IN_FLIGHT:
                    builds.popleft().result()
                builds.append(pool.submit(build_counted, parsed))
                parsed = None

        while True:
            if not win.eof:
                data = win.data
                cut = _last_cut(data, pos, len(data))
                if cut is not None:
                    # Chunk k's build starts right before chunk k+1's parse lets go of the GIL, so they run side by
                    # side (started earlier, it would take the GIL while refill reads the file, and the parse wait).
                    start_build()
                    if builds and not builds[-1].done():
                        READER_CHUNKS["overlapped"] += 1
                    parsed = parse(data, pos, cut.start() + 1)
                    if parsed is not None:
                        READER_CHUNKS["native"] += 1
                        pos = cut.end() - 1
                        pos -= win.refill(pos - 1)
                        continue
            start_build()
            wait_builds()  # the serial way from here: the builder is this thread's alone again
            pos, done = _stream_step(win, pos, builder, native)
            if done is not None:
                return done


_IN_FLIGHT = 2
