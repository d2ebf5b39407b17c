"""KernelBench level 2 style (Gemm_LogSumExp_LeakyReLU_GELU): Linear -> scale -> logsumexp over the features ->
LeakyReLU -> GELU. The bias add and the scale are the GEMM's epilogue; logsumexp's max and sum end it."""

import torch

batch_size = 128
in_features = 1024
out_features = 8192


class Model(torch.nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.gemm = torch.nn.Linear(in_features, out_features)

    def forward(self, x):
        x = self.gemm(x) * 0.5
        x = torch.logsumexp(x, dim=1, keepdim=True)
        x = torch.nn.functional.leaky_relu(x, negative_slope=0.01)
        return torch.nn.functional.gelu(x)


def get_init_inputs():
    return [in_features, out_features]


def get_inputs():
    return [torch.randn(batch_size, in_features)]
