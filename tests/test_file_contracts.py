"""The files that pass between processes are typed records, each written and read by one module:
capture.json (kernelscope/capture_record.py) and result.json (kernelscope/result_file.py).

Every capture.json and result.json committed under tests/data (three generations of workers) reads through the
typed readers; records round-trip; a result.json of another schema version is one clear line; nothing in
analysis reads a capture record as a dict; nothing the worker reads from its spec is missing from what the
runner writes.
"""

from __future__ import annotations

import ast
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from kernelscope import capture_record as cr
from kernelscope import result_file
from kernelscope.capture_record import (
    UNSET,
    CaptureRecord,
    CompileRecord,
    Latency,
    ProcessTiming,
    capture_from_json,
    load_capture,
    read_capture,
    write_capture,
)
from kernelscope.errors import CaptureFileError, ResultError
from kernelscope.fmt import KV
from kernelscope.report.context import build_context
from kernelscope.report.words import say
from kernelscope.result import (
    SCHEMA,
    BackendStatus,
    CompileCache,
    CompileInfo,
    DynamoStats,
    InterpreterInfo,
    MemoryPeaks,
    ModeConfig,
    Note,
    NumericsResult,
    OutputError,
    OutputNumerics,
    ReferenceInfo,
    RunEnvironment,
    ToleranceUsed,
    part_from_json,
    to_json,
)
from kernelscope.result_file import load_result, result_from_json, write_result
from tests.conftest import DATA
from tests.conftest_reports import seed_h200_211

PACKAGE = Path(__file__).resolve().parent.parent / "kernelscope"
CAPTURES = sorted(DATA.rglob("capture.json"))
RESULTS = sorted(DATA.rglob("result.json"))


def _ids(paths: list[Path]) -> list[str]:
    return [str(p.relative_to(DATA).parent) for p in paths]


def _lost(written: Any, read: Any, where: str = "") -> list[str]:
    """Key paths (and values) of ``written`` that ``read`` does not hold the same."""
    if isinstance(written, dict) and isinstance(read, dict):
        return [x for k, v in written.items()
                for x in ([f"{where}.{k} missing"] if k not in read else _lost(v, read[k], f"{where}.{k}"))]
    if isinstance(written, list) and isinstance(read, list) and len(written) == len(read):
        # element by element: a record in a list (numerics.outputs[]) read back with its defaults filled in
        # ("note": "") has lost nothing
        return [x for i, (w, r) in enumerate(zip(written, read)) for x in _lost(w, r, f"{where}[{i}]")]
    return [] if written == read else [f"{where}: {written!r:.60} != {read!r:.60}"]


# --------------------------------------------------------------------------------------------------- capture.json


def test_the_fixtures_hold_every_generation_of_capture():
    assert len(CAPTURES) >= 100
    caps = [json.loads(p.read_text()) for p in CAPTURES]
    assert any("processes" in c for c in caps)  # --processes
    # (an eager record's "compile" is null: a mode that compiles nothing)
    assert any(isinstance(c.get("compile"), dict) and "warm_s" in c["compile"] for c in caps)  # --warm-compile
    assert any(isinstance(c.get("latency_ms"), dict) and "drift" not in c["latency_ms"] for c in caps)  # before drift
    assert any(isinstance(c.get("numerics"), dict) and "vs_reference" not in c["numerics"] for c in caps)
    assert any("point" in c for c in caps)  # sweeps


@pytest.mark.parametrize("path", CAPTURES, ids=_ids(CAPTURES))
def test_every_recorded_capture_reads_typed_and_loses_nothing(path: Path):
    # GIVEN a capture.json some worker wrote
    written = json.loads(path.read_text())
    # WHEN it is read with the typed reader
    rec = load_capture(path)
    # THEN every field is an attribute, no key the worker wrote is unknown to the record, and writing it back
    # keeps every key and value (older files gain only the top-level defaults)
    assert isinstance(rec, CaptureRecord) and rec.mode and rec.status
    capture_from_json(written, strict=True)
    assert _lost(written, rec.to_json()) == []
    assert capture_from_json(rec.to_json(), strict=True) == rec
    if rec.latency_ms is not None:
        assert isinstance(rec.latency_ms, Latency) and rec.latency_ms.median > 0
    assert all(isinstance(p, ProcessTiming) for p in rec.processes)


