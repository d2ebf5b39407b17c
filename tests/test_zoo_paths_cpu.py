"""Every GEMM under the name of the module that called it, with its epilogue ops under the same names, in eager and
compiled: recorded CPU runs of zoo models whose GEMMs have no weight of their own or share one
(tests/data/cpu-torch2.14.1/<model>_eager_default_bf16.tar.gz, see the README there): an LM head tied to the token
embedding (BART, Gemma-2), explicit attention's bmm's (Gemma-2), nn.MultiheadAttention's projections (ViT),
windowed attention's qkv / proj and bmm's run from the attention module's own function (Swin) and a mixture of
experts (Mixtral). The paths are looked up on the model ``get_model()`` of the model file returns, as a user would."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
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


# Where eager and compiled name an epilogue differently, and why: (model, module) -> (eager's ops, compiled's ops)
KNOWN_LABEL_DIFFERENCES = {
    # torch.profiler records no string argument, so eager cannot see F.gelu's approximate="tanh"; the compiled
    # call names it (oneDNN's post-op 'gelu' with the algorithm 'tanh')
    ("hf_gemma2", "model.layers.0.mlp.gate_proj"): (("gelu", "mul"), ("gelu-tanh", "mul")),
    ("hf_gemma2", "model.layers.1.mlp.gate_proj"): (("gelu", "mul"), ("gelu-tanh", "mul")),
    # the shifted window's scores: eager adds the relative position bias, then the mask; Inductor sums the three
    # tensors in one add
    ("tv_swin", "features.1.1.attn"): (("add", "add"), ("add",)),
}


def _labels(name: str, mode: str) -> dict[tuple[Any, ...], Counter]:
    out: dict[tuple[Any, ...], Counter] = {}
    for g in modes(name)[mode].gemms:
        out.setdefault((g.module, *shape(g)), Counter()).update(g.epilogue)
    return out


@pytest.mark.parametrize("name", RUNS)
def test_eager_and_compiled_name_the_same_epilogue_ops(name):
    eager, default = _labels(name, "eager"), _labels(name, "default")
    assert set(eager) == set(default)
    differ = {(name, key[0]): (tuple(sorted(eager[key].elements())), tuple(sorted(default[key].elements())))
              for key in eager if eager[key] != default[key]}
    known = {k: tuple(tuple(sorted(x)) for x in v) for k, v in KNOWN_LABEL_DIFFERENCES.items() if k[0] == name}
    assert differ == known


def _gemm(name: str, mode: str, module: str, n: int):
    (g,) = [g for g in modes(name)[mode].gemms if g.module == module and g.n == n]
    return g


def test_rotary_and_soft_capping_list_every_op_in_compiled_code():
    # Gemma-2's q_proj (default graph_0.py): one C++ kernel of three loop nests writes rotate_half's cat in the
    # first two and reads it back in the third for `rotate_half(q) * sin`, beside `q * cos`: two muls, as in eager.
    # The attention scores' soft-capping, `tanh(s * scale / cap) * cap`, multiplies twice too.
    q = _gemm("hf_gemma2", "default", "model.layers.0.self_attn.q_proj", 64)
    assert Counter(q.unfused) == Counter({"mul": 2, "neg": 1, "add": 1})
    scores = [g for g in modes("hf_gemma2")["default"].gemms
              if g.module == "model.layers.0.self_attn" and g.batch and g.epilogue]
    assert [Counter(g.unfused) for g in scores] == [Counter({"mul": 2, "div": 1, "tanh": 1, "add": 1})]


def test_a_bias_is_one_value_per_column():
    # BART adds final_logits_bias ([1, vocab]) to the LM head's logits: a bias in both modes. ViT's position
    # embedding ([1, tokens, width]) after the patch convolution and Swin's relative position bias
    # ([heads, window, window]) on the scores vary along the rows: adds in both modes.
    for mode in ("eager", "default"):
        assert _gemm("hf_bart", mode, "lm_head", 512).unfused == ("bias",), mode
        assert _gemm("tv_vit_mha", mode, "conv_proj", 64).epilogue == ("bias", "add"), mode
        scores = [g for g in modes("tv_swin")[mode].gemms if g.module == "features.1.0.attn" and g.batch]
        assert [g.epilogue for g in scores] == [("add",), ()], mode  # q @ k^T, then probs @ v


def test_a_packed_in_projection_ends_at_the_attention_inside_its_call():
    # nn.MultiheadAttention runs F.multi_head_attention_forward as one torch call: the packed q/k/v projection,
    # the attention, then out_proj. What follows the call (the block's residual add) reads out_proj's result,
    # not the in-projection's; compiled code adds the in-projection's bias in one kernel of three loop nests
    # (q's, k's and v's slice): one bias.
    for mode in ("eager", "default"):
        inp = _gemm("tv_vit_mha", mode, "encoder.layers.encoder_layer_0.self_attention", 192)
        out = _gemm("tv_vit_mha", mode, "encoder.layers.encoder_layer_0.self_attention", 64)
        assert (inp.verdict, inp.unfused) == ("unfused", ("bias",)), mode
        assert out.epilogue == ("bias", "add"), mode
    inp = _gemm("tv_vit_mha", "eager", "encoder.layers.encoder_layer_0.self_attention", 192)
    assert any(e.rule == "eager-sequence.stop-next-gemm" for e in inp.evidence)


def test_a_onednn_gelu_with_the_tanh_algorithm_is_one_op():
    g = _gemm("hf_gemma2", "default", "model.layers.0.mlp.gate_proj", 128)
    assert (g.verdict, g.fused, g.unfused) == ("partial", ("gelu-tanh",), ("mul",))
