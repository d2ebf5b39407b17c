"""Module provenance (kernelscope.provenance): Dynamo's graph_code log -> node -> module path + source line, and the
eager trace's ``kernelscope.module:`` ranges -> the module an op ran in. No torch needed: real logs and traces
recorded with torch 2.14.1 on the CPU (tests/data/provenance/, tests/data/cpu-torch2.14.1/)."""

from __future__ import annotations

import gzip
import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kernelscope.provenance import (
    MODULE_RANGE_PREFIX,
    NodeSource,
    ParamNames,
    module_index,
    module_path_from_param,
    parse_graph_code,
)
from kernelscope.report.evidence_words import evidence_text
from kernelscope.trace import CpuEvent, load_trace

DATA = Path(__file__).resolve().parent / "data"
PROV = DATA / "provenance"
CPU = DATA / "cpu-torch2.14.1"


def _read(path: Path) -> str:
    gz = path.with_name(path.name + ".gz")
    if not path.exists() and gz.exists():
        return gzip.decompress(gz.read_bytes()).decode()
    return path.read_text(encoding="utf-8")


def _capture(model: str, mode: str) -> dict:
    return json.loads((CPU / model / "modes" / mode / "capture.json").read_text())


def _graphs(model: str, mode: str):
    return parse_graph_code(_read(CPU / model / "modes" / mode / "log.txt"), _capture(model, mode)["param_names"])


def _trace(model: str, mode: str):
    (path,) = (CPU / model / "tb" / mode).glob("*.pt.trace.json.gz")
    return load_trace(path)


# ----------------------------------------------------------------------------------------------- parameter names
@pytest.mark.parametrize(("name", "path"), [
    ("l_s_modules_layers_modules_0_modules_down_proj_parameters_weight_", "layers.0.down_proj"),
    ("L_s_modules_layers_modules_0_modules_down_proj_parameters_weight_", "layers.0.down_proj"),
    ("l_self_modules_layers_modules_3_modules_mlp_modules_gate_proj_parameters_weight_", "layers.3.mlp.gate_proj"),
    ("L_self_modules_attention_modules_self_modules_query_parameters_bias_", "attention.self.query"),
    ("L_self_modules_bn1_buffers_running_mean_", "bn1"),
    ("L_self_modules_blocks_modules_0_modules_LayerNorm_parameters_weight_", "blocks.0.LayerNorm"),
    ("L_self_parameters_scale_", ""),  # a parameter of the root module
    ("g_model_modules_fc_parameters_weight_", "fc"),  # a global module: the root is the global's name
    ("l_x_", None),
    ("linear_2", None),
])
def test_module_path_from_inlined_parameter_names(name, path):
    # GIVEN Dynamo's names for parameters inlined as graph inputs (no freezing: CUDA's default)
    assert module_path_from_param(name) == path


def test_flattened_names_need_the_models_parameter_names():
    # GIVEN freezing's flattened get_attr names, where dots and underscores merge
    params = ["layers.0.self_attn.q_proj.weight", "layers.0.mlp.gate_proj.weight", "attention.output.LayerNorm.bias"]
    # THEN the model's parameter names decide; the node name (snake-cased: LayerNorm -> layer_norm) resolves too
    assert module_path_from_param("L__self___layers_0_self_attn_q_proj_weight", params) == "layers.0.self_attn.q_proj"
    assert module_path_from_param("l__self___layers_0_mlp_gate_proj_weight", params) == "layers.0.mlp.gate_proj"
    assert module_path_from_param("L__self___attention_output_LayerNorm_bias", params) == "attention.output.LayerNorm"
    assert module_path_from_param("l__self___attention_output_layer_norm_bias", params) == "attention.output.LayerNorm"
    # AND without them no path is guessed (self_attn_q_proj could be self.attn_q.proj)
    assert module_path_from_param("L__self___layers_0_self_attn_q_proj_weight") is None
    assert ParamNames().is_param("L__self___layers_0_self_attn_q_proj_weight")
    assert module_path_from_param("L__self___other_weight", params) is None


