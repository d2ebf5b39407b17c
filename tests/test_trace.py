"""The trace model on real H200 traces, and every way a trace file can be bad."""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope import trace as trace_mod
from kernelscope.errors import TraceError
from kernelscope.trace import Trace, load_trace, trace_from_dict

from .conftest import DATA, H200_211, H200_2141


def test_seed_default_trace_fields():
    t = load_trace(H200_211 / "seed-default.trace.json.gz")
    assert t.gpu_name == "NVIDIA H200"
    assert len([g for g in t.gpu if not g.is_memop]) == 15
    gelu = [c for c in t.cpu if c.name == "triton_poi_fused_gelu_0"]
    assert len(gelu) == 5 and gelu[0].kernel_backend == "triton"
    addmm = next(c for c in t.cpu if c.name == "aten::addmm")
    assert addmm.input_dims[:3] == ([4096], [16, 4096], [4096, 4096])
    # every GPU kernel has a launch on the CPU with the same correlation id
    corr = {r.correlation for r in t.runtime}
    assert all(g.correlation in corr for g in t.gpu)


def test_gzip_and_plain_json_load_identically(tmp_path: Path):
    plain = tmp_path / "t.json"
    plain.write_bytes(gzip.decompress((H200_2141 / "mmrelu-nvgemm.trace.json.gz").read_bytes()))
    a, b = load_trace(plain), load_trace(H200_2141 / "mmrelu-nvgemm.trace.json.gz")
    assert (a.gpu, a.runtime, a.cpu) == (b.gpu, b.runtime, b.cpu)


def _write(tmp_path: Path, data: bytes, name: str = "t.json") -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize(
    ("content", "name", "expect"),
    [
        (b"", "t.json", "is empty"),
        (b"   \n", "t.json", "is empty"),
        (b'{"traceEvents": [{"ph": "X", "cat": "kernel"', "t.json", "not valid JSON"),
        (b"hello", "t.json", "not valid JSON"),
        (b'{"foo": 1}', "t.json", "not a chrome trace"),
        (b"[1, 2", "t.json", "not valid JSON"),
        (b"\x1f\x8b\x08\x00garbage", "t.json.gz", "not a readable gzip file"),
        (b'"a string"', "t.json", "not a chrome trace"),
        (b"[1, 2, 3]", "t.json", "holds no trace events (3 entries, none of them a profiler event)"),
        (b'{"traceEvents": []}', "t.json", "holds no trace events (an empty event list)"),
        (b'{"traceEvents": [{"ph": "M", "name": "process_name"}]}', "t.json", "holds no trace events"),
    ],
)
def test_bad_trace_files_say_what_and_how_to_fix(tmp_path: Path, content: bytes, name: str, expect: str):
    with pytest.raises(TraceError) as ei:
        load_trace(_write(tmp_path, content, name))
    assert expect in ei.value.message and ";" in ei.value.message and "\n" not in ei.value.message
    assert ei.value.exit_code == 2


def test_missing_file_and_directory(tmp_path: Path):
    with pytest.raises(TraceError, match="does not exist"):
        load_trace(tmp_path / "nope.json")
    with pytest.raises(TraceError, match="is a directory"):
        load_trace(tmp_path)


