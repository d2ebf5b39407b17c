"""Large traces: a real H200 trace replicated many times analyses like the original, in .json and .json.gz, and
the streaming reader gives exactly what the standard library's json gives (read into Python values, then made into
records by trace_from_dict), on Kineto's traces and on files with every oddity it reads differently."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope import trace as trace_mod
from kernelscope.analysis.kernels import KernelAnalysis, analyze_kernels
from kernelscope.errors import TraceError
from kernelscope.trace import Trace, load_trace, trace_from_dict

from .conftest import H200_211, H200_2141, benchmark_module

gen = benchmark_module("gen_large_trace")

EVENTS = 20_000
# No step markers (iterations inferred from repeating ops), step markers, and memsets.
FIXTURES = [H200_211 / "seed-default.trace.json.gz", H200_2141 / "mmrelu-nvgemm.trace.json.gz",
            H200_211 / "big-eager.trace.json.gz"]


@pytest.fixture(autouse=True)
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    # 64 KB blocks instead of 256 KB: a 20k-event trace (5 MB) then crosses ~80 block boundaries.
    monkeypatch.setattr(trace_mod, "_BLOCK", 64 << 10)


def _reference(path: Path) -> Trace:
    """The whole file parsed by the standard library (bytes that are not UTF-8 replaced), into records."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return trace_from_dict(json.loads(raw.decode("utf-8", errors="replace")), str(path))


def _per_iteration(ka: KernelAnalysis) -> dict:
    return {
        "method": ka.iterations.method,
        "consistent": ka.iterations.consistent,
        "kernels_per_iter": ka.kernels_per_iter,
        "memops_per_iter": ka.memops_per_iter,
        "by_category": ka.by_category,
        "by_backend": ka.by_backend,
        "stats": [(s.name, s.category, s.backend, s.calls_per_iter, s.is_memop) for s in ka.stats],
    }


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name.split(".")[0] for f in FIXTURES])
def test_replicated_trace_has_the_small_traces_per_iteration_numbers(tmp_path: Path, fixture: Path):
    # GIVEN a real trace and the same trace replicated to 20k events (shifted in time, fresh ids)
    small = analyze_kernels(load_trace(fixture))
    written = gen.write_large_trace(fixture, EVENTS, tmp_path / "big.trace.json")
    assert written.copies >= 100

    # WHEN both are analysed
    big_trace = load_trace(written.path)
    big = analyze_kernels(big_trace)

    # THEN every copy's iterations are the original's: same kernels, categories and backends per iteration
    assert big_trace.total_events == written.events
    assert big.iterations.count == small.iterations.count * written.copies
    assert big.iterations.kernels_per_step == small.iterations.kernels_per_step * written.copies
    assert _per_iteration(big) == _per_iteration(small)
    assert big.time_us_per_iter == pytest.approx(small.time_us_per_iter)
    assert len(big.instances) == len(small.instances) * written.copies


def test_gzip_and_plain_large_traces_give_identical_results(tmp_path: Path):
    fixture = FIXTURES[0]
    plain = gen.write_large_trace(fixture, EVENTS, tmp_path / "t.trace.json")
    gz = gen.write_large_trace(fixture, EVENTS, tmp_path / "t.trace.json.gz")
    assert gz.path.read_bytes()[:2] == b"\x1f\x8b"
    a, b = load_trace(plain.path), load_trace(gz.path)
    assert (a.gpu, a.runtime, a.cpu, a.gpu_annotations, a.meta, a.total_events) == (
        b.gpu, b.runtime, b.cpu, b.gpu_annotations, b.meta, b.total_events)
    assert analyze_kernels(a) == analyze_kernels(b)


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f.name.split(".")[0] for f in FIXTURES])
def test_streaming_reader_matches_the_standard_library_on_large_traces(tmp_path: Path, fixture: Path,
                                                                       monkeypatch: pytest.MonkeyPatch):
    path = gen.write_large_trace(fixture, EVENTS, tmp_path / "t.trace.json").path

    def slow_path(self: object, events: list) -> None:
        raise AssertionError("a Kineto trace took the per-value path: its schema no longer fits what Kineto writes")

    with monkeypatch.context() as m:
        m.setattr(trace_mod._Builder, "add_values", slow_path)
        streamed = load_trace(path)
    assert streamed == _reference(path)


def _events() -> list:
    return json.loads(gzip.decompress((H200_2141 / "mmrelu-nvgemm.trace.json.gz").read_bytes()))["traceEvents"]


def _doc(events: list, **top) -> dict:
    return {"schemaVersion": 1, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}], **top, "traceEvents": events}


def _with_args(**args) -> list:
    evs = _events()
    kernel = next(e for e in evs if e.get("cat") == "kernel")
    return evs + [{**kernel, "args": {**kernel["args"], **args}}]