# ------------------------------------------------------------------------------------------- graph_code: small logs
def test_swiglu_log_maps_every_linear_to_its_module_and_line():
    # GIVEN the graph_code log of graph_code_swiglu.py (two SwiGLU MLPs in a ModuleList, forward's self named `s`)
    (g,) = parse_graph_code((PROV / "graph_code_swiglu.log").read_text())
    assert g.frame == "0/0" and g.name.startswith("__compiled_fn_1_")
    assert [(n.name, n.module) for n in g.by_op("linear")] == [
        ("linear", "layers.0.gate_proj"), ("linear_1", "layers.0.up_proj"), ("linear_2", "layers.0.down_proj"),
        ("linear_3", "layers.1.gate_proj"), ("linear_4", "layers.1.up_proj"), ("linear_5", "layers.1.down_proj")]
    assert g["linear_2"] == NodeSource(
        "linear_2", "linear", "layers.0.down_proj", "g.py:5",
        "def forward(s,x): return s.down_proj(torch.nn.functional.silu(s.gate_proj(x))*s.up_proj(x))",
        "/tmp/g.py", "forward", "L_s_modules_layers_modules_0_modules_down_proj_parameters_weight_",
        # what its expression reads: the node before it (its input) and the parameter's local
        ("mul", "l_s_modules_layers_modules_0_modules_down_proj_parameters_weight_"))
    # Python operators get their operator's name; nodes that read no parameter have no module
    assert [(n.name, n.op, n.module, n.source) for n in g.nodes.values() if n.op != "linear"] == [
        ("silu", "silu", None, "g.py:5"), ("mul", "mul", None, "g.py:5"), ("x", "add", None, "g.py:9"),
        ("silu_1", "silu", None, "g.py:5"), ("mul_1", "mul", None, "g.py:5"), ("x_1", "add", None, "g.py:9")]
    assert g.get("l_x_") is None  # graph inputs are no nodes


@pytest.mark.parametrize("kind", ["frozen", "inlined"])
def test_graph_breaks_and_recompiles_give_one_graph_each_in_log_order(kind):
    # GIVEN graph_code_model.py traced with a graph break in forward and called at a second batch size; frozen:
    # freezing's get_attr parameters, inlined: parameters as graph inputs (make_graph_code_logs.py)
    params = ["blocks.0.in_proj.weight", "blocks.0.in_proj.bias", "blocks.0.LayerNorm.weight",
              "blocks.0.LayerNorm.bias", "blocks.0.out_proj.weight", "blocks.1.in_proj.weight", "blocks.1.in_proj.bias",
              "blocks.1.LayerNorm.weight", "blocks.1.LayerNorm.bias", "blocks.1.out_proj.weight", "scale"]
    graphs = parse_graph_code((PROV / f"graph_code_{kind}.log").read_text(), params)
    # THEN frame 0 (up to the break; restarted once: "_1"), its resume function (frame 1), then both recompiled
    assert [g.frame for g in graphs] == ["0/0_1", "1/0", "0/1_1", "1/1"]
    assert [g.name.split("_")[4] for g in graphs] == ["2", "5", "8", "11"]  # __compiled_fn_<n>_<uuid>
    for g, block in zip(graphs, (0, 1, 0, 1), strict=True):
        assert g["linear"].module == f"blocks.{block}.in_proj" and g["linear"].source == "graph_code_model.py:12"
        assert g["layer_norm"].module == f"blocks.{block}.LayerNorm"  # the attribute's case is kept
        assert (g["h"].op, g["h"].module) == ("relu", None)
        # h @ weight.t(): the matmul reads the parameter through t
        assert (g["t"].op, g["t"].module) == ("t", f"blocks.{block}.out_proj")
        assert (g["y"].op, g["y"].module, g["y"].code) == ("matmul", f"blocks.{block}.out_proj",
                                                           "y = h @ self.out_proj.weight.t()")
    assert graphs[0]["y_1"].op == "iadd" and graphs[0]["y_1"].source == "graph_code_model.py:14"  # y += x
    assert (graphs[1]["x"].op, graphs[1]["x"].module) == ("mul", "")  # * self.scale: the root's parameter


def test_frozen_log_without_parameter_names_keeps_the_flattened_name():
    graphs = parse_graph_code((PROV / "graph_code_frozen.log").read_text())
    n = graphs[0]["linear"]
    assert n.module is None and n.param == "L__self___blocks_0_in_proj_weight" and n.source == "graph_code_model.py:12"
    assert graphs[0]["y"].param == "L__self___blocks_0_out_proj_weight"


def test_other_log_records_colour_codes_and_bare_dumps():
    text = (PROV / "graph_code_swiglu.log").read_text()
    lines = text.splitlines()
    # fusion records between the graph's lines, colour codes (a terminal), a record of another artifact that looks
    # like a node line
    noisy = "\n".join(
        [lines[0], "V1203 07:20:31.744000 6650 x/scheduler.py:1] [0/0] [__fusion] buf0 = foo(bar)"]
        + [ln.replace("linear_1:", "\x1b[2mlinear_1\x1b[0m:") for ln in lines[1:]])
    assert parse_graph_code(noisy) == parse_graph_code(text)
    # without torch's log prefixes (a print_readable dump): the same graph, no frame
    bare = "\n".join(ln.split("[__graph_code] ", 1)[1] if "[__graph_code]" in ln else ln for ln in lines)
    (g,) = parse_graph_code(bare)
    assert g.frame == "" and g.nodes == parse_graph_code(text)[0].nodes
    assert parse_graph_code("no graphs here\n") == ()