def _full_record() -> CaptureRecord:
    rec = next(r for r in map(load_capture, CAPTURES) if r.processes and r.compile and r.numerics)
    assert rec.memory and rec.environment and rec.config and rec.dynamo
    return rec


def test_a_record_round_trips_through_its_file(tmp_path: Path):
    rec = _full_record()
    write_capture(tmp_path / "capture.json", rec)
    assert read_capture(tmp_path / "capture.json") == rec
    assert load_capture(tmp_path / "capture.json") == rec


def test_the_worker_writes_a_dict_through_the_record(tmp_path: Path):
    # GIVEN the dict the worker builds as it measures
    built = {"schema": cr.CAPTURE_SCHEMA, "mode": "default", "status": "ok", "error": "", "error_kind": "",
             "notes": ["n"], "first_call_s": 1.5, "numerics": {"vs_eager": {"pass": True, "max_abs": 0.0}},
             "compile": {"cold_s": None, "cache": {"cold": {"fxgraph_cache_miss": 1}}, "reused": True}}
    # WHEN it is written THEN it reads back typed, "pass" (a keyword) included
    rec = write_capture(tmp_path / "capture.json", built)
    assert rec.numerics.vs_eager.passed is True and rec.first_call_s == 1.5 and rec.notes == ("n",)
    assert read_capture(tmp_path / "capture.json") == rec
    # AND a part keeps the difference between "written as null" (cold_s) and "not written" (warm_s): the
    # reports read a warm_s that is there as "the warm compile was measured"
    on_disk = json.loads((tmp_path / "capture.json").read_text())["compile"]
    assert on_disk == {"cold_s": None, "cache": {"cold": {"fxgraph_cache_miss": 1}}, "reused": True}
    assert rec.compile.warm_s is UNSET and not rec.compile.warm_s


def test_a_key_the_record_does_not_know_fails_the_write_not_the_reader(tmp_path: Path):
    with pytest.raises(CaptureFileError, match=r"latency_ms\.p99 is not a field of Latency"):
        write_capture(tmp_path / "capture.json", {"mode": "eager", "status": "ok", "latency_ms": {
            "median": 1.0, "q1": 1.0, "q3": 1.0, "iqr": 0.0, "min": 1.0, "mean": 1.0, "p99": 2.0}})
    assert not (tmp_path / "capture.json").exists()
    # a reader ignores it (a newer field read by an older kernelscope)
    rec = capture_from_json({"mode": "eager", "status": "ok", "gpu_clock_mhz": 1980})
    assert rec.mode == "eager"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"mode": "eager", "first_call_s": "slow"}, r"first_call_s should be float, not str"),
        ({"mode": "eager", "latency_ms": {"median": 1.0}}, r"latency_ms"),
        ({"mode": "eager", "notes": "one"}, r"notes should be a list"),
        ({"mode": "eager", "memory": {"peak_allocated_bytes": True}}, r"memory\.peak_allocated_bytes"),
        ({"schema": "kernelscope.capture/0", "mode": "eager"}, r"has schema 'kernelscope.capture/0'"),
        ([1, 2], r"not a capture record"),
    ],
)
def test_a_malformed_capture_names_the_field(tmp_path: Path, data: Any, message: str):
    with pytest.raises(CaptureFileError, match=message) as info:
        capture_from_json(data)
    assert "\n" not in info.value.message and "re-run `kernelscope profile`" in info.value.message
    # the runner reads a malformed file as "the worker wrote no result"
    (tmp_path / "capture.json").write_text(json.dumps(data))
    assert read_capture(tmp_path / "capture.json") is None


