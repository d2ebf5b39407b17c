"""The C chunk reader (kernelscope/_fastread.c) gives exactly the records of the msgspec path, or declines.

Identical means ==, the same type in every field, the same interning (one object per distinct name, duration,
pid/tid and Input Dims/Input type value) and the same counts; declining (None) leaves the builder untouched, and
the chunk then takes the msgspec path as before.
"""

from __future__ import annotations

import gzip
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from kernelscope import trace as T

_fastread = pytest.importorskip("kernelscope._fastread", reason="the C reader is not built (no compiler)")

DATA = Path(__file__).parent / "data"
FIELDS = ("gpu", "runtime", "cpu", "gpu_annotations")
INTERNED = ("name", "cat", "dur", "pid", "tid", "input_dims", "input_types", "concrete_inputs")


def _kineto_traces() -> list[Path]:
    out = []
    for p in sorted(DATA.rglob("*.trace.json*")):
        if p.name.endswith((".json", ".json.gz")):
            out.append(p)
    return out


def _same_records(xs: list[Any] | tuple[Any, ...], ys: list[Any] | tuple[Any, ...]) -> None:
    assert len(xs) == len(ys)
    for x, y in zip(xs, ys):
        assert type(x) is type(y)
        assert x == y
        for f in x.__struct_fields__:
            u, v = getattr(x, f), getattr(y, f)
            assert type(u) is type(v), (f, u, v)
            if type(u) is float:
                assert u.hex() == v.hex(), (f, u, v)


def _same_interning(xs: list[Any] | tuple[Any, ...], ys: list[Any] | tuple[Any, ...]) -> None:
    """Records that share an object (an interned name, duration, id, Input Dims...) on one path share it on the
    other: the same pattern of identities, field by field."""
    for f in INTERNED:
        if not xs or not hasattr(xs[0], f):
            continue
        ids_x = [id(getattr(r, f)) for r in xs]
        ids_y = [id(getattr(r, f)) for r in ys]
        first_x: dict[int, int] = {}
        first_y: dict[int, int] = {}
        assert [first_x.setdefault(i, k) for k, i in enumerate(ids_x)] == \
            [first_y.setdefault(i, k) for k, i in enumerate(ids_y)], f


def _load(path: Path, pure: bool, monkeypatch: pytest.MonkeyPatch) -> T.Trace:
    if pure:
        monkeypatch.setenv("KERNELSCOPE_PURE_READER", "1")
    else:
        monkeypatch.delenv("KERNELSCOPE_PURE_READER", raising=False)
    return T.load_trace(path)


def test_there_are_traces_to_compare() -> None:
    assert len(_kineto_traces()) >= 20


def test_native_records_equal_the_msgspec_path_on_the_test_traces(monkeypatch: pytest.MonkeyPatch) -> None:
    before = dict(T.READER_CHUNKS)
    for path in _kineto_traces():
        native = _load(path, False, monkeypatch)
        pure = _load(path, True, monkeypatch)
        assert (native.skipped_events, native.total_events) == (pure.skipped_events, pure.total_events), path
        assert native.meta == pure.meta and native.device_properties == pure.device_properties
        for f in FIELDS:
            _same_records(getattr(native, f), getattr(pure, f))
            _same_interning(getattr(native, f), getattr(pure, f))
    # the C path really read them: these traces hold no escapes and no odd types
    assert T.READER_CHUNKS["native"] - before["native"] >= len(_kineto_traces())
    assert T.READER_CHUNKS["declined"] == before["declined"]


def test_pure_reader_switch(monkeypatch: pytest.MonkeyPatch) -> None:
    path = _kineto_traces()[-1]
    before = dict(T.READER_CHUNKS)
    _load(path, True, monkeypatch)
    assert T.READER_CHUNKS["native"] == before["native"]
    assert T.READER_CHUNKS["msgspec"] > before["msgspec"]


# ---- the fuzz test: mutations of a real chunk ----------------------------------------------------------------

