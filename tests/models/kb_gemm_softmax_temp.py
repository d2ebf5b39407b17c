"""Linear -> softmax(x / T). Eager divides in its own kernel before the softmax (an unfused epilogue op of the
GEMM); Inductor rewrites softmax(x / T) as exp((x - max(x)) / T) / sum: the max reads the GEMM's output as it is
and the division comes after it, so no op on the GEMM's output is left before the reduction (H200 zoo capture)."""

import torch

batch_size = 128
in_features = 1024
out_features = 8192
temperature = 0.7


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features, temperature):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features)
        self.temperature = temperature

    def forward(self, x):
        return torch.softmax(self.gemm(x) / self.temperature, dim=-1)


def get_init_inputs():
    return [in_features, out_features, temperature]


def get_inputs():
    return [torch.randn(batch_size, in_features)]
