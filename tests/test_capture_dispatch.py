"""The ops one call dispatches (capture/dispatch.py): the oracle of the GEMM count, and what capture.json keeps of it.

Units run real models eager under the counting mode: GEMM-class ATen ops counted as the zoo suite's
``count_gemm_ops`` counts them, and those a custom op or a fused ATen op dispatches inside counted under it. Slow:
the compiled code counted as it runs (not an eager fallback), and one real ``kernelscope profile`` of a
mixture-of-experts model in bf16 (its float32 reference, its callers and dispatch counts in the run's files).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope.capture_record import CALLERS_SUFFIX, CaptureRecord, DispatchCount, load_capture, write_capture

from .conftest import ROOT

torch = pytest.importorskip("torch")

from kernelscope.capture.dispatch import count_dispatch  # noqa: E402


@torch.library.custom_op("kernelscope_test::two_mm", mutates_args=())
def two_mm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """A custom op that runs two GEMMs inside (as transformers' grouped_mm_fallback runs one per expert)."""
    return torch.mm(torch.mm(x, w), w)


@two_mm.register_fake
def _(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.empty(x.shape[0], w.shape[1], dtype=x.dtype, device=x.device)


class Mixed(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3)
        self.fc = torch.nn.Linear(8, 8)
        self.w = torch.nn.Parameter(torch.randn(8, 8))
        self.mha = torch.nn.MultiheadAttention(8, 2, batch_first=True)

    def forward(self, img):
        x = self.conv(img).mean((-1, -2))  # (2, 8)
        x = torch.relu(self.fc(x)) + 1
        x = two_mm(x, self.w)
        seq = x.unsqueeze(0)
        return self.mha(seq, seq, seq, need_weights=False)[0] @ x.t()


def _count(call):
    """One ``call()`` counted eager; (the count, what the call returned)."""
    out: dict = {}
    with torch.no_grad():
        counted = count_dispatch(torch, lambda: out.setdefault("y", call()), compiled=False, cudagraphs=False)
    return counted, out["y"]


def test_gemm_class_ops_and_the_gemms_inside_other_ops_are_counted_and_the_call_is_unchanged():
    # GIVEN a model with a convolution, a Linear, a custom op that runs two mm's and nn.MultiheadAttention (its
    # eval fast path: ATen's fused _native_multi_head_attention) followed by a matmul
    torch.manual_seed(0)
    model, img = Mixed().eval(), torch.randn(2, 3, 6, 6)
    counted, out = _count(lambda: model(img))
    # THEN the GEMM-class ops seen at the top, by packet (convolution once, not again as its _convolution)
    assert counted["gemm_ops"] == {"addmm": 1, "convolution": 1, "mm": 1}
    # and those other ops dispatched inside, under the op: the custom op's two mm's, MHA's projections and bmm's
    assert counted["nested"]["kernelscope_test::two_mm"] == {"mm": 2}
    mha = counted["nested"]["aten::_native_multi_head_attention"]
    assert sum(mha.values()) == 4 and mha.get("bmm") == 2
    assert counted["ops"]["kernelscope_test::two_mm"] == 1 and counted["ops"]["aten::relu"] == 1
    assert "aten::mm" in counted["ops"] and "aten::_convolution" not in counted["ops"]
    # and the counted call computed what the model computes
    with torch.no_grad():
        assert torch.equal(out, model(img))


def test_the_oracle_agrees_with_the_zoo_suites_count_on_a_real_model():
    # GIVEN a Hugging Face Llama (tiny config) in bf16 and the zoo suite's own oracle
    pytest.importorskip("transformers")
    from .zoo.test_zoo import count_gemm_ops, load_model_file

    mod = load_model_file("hf_llama")
    model, inputs = mod.get_model().to(torch.bfloat16), mod.get_inputs()
    counted, _ = _count(lambda: model(**inputs))
    assert counted["gemm_ops"] == count_gemm_ops("hf_llama") and counted["nested"] == {}


def test_a_cuda_graph_replay_is_not_counted():
    assert count_dispatch(torch, lambda: None, compiled=True, cudagraphs=True) == {
        "skipped": "the call replays a CUDA graph: nothing dispatches"}


def test_the_count_round_trips_through_capture_json(tmp_path: Path):
    # GIVEN a worker's record with a count and a float32 reference, written strictly and read back
    rec = {"schema": "kernelscope.capture/1", "mode": "default", "status": "ok",
           "dispatch": {"gemm_ops": {"_grouped_mm": 4}, "nested": {"transformers::grouped_mm_fallback": {"mm": 8}},
                        "ops": {"mkldnn::_linear_pointwise": 11}},
           "numerics": {"reference": {"dtype": "float32", "device": "cpu", "weights": "float32",
                                      "float64_error": "RuntimeError: Expected mat_a to be Float32, BFloat16 or "
                                                       "Float16 matrix, got Double"}}}
    written = write_capture(tmp_path / "capture.json", rec)
    back = load_capture(tmp_path / "capture.json")
    assert back == written and back.dispatch == DispatchCount(
        gemm_ops={"_grouped_mm": 4}, nested={"transformers::grouped_mm_fallback": {"mm": 8}},
        ops={"mkldnn::_linear_pointwise": 11})
    assert back.numerics is not None and back.numerics.reference.float64_error.startswith("RuntimeError")
    # THEN a record of an older worker (no count) reads as not counted
    assert CaptureRecord().dispatch is None
    with pytest.raises(Exception, match="not a field"):
        write_capture(tmp_path / "bad.json", {**rec, "dispatch": {"gemms": {}}})


@pytest.mark.slow
def test_a_compiled_call_is_counted_as_the_compiled_code_runs():
    # GIVEN the model compiled (Inductor, default mode) and called once
    torch._dynamo.reset()
    torch.manual_seed(0)
    model, img = Mixed().eval(), torch.randn(2, 3, 6, 6)
    fn = torch.compile(model)
    with torch.no_grad():
        fn(img)
        counted = count_dispatch(torch, lambda: fn(img), compiled=True, cudagraphs=False)
    # THEN what still dispatches is counted: the extern GEMM calls and the custom op with its two mm's, not the
    # ReLU and the add Inductor generated code for (an eager fallback would dispatch those)
    assert counted.get("skipped") is None, counted
    assert counted["nested"]["kernelscope_test::two_mm"] == {"mm": 2}
    assert "aten::relu" not in counted["ops"] and "aten::add" not in counted["ops"]
    assert sum(counted["gemm_ops"].values()) >= 2  # extern_kernels.convolution / addmm / mm


@pytest.mark.slow
def test_a_mixture_of_experts_profile_keeps_its_oracle_callers_and_float32_reference(moe_bf16_run: Path):
    # GIVEN a Mixtral-style model in bf16, profiled eager and default on the CPU
    out = moe_bf16_run
    eager = load_capture(out / "modes" / "eager" / "capture.json")
    default = load_capture(out / "modes" / "default" / "capture.json")
    # THEN its experts' torch._grouped_mm kept float64 out: the reference ran in float32 and says why
    for rec in (eager, default):
        ref = rec.numerics.reference
        assert ref.dtype == "float32" and "got Double" in ref.float64_error and not ref.skipped
    # and the compiled mode passes torch's rule against it
    assert default.numerics.vs_reference.passed is True
    # and the oracle counted eager's GEMMs (2 layers x q, k, v, o, router + the head; 2 grouped GEMMs a layer),
    # and the grouped GEMMs the compiled code still dispatches
    assert eager.dispatch.gemm_ops == {"_grouped_mm": 4, "mm": 11} and not eager.dispatch.skipped
    assert default.dispatch.gemm_ops.get("_grouped_mm") == 4 and not default.dispatch.skipped
    # and each compiled graph's callers sit beside its code, every path one get_submodule finds
    code = [out / p for p in default.inductor_code]
    callers = [json.loads(p.with_name(p.stem + CALLERS_SUFFIX).read_text()) for p in code]
    assert callers and all(c["frame"] == "" for c in callers)
    import importlib.util

    spec = importlib.util.spec_from_file_location("moe", ROOT / "tests" / "zoo" / "models" / "hf_mixtral.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    model = mod.get_model()
    paths = {p for c in callers for ps in c["nodes"].values() for p in ps}
    assert "lm_head" in paths and "model.layers.1.mlp.experts" in paths
    for p in paths:
        model.get_submodule(p)


def test_a_training_step_is_counted_backward_included():
    # GIVEN a call that is a training step (autograd's backward detaches the gradients it accumulates: aten::detach,
    # whose kernel dispatches aten::detach again, is run as it is inside itself)
    torch.manual_seed(0)
    model, x = torch.nn.Linear(8, 4), torch.randn(3, 8)

    def step():
        with torch.enable_grad():
            model(x).square().mean().backward()

    counted, _ = _count(lambda: step() or 0)
    # THEN the forward's addmm and the backward's mm (the weight's gradient; x needs none)
    assert counted["gemm_ops"] == {"addmm": 1, "mm": 1}
    assert counted["ops"]["aten::detach"] >= 1 and model.weight.grad is not None
