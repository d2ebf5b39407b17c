"""The model-file protocol: both conventions, --set, and a clear error for each violation."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelscope import modelfile
from kernelscope.errors import ModelFileError, UsageError

from .conftest import ROOT


def write(tmp_path: Path, text: str, name: str = "m.py") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def load(path: Path, sets: dict | None = None):
    spec = modelfile.inspect_model_file(path)
    modelfile.check_sets(spec, sets or {})
    module = modelfile.load_module(spec, sets or {})
    return spec, modelfile.build(module, spec)


def test_get_model_protocol_with_set_override_applied_before_build(tmp_path: Path):
    p = write(tmp_path, "import torch\nbatch_size = 2\nfeatures = 8\n"
                        "def get_model():\n    return torch.nn.Linear(features, features)\n"
                        "def get_inputs():\n    return [torch.randn(batch_size, features)]\n")
    spec, (model, inputs) = load(p, {"batch_size": 5})
    assert spec.protocol == "get_model"
    assert isinstance(model, torch.nn.Linear) and inputs[0].shape == (5, 8)


def test_kernelbench_protocol(tmp_path: Path):
    p = write(tmp_path, "import torch\nclass Model(torch.nn.Module):\n"
                        "    def __init__(self, n):\n        super().__init__(); self.l = torch.nn.Linear(n, n)\n"
                        "    def forward(self, x):\n        return self.l(x)\n"
                        "def get_init_inputs():\n    return [4]\n"
                        "def get_inputs():\n    return [torch.randn(3, 4)]\n")
    spec, (model, inputs) = load(p)
    assert spec.protocol == "kernelbench" and model.l.in_features == 4


@pytest.mark.parametrize("sample", ["linear_gelu.py", "mlp.py", "transformer_block.py"])
def test_samples_follow_the_protocol_and_run(sample: str):
    spec, (model, inputs) = load(ROOT / "samples" / sample)
    model, inputs = modelfile.prepare(model, inputs, dtype="float32", device="cpu")
    with torch.no_grad():
        out = model(*inputs)
    assert out.shape == inputs[0].shape


def test_prepare_casts_floating_inputs_only(tmp_path: Path):
    model, inputs = modelfile.prepare(torch.nn.Linear(2, 2), [torch.ones(1, 2), torch.arange(3)], dtype="bfloat16",
                                      device="cpu")
    assert model.weight.dtype == torch.bfloat16
    assert inputs[0].dtype == torch.bfloat16 and inputs[1].dtype == torch.int64


def test_seeds_make_weights_identical_across_builds():
    a = load(ROOT / "samples" / "mlp.py")
    modelfile.seed_everything(0)
    w1 = a[1][0].fc1.weight.clone()
    modelfile.seed_everything(0)
    spec = modelfile.inspect_model_file(ROOT / "samples" / "mlp.py")
    m2, _ = modelfile.build(modelfile.load_module(spec, {}), spec)
    modelfile.seed_everything(0)
    m3, _ = modelfile.build(modelfile.load_module(spec, {}), spec)
    assert torch.equal(m2.fc1.weight, m3.fc1.weight)
    assert w1.shape == m2.fc1.weight.shape


BAD = [
    ("missing", None, "does not exist"),
    ("not python", ("m.txt", "hello"), "is not a .py file"),
    ("syntax", ("m.py", "def get_model(:\n"), "syntax error at line 1"),
    ("no protocol", ("m.py", "x = 1\n"), "defines no get_model() or Model class"),
    ("no get_inputs", ("m.py", "def get_model():\n    return None\n"), "defines no get_inputs()"),
    ("kernelbench without init", ("m.py", "class Model: pass\ndef get_inputs(): return []\n"),
     "no get_init_inputs()"),
    ("binary", ("m.py", b"\xff\xfe\x00"), "is not UTF-8"),
]


@pytest.mark.parametrize(("case", "file", "message"), BAD, ids=[b[0] for b in BAD])
def test_static_violations(tmp_path: Path, case: str, file, message: str):
    if file is None:
        path = tmp_path / "missing.py"
    else:
        path = tmp_path / file[0]
        path.write_bytes(file[1] if isinstance(file[1], bytes) else file[1].encode())
    with pytest.raises(ModelFileError) as ei:
        modelfile.inspect_model_file(path)
    assert message in ei.value.message
    assert "samples/linear_gelu.py" in ei.value.message or "fix" in ei.value.message.lower() or ";" in ei.value.message
    assert ei.value.exit_code == 2 and "\n" not in ei.value.message


RUNTIME_BAD = [
    ("import error", "import not_a_module_xyz\ndef get_model(): pass\ndef get_inputs(): pass\n",
     "importing the model file in m.py (line 1) raised ModuleNotFoundError"),
    ("get_model raises", "def get_model():\n    raise ValueError('boom')\ndef get_inputs(): return []\n",
     "building the model in m.py (line 2) raised ValueError: boom"),
    ("non-callable model", "def get_model(): return 3\ndef get_inputs(): return []\n",
     "get_model() returned int, which is not an nn.Module or callable"),
    ("inputs not a list", "import torch\ndef get_model(): return torch.nn.ReLU()\ndef get_inputs(): return 3\n",
     "get_inputs() returned int"),
    ("inputs without tensor",
     "import torch\ndef get_model(): return torch.nn.ReLU()\ndef get_inputs(): return [1, 'a']\n",
     "get_inputs() returned no tensor (int, str)"),
    ("init inputs not list", "import torch\nclass Model(torch.nn.Module): pass\n"
     "def get_init_inputs(): return 3\ndef get_inputs(): return []\n", "get_init_inputs() returned int"),
]


@pytest.mark.parametrize(("case", "text", "message"), RUNTIME_BAD, ids=[b[0] for b in RUNTIME_BAD])
def test_runtime_violations(tmp_path: Path, case: str, text: str, message: str):
    with pytest.raises(ModelFileError) as ei:
        load(write(tmp_path, text))
    assert message in ei.value.message and "\n" not in ei.value.message


@pytest.mark.parametrize(("sets", "message"), [
    (["batch_size"], "is not NAME=VALUE"),
    (["1x=3"], "is not NAME=VALUE"),
    (["=3"], "is not NAME=VALUE"),
])
def test_bad_set_syntax(sets, message):
    with pytest.raises(UsageError, match=message):
        modelfile.parse_sets(sets)


def test_set_values_are_literals_or_strings():
    assert modelfile.parse_sets(["a=64", "b=1e-3", "c=gelu", "d=(1, 2)", "e='x=y'"]) == {
        "a": 64, "b": 1e-3, "c": "gelu", "d": (1, 2), "e": "x=y"}


def test_unknown_set_name_lists_the_known_ones():
    spec = modelfile.inspect_model_file(ROOT / "samples" / "linear_gelu.py")
    with pytest.raises(UsageError) as ei:
        modelfile.check_sets(spec, {"batchsize": 3})
    assert "has no module-level constant 'batchsize'" in ei.value.message
    assert "batch_size" in ei.value.message


# --- keyword inputs and structured outputs ---------------------------------------------------------------------
KW_MODEL = """import torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__(); self.emb = torch.nn.Embedding(10, 4)
    def forward(self, input_ids, attention_mask=None, scale=1.0):
        return self.emb(input_ids) * attention_mask.unsqueeze(-1) * scale