# -------------------------------------------------------------------------------- graph_code: recorded fixtures
LLAMA_LINEARS = [f"layers.{i}.{m}" for i in (0, 1) for m in (
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj", "mlp.up_proj",
    "mlp.down_proj")]


@pytest.mark.parametrize("mode", ["default", "max-autotune", "max-autotune_CPP"])
def test_llama_block_compiled_log_maps_each_linear(mode):
    # GIVEN kernelscope's own capture of samples/llama_block.py (freezing on: flattened parameter names)
    (g,) = _graphs("llama_block", mode)
    assert g.frame == "0/0"
    linears = g.by_op("linear")
    assert [n.name for n in linears] == ["linear"] + [f"linear_{i}" for i in range(1, 14)]
    assert [n.module for n in linears] == LLAMA_LINEARS
    lines = {"q_proj": 40, "k_proj": 41, "v_proj": 42, "o_proj": 44, "gate_proj": 55, "up_proj": 55, "down_proj": 55}
    assert [n.source for n in linears] == [f"llama_block.py:{lines[m.rsplit('.', 1)[1]]}" for m in LLAMA_LINEARS]
    # the gate_proj linear of layer 1, its silu and the SwiGLU mul
    assert (g["linear_11"].module, g["linear_11"].code) == (
        "layers.1.mlp.gate_proj",
        "return self.down_proj(torch.nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))")
    assert (g["silu_1"].op, g["mul_9"].op, g["mul_9"].module) == ("silu", "mul", None)
    assert [n.name for n in g.by_op("scaled_dot_product_attention")] == ["att", "att_1"]
    # RMSNorm's weight * normed: the norm's module; the residual adds are the decoder layer's lines
    assert (g["mul_1"].module, g["mul_11"].module) == ("layers.0.input_layernorm", "norm")
    assert (g["x"].op, g["x"].source, g["x_1"].source) == ("add", "llama_block.py:67", "llama_block.py:68")


def test_bert_layer_default_log_maps_hugging_face_names():
    (g,) = _graphs("bert_layer", "default")
    assert [(n.name, n.module) for n in g.by_op("linear")] == [
        ("linear", "attention.self.query"), ("linear_1", "attention.self.key"), ("linear_2", "attention.self.value"),
        ("linear_3", "attention.output.dense"), ("linear_4", "intermediate.dense"), ("linear_5", "output.dense")]
    assert [(n.module, n.source) for n in g.by_op("layer_norm")] == [
        ("attention.output.LayerNorm", "bert_layer.py:44"), ("output.LayerNorm", "bert_layer.py:44")]
    assert [(n.op, n.source) for n in g.by_op("gelu", "dropout")] == [
        ("dropout", "bert_layer.py:44"), ("gelu", "bert_layer.py:63"), ("dropout", "bert_layer.py:44")]


def test_conv_bn_relu_default_log_maps_convs_and_batch_norms():
    (g,) = _graphs("conv_bn_relu", "default")
    assert [(n.op, n.module, n.source) for n in g.by_op("conv2d", "batch_norm", "relu")] == [
        ("conv2d", "conv1", "conv_bn_relu.py:31"), ("batch_norm", "bn1", "conv_bn_relu.py:31"),
        ("relu", None, "conv_bn_relu.py:31"), ("conv2d", "conv2", "conv_bn_relu.py:32"),
        ("batch_norm", "bn2", "conv_bn_relu.py:32"), ("relu", None, "conv_bn_relu.py:33")]
    # eval BatchNorm reads its running statistics (buffers) and affine parameters: all bn1's
    assert {g[f"l__self___bn1_{b}"].module for b in ("running_mean", "running_var", "weight", "bias")} == {"bn1"}
    assert (g["add"].op, g["add"].code) == ("add", "return self.relu(out + x)")


# --------------------------------------------------------------------------------------- eager: module ranges
def _ops_in_steps(trace, names):
    steps = [e for e in trace.cpu if e.name.startswith("ProfilerStep#")]
    assert len(steps) == 3
    return steps, [e for e in trace.cpu if e.cat == "cpu_op" and e.name in names
                   and any(s.ts <= e.ts < s.end for s in steps)]


