"""Every GEMM under the name of the module that called it, the same in eager and compiled: recorded CPU runs of zoo
models whose GEMMs have no weight of their own or share one (tests/data/cpu-torch2.14.1/
<model>_eager_default_bf16.tar.gz, see the README there): an LM head tied to the token embedding (BART, Gemma-2),
explicit attention's bmm's (Gemma-2), nn.MultiheadAttention's projections (ViT), windowed attention's qkv / proj
and bmm's run from the attention module's own function (Swin) and a mixture of experts (Mixtral). The paths are
looked up on the model ``get_model()`` of the model file returns, as a user would."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from .zoo_fixtures import extract_run, path_differences

pytest.importorskip("transformers")
pytest.importorskip("torchvision")

ROOT = Path(__file__).resolve().parent
CPU = ROOT / "data" / "cpu-torch2.14.1"
MODELS = ROOT / "zoo" / "models"
RUNS = ("hf_gemma2", "hf_bart", "tv_vit_mha", "tv_swin", "hf_mixtral")

_modes: dict[str, dict[str, Any]] = {}
_models: dict[str, Any] = {}


def modes(name: str) -> dict[str, Any]:
    """The run's ModeResults by mode name, analysed from its capture files."""
    from kernelscope.analysis.mode import build_mode_result

    if name not in _modes:
        run = extract_run(CPU / f"{name}_eager_default_bf16.tar.gz")
        caps = [json.loads(p.read_text()) for p in sorted(run.glob("modes/*/capture.json"))]
        _modes[name] = {c["mode"]: build_mode_result(run, c) for c in caps}
    return _modes[name]


def model(name: str) -> Any:
    if name not in _models:
        spec = importlib.util.spec_from_file_location(f"zoo_{name}", MODELS / f"{name}.py")
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        _models[name] = mod.get_model()
    return _models[name]


def shape(g: Any) -> tuple[Any, ...]:
    return (g.kind, g.m, g.n, g.k, g.batch)


@pytest.mark.parametrize("name", RUNS)
def test_every_gemm_of_every_mode_has_a_path_the_user_can_look_up(name):
    ms = modes(name)
    assert set(ms) == {"eager", "default"}
    for mode, m in ms.items():
        assert m.gemms, mode
        for g in m.gemms:
            assert g.module, (mode, g.id, g.op, shape(g))
            model(name).get_submodule(g.module)  # AttributeError on a path get_submodule cannot find


@pytest.mark.parametrize("name", RUNS)
def test_the_same_gemm_has_the_same_path_in_eager_and_compiled(name):
    eager, default = ([(*shape(g), g.module) for g in modes(name)[m].gemms] for m in ("eager", "default"))
    assert path_differences(eager, default) == []


def test_a_tied_lm_head_is_lm_head_in_every_mode():
    # BART and Gemma-2 tie the LM head's weight to the token embedding, whose name comes first in the model
    # (model.shared / model.embed_tokens): the call, not the weight's first name, names the GEMM
    for name, n in (("hf_bart", 512), ("hf_gemma2", 512)):
        for mode, m in modes(name).items():
            (head,) = [g for g in m.gemms if g.n == n]
            assert head.module == "lm_head", (name, mode, head.module)
        (head,) = [g for g in modes(name)["default"].gemms if g.n == n]
        assert any(e.rule == "provenance.caller" for e in head.evidence)


def test_attention_bmms_are_their_attention_modules():
    import torch

    for name, kind in (("hf_gemma2", "Gemma2Attention"), ("tv_swin", "ShiftedWindowAttention")):
        for mode, m in modes(name).items():
            bmms = [g for g in m.gemms if g.batch]
            assert len(bmms) == {"hf_gemma2": 4, "tv_swin": 8}[name], (name, mode)
            for g in bmms:
                attn = model(name).get_submodule(g.module)
                assert isinstance(attn, torch.nn.Module) and type(attn).__name__ == kind, (name, mode, g.module)


def test_multihead_attentions_projections_are_the_multihead_attention():
    # torchvision's encoder block calls nn.MultiheadAttention, whose forward runs F.multi_head_attention_forward on
    # its in_proj_weight and out_proj.weight: both projections are the attention module's GEMMs (out_proj's own
    # forward never runs), in eager and compiled alike
    import torch

    for mode, m in modes("tv_vit_mha").items():
        proj = [g for g in m.gemms if g.m == 34 and g.k == 64 and g.n in (192, 64)]
        assert len(proj) == 4, mode  # in_proj and out_proj of 2 layers
        for g in proj:
            assert isinstance(model("tv_vit_mha").get_submodule(g.module), torch.nn.MultiheadAttention), g.module


def test_the_experts_gemms_are_the_experts_module():
    for mode, m in modes("hf_mixtral").items():
        experts = [g for g in m.gemms if g.module.endswith("mlp.experts")]
        assert {g.module for g in experts} == {"model.layers.0.mlp.experts", "model.layers.1.mlp.experts"}, mode