def _sample_chunk() -> bytes:
    """Whole events from a real trace: X events of every kept category, flows, instant and metadata events."""
    raw = gzip.decompress(_kineto_traces()[-1].read_bytes())
    start = raw.index(b"[", raw.index(b'"traceEvents"')) + 1
    events = re.split(rb"\}\s*,\s*\{", raw[start:raw.rindex(b"]")].strip()[1:-1])
    by_cat: dict[bytes, list[bytes]] = {}
    for e in events:
        m = re.search(rb'"(?:cat|ph)"\s*:\s*"([^"]*)"', e)
        by_cat.setdefault(m.group(1) if m else b"", []).append(e)
    picked = [e for evs in by_cat.values() for e in evs[:4]]
    return b",\n".join(b"{" + e + b"}" for e in picked)


_VALUES = [b"null", b"true", b"false", b'"s"', b'"\\u0041"', b'"a\\"b"', b"1.5", b"-0", b"-0.0", b"0", b"-1",
           b"99999999999999999999", b"9223372036854775807", b"-9223372036854775808", b"123456789012345678",
           b"1234567890123456", b"1e400", b"1e-400", b"4.9e-324", b"0.1e-5", b"1E5", b"[1,[2]]", b'{"a":1}',
           b"[]", b"{}", b"[" * 200 + b"]" * 200, b'"\xc3\xa9"', b'"\xff"', b'"\xed\xa0\x80"', b'"\x01"', b"01",
           b"1.", b".5", b"+1", b"nul", b'"kernel"', b'"cpu_op"', b'"cuda_runtime"', b'"gpu_user_annotation"',
           b'"X"', b'"B"', b'"f"', b'"Q"', b'""', b'[[99999999999999999999]]', b'["a", 1, null]', b"1.0",
           b"5361583909846.051", b"0.30000000000000004", b"2.2250738585072014e-308", b"123456789.123456789e-3"]
_KEYS = [b"ph", b"cat", b"name", b"ts", b"dur", b"pid", b"tid", b"args", b"correlation", b"External id", b"stream",
         b"device", b"kernel_backend", b"kernel_name", b"Input Dims", b"Input type", b"Concrete Inputs", b"other"]
_BYTES = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"1", b"-", b"e", b".", b"\x00", b"\xff", b"\xc3"]


def _mutate(chunk: bytes, rng: random.Random) -> bytes:
    op = rng.randrange(7)
    if op == 0:  # truncate (keeping a closing brace sometimes)
        k = rng.randrange(1, len(chunk))
        return chunk[:k] + (b"}" if rng.random() < 0.5 else b"")
    if op == 1:  # drop a byte
        k = rng.randrange(len(chunk))
        return chunk[:k] + chunk[k + 1:]
    if op == 2:  # insert a byte
        k = rng.randrange(len(chunk))
        return chunk[:k] + rng.choice(_BYTES) + chunk[k:]
    if op == 3:  # replace a known key's value
        spans = [m for m in re.finditer(rb'"([^"]+)":\s*("[^"]*"|-?[0-9.eE+-]+|null|true|false|\[[^\[\]]*\])', chunk)]
        if not spans:
            return chunk
        m = rng.choice(spans)
        return chunk[:m.start(2)] + rng.choice(_VALUES) + chunk[m.end(2):]
    if op == 4:  # a duplicate (or new) key in an event or its args
        opens = [m.end() for m in re.finditer(rb'\{"', chunk)]
        if not opens:
            return chunk
        k = rng.choice(opens) - 1
        return chunk[:k] + b'"' + rng.choice(_KEYS) + b'":' + rng.choice(_VALUES) + b',"' + chunk[k + 1:]
    if op == 5:  # swap two keys' values of the same event's region
        spans = [m for m in re.finditer(rb'"[^"]+":\s*(-?[0-9.eE+-]+|"[^"]*")', chunk)]
        if len(spans) < 2:
            return chunk
        a, b = rng.sample(spans, 2)
        if a.start() > b.start():
            a, b = b, a
        if a.end() > b.start():
            return chunk
        return chunk[:a.start(1)] + b.group(1) + chunk[a.end(1):b.start(1)] + a.group(1) + chunk[b.end(1):]
    # several mutations at once
    for _ in range(rng.randrange(2, 5)):
        chunk = _mutate(chunk, rng) if len(chunk) > 2 else chunk
    return chunk


