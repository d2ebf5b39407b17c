"""The model zoo as the proving ground: real model families built from their configs with random weights
(tests/zoo/models/), profiled on the CPU with their tiny configs exactly as a user runs kernelscope, and checked
against invariants that do not depend on kernelscope's own reading of the run:

- every mode ran, and the run's dtype and numerics tolerance are the ones asked for (``--dtype bfloat16``);
- the GEMM count equals what an independent oracle counts: a ``TorchDispatchMode`` that sees each mm/addmm/bmm/
  baddbmm/_grouped_mm/convolution the eager model dispatches (``count_gemm_ops``), plus the GEMMs the mode ran inside
  an op the oracle saw as one op that is no GEMM, as the mode's coverage records them (``decomposed``: eager
  nn.MultiheadAttention's fused ``aten::_native_multi_head_attention`` runs its projections and attention's bmm's;
  compiled, Dynamo traces ``multi_head_attention_forward`` into Linears and SDPA);
- coverage is complete: every GEMM the capture's own oracle counted (the dispatch count; compiled, the output code)
  is found and attributed to a kernel, in every mode, and a compiled mode's count against eager's is explained;
- every GEMM carries a module path, the path can be looked up with ``get_submodule`` on the model ``get_model()``
  returns, and the same GEMM carries the same path in every mode;
- numerics pass against eager or against the reference (float64, float32 where float64 cannot run the model);
- the reports render, and no terminal line is wider than COLUMNS.

Each model is profiled once per session (``zoo_profile``), two at a time; a profile takes 0.5-2 minutes on 2 cores.
"""

from __future__ import annotations

import ast
import importlib.util
import json
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ..conftest import ROOT, run_cli
from ..zoo_fixtures import path_differences

pytest.importorskip("transformers")
pytest.importorskip("timm")
pytest.importorskip("torchvision")

MODELS = ROOT / "tests" / "zoo" / "models"
COLUMNS = 100

# name -> (model file, modes, extra options). bf16 on the CPU: the dtype users upgrade for, and the one whose
# numerics rules differ from fp32's. max-autotune for one family (C++ GEMM template: deterministic on 2 cores).
ZOO: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "hf_gpt2": ("hf_gpt2.py", "eager,default", ()),
    "hf_bert": ("hf_bert.py", "eager,default", ()),
    "hf_llama": ("hf_llama.py", "eager,default,max-autotune:CPP", ()),
    "hf_vit": ("hf_vit.py", "eager,default", ()),
    "hf_t5_encoder": ("hf_t5_encoder.py", "eager,default", ()),
    "timm_convnext": ("timm_convnext.py", "eager,default", ()),
    "timm_mixer": ("timm_mixer.py", "eager,default", ()),
    "tv_resnet": ("tv_resnet.py", "eager,default", ()),
    # GEMMs with no weight of their own or a shared one, grouped GEMMs, fused attention, depthwise convolutions.
    # The LMs run one layer (encoder and decoder layer): a second repeats the first's GEMMs, and the compile of
    # each model is most of its profile's time
    "hf_mixtral": ("hf_mixtral.py", "eager,default", ("--set", "layers=1")),  # experts: torch._grouped_mm
    "hf_bart": ("hf_bart.py", "eager,default", ("--set", "layers=1")),  # encoder-decoder, tied LM head
    "tv_vit_mha": ("tv_vit_mha.py", "eager,default", ()),  # nn.MultiheadAttention
    "tv_swin": ("tv_swin.py", "eager,default", ()),  # windowed attention: views, rolls and copies; patch merging
    "tv_mobilenet": ("tv_mobilenet.py", "eager,default", ()),  # depthwise convolutions, squeeze-excite
    "hf_gemma2": ("hf_gemma2.py", "eager,default", ("--set", "layers=1")),  # soft-capped explicit attention
}
GEMM_ATEN = ("mm", "addmm", "bmm", "baddbmm", "_grouped_mm", "convolution")