def test_llama_block_eager_gemms_lie_in_their_linears_ranges():
    # GIVEN the eager capture: every submodule's forward wrapped in a kernelscope.module: range while profiling
    trace = _trace("llama_block", "eager")
    index = module_index(trace.cpu)
    assert index.ranges == 3 * 25  # 3 profiled steps x 25 submodules (2 x 11, norm, layers, and none for the root)
    steps, mms = _ops_in_steps(trace, {"aten::mm"})
    # THEN each Linear's GEMM (aten::mm: no bias) is inside that Linear's range, in launch order, every step
    assert [index.of(e) for e in mms] == LLAMA_LINEARS * 3
    _, other = _ops_in_steps(trace, {"aten::silu", "aten::scaled_dot_product_attention", "aten::rsqrt"})
    assert [index.of(e) for e in other][:5] == [
        "layers.0.input_layernorm", "layers.0.self_attn", "layers.0.post_attention_layernorm", "layers.0.mlp",
        "layers.1.input_layernorm"]
    assert index.of(steps[0]) is None  # the step marker itself is in no module


def test_bert_layer_eager_gemms_lie_in_their_linears_ranges():
    trace = _trace("bert_layer", "eager")
    index = module_index(trace.cpu)
    _, addmms = _ops_in_steps(trace, {"aten::addmm"})
    assert [index.of(e) for e in addmms] == [
        "attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
        "intermediate.dense", "output.dense"] * 3
    _, norms = _ops_in_steps(trace, {"aten::layer_norm"})
    assert [index.of(e) for e in norms] == ["attention.output.LayerNorm", "output.LayerNorm"] * 3


def test_conv_bn_relu_eager_convs_lie_in_their_ranges():
    trace = _trace("conv_bn_relu", "eager")
    index = module_index(trace.cpu)
    _, convs = _ops_in_steps(trace, {"aten::convolution"})
    assert [index.of(e) for e in convs] == ["conv1", "conv2"] * 3
    _, bns = _ops_in_steps(trace, {"aten::batch_norm"})
    assert [index.of(e) for e in bns] == ["bn1", "bn2"] * 3
    _, relus = _ops_in_steps(trace, {"aten::relu_"})
    assert [index.of(e) for e in relus] == ["relu", "relu"] * 3  # one ReLU module called twice


def _ev(name: str, ts: float, dur: float, tid: object = 1) -> CpuEvent:
    return CpuEvent(name, "user_annotation", ts, dur, 1, tid, None)


def test_module_index_nesting_gaps_threads_and_ties():
    m = MODULE_RANGE_PREFIX
    events = [
        _ev(m + "a", 0, 100), _ev(m + "a.b", 0, 40),  # a child starting with its parent
        _ev(m + "a.c", 50, 10), _ev(m + "a.c.d", 52, 2),
        _ev("aten::mm", 10, 5),  # not a range
        _ev(m + "e", 200, 10),  # after a gap
        _ev(m + "x", 0, 1000, tid=2),  # another thread
        _ev(m + "a.bad", 90, 50),  # ends after its parent: clamped to it
    ]
    idx = module_index(events)
    assert idx.ranges == 7
    at = [(t, idx.at(t, 1)) for t in (0, 39.9, 40, 45, 50, 52, 53.99, 54, 60, 95, 99.9, 100, 150, 205, 210)]
    assert at == [(0, "a.b"), (39.9, "a.b"), (40, "a"), (45, "a"), (50, "a.c"), (52, "a.c.d"), (53.99, "a.c.d"),
                  (54, "a.c"), (60, "a"), (95, "a.bad"), (99.9, "a.bad"), (100, None), (150, None), (205, "e"),
                  (210, None)]
    assert idx.at(500, 2) == "x" and idx.at(5, 3) is None and idx.at(-1, 1) is None


def test_module_index_is_fast_on_large_traces():
    # GIVEN 300k CPU events: 167k module ranges (a layer and 4 sublayers) and 133k ops inside them (1M events:
    # index 1.2 s, 1 us per lookup on the 2-core VM; building the events themselves takes longer)
    rnd = random.Random(0)
    events: list[CpuEvent] = []
    t = 0.0
    while len(events) < 300_000:
        events.append(_ev(MODULE_RANGE_PREFIX + "layers.0", t, 50))
        for j in range(4):
            events.append(_ev(MODULE_RANGE_PREFIX + f"layers.0.l{j}", t + 10 * j + 1, 8))
            events.append(_ev("aten::mm", t + 10 * j + 2, 5))
        t += 60
    ops = [e for e in events if e.name == "aten::mm"]
    rnd.shuffle(events)  # the index sorts by itself
    t0 = time.perf_counter()
    idx = module_index(events)
    got = [idx.of(e) for e in ops]
    took = time.perf_counter() - t0
    assert got[:4] == [f"layers.0.l{j}" for j in range(4)] and len(got) == len(ops)
    assert took < 5, f"{took:.1f} s"  # about 0.5 s on a 2-core VM