def _python_path(data: bytearray, start: int, end: int) -> tuple[str, T._Builder | None]:
    b = T._Builder()
    try:
        events = T._decode_events(data, start, end)
        if events is None:
            return "miscut", None
        b.add_structs(events)
    except Exception as exc:  # noqa: BLE001  # _Handover, msgspec errors: the reader gives the file up
        return type(exc).__name__, None
    return "ok", b


def _same_builders(x: T._Builder, y: T._Builder) -> None:
    assert (x.total, x.skipped) == (y.total, y.skipped)
    for f in ("gpu", "runtime", "cpu", "gpu_ann"):
        _same_records(getattr(x, f), getattr(y, f))
        _same_interning(getattr(x, f), getattr(y, f))
    assert x._dims == y._dims and x._types == y._types and x._strs == y._strs and x._ids == y._ids


def _check(chunk: bytes) -> str:
    data = bytearray(b"[" + chunk + b"]")
    start, end = 1, len(data) - 1
    saved = bytes(data)
    nb = T._Builder()
    try:
        counts = _fastread.add_chunk(nb, data, start, end)
    except Exception as exc:  # noqa: BLE001
        outcome, _ = _python_path(data, start, end)
        assert outcome == type(exc).__name__, (outcome, exc)  # the same error the msgspec path raises
        return "raised"
    assert bytes(data) == saved  # the chunk is read, never written
    if counts is None:  # declined: nothing added
        assert not (nb.gpu or nb.runtime or nb.cpu or nb.gpu_ann or nb._strs or nb._dims or nb._types)
        return "declined"
    nb.total += counts[0]
    nb.skipped += counts[1]
    outcome, pb = _python_path(data, start, end)
    assert outcome == "ok" and pb is not None, outcome
    _same_builders(nb, pb)
    return "native"


def test_the_sample_chunk_is_read_natively() -> None:
    chunk = _sample_chunk()
    assert _check(chunk) == "native"
    # and across chunks, the builder's interning continues where the last chunk left it
    nb, pb = T._Builder(), T._Builder()
    for b in (nb, pb):
        for _ in range(2):
            data = bytearray(b"[" + chunk + b"]")
            if b is nb:
                counts = _fastread.add_chunk(nb, data, 1, len(data) - 1)
                nb.total += counts[0]
                nb.skipped += counts[1]
            else:
                pb.add_structs(T._decode_events(data, 1, len(data) - 1))
    _same_builders(nb, pb)


def test_fuzzed_chunks_are_read_identically_or_declined() -> None:
    rng = random.Random(20261204)
    base = _sample_chunk()
    seen: dict[str, int] = {}
    for _ in range(600):
        outcome = _check(_mutate(base, rng))
        seen[outcome] = seen.get(outcome, 0) + 1
    # the mutations reach both outcomes
    assert seen.get("native", 0) > 50 and seen.get("declined", 0) > 50, seen


@pytest.mark.parametrize("value", _VALUES)
@pytest.mark.parametrize("key", [b"cat", b"name", b"ts", b"dur", b"pid", b"tid", b"args", b"correlation",
                                 b"kernel_backend", b"Input Dims", b"Concrete Inputs", b"ph"])
def test_each_value_in_each_field(key: bytes, value: bytes) -> None:
    ev = {b"ph": b'"X"', b"cat": b'"cpu_op"', b"name": b'"aten::mm"', b"pid": b"1", b"tid": b"2", b"ts": b"10.5",
          b"dur": b"1"}
    args = {b"External id": b"5"}
    (args if key in (b"correlation", b"kernel_backend", b"Input Dims", b"Concrete Inputs") else ev)[key] = value
    if key != b"args":
        ev[b"args"] = b"{" + b",".join(b'"%s":%s' % kv for kv in args.items()) + b"}"
    event = b"{" + b",".join(b'"%s":%s' % kv for kv in ev.items()) + b"}"
    _check(event + b',{"ph":"f","id":1,"args":' + value + b"}")
    _check(event)


