"""Eager cuBLASLt epilogue: torch._addmm_activation runs bias + GELU inside the cuBLASLt GEMM (CUDA only)."""

import torch

batch_size = 16
features = 4096 if torch.cuda.is_available() else 64


class Model(torch.nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(features, features) * 0.02)
        self.bias = torch.nn.Parameter(torch.randn(features) * 0.02)

    def forward(self, x):
        return torch._addmm_activation(self.bias, x, self.weight.t(), use_gelu=True)


def get_init_inputs():
    return [features]


def get_inputs():
    return [torch.randn(batch_size, features)]
