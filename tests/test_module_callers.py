"""Compiled GEMMs named by the module whose forward called them: the worker's ``graph_N.modules.json`` beside the
output code (Dynamo's ``nn_module_stack`` of each traced node) read back through Inductor's provenance or the call
site's source-node comment. Hand-written files: an LM head tied to the token embedding (its weight's first name is
``model.embed_tokens``), attention's ``q @ k`` (no weight of its own) and SDPA decomposed into a bmm."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kernelscope.analysis.gemm.modules import ModuleIndex
from kernelscope.analysis.mode import load_codes
from kernelscope.provenance import parse_graph_callers, parse_inductor_provenance
from kernelscope.report.evidence_words import evidence_text

CODE = """
from torch._inductor.select_algorithm import extern_kernels
empty_strided_cpu = torch._C._dynamo.guards._empty_strided_cpu


def call(self, args):
    arg0_1, arg1_1, arg2_1, arg3_1 = args
    args.clear()
    buf0 = empty_strided_cpu((4, 16, 16), (256, 16, 1), torch.float32)
    # Topologically Sorted Source Nodes: [q, k, matmul], Original ATen: [aten.bmm]
    # [Provenance debug handles] extern_kernels.bmm:1
    extern_kernels.bmm(arg0_1, arg1_1, out=buf0)
    buf1 = empty_strided_cpu((4, 16, 16), (256, 16, 1), torch.float32)
    # Topologically Sorted Source Nodes: [attn_output], Original ATen: [aten.bmm]
    # [Provenance debug handles] extern_kernels.bmm:2
    extern_kernels.bmm(buf0, arg1_1, out=buf1)
    buf2 = empty_strided_cpu((16, 512), (512, 1), torch.float32)
    # Topologically Sorted Source Nodes: [h, logits], Original ATen: [aten.mm]
    # [Provenance debug handles] extern_kernels.mm:3
    extern_kernels.mm(arg2_1, reinterpret_tensor(arg3_1, (64, 512), (1, 64), 0), out=buf2)
    return (buf1, buf2, )
"""

# Dynamo's graph as TORCH_LOGS=graph_code prints it: the LM head reads the tied weight by its first name
LOG = """TRACED GRAPH
 ===== __compiled_fn_1 =====
        l_x_ = L_x_
        l_w_ = L_self_modules_model_modules_embed_tokens_parameters_weight_
        # File: /m/model.py:20 in forward, code: q = self.q(x)
        q: "f32[4, 16, 16][256, 16, 1]cpu" = l_x_.view(4, 16, 16)
        k: "f32[4, 16, 16][256, 16, 1]cpu" = l_x_.view(4, 16, 16)
        # File: /m/model.py:21 in forward, code: s = q @ k
        matmul: "f32[4, 16, 16][256, 16, 1]cpu" = q @ k
        # File: /m/model.py:22 in forward, code: o = F.scaled_dot_product_attention(q, k, k)
        attn_output: "f32[4, 16, 16][256, 16, 1]cpu" = torch._C._nn.scaled_dot_product_attention(q, k, k)
        # File: /m/model.py:30 in forward, code: h = self.norm(o)
        h: "f32[16, 64][64, 1]cpu" = attn_output.view(16, 64)
        # File: /m/model.py:31 in forward, code: logits = self.lm_head(h)
        logits: "f32[16, 512][512, 1]cpu" = torch._C._nn.linear(h, l_w_)
        return (attn_output, logits)
