"""A real `kernelscope profile` run from the H200 (tests/data/h200-torch2.11-kernelscope-run): the analysis
re-derived here from its captures must equal what the H200 run wrote, and the reports render from it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope.analysis.mode import build_mode_result
from kernelscope.report.html import render_html
from kernelscope.report.markdown import render_markdown
from kernelscope.report.words import note_from, say_all
from kernelscope.result import to_json
from kernelscope.result_file import result_from_json

from .conftest import DATA

RUN = DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu"
MODES = ["eager", "default", "max-autotune", "reduce-overhead"]


@pytest.fixture(scope="module")
def recorded() -> dict:
    return json.loads((RUN / "result.json").read_text())


@pytest.mark.parametrize("mode", MODES)
def test_reanalysis_equals_the_recorded_result(recorded: dict, mode: str):
    capture = json.loads((RUN / "modes" / mode / "capture.json").read_text())
    again = to_json(build_mode_result(RUN, capture))
    before = next(m for m in recorded["modes"] if m["name"] == mode)
    for key in ("kernels_per_iter", "memops_per_iter", "kernels_by_category", "kernels_by_backend", "kernels",
                "first_call_s", "peak_memory_bytes", "max_abs_error"):
        assert again[key] == before[key], key
    # how the iterations were found: recorded as a sentence, now a note with the same words
    its, recorded_its = dict(again["iterations"]), dict(before["iterations"])
    assert say_all(note_from(n) for n in its.pop("notes")) == recorded_its.pop("note")
    assert its == recorded_its
    # This run predates latency_ms's calls_per_sample/windows/drift: every field it recorded is reproduced, and
    # the newer ones are read from the capture as it was written.
    assert {k: again["latency_ms"][k] for k in before["latency_ms"]} == before["latency_ms"]
    assert again["latency_ms"]["calls_per_sample"] == capture["latency_ms"]["calls_per_sample"]
    assert again["latency_ms"]["windows"] is None and again["latency_ms"]["drift"] is None
    assert [(g["verdict"], g["fused"], g["unfused"]) for g in again["gemms"]] == [
        (g["verdict"], g["fused"], g["unfused"]) for g in before["gemms"]]


def test_what_the_h200_showed(recorded: dict):
    by = {m["name"]: m for m in recorded["modes"]}
    assert all(m["status"] == "ok" for m in by.values())
    assert recorded["environment"]["gpu"] == "NVIDIA H200" and recorded["environment"]["capability"] == "9.0"
    assert recorded["dtype"] == "float16"
    assert [by[m]["kernels_per_iter"] for m in MODES] == [3, 3, 1, 4]
    assert [by[m]["gemms"][0]["verdict"] for m in MODES] == ["partial", "partial", "fused", "partial"]
    (k,) = by["max-autotune"]["kernels"]
    assert k["name"] == "triton_tem_fused_addmm_gelu_t_0"
    assert by["eager"]["latency_ms"]["timer"] == "cuda_events"
    # CUDA graphs: steady-state peak memory below the non-graph modes' (static pool, no per-call allocation)
    assert by["reduce-overhead"]["peak_memory_bytes"] < by["default"]["peak_memory_bytes"]
    assert by["default"]["memory"]["first_call_peak_allocated_bytes"] > by["default"]["peak_memory_bytes"]


def test_reports_render_from_the_recorded_result(recorded: dict):
    run = result_from_json(recorded)
    html = render_html(run)
    md = render_markdown(run)
    assert "NVIDIA H200" in html and "triton_tem_fused_addmm_gelu_t_0" in html
    assert "GPU NVIDIA H200" in md and "on Triton template: **fused**; fused `bias`, `gelu`" in md


def test_nvgemm_requested_on_torch_2_11_is_reported_unavailable_with_reason():
    r = json.loads((RUN.parent / "linear_gelu-nvgemm-aten" / "result.json").read_text())
    (m,) = r["modes"]
    assert m["status"] == "ok"
    assert m["config"]["gemm_backends"] == ["ATEN"]
    assert m["config"]["gemm_backends_requested"] == ["NVGEMM", "ATEN"]
    assert any("NVGEMM needs torch>=2.14" in n for n in m["notes"])
    assert r["environment"]["gemm_backends"]["NVGEMM"] == {"available": False,
                                                           "reason": "NVGEMM needs torch>=2.14 (this is 2.11.0+cu130)"}
    g = m["gemms"][0]
    assert g["verdict"] == "unfused" and "won the autotune" in g["why_not"]


def test_recorded_run_loads_in_torch_tb_profiler_with_a_kernel_view():
    from torch_tb_profiler import io as tbio
    from torch_tb_profiler.profiler.loader import RunLoader

    run = RunLoader("default", str(RUN / "tb" / "default"), tbio.Cache()).load()
    assert "Kernel" in {v.display_name for v in run.views}


def test_committed_data_is_small():
    assert sum(p.stat().st_size for p in RUN.rglob("*") if p.is_file()) < 2 * 1024 * 1024
    assert not list(Path(RUN).rglob("report.html"))