def get_model():
    return M()
"""


@pytest.mark.parametrize(
    ("inputs", "n_flat"),
    [
        ("{'input_ids': torch.tensor([[1, 2, 3]]), 'attention_mask': torch.ones(1, 3)}", 2),
        ("([torch.tensor([[1, 2, 3]])], {'attention_mask': torch.ones(1, 3), 'scale': 2.0})", 3),
    ],
    ids=["dict", "args-kwargs"],
)
def test_keyword_inputs_are_called_by_name(tmp_path: Path, inputs: str, n_flat: int):
    p = write(tmp_path, KW_MODEL + f"def get_inputs():\n    return {inputs}\n")
    _, (model, flat) = load(p)
    assert isinstance(model, torch.nn.Module) and len(flat) == n_flat
    model, flat = modelfile.prepare(model, flat, dtype="float64", device="cpu")  # casts the keyword floats too
    assert model.model.emb.weight.dtype == torch.float64
    with torch.no_grad():
        out = model(*flat)
    ref = model.model(torch.tensor([[1, 2, 3]]), attention_mask=torch.ones(1, 3, dtype=torch.float64),
                      scale=2.0 if n_flat == 3 else 1.0)
    assert torch.equal(out, ref)


def test_keyword_inputs_that_forward_does_not_take_are_named(tmp_path: Path):
    p = write(tmp_path, KW_MODEL + "def get_inputs():\n    return {'input_ids': torch.tensor([[1]]), 'mask': 1}\n")
    with pytest.raises(ModelFileError, match="do not fit the model's forward: got an unexpected keyword argument "
                                             "'mask'"):
        load(p)


def test_structured_outputs_keep_every_tensor():
    import dataclasses
    from collections import OrderedDict

    @dataclasses.dataclass
    class Out:
        logits: torch.Tensor
        hidden: tuple

    class ModelOutput(OrderedDict):  # what transformers.utils.ModelOutput is: an OrderedDict with attributes
        pass

    a, b, c = torch.ones(1), torch.zeros(2), torch.full((3,), 2.0)
    assert modelfile.output_tensors(Out(a, (b, None))) == [a, b]
    got = modelfile.output_tensors(ModelOutput(logits=a, past=[(b, c)], loss=None))
    assert [t.shape for t in got] == [(1,), (2,), (3,)]


@pytest.mark.slow
def test_a_model_called_with_keyword_inputs_profiles_end_to_end(tmp_path: Path):
    import json

    from .conftest import run_cli

    p = write(tmp_path, KW_MODEL + "def get_inputs():\n"
                                   "    return {'input_ids': torch.tensor([[1, 2, 3]]),"
                                   " 'attention_mask': torch.ones(1, 3)}\n")
    proc = run_cli("profile", str(p), "--device", "cpu", "--modes", "eager", "--repeats", "3", "--warmup", "1",
                   "--out", str(tmp_path / "out"), timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    (eager,) = json.loads((tmp_path / "out" / "result.json").read_text())["modes"]
    assert eager["status"] == "ok" and eager["latency_ms"]["median"] > 0


def test_outputs_are_named_by_their_path():
    # the numerics name each output tensor as the user finds it in the model's output
    import dataclasses
    from collections import OrderedDict

    @dataclasses.dataclass
    class Out:
        logits: torch.Tensor
        hidden: tuple

    class ModelOutput(OrderedDict):
        pass

    a, b, c = torch.ones(1), torch.zeros(2), torch.full((3,), 2.0)
    named = modelfile.named_output_tensors
    assert [n for n, _ in named(a)] == ["output"]
    assert [n for n, _ in named((a, b))] == ["[0]", "[1]"]
    assert [n for n, _ in named(Out(a, (b, None)))] == ["logits", "hidden[0]"]
    assert [n for n, _ in named(ModelOutput(logits=a, past=[(b, c)], loss=None))] == ["logits", "past[0][0]",
                                                                                       "past[0][1]"]
    assert [n for n, _ in named({"out": {"a": a}})] == ["out.a"]


def test_the_compute_dtype_is_not_the_token_inputs():
    # int64 input_ids say nothing about the dtype a model computes in
    ids = torch.tensor([[1, 2, 3]])
    emb = torch.nn.Embedding(10, 4).to(torch.bfloat16)
    assert modelfile.compute_dtype(emb, [ids], None) == "bfloat16"  # the parameters'
    assert modelfile.compute_dtype(emb, [ids], "float16") == "float16"  # --dtype first
    assert modelfile.compute_dtype(lambda x: x, [ids, torch.ones(2, dtype=torch.float16)], None) == "float16"
    assert modelfile.compute_dtype(lambda x: x, [ids], None) is None  # the worker then reads the outputs'
    mixed = torch.nn.Sequential(torch.nn.Linear(64, 64).to(torch.bfloat16), torch.nn.LayerNorm(4))
    assert modelfile.floating_dtype([*mixed.parameters()]) == "bfloat16"  # the dtype holding most elements


def test_module_paths_are_the_users_model_and_it_is_what_gets_compiled(tmp_path: Path):
    # get_submodule(path) on get_model()'s model finds every path; the wrapper stays out of them
    p = write(tmp_path, KW_MODEL + "def get_inputs():\n    return {'input_ids': torch.tensor([[1, 2, 3]]),"
                                   " 'attention_mask': torch.ones(1, 3)}\n")
    _, (model, flat) = load(p)
    user = modelfile.user_model(model)
    assert user is model.model and [n for n, _ in user.named_modules()] == ["", "emb"]
    assert modelfile.user_model(user) is user
    seen = []

    def compile_fn(m):  # what torch.compile receives: the user's model, called with its keyword inputs
        seen.append(m)
        return lambda *args, **kwargs: ("compiled", sorted(kwargs))

    fn = modelfile.compile_user_model(model, compile_fn)
    assert seen == [user] and fn(*flat) == ("compiled", ["attention_mask", "input_ids"])
    plain = torch.nn.Linear(2, 2)
    assert modelfile.compile_user_model(plain, lambda m: ("c", m)) == ("c", plain)