def test_truncated_gzip(tmp_path: Path):
    raw = (H200_211 / "seed-eager.trace.json.gz").read_bytes()
    with pytest.raises(TraceError):
        load_trace(_write(tmp_path, raw[: len(raw) // 2], "t.json.gz"))


def test_events_with_missing_fields_are_skipped_and_counted():
    data = {"traceEvents": [
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 1.0, "dur": 2.0, "args": {"correlation": 5}},
        {"ph": "X", "cat": "kernel", "ts": 3.0},  # no name
        {"ph": "X", "cat": "kernel", "name": "k2"},  # no ts
        {"ph": "X", "cat": "kernel", "name": "k3", "ts": "garbage"},
        "not an event",
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0.5, "dur": 1, "args": "not a dict"},
    ]}
    t = trace_from_dict(data)
    assert [g.name for g in t.gpu] == ["k"]
    assert t.skipped_events == 4
    assert [c.name for c in t.cpu] == ["aten::mm"]


def test_non_utf8_bytes_in_names_are_replaced(tmp_path: Path):
    raw = b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm_\xff\xfe_kernel", "ts": 1, "dur": 1}]}'
    t = load_trace(_write(tmp_path, raw))
    assert t.gpu[0].name == "gemm_\ufffd\ufffd_kernel"


def test_bare_array_form_is_accepted():
    t = trace_from_dict([{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}])
    assert len(t.gpu) == 1


def test_analysis_layer_never_imports_torch():
    code = ("import sys, kernelscope.trace, kernelscope.analysis.kernels, kernelscope.analysis.mode, "
            "kernelscope.report, kernelscope.cli; print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def _kineto_traces() -> list[Path]:
    return [p for p in sorted(DATA.rglob("*.trace.json*")) if p.name.endswith((".json", ".json.gz"))]


def _reference(path: Path) -> Trace:
    """The file parsed whole by the standard library (bytes that are not UTF-8 replaced), made into records."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return trace_from_dict(json.loads(raw.decode("utf-8", errors="replace")), str(path))


def test_recorded_traces_read_as_torch_profiler_wrote_them(monkeypatch: pytest.MonkeyPatch):
    # GIVEN every trace torch.profiler recorded for the tests, WHEN each is read with the per-value path (the one
    # for values of unexpected types) forbidden THEN each reads through the typed schema alone, and gives what the
    # standard library's parse gives
    def per_value(self: object, events: list) -> None:
        raise AssertionError("a recorded trace holds a value of a type the typed schema does not expect")

    traces = _kineto_traces()
    assert len(traces) >= 20
    monkeypatch.setattr(trace_mod, "_BLOCK", 16 << 10)  # (several chunks per trace)
    for path in traces:
        with monkeypatch.context() as m:
            m.setattr(trace_mod._Builder, "add_values", per_value)
            got = load_trace(path)
        assert got == _reference(path) and got.total_events > 0, path


def test_records_are_sorted_by_start_across_chunks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # GIVEN kernels, launches and CPU ops in time order but for one pair of each out of order (in another chunk than
    # the start), and two CPU ops that start together, the shorter first
    events = []
    for i in range(3000):
        ts = 10.0 * i
        events += [{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 2, "ts": ts,
                    "dur": 3.0, "args": {"correlation": i, "External id": i}},
                   {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": ts + 1, "dur": 2.0,
                    "args": {"External id": i}},
                   {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": ts + 5, "dur": 1.0,
                    "args": {"correlation": i, "External id": i, "stream": 7, "device": 0}}]
    for k in (6000, 6004, 6002):  # a launch, a CPU op, a kernel, each swapped with its next of the same kind
        events[k]["ts"], events[k + 3]["ts"] = events[k + 3]["ts"], events[k]["ts"]
    events[7003]["ts"], events[7003]["dur"] = events[7000]["ts"], 9.0  # two CPU ops at one start, the longer second
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}, indent=1))
    monkeypatch.setattr(trace_mod, "_BLOCK", 64 << 10)
    assert path.stat().st_size > 8 * trace_mod._BLOCK

    # WHEN it is read THEN each kind is in time order (CPU ops at one start: the longer first), as a stable sort
    # of the file's order puts them
    t = load_trace(path)
    for kind in (t.gpu, t.runtime):
        assert [e.ts for e in kind] == sorted(e.ts for e in kind)
    assert list(t.cpu) == sorted(t.cpu, key=lambda e: (e.ts, -e.dur))
    same = next(i for i in range(len(t.cpu) - 1) if t.cpu[i].ts == t.cpu[i + 1].ts)
    assert (t.cpu[same].dur, t.cpu[same + 1].dur) == (9.0, 2.0)
    assert t == _reference(path)


# ---- files that are not quite what Kineto writes: read as the standard library reads them, or refused --------

def _sample_events() -> bytes:
    """Whole events of a real trace: X events of every kept category, flows, instant and metadata events."""
    raw = gzip.decompress((H200_2141 / "mmrelu-nvgemm.trace.json.gz").read_bytes())
    start = raw.index(b"[", raw.index(b'"traceEvents"')) + 1
    events = re.split(rb"\}\s*,\s*\{", raw[start:raw.rindex(b"]")].strip()[1:-1])
    by_cat: dict[bytes, list[bytes]] = {}
    for e in events:
        m = re.search(rb'"(?:cat|ph)"\s*:\s*"([^"]*)"', e)
        by_cat.setdefault(m.group(1) if m else b"", []).append(e)
    return b",\n".join(b"{" + e + b"}" for evs in by_cat.values() for e in evs[:4])


_VALUES = [b"null", b"true", b"false", b'"s"', b'"\\u0041"', b'"a\\"b"', b"1.5", b"-0", b"-0.0", b"0", b"-1",
           b"99999999999999999999", b"9223372036854775807", b"-9223372036854775808", b"123456789012345678",
           b"1234567890123456", b"1e400", b"1e-400", b"4.9e-324", b"0.1e-5", b"1E5", b"[1,[2]]", b'{"a":1}',
           b"[]", b"{}", b"[" * 200 + b"]" * 200, b'"\xc3\xa9"', b'"\xff"', b'"\xed\xa0\x80"', b'"\x01"', b"01",
           b"1.", b".5", b"+1", b"nul", b'"kernel"', b'"cpu_op"', b'"cuda_runtime"', b'"gpu_user_annotation"',
           b'"X"', b'"B"', b'"f"', b'"Q"', b'""', b"[[99999999999999999999]]", b'["a", 1, null]', b"1.0",
           b"5361583909846.051", b"0.30000000000000004", b"2.2250738585072014e-308", b"123456789.123456789e-3"]
_KEYS = [b"ph", b"cat", b"name", b"ts", b"dur", b"pid", b"tid", b"args", b"correlation", b"External id", b"stream",
         b"device", b"kernel_backend", b"kernel_name", b"Input Dims", b"Input type", b"Concrete Inputs", b"other"]
_BYTES = [b'"', b"\\", b"{", b"}", b"[", b"]", b",", b":", b" ", b"1", b"-", b"e", b".", b"\x00", b"\xff", b"\xc3"]


def _mutate(events: bytes, rng: random.Random) -> bytes:
    op = rng.randrange(7)
    if op == 0:  # truncate (keeping a closing brace sometimes)
        k = rng.randrange(1, len(events))
        return events[:k] + (b"}" if rng.random() < 0.5 else b"")
    if op == 1:  # drop a byte
        k = rng.randrange(len(events))
        return events[:k] + events[k + 1:]
    if op == 2:  # insert a byte
        k = rng.randrange(len(events))
        return events[:k] + rng.choice(_BYTES) + events[k:]
    if op == 3:  # replace a value
        spans = list(re.finditer(rb'"([^"]+)":\s*("[^"]*"|-?[0-9.eE+-]+|null|true|false|\[[^\[\]]*\])', events))
        if not spans:
            return events
        m = rng.choice(spans)
        return events[:m.start(2)] + rng.choice(_VALUES) + events[m.end(2):]
    if op == 4:  # a duplicate (or new) key in an event or its args
        opens = [m.end() for m in re.finditer(rb'\{"', events)]
        if not opens:
            return events
        k = rng.choice(opens) - 1
        return events[:k] + b'"' + rng.choice(_KEYS) + b'":' + rng.choice(_VALUES) + b',"' + events[k + 1:]
    if op == 5:  # swap two values
        spans = list(re.finditer(rb'"[^"]+":\s*(-?[0-9.eE+-]+|"[^"]*")', events))
        if len(spans) < 2:
            return events
        a, b = sorted(rng.sample(spans, 2), key=lambda m: m.start())
        if a.end() > b.start():
            return events
        return events[:a.start(1)] + b.group(1) + events[a.end(1):b.start(1)] + a.group(1) + events[b.end(1):]
    for _ in range(rng.randrange(2, 5)):  # several at once
        events = _mutate(events, rng) if len(events) > 2 else events
    return events


def _outcome(path: Path) -> str:
    """'same' (the standard library's records), 'both refuse', or what differs."""
    try:
        expected: Trace | None = _reference(path)
    except (ValueError, TraceError):  # not JSON, or not a chrome trace
        expected = None
    try:
        got = load_trace(path)
    except TraceError as exc:
        assert str(path) in exc.message and "\n" not in exc.message
        if expected is None:
            return "both refuse"
        # msgspec refuses numbers beyond a float's range, which the standard library reads as inf
        return "refused: out of range" if "a number out of range" in exc.message else f"refused: {exc.message}"
    return "same" if got == expected else "DIFFERENT" if expected is not None else "read, the reference refuses"


def test_mutated_events_read_as_the_standard_library_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    # GIVEN real events mutated at random (bytes dropped or added, values and keys replaced), in a file read in
    # small blocks (so cuts fall inside strings and values too)
    monkeypatch.setattr(trace_mod, "_BLOCK", 512)
    rng = random.Random(20261204)
    base = _sample_events()
    path = tmp_path / "t.json"
    seen: dict[str, int] = {}
    for _ in range(400):
        path.write_bytes(b'{"schemaVersion": 1, "traceEvents": [\n' + _mutate(base, rng) + b'\n], "traceName": "x"}')
        # WHEN it is read THEN it gives the standard library's records, or both refuse it
        outcome = _outcome(path)
        assert outcome in ("same", "both refuse", "refused: out of range"), (outcome, path.read_bytes())
        seen[outcome] = seen.get(outcome, 0) + 1
    assert seen.get("same", 0) > 100 and seen.get("both refuse", 0) > 100, seen


def test_each_value_in_each_field(tmp_path: Path):
    path = tmp_path / "t.json"
    for key in (b"cat", b"name", b"ts", b"dur", b"pid", b"tid", b"args", b"correlation", b"kernel_backend",
                b"Input Dims", b"Concrete Inputs", b"ph"):
        for value in _VALUES:
            ev = {b"ph": b'"X"', b"cat": b'"cpu_op"', b"name": b'"aten::mm"', b"pid": b"1", b"tid": b"2",
                  b"ts": b"10.5", b"dur": b"1"}
            args = {b"External id": b"5"}
            (args if key in (b"correlation", b"kernel_backend", b"Input Dims", b"Concrete Inputs") else ev)[key] = value
            if key != b"args":
                ev[b"args"] = b"{" + b",".join(b'"%s":%s' % kv for kv in args.items()) + b"}"
            event = b"{" + b",".join(b'"%s":%s' % kv for kv in ev.items()) + b"}"
            flow = b'{"ph":"f","id":1,"args":' + value + b"}"
            path.write_bytes(b'{"traceEvents": [' + event + b"," + flow + b',{"ph":"X","cat":"kernel","name":"k",'
                             b'"ts":1,"dur":1}]}')
            assert _outcome(path) in ("same", "both refuse", "refused: out of range"), (key, value)
