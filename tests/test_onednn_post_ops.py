"""Compiled code for a CPU that computes in bfloat16 itself (AVX512-BF16 / AMX), recorded on such a VM: Inductor's
freezing packs the weights for oneDNN and folds epilogues into the library calls as post-ops
(``mkldnn._linear_pointwise.binary(x, residual, W, b, 'add')``, ``.default(..., 'swish')``, the in-place
``_convolution_pointwise_.binary(other, x, W, b, ..., 'add', 1.0, 'relu')``). Read from the recorded runs, so the
verdicts hold whatever CPU runs the tests (tests/data/cpu-torch2.14.1/README.md, "oneDNN post-ops")."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelscope.analysis.ranks import build_any_mode_result
from kernelscope.capture_record import read_capture
from kernelscope.inductor_code import load_output_code
from kernelscope.report.evidence_words import evidence_text

from .conftest import DATA
from .zoo_fixtures import extract_run


def _modes(name: str) -> dict[str, object]:
    run = extract_run(DATA / "cpu-torch2.14.1" / f"{name}-onednn.tar.xz")
    out = {}
    for cap in sorted(run.glob("modes/*/capture.json")):
        rec = read_capture(cap)
        assert rec is not None and rec.status == "ok"
        out[cap.parent.name] = build_any_mode_result(run, rec)
    return out


def _verdicts(mode: object) -> dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]:
    return {g.module: (g.verdict, tuple(g.fused), tuple(g.unfused)) for g in mode.gemms}  # type: ignore[attr-defined]


def _shapes(mode: object) -> dict[str, tuple[int | None, ...]]:
    return {g.module: (g.m, g.n, g.k) for g in mode.gemms if g.module}  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ["hf_llama", "timm_mixer", "tv_resnet"])
def test_every_compiled_gemm_has_its_layer_and_the_layers_shape(name: str):
    # GIVEN eager and default recorded on the same machine
    modes = _modes(name)
    eager, default = modes["eager"], modes["default"]
    # THEN every GEMM of the compiled code is named by its module, each module once, as in eager
    names = [g.module for g in default.gemms]  # type: ignore[attr-defined]
    assert all(names) and len(set(names)) == len(names), names
    assert set(names) == set(_shapes(eager)), set(names) ^ set(_shapes(eager))
    # AND has the M x N x K eager measured for that layer (an in-place convolution's output is its first argument)
    assert _shapes(default) == _shapes(eager)


def test_llama_fused_post_ops_name_their_own_layer():
    # The call sites whose provenance node is the pattern's (fn_3 from `hidden_states_9 = residual + linear_6`)
    # list the nodes of their inputs too: the GEMM is the one the pointwise op reads, not up_proj before it
    v = _verdicts(_modes("hf_llama")["default"])
    for layer in (0, 1):
        p = f"model.layers.{layer}"
        assert v[f"{p}.self_attn.o_proj"] == ("fused", ("add",), ())  # `.binary(attn, residual, W, None, 'add')`
        assert v[f"{p}.mlp.gate_proj"] == ("partial", ("silu",), ("mul",))  # 'swish'; the * up_proj in C++
        assert v[f"{p}.mlp.up_proj"] == ("unfused", (), ("mul",))
        assert v[f"{p}.mlp.down_proj"] == ("fused", ("add",), ())


def test_bert_post_ops_are_fused():
    v = _verdicts(_modes("hf_bert")["default"])
    assert v["encoder.layer.0.attention.self.query"] == ("fused", ("bias",), ())
    assert v["encoder.layer.0.attention.output.dense"] == ("fused", ("bias", "add"), ())
    assert v["encoder.layer.1.intermediate.dense"] == ("fused", ("bias", "gelu"), ())
    assert v["pooler.dense"] == ("fused", ("bias", "tanh"), ())


def test_resnet_residual_add_in_another_convolutions_call():
    default = _modes("tv_resnet")["default"]
    v = _verdicts(default)
    # conv2 of a block without downsample adds into the block's input in place, with the ReLU
    assert v["layer1.0.conv2"] == ("fused", ("bias", "add", "relu"), ())
    assert v["conv1"] == ("fused", ("bias", "relu"), ())
    # with a downsample, conv2 writes its output and the downsample convolution adds into it in place: conv2's
    # add and ReLU ran in another GEMM's call; the downsample's in its own; the next block's residual add (which
    # reads the downsample's result into a later convolution computed from it) is that later one's
    for stage in (2, 3, 4):
        assert v[f"layer{stage}.0.conv2"] == ("partial", ("bias",), ("add", "relu"))
        assert v[f"layer{stage}.0.downsample.0"] == ("fused", ("bias", "add", "relu"), ())
    (conv2,) = [g for g in default.gemms if g.module == "layer2.0.conv2"]  # type: ignore[attr-defined]
    assert any(e.rule == "dataflow.post-op-in-next-gemm" and "_convolution_pointwise_.binary" in e.facts["site"]
               for e in conv2.evidence), [evidence_text(e) for e in conv2.evidence]


def test_an_in_place_call_writes_its_first_argument(tmp_path: Path):
    # GIVEN a wrapper line of an in-place oneDNN call (no assignment: it adds into buf3)
    run = extract_run(DATA / "cpu-torch2.14.1" / "tv_resnet-onednn.tar.xz")
    (code,) = load_output_code(run / "modes" / "default" / "code" / "graph_0.py")
    calls = [L for L in code.launches if L.name.endswith("_convolution_pointwise_.binary")]
    assert calls
    # THEN each writes its first argument (and still reads it: the add's other operand) and reads its input
    for L in calls:
        assert L.writes == (L.args[0],) and L.args[0] in L.reads and L.args[1] in L.reads
    # AND a call that returns its result writes only that
    plain = [L for L in code.launches if L.name.endswith("_convolution_pointwise.default")]
    assert plain and all(L.args[0] not in L.writes for L in plain)
