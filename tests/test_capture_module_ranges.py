"""The eager worker's module ranges: every submodule's forward is a ``kernelscope.module: <path>`` profiler range
while ``_profile`` runs, and the hooks are gone afterwards (also when the model raises). Real torch on the CPU, a
tiny model: about a second."""

from __future__ import annotations

import pytest

from kernelscope.provenance import MODULE_RANGE_PREFIX, module_index
from kernelscope.trace import load_trace

torch = pytest.importorskip("torch")


class _Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = torch.nn.ModuleList([torch.nn.Linear(8, 8), torch.nn.Linear(8, 8)])
        self.act = torch.nn.ReLU()
        self.fail = False

    def forward(self, x):
        for b in self.blocks:
            x = self.act(b(x))
        if self.fail:
            raise RuntimeError("boom")
        return x


def _hooks(model):
    return [(name, len(m._forward_pre_hooks), len(m._forward_hooks)) for name, m in model.named_modules()
            if m._forward_pre_hooks or m._forward_hooks]


def _spec(tmp_path):
    return {"tb_dir": str(tmp_path / "tb"), "out_dir": str(tmp_path), "profile_steps": 2}


def test_profile_wraps_each_submodule_and_removes_the_hooks(tmp_path):
    from kernelscope.capture.profiling import _profile
    from kernelscope.capture.timing import _Timer

    model = _Tiny().eval()
    x = torch.randn(4, 8)
    with torch.no_grad():
        rel = _profile(torch, lambda: model(x), _Timer(torch, "cpu"), "cpu", _spec(tmp_path), modules=model)
    assert _hooks(model) == []  # GIVEN/THEN: nothing left on the model after profiling
    trace = load_trace(tmp_path / rel)
    ranges = [e.name[len(MODULE_RANGE_PREFIX):] for e in trace.cpu if e.name.startswith(MODULE_RANGE_PREFIX)]
    # 2 active steps x (blocks.0, act, blocks.1, act); the root and the ModuleList (never called) get none
    assert ranges == ["blocks.0", "act", "blocks.1", "act"] * 2
    index = module_index(trace.cpu)
    assert [index.of(e) for e in trace.cpu if e.name == "aten::addmm"] == ["blocks.0", "blocks.1"] * 2
    assert [index.of(e) for e in trace.cpu if e.name == "aten::relu"] == ["act", "act"] * 2


def test_hooks_are_removed_when_the_model_raises(tmp_path):
    from kernelscope.capture.profiling import _profile
    from kernelscope.capture.timing import _Timer

    model = _Tiny().eval()
    model.fail = True
    x = torch.randn(4, 8)
    with torch.no_grad(), pytest.raises(RuntimeError, match="boom"):
        _profile(torch, lambda: model(x), _Timer(torch, "cpu"), "cpu", _spec(tmp_path), modules=model)
    assert _hooks(model) == []


def test_compiled_modes_get_no_ranges(tmp_path):
    # modules=None (what run_point passes for a compiled mode): no hooks are installed at all
    from kernelscope.capture.profiling import _profile
    from kernelscope.capture.timing import _Timer

    model = _Tiny().eval()
    seen = []
    x = torch.randn(4, 8)

    def call():
        seen.append(_hooks(model))
        return model(x)

    with torch.no_grad():
        rel = _profile(torch, call, _Timer(torch, "cpu"), "cpu", _spec(tmp_path))
    assert seen and all(h == [] for h in seen)
    assert not [e for e in load_trace(tmp_path / rel).cpu if e.name.startswith(MODULE_RANGE_PREFIX)]


def test_a_script_module_is_profiled_without_ranges(tmp_path):
    # torch.jit.script modules refuse forward hooks: the eager profile must still run
    from kernelscope.capture.profiling import _profile
    from kernelscope.capture.timing import _Timer

    model = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU()))
    x = torch.randn(4, 8)
    with torch.no_grad():
        rel = _profile(torch, lambda: model(x), _Timer(torch, "cpu"), "cpu", _spec(tmp_path), modules=model)
    assert not [e for e in load_trace(tmp_path / rel).cpu if e.name.startswith(MODULE_RANGE_PREFIX)]