def test_bounds_and_arguments() -> None:
    b = T._Builder()
    data = bytearray(b'[{"ph":"X"}]')
    with pytest.raises(ValueError):
        _fastread.add_chunk(b, data, 1, 100)
    with pytest.raises(ValueError):
        _fastread.add_chunk(b, data, 5, 2)
    assert _fastread.add_chunk(b, data, 1, 1) is None  # empty: not a run of events
    assert _fastread.add_chunk(b, data, 1, len(data) - 1) == (1, 0)


def test_setup_again_replaces_the_tables() -> None:
    """(What a reload of kernelscope.trace does.)"""
    _fastread.setup(T.GpuEvent, T.RuntimeEvent, T.CpuEvent, T._KIND_OF_CAT, T._CAT_CONST, T._OTHER_PHASES,
                    (T._GPU, T._RUNTIME, T._CPU, T._GPU_ANNOTATION))
    assert _check(_sample_chunk()) == "native"


def test_whitespace_and_long_names_sharing_their_ends() -> None:
    """Raw values are keyed without the whitespace around them (as msgspec.Raw holds them); long names that differ
    only in the middle (the C cache hashes a long name by its ends) stay distinct."""
    events = []
    for i in range(300):
        name = b"k" * 20 + b"%04d" % (i % 150) + b"z" * 20
        events.append(b'{ "ph" : "X" ,\n "cat": "kernel", "name": "' + name + b'", "pid": 1, "tid": 2, "ts": '
                      + b"%d.25" % i + b', "dur": 1.5, "args": { "Input Dims" :  [[1, 2], []] , "stream": 7 } }')
        events.append(b'{"ph":"X","cat":"cpu_op","name":"' + name + b'","pid":1,"tid":"t","ts":1,"args":'
                      b'{"Input Dims": [[1, 2], []], "Input type":["float", ""],"Concrete Inputs":["", "1"]}}')
    assert _check(b" ,\n ".join(events)) == "native"


def _ordering_trace(path: Path, swap: str | None) -> None:
    """~2 MB of events (several 256 KiB chunks): kernels, launches and CPU ops in time order, except ``swap``:
    two neighbours of that kind out of order near the middle (so across chunks' edges somewhere), or two CPU ops
    with equal starts (a strict order fails, and the sort puts the longer first)."""
    events = []
    n = 6000
    for i in range(n):
        ts = 10.0 * i
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
                       "ts": ts, "dur": 3.0, "args": {"correlation": i, "External id": i}})
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": ts + 1,
                       "dur": 2.0, "args": {"External id": i}})
        events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts + 5, "dur": 1.0,
                       "args": {"correlation": i, "External id": i, "stream": 7, "device": 0}})
    mid = len(events) // 2
    cat = {"gpu": "kernel", "runtime": "cuda_runtime", "cpu": "cpu_op"}.get(swap or "")
    if cat is not None:
        idx = [k for k in range(mid, len(events)) if events[k]["cat"] == cat][:2]
        a, b = events[idx[0]], events[idx[1]]
        a["ts"], b["ts"] = b["ts"], a["ts"]
    if swap == "cpu-equal":
        idx = [k for k in range(mid, len(events)) if events[k]["cat"] == "cpu_op"][:2]
        events[idx[1]]["ts"] = events[idx[0]]["ts"]
        events[idx[1]]["dur"] = 9.0  # longer: the sort puts it first
    import json

    path.write_text(json.dumps({"traceEvents": events}, indent=1))