# Files the streaming reader must read exactly as the standard library does, or refuse with a TraceError where that
# refuses too. Most repeat the trace 30 times, to span several 64 KB blocks.
ODD = {
    "pretty-printed like Kineto": (lambda: json.dumps(_doc(_events() * 30), indent=2).encode()),
    "CRLF and tabs": (lambda: json.dumps(_doc(_events() * 30), indent="\t").replace("\n", "\r\n").encode()),
    "bare array": (lambda: json.dumps(_events() * 30).encode()),
    "keys after the events": (lambda: json.dumps(
        {"traceEvents": _events() * 30, "deviceProperties": [{"id": 0}, {"id": 1}], "traceName": "x"}).encode()),
    # a '},{' inside each event: cuts there do not decode, and an earlier one is taken
    "objects in an args list": (lambda: json.dumps(_doc(
        [{**e, "args": {**e.get("args", {}), "l": [{"a": 1}, {"b": [{"c": 2}]}]}} for e in _events()] * 30)).encode()),
    # more candidates inside each event than are tried before the window grows
    "many objects in each event": (lambda: json.dumps(_doc(
        [{**e, "args": {**e.get("args", {}), "l": [{"i": i} for i in range(40)]}} for e in _events()] * 10)).encode()),
    # cut candidates inside strings: the chunk ends mid-string, does not decode, and an earlier cut is taken
    "braces in names": (lambda: json.dumps(_doc(
        [{**e, "name": e["name"] + "<{a}, {b}>}]"} if "name" in e else e for e in _events()] * 30)).encode()),
    "an event longer than a block": (lambda: json.dumps(_doc(_with_args(blob="x" * 200_000) * 2)).encode()),
    "odd values": (lambda: json.dumps(_doc(_with_args(correlation="24", stream=True, device=None) + [
        {"ph": "X", "cat": "kernel", "name": 5, "ts": "7.5"}, {"ph": "X", "cat": "kernel"},
        {"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": -0.0, "args": None,
         "pid": "p", "tid": 2.5}, {"ph": "X", "cat": "cpu_op", "name": "b", "ts": 1, "dur": "3",
                                   "args": {"Input Dims": "x", "Input type": [1, 2.5, None, [3]]}}] * 30)).encode()),
    "non-UTF-8 in a field not kept": (lambda: json.dumps(_doc(_with_args(foo="@@") * 30)).encode().replace(
        b"@@", b"\xff")),
    # integers wider than 64 bits: Python ints, as the standard library reads them
    "wide integer": (lambda: json.dumps(_doc(_with_args(correlation=2**70) * 30)).encode()),
    "wide integer in Input Dims": (lambda: json.dumps(_doc(
        [{**e, "args": {**e["args"], "Input Dims": [[2**66]]}} if "Input Dims" in e.get("args", {}) else e
         for e in _events()] * 30)).encode()),
    "non-UTF-8 in a field not kept, and a wide integer": (lambda: json.dumps(
        _doc(_with_args(foo="@@", correlation=2**70) * 30)).encode().replace(b"@@", b"\xff")),
    "non-UTF-8 kernel name": (lambda: json.dumps(_doc(_events() * 30)).encode().replace(
        b"triton_poi", b"\xfeiton_poi")),
    "not an event": (lambda: json.dumps(_doc(_events() + ["not an event", 5])).encode()),
    "not an event, between events": (lambda: json.dumps(_doc(_events() * 15 + [[1, {"a": 2}], None]
                                                              + _events() * 15)).encode()),
    # the events array is found by the top-level key: not a nested one, nor one inside a string
    "a nested traceEvents key first": (lambda: json.dumps(
        {"meta": {"traceEvents": [{"ph": "X"}]}, "note": '"traceEvents": [{', "traceEvents": _events() * 30}).encode()),
    "unknown phase": (lambda: json.dumps(_doc(_events() + [{"ph": "Q", "name": "x"}])).encode()),
    "empty events": (lambda: b'{"traceEvents": [ ]}'),
    "truncated": (lambda: json.dumps(_doc(_events() * 30)).encode()[:-1000]),
    "trailing garbage": (lambda: json.dumps(_doc(_events() * 30)).encode() + b"]"),
}


@pytest.mark.parametrize("name", list(ODD))
def test_streaming_reader_never_differs_from_the_standard_library(tmp_path: Path, name: str):
    path = tmp_path / "t.json"
    path.write_bytes(ODD[name]())
    try:
        expected: Trace | None = _reference(path)
    except (ValueError, TraceError):  # not JSON, or not a chrome trace
        expected = None
    if expected is None:
        with pytest.raises(TraceError) as ei:
            load_trace(path)
        assert str(path) in ei.value.message and "\n" not in ei.value.message
    else:
        assert load_trace(path) == expected


def test_analysis_path_never_imports_torch():
    code = "import sys, kernelscope.trace, kernelscope.analysis.kernels; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