def test_provenance_imports_no_torch():
    code = "import sys, kernelscope.provenance; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------------------------- Inductor's provenance
# Fixtures recorded with provenance on (kernelscope's compiled workers set trace.provenance_tracking_level = 1):
# code/graph_0.py carries "# [Provenance debug handles] <kernel>:<n>" above each call site and
# code/graph_0.provenance.json maps each handle to the FX nodes it computes and their stack traces.
H200P = DATA / "h200-torch2.11-provenance"
H214P = DATA / "h200-torch2.14.1-provenance"  # torch 2.14.1 + cutlass.operators carried onto the H200 (NVGEMM)
NV = "max-autotune:ATEN+TRITON+NVGEMM"
SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def _mode(folder: Path, mode: str):
    from kernelscope.analysis.mode import build_mode_result

    cap = next(json.loads(p.read_text()) for p in folder.glob("modes/*/capture.json")
               if json.loads(p.read_text()).get("mode") == mode)
    return build_mode_result(folder, cap), cap


def _line(source: str) -> str:
    """The sample's line a GEMM's source names ("llama_block.py:40")."""
    name, _, line = source.rpartition(":")
    return (SAMPLES / name).read_text().splitlines()[int(line) - 1]


@pytest.mark.parametrize(("folder", "mode"), [
    (CPU / "llama_block", "default"), (CPU / "llama_block", "max-autotune:CPP"), (CPU / "llama_block", "max-autotune"),
    (H200P / "llama_block", "default"), (H200P / "llama_block", "max-autotune"),
    (H214P / "llama_block", "default"), (H214P / "llama_block", NV),
])
def test_every_compiled_gemm_names_its_module_and_line_from_inductor_provenance(folder, mode):
    # Each GEMM's call site handle -> the GEMM node it computes (_mkl_linear_13, mm_3: a C++ template that fused
    # the RMSNorm before it computes the norm's nodes too) -> the traced node (linear_3) -> its module; the line is
    # the user's call of that module (samples/llama_block.py), which names the module's attribute.
    m, _ = _mode(folder, mode)
    assert len(m.gemms) == 14
    for g in m.gemms:
        prov = [evidence_text(e) for e in g.evidence if e.rule == "provenance.call-site"]
        assert prov and prov[0].endswith("(Inductor provenance)"), (g.id, [evidence_text(e) for e in g.evidence])
        attr = g.module.rsplit(".", 1)[-1]
        assert f"self.{attr}(" in _line(g.source), (g.module, g.source)
    # in launch order; under NVGEMM up_proj's GEMM runs before gate_proj's template, which reads its result
    assert sorted(g.module for g in m.gemms[:7]) == sorted(f"layers.0.{p}" for p in (
        "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
        "mlp.up_proj", "mlp.down_proj"))


def test_provenance_and_the_graph_code_comments_agree_where_both_exist():
    # default mode's extern calls carry both a "Topologically Sorted Source Nodes" comment and a handle: the two
    # ways to the module must give the same answer, GEMM by GEMM
    from kernelscope.analysis.gemm.modules import ModuleIndex
    from kernelscope.analysis.mode import load_codes, read_log

    for folder in (CPU / "llama_block", H200P / "llama_block", H214P / "llama_block", H214P / "transformer_block"):
        _, cap = _mode(folder, "default")
        codes = load_codes([folder / p for p in cap["inductor_code"]])
        assert codes[0].provenance is not None
        log = read_log(folder / "modes" / "default" / "log.txt")
        idx = ModuleIndex.build(log, codes, cap.get("param_names"))
        sites = [L for L in codes[0].launches if L.debug_handle and codes[0].provenance.site(L.debug_handle)
                 and codes[0].provenance.site(L.debug_handle).gemm_nodes()]
        assert len(sites) == (4 if folder.name == "transformer_block" else 14)
        for L in sites:
            by_prov = idx._by_provenance(0, L.debug_handle)
            by_comment = idx._by_comment(0, L.source_nodes)
            assert by_prov is not None and by_prov[:2] == by_comment[:2], (L.debug_handle, by_prov, by_comment)