def test_merge_warm_and_processes_are_typed():
    from kernelscope.capture.runner import merge_processes, merge_warm

    cold = _full_record()
    warm = CaptureRecord(mode=cold.mode, status="ok", first_call_s=0.25, log="modes/x/warm/log.txt",
                         compile=CompileRecord(cold_s=0.25, cache={"cold": {"fxgraph_cache_hit": 1}}))
    merged = merge_warm(cold, warm)
    assert merged.compile.warm_s == 0.25 and merged.compile.cache["warm"] == {"fxgraph_cache_hit": 1}
    assert merged.compile.warm_log == "modes/x/warm/log.txt" and merged.compile.cold_s == cold.compile.cold_s
    failed = merge_warm(cold, CaptureRecord(mode=cold.mode, status="timeout", error="too slow"))
    assert failed.compile.warm_s is None and failed.compile.warm_error == "timeout: too slow"
    later = CaptureRecord(mode=cold.mode, status="failed", error="boom")
    procs = merge_processes(cold, [later]).processes
    assert [(p.process, p.status, p.latency_ms is None) for p in procs] == [(1, cold.status, False),
                                                                          (2, "failed", True)]


# --------------------------------------------------------------------------------------------------- result.json


@pytest.mark.parametrize("path", RESULTS, ids=_ids(RESULTS))
def test_every_recorded_result_reads_and_round_trips(path: Path, tmp_path: Path):
    result = load_result(path)
    assert result.schema == SCHEMA and result.modes
    write_result(tmp_path, result)
    assert load_result(tmp_path) == result


def test_write_result_and_load_result_round_trip(tmp_path: Path):
    result = seed_h200_211()
    path = write_result(tmp_path, result)
    assert path == tmp_path / "result.json"
    assert load_result(tmp_path) == result
    assert json.loads(path.read_text()) == to_json(result)


def _result_with(schema: str, tool_version: str = "9.9.9") -> dict[str, Any]:
    return {**to_json(seed_h200_211()), "schema": schema, "tool_version": tool_version}


def test_a_result_from_a_newer_kernelscope_says_to_upgrade(tmp_path: Path):
    newer = f"kernelscope.result/{result_file.SCHEMA_VERSION + 1}"
    (tmp_path / "result.json").write_text(json.dumps(_result_with(newer)))
    with pytest.raises(ResultError) as info:
        load_result(tmp_path)
    msg = info.value.message
    assert "\n" not in msg and info.value.exit_code == 2
    assert f"has schema '{newer}'; this kernelscope reads '{SCHEMA}'" in msg
    assert "written by kernelscope 9.9.9, newer than this kernelscope" in msg
    assert "upgrade kernelscope" in msg


def test_a_result_of_an_older_schema_without_a_migration_says_to_profile_again(tmp_path: Path):
    (tmp_path / "result.json").write_text(json.dumps(_result_with("kernelscope.result/0", "0.0.1")))
    with pytest.raises(ResultError) as info:
        load_result(tmp_path)
    msg = info.value.message
    assert "\n" not in msg and info.value.exit_code == 2
    assert "has schema 'kernelscope.result/0'" in msg and "written by kernelscope 0.0.1, older than" in msg
    assert "run `kernelscope profile`" in msg


def test_an_older_schema_with_a_migration_is_migrated(monkeypatch: pytest.MonkeyPatch):
    # GIVEN a kernelscope one schema ahead of this one, that migrates this one to it (a renamed field)
    now = result_file.SCHEMA_VERSION

    def rename(data: dict[str, Any]) -> dict[str, Any]:
        notes = data.get("old_notes", data.get("notes", []))
        return {**{k: v for k, v in data.items() if k != "old_notes"}, "notes": [*notes, "renamed"]}

    monkeypatch.setattr(result_file, "SCHEMA_VERSION", now + 1)
    monkeypatch.setitem(result_file.MIGRATIONS, now, rename)
    data = {k: v for k, v in _result_with(f"kernelscope.result/{now}").items() if k != "notes"}
    # WHEN a file of this schema is read THEN the migration ran and the result is the newer schema
    result = result_from_json({**data, "old_notes": ["from this schema"]})
    assert result.notes == ("from this schema", "renamed") and result.schema == f"kernelscope.result/{now + 1}"
    # AND a schema-1 file takes every step in turn (1 -> 2 -> ... -> now + 1): typed parts, the facts, the rename
    (path,) = [p for p in RESULTS if p.parent.name == "before" and p.parent.parent.name == "up-seed"]
    one = json.loads(path.read_text())
    result = result_from_json(one)
    assert result.notes == (*one["notes"], "renamed") and result.schema == f"kernelscope.result/{now + 1}"
    assert result.mode("max-autotune:NVGEMM").memory is None
    assert result.mode("default").speedup is not None and result.mode("default").numerics_verdict is not None


