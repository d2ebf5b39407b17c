"""Load a torch.profiler chrome trace (.json or .json.gz) into typed, frozen records.

This is the one place where a trace's raw keys (``args["External id"]``, ``correlation``, ``kernel_backend``...)
are mapped to fields. No torch import: analysis must run anywhere. Only the events the analysis needs become
records (GPU kernels and memops, CUDA runtime/driver calls, CPU ops and annotations).

One streaming pass with msgspec, so memory holds the records and a block of the file, whatever the file's size:

- the file (gunzipped on the fly) is read in blocks; the ``traceEvents`` array is cut into chunks of ~256 KB at
  event boundaries (a ``}`` then ``,`` then ``{``). A cut that falls inside a string or a nested value leaves a
  chunk that does not decode, and an earlier cut is taken;
- msgspec decodes each chunk into small typed structs holding only the keys used here (other keys and the events
  of other phases are skipped unbuilt), and one loop turns them into records;
- a chunk with a value of another JSON type than Kineto writes (an id as a string, a number as a name, an entry
  that is not an event) is decoded into plain values instead and converted one by one: the same records, slower;
- a file that is not valid UTF-8 is read again with each invalid byte sequence replaced by U+FFFD;
- whatever is not a chrome trace raises one TraceError that names the file and the cause.
"""

from __future__ import annotations

import codecs
import gc
import gzip
import os
import re
import zlib
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from operator import attrgetter, le, lt
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar, Union

import msgspec

from kernelscope.errors import TraceError

# Trace categories, as torch.profiler/Kineto writes them.
GPU_KERNEL_CATS = frozenset({"kernel"})
GPU_MEMOP_CATS = frozenset({"gpu_memset", "gpu_memcpy"})
RUNTIME_CATS = frozenset({"cuda_runtime", "cuda_driver"})
CPU_CATS = frozenset({"cpu_op", "user_annotation", "cpu_instant_event"})
GPU_ANNOTATION_CATS = frozenset({"gpu_user_annotation"})

# Which record each kept category becomes, with the category's own str (one object for all its events).
_GPU, _RUNTIME, _CPU, _GPU_ANNOTATION = range(4)
_KIND_OF_CAT: dict[str, tuple[int, str]] = {
    **{c: (_GPU, c) for c in GPU_KERNEL_CATS | GPU_MEMOP_CATS},
    **{c: (_RUNTIME, c) for c in RUNTIME_CATS},
    **{c: (_CPU, c) for c in CPU_CATS},
    **{c: (_GPU_ANNOTATION, c) for c in GPU_ANNOTATION_CATS},
}


# The records are msgspec Structs (frozen, not tracked by the cyclic GC: they hold only strings, numbers and tuples
# of JSON values, so they can be in no cycle): built in one C call from positional values, smaller than a slotted
# dataclass without the GC header, and never walked by a collection. Fields, attribute access, equality, hashing
# and repr are a frozen dataclass's.


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


def load_trace(path: str | os.PathLike[str]) -> Trace:
    """Read a chrome trace; raise TraceError with the cause and a fix when it is not one."""
    p = Path(path)
    with gc_paused():
        try:
            return _read_file(p, replace_invalid_utf8=False)
        except _NotUtf8:
            # Kernel names can carry bytes that are not UTF-8 (seen in traces copied between machines): read
            # them with replacement rather than refusing the whole trace.
            return _read_file(p, replace_invalid_utf8=True)


def trace_from_dict(data: Any, path: str = "<memory>") -> Trace:
    """A Trace from a chrome trace already parsed into Python values (the object form or the bare array)."""
    if isinstance(data, list):
        events, top = data, {}
    elif isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        events, top = data["traceEvents"], data
    else:
        raise _not_a_trace(path)
    b = _Builder()
    b.add_values(events)
    return b.finish(top, path)


def _not_a_trace(path: str) -> TraceError:
    return TraceError(f"{path} is JSON but not a chrome trace (no 'traceEvents' list)",
                      "pass a trace written by torch.profiler's export_chrome_trace or tensorboard_trace_handler")