def test_each_call_site_has_its_own_handle_also_for_a_reused_kernel():
    from kernelscope.analysis.mode import load_codes

    for folder, mode in ((CPU / "llama_block", "default"), (H200P / "llama_block", "max-autotune"),
                         (H214P / "llama_block", NV)):
        _, cap = _mode(folder, mode)
        (code,) = load_codes([folder / p for p in cap["inductor_code"]])
        text = (folder / cap["inductor_code"][0]).read_text()
        handles = [L.debug_handle for L in code.launches if L.debug_handle]
        assert len(handles) == text.count("# [Provenance debug handles]")
        assert len(set(handles)) == len(handles)
        for L in code.launches:
            if L.debug_handle:
                assert L.debug_handle.rpartition(":")[0] == L.name
        reused = [n for n in {L.name for L in code.launches} if sum(L.name == n for L in code.launches) > 1]
        assert reused  # one kernel definition, several call sites, one handle each
        assert all(code.provenance.site(L.debug_handle) is not None for L in code.launches if L.debug_handle)


def test_fused_template_provenance_picks_the_gemm_node_not_the_norm():
    from kernelscope.provenance import parse_inductor_provenance

    data = json.loads((CPU / "llama_block/modes/max-autotune_CPP/code/graph_0.provenance.json").read_text())
    prov = parse_inductor_provenance(data)
    fused = [s for s in prov.sites.values() if "mean" in s.post_nodes and s.gemm_nodes()]
    assert fused  # RMSNorm computed inside the GEMM template's call (a prologue)
    for s in fused:
        post, pre = s.gemm_nodes()
        assert post.startswith("_mkl_linear") and all(p.startswith("linear") for p in pre)
    assert parse_inductor_provenance({"mapping": {}}) is None and parse_inductor_provenance([1]) is None


def test_a_freezing_pattern_replacement_loses_provenance_and_the_order_fallback_names_the_convs():
    # conv_bn_relu with freezing: oneDNN's fused conv replaces the nodes (post-grad 'fn_1' <- pre-grad 'out'), so
    # the handle names no GEMM node; the module comes from the graph's GEMM nodes in order, as without provenance
    m, _ = _mode(CPU / "conv_bn_relu", "default")
    assert [g.module for g in m.gemms] == ["conv1", "conv2"]
    assert all(any(e.rule == "provenance.by-order" for e in g.evidence) for g in m.gemms)
    assert all(any("matched by order" in evidence_text(e) for e in g.evidence) for g in m.gemms)


@pytest.mark.parametrize("folder", [CPU / "llama_block", H200P / "llama_block", CPU / "conv_bn_relu",
                                    H214P / "transformer_block"])
def test_eager_gemms_carry_the_users_source_line(folder):
    # the eager worker's "kernelscope.source: <file>:<line>" range around each GEMM-class call (F.linear,
    # F.conv2d, @): the first frame outside torch, i.e. the model's line that called the module
    m, _ = _mode(folder, "eager")
    assert m.gemms
    for g in m.gemms:
        assert g.source, g.id
        attr = g.module.rsplit(".", 1)[-1]
        assert f"self.{attr}(" in _line(g.source), (g.module, g.source)
        assert any(e.rule == "source.call" and evidence_text(e).startswith("[source] ") for e in g.evidence)


@pytest.mark.parametrize(("folder", "compiled"), [
    (CPU / "llama_block", "default"), (CPU / "llama_block", "max-autotune"), (H200P / "llama_block", "default"),
    (H200P / "llama_block", "max-autotune"), (CPU / "pool_attention", "default"), (CPU / "bert_layer", "default"),
    (H214P / "transformer_block", "default"), (H214P / "transformer_block", NV),
])
def test_eager_dataflow_finds_the_same_epilogue_as_the_compiled_code(folder, compiled):
    # The eager worker's kernelscope.flow ranges tie each torch call to the calls whose tensors it read, so the
    # eager path follows a GEMM's result as the compiled path follows buffers: SwiGLU's mul reads gate_proj's
    # silu and up_proj's result and is in both GEMMs' epilogues (it was gate_proj: silu only, by call order,
    # because up_proj's GEMM runs between the silu and the mul). Where each op ran differs by mode, the ops
    # on each GEMM's output do not.
    eager, _ = _mode(folder, "eager")
    comp, _ = _mode(folder, compiled)
    assert [g.epilogue for g in eager.gemms] == [g.epilogue for g in comp.gemms]
    # modules agree wherever the compiled graph names one (a bmm of two activations reads no parameter, so
    # graph_code names no module for it; the eager range does)
    assert all(c.module in ("", e.module) for e, c in zip(eager.gemms, comp.gemms))
    flows = [e for g in eager.gemms for e in g.evidence if e.family == "eager-dataflow"]
    assert flows  # the walk used the flow ranges, not the call order
    if folder.name == "llama_block":
        gate = next(g for g in eager.gemms if g.module == "layers.0.mlp.gate_proj")
        assert gate.epilogue == ("silu", "mul")
        assert any("reads the result of aten::linear and other data" in evidence_text(e) for e in gate.evidence)