def test_a_schema_1_result_reads_typed():
    # GIVEN result.json files written as kernelscope.result/1 (the worker's parts as dicts, {} when not measured):
    # one upgrade-check side on the H200 (--python: the interpreter is recorded) and one CPU run
    gpu_path = DATA / "h200-torch2.14.1-kernelscope-run" / "up-seed" / "before" / "result.json"
    cpu_path = DATA / "cpu-torch2.14.1" / "bert_layer" / "result.json"
    assert json.loads(gpu_path.read_text())["schema"] == json.loads(cpu_path.read_text())["schema"] == \
        "kernelscope.result/1"
    # WHEN they are loaded THEN they are the current schema, every part a typed record with the values written
    gpu, cpu = load_result(gpu_path), load_result(cpu_path)
    assert gpu.schema == cpu.schema == SCHEMA == "kernelscope.result/4"
    env = gpu.environment
    assert isinstance(env, RunEnvironment) and env.gpu == "NVIDIA H200" and env.capability == "9.0"
    assert env.sm_count == 132 and env.cpu is None
    assert env.interpreter == InterpreterInfo(path="/opt/torch/.venv/bin/python3",
                                              executable="/opt/torch/.venv/bin/python3", python="3.12.3",
                                              torch="2.11.0+cu130", triton="3.6.0", cuda="13.0")
    assert env.gemm_backends["NVGEMM"] == BackendStatus(False, "NVGEMM needs torch>=2.14 (this is 2.11.0+cu130)")
    default = gpu.mode("default")
    assert default.memory == MemoryPeaks(first_call_peak_allocated_bytes=131604480,
                                         first_call_peak_reserved_bytes=134217728, peak_allocated_bytes=68689920,
                                         peak_reserved_bytes=134217728)
    assert default.numerics.vs_eager.passed is True and default.numerics.vs_eager.elements == 65536
    assert default.numerics.tolerance.atol == 0.01 and default.numerics.tolerance.dtype == "float16"
    # a mode that did not run: /1's {} parts are "not measured"
    nvgemm = gpu.mode("max-autotune:NVGEMM")
    assert nvgemm.status == "unavailable"
    assert (nvgemm.memory, nvgemm.numerics, nvgemm.compile, nvgemm.dynamo, nvgemm.config) == (None,) * 5

    assert cpu.environment.cpu_count == 2 and cpu.environment.gemm_backends["TRITON"].available is False
    eager, compiled = cpu.mode("eager"), cpu.mode("default")
    assert eager.memory.peak_rss_growth_bytes == 17170432 and eager.memory.rss_before_bytes == 622698496
    assert eager.compile is None and eager.dynamo is None and eager.config.compiled is False
    assert eager.numerics.reference == ReferenceInfo(dtype="float64", device="cpu")
    assert eager.numerics.vs_reference.bound_rmse == pytest.approx(1.0185484015039699e-05)
    assert compiled.compile == CompileInfo(cold_s=24.451010850999978,
                                           cache=CompileCache(cold={"fxgraph_cache_bypass": 1,
                                                                    "autograd_cache_bypass": 1}))
    assert compiled.compile.warm_s is None and compiled.compile.cache.warm is None
    assert compiled.dynamo == DynamoStats(frames_compiled=1, graphs=1, recompiles=0, guard_failures=(),
                                          graph_breaks=0, graph_break_reasons=())
    assert compiled.config.freezing is True and compiled.config.inductor_config["freezing"] is True
    # AND written again, it is the current schema: "not measured" is null, and the worker's "pass" keeps its key
    again = json.loads(result_file.dumps_result(gpu))
    assert again["schema"] == SCHEMA and again["modes"][3]["memory"] is None
    assert again["modes"][1]["numerics"]["vs_eager"]["pass"] is True and "passed" not in again["modes"][1]["numerics"]


