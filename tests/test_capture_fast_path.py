"""The eager profile runs what the user's eager call runs. nn.MultiheadAttention takes its fused fast path
(``aten::_native_multi_head_attention``) only where no torch function override is active, and the eager worker's
source and dataflow ranges are one (a TorchFunctionMode): the profile must not turn it into the unfused
``F.multi_head_attention_forward`` that the timed calls and the dispatch count never ran. Real torch on the CPU, a
tiny encoder block: about a second."""

from __future__ import annotations

import pytest

from kernelscope.provenance import MODULE_RANGE_PREFIX, module_index
from kernelscope.trace import load_trace

torch = pytest.importorskip("torch")


class _Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        self.fc = torch.nn.Linear(16, 16)

    def forward(self, x):
        y, _ = self.attn(x, x, x, need_weights=False)
        return self.fc(x + y)


def test_multihead_attention_runs_its_fused_path_under_the_profile_as_when_timed(tmp_path):
    from kernelscope.capture.profiling import _profile
    from kernelscope.capture.timing import _Timer

    torch.manual_seed(0)
    model = _Block().eval()
    x = torch.randn(2, 5, 16)
    with torch.no_grad():
        rel = _profile(torch, lambda: model(x), _Timer(torch, "cpu"), "cpu",
                       {"tb_dir": str(tmp_path / "tb"), "out_dir": str(tmp_path), "profile_steps": 1}, modules=model)
    trace = load_trace(tmp_path / rel)
    names = [e.name for e in trace.cpu]
    # the fused op, with its projections inside it, under the attention module's range; the Linear after it still
    # gets its source and dataflow ranges
    assert names.count("aten::_native_multi_head_attention") == 1
    index = module_index(trace.cpu)
    assert {index.of(e) for e in trace.cpu if e.name in ("aten::_native_multi_head_attention", "aten::bmm")} == {
        "attn"}
    assert [index.of(e) for e in trace.cpu if e.name == "aten::addmm"][-1] == "fc"
    assert [n[len(MODULE_RANGE_PREFIX):] for n in names if n.startswith(MODULE_RANGE_PREFIX)] == ["attn", "fc"]
    # the mode is back once the attention's forward is over: fc's GEMM runs inside a source range, and nothing the
    # attention ran does
    sources = [e for e in trace.cpu if e.name.startswith("kernelscope.source: ")]
    mha = next(e for e in trace.cpu if e.name == "aten::_native_multi_head_attention")
    fc = [e for e in trace.cpu if e.name == "aten::addmm"][-1]
    assert any(s.ts <= fc.ts and fc.ts + fc.dur <= s.ts + s.dur for s in sources)
    assert not any(mha.ts <= s.ts <= mha.ts + mha.dur for s in sources)
