"""The module that called each node of a compiled graph (capture/callers.py), as the compile's backend reads it.

Units: graphs whose nodes carry ``nn_module_stack`` entries as Dynamo writes them (keyed by the module's ``id()``,
or, on an older torch, by name with the path spelled from ``L['self']``). Slow: real compiles through the
recording backend: the callers of GEMMs without a weight of their own (attention bmm's, nn.MultiheadAttention's
projections) and of a tied LM head, and Inductor's output code and cache as without the recorder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from kernelscope.capture.callers import _relative, graph_callers, recording_backend  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)
        self.act = torch.nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList([Block(), Block()])
        self.head = torch.nn.Linear(4, 2)

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return self.head(x) @ x.t()


def _graph(stacks: dict[str, dict[str, tuple]]):
    """A graph of one call node per entry of ``stacks`` (node name -> its nn_module_stack)."""
    g = torch.fx.Graph()
    x = g.placeholder("x")
    for name, stack in stacks.items():
        node = g.call_function(torch.relu, (x,), name=name)
        node.meta["nn_module_stack"] = stack
    g.output(x)
    return torch.fx.GraphModule(torch.nn.Module(), g)


def _entry(net: Net, path: str, spelled: str, nth: int = 0) -> tuple[str, tuple]:
    module = net.get_submodule(path)
    return f"{id(module)}" + (f"@{nth}" if nth else ""), (spelled, type(module))


@pytest.mark.parametrize(("spelled", "want"), [
    ("L['self'].blocks[0].fc", ("self", "blocks.0.fc")),
    ("L['self'].model.layers.0.mlp", ("self", "model.layers.0.mlp")),
    ("L['self']._modules['blocks']._modules['1']", ("self", "blocks.1")),
    ("getattr(L['self'].blocks, '0')", ("self", "blocks.0")),
    ("L['s'].a", ("s", "a")),
    ("L['self']", ("self", "")),
    ("G['__import_transformers'].apply_rotary_pos_emb", None),
    ("L['self'].fn()", None),
])
def test_dynamos_spellings_of_a_path_read_as_a_dotted_path(spelled, want):
    assert _relative(spelled) == want


def test_each_node_gets_its_modules_innermost_first_by_identity():
    # GIVEN the model's own forward traced: stacks keyed by id() as Dynamo writes them, outermost first, a second
    # call of a module keyed "<id>@1", and an entry that is no module of the model (a library's wrapped function)
    net = Net()
    stacks = {
        "linear": dict([_entry(net, "blocks.0", "L['self'].blocks[0]"), _entry(net, "blocks.0.fc",
                                                                               "L['self'].blocks[0].fc")]),
        "relu": dict([_entry(net, "blocks.1", "L['self'].blocks[1]", 1),
                      ("123", ("G['lib'].apply_rotary_pos_emb", object))]),
        "matmul": {},
    }
    got = graph_callers(torch, _graph(stacks), net)
    # THEN paths as get_submodule finds them, innermost first, each ending at the frame: the model ("")
    assert got == {"frame": "", "nodes": {"linear": ["blocks.0.fc", "blocks.0", ""], "relu": ["blocks.1", ""],
                                          "matmul": [""]}}
    for paths in got["nodes"].values():
        for p in paths:
            net.get_submodule(p)


def test_a_graph_traced_from_a_submodules_frame_names_that_submodule():
    # GIVEN a graph Dynamo compiled from blocks.1's own forward (a graph break inside it): its paths are spelled
    # from that frame's self
    net = Net()
    stacks = {"fc": dict([_entry(net, "blocks.1.fc", "L['self'].fc")]), "relu": {}}
    # THEN the frame is blocks.1, and its own ops (no stack) are called by it
    assert graph_callers(torch, _graph(stacks), net) == {
        "frame": "blocks.1", "nodes": {"fc": ["blocks.1.fc", "blocks.1"], "relu": ["blocks.1"]}}


def test_entries_keyed_by_name_are_read_from_the_spelling_where_the_model_has_that_class_there():
    # GIVEN an older torch's keys (names, not ids)
    net = Net()
    stacks = {"linear": {"L__self___blocks_0_fc": ("L['self'].blocks[0].fc", torch.nn.Linear)},
              "wrong_class": {"L__self___head": ("L['self'].head", torch.nn.ReLU)},
              "not_there": {"L__self___tail": ("L['self'].tail", torch.nn.Linear)}}
    got = graph_callers(torch, _graph(stacks), net)
    assert got["nodes"]["linear"][0] == "blocks.0.fc"
    # THEN a path the model lacks, or where another class sits, is left out
    assert "head" not in got["nodes"].get("wrong_class", [])
    assert "tail" not in got["nodes"].get("not_there", [])


def test_a_function_compiled_instead_of_a_module_records_nothing():
    assert graph_callers(torch, _graph({"relu": {}}), lambda x: x) == {}


def test_the_backend_is_inductors_wrapper_with_the_modes_options():
    graphs: list = []
    backend = recording_backend(torch, "max-autotune-no-cudagraphs", None, Net(), graphs)
    assert isinstance(backend, torch._TorchCompileInductorWrapper)
    # the options torch.compile(mode=...) would give Inductor
    assert backend == torch._TorchCompileInductorWrapper("max-autotune-no-cudagraphs", None, None)
    assert backend.config.get("max_autotune") is True


class Attn(torch.nn.Module):
    """Explicit attention (two matmuls of its own code), nn.MultiheadAttention, an LM head tied to the embedding."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(32, 16)
        self.q = torch.nn.Linear(16, 16)
        self.mha = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.lm_head = torch.nn.Linear(16, 32, bias=False)
        self.lm_head.weight = self.embed.weight

    def forward(self, ids):
        x = self.embed(ids)
        q = self.q(x)
        probs = torch.softmax(q @ x.transpose(-1, -2), dim=-1)
        x = probs @ x
        x = self.mha(x, x, x, need_weights=False)[0]
        return self.lm_head(x)


