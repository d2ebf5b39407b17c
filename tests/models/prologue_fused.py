"""Prologue fusion that Inductor accepts: a same-dtype pointwise op on the GEMM's input (bf16 -> bf16, so it
reads no more bytes than it writes) can be absorbed into a Triton template's operand loads. The ReLU after the
GEMM is the epilogue; the scale before it is a prologue, not an epilogue, whatever the kernel's name lists.
(tests/models/prologue.py's fp32 -> bf16 downcast is refused: "prologue fusion will not increase amount of bytes
read in kernel".)"""

import torch

m = 2048 if torch.cuda.is_available() else 64
k = 4096 if torch.cuda.is_available() else 64


class Model(torch.nn.Module):
    def __init__(self, k: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(k, k, dtype=torch.float32) * 0.02)

    def forward(self, x):
        return torch.relu((x * 0.5) @ self.weight.t())


def get_init_inputs():
    return [k]


def get_inputs():
    return [torch.randn(m, k, dtype=torch.float32)]