def _not_json(path: str, why: str) -> TraceError:
    return TraceError(f"trace file {path} is not valid JSON ({why})",
                      "re-export the trace, or pass a complete torch.profiler chrome trace")


def _syntax_error(error: str, base: int | None) -> str:
    """msgspec's message for bytes that are not JSON, its offset made the file's (``base``: the file offset of the
    decoded bytes; None: they are not the file's own bytes, and no offset is given)."""
    error = error.removeprefix("JSON is malformed: ")
    if at := _AT_BYTE.search(error):
        where = "" if base is None else f" at byte {base + int(at.group(1))}"
        error = error[: at.start()].rstrip() + where
    return error


_TRUNCATED = "it ends before its event list closes: the file may be truncated"


def _int(v: Any) -> int | None:
    if v is None:
        return None
    try:
        return int(v)
    except (TypeError, ValueError, OverflowError):
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


def _text(v: Any) -> str:
    return v if isinstance(v, str) else str(v)


def _internable(v: Any) -> bool:
    return type(v) is int or type(v) is str  # (True == 1 and 1.0 == 1: those are not interned with ints)


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
        self._ids: dict[Any, Any] = {}
        # Durations repeat too (a kernel takes the same few microseconds each iteration): one float object per
        # distinct value. None (no dur) and -0.0 are seeded as 0.0, so interning also gives what `dur or 0.0` gives.
        self._durs: dict[Any, Any] = {None: 0.0, 0.0: 0.0}
        self._dims: dict[bytes, tuple[Any, ...] | None] = {}
        self._types: dict[bytes, tuple[str, ...] | None] = {}

    def add_structs(self, events: list[Any]) -> None:
        """Records from a chunk decoded with ``_Event``: values already have the types the records take, so the
        category test is one dict lookup and each record one C call."""
        self.total += len(events)
        gpu_append, runtime_append = self.gpu.append, self.runtime.append
        cpu_append, ann_append = self.cpu.append, self.gpu_ann.append
        intern_str, intern_id, intern_dur = self._strs.setdefault, self._ids.setdefault, self._durs.setdefault
        kind_of, event_type = _KIND_OF_CAT.get, _Event
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
            kept = kind_of(cat)
            if kept is None:
                continue
            kind, cat = kept
            d: Any = ev.dur
            dur = intern_dur(d, d)
            a = ev.args
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
                else:  # GPU-side annotations keep only what they need
                    ann_append(CpuEvent(name, cat, ts, dur, pid, tid, a.external_id))
        self.skipped += skipped

    def add_values(self, events: list[Any]) -> None:
        """Records from events as plain JSON values, where anything may be missing or of another type: the
        rules of ``add_structs``, with each value converted (``_num``, ``_int``, ``_text``)."""
        self.total += len(events)
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
            kept = _KIND_OF_CAT.get(cat) if type(cat) is str else None
            if kept is None:
                continue
            kind, cat = kept
            dur = _num(ev.get("dur")) or 0.0
            dur = self._durs.setdefault(dur, dur)
            args = ev.get("args")
            if not isinstance(args, dict):
                args = {}
            name = _text(name)
            name = self._strs.setdefault(name, name)
            pid, tid = ev.get("pid"), ev.get("tid")
            pid = self._ids.setdefault(pid, pid) if _internable(pid) else pid
            tid = self._ids.setdefault(tid, tid) if _internable(tid) else tid
            ext = _int(args.get("External id"))
            if kind == _GPU:
                self.gpu.append(GpuEvent(name, cat, ts, dur, _int(args.get("correlation")), ext,
                                         _int(args.get("stream")), _int(args.get("device"))))
            elif kind == _RUNTIME:
                self.runtime.append(RuntimeEvent(name, ts, dur, _int(args.get("correlation")), ext, tid))
            elif kind == _CPU:
                dims, types, conc = args.get("Input Dims"), args.get("Input type"), args.get("Concrete Inputs")
                self.cpu.append(CpuEvent(
                    name, cat, ts, dur, pid, tid, ext, args.get("kernel_backend"), args.get("kernel_name"),
                    tuple(dims) if isinstance(dims, list) else None,
                    tuple(_text(t) for t in types) if isinstance(types, list) else None,
                    tuple(_text(t) for t in conc) if isinstance(conc, list) else None))
            else:
                self.gpu_ann.append(CpuEvent(name, cat, ts, dur, pid, tid, ext))

    def _dims_of(self, raw: msgspec.Raw) -> tuple[Any, ...] | None:
        key = bytes(raw)
        try:
            return self._dims[key]
        except KeyError:
            v = _decode_value(key)
            out = self._dims[key] = tuple(v) if isinstance(v, list) else None
            return out

    def _types_of(self, raw: msgspec.Raw) -> tuple[str, ...] | None:
        key = bytes(raw)
        try:
            return self._types[key]
        except KeyError:
            v = _decode_value(key)
            out = self._types[key] = tuple(_text(t) for t in v) if isinstance(v, list) else None
            return out

    def finish(self, top: Any, path: str) -> Trace:
        props = top.get("deviceProperties") if isinstance(top, dict) else None
        meta = {
            k: top[k]
            for k in ("schemaVersion", "cuda_driver_version", "cuda_runtime_version", "record_shapes",
                      "distributedInfo", "pytorch_version")
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
        # and checking order first skips building a million sort keys. Equal CPU starts are ordered by duration.
        if not _ordered(gpu, strict=False):
            gpu.sort(key=_ts)
        if not _ordered(runtime, strict=False):
            runtime.sort(key=_ts)
        if not _ordered(cpu, strict=True):
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
    ts = [e.ts for e in events]
    return all(map(lt if strict else le, ts, islice(ts, 1, None)))


def _ts_then_longest(e: CpuEvent) -> tuple[float, float]:
    return (e.ts, -e.dur)


# ---- the reader -----------------------------------------------------------------------------------------------

# Ids as Kineto writes them: integers. A chunk with another type (a string, a float, a bool) fails this schema and is
# decoded again into plain values (``_DECODE_VALUES``), which ``_Builder.add_values`` converts.
class _Args(msgspec.Struct, frozen=True, gc=False):
    """The ``args`` keys the records use; msgspec skips every other key without building it."""

    correlation: int | None = None
    external_id: int | None = msgspec.field(default=None, name="External id")
    stream: int | None = None
    device: int | None = None
    kernel_backend: str | None = None
    kernel_name: str | None = None
    # Raw JSON text: decoded once per distinct value (see _Builder._dims_of), not once per event.
    # (msgspec.Raw cannot be in a Union; None is only the default, a JSON null arrives as Raw b"null".)
    input_dims: msgspec.Raw = msgspec.field(default=None, name="Input Dims")  # type: ignore[assignment]
    input_types: msgspec.Raw = msgspec.field(default=None, name="Input type")  # type: ignore[assignment]
    concrete_inputs: msgspec.Raw = msgspec.field(default=None, name="Concrete Inputs")  # type: ignore[assignment]


_NO_ARGS = _Args()


class _Event(msgspec.Struct, gc=False, tag_field="ph", tag="X"):
    """A complete ("X") event: the only phase that becomes a record."""

    cat: str | None = None
    name: str | None = None
    ts: float | None = None  # an integer time reads as the same float as _num gives
    dur: float | None = None
    pid: int | str | None = None
    tid: int | str | None = None
    args: _Args = _NO_ARGS


# Every other phase of the trace event format decodes to an empty struct: msgspec skips its fields without building
# them (flows alone are a third of a Kineto trace's events). An unknown phase or an event without "ph" fails the
# schema, and its chunk is read as plain values.
_OTHER_PHASES = "B E i I C b n e S T p F s t f P N O D M V v R c ( ) =".split()
_Other = tuple(
    msgspec.defstruct(f"_Phase{i}", [], tag_field="ph", tag=ph, gc=False) for i, ph in enumerate(_OTHER_PHASES)
)
# A Union of a tuple built at runtime: no static spelling exists (mypy cannot check it, X | Y cannot write it).
_EVENT_TYPES = (_Event, *_Other)
_DECODE_EVENTS = msgspec.json.Decoder(list[Union[_EVENT_TYPES]])  # type: ignore[valid-type]  # noqa: UP007
_DECODE_VALUES = msgspec.json.Decoder()


class _NotUtf8(Exception):
    """The file holds bytes that are not UTF-8: it is read again with them replaced."""


class _OutOfRange(Exception):
    """A number beyond a float's range (msgspec refuses it; Python's json would read inf)."""


def _decode_value(raw: bytes) -> Any:
    """A nested value the records keep (Input Dims, Input type), decoded from its JSON text. (Its chunk decoded,
    so the text is well formed JSON: what can fail is a number, or the text's encoding.)"""
    try:
        return _DECODE_VALUES.decode(raw)
    except msgspec.ValidationError:  # (a subclass of DecodeError)
        raise _OutOfRange
    except msgspec.DecodeError:
        raise _NotUtf8


class _Replaced:
    """A binary file's bytes with every sequence that is not UTF-8 replaced by U+FFFD (what ``bytes.decode(
    errors="replace")`` gives)."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self._decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self._pending = b""

    def readinto(self, b: Any) -> int:
        while not self._pending:
            raw = self._f.read(_BLOCK)
            self._pending = self._decode(raw, final=not raw).encode()
            if not raw:
                break
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n


# Bytes read (after gunzip) and decoded at a time. Small enough that a chunk's structs are still in cache when the
# records are built from them (measured on 1M events: 256 KB ~20% faster than 8 MB); it also bounds the reader's
# own memory. An event longer than this grows the window.
_BLOCK = 256 << 10
_WS = b" \t\n\r"  # JSON's whitespace (re's \s also takes \f and \v, which JSON does not)
_NEXT_EVENT = re.compile(rb"\}[ \t\n\r]*,[ \t\n\r]*\{")  # between two events (or inside one: see _read_array)
_AFTER_KEY = re.compile(rb"[ \t\n\r]*:[ \t\n\r]*\[")
# A JSON string, a bracket, or a quote whose string goes on past the bytes read so far.
_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}\[\]"]', re.DOTALL)
_AT_BYTE = re.compile(r"\(byte (\d+)\)")
_MAX_MISCUTS = 8
_OPEN, _CLOSE = ord("["), ord("]")


class _Window:
    """A window over the (decompressed) file, refilled block by block; bytes before the cursor are dropped."""

    def __init__(self, f: Any) -> None:
        self._f = f
        self.data = bytearray()
        self.offset = 0  # where data[0] is in the file
        self.eof = False

    def refill(self, keep_from: int, grow: bool = False) -> int:
        """Drop data[:keep_from] and read one more block (``grow``: as many bytes as are kept, at least a block, so
        that a window grown again and again is read in O(n)); return how far offsets moved."""
        rest = memoryview(self.data)[keep_from:]
        size = max(_BLOCK, len(rest)) if grow else _BLOCK
        # A new bytearray each time: msgspec.Raw values may still view the old one until their chunk is done.
        new = bytearray(len(rest) + size)
        new[: len(rest)] = rest
        rest.release()
        n = len(new) - size
        with memoryview(new) as view:
            while n < len(new):
                got = self._f.readinto(view[n:])
                if not got:
                    self.eof = True
                    break
                n += got
        del new[n:]
        self.data = new
        self.offset += keep_from
        return keep_from


def _read_file(p: Path, replace_invalid_utf8: bool) -> Trace:
    path = str(p)
    try:
        with open(p, "rb") as f:
            gz = f.read(2) == b"\x1f\x8b"
            f.seek(0)
            src: Any = gzip.GzipFile(fileobj=f) if gz else f
            try:
                return _read(_Window(_Replaced(src) if replace_invalid_utf8 else src), path)
            except (OSError, EOFError, zlib.error) as exc:
                if not gz:
                    raise
                raise TraceError(f"trace file {path} is not a readable gzip file ({type(exc).__name__}: {exc})",
                                 "re-export the trace or pass the uncompressed .json")
    except FileNotFoundError:
        raise TraceError(f"trace file {path} does not exist",
                         "pass the path of a torch.profiler .json or .json.gz trace")
    except IsADirectoryError:
        raise TraceError(f"trace path {path} is a directory", "pass one .json or .json.gz trace file")
    except PermissionError:
        raise TraceError(f"trace file {path} cannot be read (permission denied)", "check the file's permissions")
    except OSError as exc:
        raise TraceError(f"trace file {path} cannot be read ({exc})", "check the file and pass it again")


def _read(win: _Window, path: str) -> Trace:
    """The whole document: where the events array opens, the events, and the keys around the array."""
    opening, bare = _find_events(win, path)
    head = bytes(win.data[:opening])
    builder = _Builder()
    closing = _read_array(win, opening, builder, path)  # (the file is read to its end)
    tail = bytes(win.data[closing + 1:])
    if bare:
        if tail.strip(_WS):
            raise _not_json(path, f"more follows the event list, at byte {win.offset + closing + 1}")
        return builder.finish({}, path)
    try:
        top = _DECODE_VALUES.decode(head + b"[]" + tail)
    except msgspec.ValidationError:  # (a DecodeError too)
        raise _not_json(path, "a number out of range, in the keys around the event list")
    except msgspec.DecodeError as exc:
        if "UTF-8" in str(exc):
            raise _NotUtf8
        raise _not_json(path, f"{_syntax_error(str(exc), None)}, in the keys around the event list")
    except RecursionError:
        raise _not_json(path, "nested too deeply, in the keys around the event list")
    if not isinstance(top, dict) or top.get("traceEvents") != []:  # another traceEvents key after this one
        raise TraceError(f"trace file {path} has more than one 'traceEvents' list",
                         "pass a trace written by torch.profiler's export_chrome_trace or tensorboard_trace_handler")
    return builder.finish(top, path)


def _find_events(win: _Window, path: str) -> tuple[int, bool]:
    """(index in win.data of the '[' that opens the events, whether the document is that bare array). The window
    keeps everything read until then (the keys before the array: small)."""
    scanned, depth = 0, 0  # how far the top-level object's tokens were read, and the nesting there
    win.refill(0)
    while True:
        data = win.data
        start = len(data) - len(data.lstrip(_WS))
        first = data[start] if start < len(data) else None
        if first == _OPEN:
            return start, True
        if first == ord("{"):
            for m in _TOKEN.finditer(data, max(scanned, start)):
                tok = m.group()
                if tok == b'"':  # a string that goes on past the bytes read: read more and scan from here
                    scanned = m.start()
                    break
                if tok in (b"{", b"["):
                    depth += 1
                elif tok in (b"}", b"]"):
                    depth -= 1
                elif depth == 1 and tok == b'"traceEvents"':
                    value = _AFTER_KEY.match(data, m.end())
                    if value:
                        return value.end() - 1, False
                    if not data[m.end():].strip(_WS + b":"):
                        scanned = m.start()  # what follows the key is not read yet
                        break
            else:
                scanned = len(data)
        if win.eof or (first is not None and first != ord("{")):  # no events array in this document
            _raise_unless_json(win, path)
            raise _not_a_trace(path)
        win.refill(0)


def _raise_unless_json(win: _Window, path: str) -> None:
    """Raise the TraceError of a document that is not JSON, reading on only while it still could be."""
    while True:
        try:
            _DECODE_VALUES.decode(win.data)
            return
        except (msgspec.ValidationError, RecursionError):
            return  # JSON all the same (a number out of range, deep nesting)
        except msgspec.DecodeError as exc:
            error = str(exc)
            if "truncated" not in error or win.eof:
                if not win.data.strip(_WS):
                    raise TraceError(f"trace file {path} is empty",
                                     "export the trace again with prof.export_chrome_trace(...)")
                if "UTF-8" in error:
                    raise _NotUtf8
                raise _not_json(path, _syntax_error(error, win.offset))
        win.refill(0)


def _decode_chunk(data: bytearray, start: int, end: int, into: _Builder) -> str | None:
    """Decode the entries in data[start:end] into ``into``: None when that worked, else what msgspec said.

    The byte before ``start`` and the one at ``end`` are separators (',', whitespace, the array's '[' or ']'), so
    they are overwritten with '[' and ']' for the decode and restored: no copy of the chunk is made.
    """
    before, after = data[start - 1], data[end]
    data[start - 1], data[end] = _OPEN, _CLOSE
    # Not released with `with`: the Input Dims/Input type Raw values of the events still view it.
    view = memoryview(data)[start - 1: end + 1]
    try:
        try:
            events = _DECODE_EVENTS.decode(view)
        except msgspec.ValidationError:  # a value of another JSON type than Kineto writes, or not an event
            into.add_values(_DECODE_VALUES.decode(view))
        else:
            into.add_structs(events)
        return None
    except (msgspec.ValidationError, _OutOfRange):  # (ValidationError first: it is a DecodeError too)
        return "a number out of range"
    except msgspec.DecodeError as exc:
        if "UTF-8" in str(exc):
            raise _NotUtf8
        return str(exc).removeprefix("JSON is malformed: ")
    except RecursionError:
        return "nested too deeply"
    finally:
        data[start - 1], data[end] = before, after


def _inside(error: str, start: int, end: int) -> bool:
    """Whether a chunk's decode error is in the chunk's own bytes; else it is at the cut (a cut inside an event)."""
    if "truncated" in error:
        return False
    at = _AT_BYTE.search(error)
    return at is None or start - 1 + int(at.group(1)) < end


def _read_array(win: _Window, opening: int, builder: _Builder, path: str) -> int:
    """Decode the entries of the array that opens at win.data[opening]; return the index of its ']'.

    Each window is decoded up to its last event boundary: a '}' followed by ',' and '{'. Strings must close and
    brackets must balance, so a cut anywhere else (inside a kernel name, in an args list of objects) fails to
    decode at the cut, and an earlier candidate is tried; when a few fail, the window grows. An error before the
    cut is the file's own. Once the file is read, the rest is decoded up to the last ']', and when what follows
    the array is not whitespace, msgspec says where the array ends ("trailing characters").
    """
    pos = opening + 1
    while not win.eof:
        data, before = win.data, len(win.data)
        for _ in range(_MAX_MISCUTS):
            cut = _last_cut(data, pos, before)
            if cut is None:
                break
            error = _decode_chunk(data, pos, cut.start() + 1, builder)
            if error is None:
                pos = cut.end() - 1
                pos -= win.refill(pos - 1)  # keep the separator before pos: _decode_chunk writes '[' there
                break
            if _inside(error, pos, cut.start() + 1):
                raise _not_json(path, _syntax_error(error, win.offset + pos - 1))
            before = cut.start()
        else:
            cut = None
        if cut is None:  # no boundary in the window, or only cuts inside one event: read on
            pos -= win.refill(pos - 1, grow=True)
    data = win.data
    end = data.rfind(b"]", pos)
    for _ in range(2):
        if end < 0:
            break
        error = _decode_chunk(data, pos, end, builder)
        if error is None:
            return end
        if "trailing characters" not in error or not (at := _AT_BYTE.search(error)):
            if "truncated" in error:
                break
            raise _not_json(path, _syntax_error(error, win.offset + pos - 1))
        end = data.rfind(b"]", pos, pos - 1 + int(at.group(1)))  # the ']' before what trails it
    raise _not_json(path, _TRUNCATED)


def _last_cut(data: bytearray, pos: int, before: int) -> re.Match[bytes] | None:
    """The last '}' ... ',' ... '{' in data[pos:before]: scanning backwards finds it within an event or two."""
    j = before
    while (j := data.rfind(b"}", pos, j)) >= 0:
        if m := _NEXT_EVENT.match(data, j):
            return m
    return None


class _Span(Protocol):
    @property
    def ts(self) -> float: ...

    @property
    def dur(self) -> float: ...


_E = TypeVar("_E", bound=_Span)


class StartIndex(Generic[_E]):
    """Records by start time: which start in [lo, hi), and whether one of them spans a given time.

    For the passes that ask once per iteration window or once per op: a scan of every record for each question
    made them quadratic (minutes on a 1M-event trace). Built once, O(n) when the records are already in
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