def test_torch_2141_gpu_output_code_carries_a_handle_at_every_call_site():
    # torch 2.14.1 on the H200 (NVGEMM and Triton templates, tests/data/h200-torch2.14.1-nvgemm): the same
    # "[Provenance debug handles]" comments as 2.11 and the CPU; the NVGEMM wrapper's handle names its definition
    from kernelscope.analysis.mode import load_codes

    for name in ("mmrelu-nvgemm.code.py", "seed-aten-triton.code.py"):
        (code,) = load_codes([DATA / "h200-torch2.14.1-nvgemm" / name])
        assert code.launches and all(L.debug_handle and L.debug_handle.rpartition(":")[0] == L.name
                                     for L in code.launches), [(L.name, L.debug_handle) for L in code.launches]
    (code,) = load_codes([DATA / "h200-torch2.14.1-nvgemm" / "mmrelu-nvgemm.code.py"])
    assert code.launches[0].debug_handle.startswith("nv_universal_gemm_fused_mm_t_")


def test_torch_2141_nvgemm_and_triton_templates_each_take_the_swiglu_op_their_call_site_computes():
    # llama_block, bf16, max-autotune with ATEN,TRITON,NVGEMM on the H200 under torch 2.14.1 (read from
    # tests/data/h200-torch2.14.1-provenance/llama_block/modes/max-autotune_ATEN-TRITON-NVGEMM/code/graph_0.py and
    # its provenance JSON): in layer 0 the NVGEMM wrapper `nv_universal_gemm_fused_mm_t_view_bff399d8:8` computes
    # mm_5 (up_proj) into buf14 and the Triton template `..._silu_t_view_2:9` computes mm_4 (gate_proj) with
    # silu(acc) * buf14 as its epilogue; in layer 1 the autotuner's choice flipped (`bff399d8:18` is mm_11, gate;
    # the template `..._5:19` is mm_12, up, with silu applied to gate's buffer and the mul fused). Each call site's
    # own handle decides the module; the kernel name (which lists silu for both templates) decides nothing.
    m, _ = _mode(H214P / "llama_block", NV)
    by = {g.module: g for g in m.gemms}
    rows = {k: (by[k].backend, by[k].verdict, by[k].fused, by[k].unfused) for k in (
        "layers.0.mlp.gate_proj", "layers.0.mlp.up_proj", "layers.1.mlp.gate_proj", "layers.1.mlp.up_proj")}
    assert rows == {
        "layers.0.mlp.gate_proj": ("Triton template", "fused", ("silu", "mul"), ()),
        "layers.0.mlp.up_proj": ("NVGEMM/CuTeDSL", "unfused", (), ("mul",)),
        "layers.1.mlp.gate_proj": ("NVGEMM/CuTeDSL", "unfused", (), ("silu", "mul")),
        "layers.1.mlp.up_proj": ("Triton template", "fused", ("mul",), ()),
    }
    handles = {g.module: next(e.facts["handle"] for e in g.evidence if e.rule == "provenance.call-site")
               for g in m.gemms}
    assert handles["layers.0.mlp.up_proj"] == "nv_universal_gemm_fused_mm_t_view_bff399d8:8"
    assert handles["layers.0.mlp.gate_proj"].endswith("_silu_t_view_2:9")
    assert handles["layers.1.mlp.gate_proj"] == "nv_universal_gemm_fused_mm_t_view_bff399d8:18"
    assert handles["layers.1.mlp.up_proj"].endswith("_silu_t_view_5:19")
    # the other 10 GEMMs ran the NVGEMM definition reused at each call site; none fused (sm90 offers NVGEMM no
    # epilogue), o_proj / down_proj leave the residual add to the next RMSNorm kernel
    nv = [g for g in m.gemms if g.backend == "NVGEMM/CuTeDSL"]
    assert len(nv) == 12 and not any(g.fused for g in nv)
    assert {g.module.rsplit(".", 1)[1]: g.unfused for g in nv if g.module.startswith("layers.0.")} == {
        "q_proj": (), "k_proj": (), "v_proj": (), "o_proj": ("add",), "up_proj": ("mul",), "down_proj": ("add",)}