def test_a_schema_3_result_keeps_its_sentences_as_text_notes():
    # GIVEN a kernelscope.result/3 file: what analysis said of a mode's latency, iterations, autotune tables, GEMM
    # count against eager and launch profile, and of the device peaks and the run, as sentences
    data = _result_with("kernelscope.result/3")
    mode = data["modes"][1]
    mode["latency_ms"]["outliers"] = ["process 2: 1 of 30 samples are outliers (worst 2.84x that process's median)"]
    mode["iterations"] = {"count": 3, "method": "top_level_ops", "consistent": False, "kernels_per_step": [3, 4, 3],
                          "note": "3 iterations inferred from 1 repeating top-level op(s) per iteration ('aten::mm' "
                                  "first); kernel counts differ between iterations [3, 4, 3]"}
    mode["launch"] = {"iterations": 3, "wall_us": 40.0, "gpu_busy_us": 10.0, "gpu_idle_pct": 75.0,
                      "launch_path_us": 30.0, "runtime_us": 5.0, "launches": 3, "launch_bound": True,
                      "note": "GPU idle 75% of the iteration"}
    mode["autotune"] = [{"gemm": None, "op": "mm", "sizes": "16x16, 16x16", "choices": [], "winner": "mm",
                         "winner_backend": "ATen", "note": "Inductor printed the fastest 10 of 20 choices"}]
    mode["gemm_coverage"] = {"source": "output code", "ops": 3, "attributed": 2,
                             "unattributed": [{"op": "extern_kernels.mm", "reason": "its launch was not found"}],
                             "vs_eager": "3 GEMM-class ops against eager's 2: 1 more than decomposition explains",
                             "vs_eager_explained": False}
    mode["findings"] = [{"code": "latency-outliers", "args": {"text": "process 3 measured 1.31x the median"}},
                        {"code": "compile-may-differ", "args": {"gemms": ["fc1"], "why": "autotune choice marginal"}}]
    data["peaks"] = {"datasheet": {"device": "NVIDIA H200", "kind": "datasheet", "matmul_tflops": {},
                                   "bandwidth_gbps": 4800.0, "source": "datasheet", "notes": ["measured lower"]},
                     "calibrated": None}
    data["notes"] = ["1 malformed trace events were skipped"]
    # WHEN it is read THEN it is the current schema, each sentence a "text" note the reports print as written
    result = result_from_json(data)
    assert result.schema == SCHEMA
    m = result.modes[1]
    text = Note("text", {"text": mode["latency_ms"]["outliers"][0]})
    assert m.latency_ms.outliers == (text,)
    assert m.iterations.notes == (Note("text", {"text": mode["iterations"]["note"]}),)
    assert m.launch.launch_bound and not hasattr(m.launch, "note")
    assert m.autotune[0].notes == (Note("text", {"text": "Inductor printed the fastest 10 of 20 choices"}),)
    assert m.gemm_coverage.vs_eager == Note("text", {"text": mode["gemm_coverage"]["vs_eager"]})
    assert m.gemm_coverage.unattributed[0].reason == Note("text", {"text": "its launch was not found"})
    assert [say(f) for f in m.findings] == ["latency outliers: process 3 measured 1.31x the median",
                                            "GEMM fc1: autotune choice marginal"]
    assert result.peaks["datasheet"]["notes"] == [{"code": "text", "args": {"text": "measured lower"}}]
    assert result.notes == ("1 malformed trace events were skipped",) and result.findings == ()
    ctx = build_context(result)
    assert ctx.coverage[0].vs_eager == mode["gemm_coverage"]["vs_eager"] and ctx.coverage[0].warning
    assert ctx.coverage[0].missing == ("extern_kernels.mm: its launch was not found",)
    assert KV("datasheet / notes", "measured lower") in ctx.peaks
    assert ctx.run_notes == ("1 malformed trace events were skipped",)
    # AND written again and read back, it is the same
    assert result_from_json(json.loads(result_file.dumps_result(result))) == result


