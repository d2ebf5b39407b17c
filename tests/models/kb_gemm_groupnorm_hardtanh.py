"""KernelBench level 2 style: Linear -> GroupNorm -> Hardtanh. The GroupNorm's mean/variance end the GEMM's
epilogue: the bias add belongs to the GEMM, the normalisation and Hardtanh come after a reduction."""

import torch

batch_size = 128
in_features = 1024
out_features = 8192
num_groups = 8


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features)
        self.group_norm = torch.nn.GroupNorm(num_groups, out_features)
        self.hardtanh = torch.nn.Hardtanh(min_val=-2.0, max_val=2.0)

    def forward(self, x):
        return self.hardtanh(self.group_norm(self.gemm(x)))


def get_init_inputs():
    return [in_features, out_features, num_groups]


def get_inputs():
    return [torch.randn(batch_size, in_features)]
