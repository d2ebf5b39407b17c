"""Eager GEMMs inside one of ATen's fused calls: nn.MultiheadAttention in eval mode on the CPU in float32 takes the
fast path, ``aten::_native_multi_head_attention``, which runs the packed in-projection as a bare ``mm``, then
``aten::_transform_bias_rescale_qkv`` (the bias, q's scale and the split into heads), the attention's two ``bmm``s
and out_proj's ``addmm``; a real eager profile of such a block."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from .conftest import run_cli

MODEL = '''
import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = torch.nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x, need_weights=False)[0] + x


def get_model():
    return Block().eval()


def get_inputs():
    return [torch.randn(2, 8, 32)]
'''


@pytest.mark.slow
def test_the_fast_paths_in_projection_adds_its_bias_in_its_own_kernel(tmp_path: Path):
    model = tmp_path / "mha.py"
    model.write_text(textwrap.dedent(MODEL))
    out = tmp_path / "out"
    proc = run_cli("profile", str(model), "--device", "cpu", "--modes", "eager", "--processes", "1", "--repeats", "3",
                   "--warmup", "2", "--steps", "1", "--no-tensorboard", "--out", str(out), env={"OMP_NUM_THREADS": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    (mode,) = json.loads((out / "result.json").read_text())["modes"]
    rows = [(g["op"], g["m"], g["n"], g["k"], g["verdict"], tuple(g["unfused"])) for g in mode["gemms"]]
    assert rows == [
        ("mm", 16, 96, 32, "unfused", ("bias",)),  # in_proj: its bias in _transform_bias_rescale_qkv
        ("bmm", 8, 8, 8, "none", ()),  # q @ k^T: the softmax ends it
        ("bmm", 8, 8, 8, "none", ()),  # probs @ v: out_proj reads it
        ("addmm", 16, 32, 32, "partial", ("add",)),  # out_proj: bias in the call, the residual add after it
    ]
    inp = mode["gemms"][0]
    ran = [e for e in inp["evidence"] if e["rule"] == "eager-op.inside"]
    assert [e["facts"]["op"] for e in ran] == ["aten::_transform_bias_rescale_qkv"]
    assert all(g["module"] == "attn" for g in mode["gemms"])