@pytest.mark.slow
def test_gemms_without_a_weight_of_their_own_and_a_tied_head_are_named_by_their_caller():
    # GIVEN the model compiled through the recording backend (Inductor, default mode)
    torch._dynamo.reset()
    model, graphs = Attn().eval(), []
    fn = torch.compile(model, backend=recording_backend(torch, None, None, model, graphs))
    with torch.no_grad():
        fn(torch.randint(0, 32, (2, 8)))
    (rec,) = graphs
    nodes = rec["nodes"]
    # THEN the attention matmuls are the root's (its forward called them), MHA's projections the MHA module's,
    # and the tied head's GEMM lm_head's, not the embedding's
    matmuls = [k for k in nodes if k.startswith(("matmul", "x_"))]
    assert rec["frame"] == "" and matmuls and all(nodes[k] == [""] for k in matmuls)
    assert [p for k, p in nodes.items() if "multi_head_attention" in k] == [["mha", ""]]
    head = [k for k, p in nodes.items() if p[0] == "lm_head"]
    assert head and not any(p[0] == "embed" and "linear" in k for k, p in nodes.items())
    for paths in nodes.values():
        for p in paths:
            model.get_submodule(p)


_COMPILE_THREE_TIMES = textwrap.dedent("""
    import json, re, sys
    import torch
    from torch._inductor.graph import GraphLowering
    from torch._dynamo.utils import counters
    from kernelscope.capture.callers import recording_backend

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(16, 32), torch.nn.Linear(32, 16)
        def forward(self, x):
            return self.b(torch.relu(self.a(x))) @ x.t()

    model, x = M().eval(), torch.randn(8, 16)
    out = []
    for recorded in (True, False, True):  # lowers and saves; loads it; loads it
        codes, graphs = [], []
        GraphLowering.save_output_code = codes.append
        before = dict(counters["inductor"])
        backend = recording_backend(torch, None, None, model, graphs) if recorded else "inductor"
        with torch.no_grad():
            torch.compile(model, backend=backend)(x)
        cache = {k: v - before.get(k, 0) for k, v in counters["inductor"].items() if k.startswith("fxgraph_cache")}
        out.append({"codes": [re.sub(r"0x[0-9a-f]+", "0x", c) for c in codes], "cache": cache, "graphs": graphs})
        torch._dynamo.reset()  # Dynamo traces again; Inductor's cache on disk stays
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_inductor_compiles_and_caches_as_without_the_recorder(tmp_path: Path):
    # GIVEN one model compiled three times on a fresh Inductor cache: through the recorder, plainly, through the
    # recorder again (Dynamo reset between, Inductor's cache kept)
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", _COMPILE_THREE_TIMES], capture_output=True, text=True,
                          timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    first, plain, again = json.loads(proc.stdout.strip().splitlines()[-1])
    # THEN the recorder's compile filled the cache that the plain compile and the next recorded one hit
    assert first["cache"].get("fxgraph_cache_miss") == 1
    assert plain["cache"].get("fxgraph_cache_hit") == 1 and again["cache"].get("fxgraph_cache_hit") == 1
    # and the output code is the same in all three
    assert first["codes"] and first["codes"] == plain["codes"] == again["codes"]
    # and the recorder read the graph on the cache hit too
    assert first["graphs"] == again["graphs"] and first["graphs"][0]["nodes"]
    assert {p[0] for p in first["graphs"][0]["nodes"].values()} >= {"a", "b", ""}
    assert re.search(r"extern_kernels\.(addmm|mm)", first["codes"][0])
