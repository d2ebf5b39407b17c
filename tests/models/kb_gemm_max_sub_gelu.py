"""KernelBench level 2 style (Gemm_Max_Subtract_GELU): Linear -> max over the features -> minus its mean -> GELU.
The max is a reduction: everything after it (subtract, GELU) is past the epilogue's end."""

import torch

batch_size = 128
in_features = 1024
out_features = 8192


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.gemm(x)
        x = torch.max(x, dim=1, keepdim=True).values
        x = x - x.mean(dim=1, keepdim=True)
        return torch.nn.functional.gelu(x)


def get_init_inputs():
    return [in_features, out_features]


def get_inputs():
    return [torch.randn(batch_size, in_features)]