@pytest.mark.parametrize("swap", [None, "gpu", "runtime", "cpu", "cpu-equal"])
def test_the_order_the_c_reader_tracks_sorts_as_the_python_check_does(
        swap: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a trace read in several chunks, in order or with one pair of one kind out of order
    path = tmp_path / "t.json"
    _ordering_trace(path, swap)
    assert path.stat().st_size > 4 * T._BLOCK
    before = T.READER_CHUNKS["native"]
    native = _load(path, False, monkeypatch)
    assert T.READER_CHUNKS["native"] - before >= 4  # every chunk natively: finish trusted the C reader's order
    pure = _load(path, True, monkeypatch)
    # THEN the same lists in the same order: sorted exactly where the Python check sorts
    for f in FIELDS:
        _same_records(getattr(native, f), getattr(pure, f))
    if swap in ("gpu", "runtime", "cpu"):
        ts = [e.ts for e in getattr(native, swap)]
        assert ts == sorted(ts)
    if swap == "cpu-equal":
        cpu = native.cpu
        k = next(i for i in range(len(cpu) - 1) if cpu[i].ts == cpu[i + 1].ts)
        assert cpu[k].dur == 9.0  # the longer op first: the sort ran


def test_the_pipelined_reader_goes_serial_for_a_declined_chunk_and_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a trace of many chunks where one event in the middle has an escape in its name (the C reader declines
    # that chunk: msgspec reads it) WHEN it is read with the parse/build pipeline THEN the records are the pure
    # path's, in the same order, and the chunks after it are read natively again
    import json

    path = tmp_path / "t.json"
    _ordering_trace(path, "gpu")
    doc = json.loads(path.read_text())
    doc["traceEvents"][len(doc["traceEvents"]) // 2]["name"] = 'aten::mm "quoted"'
    path.write_text(json.dumps(doc, indent=1))
    assert T._PIPELINE
    before = dict(T.READER_CHUNKS)
    native = _load(path, False, monkeypatch)
    after = dict(T.READER_CHUNKS)
    pure = _load(path, True, monkeypatch)
    for f in FIELDS:
        _same_records(getattr(native, f), getattr(pure, f))
        _same_interning(getattr(native, f), getattr(pure, f))
    assert (native.total_events, native.skipped_events) == (pure.total_events, pure.skipped_events)
    assert after["msgspec"] - before["msgspec"] == 1 and after["native"] - before["native"] >= 6
    assert any('"quoted"' in e.name for e in native.cpu + native.runtime + native.gpu)


def test_the_pipelined_reader_parses_each_chunk_while_the_one_before_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a trace of many chunks (kernels and their launches, as Kineto writes them), on a slow disk: each refill
    # of the window lets go of the GIL for a while after its read (time enough for a build that is waiting to run)
    import json

    events = []
    for i in range(30000):
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2,
                       "ts": 10 * i + 0.5, "dur": 3.25, "args": {"External id": i, "cbid": 211, "correlation": i}})
        events.append({"ph": "X", "cat": "kernel", "name": f"k{i % 50}", "pid": 0, "tid": 7, "ts": 10 * i + 5.5,
                       "dur": 1.5, "args": {"External id": i, "queued": 0, "device": 0, "stream": 7,
                                            "correlation": i, "grid": [1, 1, 1]}})
    path = tmp_path / "t.json"
    path.write_text('{"traceEvents":[\n' + ",\n".join(json.dumps(e, separators=(",", ":")) for e in events) + "\n]}")
    refill = T._Window.refill

    def slow_refill(win: T._Window, keep_from: int) -> int:
        moved = refill(win, keep_from)
        time.sleep(0.003)
        return moved

    monkeypatch.setattr(T._Window, "refill", slow_refill)
    assert T._PIPELINE
    before = dict(T.READER_CHUNKS)
    # WHEN it is read with the parse/build pipeline
    trace = _load(path, False, monkeypatch)
    native = T.READER_CHUNKS["native"] - before["native"]
    overlapped = T.READER_CHUNKS["overlapped"] - before["overlapped"]
    # THEN every chunk is read natively, and each chunk's parse begins while the build of the one before is still to
    # finish (all but the first, which has none before it, and the last few, read the serial way at the array's
    # end): a build started earlier than right before the parse (before the refill) would be done by then
    assert len(trace.gpu) == len(trace.runtime) == 30000
    assert native >= 20 and T.READER_CHUNKS["msgspec"] == before["msgspec"]
    assert overlapped >= native - 3, (overlapped, native)
