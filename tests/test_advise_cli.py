"""`kernelscope profile --advise` and `kernelscope advise RUN_DIR` end to end on the CPU: one live run of
samples/fusion_advice.py (Linear + bias + GELU, a SwiGLU MLP, a Linear into a LayerNorm) under default, whose
candidates (Inductor's C++ GEMM template under max-autotune, with freezing) are profiled as modes of their own;
and the usage errors of `advise`, which start no worker."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from kernelscope.cli import main
from tests.conftest import DATA, ROOT, run_cli

SAMPLE = "samples/fusion_advice.py"
CANDIDATE = "max-autotune:CPP"


def cli(*args: str) -> int:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0)


@pytest.fixture(scope="module")
def advised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("advise") / "fusion_advice"
    # two processes: the candidate's second process joins the run's interleaved round beside default's
    proc = run_cli("profile", SAMPLE, "--device", "cpu", "--modes", "default", "--advise", "--processes", "2",
                   "--repeats", "5", "--warmup", "3", "--no-tensorboard", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out / "cli-stdout.txt").write_text(proc.stdout)
    (out / "cli-stderr.txt").write_text(proc.stderr)
    return out


def _advice(run: Path) -> dict[str, dict]:
    result = json.loads((run / "result.json").read_text())
    return {a["group"]: a for a in result["advice"] if a["mode"] == "default"}


@pytest.mark.slow
def test_profile_advise_proves_the_gelu_and_swiglu_fusions_by_a_run(advised: Path):
    result = json.loads((advised / "result.json").read_text())
    # GIVEN --modes default: the one candidate setting ran once as a mode of its own, timed in two processes like
    # default, from the model the run built once
    assert [m["name"] for m in result["modes"]] == ["default", CANDIDATE]
    assert result["settings"]["advice_modes"] == [CANDIDATE]
    cand = result["modes"][1]
    assert cand["status"] == "ok" and cand["latency_ms"]["processes"] == 2
    assert cand["config"]["inductor_config"]["max_autotune_gemm_backends"] == "CPP"
    assert cand["config"]["freezing"] is True
    assert (advised / "modes" / "max-autotune_CPP" / "process-2").is_dir()
    assert "loading the model (built once for this run)" in (advised / "cli-stderr.txt").read_text()
    advice = _advice(advised)
    assert set(advice) == {"fc", "mlp.gate_proj", "mlp.up_proj", "proj"}
    # THEN fc's bias and GELU, under default after an MKL GEMM, fused into the C++ template
    fc = advice["fc"]
    assert (fc["cause"], fc["unfused"]) == ("max-autotune-off", ["bias", "gelu"])
    (c,) = fc["candidates"]
    assert (c["setting"], c["mode_name"], c["fused"], c["unfused"]) == ("template", CANDIDATE, ["bias", "gelu"], [])
    assert c["options"] == {"max_autotune": True, "coordinate_descent_tuning": True,
                            "max_autotune_gemm_backends": "CPP", "freezing": True}
    # AND the whole model's latency against default, with its interval across the two runs' processes
    assert c["verdict"] in ("faster", "within-noise", "slower")
    assert c["low"] <= c["latency_ratio"] <= c["high"] and not c["between_runs"]
    assert c["compile_s"] > 0 and c["numerics_pass"] is True and c["backend"] == "Inductor C++ template"
    # AND SwiGLU: up_proj's template fused the product, gate_proj's SiLU and product run in it too
    up, gate = advice["mlp.up_proj"]["candidates"][0], advice["mlp.gate_proj"]["candidates"][0]
    assert (up["fused"], up["unfused"]) == (["mul"], [])
    assert (gate["elsewhere"], gate["unfused"]) == (["silu", "mul"], [])
    assert up["verdict"] == gate["verdict"] == c["verdict"]
    # AND the LayerNorm-ended GEMM: its bias runs inside the norm's reduction, no setting, nothing ran for it
    proj = advice["proj"]
    assert proj["candidates"] == [] and proj["no_setting"]["code"] == "ends-in-reduction"
    assert proj["cause"] == "dataflow.stop-reduction"
    # AND best is the candidate only where it was faster beyond noise
    assert fc["best"] == (CANDIDATE if c["verdict"] == "faster" else None)


@pytest.mark.slow
def test_the_reports_of_an_advised_run_show_the_advice(advised: Path):
    html = (advised / "report.html").read_text()
    md = (advised / "summary.md").read_text()
    out = (advised / "cli-stdout.txt").read_text()
    # THEN report.html has the table beside the GEMMs, summary.md a section, the terminal a line per group
    assert 'id="fusion-advice"' in html and html.index('id="fusion-advice"') > html.index('id="gemms"')
    assert "### Fusion advice" in md and "- **fc** (default): bias, gelu unfused" in md
    assert "no setting: bias ran inside" in md
    assert "advice fc (default): bias, gelu unfused (max-autotune off: a library GEMM ran)" in " ".join(out.split())


@pytest.mark.slow
def test_check_advice_gates_on_what_the_runs_proved(advised: Path):
    advice = _advice(advised)
    faster = [a for a in advice.values() if a["best"]]
    proc = run_cli("check", str(advised), "--advice")
    # THEN it fails exactly where a candidate fused and ran faster beyond noise, and checks the model's own mode
    assert all(a["candidates"][0]["low"] > 1 for a in faster)
    if faster:
        assert proc.returncode == 1 and "the model does not use it" in proc.stdout
        assert proc.stdout.count("default:") == len(faster)
    else:
        assert (proc.returncode, proc.stdout.strip()) == (0, "ok: --advice hold for default")
    # AND the candidate mode is checked only when named
    named = run_cli("check", str(advised), "--max-kernels-per-iter", "1000", "--mode", CANDIDATE)
    assert (named.returncode, named.stdout.strip()) == (0, f"ok: --max-kernels-per-iter hold for {CANDIDATE}")


def _finished_without_the_candidate(advised: Path, to: Path) -> Path:
    """The advised run as a plain `profile --modes default` would have left it (one process per mode)."""
    shutil.copytree(advised, to)
    shutil.rmtree(to / "modes" / "max-autotune_CPP")
    result = json.loads((to / "result.json").read_text())
    result["modes"] = [m for m in result["modes"] if m["name"] == "default"]
    result["advice"] = []
    result["settings"].pop("advice_modes")
    result["settings"]["processes"] = 1
    (to / "result.json").write_text(json.dumps(result))
    return to


@pytest.mark.slow
def test_advise_profiles_only_the_candidates_of_a_finished_run(advised: Path, tmp_path: Path):
    run = _finished_without_the_candidate(advised, tmp_path / "run")
    before = json.loads((run / "result.json").read_text())["modes"][0]
    proc = run_cli("advise", str(run), "--no-tensorboard")
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads((run / "result.json").read_text())
    # THEN the candidate ran once, into the run's directory; default is the run's own, not measured again
    assert [m["name"] for m in result["modes"]] == ["default", CANDIDATE]
    assert result["modes"][0]["latency_ms"] == before["latency_ms"]
    assert (run / "modes" / "max-autotune_CPP" / "capture.json").is_file()
    assert "default: started" not in proc.stderr
    fc = _advice(run)["fc"]["candidates"][0]
    # AND compared with default between the two runs (each run's host drift in the interval)
    assert fc["fused"] == ["bias", "gelu"] and fc["between_runs"] is True
    assert fc["low"] <= fc["latency_ratio"] <= fc["high"]
    assert _advice(run)["proj"]["no_setting"]["code"] == "ends-in-reduction"


@pytest.mark.slow
def test_advise_lists_what_the_budget_left_out(advised: Path, tmp_path: Path):
    run = _finished_without_the_candidate(advised, tmp_path / "run")
    out = tmp_path / "out"
    proc = run_cli("advise", str(run), "--advise-budget", "0", "--out", str(out), "--no-tensorboard")
    assert proc.returncode == 0, proc.stderr[-3000:]
    # THEN nothing ran, the candidate says why, and --out holds the reports with the run's modes' files linked
    assert not (out / "modes").exists() and not (run / "modes" / "max-autotune_CPP").exists()
    fc = _advice(out)["fc"]["candidates"][0]
    assert fc["verdict"] == "not-run" and fc["why"]["code"] == "over-budget"
    assert fc["why"]["args"]["budget_s"] == 0
    default = json.loads((out / "result.json").read_text())["modes"][0]
    assert default["log"] and (out / default["log"]).resolve() == (run / "modes" / "default" / "log.txt").resolve()
    assert f"not run: {CANDIDATE}" in proc.stderr


# ---------------------------------------------------------------------------------------------- usage errors
def test_advise_needs_a_run_of_a_model_file(tmp_path: Path, capsys):
    assert cli("advise", str(tmp_path)) == 2
    assert "result.json" in capsys.readouterr().err
    sweep = tmp_path / "sweep"
    shutil.copytree(DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu-sweep", sweep)
    assert cli("advise", str(sweep)) == 2
    assert "is a sweep: advice profiles a run of one shape" in capsys.readouterr().err


def test_advise_refuses_a_model_file_changed_since_the_run(tmp_path: Path, capsys):
    run = tmp_path / "run"
    shutil.copytree(DATA / "h200-torch2.11-kernelscope-run" / "linear_gelu", run)
    result = json.loads((run / "result.json").read_text())
    result["settings"]["model_sha256"] = hashlib.sha256((ROOT / "samples" / "linear_gelu.py").read_bytes()).hexdigest()
    (run / "result.json").write_text(json.dumps(result))
    model = tmp_path / "model.py"
    model.write_text((ROOT / "samples" / "linear_gelu.py").read_text() + "\n# changed\n")
    assert cli("advise", str(run), "--model", str(tmp_path / "missing.py")) == 2
    assert "is not here" in capsys.readouterr().err
    assert cli("advise", str(run), "--model", str(model)) == 2
    err = capsys.readouterr().err
    assert "changed since the run" in err and not (run / "modes" / "max-autotune_TRITON").exists()


def test_profile_advise_takes_one_shape(capsys):
    assert cli("profile", str(ROOT / SAMPLE), "--advise", "--sweep", "batch_size=8,16", "--device", "cpu") == 2
    assert "--advise profiles one shape" in capsys.readouterr().err