def load_model_file(name: str) -> Any:
    """The model file as a module, with the ``--set NAME=VALUE`` of its ZOO entry applied as the CLI applies them."""
    path = MODELS / ZOO[name][0]
    spec = importlib.util.spec_from_file_location(f"zoo_{name}", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    extra = ZOO[name][2]
    for flag, item in zip(extra, extra[1:]):
        if flag == "--set":
            key, _, value = item.partition("=")
            setattr(mod, key, ast.literal_eval(value))
    return mod


def count_gemm_ops(name: str) -> dict[str, int]:
    """The oracle: GEMM-class ATen ops one eager forward dispatches, by op (no kernelscope code involved)."""
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    counts: dict[str, int] = {}

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            op = func.overloadpacket.__name__
            if op in GEMM_ATEN:
                counts[op] = counts.get(op, 0) + 1
            return func(*args, **(kwargs or {}))

    mod = load_model_file(name)
    model = mod.get_model().to(torch.bfloat16)
    inputs = mod.get_inputs()
    def cast(t: Any) -> Any:
        return t.to(torch.bfloat16) if t.is_floating_point() else t

    with torch.no_grad(), Count():
        if isinstance(inputs, dict):
            model(**{k: cast(v) for k, v in inputs.items()})
        else:
            model(*[cast(v) for v in inputs])
    return counts


# Two profiles at a time: a profile keeps about one of the 2 cores busy (Dynamo tracing, one C++ compile at a time),
# and no invariant here reads a latency, so a neighbour's load changes nothing these tests check.
ZOO_PARALLEL = 2


def _profile(name: str, out: Path) -> tuple[Path, Any]:
    file, modes, extra = ZOO[name]
    proc = run_cli("profile", str(MODELS / file), "--device", "cpu", "--dtype", "bfloat16",
                   "--modes", modes, "--processes", "1", "--repeats", "5", "--warmup", "3",
                   "--steps", "2", "--out", str(out), *extra, env={"COLUMNS": str(COLUMNS)})
    (out / "cli-stdout.txt").write_text(proc.stdout)
    (out / "cli-stderr.txt").write_text(proc.stderr)
    return out, proc


@pytest.fixture(scope="session")
def zoo_profile(tmp_path_factory: pytest.TempPathFactory):
    """Each model profiled once per session: the first request starts every model's profile, ZOO_PARALLEL at a
    time in ZOO's order (the order the parametrized tests ask for them), and each request waits for its own."""
    pool = ThreadPoolExecutor(max_workers=ZOO_PARALLEL, thread_name_prefix="zoo")
    runs: dict[str, Future[tuple[Path, Any]]] = {}

    def get(name: str) -> tuple[Path, Any]:
        if not runs:
            root = tmp_path_factory.mktemp("zoo")
            for n in ZOO:
                runs[n] = pool.submit(_profile, n, root / n)
        return runs[name].result()

    yield get
    for f in runs.values():
        f.cancel()
    pool.shutdown(wait=True)


def result_of(zoo_profile, name: str) -> dict:
    out, proc = zoo_profile(name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((out / "result.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_every_mode_runs_in_bf16(zoo_profile, name: str):
    r = result_of(zoo_profile, name)
    assert r["dtype"] == "bfloat16"
    for m in r["modes"]:
        assert m["status"] == "ok", (m["name"], m["error"])
        assert m["numerics"]["tolerance"]["dtype"] == "bfloat16", m["name"]


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_gemm_count_matches_the_dispatch_oracle(zoo_profile, name: str):
    # the oracle sees the ops the model's code dispatches; a fused op that is no GEMM-class op runs GEMMs inside it
    # (eager nn.MultiheadAttention: in_proj, q @ k^T, probs @ v, out_proj in aten::_native_multi_head_attention),
    # or is traced into GEMMs (compiled: multi_head_attention_forward's Linears): each mode's coverage records
    # those by the op they came from, and they are the only GEMMs beyond the oracle's
    r = result_of(zoo_profile, name)
    want = sum(count_gemm_ops(name).values())
    for m in r["modes"]:
        made = m["gemm_coverage"]["decomposed"]
        assert len(m["gemms"]) == want + sum(made.values()), (m["name"], len(m["gemms"]), want, made)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_coverage_is_complete_in_every_mode(zoo_profile, name: str):
    # every GEMM the capture's oracle counted (the dispatch count; compiled, the output code and what the compiled
    # call dispatched) was found and attributed to a kernel, and a compiled mode's count against eager's is explained
    r = result_of(zoo_profile, name)
    for m in r["modes"]:
        c = m["gemm_coverage"]
        assert c["oracle"] is not None, m["name"]
        assert (c["ops"], c["attributed"], c["missing"], c["unattributed"]) == (
            c["oracle"], c["oracle"], 0, []), (m["name"], c)
        assert c["oracle"] == len(m["gemms"]), m["name"]
        if m["name"] != "eager":
            assert c["vs_eager_explained"], (m["name"], c["vs_eager"])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_each_layer_has_one_shape_in_every_mode(zoo_profile, name: str):
    # eager reads shapes from the profiler's recorded arguments, the compiled modes from the output code: the
    # same layer must come out as the same M x N x K (a convolution's stride, a grouped convolution, a bmm's batch).
    # A module that calls several GEMMs (an attention module's projections and bmm's, a mixture of experts) has the
    # same shapes in both, but for the GEMMs one mode ran inside a fused op (its coverage's ``decomposed``)
    r = result_of(zoo_profile, name)
    by_mode: list[dict[str, set[tuple[int, int, int]]]] = []
    for m in r["modes"]:
        shapes: dict[str, set[tuple[int, int, int]]] = {}
        for g in m["gemms"]:
            shapes.setdefault(g.get("module") or "", set()).add((g["m"], g["n"], g["k"]))
        by_mode.append(shapes)
    eager, compiled = by_mode[0], by_mode[1:]
    for other, m in zip(compiled, r["modes"][1:]):
        same = {p for p in eager if p in other}
        assert same, m["name"]
        fused = bool(m["gemm_coverage"]["decomposed"] or r["modes"][0]["gemm_coverage"]["decomposed"])
        for p in same:
            assert other[p] <= eager[p] or eager[p] <= other[p] if fused else other[p] == eager[p], (m["name"], p)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_every_gemm_has_a_module_path_the_user_can_look_up(zoo_profile, name: str):
    # the module whose forward called the GEMM: every GEMM of these models is called from a submodule's forward
    r = result_of(zoo_profile, name)
    model = load_model_file(name).get_model()
    nameless = [(m["name"], g["id"], g["op"], g["m"], g["n"], g["k"]) for m in r["modes"] for g in m["gemms"]
                if not g.get("module")]
    assert not nameless
    for p in sorted({g["module"] for m in r["modes"] for g in m["gemms"]}):
        model.get_submodule(p)  # raises AttributeError on a path the user cannot look up


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_the_same_gemm_has_the_same_path_in_every_mode(zoo_profile, name: str):
    # the path of the module whose forward called the GEMM, in eager (its profiler range) and in compiled modes
    # (Dynamo's nn_module_stack): GEMMs of one shape carry the same paths (zoo_fixtures.path_differences)
    r = result_of(zoo_profile, name)
    gemms = {m["name"]: [(g.get("kind"), g["m"], g["n"], g["k"], g.get("batch"), g.get("module") or "")
                         for g in m["gemms"]] for m in r["modes"]}
    eager = gemms.pop("eager")
    for mode, other in gemms.items():
        assert path_differences(eager, other) == [], mode


# Where a compiled mode names an epilogue op otherwise than eager, by design: (model, module) -> why
LABEL_DIFFERENCES = {
    # torch.profiler records no string argument, so eager cannot see F.gelu's approximate="tanh"; the compiled
    # code names it
    ("hf_gemma2", "model.layers.0.mlp.gate_proj"): "gelu / gelu-tanh",
    # eager adds the relative position bias, then the shifted window's mask; Inductor sums the three in one add
    ("tv_swin", "features.1.1.attn"): "add, add / add",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_every_mode_names_the_same_epilogue_ops(zoo_profile, name: str):
    # the same GEMM's epilogue under the same op names in eager (ATen ops through the profile's dataflow) and in
    # the compiled modes (kernel bodies): what differs is whether they ran fused. Freezing folds an eval
    # BatchNorm into the convolution before it (its weight and bias): eager's batch_norm is the compiled bias.
    r = result_of(zoo_profile, name)
    per: dict[str, dict[tuple[Any, ...], Counter]] = {}
    for m in r["modes"]:
        for g in m["gemms"]:
            ops = [("bias" if op == "batch_norm" and g.get("kind") == "conv" and m["name"] == "eager" else op)
                   for op in g["epilogue"]]
            key = (g.get("module") or "", g["m"], g["n"], g["k"], g.get("batch"))
            per.setdefault(m["name"], {}).setdefault(key, Counter()).update(ops)
    eager = per.pop("eager")
    for mode, other in per.items():
        differ = sorted({key[0] for key in eager if key in other and eager[key] != other[key]})
        assert differ == sorted(k[1] for k in LABEL_DIFFERENCES if k[0] == name), (mode, differ)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_numerics_pass(zoo_profile, name: str):
    r = result_of(zoo_profile, name)
    for m in r["modes"]:
        if m["name"] == "eager":
            continue
        assert m["numerics"]["vs_eager"]["pass"] or (m["numerics"].get("vs_reference") or {}).get("pass"), m["name"]
    # and the recommendation weighs every mode as passing (none is left out for its numerics)
    (rec,) = r["recommendation"]
    assert {c["mode"]: c["numerics"] for c in rec["candidates"]} == {m["name"]: "pass" for m in r["modes"]}


@pytest.mark.slow
def test_a_mixture_of_experts_is_judged_against_a_float32_reference(zoo_profile):
    # torch._grouped_mm has no float64 kernel: the reference runs in float32 and says why, and the compiled mode's
    # error is set against eager's own (tests/test_moe_numerics_cpu.py pins the recommendation on a recorded run)
    r = result_of(zoo_profile, "hf_mixtral")
    for m in r["modes"]:
        ref = m["numerics"]["reference"]
        assert (ref["dtype"], ref["skipped"]) == ("float32", ""), m["name"]
        assert "got Double" in ref["float64_error"], m["name"]
    default = next(m for m in r["modes"] if m["name"] == "default")
    vr = default["numerics"]["vs_reference"]
    assert vr["pass"] and vr["eager_rmse"] is not None


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ZOO))
def test_reports_render_and_the_terminal_fits(zoo_profile, name: str):
    out, proc = zoo_profile(name)
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (out / "report.html").read_text()
    assert "<html" in html and "http://" not in html.replace("http://www.w3.org", "")
    assert len((out / "summary.md").read_text()) < 60_000
    wide = [line for line in (proc.stdout + proc.stderr).splitlines() if len(line) > COLUMNS]
    assert not wide, wide[:3]


# Verdicts read from the output code by hand (the CPU runs of these tiny configs), for a few layers per family:
# (model, mode, module) -> (verdict, fused, unfused).
PINS: dict[tuple[str, str, str], tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # BERT default: every projection is `extern_kernels.addmm(bias, x, W)` (the bias in the GEMM call); the
    # residual add of attention.output.dense / output.dense runs in `cpp_fused_add_native_layer_norm_view_2`
    # before LayerNorm's mean (an epilogue op, unfused), intermediate.dense's GELU in `cpp_fused_gelu_view_3`,
    # the pooler's tanh in `cpp_fused_tanh_4`.
    ("hf_bert", "default", "encoder.layer.0.attention.self.query"): ("fused", ("bias",), ()),
    ("hf_bert", "default", "encoder.layer.0.attention.output.dense"): ("partial", ("bias",), ("add",)),
    ("hf_bert", "default", "encoder.layer.1.intermediate.dense"): ("partial", ("bias",), ("gelu",)),
    ("hf_bert", "default", "encoder.layer.1.output.dense"): ("partial", ("bias",), ("add",)),
    ("hf_bert", "default", "pooler.dense"): ("partial", ("bias",), ("tanh",)),
    # the same layers in eager: ATen's addmm takes the bias, the rest are separate ATen ops
    ("hf_bert", "eager", "encoder.layer.0.attention.output.dense"): ("partial", ("bias",), ("add",)),
    ("hf_bert", "eager", "pooler.dense"): ("partial", ("bias",), ("tanh",)),
    # ResNet-18 default (freezing folds BN into each convolution's bias operand: fused in the call): conv1's
    # ReLU runs on each element of the max-pool window (`cpp_fused_max_pool2d_with_indices_relu_1`), before the
    # max: unfused; layer1.0.conv2's residual add and ReLU in `cpp_fused_add_relu_3`; fc's bias in the addmm.
    # (tests/data/cpu-torch2.14.1/tv_resnet18_bf16 is the same run, read line by line.)
    ("tv_resnet", "default", "conv1"): ("partial", ("bias",), ("relu",)),
    ("tv_resnet", "default", "layer1.0.conv2"): ("partial", ("bias",), ("add", "relu")),
    ("tv_resnet", "default", "fc"): ("fused", ("bias",), ()),
}

# The same layers where the CPU computes in bfloat16 itself (AVX512-BF16 / AMX: the CI VM since 2026-12-05, an
# "Intel(R) Xeon(R) Processor"): Inductor's freezing packs the weights for oneDNN and folds the epilogue into the
# library call as post-ops, read from that machine's output code:
PINS_ONEDNN: dict[tuple[str, str, str], tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    # BERT: `mkldnn._linear_pointwise.default(x, W, bias, 'none')` for the projections; the residual add in
    # `_linear_pointwise.binary(x, residual, W, bias, 'add')` (attention.output.dense, output.dense), GELU and tanh
    # as unary post-ops (`..., 'gelu', [-1], 'none')`, `..., 'tanh', ...)`)
    ("hf_bert", "default", "encoder.layer.0.attention.self.query"): ("fused", ("bias",), ()),
    ("hf_bert", "default", "encoder.layer.0.attention.output.dense"): ("fused", ("bias", "add"), ()),
    ("hf_bert", "default", "encoder.layer.1.intermediate.dense"): ("fused", ("bias", "gelu"), ()),
    ("hf_bert", "default", "encoder.layer.1.output.dense"): ("fused", ("bias", "add"), ()),
    ("hf_bert", "default", "pooler.dense"): ("fused", ("bias", "tanh"), ()),
    # ResNet-18: `mkldnn._convolution_pointwise.default(x, W, b, ..., 'relu', ...)` for conv1 (the max-pool after
    # it reads the ReLU'd output); layer1.0.conv2 adds into the block's input in place with its ReLU,
    # `_convolution_pointwise_.binary(buf3, buf5, W, b, ..., 'add', 1.0, 'relu', ...)`
    ("tv_resnet", "default", "conv1"): ("fused", ("bias", "relu"), ()),
    ("tv_resnet", "default", "layer1.0.conv2"): ("fused", ("bias", "add", "relu"), ()),
    # layer2.0.conv2 writes its output; the downsample convolution then adds into it in place with the ReLU
    # (`_convolution_pointwise_.binary(conv2_out, x, W_ds, b, ..., 'add', 1.0, 'relu')`): conv2's add and ReLU ran
    # in another GEMM's call, the downsample's own in its call
    ("tv_resnet", "default", "layer2.0.conv2"): ("partial", ("bias",), ("add", "relu")),
    ("tv_resnet", "default", "layer2.0.downsample.0"): ("fused", ("bias", "add", "relu"), ()),
    ("tv_resnet", "default", "fc"): ("fused", ("bias",), ()),  # `_linear_pointwise.default(x, W, b, 'none', ...)`
}


def _onednn(out: Path) -> bool:
    """Whether the run's default mode compiled to oneDNN's post-op calls (a bf16-capable CPU)."""
    return any("torch.ops.mkldnn._linear_pointwise" in c.read_text() or
               "torch.ops.mkldnn._convolution_pointwise" in c.read_text()
               for c in (out / "modes" / "default" / "code").glob("graph_*.py"))


_ALL_PINS = list(dict.fromkeys([*PINS, *PINS_ONEDNN]))


@pytest.mark.slow
@pytest.mark.parametrize("key", _ALL_PINS, ids=["/".join(k) for k in _ALL_PINS])
def test_pinned_verdicts_match_the_output_code(zoo_profile, key: tuple[str, str, str]):
    name, mode, module = key
    r = result_of(zoo_profile, name)
    onednn = mode == "default" and _onednn(zoo_profile(name)[0])
    want = PINS_ONEDNN.get(key) if onednn else PINS.get(key)
    if want is None:
        pytest.skip(f"{'no' if onednn else 'only a'} oneDNN post-op pin for this layer on this CPU")
    m = next(m for m in r["modes"] if m["name"] == mode)
    (g,) = [g for g in m["gemms"] if g["module"] == module]
    assert (g["verdict"], tuple(g["fused"]), tuple(g["unfused"])) == want
