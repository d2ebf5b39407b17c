"""The upgrade checklist end to end on the CPU with real Inductor: a shape sweep with the dynamic mode (recompiles
counted from Dynamo), the get_input_sweep() hook, numerics of a model that loses precision in fp16 (eager vs
compiled vs a float64 reference, NaN/Inf), cold vs warm compile (Inductor cache hits), an AUTOTUNE table from CPU
max-autotune, and `kernelscope calibrate` feeding the roofline. Each compiled run is one session fixture shared by
its tests."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from kernelscope.report.words import recommendation_text
from kernelscope.result_file import load_result

from .conftest import run_cli

# One OpenMP thread per worker: these tests check counters and structure, not speed, and 2 cores shared with
# Inductor's compile workers (and other test runs) make eager timings of tiny ops swing when threads spin-wait.
ENV = {"OMP_NUM_THREADS": "1"}
FAST = ("--device", "cpu", "--repeats", "5", "--warmup", "3", "--steps", "1", "--no-tensorboard", "--processes", "1")

LINEAR = '''
import torch

batch_size = 4
features = 32


def get_model():
    return torch.nn.Sequential(torch.nn.Linear(features, features), torch.nn.GELU())


def get_inputs():
    return [torch.randn(batch_size, features)]
'''


def write(tmp: Path, name: str, source: str) -> Path:
    p = tmp / name
    p.write_text(textwrap.dedent(source))
    return p


def load(out: Path) -> dict:
    return json.loads((out / "result.json").read_text())


# ------------------------------------------------------------------------------------------------ sweep + dynamic
@pytest.fixture(scope="session")
def sweep_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sweep")
    model = write(tmp, "linear.py", LINEAR)
    out = tmp / "out"
    proc = run_cli("profile", str(model), *FAST, "--modes", "eager,default,dynamic", "--sweep", "batch_size=1,4,8",
                   "--out", str(out), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out / "stdout.txt").write_text(proc.stdout)
    (out / "stderr.txt").write_text(proc.stderr)
    return out


@pytest.mark.slow
def test_sweep_points_in_result(sweep_run: Path):
    r = load(sweep_run)
    assert [p["params"] for p in r["points"]] == [{"batch_size": 1}, {"batch_size": 4}, {"batch_size": 8}]
    assert [p["label"] for p in r["points"]] == ["batch_size=1", "batch_size=4", "batch_size=8"]
    for p in r["points"]:
        assert [m["name"] for m in p["modes"]] == ["eager", "default", "dynamic"]
        assert all(m["status"] == "ok" and m["latency_ms"]["median"] > 0 for m in p["modes"]), p["label"]
        assert all(m["kernels_per_iter"] >= 1 for m in p["modes"])
    assert [m["name"] for m in r["modes"]] == ["eager", "default", "dynamic"]  # the first point, for one-shape tools
    assert r["modes"][0]["trace"] == r["points"][0]["modes"][0]["trace"]
    assert r["settings"]["sweep"] == {"batch_size": [1, 4, 8]}
    # Each static mode ran at each shape in its own worker; its inputs had the shape asked for.
    for i, b in enumerate((1, 4, 8)):
        cap = json.loads((sweep_run / "points" / f"p{i}-batch_size-{b}" / "modes" / "default" / "capture.json")
                         .read_text())
        assert cap["inputs"] == f"{b}x32" and cap["point"]["params"] == {"batch_size": b}
        # Inductor's compile workers were stopped before timing; the kept window's halves agree or a note says not.
        assert cap["compile_workers_stopped"] is True
        lat = cap["latency_ms"]
        assert 1 <= lat["windows"] <= 3 and lat["calls_per_sample"] >= 1 and len(lat["samples"]) == 5
        assert lat["drift"] <= 0.10 or any("drifted" in n for n in cap["notes"])
    from kernelscope.capture_record import load_capture

    eager_cap = load_capture(sweep_run / "points" / "p0-batch_size-1" / "modes" / "eager" / "capture.json")
    assert eager_cap.compile_workers_stopped is False and eager_cap.compile is None  # eager compiles nothing


@pytest.mark.slow
def test_dynamic_mode_counts_recompiles_across_the_sweep_in_one_process(sweep_run: Path):
    r = load(sweep_run)
    dyn = [next(m for m in p["modes"] if m["name"] == "dynamic") for p in r["points"]]
    # Dynamo specialises size 1: batch 1 compiles a static graph, batch 4 fails its guard and recompiles with a
    # symbolic batch, which batch 8 reuses (its timed and profiled calls recompile nothing more).
    assert [d["dynamo"]["recompiles"] for d in dyn] == [0, 1, 0]
    assert [d["dynamo"]["graphs"] for d in dyn] == [1, 1, 0]
    (guard,) = dyn[1]["dynamo"]["guard_failures"]
    assert "size mismatch at index 0" in guard and "expected 1, actual 4" in guard
    assert dyn[1]["inductor_code"] != dyn[0]["inductor_code"]
    assert dyn[2]["inductor_code"] == dyn[1]["inductor_code"]
    cap = json.loads((sweep_run / "points" / "p2-batch_size-8" / "modes" / "dynamic" / "capture.json").read_text())
    assert cap["code_reused"] is True
    # Batch 8 compiled nothing: its first call is not a compile time.
    assert dyn[2]["compile"]["reused"] is True and dyn[2]["compile"]["cold_s"] is None
    assert dyn[2]["compile"]["first_call_s"] == dyn[2]["first_call_s"] < dyn[1]["compile"]["cold_s"]
    assert not any(dyn[2]["compile"]["cache"]["cold"].values())
    assert not any(d["compile"]["reused"] for d in dyn[:2])
    code = (sweep_run / dyn[1]["inductor_code"][0]).read_text()
    assert re.search(r"assert_size_stride\(\w+, \(s\d+, 32\)", code)  # the batch is a symbol (s33, ...)
    assert all(d["log"] == "modes/dynamic/log.txt" for d in dyn)
    assert (sweep_run / "modes" / "dynamic" / "log.txt").is_file()
    assert dyn[0]["config"]["dynamic"] is True
    # Static compiles: a fresh process per shape, one graph each, never a recompile.
    static = [next(m for m in p["modes"] if m["name"] == "default") for p in r["points"]]
    assert [(s["dynamo"]["graphs"], s["dynamo"]["recompiles"]) for s in static] == [(1, 0)] * 3
    summary = r["dynamic"]
    assert summary["mode"] == "dynamic" and summary["static_mode"] == "default" and summary["recompiles"] == 1
    assert [p["recompiles"] for p in summary["points"]] == [0, 1, 0]
    assert all(p["ratio"] is not None and p["call"] in ("faster", "slower", "within noise")
               for p in summary["points"])


@pytest.mark.slow
def test_recommendation_per_shape(sweep_run: Path):
    r = load(sweep_run)
    recs = r["recommendation"]
    assert [rec["params"] for rec in recs] == [p["params"] for p in r["points"]]
    # each shape's recommendation says why in words
    assert all(recommendation_text(rec) for rec in load_result(sweep_run).recommendation)
    for rec in recs:
        assert rec["mode"] in ("eager", "default", "dynamic")
        assert {c["mode"] for c in rec["candidates"]} == {"eager", "default", "dynamic"}
        chosen = next(c for c in rec["candidates"] if c["mode"] == rec["mode"])
        assert chosen["eligible"]
        if rec["mode"] != "eager":  # a compiled mode only when faster than eager beyond noise
            assert chosen["call"] == "faster" and chosen["low"] > 1.0


@pytest.mark.slow
def test_sweep_reports(sweep_run: Path):
    html = (sweep_run / "report.html").read_text()
    assert 'id="sweep"' in html and 'id="dynamic"' in html and "Speedup vs eager across shapes" in html
    assert "batch_size (log scale)" in html
    md = (sweep_run / "summary.md").read_text()
    assert "### Shape sweep (3 points" in md and "### Recommendation" in md and "### Dynamic shapes" in md
    out = (sweep_run / "stdout.txt").read_text()
    assert "shape sweep: 3 points" in out and "recommendation @ batch_size=4" in out
    progress = (sweep_run / "stderr.txt").read_text()
    assert re.search(r"dynamic @ batch_size=8: ok · no recompile \(first call \d", progress), progress
    for point in ("p0-batch_size-1", "p1-batch_size-4", "p2-batch_size-8"):
        assert list((sweep_run / "tb" / point / "dynamic").glob("kernelscope.*.pt.trace.json.gz"))


# ------------------------------------------------------------------------------------------------ input hook
HOOK = LINEAR + '''

def get_input_sweep():
    # one point by constants, one by explicit inputs
    return [{"batch_size": 2}, [torch.randn(3, features)]]
'''


@pytest.mark.slow
def test_get_input_sweep_hook_points(tmp_path: Path):
    model = write(tmp_path, "hook.py", HOOK)
    out = tmp_path / "out"
    proc = run_cli("profile", str(model), *FAST, "--modes", "eager", "--out", str(out), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r = load(out)
    assert [p["params"] for p in r["points"]] == [{"batch_size": 2}, {"inputs": "3x32"}]
    inputs = [json.loads((out / "points" / d / "modes" / "eager" / "capture.json").read_text())["inputs"]
              for d in ("p0-batch_size-2", "p1-inputs-3x32")]
    assert inputs == ["2x32", "3x32"]
    assert r["settings"]["input_sweep"] is True

    bad = write(tmp_path, "bad.py", LINEAR + "\n\ndef get_input_sweep():\n    return [{'nope': 1}]\n")
    proc = run_cli("profile", str(bad), *FAST, "--modes", "eager", "--out", str(tmp_path / "o2"), env=ENV)
    assert proc.returncode == 2
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("kernelscope: error: get_input_sweep() entry 0 names 'nope'"), proc.stderr


def test_bad_sweep_options_are_usage_errors(tmp_path: Path):
    model = write(tmp_path, "m.py", LINEAR)
    for args, needle in ((("--sweep", "nope=1,2"), "no module-level constant 'nope'"),
                         (("--sweep", "batch_size=1", "--set", "batch_size=2"), "both --set and --sweep")):
        proc = run_cli("profile", str(model), *FAST, *args, "--out", str(tmp_path / "o"))
        assert proc.returncode == 2 and needle in proc.stderr, proc.stderr


# ------------------------------------------------------------------------------------------------ numerics + cache
LOSSY = '''
"""Loses precision in fp16 eager on purpose: eager rounds every intermediate to fp16, Inductor keeps a fused
chain in float32 and rounds once at the end."""
import torch

n = 256


class Lossy(torch.nn.Module):
    def forward(self, x):
        shifted = (x + 1000.0) - 1000.0  # fp16 spacing at 1000 is 0.5: eager keeps 0, 0.5 or 1 of x
        scaled = (x * 1e5) / 1e5  # fp16 overflows (> 65504) for x > 0.655: Inf in eager
        return shifted, scaled


def get_model():
    return Lossy()


def get_inputs():
    return [torch.rand(n)]
'''


@pytest.fixture(scope="session")
def lossy_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("lossy")
    model = write(tmp, "lossy.py", LOSSY)
    out = tmp / "out"
    # --no-freezing: Inductor bypasses its FX-graph cache when freezing (constants are part of the graph).
    proc = run_cli("profile", str(model), *FAST, "--modes", "eager,default", "--dtype", "float16", "--no-freezing",
                   "--warm-compile", "--out", str(out), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def modes_of(r: dict) -> dict:
    return {m["name"]: m for m in r["modes"]}


@pytest.mark.slow
def test_fp16_eager_loses_precision_and_overflows_against_the_float64_reference(lossy_run: Path):
    eager = modes_of(load(lossy_run))["eager"]
    num = eager["numerics"]
    # the reference is made from the model file's float32 inputs, before --dtype float16 cast them
    assert num["reference"] == {"dtype": "float64", "device": "cpu", "skipped": "", "weights": "float32",
                                "float64_error": ""}
    assert num["tolerance"]["dtype"] == "float16" and num["tolerance"]["atol"] == 1e-2
    assert num["vs_eager"]["pass"] is True and num["vs_eager"]["max_abs"] == 0  # deterministic
    vr = num["vs_reference"]
    overflowed = vr["new_nonfinite"]
    assert 0 < overflowed < 256 and vr["nonfinite"] == overflowed  # Inf where float64 is finite
    assert vr["pass"] is False and "NaN/Inf where the float64 reference is finite" in vr["reason"]
    assert vr["max_abs"] > 0.1  # (x + 1000) - 1000 on a 0.5 grid
    assert any("NaN or Inf" in n for n in eager["notes"])


@pytest.mark.slow
def test_compiled_fp16_differs_from_eager_but_is_closer_to_the_reference(lossy_run: Path):
    r = load(lossy_run)
    default = modes_of(r)["default"]
    num = default["numerics"]
    ve, vr = num["vs_eager"], num["vs_reference"]
    assert ve["pass"] is False and ve["mismatch_fraction"] > 0.3 and "outside atol 0.01" in ve["reason"]
    assert ve["nonfinite"] == 0  # no Inf: the chain ran in float32
    assert vr["pass"] is True and vr["mismatch_fraction"] == 0.0 and vr["new_nonfinite"] == 0
    assert vr["max_abs"] < 1e-3 and vr["rmse"] < vr["eager_rmse"]
    # each output judged by torch's rule: "shifted" closer than eager, "scaled" against eager's Inf rmse
    assert [o["name"] for o in num["outputs"]] == ["[0]", "[1]"]
    assert all(o["vs_reference"]["pass"] for o in num["outputs"])
    # The report: the element-wise check vs eager "fail", the one call every table shows "pass" (more accurate
    # than eager). The Modes table shows that call too, not the vs-eager check's "fail".
    from kernelscope.report.context import build_context
    from kernelscope.result import run_from_json

    ctx = build_context(run_from_json(r))
    row = next(x for x in ctx.rows if x.name == "default")
    nrow = next(n for n in ctx.numerics if n.mode == "default")
    assert nrow.vs_eager.passed is False
    assert nrow.verdict == "pass" and "closer to the reference than eager" in nrow.reason
    assert row.numerics is nrow.call and row.numerics.status == "pass" and row.numerics.vs_eager is False
    (rec,) = r["recommendation"]
    cand = {c["mode"]: c for c in rec["candidates"]}
    assert cand["default"]["numerics"] == "pass"
    html = (lossy_run / "report.html").read_text()
    assert 'id="numerics"' in html and "float64 on cpu" in html and "differs from eager, not less accurate" in html


@pytest.mark.slow
def test_cold_then_warm_compile_hits_inductors_cache(lossy_run: Path):
    default = modes_of(load(lossy_run))["default"]
    comp = default["compile"]
    assert comp["cold_s"] == default["first_call_s"] and comp["cache_dir_fresh"] is True
    cold, warm = comp["cache"]["cold"], comp["cache"]["warm"]
    assert cold.get("fxgraph_cache_miss") == 1 and not cold.get("fxgraph_cache_hit")
    assert warm.get("fxgraph_cache_hit") == 1 and not warm.get("fxgraph_cache_miss")
    assert comp["warm_s"] > 0  # the counters above, not the two times, show the hit: both vary with the load
    assert (lossy_run / comp["warm_log"]).is_file() and comp["warm_log"] == "modes/default/log-warm.txt"
    assert not modes_of(load(lossy_run))["eager"]["compile"]  # nothing to compile
    md = (lossy_run / "summary.md").read_text()
    assert "### Compile and cache" in md and "`fxgraph_cache_hit` 1" in md


@pytest.mark.slow
def test_memory_compile_peak_apart_from_steady_state(lossy_run: Path):
    for m in load(lossy_run)["modes"]:
        mem = m["memory"]
        assert mem["first_call_peak_rss_bytes"] > 0 and mem["peak_rss_bytes"] > 0
        assert mem["process_peak_rss_bytes"] >= max(mem["peak_rss_bytes"], mem["first_call_peak_rss_bytes"],
                                                    mem["build_peak_rss_bytes"])
        # what the mode allocated, not the interpreter and torch: RSS growth over the RSS before the model was built
        assert m["peak_memory_bytes"] == mem["peak_rss_growth_bytes"] == mem["peak_rss_bytes"] - mem["rss_before_bytes"]
        assert mem["first_call_rss_growth_bytes"] == mem["first_call_peak_rss_bytes"] - mem["rss_before_bytes"]
        assert 0 < m["peak_memory_bytes"] < mem["peak_rss_bytes"] / 2


# ------------------------------------------------------------------------------------------------ calibrate + autotune
@pytest.fixture(scope="session")
def calibration(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("cal") / "calibration.json"
    proc = run_cli("calibrate", "--device", "cpu", "--size", "128", "--copy-mb", "4", "--repeats", "3",
                   "--out", str(path), env=ENV)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return path


@pytest.mark.slow
def test_calibrate_measures_cpu_ceilings(calibration: Path):
    data = json.loads(calibration.read_text())
    assert data["schema"] == "kernelscope.calibration/1"
    ((key, entry),) = data["devices"].items()
    assert key.startswith("cpu: ") and entry["kind"] == "cpu"
    assert entry["matmul_tflops"]["float32"] > 0 and entry["copy_gbps"] > 0
    assert entry["matmul_tflops_best"]["float32"] >= entry["matmul_tflops"]["float32"]
    assert "128x128x128" in entry["method"]["matmul"]


@pytest.fixture(scope="session")
def autotune_run(tmp_path_factory: pytest.TempPathFactory, calibration: Path) -> Path:
    tmp = tmp_path_factory.mktemp("autotune")
    model = write(tmp, "linear.py", LINEAR.replace("batch_size = 4", "batch_size = 8").replace("= 32", "= 64"))
    out = tmp / "out"
    # Freezing is on by default on the CPU: the linear becomes packed_linear, and with ATEN and CPP both in the
    # backends Inductor benchmarks MKL against its C++ template and prints the table.
    proc = run_cli("profile", str(model), *FAST, "--modes", "max-autotune:ATEN+CPP", "--calibration",
                   str(calibration), "--out", str(out), env=ENV)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.mark.slow
def test_cpu_max_autotune_table_is_captured_per_gemm(autotune_run: Path):
    (m,) = load(autotune_run)["modes"]
    (at,) = m["autotune"]
    assert at["op"] == "packed_linear" and at["gemm"] == "gemm0"
    assert {c["backend"] for c in at["choices"]} == {"C++", "ATen"}
    assert {c["name"] for c in at["choices"] if c["backend"] == "ATen"} == {"_mkl_linear"}
    timed = [c for c in at["choices"] if c["time_ms"] is not None]
    winner = min(timed, key=lambda c: c["time_ms"])
    assert at["winner"] == winner["name"] and at["winner_backend"] == winner["backend"]
    assert at["n_choices"] == 2 and at["missing_backends"] == []
    assert set(at["best_by_backend"]) == {"C++", "ATen"}
    html = (autotune_run / "report.html").read_text()
    assert f"{at['winner_backend']} won (2 choices)" in html


@pytest.mark.slow
def test_roofline_against_the_calibrated_cpu_ceiling(autotune_run: Path, calibration: Path):
    r = load(autotune_run)
    assert r["peaks"]["datasheet"] is None and r["peaks"]["calibrated"]["kind"] == "calibrated"
    assert r["settings"]["calibration"] == str(calibration)
    (g,) = r["modes"][0]["gemms"]
    rl = g["roofline"]
    assert (g["m"], g["n"], g["k"]) == (8, 64, 64)
    assert rl["flops"] == 2 * 8 * 64 * 64 and rl["peak_source"] == "calibrated"
    assert rl["tflops"] == pytest.approx(rl["flops"] / (g["time_us_per_iter"] * 1e-6) / 1e12)
    cal = json.loads(calibration.read_text())
    (entry,) = cal["devices"].values()
    assert rl["pct_peak_flops"] == pytest.approx(100 * rl["tflops"] / entry["matmul_tflops"]["float32"])
