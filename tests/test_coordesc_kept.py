"""A later max-autotune process keeps its first process's coordinate-descent result (capture/compiling.py
_keep_cached_coordesc): torch 2.9-2.11 adopt the cached ``.best_config`` on a cache load but drop its
``found_by_coordesc`` (pytorch/pytorch#172819), so the kernel's first run tuned it again: 10.9 and 12.8 s of each
later max-autotune process for a 1B Llama on an H200 (benchmarks/README.md, "Compile time"). Triton kernels do not
run on this machine: the rule is tested on triton's own Config objects and torch's own hashing, the installation
on this torch's own functions."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

th = pytest.importorskip("torch._inductor.runtime.triton_heuristics")
triton = pytest.importorskip("triton")

from kernelscope.capture.compiling import _adopt_coordesc, _keep_cached_coordesc  # noqa: E402


def _config(xblock: int, coordesc: bool = False):
    c = triton.Config({"XBLOCK": xblock}, num_warps=4, num_stages=1)
    if coordesc:
        c.found_by_coordesc = True
    return c


def _autotuner(*configs, coordesc_on: bool = True):
    return SimpleNamespace(inductor_meta={"coordinate_descent_tuning": coordesc_on},
                           compile_results=[SimpleNamespace(config=c) for c in configs])


def test_the_adopted_cached_coordesc_config_keeps_its_mark():
    # GIVEN the recheck kept the one configuration that the cache holds as coordinate descent's result, unmarked
    tuner = _autotuner(_config(64))
    # WHEN the rule runs
    assert _adopt_coordesc(tuner, [_config(64, coordesc=True)], th.triton_config_to_hashable)
    # THEN the kernel's first run sees it as tuned (run() tunes where found_by_coordesc is missing)
    assert tuner.compile_results[0].config.found_by_coordesc is True


@pytest.mark.parametrize(("tuner", "cached"), [
    (_autotuner(_config(64, coordesc=True)), [_config(64, coordesc=True)]),  # a fixed torch marked it already
    (_autotuner(_config(64)), [_config(64)]),  # the cache's entry was the heuristic's pick: tuning is due
    (_autotuner(_config(32)), [_config(64, coordesc=True)]),  # another configuration than the cached one
    (_autotuner(_config(64), coordesc_on=False), [_config(64, coordesc=True)]),  # no coordinate descent here
    (_autotuner(_config(64), _config(32)), [_config(64, coordesc=True)]),  # the recheck adopted nothing
    (_autotuner(_config(64)), []),  # a cache miss
    (_autotuner(_config(64)), None),  # no read at all
])
def test_nothing_else_is_marked(tuner, cached):
    before = [getattr(r.config, "found_by_coordesc", False) for r in tuner.compile_results]
    assert not _adopt_coordesc(tuner, cached, th.triton_config_to_hashable)
    assert [getattr(r.config, "found_by_coordesc", False) for r in tuner.compile_results] == before


def test_installed_once_passes_torchs_answers_through_and_comes_off():
    recheck, check = th.CachingAutotuner.recheck_autotune_cache, th.check_autotune_cache
    undo = _keep_cached_coordesc()
    try:
        assert undo is not None
        assert th.CachingAutotuner.recheck_autotune_cache is not recheck and th.check_autotune_cache is not check
        assert _keep_cached_coordesc() is None  # a second shape point does not wrap the wrapper
        # torch's own check answers through the wrapper: no file, one configuration, nothing to read
        configs = [_config(64)]
        got = th.check_autotune_cache(configs, None, {})
        assert got[0] == configs and got[1] is None and got[2]["autotune_cache_state"] == "only 1 config"
    finally:
        if undo is not None:
            undo()
    assert th.CachingAutotuner.recheck_autotune_cache is recheck and th.check_autotune_cache is check


def test_the_later_processes_kept_results_reach_result_json():
    from kernelscope.analysis.mode import _part
    from kernelscope.capture.runner import merge_processes
    from kernelscope.capture_record import CaptureRecord, CompileRecord
    from kernelscope.result import CompileInfo

    # GIVEN a max-autotune first process and two later ones that kept 3 and 4 kernels' coordinate-descent results
    first = CaptureRecord(mode="max-autotune", status="ok", first_call_s=120.0,
                          compile=CompileRecord(cold_s=120.0, cache={"cold": {"fxgraph_cache_miss": 1}}))
    later = [CaptureRecord(mode="max-autotune", status="ok", first_call_s=6.0,
                           compile=CompileRecord(cold_s=6.0, cache={"cold": {"fxgraph_cache_hit": 1}},
                                                 coordesc_kept=n)) for n in (3, 4)]
    # WHEN the processes are merged and the compile part is kept as result.json keeps it
    merged = merge_processes(first, later)
    info = _part(CompileInfo, merged.compile)
    # THEN the compile says how many the later processes kept, beside the first process's own counters
    assert info is not None and info.coordesc_kept == 7 and info.cold_s == 120.0
    # and a run whose later processes kept nothing (a fixed torch, the CPU) writes nothing of it
    plain = merge_processes(first, [CaptureRecord(mode="max-autotune", status="ok", first_call_s=6.0,
                                                  compile=CompileRecord(cold_s=6.0))])
    assert "coordesc_kept" not in plain.compile.to_json() and _part(CompileInfo, plain.compile).coordesc_kept == 0


def test_the_report_says_the_later_processes_ran_the_tuned_configurations():
    from kernelscope.report.context import compile_row
    from kernelscope.result import CompileInfo, ModeResult

    row = compile_row(ModeResult(name="max-autotune", status="ok", compile=CompileInfo(cold_s=120.0, coordesc_kept=7)))
    assert "the later processes ran this compile's tuned Triton configurations (7 kept from the cache" in row.note
    assert "tuned Triton" not in compile_row(ModeResult(name="max-autotune", status="ok",
                                                          compile=CompileInfo(cold_s=120.0))).note