def test_torch_2141_transformer_block_templates_fuse_bias_and_gelu_by_provenance():
    # transformer_block, bf16: fc1's template `triton_tem_fused_add_addmm_gelu_native_layer_norm_t_view_3:6`
    # computes addmm_2 (fc1) with bias and GELU in its epilogue; proj's template `..._addmm_t_transpose_view_1:4`
    # adds the bias and leaves the residual add to the LayerNorm kernel (handle 5); qkv and fc2 stay cuBLAS addmm
    m, _ = _mode(H214P / "transformer_block", NV)
    got = [(g.module, g.backend, g.verdict, g.fused, g.unfused) for g in m.gemms]
    assert got == [
        ("qkv", "cuBLASLt", "fused", ("bias",), ()),
        ("proj", "Triton template", "partial", ("bias",), ("add",)),
        ("fc1", "Triton template", "fused", ("bias", "gelu"), ()),
        ("fc2", "cuBLASLt", "partial", ("bias",), ("add",)),
    ]


# ------------------------------------------------------------------------ a wrapper's prefix on module paths
def test_the_keyword_inputs_wrappers_prefix_is_dropped_from_every_source_of_paths():
    # GIVEN names as an older capture wrote them for a model called with keyword inputs: the wrapper held it as
    # ``model``, so Hugging Face Llama's q_proj read model.model.layers.0.self_attn.q_proj
    params = ["model.model.layers.0.self_attn.q_proj.weight", "model.lm_head.weight"]
    names = ParamNames(params, root="model.")
    # THEN Dynamo's inlined names, its flattened (freezing) names and the eager ranges all lose the prefix
    assert names.module_of("L_self_modules_model_modules_model_modules_layers_modules_0_modules_self_attn_modules_"
                           "q_proj_parameters_weight_") == "model.layers.0.self_attn.q_proj"
    flat = "L__self___model_model_layers_0_self_attn_q_proj_weight"
    assert names.module_of(flat) == "model.layers.0.self_attn.q_proj"
    assert names.module_of("l__self___model_lm_head_weight") == "lm_head"
    m = MODULE_RANGE_PREFIX
    idx = module_index([_ev(m + "model", 0, 100), _ev(m + "model.model.layers.0", 10, 20)], root="model.")
    assert (idx.at(5, 1), idx.at(15, 1)) == ("", "model.layers.0")


def test_a_frame_that_reaches_the_model_through_args_still_names_its_modules():
    # GIVEN torch.compile of a Hugging Face model called with keyword inputs (torch 2.14.1, freezing): the traced
    # frame is a decorator's wrapper(*args, **kwargs), so the parameters read L__args___0_model_embed_tokens_weight
    names = ParamNames(["model.embed_tokens.weight", "model.layers.0.mlp.up_proj.weight"])
    assert names.module_of("L__args___0_model_embed_tokens_weight") == "model.embed_tokens"
    assert names.module_of("l__args___0_model_layers_0_mlp_up_proj_weight") == "model.layers.0.mlp.up_proj"


def test_the_h200_zoo_llama_captures_paths_read_as_the_users_model():
    # GIVEN the H200 zoo capture of HF Llama (torch 2.11, by a worker that put every path under the wrapper's "model.")
    import tarfile

    from kernelscope.analysis.mode import module_prefix
    from kernelscope.capture_record import capture_from_json

    with tarfile.open(DATA / "h200-torch2.11-zoo" / "hf_llama.tar.gz") as t:
        log = gzip.decompress(t.extractfile("hf_llama/modes/default/log.txt.gz").read()).decode()
        cap = capture_from_json(json.load(t.extractfile("hf_llama/modes/default/capture.json")))
    # WHEN analysis reads its prefix (the capture does not say it: every parameter name is under "model.")
    assert cap.module_prefix is None and module_prefix(cap) == "model."
    (graph,) = parse_graph_code(log, cap.param_names, module_prefix(cap))
    mods = sorted({n.module for n in graph.by_op("linear")})
    # THEN its 29 Linears read as LlamaForCausalLM names them (model.layers.N..., lm_head)
    assert len(mods) == 29 and mods[0] == "lm_head" and "model.layers.3.mlp.down_proj" in mods
    assert not any(p.startswith("model.model.") for p in mods)
    # and a capture that says its paths are the user's model's, or whose model is not all under "model.", keeps them
    assert module_prefix(capture_from_json({**cap.to_json(), "module_prefix": ""})) == ""
    assert module_prefix(capture_from_json({"param_names": ["model.a.weight", "head.weight"]})) == ""