def test_kernelscope_report_refuses_a_future_result_in_one_line(tmp_path: Path, capsys):
    from kernelscope.cli import main

    (tmp_path / "result.json").write_text(json.dumps(_result_with("kernelscope.result/7")))
    with pytest.raises(SystemExit) as info:
        main(["report", str(tmp_path)])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1 and "upgrade kernelscope" in err


def test_only_result_file_reads_or_writes_result_json():
    # every other module goes through write_result / load_result (report/io.py re-exports them)
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        if path.name in ("result_file.py", "result.py"):  # result.py defines run_from_json, the types' reader
            continue
        text = path.read_text()
        if "run_from_json(" in text or "json.dumps(to_json(" in text:
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


# --------------------------------------------------------------------------------------------------- no dicts


# analysis/stats.py combines latency dicts in the capture's JSON form (the records' ``Latency.to_json()``).
RECORD_NAMES = {"capture", "cap", "rec", "record", "warm", "cold"}


def _dict_reads(path: Path) -> list[str]:
    """``capture.get(...)`` / ``rec["..."]`` on names that hold capture records."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "get", "setdefault", "update", "items", "keys"):
            target = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(
                node.slice.value, str):
            target = node.value
        if isinstance(target, ast.Name) and target.id in RECORD_NAMES:
            out.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_nothing_after_capture_reads_a_capture_record_as_a_dict():
    files = [*sorted((PACKAGE / "analysis").rglob("*.py")), PACKAGE / "capture" / "runner.py",
             PACKAGE / "commands" / "profile.py", PACKAGE / "commands" / "upgrade_check.py"]
    assert [x for f in files for x in _dict_reads(f)] == []


def _string_keys(tree: ast.AST, name: str) -> set[str]:
    """Keys ``name`` is read with: ``name.get("k")`` and ``name["k"]``."""
    keys = set()
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and isinstance(node.func.value, ast.Name) and node.func.value.id == name and node.args
                and isinstance(node.args[0], ast.Constant)):
            keys.add(node.args[0].value)
        elif (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name
              and isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)):
            keys.add(node.slice.value)
    return keys


def test_the_worker_reads_no_spec_key_the_runner_does_not_write():
    # GIVEN the keys of the spec dict the runner writes for a worker (and of each point)
    # (capture/dist.py sets a torchrun rank's own keys, such as its log, in the spec it hands the worker)
    runner = ast.Module(body=[*ast.parse((PACKAGE / "capture" / "runner.py").read_text()).body,
                              *ast.parse((PACKAGE / "capture" / "dist.py").read_text()).body], type_ignores=[])
    written: set[str] = set()
    for node in ast.walk(runner):
        if isinstance(node, ast.Dict):
            written |= {k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "spec":
            if isinstance(node.ctx, ast.Store) and isinstance(node.slice, ast.Constant):
                written.add(node.slice.value)
    # WHEN the worker's reads are collected (every capture module shipped with it: worker.py and its jobs' modules)
    # THEN each is written (warmup_seconds was read, never written)
    from kernelscope.capture.interpreter import WORKER_FILES

    shipped = [PACKAGE.parent / rel for rel in WORKER_FILES if rel.startswith("kernelscope/capture/")]
    assert PACKAGE / "capture" / "worker.py" in shipped
    worker = ast.Module(body=[n for f in shipped for n in ast.parse(f.read_text()).body], type_ignores=[])
    read = _string_keys(worker, "spec") | _string_keys(worker, "point")
    assert read and read - written == set()


# --------------------------------------------------------------------------------------------------- the result's parts
# What the worker records beside its latency reaches result.json as typed records of the same fields
# (analysis/mode.py copies each part over): capture part -> result part, and the result's fields something else
# writes (``analyze`` fills cuda_driver_version from a trace; ``--python`` adds the interpreter).
PARTS = [(cr.MemoryRecord, MemoryPeaks, set()), (cr.Comparison, OutputError, set()),
         (cr.NumericsTolerance, ToleranceUsed, set()), (cr.ReferenceRun, ReferenceInfo, set()),
         (cr.Numerics, NumericsResult, set()), (cr.OutputNumerics, OutputNumerics, set()),
         (cr.DynamoCounters, DynamoStats, set()),
         (cr.CompileRecord, CompileInfo, set()), (cr.CaptureConfig, ModeConfig, set()),
         (cr.BackendAvailability, BackendStatus, set()),
         (cr.Environment, RunEnvironment, {"interpreter", "cuda_driver_version"})]


def _json_keys(cls: type) -> set[str]:
    return {f.metadata.get("json", f.name) for f in dataclasses.fields(cls)}


@pytest.mark.parametrize(("written", "kept", "elsewhere"), PARTS, ids=[p[1].__name__ for p in PARTS])
def test_a_result_part_has_every_field_the_worker_writes_and_no_other(written: type, kept: type, elsewhere: set):
    assert _json_keys(written) <= _json_keys(kept)  # nothing the worker measured is dropped on the way
    assert _json_keys(kept) - _json_keys(written) == elsewhere  # no field that nothing writes


@pytest.mark.parametrize("path", CAPTURES, ids=_ids(CAPTURES))
def test_every_recorded_capture_part_reaches_the_result_whole(path: Path):
    rec = load_capture(path)
    for name, cls in (("memory", MemoryPeaks), ("numerics", NumericsResult), ("compile", CompileInfo),
                      ("dynamo", DynamoStats), ("config", ModeConfig), ("environment", RunEnvironment)):
        part = getattr(rec, name)
        if part is None:
            continue
        written = part.to_json()
        assert _lost(written, to_json(part_from_json(cls, written))) == [], name


# Names of the parts a ModeResult / RunResult holds as typed records (result.py).
RESULT_PARTS = {"memory", "numerics", "compile", "dynamo", "config", "environment"}


def _part_dict_reads(source: str, where: str) -> list[str]:
    """``m.numerics.get(...)``, ``(m.compile or {}).get(...)``, ``r.environment["gpu"]``: a result part read as a
    dict."""
    def is_part(node: ast.AST) -> bool:
        if isinstance(node, ast.BoolOp):
            return any(is_part(v) for v in node.values)
        return isinstance(node, ast.Attribute) and node.attr in RESULT_PARTS

    out = []
    for node in ast.walk(ast.parse(source)):
        target = None
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in (
                "get", "items", "keys", "values"):
            target = node.func.value
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and isinstance(
                node.slice.value, str):
            target = node.value
        if target is not None and is_part(target):
            out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return out


def test_nothing_reads_a_result_part_as_a_dict():
    # GIVEN every module after capture, and the benchmarks that read result.json
    files = [*sorted((PACKAGE / "analysis").rglob("*.py")), *sorted((PACKAGE / "report").rglob("*.py")),
             *sorted((PACKAGE / "commands").rglob("*.py")), *sorted((PACKAGE.parent / "benchmarks").glob("*.py"))]
    # THEN none reads memory, numerics, compile, dynamo, config or environment with .get() or ["key"]
    assert [x for f in files for x in _part_dict_reads(f.read_text(), f.name)] == []
    # (and the check sees such reads)
    reads = "x = (m.compile or {}).get('cold_s')\ny = r.environment['gpu']\nz = m.numerics.get('vs_eager')\n"
    assert len(_part_dict_reads(reads, "probe")) == 3
