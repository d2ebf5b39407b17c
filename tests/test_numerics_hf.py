"""Numerics end to end on the CPU: a Hugging Face causal LM (token inputs, keyword inputs, the
``model.layers.N`` layout) profiled with ``--dtype bfloat16`` in eager and default.

Before: the worker took the tolerance from the inputs' dtype (int64 ``input_ids`` -> float32's 1e-4), so a bf16
run's compiled mode "failed" against eager with 69-90% of its elements outside float32's tolerance while the
Numerics table said pass; and every module path carried kernelscope's keyword-inputs wrapper
(``model.model.layers.0.self_attn.q_proj``), which ``get_submodule`` on the user's model does not find.
One compiled run (tests/zoo/models/hf_llama.py at its tiny size) shared by every test here.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from .conftest import ROOT, run_cli

MODEL = ROOT / "tests" / "zoo" / "models" / "hf_llama.py"
pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def llama_bf16(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("hf-llama") / "out"
    proc = run_cli("profile", str(MODEL), "--device", "cpu", "--dtype", "bfloat16", "--modes", "eager,default",
                   "--repeats", "3", "--warmup", "1", "--steps", "1", "--processes", "1", "--no-tensorboard",
                   "--out", str(out), env={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    (out / "stdout.txt").write_text(proc.stdout)
    return out


def _result(out: Path) -> dict:
    return json.loads((out / "result.json").read_text())


def _modes(out: Path) -> dict[str, dict]:
    return {m["name"]: m for m in _result(out)["modes"]}


def test_a_bf16_token_model_is_judged_by_bf16_tolerance(llama_bf16: Path):
    # THEN the run computes in bf16 (not its int64 inputs' float32) and every comparison uses bf16's row
    assert _result(llama_bf16)["dtype"] == "bfloat16"
    for name, m in _modes(llama_bf16).items():
        cap = json.loads((llama_bf16 / "modes" / name / "capture.json").read_text())
        assert cap["dtype"] == "bfloat16" and cap["config"]["dtype"] == "bfloat16", name
        tol = m["numerics"]["tolerance"]
        assert (tol["dtype"], tol["atol"], tol["same_tol"]) == ("bfloat16", 0.06, 0.001), name
        assert tol["rule"] == "torch._dynamo.utils.same (torch 2.14.1)"
        # the float64 reference is made from the model file's float32 weights, as torch's benchmark suite makes it
        assert m["numerics"]["reference"] == {"dtype": "float64", "device": "cpu", "skipped": "", "weights": "float32",
                                              "float64_error": ""}


def test_numerics_pass_against_eager_and_the_reference_with_the_output_named(llama_bf16: Path):
    default = _modes(llama_bf16)["default"]["numerics"]
    assert default["vs_eager"]["pass"] is True and default["vs_eager"]["mismatch_fraction"] == 0.0
    assert default["vs_reference"]["pass"] is True
    (logits,) = default["outputs"]  # past_key_values is a Cache object, not a tensor
    assert (logits["name"], logits["shape"], logits["dtype"]) == ("logits", [1, 16, 512], "bfloat16")
    vr = logits["vs_reference"]
    assert vr["pass"] is True and vr["multiplier"] == 3.0 and vr["rmse"] <= vr["bound_rmse"]
    assert 0 < logits["rms"] <= logits["max_abs_value"]
    # the report's Modes table and Numerics table say the same: pass (it said "fail (abs 0.0039)" beside "pass")
    summary = (llama_bf16 / "summary.md").read_text()
    row = next(ln for ln in summary.splitlines() if ln.startswith("| default | ok"))
    assert "| pass (abs" in row and "fail" not in row
    assert "| default | `logits` 1×16×512 bfloat16 | pass | " in summary


def test_every_gemm_module_path_is_found_in_the_users_model(llama_bf16: Path):
    # GIVEN the model the model file's get_model() returns
    spec = importlib.util.spec_from_file_location("hf_llama_for_paths", MODEL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.get_model()
    for name, m in _modes(llama_bf16).items():
        paths = [g["module"] for g in m["gemms"]]
        # THEN each mode names its GEMMs, and get_submodule finds every path (no kernelscope wrapper in them)
        assert len(paths) == 15 and all(paths), (name, paths)
        for p in paths:
            model.get_submodule(p)
        assert "model.layers.0.self_attn.q_proj" in paths and "lm_head" in paths
        assert not any(p.startswith("model.model.") for p in paths)
        labels = [g["label"] for g in m.get("gemm_groups", ())]
        assert all(not lb.startswith("model.model.") for lb in labels), labels
    # the capture says its paths are the user's model's, and its parameter names are get_model()'s
    cap = json.loads((llama_bf16 / "modes" / "default" / "capture.json").read_text())
    assert cap["module_prefix"] == "" and set(cap["param_names"]) >= {n for n, _ in model.named_parameters()}
    stdout = (llama_bf16 / "stdout.txt").read_text()
    assert "model.model." not in stdout and "model.layers.0-1.self_attn.q_proj ×2" in stdout
