"""The eager epilogue follows a GEMM's value through views and layout copies to the op that reads it.

A view aliases its input and a layout copy (clone, contiguous, permute + copy, roll, slice of a padded map) only
moves or selects elements: the op that reads their result reads the GEMM's values, so it is the GEMM's epilogue op;
a reduction or norm still ends the chain. Swin's window attention is the case in point: the output projection's
result goes through the window reverse (view, permute, reshape's copy), the reverse cyclic shift (roll) and the
crop (``x[:, :H, :W, :].contiguous()``, which on an unpadded map is an alias and a ``.contiguous()`` that runs no
ATen op) into the residual add.

Fixture: tests/data/cpu-torch2.14.1/tv_swin_bf16.tar.gz (the eager trace and capture.json of
`kernelscope profile tests/zoo/models/tv_swin.py --device cpu --dtype bfloat16 --modes eager,default
--processes 1`, README there). The unit tests build traces by hand: CPU ops, the eager worker's
``kernelscope.flow:`` ranges (dataflow) or none (call order).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import pytest

from kernelscope.analysis.gemm import analyze_gemms
from kernelscope.analysis.kernels import analyze_kernels
from kernelscope.provenance import FLOW_RANGE_PREFIX
from kernelscope.report.evidence_words import evidence_text
from kernelscope.result import GemmEpilogue
from kernelscope.trace import trace_from_dict

from .test_gemm_engine import mode_result

SWIN = "tests/data/cpu-torch2.14.1/tv_swin_bf16.tar.gz"
CPU_EAGER = {"device": "cpu", "capability": None, "compiled": False}


# ------------------------------------------------------------------------------------------------------------
# Swin, recorded (CPU, bf16, eager)

def test_swin_window_attention_projection_has_the_residual_add_as_its_unfused_epilogue_op():
    # GIVEN the eager trace of torchvision's Swin-T layout at its tiny size (2 stages of 2 blocks; the second
    # block of stage 1 shifts its windows)
    m = mode_result(SWIN, "eager")
    # THEN every attention output projection (the second addmm of each block's attention) applies its bias in the
    # GEMM call (aten::addmm) and its result meets the residual add, run by aten::add as an op of its own
    proj = [g for g in m.gemms if g.op == "addmm" and g.module.endswith(".attn") and g.n == g.k]
    assert [(g.module, g.m, g.n, g.verdict, g.fused, g.unfused, g.unfused_kernels) for g in proj] == [
        ("features.1.0.attn", 128, 32, "partial", ("bias",), ("add",), ("aten::add",)),
        ("features.1.1.attn", 128, 32, "partial", ("bias",), ("add",), ("aten::add",)),
        ("features.3.0.attn", 32, 64, "partial", ("bias",), ("add",), ("aten::add",)),
        ("features.3.1.attn", 32, 64, "partial", ("bias",), ("add",), ("aten::add",)),
    ]
    for g in proj:
        through = [e for e in g.evidence if e.rule == "eager-dataflow.through"]
        # one hop, from the projection to the add: Dropout (eval), the window reverse, the crop
        assert [e.facts["op"] for e in through] == ["aten::add"]
        ops = through[0].facts["through"]
        assert ops[:4] == ("aten::dropout", "aten::view", "aten::permute", "aten::reshape"), ops
        assert ops[-1] == "aten::alias"  # x[:, :H, :W, :] of an unpadded map
        # .contiguous() of the contiguous crop returns it without an ATen op: the add reads that call's result
        assert through[0].facts["bare"] == 1
        # the chain then ends at the next block's norm (norm2), not past it
        stops = [e.facts["op"] for e in g.evidence if e.rule == "eager-sequence.stop-boundary"]
        assert stops == ["aten::layer_norm"]
    # the shifted block (features.1.1) shifts the windows back with torch.roll: a layout copy, not an epilogue op
    shifted = next(e for e in proj[1].evidence if e.rule == "eager-dataflow.through")
    assert "aten::roll" in shifted.facts["through"]
    assert shifted.facts["copies"] == ("aten::reshape", "aten::roll")
    assert evidence_text(shifted).startswith(
        "[eager-dataflow] the value reaches aten::add through aten::dropout, aten::view, aten::permute, "
        "aten::reshape, aten::roll, aten::alias and 1 torch call(s) that ran no ATen op")


def test_swin_eager_verdicts():
    # The whole model as eager reads it; each row was checked against the trace (tests/data/cpu-torch2.14.1
    # README). Inductor's default mode reads the same ops on every projection and MLP Linear (it fuses more of
    # them: oneDNN takes fc1's GELU and fc2's residual add as post-ops).
    m = mode_result(SWIN, "eager")
    assert m.gemm_summary == "GEMMs 27: fused 2, partial 16, unfused 4, none 5"
    block = lambda p, shifted: [  # noqa: E731
        (f"{p}.attn", "addmm", "partial", ("bias",), ("mul",)),  # qkv: q * scale
        (f"{p}.attn", "bmm", "unfused", (), ("add", "add") if shifted else ("add",)),  # + rel. pos. bias (+ mask)
        (f"{p}.attn", "bmm", "none", (), ()),  # attn @ v -> proj
        (f"{p}.attn", "addmm", "partial", ("bias",), ("add",)),  # proj -> window reverse -> residual add
        (f"{p}.mlp.0", "addmm", "partial", ("bias",), ("gelu",)),
        (f"{p}.mlp.3", "addmm", "partial", ("bias",), ("add",)),
    ]
    assert [(g.module, g.op, g.verdict, g.fused, g.unfused) for g in m.gemms] == [
        ("features.0.0", "convolution", "fused", ("bias",), ()),
        *block("features.1.0", False), *block("features.1.1", True),
        ("features.2.reduction", "mm", "none", (), ()),  # patch merging -> the next block's norm1
        # stage 2's 4 x 4 map is one window: no shift, no mask
        *block("features.3.0", False), *block("features.3.1", False),
        ("head", "addmm", "fused", ("bias",), ()),
    ]


# ------------------------------------------------------------------------------------------------------------
# Hand-built eager traces (CPU): each call an ATen op with its nested ops, inside a kernelscope.flow range

@dataclass
class Call:
    """One torch call of the model: its top-level ATen op (None: a call that runs no ATen op), the shapes it was
    called with, the ops nested in it, and its flow serial with the serials it read (None: no flow range)."""

    op: str | None
    dims: list[Any] = field(default_factory=list)
    nested: list[tuple[str, list[Any]]] = field(default_factory=list)
    flow: tuple[int, tuple[int, ...]] | None = None


def cpu_trace(calls: list[Call]) -> Any:
    """A CPU eager trace of two profiled steps running ``calls``, as torch.profiler writes it."""
    events: list[dict[str, Any]] = []
    ids = itertools.count(1)
    clock = 1000.0

    def ev(name: str, cat: str, ts: float, dur: float, dims: list[Any] | None = None) -> dict[str, Any]:
        args: dict[str, Any] = {"External id": next(ids)} if cat == "cpu_op" else {}
        if dims is not None:
            args["Input Dims"] = dims
        return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": args}

    for step in (1, 2):
        start = clock
        for c in calls:
            t = clock
            clock += 100 + 20 * len(c.nested)
            if c.flow is not None:
                serial, ins = c.flow
                label = f"{FLOW_RANGE_PREFIX}#{serial + 100 * (step - 1)} in=" + ",".join(
                    str(s + 100 * (step - 1)) for s in ins)
                events.append(ev(label, "user_annotation", t, clock - t - 5))
            if c.op is not None:
                events.append(ev(c.op, "cpu_op", t + 2, clock - t - 10, c.dims))
                for i, (name, dims) in enumerate(c.nested):
                    events.append(ev(name, "cpu_op", t + 5 + 20 * i, 15, dims))
        events.append(ev(f"ProfilerStep#{step}", "user_annotation", start - 1, clock - start + 2))
        clock += 10
    return trace_from_dict({"traceEvents": events})


def eager_gemms(calls: list[Call]) -> tuple[GemmEpilogue, ...]:
    trace = cpu_trace(calls)
    gemms, _ = analyze_gemms(analyze_kernels(trace), trace, (), mode="eager", mode_config=CPU_EAGER)
    return gemms


X = [8, 16, 32]  # 8 windows of 16 tokens, 32 channels
MAP = [2, 8, 8, 32]  # the feature map they came from


def linear(serial: int, ins: tuple[int, ...] = (), flow: bool = True) -> Call:
    return Call("aten::linear", [X, [32, 32], [32]],
                [("aten::addmm", [[32], [128, 32], [32, 32], [], []]), ("aten::copy_", [[128, 32], [128, 32], []])],
                (serial, ins) if flow else None)


def window_reverse(first: int, flow: bool = True) -> list[Call]:
    """proj's result back onto the map: view, permute, reshape (a copy: clone -> copy_), roll (cat of two narrows),
    serials first .. first + 3."""
    f = (lambda s, i: (s, (i,))) if flow else (lambda s, i: None)
    return [
        Call("aten::view", [X, []], [], f(first, first - 1)),
        Call("aten::permute", [[2, 2, 2, 4, 4, 32], []], [("aten::as_strided", [])], f(first + 1, first)),
        Call("aten::reshape", [[2, 2, 4, 2, 4, 32], []],
             [("aten::clone", [[2, 2, 4, 2, 4, 32]]), ("aten::copy_", [[2, 2, 4, 2, 4, 32], [2, 2, 4, 2, 4, 32]])],
             f(first + 2, first + 1)),
        Call("aten::roll", [MAP, [], []], [("aten::cat", [[], []]), ("aten::narrow", [MAP])], f(first + 3, first + 2)),
    ]


def texts(g: GemmEpilogue) -> list[str]:
    return [evidence_text(e) for e in g.evidence]


def test_a_residual_add_after_views_copies_and_a_call_without_an_aten_op_is_the_epilogue_op():
    # GIVEN proj (#1) -> window reverse (#2-#5) -> .contiguous() that runs no ATen op (#6) -> x + proj (#7, also
    # reading the block's input #0) -> the next norm (#8)
    (g,) = eager_gemms([
        linear(1, (0,)),
        *window_reverse(2),
        Call(None, flow=(6, (5,))),
        Call("aten::add", [MAP, MAP, []], [], (7, (6, 0))),
        Call("aten::layer_norm", [MAP, [], [32], [32], [], []], [("aten::native_layer_norm", [MAP])], (8, (7,))),
    ])
    # THEN the add is proj's unfused epilogue op and the norm ends the chain
    assert (g.verdict, g.fused, g.unfused, g.unfused_kernels) == ("partial", ("bias",), ("add",), ("aten::add",))
    through = [e for e in g.evidence if e.rule == "eager-dataflow.through"]
    assert [(e.facts["op"], e.facts["through"], e.facts["copies"], e.facts["bare"]) for e in through] == [
        ("aten::add", ("aten::view", "aten::permute", "aten::reshape", "aten::roll"),
         ("aten::reshape", "aten::roll"), 1)]
    assert [e.facts["op"] for e in g.evidence if e.rule == "eager-sequence.stop-boundary"] == ["aten::layer_norm"]
    assert any(t.startswith("[eager-dataflow] aten::add on [2, 8, 8, 32] reads the result of aten::linear and other "
                            "data") for t in texts(g))


def test_without_dataflow_the_call_order_goes_through_the_same_views_and_copies():
    # GIVEN the same calls in a trace without kernelscope.flow ranges (an older capture): the .contiguous() that
    # ran no ATen op leaves nothing in the trace
    (g,) = eager_gemms([
        linear(1, flow=False),
        *window_reverse(2, flow=False),
        Call("aten::add", [MAP, MAP, []], []),
        Call("aten::layer_norm", [MAP, [], [32], [32], [], []], [("aten::native_layer_norm", [MAP])]),
    ])
    # THEN the add (on the GEMM's 128 x 32 elements) is the epilogue op; roll is no op of it
    assert (g.verdict, g.fused, g.unfused) == ("partial", ("bias",), ("add",))
    through = [e for e in g.evidence if e.rule == "eager-sequence.through"]
    assert [(e.facts["op"], e.facts["through"], e.facts["copies"]) for e in through] == [
        ("aten::add", ("aten::view", "aten::permute", "aten::reshape", "aten::roll"), ("aten::reshape", "aten::roll"))]
    assert "bare" not in through[0].facts
    assert evidence_text(through[0]).startswith(
        "[eager-sequence] aten::add comes after the chain's last op, in call order, past aten::view, aten::permute")


def test_a_crop_of_a_padded_map_carries_the_value_on():
    # GIVEN a 10 x 10 map padded to 12 x 12 for its windows: proj -> view -> two slices -> contiguous (a copy) ->
    # the residual add on the cropped shape
    crop = [2, 10, 10, 32]
    (g,) = eager_gemms([
        linear(1, (0,)),
        Call("aten::view", [X, []], [], (2, (1,))),
        Call("aten::slice", [[2, 12, 12, 32], [], [], [], []], [("aten::as_strided", [])], (3, (2,))),
        Call("aten::slice", [[2, 10, 12, 32], [], [], [], []], [("aten::as_strided", [])], (4, (3,))),
        Call("aten::contiguous", [[2, 10, 10, 32], []],
             [("aten::clone", [[2, 10, 10, 32]]), ("aten::copy_", [crop, crop, []])], (5, (4,))),
        Call("aten::add", [crop, crop, []], [], (6, (5, 0))),
    ])
    assert (g.fused, g.unfused) == (("bias",), ("add",))
    (hop,) = [e for e in g.evidence if e.rule == "eager-dataflow.through"]
    assert hop.facts["through"] == ("aten::view", "aten::slice", "aten::slice", "aten::contiguous")
    assert hop.facts["copies"] == ("aten::contiguous",) and hop.facts["bare"] == 0


def test_a_linear_then_layer_norm_still_stops_at_the_norm():
    # GIVEN an ordinary Linear -> LayerNorm, then a pointwise op on the norm's output
    norm = Call("aten::layer_norm", [X, [], [32], [32], [], []], [("aten::native_layer_norm", [X])], (2, (1,)))
    after = Call("aten::mul", [X, []], [], (3, (2,)))
    (g,) = eager_gemms([linear(1, (0,)), norm, after])
    # THEN the norm ends the chain: the mul after it is no epilogue op of the GEMM
    assert (g.verdict, g.fused, g.unfused) == ("fused", ("bias",), ())
    assert [e.facts["op"] for e in g.evidence if e.rule == "eager-sequence.stop-boundary"] == ["aten::layer_norm"]
    assert not [e for e in g.evidence if e.rule.endswith(".through")]  # straight to the norm: no hop to say
    # and through a view first, the hop is said and the norm still ends it
    (g,) = eager_gemms([linear(1, (0,)), Call("aten::view", [X, []], [], (2, (1,))),
                        Call("aten::layer_norm", [X, [], [32], [32], [], []], [("aten::native_layer_norm", [X])],
                             (3, (2,))), Call("aten::mul", [X, []], [], (4, (3,)))])
    assert (g.verdict, g.unfused) == ("fused", ())
    assert [(e.rule, e.facts["op"]) for e in g.evidence if e.family == "eager-dataflow"] == [
        ("eager-dataflow.through", "aten::layer_norm")]


def test_a_call_without_an_aten_op_on_other_data_links_nothing():
    # GIVEN proj (#1) and a .contiguous() that ran no ATen op on another tensor (#3, of #2): an add reading #3
    # reads no value of proj's
    (g,) = eager_gemms([
        linear(1, (0,)),
        Call("aten::mul", [MAP, []], [], (2, (0,))),
        Call(None, flow=(3, (2,))),
        Call("aten::add", [MAP, MAP, []], [], (4, (3, 0))),
        Call("aten::layer_norm", [X, [], [32], [32], [], []], [("aten::native_layer_norm", [X])], (5, (1,))),
    ])
    assert (g.verdict, g.fused, g.unfused) == ("fused", ("bias",), ())
    assert not [e for e in g.evidence if e.rule == "eager-dataflow.through"]


@pytest.mark.parametrize("op", ["aten::roll", "aten::flip", "aten::repeat", "aten::clone", "aten::contiguous",
                                "aten::constant_pad_nd", "aten::pixel_shuffle"])
def test_layout_copies_are_no_epilogue_ops(op):
    # a copy that only moves, repeats or selects elements (its nested ops run as CPU kernels) carries the value on
    (g,) = eager_gemms([
        linear(1, (0,)),
        Call(op, [X, []], [("aten::copy_", [X, X, []])], (2, (1,))),
        Call("aten::relu", [X], [], (3, (2,))),
    ])
    assert (g.fused, g.unfused) == (("bias",), ("relu",))
    (hop,) = [e for e in g.evidence if e.rule == "eager-dataflow.through"]
    assert (hop.facts["through"], hop.facts["copies"]) == ((op,), (op,))


def test_indexing_by_another_tensor_still_ends_the_chain():
    # gather / index_select pick elements by another tensor's values: not a layout copy
    (g,) = eager_gemms([
        linear(1, (0,)),
        Call("aten::index_select", [X, [], [4]], [], (2, (1,))),
        Call("aten::relu", [X], [], (3, (2,))),
    ])
    assert (g.fused, g.unfused) == (("bias",), ())
    assert [e.facts["op"] for e in g.evidence if e.rule == "eager-sequence.stop-boundary"] == ["aten::index_select"]