"""

PROVENANCE = {"mapping": {
    "cppCodeToPost": {"extern_kernels.bmm:1": ["bmm"], "extern_kernels.bmm:2": ["bmm_default_1"],
                      "extern_kernels.mm:3": ["mm"]},
    "postToPre": {"bmm": ["matmul"], "bmm_default_1": ["attn_output"], "mm": ["logits"]}}}

ATTN = "model.layers.0.self_attn"
CALLERS = {"frame": "", "nodes": {
    "q": [ATTN, "model.layers.0", "model", ""], "k": [ATTN, "model.layers.0", "model", ""],
    "matmul": [ATTN, "model.layers.0", "model", ""], "attn_output": [ATTN, "model.layers.0", "model", ""],
    "h": ["model.norm", "model", ""], "logits": ["lm_head", ""]}}


def _index(tmp_path: Path, *, callers: bool, provenance: bool = True, log: str | None = LOG):
    code = tmp_path / "graph_0.py"
    code.write_text(CODE)
    if provenance:
        (tmp_path / "graph_0.provenance.json").write_text(json.dumps(PROVENANCE))
    if callers:
        (tmp_path / "graph_0.modules.json").write_text(json.dumps(CALLERS))
    (c,) = load_codes([code])
    idx = ModuleIndex.build(log, [c], None)
    assert idx is not None
    return idx, c.launches


@pytest.mark.parametrize("provenance", [True, False], ids=["by-provenance", "by-comment"])
def test_each_gemm_is_named_by_the_module_that_called_it(tmp_path, provenance):
    idx, launches = _index(tmp_path, callers=True, provenance=provenance)
    found = [idx.lookup(0, L.source_nodes, L.debug_handle) for L in launches]
    # THEN q @ k and the tied LM head carry their callers; SDPA's bmm, known only through provenance, too
    want = [ATTN, ATTN if provenance else "", "lm_head"]
    assert [m for m, _, _ in found] == want
    assert [s for _, s, _ in found][::2] == ["model.py:21", "model.py:31"]
    for (module, _, ev), L in zip(found, launches):
        if not module:
            continue
        assert ev is not None and ev.rule == "provenance.caller"
        text = evidence_text(ev)
        assert f"called in {module}'s forward" in text and "nn_module_stack" in text
        assert (f"call site {L.debug_handle}" in text) == provenance


def test_without_the_callers_file_the_parameters_name_the_module(tmp_path):
    # an older capture: the tied weight's first name, and nothing for GEMMs without a weight (as before)
    idx, launches = _index(tmp_path, callers=False)
    found = [idx.lookup(0, L.source_nodes, L.debug_handle) for L in launches]
    assert [m for m, _, _ in found] == ["", "", "model.embed_tokens"]
    assert found[2][2] is not None and found[2][2].rule == "provenance.call-site"


def test_callers_alone_name_gemms_without_the_compile_log(tmp_path):
    # no graph_code (a log not kept): provenance's traced node and the callers still name every GEMM
    idx, launches = _index(tmp_path, callers=True, log=None)
    assert [idx.lookup(0, L.source_nodes, L.debug_handle)[0] for L in launches] == [ATTN, ATTN, "lm_head"]


def test_a_pattern_call_is_not_named_by_another_gemm_among_its_inputs(tmp_path):
    # GIVEN a oneDNN pattern call (its own node fn_1, made from the residual add) whose provenance also lists the
    # nodes of its inputs, another GEMM's among them, and no graph_code to tell which traced node is its GEMM
    idx, _ = _index(tmp_path, callers=True, log=None)
    idx.provenance[0] = parse_inductor_provenance({"mapping": {
        "cppCodeToPost": {"torch.ops.mkldnn._linear_pointwise.binary:4": ["fn_1", "mm"]},
        "postToPre": {"fn_1": ["h"], "mm": ["logits"]}}})
    # THEN the call gets no module rather than that other GEMM's caller
    assert idx.lookup(0, (), "torch.ops.mkldnn._linear_pointwise.binary:4")[0] == ""


def test_the_callers_record_is_read_tolerantly():
    rec = parse_graph_callers(CALLERS)
    assert rec is not None and rec.frame == "" and rec.caller("logits") == "lm_head"
    assert rec.stack("matmul") == (ATTN, "model.layers.0", "model", "")
    assert rec.caller("nope") is None
    assert parse_graph_callers({}) is None and parse_graph_callers([]) is None
    assert parse_graph_callers({"frame": None, "nodes": {"a": []}}) is None
    assert parse_graph_callers({"frame": 3, "nodes": {"a": ["x", 1]}}).frame is None
