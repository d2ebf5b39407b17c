"""Three GEMM epilogues that fuse differently, for `kernelscope profile --advise`:

- ``fc``: Linear + bias + GELU: a pointwise epilogue a GEMM template can take;
- ``mlp``: a SwiGLU MLP, ``down(silu(gate(x)) * up(x))``: the SiLU and the product read two GEMMs' outputs;
- ``proj``: a Linear whose output goes straight into a LayerNorm: the norm's statistics end the epilogue, so no
  setting fuses it into the GEMM.

    kernelscope profile samples/fusion_advice.py --modes default --advise
"""

import torch
from torch import nn

_cuda = torch.cuda.is_available()
batch_size = 64 if _cuda else 32
dim = 1024 if _cuda else 128
hidden = 4096 if _cuda else 256


class SwiGLU(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden, bias=False)
        self.up_proj = nn.Linear(dim, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down_proj(nn.functional.silu(self.gate_proj(x)) * self.up_proj(x))


class FusionAdvice(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.mlp = SwiGLU(dim, hidden)
        self.proj = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        h = nn.functional.gelu(self.fc(x))
        h = self.mlp(h)
        return self.norm(self.proj(h))


dtype = torch.float16 if _cuda else torch.float32


def get_model():
    return FusionAdvice(dim, hidden).to(dtype)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=dtype)]
