"""kernelscope upgrade-check end to end on the CPU: a venv made in this session (torch, no kernelscope) as before,
this interpreter as after; and this interpreter twice. Real subprocesses, real Inductor; one run each, shared."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kernelscope.capture.interpreter import SHIP_DIR

from .conftest import ROOT, run_cli_isolated
from .test_faults import assert_one_line_error

SAMPLE = str(ROOT / "samples" / "linear_gelu.py")
AUTOTUNE = "max-autotune:CPP"  # the C++ GEMM template: a deterministic epilogue fusion on 2 cores


def upgrade_check(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # From a folder without kernelscope in it (the workers put their working directory on sys.path, like -m).
    # one process per mode and side unless a test asks for more (the default of 5 would multiply the suite's time)
    with pytest.MonkeyPatch.context() as env:
        # One OpenMP thread per worker: with two, a parallel region waits a scheduler slice for a thread that
        # another process holds off its CPU, and the sample's ~45 µs call read 5-16 ms beside one busy process on
        # the 2-core machine (a side timed then reads hundreds of times slower than the other, identical one). One
        # thread slows by its share of a CPU only; these tests check the comparison and the gate, not the speed.
        env.setenv("OMP_NUM_THREADS", "1")
        return run_cli_isolated("upgrade-check", SAMPLE, "--device", "cpu", "--repeats", "5", "--warmup", "2",
                                "--processes", "1", "--no-tensorboard", "--out", str(out), *args, cwd=out.parent)


@pytest.fixture(scope="module")
def venv_upgrade(torch_only_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("upgrade") / "out"
    proc = upgrade_check(out, "--before", str(torch_only_python), "--modes", f"eager,{AUTOTUNE}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out.parent / "stdout.txt").write_text(proc.stdout)
    (out.parent / "stderr.txt").write_text(proc.stderr)
    return out


def data(out: Path) -> dict:
    return json.loads((out / "compare.json").read_text())


def result(out: Path, side: str) -> dict:
    return json.loads((out / side / "result.json").read_text())


@pytest.mark.slow
def test_writes_both_result_dirs_and_the_comparison(venv_upgrade: Path):
    for side in ("before", "after"):
        for name in ("result.json", "report.html", "summary.md"):
            assert (venv_upgrade / side / name).is_file(), (side, name)
    for name in ("compare.json", "compare.md", "compare.html"):
        assert (venv_upgrade / name).is_file()
    # before ran the shipped worker under the venv; after ran kernelscope's own module under this interpreter
    assert (venv_upgrade / "before" / SHIP_DIR / "kernelscope" / "capture" / "worker.py").is_file()
    assert not (venv_upgrade / "after" / SHIP_DIR).exists()


@pytest.mark.slow
def test_records_each_sides_interpreter(venv_upgrade: Path, torch_only_python: Path):
    import torch

    before, after = result(venv_upgrade, "before"), result(venv_upgrade, "after")
    assert before["environment"]["interpreter"]["path"] == str(torch_only_python)
    assert after["environment"]["interpreter"]["path"] == os.path.abspath(sys.executable)
    for r in (before, after):
        assert r["environment"]["interpreter"]["torch"] == r["environment"]["torch"] == torch.__version__
    assert (before["settings"]["upgrade_check"], after["settings"]["upgrade_check"]) == ("before", "after")
    assert data(venv_upgrade)["comparable"]["before"]["interpreter"] == str(torch_only_python)


@pytest.mark.slow
def test_mode_processes_interleave_alternating_the_side_that_goes_first(venv_upgrade: Path):
    stderr = (venv_upgrade.parent / "stderr.txt").read_text()
    order = re.findall(r"^\[\d/4\] (\S+) \((before|after), torch", stderr, flags=re.MULTILINE)
    assert order == [("eager", "before"), ("eager", "after"), (AUTOTUNE, "after"), (AUTOTUNE, "before")]


@pytest.mark.slow
def test_comparison_per_mode_and_per_gemm(venv_upgrade: Path):
    d = data(venv_upgrade)
    assert [m["name"] for m in d["modes"]] == ["eager", AUTOTUNE]
    assert d["comparable"]["upgrade"] is False  # the same torch on both sides
    auto = d["modes"][1]
    assert auto["status"] == {"before": "ok", "after": "ok"}
    assert auto["latency"]["method"] == "bootstrap" and auto["latency"]["before"]["samples"] == 5
    assert auto["kernels_per_iter"] == {"before": 1, "after": 1}
    assert auto["compile_s"]["before"] > 0.5 and auto["compile_s"]["after"] > 0.5
    assert auto["peak_memory_bytes"]["before"] > 0 and auto["peak_memory_bytes"]["after"] > 0
    assert auto["numerics"]["after"]["status"] == "pass"
    (g,) = auto["gemms"]
    # the engine names the GEMM's module (samples/linear_gelu.py's `linear`), so both sides match by module path
    assert (g["label"], g["matched_by"], g["change"]) == ("linear", "module", "same")
    for side in ("before", "after"):
        assert (g[side]["backend"], g[side]["verdict"], g[side]["fused"]) == (
            "Inductor C++ template", "fused", ["bias", "gelu"])
    (eg,) = d["modes"][0]["gemms"]
    assert eg["before"]["backend"] == eg["after"]["backend"] == "ATen CPU"


@pytest.mark.slow
def test_summary_answers_first_on_stdout_md_and_html(venv_upgrade: Path):
    import torch

    d = data(venv_upgrade)
    assert d["summary"][0].startswith(f"Upgrade check: torch {torch.__version__} → {torch.__version__} on ")
    assert d["summary"][0].endswith(", float32")
    assert d["summary"][1].startswith("Verdict: ")
    assert d["summary"][2].startswith(f"{AUTOTUNE}: GEMM `linear` unchanged: Inductor C++ template, "
                                      "fused bias+gelu; ")
    assert d["summary"][2].endswith("; numerics within tolerance")
    assert (venv_upgrade.parent / "stdout.txt").read_text().splitlines() == d["summary"]
    md = (venv_upgrade / "compare.md").read_text()
    assert md.startswith("## Upgrade check: torch ")
    html = (venv_upgrade / "compare.html").read_text()
    assert "unchanged: Inductor C++ template, fused bias+gelu" in html
    assert 'href="before/report.html"' in html


@pytest.mark.slow
def test_check_gates_on_the_upgrade_dir_and_on_after(venv_upgrade: Path):
    proc = run_cli_isolated("check", str(venv_upgrade), "--expect-fused", "all", "--mode", AUTOTUNE,
                            "--max-regression", "50")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == f"ok: --expect-fused, --max-regression hold for {AUTOTUNE}"
    proc = run_cli_isolated("check", str(venv_upgrade / "after"), "--expect-fused", "none", "--mode", AUTOTUNE)
    assert proc.returncode == 1
    assert "fused bias, gelu, expected no epilogue fusion" in proc.stdout


@pytest.mark.slow
def test_same_interpreter_twice(tmp_path: Path):
    out = tmp_path / "same"
    proc = upgrade_check(out, "--before", sys.executable, "--after", sys.executable, "--modes", "eager")
    assert proc.returncode == 0, proc.stderr[-3000:]
    d = data(out)
    assert d["comparable"]["before"]["interpreter"] == d["comparable"]["after"]["interpreter"] == \
        os.path.abspath(sys.executable)
    (eager,) = d["modes"]
    assert eager["status"] == {"before": "ok", "after": "ok"} and eager["status_change"] == ""
    assert eager["kernels_per_iter"] == {"before": 2, "after": 2}
    assert eager["gemms"][0]["change"] == "same"
    # both sides ran the shipped worker (an explicit --after is another interpreter, even when it is this one)
    assert (out / "before" / SHIP_DIR).is_dir() and (out / "after" / SHIP_DIR).is_dir()


@pytest.mark.parametrize("side", ["--before", "--after"])
def test_a_bad_interpreter_stops_before_anything_runs(tmp_path: Path, side: str):
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "v")], check=True, timeout=120)
    bad = str(tmp_path / "v" / "bin" / "python")  # no torch there
    args = ["--before", bad] if side == "--before" else ["--before", sys.executable, "--after", bad]
    out = tmp_path / "out"
    proc = upgrade_check(out, *args)
    assert_one_line_error(proc, 2, f"{side} {bad} (Python", "cannot import torch")
    assert not out.exists()


def test_before_is_required(tmp_path: Path):
    proc = upgrade_check(tmp_path / "out")
    assert_one_line_error(proc, 2, "Missing option '--before'")


@pytest.mark.slow
def test_upgrade_check_times_both_sides_in_several_interleaved_processes(tmp_path: Path):
    # --processes 2: each side's eager is timed in 2 processes; the later ones run after both first ones, so the
    # sides interleave (before, after, after, before ... by start time), and each side's latency is the median of
    # its processes' medians with an across-process interval.
    out = tmp_path / "out"
    proc = upgrade_check(out, "--before", sys.executable, "--after", sys.executable, "--modes", "eager",
                         "--processes", "2")
    assert proc.returncode == 0, proc.stderr
    starts = []
    for side in ("before", "after"):
        rec = json.loads((out / side / "modes" / "eager" / "capture.json").read_text())
        assert [p["process"] for p in rec["processes"]] == [1, 2]
        assert all(p["status"] == "ok" for p in rec["processes"])
        starts += [(p["started_at"], side, p["process"]) for p in rec["processes"]]
        res = json.loads((out / side / "result.json").read_text())
        lat = res["modes"][0]["latency_ms"]
        assert lat["processes"] == 2 and len(lat["per_process"]) == 2
    order = [(side, k) for _, side, k in sorted(starts)]
    assert order[:2] == [("before", 1), ("after", 1)] and {o[1] for o in order[2:]} == {2}
