"""The trace model on real H200 traces, and every way a trace file can be bad."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope.errors import TraceError
from kernelscope.trace import load_trace, trace_from_dict

from .conftest import H200_211, H200_2141


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


def test_fixture_json_is_what_torch_profiler_writes():
    # guard against a fixture copy going stale: the copies equal ../shared's originals where those exist
    shared = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "h200-torch2.11" / "seed-eager.trace.json"
    if not shared.exists():
        pytest.skip("../shared/fixtures not present")
    recorded = gzip.decompress((H200_211 / "seed-eager.trace.json.gz").read_bytes())
    assert json.loads(shared.read_bytes()) == json.loads(recorded)
