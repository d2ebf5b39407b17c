"""`kernelscope profile` end to end on the CPU: real torch, real Inductor, real torch.profiler, one session run."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from kernelscope.report.words import say_all
from kernelscope.result import SCHEMA, run_from_json

from .conftest import CPU_RUN_MODES


@pytest.mark.slow
def test_writes_every_output(cpu_run: Path):
    for name in ("report.html", "result.json", "summary.md", ".kernelscope"):
        assert (cpu_run / name).is_file(), name
    for mode in ("eager", "default", "max-autotune_CPP"):
        (trace,) = (cpu_run / "tb" / mode).glob("kernelscope.*.pt.trace.json.gz")
        assert json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"]
        assert (cpu_run / "modes" / mode / "capture.json").is_file()
        assert (cpu_run / "modes" / mode / "log.txt").is_file()


@pytest.mark.slow
def test_result_schema_and_modes(cpu_result: dict):
    assert cpu_result["schema"] == SCHEMA
    assert [m["name"] for m in cpu_result["modes"]] == CPU_RUN_MODES.split(",")
    # eager compiles nothing: its compile and Dynamo parts are null, its memory (RSS on the CPU) is measured
    eager = cpu_result["modes"][0]
    assert eager["compile"] is None and eager["dynamo"] is None and eager["memory"]["peak_rss_growth_bytes"] > 0
    assert eager["memory"]["peak_allocated_bytes"] is None and eager["numerics"]["vs_eager"]["pass"] is True
    env = cpu_result["environment"]
    assert env["device"] == "cpu" and env["torch"].startswith("2.")
    assert env["gemm_backends"]["NVGEMM"]["available"] is False
    assert "GPU backend" in env["gemm_backends"]["NVGEMM"]["reason"]
    assert cpu_result["device"] == "cpu" and cpu_result["dtype"] == "float32"
    run = run_from_json(cpu_result)  # round-trips into the typed result
    assert run.mode("eager").status == "ok" and run.environment.device == "cpu"


@pytest.mark.parametrize("mode", ["eager", "default", "max-autotune:CPP"])
@pytest.mark.slow
def test_each_mode_measured(cpu_result: dict, mode: str):
    m = next(m for m in cpu_result["modes"] if m["name"] == mode)
    assert m["status"] == "ok", m["error"]
    lat = m["latency_ms"]
    # two processes of 5 samples (the fixture's --processes 2): the median is the median of the two medians
    assert len(lat["samples"]) == 10 and lat["timer"] == "perf_counter"
    assert lat["processes"] == 2 and len(lat["per_process"]) == 2 and len(lat["process_samples"]) == 2
    assert lat["median"] == pytest.approx(sum(lat["per_process"]) / 2)
    assert lat["interval"] == "processes" and lat["low"] <= lat["median"] <= lat["high"]
    assert lat["q1"] <= lat["median"] <= lat["q3"] and lat["iqr"] == pytest.approx(lat["q3"] - lat["q1"])
    assert m["first_call_s"] > 0 and m["peak_memory_bytes"] > 0
    assert m["max_abs_error"] is not None and m["max_abs_error"] < 1e-4
    it = run_from_json(cpu_result).mode(mode).iterations
    assert (it.count, it.method, it.consistent, it.kernels_per_step) == (3, "profiler_steps", True,
                                                                         (m["kernels_per_iter"],) * 3)
    assert say_all(it.notes) == "iterations from ProfilerStep#N markers"
    assert sum(k["calls_per_iter"] for k in m["kernels"] if not k["is_memop"]) == m["kernels_per_iter"]
    assert m["trace"].startswith("tb/")


@pytest.mark.slow
def test_eager_mode_kernels(cpu_result: dict):
    m = cpu_result["modes"][0]
    assert m["first_call_s"] < 5  # no compile in eager
    assert {k["name"] for k in m["kernels"]} == {"aten::addmm", "aten::gelu"}  # the bias copy is addmm's work
    assert m["inductor_code"] == []


@pytest.mark.slow
def test_compiled_modes_save_inductor_code_from_the_same_process(cpu_run: Path, cpu_result: dict):
    for m in cpu_result["modes"][1:3]:
        assert m["inductor_code"] == [f"modes/{m['name'].replace(':', '_')}/code/graph_0.py"]
        code = (cpu_run / m["inductor_code"][0]).read_text()
        assert "def call(" in code
    assert cpu_result["modes"][1]["config"]["freezing"] is True


@pytest.mark.slow
def test_a_cpu_cold_compile_is_the_models_own_not_the_machines_isa_check(cpu_run: Path, cpu_result: dict):
    from torch._inductor.cpu_vec_isa import VecISA

    # Inductor's once-per-machine check of the compiler's vector ISAs (its probe program, built and loaded per
    # ISA) ran in torch's default cache before the compile timer; the mode's fresh cache holds the model's
    # kernels alone, compiled cold
    for m in cpu_result["modes"][1:3]:
        cache = cpu_run / "modes" / m["name"].replace(":", "_") / ".inductor-cache"
        sources = [p.read_text() for p in cache.rglob("*.cpp")]
        assert sources and not [s for s in sources if s == VecISA._avx_code], m["name"]
        assert m["compile"]["cold_s"] > 0 and m["compile"]["cache_dir_fresh"] is True

@pytest.mark.slow
def test_default_mode_runs_the_gelu_as_an_inductor_cpp_kernel(cpu_result: dict):
    m = cpu_result["modes"][1]
    backends = {k["name"]: k["backend"] for k in m["kernels"]}
    assert any(b == "Inductor C++" and "gelu" in n for n, b in backends.items()), backends
    assert m["kernels_by_category"]["gemm"] == 1


@pytest.mark.slow
def test_max_autotune_cpp_fuses_bias_and_gelu_into_the_gemm_template(cpu_result: dict):
    m = cpu_result["modes"][2]
    assert m["config"]["gemm_backends"] == ["CPP"]
    assert m["kernels_per_iter"] == 1
    (k,) = m["kernels"]
    assert (k["category"], k["backend"]) == ("gemm", "Inductor C++ template")
    (g,) = m["gemms"]
    assert g["verdict"] == "fused" and g["unfused"] == [] and "gelu" in " ".join(g["fused"])


@pytest.mark.slow
def test_default_mode_gemm_verdict_is_not_fused(cpu_result: dict):
    (g,) = cpu_result["modes"][1]["gemms"]
    assert g["verdict"] in ("partial", "unfused")
    assert any("gelu" in op for op in g["unfused"])


@pytest.mark.slow
def test_reduce_overhead_is_unavailable_on_cpu_with_reason(cpu_result: dict):
    m = cpu_result["modes"][3]
    assert m["status"] == "unavailable"
    assert "CUDA graphs" in m["error"] and "GPU" in m["error"]


@pytest.mark.slow
def test_terminal_summary_printed(cpu_run: Path):
    out = (cpu_run / "cli-stdout.txt").read_text()
    assert "max-autotune:CPP" in out and "GEMMs" in out
    err = (cpu_run / "cli-stderr.txt").read_text()
    assert "report:" in err and "tensorboard --logdir" in err


@pytest.mark.slow
def test_torch_tb_profiler_loads_every_mode(cpu_run: Path):
    from torch_tb_profiler import io as tbio
    from torch_tb_profiler.profiler.loader import RunLoader

    cache = tbio.Cache()
    for mode in ("eager", "default", "max-autotune_CPP"):
        run = RunLoader(mode, str(cpu_run / "tb" / mode), cache).load()
        assert run.workers == ["kernelscope"], run.workers
        views = {v.display_name for v in run.views}
        assert "Overview" in views and "Operator" in views


def test_torch_tb_profiler_kernel_view_on_a_real_h200_capture(tmp_path: Path):
    # The CPU has no Kernel view; a kernelscope capture from the H200 has one, with the template's name.
    from torch_tb_profiler import io as tbio
    from torch_tb_profiler.profiler.loader import RunLoader

    from .conftest import DATA

    src = DATA / "h200-torch2.11-kernelscope" / "linear_gelu" / "tb" / "max-autotune"
    run = RunLoader("max-autotune", str(src), tbio.Cache()).load()
    views = {v.display_name for v in run.views}
    assert "Kernel" in views
    profile = run.get_profile("kernelscope", next(iter(run.get_spans("kernelscope") or [None])))
    # the plugin's own kernel table: one row per kernel, the fused template among them with its 3 calls
    rows = profile.kernel_table["data"]["rows"]
    by_name = {row[0]: row for row in rows}
    assert "triton_tem_fused_addmm_gelu_t_0" in by_name
    assert by_name["triton_tem_fused_addmm_gelu_t_0"][2] == 3  # Calls: one per profiled step
    assert [r[0] for r in profile.kernel_pie["total"]["rows"]] == ["triton_tem_fused_addmm_gelu_t_0"]
