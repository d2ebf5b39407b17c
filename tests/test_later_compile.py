"""A later process of --processes compiles from its first process's Inductor cache without a compile-worker pool
(capture/compiling.py _no_pool_for_a_cached_compile): on the H200 each such compile spent ~10 s waiting for the
pool's sidecar to finish importing torch so that it could be stopped before the timing. compile_threads is not part
of Inductor's cache key: the later processes still hit the cache."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from torch._inductor import config

from kernelscope.capture.compiling import _no_pool_for_a_cached_compile
from kernelscope.capture_record import CAPTURE_FILE

from .conftest import run_cli


@pytest.fixture()
def threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    monkeypatch.delenv("TORCHINDUCTOR_COMPILE_THREADS", raising=False)
    # Inductor's own patch: torch's config module keeps its options outside the module's __dict__, so pytest 9's
    # monkeypatch undoes a setattr by deleting the option; config.patch restores the value on exit.
    with config.patch(compile_threads=8):
        yield monkeypatch


def _first(tmp_path: Path, cold: dict | None) -> Path:
    mode = tmp_path / "modes" / "default"
    (mode / "process-2").mkdir(parents=True)
    if cold is not None:
        (mode / CAPTURE_FILE).write_text(json.dumps({"compile": {"cache": {"cold": cold}}}))
    return mode / "process-2"


@pytest.mark.parametrize(("cold", "after"), [
    ({"fxgraph_cache_miss": 1, "autograd_cache_saved": 1}, 1),  # the first process saved its graph
    ({"fxgraph_cache_hit": 2}, 1),  # it found its graphs (a --cache-dir run)
    ({"fxgraph_cache_miss": 1, "fxgraph_cache_bypass": 1}, 8),  # one graph bypassed it: compiled again here
    ({"fxgraph_cache_bypass": 1}, 8),  # freezing (the CPU's default) bypasses the cache
    ({}, 8),  # nothing went through the cache
    (None, 8),  # no first record to read
])
def test_a_later_compile_goes_without_a_pool_only_where_the_cache_has_its_graph(threads, tmp_path, cold, after):
    _no_pool_for_a_cached_compile(_first(tmp_path, cold))
    assert config.compile_threads == after


def test_the_users_compile_threads_stay(threads, tmp_path):
    threads.setenv("TORCHINDUCTOR_COMPILE_THREADS", "4")
    _no_pool_for_a_cached_compile(_first(tmp_path, {"fxgraph_cache_miss": 1}))
    assert config.compile_threads == 8


@pytest.mark.slow
def test_later_processes_compile_from_the_cache_in_process(tmp_path: Path):
    # GIVEN a run whose compiled mode goes through Inductor's cache (--no-freezing: freezing bypasses it)
    out = tmp_path / "out"
    proc = run_cli("profile", "samples/linear_gelu.py", "--device", "cpu", "--modes", "default", "--processes", "2",
                   "--repeats", "3", "--warmup", "1", "--steps", "1", "--no-freezing", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    first = json.loads((out / "modes" / "default" / CAPTURE_FILE).read_text())["compile"]
    later = json.loads((out / "modes" / "default" / "process-2" / CAPTURE_FILE).read_text())["compile"]
    # THEN the first process compiled as a user's would (its pool, cold) and saved its graph; the later one
    # compiled in its own process and found the graph: the same program, without the pool
    assert first["cache"]["cold"].get("fxgraph_cache_miss") == 1 and first["compile_threads"] == config.compile_threads
    assert later["cache"]["cold"].get("fxgraph_cache_hit") == 1 and not later["cache"]["cold"].get("fxgraph_cache_miss")
    assert later["compile_threads"] == 1
    # AND each record says where its compile went, by Dynamo's and Inductor's own timers: the first one lowered
    # the graph and generated its code; the later one loaded it from the cache and lowered nothing
    assert {"GraphLowering.codegen", "compile_fx_inner"} <= set(first["phases_s"]), first["phases_s"]
    assert "AOTAutogradCache.inductor_load" in later["phases_s"], later["phases_s"]
    assert not {"GraphLowering.run", "GraphLowering.codegen", "compile_fx_inner"} & set(later["phases_s"])
    assert all(v >= 0.01 for v in [*first["phases_s"].values(), *later["phases_s"].values()])
